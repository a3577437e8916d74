#!/usr/bin/env python3
"""Runs random tile programs (gen.py) on the CPU and reports mismatches.

Seeds are compiled in batches (one translation unit per batch: compiling a file costs
seconds, each kernel in it a fraction of one), run with TILE_DEVICE=cpu, and every program
prints PASS or FAIL. A program that does not compile, crashes, hangs or fails gets a
standalone reproducer in WORK/repro/seed_N.cpp (gen.py --seed N).

  run.py --seeds 1-96                          # what ctest runs
  run.py --seeds 1000-20000 --minutes 60       # a long run; stops starting batches after 60 min
  run.py --seeds 1-160 --gpu-dir build/gpu/fuzz      # the GPU batch (cmake target gpu-fuzz)

With --gpu-dir the batches are compiled for the CPU and CUDA (sm_90a; device code compressed
so that the folder stays small), and the folder receives the binaries (bin/fuzz-*, each with
its list of seeds), the runtime library and run_gpu.sh, which runs them on a GPU machine.

  run.py --seeds 1-160 --gpu-dir build/gpu/fuzz-wgmma \
         --over BM=64,BK=64,threads=128      # programs whose gemms wgmma (sm_90a's default) takes
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402

lock = threading.Lock()


def log(msg):
    with lock:
        print(msg, flush=True)


class Runner:
    def __init__(self, a):
        self.a = a
        self.work = os.path.abspath(a.work)
        os.makedirs(os.path.join(self.work, 'repro'), exist_ok=True)
        self.results = open(os.path.join(self.work, 'results.txt'), 'a')
        self.passed = self.failed = self.kernels = 0
        self.fails = []

    def record(self, seed, ok, why=''):
        with lock:
            self.kernels += 1
            if ok:
                self.passed += 1
                self.results.write('PASS %d\n' % seed)
            else:
                self.failed += 1
                self.fails.append((seed, why))
                self.results.write('FAIL %d: %s\n' % (seed, why))
                path = os.path.join(self.work, 'repro', 'seed_%d.cpp' % seed)
                with open(path, 'w') as f:
                    f.write('// %s\n' % why[:2000].replace('\n', '\n// '))
                    if self.a.flags:
                        f.write('// Built with: %s\n' % self.a.flags)
                    f.write(gen.translation_unit([seed], inline_header=True, over=self.a.over))
                print('FAIL %d: %s\n  reproducer: %s' % (seed, why[:600], path), flush=True)
            self.results.flush()

    def compile(self, seeds, d, name):
        src = os.path.join(d, name + '.cpp')
        with open(src, 'w') as f:
            f.write(gen.translation_unit(seeds, over=self.a.over))
        exe = os.path.join(d, name)
        cmd = [self.a.tile_cxx, '-O2', '-Wno-parentheses-equality', '-I', HERE,
               '-fplugin-arg-tile-targets=' + self.a.targets, '-fplugin-arg-tile-cache=' + (self.a.cache or os.path.join(d, 'cache'))]
        cmd += self.a.flags.split() + [src, '-o', exe]
        if self.a.nvcc:
            cmd.insert(1, '-fplugin-arg-tile-nvcc=' + self.a.nvcc)
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace',
                               timeout=self.a.compile_timeout)
        except subprocess.TimeoutExpired:
            return None, 'compile timed out after %d s' % self.a.compile_timeout
        if p.returncode != 0:
            return None, p.stdout
        return exe, ''

    @staticmethod
    def culprits(seeds, text, src_text):
        """Seeds that a compiler message names: by line of the batch file or by kernel name."""
        found = set()
        starts = []
        for n, line in enumerate(src_text.split('\n'), 1):
            m = re.match(r'namespace p(\d+) \{', line)
            if m:
                starts.append((n, int(m.group(1))))
        for m in re.finditer(r'\.cpp:(\d+):\d+: (?:fatal )?error', text):
            line = int(m.group(1))
            owner = [s for n, s in starts if n <= line]
            if owner:
                found.add(owner[-1])
        for m in re.finditer(r"p(\d+)::kernel|_ZN\d*p(\d+)6kernel", text):
            found.add(int(m.group(1) or m.group(2)))
        return sorted(s for s in found if s in seeds)

    def build(self, seeds, d, name):
        """Compiles seeds into d/name; programs that do not compile are recorded and left out
        (found from the messages, else by halving the batch). Returns [(exe, seeds)]."""
        seeds = list(seeds)
        while seeds:
            exe, err = self.compile(seeds, d, name)
            if exe:
                return [(exe, seeds)]
            src_text = open(os.path.join(d, name + '.cpp')).read()
            bad = self.culprits(seeds, err, src_text)
            if not bad and len(seeds) > 1:
                half = len(seeds) // 2
                return self.build(seeds[:half], d, name + 'a') + self.build(seeds[half:], d, name + 'b')
            bad = bad or seeds
            for s in bad:
                self.record(s, False, 'compile: ' + first_error(err))
            seeds = [s for s in seeds if s not in bad]
        return []

    def execute(self, exe, seeds):
        todo = list(seeds)
        env = dict(os.environ, TILE_DEVICE='cpu')
        while todo:
            try:
                p = subprocess.run([exe] + [str(s) for s in todo], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, errors='replace', env=env, timeout=self.a.run_timeout)
                out, rc = p.stdout, p.returncode
            except subprocess.TimeoutExpired as e:
                out = e.stdout.decode(errors='replace') if isinstance(e.stdout, bytes) else (e.stdout or '')
                rc = 'timeout'
            current = None
            done = set()
            for line in out.split('\n'):
                m = re.match(r'BEGIN (\d+)$', line)
                if m:
                    current = int(m.group(1))
                    continue
                m = re.match(r'(PASS|FAIL) (\d+)(.*)$', line)
                if m:
                    s = int(m.group(2))
                    self.record(s, m.group(1) == 'PASS', m.group(3).lstrip(':').strip())
                    done.add(s)
                    current = None
            if current is not None:
                why = 'timed out' if rc == 'timeout' else 'crashed (exit %s)' % rc
                tail = '\n'.join(l for l in out.split('\n')[-5:] if l and not l.startswith(('BEGIN', 'PASS')))
                self.record(current, False, why + ('; ' + tail if tail else ''))
                done.add(current)
            elif rc not in (0, 1) and not done:
                for s in todo:
                    self.record(s, False, 'the batch did not run (exit %s): %s' % (rc, out[-300:]))
                return
            todo = [s for s in todo if s not in done]

    def batch(self, seeds):
        name = 'b%d_%d' % (seeds[0], seeds[-1])
        d = os.path.join(self.work, name)
        os.makedirs(d, exist_ok=True)
        t0 = time.time()
        built = self.build(seeds, d, 'fuzz')
        t1 = time.time()
        if self.a.gpu_dir:
            bindir = os.path.join(self.a.gpu_dir, 'bin')
            for exe, s in built:
                name = 'fuzz-%d-%d' % (s[0], s[-1])
                shutil.copy(exe, os.path.join(bindir, name))
                with open(os.path.join(bindir, name + '.seeds'), 'w') as f:
                    f.write(' '.join(str(x) for x in s) + '\n')
            shutil.rmtree(d, ignore_errors=True)
            log('batch %d-%d: built in %.0f s' % (seeds[0], seeds[-1], t1 - t0))
            return
        if self.a.build_only:
            return
        for exe, s in built:
            self.execute(exe, s)
        log('batch %d-%d: compiled in %.0f s, ran in %.0f s' % (seeds[0], seeds[-1], t1 - t0, time.time() - t1))
        if not self.a.keep:
            shutil.rmtree(d, ignore_errors=True)


def first_error(text):
    for line in text.split('\n'):
        if 'error' in line:
            return line.strip()[:400]
    return text.strip()[-400:]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seeds', default='1-96', help='a range 1-100, or a list 3,5,9')
    ap.add_argument('--minutes', type=float, default=0, help='stop starting batches after this time (0: no limit)')
    ap.add_argument('--jobs', type=int, default=1, help='batches compiled at once')
    ap.add_argument('--batch', type=int, default=48, help='programs per translation unit')
    ap.add_argument('--work', default='build/fuzz', help='where batches, results.txt and repro/ go')
    ap.add_argument('--tile-cxx', default=os.path.join(HERE, '..', '..', 'build', 'bin', 'tile-c++'))
    ap.add_argument('--targets', default='cpu')
    ap.add_argument('--build-only', action='store_true', help='compile the batches and keep them')
    ap.add_argument('--gpu-dir', help='build a GPU batch into this folder (see above)')
    ap.add_argument('--nvcc', help='device compiler (tile\'s nvcc= option)')
    ap.add_argument('--fresh', action='store_true', help='start a new results.txt and repro/ in WORK')
    ap.add_argument('--cache', help="the image cache (tile's cache= option; default: one in each batch's folder)")
    ap.add_argument('--keep', action='store_true', help='keep the batch folders')
    ap.add_argument('--compile-timeout', type=int, default=1200)
    ap.add_argument('--run-timeout', type=int, default=300)
    ap.add_argument('--flags', default='', help='more compiler flags (-fplugin-arg-tile-gemm=wgmma, say)')
    ap.add_argument('--over', default='',
                    help='sizes and tile shapes every program takes: BM=64,BK=64,threads=128 (the shapes wgmma takes)')
    a = ap.parse_args()
    try:
        a.over = {k: int(v) for k, v in (kv.split('=') for kv in a.over.split(',') if kv)}
    except ValueError:
        ap.error('--over takes NAME=INTEGER,...: ' + a.over)
    if a.build_only:
        a.keep = True
    if a.fresh:
        shutil.rmtree(os.path.abspath(a.work), ignore_errors=True)
    if a.gpu_dir:
        a.gpu_dir = os.path.abspath(a.gpu_dir)
        a.targets = 'cpu,cuda:sm_90a' if a.targets == 'cpu' else a.targets
        shutil.rmtree(a.gpu_dir, ignore_errors=True)
        os.makedirs(os.path.join(a.gpu_dir, 'bin'))
        os.makedirs(os.path.join(a.gpu_dir, 'lib'))
        if not a.nvcc:
            # nvcc with compressed device code (the driver decompresses it when loading).
            real = shutil.which('nvcc') or '/usr/local/cuda/bin/nvcc'
            a.nvcc = os.path.join(a.gpu_dir, 'nvcc-compress.sh')
            with open(a.nvcc, 'w') as f:
                f.write('#!/bin/sh\nexec %s -Xfatbin=-compress-all "$@"\n' % real)
            os.chmod(a.nvcc, 0o755)
        libdir = os.path.join(os.path.dirname(os.path.abspath(a.tile_cxx)), '..', 'lib')
        for f in os.listdir(libdir):
            if f.startswith('libtile_runtime.so'):
                shutil.copy(os.path.join(libdir, f), os.path.join(a.gpu_dir, 'lib'))
        shutil.copy(os.path.join(HERE, 'run_gpu.sh'), a.gpu_dir)
    seeds = gen.parse_seeds(a.seeds)
    batches = [seeds[i:i + a.batch] for i in range(0, len(seeds), a.batch)]
    r = Runner(a)
    t0 = time.time()
    r.results.write('# %s: run.py %s\n' % (time.strftime('%Y-%m-%d %H:%M:%S'), ' '.join(sys.argv[1:])))
    r.results.flush()
    deadline = t0 + a.minutes * 60 if a.minutes else None

    def work(b):
        if deadline and time.time() > deadline:
            return False
        r.batch(b)
        return True

    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        ran = list(ex.map(work, batches))
    skipped = sum(len(b) for b, x in zip(batches, ran) if not x)
    mins = (time.time() - t0) / 60
    if a.build_only or a.gpu_dir:
        if a.gpu_dir and a.nvcc.endswith('nvcc-compress.sh'):
            os.remove(a.nvcc)
        print('built %d batches in %s (%.1f min)%s' % (sum(ran), a.gpu_dir or r.work, mins,
                                                        ', %d programs did not compile' % len(r.fails) if r.fails else ''))
        for s, why in sorted(r.fails):
            print('  FAIL %d: %s' % (s, why[:300]))
        return 0 if not r.fails else 1
    summary = 'fuzz: %d kernels, %d passed, %d failed, %.1f min%s' % (
        r.kernels, r.passed, r.failed, mins, ', %d seeds not reached' % skipped if skipped else '')
    r.results.write('# %s: %s\n' % (time.strftime('%Y-%m-%d %H:%M:%S'), summary))
    r.results.close()
    print(summary)
    for s, why in sorted(r.fails):
        print('  FAIL %d: %s' % (s, why[:300]))
    return 1 if r.failed else 0


if __name__ == '__main__':
    sys.exit(main())
