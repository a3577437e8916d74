#!/usr/bin/env python3
"""Every kernel of the lit suite built for AMD's gfx90a alone (`targets=hip:gfx90a`): each
file with a kernel that is not a diagnostics test (-verify) must compile, and its HIP image
be built (the plugin's verbose remark says so), except the files listed in EXPECTED, which
must fail with the message given there (kernels that need more LDS than gfx90a's 64 KiB,
and so are an error where hip is the only GPU target, and the like). A split-file test's .cpp parts are compiled each.
  compile_lit.py TILE_CXX LIT_DIR WORK_DIR [CACHE_DIR]
(CACHE_DIR: the image cache, tile's cache= option; default: WORK_DIR/cache.)
"""
import concurrent.futures
import os
import re
import subprocess
import sys

# File (relative to the lit folder) -> what its compile for gfx90a must say.
LDS = 'gfx90a gives a block at most 65536'
EXPECTED = {
    'exec/shared-fit.cpp': LDS,                      # fits sm_90a's 227 KiB
    'exec/warp-specialized.cpp': LDS,
    'exec/gemm-fp8.cpp': LDS,
    'exec/persistent.cpp': LDS,                      # (and pingpong.cpp, which includes it)
    'exec/bulk-store.cpp': LDS,                      # (persistent.cpp's kernels and its own)
    'exec/producer-tiles.cpp': LDS,                  # attention's backward, d64 (70 KiB)
    'exec/reduce-into-shared.cpp': LDS,              # MLA's 64 x 512 latent tiles
    'exec/pair-blocks.cpp': LDS,                     # a 64 x 128 float tile of its own
    'exec/gemm-a-registers.cpp': LDS,                # head width 128's Q, K and V tiles (98 KiB)
    'exec/big-tiles.cpp': 'bytes of registers and local memory per thread',  # the CPU's tiles
    'transforms/plan-shared-memory-swizzle.cpp': LDS,
    'targets/cuda/warp-specialize.cpp': LDS,
    'targets/cuda/persistent.cpp': LDS,
    'targets/cuda/bulk-store.cpp': LDS,
    'targets/cuda/pingpong-refusals.cpp': LDS,
    'targets/cuda/wgmma.cpp': LDS,
    'targets/cuda/wgmma-fp8.cpp': LDS,
    'targets/cuda/occupancy.cpp': LDS,               # the attention example's 64 x 64 tiles
    'targets/cuda/wgmma-forms.cpp': LDS,             # MLA's 64 x 512 latent tile
    'targets/cuda/pair-blocks.cpp': LDS,             # 6 stages of 32 KiB
    'targets/cuda/producer-indexed.cpp': LDS,        # 128 x 64 and 64 x 128 tiles in 3 stages
    'targets/cuda/producer-views.cpp': LDS,          # 128 x 64 and 64 x 128 tiles in 3 stages
    'exec/guarded-loop.cpp': LDS,                    # 128 x 64 and 64 x 128 tiles in 3 and 4 stages
    'exec/ws-views.cpp': LDS,                        # 128 x 64 and 64 x 128 tiles in 3 stages
}


def main():
    tile_cxx, lit, work = sys.argv[1:4]
    cache = sys.argv[4] if len(sys.argv) > 4 else os.path.join(work, 'cache')
    os.makedirs(work, exist_ok=True)
    files = []
    for dirpath, dirs, names in os.walk(lit):
        dirs[:] = sorted(d for d in dirs if d != 'Inputs')
        for n in sorted(names):
            path = os.path.join(dirpath, n)
            if not n.endswith('.cpp'):
                continue
            text = open(path, encoding='utf-8').read()
            if 'tile::kernel' in text and not re.search(r'-verify|expected-(error|warning)', text):
                files.append(os.path.relpath(path, lit))

    def units(rel):
        """The translation units of a lit file: itself, or the .cpp parts of a split-file one."""
        src = os.path.join(lit, rel)
        text = open(src, encoding='utf-8').read()
        if '\n//--- ' not in text:
            return [src], os.path.dirname(src)
        d = os.path.join(work, rel.replace('/', '_') + '.parts')
        os.makedirs(d, exist_ok=True)
        parts, name = {}, None
        for line in text.splitlines(keepends=True):
            if line.startswith('//--- '):
                name = line[6:].strip()
                parts[name] = ''
            elif name:
                parts[name] += line
        for n, body in parts.items():
            with open(os.path.join(d, n), 'w') as f:
                f.write(body)
        return [os.path.join(d, n) for n in sorted(parts) if n.endswith('.cpp')], d

    def build(rel):
        srcs, include = units(rel)
        out, rc = '', 0
        for i, src in enumerate(srcs):
            cmd = [tile_cxx, '-c', src, '-o', os.path.join(work, '%s.%d.o' % (rel.replace('/', '_'), i)),
                   '-I', include, '-I', os.path.join(os.path.dirname(os.path.join(lit, rel)), 'Inputs'),
                   '-I', os.path.join(lit, '..', '..', 'examples'),  # (the examples' kernels some tests include)
                   '-fplugin-arg-tile-targets=hip:gfx90a', '-fplugin-arg-tile-verbose',
                   '-fplugin-arg-tile-cache=' + cache]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            out += r.stdout + r.stderr
            rc = rc or r.returncode
        if rel in EXPECTED:
            if rc == 0 or EXPECTED[rel] not in out:
                return 'expected to fail with "%s":\n%s' % (EXPECTED[rel], out[-1500:])
            return None
        if rc != 0:
            return 'does not compile for gfx90a:\n' + out[-3000:]
        if not re.search(r'remark: tile: hip image of .* (compiled|loaded from cache)', out):
            return 'no hip image was built:\n' + out[-1500:]
        return None

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        results = list(ex.map(build, files))
    bad = [(f, why) for f, why in zip(files, results) if why]
    missing = sorted(set(EXPECTED) - set(files))
    for f, why in bad:
        print('FAIL %s: %s' % (f, why))
    for f in missing:
        print('FAIL %s: listed as an expected failure, but it is not a lit kernel file any more' % f)
    print('%d lit files with kernels: %d built for gfx90a, %d refused as expected, %d problems' %
          (len(files), len(files) - len(EXPECTED), len(EXPECTED), len(bad) + len(missing)))
    return 1 if bad or missing or len(files) < 40 else 0


if __name__ == '__main__':
    sys.exit(main())
