// Images are cached by content: a warm rebuild of an unchanged file runs no device compiler,
// and a changed kernel is compiled again.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tile-cxx -c %s -o %t/a.o -fplugin-arg-tile-cache=%t/cache -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=COLD
// COLD: remark: tile: cpu image of cache.cpp (1 kernel) compiled
// RUN: %tile-cxx -c %s -o %t/b.o -fplugin-arg-tile-cache=%t/cache -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=WARM
// WARM: remark: tile: cpu image of cache.cpp (1 kernel) loaded from cache, no device compiler run
// RUN: %tile-cxx -c %s -o %t/c.o -DSCALE=3 -fplugin-arg-tile-cache=%t/cache -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=COLD
// The object files with the same kernel are identical whether the image came from the cache.
// RUN: cmp %t/a.o %t/b.o
#include <tile/tile.h>
#ifndef SCALE
#define SCALE 2
#endif
[[tile::kernel]] void scale(tile::tensor<float, 1> x) {
  auto [bx] = tile::grid(1);
  for (int i : tile::serial(x.size(0)))
    x(i) = x(i) * SCALE;
}
