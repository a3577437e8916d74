// Images are cached by content: a warm rebuild of an unchanged file runs no device compiler,
// and a changed kernel is compiled again; a damaged entry is compiled again and replaced; a
// cache that cannot be used is said.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tile-cxx -c %s -o %t/a.o -fplugin-arg-tile-cache=%t/cache -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=COLD
// COLD: remark: tile: cpu image of cache.cpp (1 kernel) compiled
// RUN: %tile-cxx -c %s -o %t/b.o -fplugin-arg-tile-cache=%t/cache -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=WARM
// WARM: remark: tile: cpu image of cache.cpp (1 kernel) loaded from cache, no device compiler run
// RUN: %tile-cxx -c %s -o %t/c.o -DSCALE=3 -fplugin-arg-tile-cache=%t/cache -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=COLD
// The object files with the same kernel are identical whether the image came from the cache.
// RUN: cmp %t/a.o %t/b.o
// A damaged entry (here: emptied, as a full disk or a crash can leave one) is not used: it
// is compiled again (said under verbose) and replaced, and the next build uses the cache.
// RUN: sh -c 'for f in %t/cache/cpu/*.so; do : > "$f"; done'
// RUN: %tile-cxx -c %s -o %t/d.o -fplugin-arg-tile-cache=%t/cache -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=DAMAGED
// DAMAGED: remark: tile: the cached image {{.*}}/cache/cpu/{{[0-9a-f]+}}.so is damaged (it is empty); compiling it again to replace it
// DAMAGED: remark: tile: cpu image of cache.cpp (1 kernel) compiled
// RUN: cmp %t/a.o %t/d.o
// RUN: %tile-cxx -c %s -o %t/e.o -fplugin-arg-tile-cache=%t/cache -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=WARM
// A cache that cannot be made is said, with the directory and why:
// RUN: touch %t/file
// RUN: %tile-cxx -c %s -o %t/f.o -fplugin-arg-tile-cache=%t/file -fplugin-arg-tile-verbose 2>&1 | FileCheck %s --check-prefix=UNUSABLE
// UNUSABLE: remark: tile: cannot use the image cache {{.*}}/file/cpu: {{.*}}; compiling without it
// UNUSABLE: remark: tile: cpu image of cache.cpp (1 kernel) compiled
#include <tile/tile.h>
#ifndef SCALE
#define SCALE 2
#endif
[[tile::kernel]] void scale(tile::tensor<float, 1> x) {
  auto [bx] = tile::grid(1);
  for (int i : tile::serial(x.size(0)))
    x(i) = x(i) * SCALE;
}
