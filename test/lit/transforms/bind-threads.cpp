// bind-threads: each outermost nest of parallel loops (left by lower-fragments: those that
// touch no register fragment) becomes one loop over the block's threads, with the original
// indices recovered from the flat one (innermost fastest) and the guards moved inside;
// parallel loops left inside become serial. Shared buffers keep the nests here.
// The IR before the pass (lower-tile-ops puts `if (row in range)` between the loops of a copy
// out: see lower-tile-ops.cpp) is checked there.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=bind-threads \
// RUN:   -fplugin-arg-tile-stop-after=bind-threads %s 2>&1 | FileCheck %s

#include <tile/tile.h>
namespace T = tile;

// A 2-D element-wise loop: one Threads loop of 8 * 16 iterations.
// CHECK-LABEL: IR after bind-threads [cuda]
// CHECK: kernel nest(
// CHECK: for t in threads(0, 128) {
// CHECK-NEXT: var i: i32 = t / 16
// CHECK-NEXT: var j: i32 = t % 16
// CHECK-NEXT: f[i, j] = f[i, j] * 2.0f
// A 1-D loop keeps its variable.
// CHECK: for i_1 in threads(0, 8) {
// CHECK-NEXT: r[i_1] = 0.0f
[[tile::kernel]] void nest(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<float, 8, 16> f;
  T::shared<float, 8> r;
  for (auto [i, j] : T::parallel(8, 16))
    f(i, j) = f(i, j) * 2.0f;
  for (int i : T::parallel(8))
    r(i) = 0.0f;
}

// Guards between the loops of a nest (a copy out at a tensor's edge, the branch for a tile
// that crosses it) move inside, in order.
// CHECK-LABEL: IR after bind-threads [cuda]
// CHECK: kernel guards(
// CHECK: } else (rare) {
// CHECK-NEXT: for t.1 in threads(0, 128) {
// CHECK-NEXT: var i.1: i32 = t.1 / 32
// CHECK-NEXT: var j.1: i32 = t.1 % 32
// CHECK-NEXT: if (i64(bx * 4 + i.1) < Y.size(0)) {
// CHECK-NEXT: if (i64(j.1) < Y.size(1)) {
// CHECK-NEXT: Y[bx * 4 + i.1, j.1] = f[i.1, j.1]
[[tile::kernel]] void guards(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(2);
  T::shared<float, 4, 32> f;
  T::copy(f, Y.at(bx * 4, 0));
}

// A reduction of a fragment in shared memory (a 3-D one: register layouts are for ranks 1
// and 2): the kept dimensions are bound to threads, the reduced one stays serial in each
// thread; a parallel loop under other statements runs serially in its thread.
// CHECK-LABEL: IR after bind-threads [cuda]
// CHECK: kernel inner(
// CHECK: for t in threads(0, 8) {
// CHECK-NEXT: var i: i32 = t / 4
// CHECK-NEXT: var j: i32 = t % 4
// CHECK-NEXT: var red: f32 = 0.0f
// CHECK-NEXT: for r in serial(0, 32) {
// CHECK: for i.1 in threads(0, 4) {
// CHECK-NEXT: s[0, i.1] = 0.0f
// CHECK-NEXT: for j.1 in serial(0, 32) {
// CHECK-NEXT: s[0, i.1] = s[0, i.1] + f[0, i.1, j.1]
[[tile::kernel]] void inner(T::tensor<float, 1> Y) {
  auto [bx] = T::grid(1);
  T::fragment<float, 2, 4, 32> f;
  T::fragment<float, 2, 4> s;
  T::reduce_sum(f, s, 2);
  for (int i : T::parallel(4)) {
    s(0, i) = 0.0f;
    for (int j : T::parallel(32))
      s(0, i) = s(0, i) + f(0, i, j);
  }
}

// Nests that fill a local buffer (a thread's own storage) are not split over the threads:
// every thread runs all of it, serially, so that each holds the whole buffer (split, thread
// t held only row t of a reduction into a local; found by test/fuzz on the H200).
// CHECK-LABEL: IR after bind-threads [cuda]
// CHECK: kernel into_local(
// CHECK-NOT: in threads(
// CHECK: for i in serial(0, 16) {
// CHECK-NEXT: var red: f32 = 0.0f
// CHECK-NEXT: for r in serial(0, 32) {
// CHECK: for i.1 in serial(0, 16) {
// CHECK-NEXT: l[i.1] = l[i.1] * 2.0f
// CHECK: for t in threads(0, 512) {
[[tile::kernel]] void into_local(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1, T::threads(64));
  T::shared<float, 16, 32> s;
  T::local<float, 16> l;
  T::reduce_sum(s, l, 1);
  for (int i : T::parallel(16))
    l(i) = l(i) * 2.0f;
  for (auto [i, j] : T::parallel(16, 32))
    s(i, j) = l(i);
}
