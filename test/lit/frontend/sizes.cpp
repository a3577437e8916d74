// A tensor's size is a 64-bit integer in kernels as on the host (a dimension may hold more
// than 2^31 elements): `auto` keeps it whole, an int narrows it as C++ does, and the grid
// extent computed from it is 64-bit arithmetic narrowed to tile::grid's int.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-print-after=frontend %s 2>&1 | FileCheck %s
// CHECK-LABEL: kernel sizes(
// CHECK-NEXT: grid(bx < i32((n + i64(128) - i64(1)) / i64(128))) threads(128) {
// CHECK-NEXT: var n: i64 = x.size(0)
// CHECK-NEXT: var m: i32 = i32(x.size(0))
// CHECK-NEXT: x[bx] = f32(n + i64(m))
#include <tile/tile.h>

[[tile::kernel]] void sizes(tile::tensor<float, 1> x) {
  auto n = x.size(0);
  const int m = x.size(0);
  auto [bx] = tile::grid(tile::ceildiv(n, 128));
  x(bx) = float(n + m);
}
