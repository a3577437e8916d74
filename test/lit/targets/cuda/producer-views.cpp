// warp-specialize with tiles from views of rows chosen at run time (X.rows(begin, end)) in a
// loop inside an `if` at the top of the kernel: the `if` is taken apart (its declarations
// before the loop, its statements before and after the loop under the condition, the loop's
// count 0 where it fails), the producer copies from the tensor at the view's origin, and the
// consumers zero the rows of a stage outside the view (fenced for the tensor cores, behind a
// barrier of theirs) where the tile has any. A view of a view, and an `if` whose condition
// reads a variable the kernel assigns, stay with the cp.async pipeline; the remarks say why.
// nvcc compiles the generated CUDA.
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -fplugin-arg-tile-multicast=on -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a \
// RUN:   -fplugin-arg-tile-remarks %s 2>&1 | FileCheck %s --check-prefix=REMARKS
// REMARKS-DAG: producer-views.cpp:[[# @LINE + 45]]:5: remark: [cuda:sm_90a] pipelined loop: 3 stages, the copies into 'As', 'Bs' are bulk tensor copies
// REMARKS-DAG: producer-views.cpp:[[# @LINE + 44]]:5: remark: [cuda:sm_90a] tiles not shared with the neighbouring block (multicast): a copy reads a view of rows, whose tiles each block's consumers complete
// REMARKS-DAG: producer-views.cpp:[[# @LINE + 61]]:3: remark: [cuda:sm_90a] pipelined loop not warp-specialized: the copy into 'As' is from 'Av', a view of a view
// REMARKS-DAG: producer-views.cpp:[[# @LINE + 78]]:5: remark: [cuda:sm_90a] pipelined loop not warp-specialized: it is inside an `if` whose condition reads 'n', which the kernel assigns
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fplugin-arg-tile-bulk-store=off -fsyntax-only \
// RUN:   -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-print-after=warp-specialize %s 2>&1 | FileCheck %s
// CHECK-LABEL: kernel grouped(
// CHECK: if (tid == 128) {
// CHECK-NEXT: for it in serial(0, select(i64(by * 128) < A_count, i32((A.size(1) + i64(64) - i64(1)) / i64(64)), 0)) {
// CHECK: bulk_copy(As + it % 3 * 8192 <- tensor_map0[i32(i64(by * 128) + A_first), it * 64], barriers[it % 3])
// CHECK: if (i64(by * 128) < A_count) {
// CHECK-NEXT: fill(acc, 0.0f)
// CHECK: for it.1 in serial(0, select(i64(by * 128) < A_count,
// CHECK-NEXT: var k: i32 = it.1
// CHECK-NEXT: mbarrier_wait(barriers[it.1 % 3], parity it.1 / 3 % 2)
// CHECK-NEXT: if (i64(by * 128) < i64(0) || i64(by * 128) + i64(128) > A_count) {
// CHECK-NEXT: for zi in parallel(0, 128) {
// CHECK-NEXT: for zj in parallel(0, 64) {
// CHECK-NEXT: if (i64(by * 128) + i64(zi) < i64(0) || i64(by * 128) + i64(zi) >= A_count) {
// CHECK-NEXT: As[it.1 % 3, zi, zj] = bf16(0.0)
// CHECK: proxy_fence_async_shared()
// CHECK-NEXT: barrier()
// CHECK: if (i64(by * 128) < A_count) {
// CHECK-NEXT: copy(acc, Ce[
// REMARKS-DAG: producer-views.cpp:[[# @LINE + 79]]:5: remark: [cuda:sm_90a] pipelined loop not warp-specialized: it is inside an `if` that declares 'shift' before it from memory or from a variable the kernel assigns (declare it before the `if`)
// REMARKS-DAG: producer-views.cpp:[[# @LINE + 108]]:5: remark: [cuda:sm_90a] copy into 'Cg' by bulk tensor stores (TMA, 2 boxes of 64x64) from shared 'Cg_tile'
// REQUIRES: nvcc
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-cache=%t/cache \
// RUN:   -fplugin-arg-tile-emit-source=%t %s -o %t/a.o
// RUN: FileCheck %s --check-prefix=SRC < %t/producer-views.cu
// SRC: tile_cuda::bulk_tensor_load<2>(As + it % 3 * 8192, &tensor_map0, barriers + it % 3, {it * 64, (int32_t)((int64_t)(by * 128) + A_first)});

