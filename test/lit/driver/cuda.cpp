// The CUDA target in the driver: images are cached (a warm rebuild runs no nvcc); the same
// source compiles to the same fatbin; nvcc's failure is an error at the kernel that keeps
// the generated source; an nvcc that cannot run says so.
// REQUIRES: nvcc
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tile-cxx -c %s -o %t/a.o -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-cache=%t/cache \
// RUN:   -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=COLD
// COLD: remark: tile: cuda image of cuda.cpp (1 kernel) compiled
// RUN: %tile-cxx -c %s -o %t/b.o -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-cache=%t/cache \
// RUN:   -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=WARM
// WARM: remark: tile: cuda image of cuda.cpp (1 kernel) loaded from cache, no device compiler run
// RUN: cmp %t/a.o %t/b.o
// The same source compiles to the same bytes (nvcc records the source's path and time in
// line info and in the names of internal symbols): two builds with caches of their own, so
// that both run nvcc, make identical objects and cache entries.
// RUN: %tile-cxx -c %s -o %t/e.o -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-cache=%t/fresh1 \
// RUN:   -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=COLD
// RUN: %tile-cxx -c %s -o %t/f.o -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-cache=%t/fresh2 \
// RUN:   -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=COLD
// RUN: cmp %t/e.o %t/f.o
// RUN: sh -c 'cd %t/fresh1/cuda && for f in *.fatbin; do cmp "$f" %t/fresh2/cuda/"$f" || exit 1; done'
// A failing nvcc (a script that prints an error and fails):
// RUN: printf '#!/bin/sh\nif [ "$1" = --version ]; then echo fake; exit 0; fi\necho "fake nvcc: error: no" >&2\nexit 1\n' > %t/nvcc
// RUN: chmod +x %t/nvcc
// RUN: not %tile-cxx -c %s -o %t/c.o -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-nvcc=%t/nvcc \
// RUN:   -fplugin-arg-tile-cache=%t/cache2 2>&1 | FileCheck %s --check-prefix=FAIL
// FAIL: cuda.cpp:[[@LINE+6]]:23: error: nvcc failed on the code generated for cuda.cpp (generated source kept at {{.*}}cuda.cu):
// FAIL: fake nvcc: error: no
// RUN: not %tile-cxx -c %s -o %t/d.o -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-nvcc=%t/missing \
// RUN:   -fplugin-arg-tile-cache=%t/cache3 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: nvcc failed on the code generated for cuda.cpp
#include <tile/tile.h>
[[tile::kernel]] void twice(tile::tensor<float, 1> x) {
  auto [bx] = tile::grid(tile::ceildiv(x.size(0), 128));
  tile::fragment<float, 128> f;
  tile::copy(x.at(bx * 128), f);
  for (int i : tile::parallel(128))
    f(i) = f(i) * 2.0f;
  tile::copy(f, x.at(bx * 128));
}
