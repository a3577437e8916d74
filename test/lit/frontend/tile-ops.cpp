// Buffers of rank 1 to 4, regions (with tile::slice), and every tile operation.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-print-after=frontend %s 2>&1 | FileCheck %s

#include <tile/tile.h>
namespace T = tile;

// CHECK-LABEL: kernel ops(Q: tensor<const bf16, 4>, O: tensor<f32, 2>, S: tensor<i32, 1>)
[[tile::kernel]] void ops(T::tensor<const T::bf16, 4> Q, T::tensor<float, 2> O, T::tensor<int, 1> S) {
  auto [bx, by, bz] = T::grid(4, Q.size(2), Q.size(0), T::threads(256));
  // CHECK: grid(bx < 4, by < i32(Q.size(2)), bz < i32(Q.size(0))) threads(256)
  T::shared<T::bf16, 64, 32> Qs;
  T::fragment<float, 64, 32> acc;
  T::fragment<float, 64> row;
  T::local<int, 2, 2, 2, 2> l4;
  // CHECK: shared Qs: bf16[64, 32]
  // CHECK: local l4: i32[2, 2, 2, 2]
  // CHECK: copy(Q[bz, bx * 64 +: 64, by, 0 +: 32], Qs)
  T::copy(Q.at(bz, T::slice(bx * 64), by, T::slice(0)), Qs);
  // CHECK: copy(Qs, acc)
  T::copy(Qs, acc);
  // CHECK: fill(acc, 1.0f)
  T::fill(acc, 1.0f);
  // CHECK: fill(l4, 0)
  T::clear(l4);
  // CHECK: reduce_sum(acc, row, dim=1)
  T::reduce_sum(acc, row, 1);
  // CHECK: reduce_max(acc, row, dim=1, accumulate)
  T::reduce_max(acc, row, 1, false);
  // CHECK: reduce_min(acc, row, dim=1)
  T::reduce_min(acc, row, 1);
  // CHECK: reduce_absmax(acc, row, dim=1)
  T::reduce_absmax(acc, row, 1);
  // CHECK: reduce_abssum(acc, row, dim=1)
  T::reduce_abssum(acc, row, 1);
  // CHECK: cumsum(acc, acc, dim=0, reverse)
  T::cumsum(acc, acc, 0, true);
  // Trailing dimensions when there are no slice marks.
  // CHECK: copy(acc, O[bx * 64 +: 64, 0 +: 32])
  T::copy(acc, O.at(bx * 64, 0));
  // CHECK: atomic_add(S[bx], 1)
  T::atomic_add(S(bx), 1);
  // CHECK: atomic_max(O[0, 0], 2.5f)
  T::atomic_max(O(0, 0), 2.5f);
  // CHECK: atomic_add(O[bx * 64 +: 64, 0 +: 32], acc)
  T::atomic_add(O.at(bx * 64, 0), acc);
  // An atomic's value outside parallel loops: one thread's, to all through a shared slot.
  // CHECK: var old: i32
  // CHECK-NEXT: old = atomic_add(S[bx], 1)
  // CHECK-NEXT: shared atomic_slot: i32[1]
  // CHECK-NEXT: atomic_slot[0] = old
  // CHECK-NEXT: var old_1: i32 = atomic_slot[0]
  // CHECK-NEXT: var ticket: i32 = old_1
  const int ticket = T::atomic_add(S(bx), 1);
  // CHECK: atomic_compare_exchange(S[ticket], 0, 1)
  T::atomic_compare_exchange(S(ticket), 0, 1);
  // Inside them, each iteration's own.
  // CHECK: var old_2: f32
  // CHECK-NEXT: old_2 = atomic_exchange(O[i, 0], 1.0f)
  // CHECK-NEXT: var was: f32 = old_2
  for (int i : T::parallel(32)) {
    const float was = T::atomic_exchange(O(i, 0), 1.0f);
    O(i, 1) = was;
  }
  // CHECK: print("block", bx, "row", f32(Qs[0, 0]))
  T::print("block", bx, "row", float(Qs(0, 0)));
  // CHECK: assert(bx < 4, "bx in range ({{.*}}tile-ops.cpp:[[@LINE+1]])")
  T::device_assert(bx < 4, "bx in range");
  // CHECK: annotate_layout(Qs, swizzled(64))
  T::annotate_layout(Qs, T::layouts::swizzled(64));
}

