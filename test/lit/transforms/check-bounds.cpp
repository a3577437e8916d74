// check-bounds: with -fplugin-arg-tile-check-bounds, a load of a tensor element becomes a
// select on its bounds_check (the index against the tensor's sizes, the message naming the
// tensor and the line, the index and sizes as values), a store and an element atomic run
// under an if on theirs (a skipped atomic's value is 0), and a load inside an index is
// checked inside it. Loads and stores of tile buffers and tile copies are left as they are.
// Without the option the pass changes nothing.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cpu -fplugin-arg-tile-check-bounds \
// RUN:   -fplugin-arg-tile-print-before=check-bounds -fplugin-arg-tile-print-after=check-bounds \
// RUN:   -fplugin-arg-tile-stop-after=check-bounds %s 2>&1 | FileCheck %s
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cpu -fplugin-arg-tile-print-after=check-bounds \
// RUN:   -fplugin-arg-tile-stop-after=check-bounds %s 2>&1 | FileCheck %s --check-prefix=OFF

#include <tile/tile.h>
namespace T = tile;

// CHECK-LABEL: IR before check-bounds
// CHECK-NOT: bounds_check
// CHECK-LABEL: IR after check-bounds
// CHECK-LABEL: kernel gather(
// The tile copy is not an element access.
// CHECK: copy(X[
// CHECK: for i in parallel(0, 64) {
// CHECK: if (bounds_check(u64(
// CHECK-SAME: "element ({}) of tensor 'Y' is outside its sizes ({}) ({{[^"]*}}check-bounds.cpp:[[# @LINE + 24]])"
// CHECK-NEXT: Y[r] = select(bounds_check(u64(select(bounds_check(u64(i64(r)) < u64(Idx.size(0)), "element ({}) of tensor 'Idx' is outside
// CHECK-SAME: "element ({}) of tensor 'X' is outside its sizes ({}) ({{[^"]*}}check-bounds.cpp:[[# @LINE + 22]])"
// CHECK-SAME: X[
// CHECK-SAME: , 0.0f)
// The shared tile's store and load are not checked.
// CHECK: S[i] = S[i]
// CHECK-LABEL: kernel slots(
// CHECK: var old: i32
// CHECK-NEXT: if (bounds_check(u64(
// CHECK-SAME: "element ({}, {}) of tensor 'C' is outside its sizes ({}, {})
// CHECK-NEXT: old = atomic_add(C[
// CHECK-NEXT: } else {
// CHECK-NEXT: old = 0
// OFF-LABEL: IR after check-bounds
// OFF-NOT: bounds_check

[[tile::kernel]] void gather(T::tensor<const float, 1> X, T::tensor<const int, 1> Idx, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(Y.size(0), 64));
  T::shared<float, 64> S;
  T::copy(X.at(bx * 64), S);
  for (int i : T::parallel(64)) {
    const int r = bx * 64 + i;
    if (r < Y.size(0))
      Y(r) = X(Idx(r));
    S(i) = S(i) + 1.0f;
  }
}

[[tile::kernel]] void slots(T::tensor<const int, 1> Bin, T::tensor<int, 2> C, T::tensor<int, 1> Slot) {
  auto [bx] = T::grid(Bin.size(0));
  const int old = T::atomic_add(C(Bin(bx), 1), 1);
  Slot(bx) = old;
}
