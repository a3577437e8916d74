// ccache through tile-c++ (TILE_CXX_LAUNCHER=ccache, and `tile-c++ --launch ccache --` as a
// CMake compiler launcher): an unchanged file is a hit, whose object links and runs; a
// changed plugin is a miss, and so is a device compiler whose version changed at the same
// path (tile-c++ puts the toolchain fingerprint on the command line ccache hashes). Each
// step checks ccache's counters, so a wrong hit fails the test. `ccache tile-c++` (which
// cannot see the plugin or the device compilers) is warned about.
// REQUIRES: ccache
// UNSUPPORTED: sanitize
//
// A tile install of its own (tile-c++ takes the plugin beside it), whose plugin is changed
// below; a CPU compiler (cxx=) whose `--version` is the file beside it.
// RUN: rm -rf %t && mkdir -p %t/prefix/bin %t/prefix/lib
// RUN: cp %tile-bin/bin/tile-c++ %t/prefix/bin/ && cp %tile-bin/lib/libtile.so %tile-bin/lib/libtile_runtime.so %t/prefix/lib/
// RUN: printf '#!/bin/sh\nif [ "$1" = --version ]; then cat "$0.version"; exit 0; fi\nexec %clangxx "$@"\n' > %t/cxx
// RUN: chmod +x %t/cxx && echo "test clang, release 1" > %t/cxx.version
// DEFINE: %{ccache} = env CCACHE_DIR=%t/ccache CCACHE_CONFIGPATH=%t/ccache.conf %ccache
// DEFINE: %{stats} = %{ccache} --print-stats
// DEFINE: %{tile} = env CCACHE_DIR=%t/ccache CCACHE_CONFIGPATH=%t/ccache.conf TILE_CXX_LAUNCHER=%ccache %t/prefix/bin/tile-c++ -fplugin-arg-tile-targets=cpu -fplugin-arg-tile-cache=%t/images
//
// A first compile misses, the same again hits; the object from the hit links and runs.
// RUN: %{ccache} -z && %{tile} -c %s -o %t/a.o && %{stats} | FileCheck %s --check-prefix=MISS
// RUN: %{ccache} -z && %{tile} -c %s -o %t/b.o && %{stats} | FileCheck %s --check-prefix=HIT
// RUN: cmp %t/a.o %t/b.o
// RUN: %tile-cxx %t/b.o -o %t/prog && %t/prog | FileCheck %s --check-prefix=OUT
// OUT: 2 8
//
// The plugin changes (one byte more): a miss; then a hit again.
// RUN: printf x >> %t/prefix/lib/libtile.so
// RUN: %{ccache} -z && %{tile} -c %s -o %t/c.o && %{stats} | FileCheck %s --check-prefix=MISS
// RUN: %{ccache} -z && %{tile} -c %s -o %t/c.o && %{stats} | FileCheck %s --check-prefix=HIT
//
// The CPU compiler is named (cxx=): a miss, then a hit; its version changes, nothing else
// does: a miss, and the image is compiled again (the image cache's key holds the version too).
// RUN: %{ccache} -z && %{tile} -fplugin-arg-tile-cxx=%t/cxx -fplugin-arg-tile-verbose -c %s -o %t/d.o 2>&1 | FileCheck %s --check-prefix=COMPILED
// RUN: %{stats} | FileCheck %s --check-prefix=MISS
// RUN: %{ccache} -z && %{tile} -fplugin-arg-tile-cxx=%t/cxx -fplugin-arg-tile-verbose -c %s -o %t/d.o && %{stats} | FileCheck %s --check-prefix=HIT
// RUN: echo "test clang, release 2" > %t/cxx.version
// RUN: %{ccache} -z && %{tile} -fplugin-arg-tile-cxx=%t/cxx -fplugin-arg-tile-verbose -c %s -o %t/e.o 2>&1 | FileCheck %s --check-prefix=COMPILED
// RUN: %{stats} | FileCheck %s --check-prefix=MISS
// COMPILED: remark: tile: cpu image of {{.*}}.cpp (1 kernel) compiled
// RUN: %t/prefix/bin/tile-c++ %t/e.o -o %t/prog2 && %t/prog2 | FileCheck %s --check-prefix=OUT
//
// As CMake's compiler launcher, before clang++ with -fplugin= (find_package(Tile)): the same.
// DEFINE: %{launch} = env CCACHE_DIR=%t/ccache CCACHE_CONFIGPATH=%t/ccache.conf %t/prefix/bin/tile-c++ --launch %ccache -- %clangxx -std=c++20 -fplugin=%t/prefix/lib/libtile.so -I%include -fplugin-arg-tile-targets=cpu -fplugin-arg-tile-cxx=%t/cxx -fplugin-arg-tile-cache=%t/images -DSCALE=3
// RUN: %{ccache} -z && %{launch} -c %s -o %t/f.o && %{stats} | FileCheck %s --check-prefix=MISS
// RUN: %{ccache} -z && %{launch} -c %s -o %t/f.o && %{stats} | FileCheck %s --check-prefix=HIT
// RUN: echo "test clang, release 3" > %t/cxx.version
// RUN: %{ccache} -z && %{launch} -c %s -o %t/f.o && %{stats} | FileCheck %s --check-prefix=MISS
// RUN: printf x >> %t/prefix/lib/libtile.so
// RUN: %{ccache} -z && %{launch} -c %s -o %t/f.o && %{stats} | FileCheck %s --check-prefix=MISS
// RUN: %tile-cxx %t/f.o -o %t/prog3 && %t/prog3 | FileCheck %s --check-prefix=OUT3
// OUT3: 3 12
//
// `ccache tile-c++` hashes tile-c++ alone: said, also when the result comes from the cache.
// RUN: %{ccache} %t/prefix/bin/tile-c++ -fplugin-arg-tile-targets=cpu -c %s -o %t/g.o 2>&1 | FileCheck %s --check-prefix=WARN
// RUN: %{ccache} -z && %{ccache} %t/prefix/bin/tile-c++ -fplugin-arg-tile-targets=cpu -c %s -o %t/g.o 2>&1 | FileCheck %s --check-prefix=WARN
// RUN: %{stats} | FileCheck %s --check-prefix=HIT
// WARN: tile-c++: warning: a compiler cache runs tile-c++ and hashes it alone, not the tile plugin, clang or the device compilers
//
// MISS-DAG: {{^}}cache_miss{{[[:space:]]+}}1{{$}}
// MISS-DAG: {{^}}direct_cache_hit{{[[:space:]]+}}0{{$}}
// MISS-DAG: {{^}}preprocessed_cache_hit{{[[:space:]]+}}0{{$}}
// HIT-DAG: {{^}}cache_miss{{[[:space:]]+}}0{{$}}
// HIT-DAG: {{^}}direct_cache_hit{{[[:space:]]+}}1{{$}}
// HIT-DAG: {{^}}preprocessed_cache_hit{{[[:space:]]+}}0{{$}}
#include <tile/tile.h>
#include <cstdio>
#include <vector>
#ifndef SCALE
#define SCALE 2
#endif
[[tile::kernel]] void scale(tile::tensor<float, 1> x) {
  auto [bx] = tile::grid(1);
  for (int i : tile::serial(x.size(0)))
    x(i) = x(i) * SCALE;
}
int main() {
  tile::array<float, 1> x({4});
  x.copy_from(std::vector<float>{1, 2, 3, 4});
  scale(x);
  std::vector<float> v = x.to_vector();
  std::printf("%g %g\n", v[0], v[3]);
}