// CHECK-LABEL: kernel gemms(A: tensor<const f16, 2>, C: tensor<f32, 2>)
// CHECK-NEXT: grid(bx < 8, by < 8) threads(128) swizzle(4) {
[[tile::kernel]] void gemms(T::tensor<const T::f16, 2> A, T::tensor<float, 2> C) {
  auto [bx, by] = T::grid(8, 8);
  T::use_swizzle(4);
  T::shared<T::f16, 64, 32> a;
  T::shared<T::f16, 48, 32> bt;
  T::fragment<float, 64, 48> c;
  T::copy(A.at(by * 64, 0), a);
  T::copy(A.at(bx * 48, 0), bt);
  // CHECK: gemm(a, bt, c, transpose_b, clear_accum, policy=full_row)
  T::gemm(a, bt, c, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
  T::shared<T::f16, 32, 64> at;
  T::shared<T::f16, 32, 48> b;
  // CHECK: gemm(at, b, c, transpose_a)
  T::gemm(at, b, c, {.transpose_a = true});
  // A run-time clear_accum clears c when it holds, then accumulates.
  // CHECK: for k in serial(0, 4) {
  // CHECK-NEXT: if (k == 0) {
  // CHECK-NEXT: fill(c, 0.0f)
  // CHECK-NEXT: }
  // CHECK-NEXT: gemm(at, b, c, transpose_a, policy=full_col)
  for (int k : T::serial(4))
    T::gemm(at, b, c, {.transpose_a = true, .clear_accum = (k == 0), .policy = T::warp_policy::full_col});
  T::copy(c, C.at(by * 64, bx * 48));
}

// reduce_argmax: a max reduction into a buffer of the source's type, the positions that hold
// it (else INT32_MAX), their min reduction, then the values and first + position (-1 where
// none holds it); with clear = false only where the new extreme is strictly beyond the held.
// CHECK-LABEL: kernel arg_reduce(X: tensor<const f32, 2>, V: tensor<f32, 1>, I: tensor<i32, 1>)
// CHECK: fragment f_best: f32[16]
// CHECK-NEXT: fragment f_position: i32[16, 8]
// CHECK-NEXT: fragment f_found: i32[16]
// CHECK-NEXT: reduce_max(f, f_best, dim=1)
// CHECK-NEXT: for i in parallel(0, 16) {
// CHECK-NEXT: for i_1 in parallel(0, 8) {
// CHECK-NEXT: f_position[i, i_1] = select(f[i, i_1] == f_best[i], i_1, 2147483647)
// CHECK: reduce_min(f_position, f_found, dim=1)
// CHECK-NEXT: for i_2 in parallel(0, 16) {
// CHECK-NEXT: if (f_found[i_2] != 2147483647 && f_best[i_2] > v[i_2]) {
// CHECK-NEXT: v[i_2] = f_best[i_2]
// CHECK-NEXT: at[i_2] = i32(select(f_found[i_2] != 2147483647, i64(k) + i64(f_found[i_2]), i64(-1)))
[[tile::kernel]] void arg_reduce(T::tensor<const float, 2> X, T::tensor<float, 1> V, T::tensor<int, 1> I) {
  auto [bx] = T::grid(1);
  T::fragment<float, 16, 8> f;
  T::fragment<float, 16> v;
  T::fragment<int, 16> at;
  for (int k : T::serial(4)) {
    T::copy(X.at(0, k * 8), f);
    T::reduce_argmax(f, v, at, 1, false, k);
  }
  T::copy(v, V.at(0));
  T::copy(at, I.at(0));
}

// sort: a bitonic network over the next power of two (blocks of 2^1 to 2^3 for rows of 6), every comparator putting
// the smaller key first, those that would meet a position past the row skipped; the values
// move with their keys. topk: a shared copy of the source with its positions, sorted
// descending (equal keys by position), its first k columns.
// CHECK-LABEL: kernel sorts(X: tensor<f32, 2>, I: tensor<i32, 2>)
// CHECK: for sort_block in serial(1, 3) {
// CHECK-NEXT: for sort_step in serial(0, sort_block) {
// CHECK-NEXT: for i_1 in parallel(0, 4) {
// CHECK-NEXT: for i_2 in parallel(0, 6) {
// CHECK-NEXT: var partner: i32 = select(sort_step == 0, i_2 ^ (1 << sort_block) - 1, i_2 ^ 1 << sort_block - 1 - sort_step)
// CHECK-NEXT: if (partner > i_2 && partner < 6) {
// CHECK-NEXT: var key: f32 = s[i_1, i_2]
// CHECK-NEXT: var key_1: f32 = s[i_1, partner]
// CHECK-NEXT: var value: i32 = p[i_1, i_2]
// CHECK-NEXT: var value_1: i32 = p[i_1, partner]
// CHECK-NEXT: if (key_1 < key) {
// CHECK-NEXT: s[i_1, i_2] = key_1
// CHECK-NEXT: s[i_1, partner] = key
// CHECK-NEXT: p[i_1, i_2] = value_1
// CHECK-NEXT: p[i_1, partner] = value
// CHECK: shared s_keys: f32[4, 6]
// CHECK-NEXT: shared s_positions: i32[4, 6]
// CHECK-NEXT: copy(s, s_keys)
// CHECK: s_positions[i_3, i_4] = i_4
// CHECK: if (key_3 > key_2 || key_3 == key_2 && value_3 < value_2) {
// CHECK: top[i_7, i_8] = s_keys[i_7, i_8]
// CHECK-NEXT: ti[i_7, i_8] = s_positions[i_7, i_8]
[[tile::kernel]] void sorts(T::tensor<float, 2> X, T::tensor<int, 2> I) {
  auto [bx] = T::grid(1);
  T::shared<float, 4, 6> s;
  T::shared<int, 4, 6> p;
  T::copy(X.at(0, 0), s);
  for (auto [i, j] : T::parallel(4, 6))
    p(i, j) = j;
  T::sort(s, p, 1);
  T::fragment<float, 4, 2> top;
  T::fragment<int, 4, 2> ti;
  T::topk(s, top, ti, 1);
  T::copy(top, X.at(0, 0));
  T::copy(ti, I.at(0, 0));
}

// x.rows(begin, end): the first row and the row count, clipped to the tensor, then the view
// (its own row count, the tensor's other sizes and strides), also of a view; element accesses and tiles index the view from its first row.
// CHECK-LABEL: kernel views(X: tensor<f32, 2>, Off: tensor<const i32, 1>)
// CHECK: var X_first: i64 = max(min(i64(Off[bx]), X.size(0)), i64(0))
// CHECK-NEXT: var X_count: i64 = max(min(i64(Off[bx + 1]), X.size(0)), X_first) - X_first
// CHECK-NEXT: view Xg: f32[X_count, X.size(1)] of X at [X_first, i64(0)]
// CHECK-NEXT: var Xg_first: i64 = max(min(i64(2), X_count), i64(0))
// CHECK-NEXT: var Xg_count: i64 = max(min(i64(bx), X_count), Xg_first) - Xg_first
// CHECK-NEXT: view tail: f32[Xg_count, X.size(1)] of Xg at [Xg_first, i64(0)]
// CHECK: copy(Xg[0 +: 8, 0 +: 8], s)
// CHECK: tail[0, 1] = Xg[1, 0]
[[tile::kernel]] void views(T::tensor<float, 2> X, T::tensor<const int, 1> Off) {
  auto [bx] = T::grid(Off.size(0) - 1);
  auto Xg = X.rows(Off(bx), Off(bx + 1));
  auto tail = Xg.rows(2, bx);
  T::shared<float, 8, 8> s;
  T::copy(Xg.at(0, 0), s);
  tail(0, 1) = Xg(1, 0);
}
