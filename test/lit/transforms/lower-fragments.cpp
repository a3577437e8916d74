// lower-fragments: register fragments become per-thread arrays; parallel nests over them
// become unrolled loops over the thread's slots (a Slots loop outermost), indices recovered
// from the thread index; a row reduction becomes a loop over the slots then a butterfly of
// warp shuffles over the row's threads; into a destination in shared memory, the first
// thread holding each result stores it.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=lower-fragments \
// RUN:   -fplugin-arg-tile-stop-after=lower-fragments %s 2>&1 | FileCheck %s
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=insert-sync \
// RUN:   -fplugin-arg-tile-stop-after=insert-sync %s 2>&1 | FileCheck %s --check-prefix=SYNC

#include <tile/tile.h>
namespace T = tile;

// CHECK-LABEL: kernel rowmax(
// CHECK: local x: f32[8]
// CHECK-NEXT: local m: f32[1]
// The copy in: each thread's 8 consecutive columns of its row (the path for a tile
// inside the tensor, then the one for a tile at its edge).
// CHECK: for rs in slots(0, 1) {
// CHECK-NEXT: for cs in unroll(0, 1) {
// CHECK-NEXT: for v in vectorized(0, 8) {
// CHECK-NEXT: var i: i32 = rs * 4 + tid / 32
// CHECK-NEXT: var j: i32 = cs * 256 + tid % 32 * 8 + v
// CHECK-NEXT: x[(rs + cs) * 8 + v] = X[bx * 4 + i, j]
// CHECK: x[(rs.1 + cs.1) * 8 + v.1] = select(
// The reduction: the thread's slots combined as a tree (no long chain of dependent
// operations), then shuffles across the 32 threads of the row.
// CHECK: for rs.2 in slots(0, 1) {
// CHECK-NEXT: var red: f32 = max(max(max(x[rs.2 * 8], x[rs.2 * 8 + 1]), max(x[rs.2 * 8 + 2], x[rs.2 * 8 + 3])), max(max(x[rs.2 * 8 + 4], x[rs.2 * 8 + 5]), max(x[rs.2 * 8 + 6], x[rs.2 * 8 + 7])))
// CHECK-NEXT: red = max(red, shfl_xor(red, 16))
// CHECK-NEXT: red = max(red, shfl_xor(red, 8))
// CHECK-NEXT: red = max(red, shfl_xor(red, 4))
// CHECK-NEXT: red = max(red, shfl_xor(red, 2))
// CHECK-NEXT: red = max(red, shfl_xor(red, 1))
// CHECK-NEXT: m[rs.2] = red
// An element-wise loop reading the row vector: its slot is the row step.
// CHECK: x[(rs.3 + cs.[[C:[0-9]+]]) * 8 + v.[[V:[0-9]+]]] = x[(rs.3 + cs.[[C]]) * 8 + v.[[V]]] - m[rs.3]
// CHECK-NOT: {{^  fragment }}
[[tile::kernel]] void rowmax(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 4));
  T::fragment<float, 4, 256> x;
  T::fragment<float, 4> m;
  T::copy(X.at(bx * 4, 0), x);
  T::reduce_max(x, m, 1);
  for (auto [i, j] : T::parallel(4, 256))
    x(i, j) = x(i, j) - m(i);
  T::copy(x, Y.at(bx * 4, 0));
}

// Rows that not every thread holds (3 rows, one per thread) are skipped past the end.
// CHECK-LABEL: kernel short_rows(
// CHECK: var i: i32 = rs * 128 + tid
// CHECK-NEXT: var j: i32 = cs + v
// CHECK-NEXT: if (i < 3) {
[[tile::kernel]] void short_rows(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::fragment<float, 3, 5> b;
  T::clear(b);
}

// A row over four warps (one row of 1024 columns, 128 threads): the butterfly stays inside
// each warp, whose first lane leaves its result in shared memory; then every thread
// combines its row's four.
// CHECK-LABEL: kernel wide_row(
// CHECK: shared red_warps: f32[1, 1, 4]
// CHECK: red = red + shfl_xor(red, 16)
// CHECK-NOT: shfl_xor(red, 32)
// CHECK: red = red + shfl_xor(red, 1)
// CHECK-NEXT: if (tid % 32 == 0) {
// CHECK-NEXT: red_warps[rs.2, 0, tid / 32] = red
// CHECK: for rs.3 in slots(0, 1) {
// CHECK-NEXT: var red.1: f32 = red_warps[rs.3, 0, 0]
// CHECK-NEXT: red.1 = red.1 + red_warps[rs.3, 0, 1]
// CHECK-NEXT: red.1 = red.1 + red_warps[rs.3, 0, 2]
// CHECK-NEXT: red.1 = red.1 + red_warps[rs.3, 0, 3]
// CHECK-NEXT: s[rs.3] = red.1
[[tile::kernel]] void wide_row(T::tensor<const float, 2> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(X.size(0));
  T::fragment<float, 1, 1024> x;
  T::fragment<float, 1> s;
  T::copy(X.at(bx, 0), x);
  T::reduce_sum(x, s, 1);
  T::copy(s, Y.at(bx));
}

