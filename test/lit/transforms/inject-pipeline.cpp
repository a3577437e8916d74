// inject-pipeline: a pipelined loop whose copies fill shared buffers from global memory runs
// them stages - 1 iterations ahead, asynchronously, into that many copies of the buffers.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-gemm=mma -fplugin-arg-tile-print-after=insert-sync \
// RUN:   -fplugin-arg-tile-stop-after=insert-sync %s 2>&1 | FileCheck %s
// The stage count fixed from the command line (stages=N: every pipelined loop, for tests
// and comparisons) instead of the program's:
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-gemm=mma -fplugin-arg-tile-print-after=insert-sync \
// RUN:   -fplugin-arg-tile-stop-after=insert-sync -fplugin-arg-tile-stages=4 %s 2>&1 | FileCheck %s --check-prefix=FOUR
// A loop that stays as it is says why:
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_80 -fplugin-arg-tile-remarks \
// RUN:   -fplugin-arg-tile-stop-after=inject-pipeline %s 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK-NOT: prefetching
// REMARK: inject-pipeline.cpp:{{[0-9]+}}:{{[0-9]+}}: remark: [cuda:sm_80] pipelined loop: 3 stages, the copies into 'As', 'Bs' run 2 iterations ahead
// REMARK: inject-pipeline.cpp:{{[0-9]+}}:{{[0-9]+}}: remark: [cuda:sm_80] pipelined loop runs without prefetching: 's', which it copies into, is written in the loop too
// REMARK: inject-pipeline.cpp:{{[0-9]+}}:{{[0-9]+}}: remark: [cuda:sm_80] pipelined loop runs without prefetching: its body does not start with copies from global into shared memory
// REMARK: inject-pipeline.cpp:{{[0-9]+}}:{{[0-9]+}}: remark: [cuda:sm_80] pipelined loop runs without prefetching: 's', which it copies into, is used outside the loop or by another pipelined loop
// REMARK: inject-pipeline.cpp:{{[0-9]+}}:{{[0-9]+}}: remark: [cuda:sm_80] pipelined loop runs without prefetching: 's', which it copies into, is used outside the loop or by another pipelined loop
// REMARK: inject-pipeline.cpp:{{[0-9]+}}:{{[0-9]+}}: remark: [cuda:sm_80] pipelined loop runs without prefetching: its body does not start with copies from global into shared memory
// REMARK: inject-pipeline.cpp:[[# @LINE + 160]]:{{[0-9]+}}: remark: [cuda:sm_80] pipelined loop: 3 stages, the copies into 's' run 2 iterations ahead
// REMARK: inject-pipeline.cpp:[[# @LINE + 174]]:{{[0-9]+}}: remark: [cuda:sm_80] pipelined loop runs without prefetching: its body does not start with copies from global into shared memory
// REMARK: inject-pipeline.cpp:[[# @LINE + 202]]:{{[0-9]+}}: remark: [cuda:sm_80] pipelined loop: 3 stages, the copies into 's' run 2 iterations ahead, for the iterations whose condition holds
// REMARK-NOT: prefetching
// FOUR-LABEL: kernel mm(
// FOUR: shared As: bf16[4, 64, 32] rows of 40
// FOUR: shared Bs: bf16[4, 32, 64] rows of 72
// FOUR: async_wait(2)

#include <tile/tile.h>
namespace T = tile;

