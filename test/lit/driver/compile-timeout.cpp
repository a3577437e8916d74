// A device compiler that runs past its time limit (compile-timeout=, default 300 seconds) is
// stopped, with what it started: an error at the kernel names the compiler, the limit and
// the generated source, which is kept; a note says what to do. Here the compilers are
// scripts that never finish (a child of theirs records its pid and waits).
// RUN: rm -rf %t && mkdir -p %t/tmp
// RUN: printf '#!/bin/sh\nif [ "$1" = --version ]; then echo slow 1.0; exit 0; fi\necho "slow compiler started" >&2\nsleep 300 &\necho $! > "$0.child"\nwait\n' > %t/slow
// RUN: chmod +x %t/slow
// RUN: not env TMPDIR=%t/tmp %tile-cxx -c %s -o %t/a.o -fplugin-arg-tile-targets=cpu -fplugin-arg-tile-cxx=%t/slow \
// RUN:   -fplugin-arg-tile-cache=%t/cache -fplugin-arg-tile-compile-timeout=1 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: compile-timeout.cpp:[[@LINE+23]]:23: error: the CPU compiler ({{.*}}/slow) did not finish within 1 second on the code generated for compile-timeout.cpp and was stopped (generated source kept at {{.*}}/tmp/tile-cpu-{{[0-9a-f]+}}/compile-timeout.cpu.cpp):
// CPU-NEXT: slow compiler started
// CPU: note: make the kernels of this file smaller (tile::unroll of a large extent copies its body that many times), or allow more time with -fplugin-arg-tile-compile-timeout=SECONDS
// The compiler's child was stopped with it; the kept directory holds the source and its headers.
// RUN: sh -c '! kill -0 $(cat %t/slow.child) 2>/dev/null || grep -q "^[0-9]* ([^)]*) Z" /proc/$(cat %t/slow.child)/stat'
// RUN: ls %t/tmp/tile-cpu-* | FileCheck %s --check-prefix=KEPT
// KEPT: compile-timeout.cpu.cpp
// KEPT-NEXT: tile_cpu.h
// KEPT-NEXT: tile_scalar.h
// KEPT-EMPTY:
// The same for nvcc, with the limit given as 2 seconds:
// RUN: not %tile-cxx -c %s -o %t/b.o -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-nvcc=%t/slow \
// RUN:   -fplugin-arg-tile-cache=%t/cache -fplugin-arg-tile-compile-timeout=2 2>&1 | FileCheck %s --check-prefix=CUDA
// CUDA: error: nvcc ({{.*}}/slow) did not finish within 2 seconds on the code generated for compile-timeout.cpp and was stopped (generated source kept at {{.*}}compile-timeout.cu):
// Limits that are not a number of seconds:
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-compile-timeout=0 %s 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: tile plugin: compile-timeout=0: expected a whole number of seconds from 1 to 604800
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-compile-timeout=5m %s 2>&1 | FileCheck %s --check-prefix=UNIT
// UNIT: error: tile plugin: compile-timeout=5m: expected a whole number of seconds from 1 to 604800
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-compile-timeout %s 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: tile plugin: option 'compile-timeout' needs a value: -fplugin-arg-tile-compile-timeout=VALUE
#include <tile/tile.h>

[[tile::kernel]] void slowly(tile::tensor<float, 1> x) {
  auto [bx] = tile::grid(tile::ceildiv(x.size(0), 128));
  tile::fragment<float, 128> f;
  tile::copy(x.at(bx * 128), f);
  for (int i : tile::parallel(128))
    f(i) = f(i) * 2.0f;
  tile::copy(f, x.at(bx * 128));
}
