#!/usr/bin/env python3
"""Shrinks a failing random program: leaves out steps (ops, loops, stores) one by one and
forces smaller sizes and tiles, keeping each change under which the program still fails the
same way (does not compile / crashes / times out / mismatches), and writes the smallest
reproducer found.

  minimize.py 100588                       # -> build/fuzz/min/seed_100588.cpp
  minimize.py 100588 --targets cpu,cuda:sm_90a --compile-only   # a CUDA build failure
"""

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402


def outcome(a, skip, over):
    """The failure class of the program with these changes: None if it passes."""
    try:
        g = gen.Gen(a.seed, skip, over)
        src = gen.translation_unit([a.seed], False, skip, over)
    except Exception:
        return 'generator'
    if not any(t.role == 'out' for t in g.tensors):
        return None
    path = os.path.join(a.work, 'try.cpp')
    with open(path, 'w') as f:
        f.write(src)
    exe = os.path.join(a.work, 'try')
    cmd = [a.tile_cxx, '-O2', '-Wno-parentheses-equality', '-I', HERE, '-fplugin-arg-tile-targets=' + a.targets,
           '-fplugin-arg-tile-cache=' + os.path.join(a.work, 'cache'), path, '-o', exe]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace')
    if p.returncode != 0:
        return 'compile: ' + re.sub(r'\d+', 'N', next((l for l in p.stdout.split('\n') if 'error' in l), '?'))[:80]
    if a.compile_only:
        return None
    try:
        p = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace',
                           env=dict(os.environ, TILE_DEVICE='cpu'), timeout=120)
    except subprocess.TimeoutExpired:
        return 'timeout'
    if 'PASS' in p.stdout:
        return None
    if 'FAIL' in p.stdout:
        return 'launch' if 'launch:' in p.stdout else 'mismatch'
    return 'crash'


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('seed', type=int)
    ap.add_argument('--tile-cxx', default=os.path.join(HERE, '..', '..', 'build', 'bin', 'tile-c++'))
    ap.add_argument('--targets', default='cpu')
    ap.add_argument('--compile-only', action='store_true', help='the failure is a compile failure')
    ap.add_argument('--work', default='build/fuzz/min')
    a = ap.parse_args()
    a.work = os.path.abspath(a.work)
    os.makedirs(a.work, exist_ok=True)
    skip, over = set(), {}
    want = outcome(a, skip, over)
    if want is None:
        print('seed %d passes: nothing to minimize' % a.seed)
        return 1
    print('seed %d: %s' % (a.seed, want), flush=True)
    steps = gen.Gen(a.seed).nstep
    changed = True
    while changed:
        changed = False
        for n in reversed(range(steps)):
            if n in skip:
                continue
            if outcome(a, skip | {n}, over) == want:
                skip.add(n)
                changed = True
                print('  without step %d' % n, flush=True)
        g = gen.Gen(a.seed, skip, over)
        tries = []
        for D in 'MNKB':
            v = g.sizes[D]
            tries += [(D, x) for x in sorted({1, 2, v // 2, v - 1}) if 0 < x < v]
        for t, v in (('BM', g.BM), ('BN', g.BN), ('BK', g.BK)):
            tries += [(t, x) for x in sorted({1, 2, 4, 8, 16, v // 2}) if 0 < x < v]
        if g.threads != 32:
            tries.append(('threads', 32))
        for k, v in tries:
            if over.get(k, None) is not None and over[k] <= v:
                continue
            if outcome(a, skip, dict(over, **{k: v})) == want:
                over[k] = v
                changed = True
                print('  with %s = %d' % (k, v), flush=True)
    args = ['--seed', str(a.seed), '--skip', ','.join(map(str, sorted(skip))),
            '--set', ','.join('%s=%d' % kv for kv in sorted(over.items()))]
    out = os.path.join(a.work, 'seed_%d.cpp' % a.seed)
    subprocess.run([sys.executable, os.path.join(HERE, 'gen.py')] + args + ['-o', out], check=True)
    print('%s: gen.py %s\n  -> %s' % (want, ' '.join(args), out))
    return 0


if __name__ == '__main__':
    sys.exit(main())