#include <tile/tile.h>
namespace T = tile;

[[tile::kernel]] void grouped(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 3> W,
                              T::tensor<const int, 1> Offsets, T::tensor<T::bf16, 2> C, int max_rows) {
  auto [bx, by, e] = T::grid(T::ceildiv(W.size(2), 128), T::ceildiv(max_rows, 128), W.size(0));
  auto Ae = A.rows(Offsets(e), Offsets(e + 1));
  auto Ce = C.rows(Offsets(e), Offsets(e + 1));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  if (by * 128 < Ae.size(0)) {
    T::clear(acc);
    for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(3))) {
      T::copy(Ae.at(by * 128, k * 64), As);
      T::copy(W.at(e, T::slice(k * 64), T::slice(bx * 128)), Bs);
      T::gemm(As, Bs, acc);
    }
    T::copy(acc, Ce.at(by * 128, bx * 128));
  }
}

[[tile::kernel]] void view_of_view(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B,
                                   T::tensor<const int, 1> Offsets, T::tensor<float, 2> C) {
  auto [bx, by] = T::grid(T::ceildiv(B.size(1), 128), 4);
  auto Ae = A.rows(Offsets(0), Offsets(1));
  auto Av = Ae.rows(Offsets(2), Offsets(3));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(3))) {
    T::copy(Av.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

[[tile::kernel]] void assigned_condition(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B,
                                         T::tensor<float, 2> C, int n) {
  auto [bx, by] = T::grid(T::ceildiv(B.size(1), 128), T::ceildiv(A.size(0), 128));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  if (bx == 0)
    n = 0;
  if (by < n) {
    T::clear(acc);
    for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(3))) {
      T::copy(A.at(by * 128, k * 64), As);
      T::copy(B.at(k * 64, bx * 128), Bs);
      T::gemm(As, Bs, acc);
    }
    T::copy(acc, C.at(by * 128, bx * 128));
  }
}

// A declaration in the `if` before the loop that reads a variable the `if` assigns first
// cannot move before the `if`.
[[tile::kernel]] void assigned_before(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B,
                                      T::tensor<float, 2> C, int n) {
  auto [bx, by] = T::grid(T::ceildiv(B.size(1), 128), T::ceildiv(A.size(0), 64));
  T::shared<T::bf16, 64, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 64, 128> acc;
  int off = 1;
  if (by * 64 < n) {
    off = 7;
    const int shift = off * 2;
    T::clear(acc);
    for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(3))) {
      T::copy(A.at(by * 64, k * 64), As);
      T::copy(B.at(k * 64, bx * 128), Bs);
      T::gemm(As, Bs, acc);
    }
    for (auto [i, j] : T::parallel(64, 128))
      acc(i, j) = acc(i, j) + float(shift);
    T::copy(acc, C.at(by * 64, bx * 128));
  }
}

// Statements after the loop in the `if`, each under the condition of its own: the epilogue's
// copy into a view is a bulk store where its tile lies in the view.
[[tile::kernel]] void epilogue_after(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B,
                                     T::tensor<const int, 1> Offsets, T::tensor<T::bf16, 2> C) {
  auto [bx, by, g] = T::grid(T::ceildiv(B.size(1), 128), 8, Offsets.size(0) - 1);
  auto Ag = A.rows(Offsets(g), Offsets(g + 1));
  auto Cg = C.rows(Offsets(g), Offsets(g + 1));
  T::shared<T::bf16, 64, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 64, 128> acc;
  if (by * 64 < Ag.size(0)) {
    T::clear(acc);
    for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(3))) {
      T::copy(Ag.at(by * 64, k * 64), As);
      T::copy(B.at(k * 64, bx * 128), Bs);
      T::gemm(As, Bs, acc);
    }
    for (auto [i, j] : T::parallel(64, 128))
      acc(i, j) = T::max(acc(i, j), 0.0f);
    T::copy(acc, Cg.at(by * 64, bx * 128));
  }
}
