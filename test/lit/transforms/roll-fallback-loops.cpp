// roll-fallback-loops: on the rare else side of a copy's tests (a tile on the tensor's
// edge, a tensor without vector accesses), a thread's Slots loop inside a loop that the
// threads run in order stays a loop (`rolled`, printed `#pragma unroll 1`) when its body
// indexes no registers by its variable. Fast sides, loops outside every in-order loop
// (a prologue), and fallbacks that fill a fragment stay unrolled.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-gemm=mma -fplugin-arg-tile-print-before=roll-fallback-loops \
// RUN:   -fplugin-arg-tile-print-after=roll-fallback-loops -fplugin-arg-tile-stop-after=roll-fallback-loops %s 2>&1 \
// RUN:   | FileCheck %s
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-gemm=mma -fplugin-arg-tile-print-after=codegen %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CUDA

#include <tile/tile.h>
namespace T = tile;

// CHECK-LABEL: IR before roll-fallback-loops
// CHECK-NOT: rolled(
// CHECK-LABEL: IR after roll-fallback-loops
// CHECK-LABEL: kernel tiles(
// The prologue's copy, outside every loop: unrolled on both sides.
// CHECK: } else (rare) {
// CHECK-NEXT: for t_r in slots(0, 4) {
// CHECK: } else (rare) {
// CHECK-NEXT: for t_r.1 in slots(0, 4) {
// The pipelined copies (prologue stages and main loop): fast sides unrolled, fallbacks rolled.
// CHECK: for stage in serial(0, 1) {
// CHECK: for t_r.2 in slots(0, 4) {
// CHECK-NEXT: async_vector_move(
// CHECK: } else (rare) {
// CHECK-NEXT: for t_r.2 in rolled(0, 4) {
// CHECK-NEXT: for v.2 in vectorized(0, 8) {
// CHECK: } else (rare) {
// CHECK-NEXT: for t_r.3 in rolled(0, 4) {
// CHECK: for it in serial(
// CHECK: for t_r.4 in slots(0, 4) {
// CHECK-NEXT: async_vector_move(
// CHECK: } else (rare) {
// CHECK-NEXT: for t_r.4 in rolled(0, 4) {
// CHECK: } else (rare) {
// CHECK-NEXT: for t_r.5 in rolled(0, 4) {
// The accumulator's store, indexed by the slots: unrolled.
// CHECK-NOT: rolled(
// CHECK-LABEL: kernel rows(
[[tile::kernel]] void tiles(T::tensor<const T::bf16, 2> A, T::tensor<T::bf16, 2> C) {
  auto [bx] = T::grid(T::ceildiv(A.size(0), 64), T::threads(128));
  T::shared<T::bf16, 64, 64> As, Bs;
  T::fragment<float, 64, 64> acc;
  T::copy(A.at(0, 0), Bs);
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(2))) {
    T::copy(A.at(bx * 64, k * 64), As);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(bx * 64, 0));
}

// Fallbacks inside a loop that fill or read a fragment (registers indexed by the slots):
// unrolled.
// CHECK: for r in serial(
// CHECK: } else (rare) {
// CHECK-NEXT: for rs in slots(0, 4) {
// CHECK: } else (rare) {
// CHECK-NEXT: for rs.1 in slots(0, 4) {
// CHECK: for rs.3 in slots(0, 4) {
// CHECK-NOT: rolled(
[[tile::kernel]] void rows(T::tensor<const T::bf16, 2> X, T::tensor<T::bf16, 2> Y) {
  auto [bx] = T::grid(1, T::threads(128));
  T::fragment<float, 64, 64> f;
  for (int r = 0; r < T::ceildiv(X.size(0), 64); ++r) {
    T::copy(X.at(r * 64, 0), f);
    T::copy(f, Y.at(r * 64, 0));
  }
}

// CUDA-LABEL: // tiles (
// CUDA: for (int32_t stage
// CUDA: for (int32_t t_r_2 = 0; t_r_2 < 4; ++t_r_2) {
// CUDA-NEXT: tile_cuda::cp_async<16>(
// CUDA: } else {
// CUDA-NEXT: #pragma unroll 1
// CUDA-NEXT: for (int32_t t_r_2 = 0; t_r_2 < 4; ++t_r_2) {
// CUDA-NEXT: #pragma unroll
// CUDA-NEXT: for (int32_t v_2 = 0; v_2 < 8; ++v_2) {
// CUDA-LABEL: // rows (
// CUDA-NOT: #pragma unroll 1
