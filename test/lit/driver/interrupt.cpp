// A build stopped while a device compiler runs (SIGTERM from a build system, SIGINT from
// Ctrl-C) stops the compiler and what it started, leaves no temporary directory behind,
// and ends as the signal asks (status 128 + the signal's number). The compiler is a script
// that never finishes; it records its pid and its child's.
// RUN: rm -rf %t && mkdir -p %t/tmp
// RUN: printf '#!/bin/sh\nif [ "$1" = --version ]; then echo slow 1.0; exit 0; fi\nsleep 300 &\necho $$ $! > "$0.pids.tmp"\nmv "$0.pids.tmp" "$0.pids"\nwait\n' > %t/slow
// RUN: chmod +x %t/slow
// RUN: bash %S/Inputs/interrupt.sh TERM %t env TMPDIR=%t/tmp %tile-cxx -c %s -o %t/a.o -fplugin-arg-tile-targets=cpu \
// RUN:   -fplugin-arg-tile-cxx=%t/slow -fplugin-arg-tile-cache=%t/cache | FileCheck %s --check-prefix=TERM
// TERM: status 143
// TERM-NEXT: compiler stopped
// TERM-NEXT: left in TMPDIR:
// TERM-EMPTY:
// RUN: bash %S/Inputs/interrupt.sh INT %t env TMPDIR=%t/tmp %tile-cxx -c %s -o %t/b.o -fplugin-arg-tile-targets=cuda \
// RUN:   -fplugin-arg-tile-nvcc=%t/slow -fplugin-arg-tile-cache=%t/cache | FileCheck %s --check-prefix=INT
// INT: status 130
// INT-NEXT: compiler stopped
// INT-NEXT: left in TMPDIR:
// INT-EMPTY:
#include <tile/tile.h>

[[tile::kernel]] void slowly(tile::tensor<float, 1> x) {
  auto [bx] = tile::grid(tile::ceildiv(x.size(0), 128));
  tile::fragment<float, 128> f;
  tile::copy(x.at(bx * 128), f);
  for (int i : tile::parallel(128))
    f(i) = f(i) * 2.0f;
  tile::copy(f, x.at(bx * 128));
}