// A 1-D nest bound by a row vector (8 threads hold each row's value): its stores outside the
// registers, to shared memory and to a tensor, are done by the first of the holders only
// (all 8 did them, and `s(i) = s(i) + r(i)` raced: found by test/fuzz with racecheck; a nest
// that reads such a store back keeps its row vector in shared memory: infer-layout.cpp).
// CHECK-LABEL: kernel replicated_store(
// CHECK: var i.{{[0-9]+}}: i32 = rs.{{[0-9]+}} * 16 + tid / 8
// CHECK: if (tid % 8 == 0) {
// CHECK-NEXT: s[i.{{[0-9]+}}] = r[rs.{{[0-9]+}}] * 2.0f
// CHECK: if (tid % 8 == 0) {
// CHECK-NEXT: Y[i_1] = r[rs.{{[0-9]+}}]
[[tile::kernel]] void replicated_store(T::tensor<const float, 2> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(1, T::threads(128));
  T::fragment<float, 16, 64> x;
  T::fragment<float, 16> r;
  T::shared<float, 16> s;
  T::copy(X.at(0, 0), x);
  T::reduce_sum(x, r, 1);
  for (int i : T::parallel(16))
    s(i) = r(i) * 2;
  for (int i : T::parallel(16))
    Y(i) = r(i);
  T::copy(s, Y.at(16));
}

// Adjacent reductions whose cross-warp steps are independent (LayerNorm's sum and sum of
// squares) leave their warps' results first and combine them after: insert-sync then puts
// one barrier between, not one for each. A reduction into the destination of the one before
// it keeps its own order.
// CHECK-LABEL: kernel two_sums(
// CHECK: red_warps[rs.{{[0-9]+}}, 0, tid / 32] = red
// CHECK: red_warps.1[rs.{{[0-9]+}}, 0, tid / 32] = red.1
// CHECK: red_warps.2[rs.{{[0-9]+}}, 0, tid / 32] = red.2
// CHECK: var red.3: f32 = red_warps[
// CHECK: var red.4: f32 = red_warps.1[
// CHECK: var red.5: f32 = red_warps.2[
// CHECK: both[rs.{{[0-9]+}}] = red.5
// CHECK: red_warps.3[rs.{{[0-9]+}}, 0, tid / 32] = red.6
// CHECK: var red.7: f32 = red_warps.3[
// CHECK: both[rs.{{[0-9]+}}] = both[rs.{{[0-9]+}}] + red.7
// SYNC-LABEL: kernel two_sums(
// SYNC: red_warps.2[{{.*}}] = red.2
// SYNC-NEXT: }
// SYNC-NEXT: }
// SYNC-NEXT: barrier
// SYNC-NOT: barrier
// SYNC: var red.5: f32 = red_warps.2[
// SYNC: red_warps.3[{{.*}}] = red.6
// SYNC-NEXT: }
// SYNC-NEXT: }
// SYNC-NEXT: barrier
// SYNC-NEXT: for rs
// SYNC-NEXT: var red.7: f32 = red_warps.3[
[[tile::kernel]] void two_sums(T::tensor<const float, 2> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(X.size(0));
  T::fragment<float, 1, 1024> x, sq;
  T::fragment<float, 1> s, s2, both;
  T::copy(X.at(bx, 0), x);
  for (auto [i, j] : T::parallel(1, 1024))
    sq(i, j) = x(i, j) * x(i, j);
  T::reduce_sum(x, s, 1);
  T::reduce_sum(sq, s2, 1);
  T::reduce_sum(x, both, 1);
  // both += the sum of squares: after the combine above.
  T::reduce_sum(sq, both, 1, false);
  for (int i : T::parallel(1))
    Y(bx) = s(i) + s2(i) + both(i);
}

// A destination in shared memory (cumsum's operands are): the source stays in registers;
// after the shuffles the row's first lane stores the maximum, and after the warps' partial
// sums the first thread of the row's two warps adds the sum to what s holds. insert-sync
// puts a barrier between the stores and the scans that read them.
// CHECK-LABEL: kernel into_shared(
// CHECK: local x: f32[8] in registers
// CHECK-NEXT: fragment m: f32[4]
// CHECK: local w: f32[16] in registers
// CHECK-NEXT: fragment s: f32[2]
// CHECK: red = max(red, shfl_xor(red, 1))
// CHECK-NEXT: if (tid % 32 == 0) {
// CHECK-NEXT: m[rs.{{[0-9]+}} * 4 + tid / 32] = red
// CHECK: var red.{{[0-9]+}}: f32 = red_warps[rs.{{[0-9]+}}, tid / 64, 0]
// CHECK-NEXT: red.[[R:[0-9]+]] = red.{{[0-9]+}} + red_warps[rs.{{[0-9]+}}, tid / 64, 1]
// CHECK-NEXT: if (tid % 64 == 0) {
// CHECK-NEXT: s[rs.{{[0-9]+}} * 2 + tid / 64] = s[rs.{{[0-9]+}} * 2 + tid / 64] + red.[[R]]
// SYNC-LABEL: kernel into_shared(
// SYNC: m[rs.{{[0-9]+}} * 4 + tid / 32] = red
// SYNC: barrier
// SYNC: scan = scan + m[
// SYNC: s[rs.{{[0-9]+}} * 2 + tid / 64] = s[
// SYNC: barrier
// SYNC: scan.{{[0-9]+}} = scan.{{[0-9]+}} + s[
[[tile::kernel]] void into_shared(T::tensor<const float, 2> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(1, T::threads(128));
  T::fragment<float, 4, 256> x;
  T::fragment<float, 4> m, mc;
  T::fragment<float, 2, 1024> w;
  T::fragment<float, 2> s, sc;
  T::copy(X.at(0, 0), x);
  T::reduce_max(x, m, 1);
  T::cumsum(m, mc, 0);
  T::copy(mc, Y.at(0));
  T::copy(X.at(4, 0), w);
  T::fill(s, 1.0f);
  T::reduce_sum(w, s, 1, false);
  T::cumsum(s, sc, 0);
  T::copy(sc, Y.at(4));
}
