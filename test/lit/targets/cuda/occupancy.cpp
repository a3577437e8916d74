// The schedule a user does not write, on sm_90a: kernels whose tiles leave an SM
// under-occupied (one consumer warpgroup of 128 x 128 or 64 x 64 tiles) get the blocks an SM
// their shared memory and their consumers' registers allow (launch bounds, and setmaxnreg's
// split of that many blocks' registers), with a remark saying how many and what keeps one
// more out; a GEMM's blocks go in panels of 8 rows unless the kernel says otherwise
// (use_swizzle). ptxas spills nothing and keeps every wgmma asynchronous (pair-blocks=off: pairs are pair-blocks.cpp's).
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fsyntax-only -std=c++20 -I%S/../../../../examples -fplugin-arg-tile-targets=cuda:sm_90a \
// RUN:   -fplugin-arg-tile-remarks %s 2>&1 | FileCheck %s --check-prefix=REMARKS
// REMARKS-DAG: occupancy.cpp:59:3: remark: [cuda:sm_90a] blocks in panels of 8 rows of the grid, which share their tiles of 'A', 'B' in L2 (T::use_swizzle(1) keeps the launch's order)
// REMARKS-DAG: occupancy.cpp:59:3: remark: [cuda:sm_90a] 2 blocks an SM expected (3 would need 257028 bytes of shared memory at most, of the SM's 233472): 128 registers a thread at launch, the consumers' 216 for about 168 a consumer needs
// REMARKS-DAG: occupancy.cpp:59:3: remark: [cuda:sm_90a] pipelined loop: 3 stages, the copies into 'As', 'Bs' are bulk tensor copies (TMA, 64- and 128-byte swizzles) by a producer warpgroup of 128 threads (40 registers each); the 128 consumer threads take 216 registers each and hand stages back through mbarriers
// Attention's default tiles: two blocks an SM at head_dim 128 (shared memory keeps out a
// third), three at 64 (registers keep out a fourth; S and P are not live at once).
// REMARKS-DAG: remark: [cuda:sm_90a] 2 blocks an SM expected (3 would need 310737 bytes of shared memory at most, of the SM's 233472): 128 registers a thread at launch, the consumers' 216 for about 144 a consumer needs
// REMARKS-DAG: remark: [cuda:sm_90a] 3 blocks an SM expected (4 would leave the consumers 88 registers a thread, of about 112 they need): 80 registers a thread at launch, the consumers' 120 for about 112 a consumer needs
// The kernel that keeps the launch's order gets no panels; its f32 output's shared tile for
// bulk stores (64 KiB) would leave room for one block an SM, so it is stored by the
// consumer threads and two blocks run (three would leave too few registers at launch for
// ptxas to compile its m64n128 instruction).
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fsyntax-only -std=c++20 -I%S/../../../../examples -fplugin-arg-tile-targets=cuda:sm_90a \
// RUN:   -fplugin-arg-tile-remarks %s 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: occupancy.cpp:84:3: remark: [cuda:sm_90a] copy into 'C' not a bulk tensor store: its shared tile of 65536 bytes would leave room for 1 block an SM, not 2
// ORDER-NOT: occupancy.cpp:79:3: remark: [cuda:sm_90a] blocks in panels
// ORDER: occupancy.cpp:79:3: remark: [cuda:sm_90a] 2 blocks an SM expected (3 would leave 80 registers a thread at launch, of the 96 its largest gemm instruction takes)
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fsyntax-only -std=c++20 -I%S/../../../../examples -fplugin-arg-tile-targets=cuda:sm_90a \
// RUN:   -fplugin-arg-tile-print-after=warp-specialize,codegen %s 2>&1 | FileCheck %s
// CHECK-LABEL: IR after warp-specialize
// CHECK: kernel matmul_relu<128, 128, 32>(
// CHECK-NEXT: threads(128) producer_threads(128) blocks_per_sm(2) swizzle(8) tensor_map0(A, box 128x32, swizzle 64) tensor_map1(B, box 32x64, swizzle 128)
// CHECK: gemm(As[it.1 % 3, 0 +: 128, 0 +: 32], Bs[it.1 % 3, 0 +: 32, 0 +: 128], acc) on wgmma.m64nNk16.bf16
// CHECK-NEXT: mbarrier_arrive(barriers[it.1 % 3 + 3])
// CHECK-LABEL: source after codegen
// CHECK: __launch_bounds__(256, 2) tile_cuda_{{.*}}matmul_relu{{.*}}(
// CHECK: tile_cuda::setmaxnreg_dec<40>();
// CHECK: tile_cuda::setmaxnreg_inc<216>();
// CHECK: tile_cuda::gmma_desc({{.*}}, 16, 512, 2)
// REQUIRES: nvcc
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -c -std=c++20 -I%S/../../../../examples -fplugin-arg-tile-targets=cuda:sm_90a \
// RUN:   -fplugin-arg-tile-remarks %s -o %t/a.o 2> %t/remarks.txt
// RUN: FileCheck %s --check-prefix=PTXAS --implicit-check-not='ptxas: (' --implicit-check-not=spills: \
// RUN:   --implicit-check-not='bytes of stack' < %t/remarks.txt
// PTXAS-COUNT-8: registers a thread (ptxas), no stack, no spills
// PTXAS-NOT: registers a thread (ptxas)

#include "flash_attention.h"

namespace T = tile;

// The language reference's first kernel: 128 x 128 tiles, K steps of 32, 128 threads.
template <int BM = 128, int BN = 128, int BK = 32>
[[tile::kernel]] void matmul_relu(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<T::bf16, 2> C) {
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM), T::threads(128));
  T::shared<T::bf16, BM, BK> As;
  T::shared<T::bf16, BK, BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, BK), T::stages(3))) {
    T::copy(A.at(by * BM, k * BK), As);
    T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(As, Bs, acc);
  }
  for (auto [i, j] : T::parallel(BM, BN))
    acc(i, j) = T::max(acc(i, j), 0.0f);
  T::copy(acc, C.at(by * BM, bx * BN));
}
template void matmul_relu<>(T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>, T::tensor<T::bf16, 2>);

// The same with its blocks in the launch's order, f16 and a transposed B (K-major: the
// 64-byte swizzle for both operands).
[[tile::kernel]] void in_order(T::tensor<const T::f16, 2> A, T::tensor<const T::f16, 2> B, T::tensor<float, 2> C) {
  const int M = A.size(0), K = A.size(1), N = B.size(0);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(128));
  T::use_swizzle(1);
  T::shared<T::f16, 128, 32> As, Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 32), T::stages(3))) {
    T::copy(A.at(by * 128, k * 32), As);
    T::copy(B.at(bx * 128, k * 32), Bs);
    T::gemm(As, Bs, acc, {.transpose_b = true});
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

template void flash::flash_attention<128, false>(T::tensor<const T::bf16, 4>, T::tensor<const T::bf16, 4>,
                                                 T::tensor<const T::bf16, 4>, T::tensor<T::bf16, 4>, float);
template void flash::flash_attention<64, true>(T::tensor<const T::bf16, 4>, T::tensor<const T::bf16, 4>,
                                               T::tensor<const T::bf16, 4>, T::tensor<T::bf16, 4>, float);