// CHECK-LABEL: kernel mm(
// The buffers get a leading stage dimension (their padded rows kept).
// CHECK: shared As: bf16[3, 64, 32] rows of 40
// CHECK: shared Bs: bf16[3, 32, 64] rows of 72
// Prologue: the first two iterations' copies, one commit each, no barrier (the two
// iterations write different stages).
// CHECK: for stage in serial(0, 2) {
// CHECK-NEXT: if (stage < (K + 32 - 1) / 32) {
// CHECK-NEXT: async {
// CHECK: As[stage % 3, {{i.[0-9]+}}, {{j.[0-9]+}}] = select(
// CHECK: Bs[stage % 3, {{i.[0-9]+}}, {{j.[0-9]+}}] = select(
// CHECK: async_commit()
// The loop: a wait for iteration it's copies (one group may stay in flight), one barrier
// (for those copies, and for the stage the next copies overwrite, which the iteration
// before read), the copies of iteration it + 2, a commit, the work; no barrier between
// the copies and the work (they touch different stages).
// CHECK: for it in serial(0, (K + 32 - 1) / 32) {
// CHECK-NEXT: var k: i32 = it
// CHECK-NEXT: async_wait(1)
// CHECK-NEXT: barrier()
// CHECK-NEXT: if (it + 2 < (K + 32 - 1) / 32) {
// CHECK-NEXT: async(ahead 2 of 3) {
// CHECK: As[(it + 2) % 3, {{i.[0-9]+}}, {{j.[0-9]+}}] = select(
// CHECK-NOT: barrier()
// CHECK: async_commit()
// CHECK-NEXT: gemm(As[it % 3, 0 +: 64, 0 +: 32], Bs[it % 3, 0 +: 32, 0 +: 64], acc)
// CHECK: async_wait(0)
[[tile::kernel]] void mm(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  const int K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 64), T::ceildiv(C.size(0), 64));
  T::shared<T::bf16, 64, 32> As;
  T::shared<T::bf16, 32, 64> Bs;
  T::fragment<float, 64, 64> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 32), T::stages(3))) {
    T::copy(A.at(by * 64, k * 32), As);
    T::copy(B.at(k * 32, bx * 64), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 64, bx * 64));
}

// A loop with one stage, or whose shared buffer is also written by its other statements,
// stays a serial loop.
// CHECK-LABEL: kernel unpipelined(
// CHECK-NOT: async
// CHECK: for k in pipelined(0, 4, stages=1) {
// CHECK: for k_1 in pipelined(0, 4, stages=2) {
// CHECK-NOT: async
[[tile::kernel]] void unpipelined(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<float, 8, 32> s;
  for (int k : T::pipelined(4, T::stages(1))) {
    T::copy(X.at(k * 8, 0), s);
    T::copy(s, Y.at(k * 8, 0));
  }
  for (int k : T::pipelined(4, T::stages(2))) {
    T::copy(X.at(k * 8, 0), s);
    T::fill(s, 1.0f);
    T::copy(s, Y.at(k * 8, 0));
  }
  for (int k : T::pipelined(4, T::stages(2))) {
    T::copy(s, Y.at(k * 8, 0));
    T::copy(X.at(k * 8, 0), s);
  }
}

// A buffer that two pipelined loops fill is multi-buffered by neither (each would replace it
// with copies of its own): both stay serial loops. (Found with stages=4 on `unpipelined`,
// whose first loop then had a buffer the second still used: an internal error before.)
// CHECK-LABEL: kernel shared_by_two(
// CHECK-NOT: async
// CHECK: for k in pipelined(0, 4, stages=2) {
// CHECK: for k_1 in pipelined(0, 3, stages=2) {
// CHECK-NOT: async
// FOUR-LABEL: kernel shared_by_two(
// FOUR-NOT: async
// FOUR: for k in pipelined(0, 4, stages=4) {
// FOUR-NOT: async
[[tile::kernel]] void shared_by_two(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<float, 8, 32> s;
  for (int k : T::pipelined(4, T::stages(2))) {
    T::copy(X.at(k * 8, 0), s);
    T::copy(s, Y.at(k * 8, 0));
  }
  for (int k : T::pipelined(3, T::stages(2))) {
    T::copy(X.at(k * 8, 0), s);
    T::copy(s, Y.at(k * 8 + 32, 0));
  }
}

// Scalars declared first in the body and never assigned (the copies' offset) are their
// values: the copies still lead the body, and it is pipelined.
// FOUR-LABEL: kernel offset_first(
// CHECK-LABEL: kernel offset_first(
// CHECK: shared s: f32[2, 8, 32]
// CHECK-NOT: var off
// CHECK: async {
// CHECK: s[stage % 2, i, j] = X[stage * 8 + bx + i, j]
// CHECK: for it in serial(0, 3) {
// CHECK-NOT: var off
// CHECK: s[(it + 1) % 2, i, j] = X[(it + 1) * 8 + bx + i, j]
[[tile::kernel]] void offset_first(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<float, 8, 32> s;
  for (int k : T::pipelined(3, T::stages(2))) {
    const int off = k * 8 + bx;
    T::copy(X.at(off, 0), s);
    T::copy(s, Y.at(off, 0));
  }
}

