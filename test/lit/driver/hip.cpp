// The HIP target in the driver: images are cached (a warm rebuild runs no hipcc); the same
// source compiles to the same offload bundle; hipcc's failure is an error at the kernel
// that keeps the generated source; a hipcc that cannot run says so.
// REQUIRES: hipcc
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tile-cxx -c %s -o %t/a.o -fplugin-arg-tile-targets=hip -fplugin-arg-tile-cache=%t/cache \
// RUN:   -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=COLD
// COLD: remark: tile: hip image of hip.cpp (1 kernel) compiled
// RUN: %tile-cxx -c %s -o %t/b.o -fplugin-arg-tile-targets=hip -fplugin-arg-tile-cache=%t/cache \
// RUN:   -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=WARM
// WARM: remark: tile: hip image of hip.cpp (1 kernel) loaded from cache, no device compiler run
// RUN: cmp %t/a.o %t/b.o
// Two builds with caches of their own both run hipcc and make identical objects and entries.
// RUN: %tile-cxx -c %s -o %t/e.o -fplugin-arg-tile-targets=hip -fplugin-arg-tile-cache=%t/fresh1 \
// RUN:   -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=COLD
// RUN: %tile-cxx -c %s -o %t/f.o -fplugin-arg-tile-targets=hip -fplugin-arg-tile-cache=%t/fresh2 \
// RUN:   -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=COLD
// RUN: cmp %t/e.o %t/f.o
// RUN: sh -c 'cd %t/fresh1/hip && for f in *.hipfb; do cmp "$f" %t/fresh2/hip/"$f" || exit 1; done'
// A failing hipcc (a script that prints an error and fails):
// RUN: printf '#!/bin/sh\nif [ "$1" = --version ]; then echo fake; exit 0; fi\necho "fake hipcc: error: no" >&2\nexit 1\n' > %t/hipcc
// RUN: chmod +x %t/hipcc
// RUN: not %tile-cxx -c %s -o %t/c.o -fplugin-arg-tile-targets=hip -fplugin-arg-tile-hipcc=%t/hipcc \
// RUN:   -fplugin-arg-tile-cache=%t/cache2 2>&1 | FileCheck %s --check-prefix=FAIL
// FAIL: hip.cpp:[[@LINE+10]]:23: error: hipcc failed on the code generated for hip.cpp (generated source kept at {{.*}}hip.hip):
// FAIL: fake hipcc: error: no
// The kept source is the HIP the target generated.
// RUN: not %tile-cxx -c %s -o %t/c.o -fplugin-arg-tile-targets=hip -fplugin-arg-tile-hipcc=%t/hipcc \
// RUN:   -fplugin-arg-tile-cache=%t/cache2 2>&1 | sed -n 's/.*generated source kept at \(.*\.hip\)).*/\1/p' | xargs grep -c '__global__' | FileCheck %s --check-prefix=KEPT
// KEPT: 1
// RUN: not %tile-cxx -c %s -o %t/d.o -fplugin-arg-tile-targets=hip -fplugin-arg-tile-hipcc=%t/missing \
// RUN:   -fplugin-arg-tile-cache=%t/cache3 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: hipcc failed on the code generated for hip.cpp
#include <tile/tile.h>
[[tile::kernel]] void twice(tile::tensor<float, 1> x) {
  auto [bx] = tile::grid(tile::ceildiv(x.size(0), 128));
  tile::fragment<float, 128> f;
  tile::copy(x.at(bx * 128), f);
  for (int i : tile::parallel(128))
    f(i) = f(i) * 2.0f;
  tile::copy(f, x.at(bx * 128));
}
