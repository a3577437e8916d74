// CPU codegen snapshots: one extern "C" entry per kernel that runs one block; tensor
// parameters unpacked into pointers, sizes and strides; buffers as aligned arrays;
// innermost parallel loops marked `omp simd`; gemm through the device header library;
// atomics, print and device_assert through the runtime's context. The second RUN builds
// and runs the same file, so the snapshot is of code that works.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-print-after=codegen %s 2>&1 | FileCheck %s
// RUN: %tile-cxx -O2 %s -o %t && %t | FileCheck %s --check-prefix=EXEC

#include <tile/tile.h>
#include <cstdio>
#include <vector>
namespace T = tile;

// CHECK: #include "tile_cpu.h"
// CHECK-LABEL: // mm<32, 16, 8> ({{.*}}codegen.cpp:18)
// CHECK-NEXT: extern "C" void tile_cpu__Z2mmILi32ELi16ELi8EE{{[A-Za-z0-9_]+}}(const tile_cpu::kernel_arg *args, int64_t block, const int64_t *grid, tile_cpu::context *ctx) {
template <int BM, int BN, int BK>
[[tile::kernel]] void mm(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C,
                         T::tensor<int, 1> cnt) {
  // CHECK-NEXT: const tile_cpu::bf16 *__restrict A = (const tile_cpu::bf16 *)args[0].data;
  // CHECK-NEXT: const int64_t A_size0 = args[0].sizes[0];
  // CHECK: const int64_t A_stride1 = args[0].strides[1];
  // CHECK: float *__restrict C = (float *)args[2].data;
  // CHECK: const tile_cpu::block3 blk = tile_cpu::block_index(block, grid, 0);
  // CHECK-NEXT: const int32_t bx = (int32_t)blk.x;
  // CHECK-NEXT: const int32_t by = (int32_t)blk.y;
  // CHECK-NEXT: int32_t K = (int32_t)A_size1;
  const int K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), BN), T::ceildiv(C.size(0), BM));
  // CHECK-NEXT: alignas(64) tile_cpu::bf16 As[32 * 8];
  // CHECK-NEXT: alignas(64) tile_cpu::bf16 Bs[16 * 8];
  // CHECK-NEXT: alignas(64) float acc[32 * 16];
  T::shared<T::bf16, BM, BK> As;
  T::shared<T::bf16, BN, BK> Bs;
  T::fragment<float, BM, BN> acc;
  // CHECK-NEXT: for (int32_t i = 0; i < 32; ++i) {
  // CHECK-NEXT: #pragma omp simd
  // CHECK-NEXT: for (int32_t j = 0; j < 16; ++j) {
  // CHECK-NEXT: acc[i * 16 + j] = 0.0f;
  T::clear(acc);
  // A copy tests once whether its tile lies inside the tensor: a plain loop if so, a loop
  // with bounds checks if not.
  // CHECK: for (int32_t k = 0; k < (K + 8 - 1) / 8; ++k) {
  // CHECK-NEXT: if ((int64_t)by * 32l + 32l <= A_size0 && (int64_t)k * 8l + 8l <= A_size1) {
  // CHECK: As[i_1 * 8 + j_1] = A[((int64_t)by * 32l + (int64_t)i_1) * A_stride0 + ((int64_t)k * 8l + (int64_t)j_1) * A_stride1];
  // CHECK: } else {
  // CHECK: As[i_2 * 8 + j_2] = ((int64_t)by * 32l + (int64_t)i_2 < A_size0 && (int64_t)k * 8l + (int64_t)j_2 < A_size1 ? A[((int64_t)by * 32l + (int64_t)i_2) * A_stride0 + ((int64_t)k * 8l + (int64_t)j_2) * A_stride1] : (tile_cpu::bf16)0.0f);
  // CHECK: tile_cpu::gemm<32, 16, 8, false, true>(As, 8, Bs, 8, acc, 16);
  for (int k : T::pipelined(T::ceildiv(K, BK), T::stages(2))) {
    T::copy(A.at(by * BM, k * BK), As);
    T::copy(B.at(bx * BN, k * BK), Bs);
    T::gemm(As, Bs, acc, {.transpose_b = true});
  }
  // CHECK: tile_cpu::atomic_add(&cnt[0l], 1);
  T::atomic_add(cnt(0), 1);
  // CHECK: if (bx == 0 && by == 0) {
  // CHECK-NEXT: printf("[block %lld,%lld,%lld] k %d\n", (long long)blk.x, (long long)blk.y, (long long)blk.z, (int)K);
  if (bx == 0 && by == 0)
    T::print("k", K);
  // CHECK: if (!(K > 0)) {
  // CHECK-NEXT: ctx->fail(ctx, "K positive ({{.*}}codegen.cpp:[[@LINE+2]])");
  // CHECK-NEXT: return;
  T::device_assert(K > 0, "K positive");
  // CHECK: if ((int64_t)by * 32l + 32l <= C_size0 && (int64_t)bx * 16l + 16l <= C_size1) {
  // CHECK: C[((int64_t)by * 32l + (int64_t)i_5) * C_stride0 + ((int64_t)bx * 16l + (int64_t)j_5) * C_stride1] = acc[i_5 * 16 + j_5];
  // CHECK: } else {
  // CHECK: if ((int64_t)by * 32l + (int64_t)i_6 < C_size0) {
  // CHECK-NEXT: #pragma omp simd
  // CHECK-NEXT: for (int32_t j_6 = 0; j_6 < 16; ++j_6) {
  // CHECK-NEXT: if ((int64_t)bx * 16l + (int64_t)j_6 < C_size1) {
  // CHECK-NEXT: C[((int64_t)by * 32l + (int64_t)i_6) * C_stride0 + ((int64_t)bx * 16l + (int64_t)j_6) * C_stride1] = acc[i_6 * 16 + j_6];
  T::copy(acc, C.at(by * BM, bx * BN));
}

// EXEC: [block 0,0,0] k 21
// EXEC-NEXT: blocks 4 c[0] 21 c[last] 21
int main() {
  const int M = 37, N = 19, K = 21; // none divides a tile
  T::array<T::bf16, 2> A({M, K}), B({N, K});
  T::array<float, 2> C({M, N});
  T::array<int, 1> cnt({1});
  A.copy_from(std::vector<T::bf16>(M * K, T::bf16(1.0f)));
  B.copy_from(std::vector<T::bf16>(N * K, T::bf16(1.0f)));
  C.copy_from(std::vector<float>(M * N, -1.0f));
  cnt.copy_from(std::vector<int>{0});
  mm<32, 16, 8>(A, B, C, cnt);
  auto c = C.to_vector();
  std::printf("blocks %d c[0] %g c[last] %g\n", cnt.to_vector()[0], c[0], c[M * N - 1]);
}