// A declaration whose value changes with the body's assignments (`row` here) is not a
// constant: substituted where `out` is used it would read `row` after `row += 8`. The loop
// stays as written.
// CHECK-LABEL: kernel offset_reads_assigned(
// CHECK: for k in pipelined(0, 3, stages=2) {
// CHECK-NEXT: var out: i32 = row
// CHECK-NOT: async
[[tile::kernel]] void offset_reads_assigned(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<float, 8, 32> s;
  int row = 0;
  for (int k : T::pipelined(3, T::stages(2))) {
    const int out = row;
    T::copy(X.at(k * 8, 0), s);
    row = row + 8;
    T::copy(s, Y.at(out, 0));
  }
}

// A block that a read-only tensor names (`const int kb = Index(i)`, the index list of a
// block-sparse loop) is a value too: the copies of iteration it + 2 read Index(it + 2),
// under the test that such an iteration exists.
// CHECK-LABEL: kernel index_list(
// CHECK: for stage in serial(0, 2) {
// CHECK-NEXT: if (stage < Count[bx]) {
// CHECK: s[stage % 3, i, j] = X[Index[bx, stage] * 8 + i, j]
// CHECK: for it in serial(0, Count[bx]) {
// CHECK-NOT: var kb
// CHECK: if (it + 2 < Count[bx]) {
// CHECK: s[(it + 2) % 3, i, j] = X[Index[bx, it + 2] * 8 + i, j]
// CHECK: Y[Index[bx, {{i[.0-9]*}}] * 8 + {{.*}}] = s[it % 3,
[[tile::kernel]] void index_list(T::tensor<const float, 2> X, T::tensor<const int, 2> Index,
                                 T::tensor<const int, 1> Count, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(Index.size(0));
  T::shared<float, 8, 32> s;
  for (int i : T::pipelined(Count(bx), T::stages(3))) {
    const int kb = Index(bx, i);
    T::copy(X.at(kb * 8, 0), s);
    T::copy(s, Y.at(kb * 8, 0));
  }
}

// One that a tensor the kernel may write names is not: the loop stays as written.
// CHECK-LABEL: kernel index_list_written(
// CHECK: for i in pipelined(0, i32(Index.size(1)), stages=3) {
// CHECK-NEXT: var kb: i32 = Index[bx, i]
// CHECK-NOT: async
[[tile::kernel]] void index_list_written(T::tensor<const float, 2> X, T::tensor<int, 2> Index, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(Index.size(0));
  T::shared<float, 8, 32> s;
  for (int i : T::pipelined(Index.size(1), T::stages(3))) {
    const int kb = Index(bx, i);
    T::copy(X.at(kb * 8, 0), s);
    T::copy(s, Y.at(kb * 8, 0));
  }
}

// A body under one condition on a read-only tensor, TileLang's block-sparse
// `if (mask) { copy; ... }`: an iteration's copies are made ahead where its condition holds
// (a group committed either way), its statements run where it holds.
// CHECK-LABEL: kernel guarded(
// CHECK: for stage in serial(0, 2) {
// CHECK-NEXT: if (stage < i32(Mask.size(0))) {
// CHECK-NEXT: if (Mask[stage] != 0) {
// CHECK-NEXT: async {
// CHECK: async_commit()
// CHECK: for it in serial(0, i32(Mask.size(0))) {
// CHECK-NEXT: var k: i32 = it
// CHECK-NEXT: async_wait(1)
// CHECK-NEXT: barrier()
// CHECK-NEXT: if (it + 2 < i32(Mask.size(0))) {
// CHECK-NEXT: if (Mask[it + 2] != 0) {
// CHECK-NEXT: async(ahead 2 of 3) {
// CHECK: async_commit()
// CHECK-NEXT: if (Mask[k] != 0) {
// CHECK: Y[k * 8 + {{.*}}] = s[it % 3,
[[tile::kernel]] void guarded(T::tensor<const float, 2> X, T::tensor<const int, 1> Mask, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<float, 8, 32> s;
  for (int k : T::pipelined(Mask.size(0), T::stages(3))) {
    if (Mask(k) != 0) {
      T::copy(X.at(k * 8, 0), s);
      T::copy(s, Y.at(k * 8, 0));
    }
  }
}
