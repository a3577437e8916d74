// The toolchain fingerprint (lib/Pipeline/Toolchain.h): what decides a compile's images
// beyond its command line, sources and plugin, i.e. the device compilers' versions and, for
// the CPU target, the host CPU. tile-c++ adds it for a compiler cache (TILE_CXX_LAUNCHER);
// the plugin refuses to build images under a fingerprint that is not its own. A device
// compiler that cannot say its version is not cached in the image cache.
// RUN: rm -rf %t && mkdir -p %t
// RUN: printf '#!/bin/sh\nif [ "$1" = --version ]; then cat "$0.version"; exit 0; fi\nexec %clangxx "$@"\n' > %t/cxx
// RUN: chmod +x %t/cxx && echo "test clang, release 1" > %t/cxx.version
//
// What goes into it, and the fingerprint last:
// RUN: %tile-cxx -fplugin-arg-tile-targets=cpu -fplugin-arg-tile-cxx=%t/cxx -fplugin-arg-tile-print-toolchain -fsyntax-only %s | FileCheck %s --check-prefix=PRINT
// PRINT: cpu: {{.*}}/cxx
// PRINT-NEXT: test clang, release 1
// PRINT-NEXT: host-cpu {{.+}} features {{.*}}
// PRINT-NEXT: fingerprint {{[0-9a-f]{64}$}}
//
// The same compilers give the same fingerprint; another version of one, another.
// RUN: %tile-cxx -fplugin-arg-tile-targets=cpu -fplugin-arg-tile-cxx=%t/cxx -fplugin-arg-tile-print-toolchain -fsyntax-only %s | grep fingerprint > %t/fp1
// RUN: %tile-cxx -fplugin-arg-tile-targets=cpu -fplugin-arg-tile-cxx=%t/cxx -fplugin-arg-tile-print-toolchain -fsyntax-only %s | grep fingerprint > %t/fp2
// RUN: cmp %t/fp1 %t/fp2
// RUN: echo "test clang, release 2" > %t/cxx.version
// RUN: %tile-cxx -fplugin-arg-tile-targets=cpu -fplugin-arg-tile-cxx=%t/cxx -fplugin-arg-tile-print-toolchain -fsyntax-only %s | grep fingerprint > %t/fp3
// RUN: not cmp %t/fp1 %t/fp3
//
// tile-c++ with a launcher adds the fingerprint (here `env`, which runs the rest), and the
// compile checks it:
// RUN: env TILE_CXX_LAUNCHER=env TILE_CXX_VERBOSE=1 %tile-cxx -fplugin-arg-tile-targets=cpu -fplugin-arg-tile-cache=%t/images -c %s -o %t/a.o 2>&1 | FileCheck %s --check-prefix=LAUNCHED
// LAUNCHED: {{^}}env {{.*}}clang++ {{.*}} -fplugin-arg-tile-toolchain={{[0-9a-f]{64} $}}
//
// A fingerprint that is not this compile's is an error where images would be built, and
// nothing where they would not:
// RUN: not %tile-cxx -fplugin-arg-tile-targets=cpu -fplugin-arg-tile-toolchain=0123 -c %s -o %t/b.o 2>&1 | FileCheck %s --check-prefix=MISMATCH
// MISMATCH: error: tile: the device compilers or the CPU of this compile are not those of its toolchain fingerprint (-fplugin-arg-tile-toolchain=0123; here it is {{[0-9a-f]+}}): a compiler cache would keep its images under a key that does not describe them
// MISMATCH: note: compile where tile-c++ took the fingerprint
// RUN: %tile-cxx -fplugin-arg-tile-targets=cpu -fplugin-arg-tile-toolchain=0123 -fsyntax-only %s
// RUN: %tile-cxx -fplugin-arg-tile-targets=cpu -fplugin-arg-tile-toolchain=0123 -DNO_KERNEL -c %s -o %t/c.o
//
// A CPU compiler whose --version fails: compiled each time, not cached (its key could not
// tell it from another compiler).
// RUN: printf '#!/bin/sh\nif [ "$1" = --version ]; then exit 1; fi\nexec %clangxx "$@"\n' > %t/noversion
// RUN: chmod +x %t/noversion
// RUN: %tile-cxx -fplugin-arg-tile-targets=cpu -fplugin-arg-tile-cxx=%t/noversion -fplugin-arg-tile-cache=%t/images -fplugin-arg-tile-verbose -c %s -o %t/d.o 2>&1 | FileCheck %s --check-prefix=NOVERSION
// RUN: %tile-cxx -fplugin-arg-tile-targets=cpu -fplugin-arg-tile-cxx=%t/noversion -fplugin-arg-tile-cache=%t/images -fplugin-arg-tile-verbose -c %s -o %t/d.o 2>&1 | FileCheck %s --check-prefix=NOVERSION
// NOVERSION: remark: tile: cannot tell the version of {{.*}}/noversion ('{{.*}}/noversion --version' failed); compiling without the image cache, whose keys hold it
// NOVERSION: remark: tile: cpu image of toolchain.cpp (1 kernel) compiled
#include <tile/tile.h>
#ifndef NO_KERNEL
[[tile::kernel]] void twice(tile::tensor<float, 1> x) {
  auto [bx] = tile::grid(1);
  for (int i : tile::serial(x.size(0)))
    x(i) = x(i) * 2;
}
#endif
