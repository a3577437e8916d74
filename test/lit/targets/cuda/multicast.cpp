// multicast=on, sm_90a: a warp-specialized loop whose copies two neighbouring
// blocks make alike gets its blocks launched in clusters of two along x. The kernel tests at
// run time which tiles the two share (`shares_T`: their coordinates and the loop's bounds
// read only the block indices on which the two blocks agree, through panels too) and loads
// half of each such tile in each block for both (TMA multicast): the halves are the tile's
// boxes where they are even in number, else its rows (a tensor map of half the rows). Where
// any tile is shared (`pair_shares`), each stage's empty barrier counts both blocks'
// consumers, each consumer warp hands the stage back to the other block's producer too (for
// the iterations it waits for), and a barrier of the whole cluster follows the mbarriers'
// initialization. Tiles that every pair reads differently, loops whose bounds differ
// between neighbours and multicast=off (the default) keep the blocks one by one.
// REQUIRES: nvcc
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-print-after=warp-specialize \
// RUN:   -fplugin-arg-tile-multicast=on -fplugin-arg-tile-bulk-store=off %s 2>&1 | FileCheck %s
//
// A GEMM in panels (the default for a GEMM without use_swizzle): neighbours share B's tile
// (one column) within a panel, A's where a short panel pairs blocks of one row. B's two
// 128-byte boxes are split between the two blocks; A's one box of 128 rows by half rows.
// CHECK-LABEL: kernel gemm(
// CHECK-NEXT: {{.*}} swizzle(8) tensor_map0(A, box 128x32, swizzle 64) tensor_map1(B, box 32x64, swizzle 128) tensor_map2(A, box 64x32, swizzle 64) cluster(2: cluster_rank of cluster_blocks, partner bx_partner by_partner)
// CHECK: var shares_As: bool = cluster_blocks == 2 && by_partner == by
// CHECK-NEXT: var shares_Bs: bool = cluster_blocks == 2 && bx_partner == bx
// CHECK-NEXT: var pair_shares: bool = shares_As || shares_Bs
// CHECK: mbarrier_init(barriers[s + 3], count select(pair_shares, 256, 128))
// CHECK: barrier(whole cluster)
// CHECK: mbarrier_arrive_expect_tx(barriers[it % 3], bytes 16384)
// CHECK-NEXT: if (shares_As) {
// CHECK-NEXT:   bulk_copy(As + {{.*}} <- tensor_map2[by * 128 + cluster_rank * 64, it * 32], barriers[it % 3], to blocks 3)
// CHECK-NEXT: } else {
// CHECK-NEXT:   bulk_copy(As + it % 3 * 4096 <- tensor_map0[by * 128, it * 32], barriers[it % 3])
// CHECK-NEXT: }
// CHECK-NEXT: if (shares_Bs) {
// CHECK-NEXT:   bulk_copy(Bs + {{.*}} <- tensor_map1[it * 32, bx * 128 + cluster_rank * 64], barriers[it % 3], to blocks 3)
// CHECK-NEXT: } else {
// CHECK-NEXT:   bulk_copy(Bs + it % 3 * 4096 <- tensor_map1[it * 32, bx * 128], barriers[it % 3])
// CHECK-NEXT:   bulk_copy(Bs + it % 3 * 4096 + 2048 <- tensor_map1[it * 32, bx * 128 + 64], barriers[it % 3])
// CHECK-NEXT: }
// The consumers hand each stage back to their own producer, and to the other block's for the
// iterations it waits for (all but the last 3).
// CHECK: mbarrier_arrive(barriers[it.1 % 3 + 3])
// CHECK-NEXT: if (pair_shares && it.1 + 3 < (K + 32 - 1) / 32) {
// CHECK-NEXT:   mbarrier_arrive_warp(barriers[it.1 % 3 + 3], of block 1 - cluster_rank)
// CHECK-NEXT: }
//
// Without panels (use_swizzle(1)) neighbours differ in bx: only A's tile, which does not
// read it, is shared; B's is every block's own.
// CHECK-LABEL: kernel gemm_launch_order(
// CHECK-NEXT: {{.*}} cluster(2:
// CHECK: var shares_As: bool = cluster_blocks == 2 && by_partner == by
// CHECK-NOT: shares_Bs
// CHECK: var pair_shares: bool = shares_As
// CHECK-NOT: to blocks
// CHECK: bulk_copy(As + {{.*}}, to blocks 3)
// CHECK-NOT: to blocks
// CHECK: registers_up_to(
//
// A one-dimensional grid: X's tile reads bx, W's no block index (always shared), the bias's
// one row (512 bytes in one box) does not halve.
// CHECK-LABEL: kernel narrow(
// CHECK-NOT: shares_Xs
// CHECK: var shares_Ws: bool = cluster_blocks == 2
// CHECK-NEXT: var pair_shares: bool = shares_Ws
// CHECK: registers_up_to(
//
// Attention with causal bounds: the key blocks a query block reads depend on bx, so no two
// neighbours run the same iterations: no cluster.
// CHECK-LABEL: kernel causal(
// CHECK-NOT: cluster(
// CHECK-NOT: shares_
// CHECK: barrier(whole block)
//
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-print-after=warp-specialize \
// RUN:   -fplugin-arg-tile-multicast=off %s 2>&1 | FileCheck %s --check-prefix=OFF --implicit-check-not=cluster
// OFF-LABEL: kernel gemm(
// OFF: barrier(whole block)
//
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks -fplugin-arg-tile-bulk-store=off -fplugin-arg-tile-multicast=on \
// RUN:   %s 2>&1 | FileCheck %s --check-prefix=REMARKS
// REMARKS: multicast.cpp:[[@LINE+37]]:3: remark: [cuda:sm_90a] clusters of 2 blocks along the grid's x: where two neighbours copy the same tile of 'As', 'Bs', each loads half of it for both (TMA multicast), and each hands its stages back to both producers
//
// The generated CUDA: the block's place in its cluster, multicast loads, the cluster's
// barrier and the warps' arrivals on the other block's barriers; the manifest asks for
// clusters of 2; nvcc compiles it.
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-bulk-store=off -fplugin-arg-tile-multicast=on \
// RUN:   -fplugin-arg-tile-emit-source=%t %s -o %t/m.o
// RUN: FileCheck %s --check-prefix=SRC < %t/multicast.cu
// SRC: const tile_cuda::cluster_place cluster = tile_cuda::cluster_place_of(8);
// SRC-NEXT: const int32_t cluster_rank = cluster.rank;
// SRC-NEXT: const int32_t cluster_blocks = cluster.blocks;
// SRC-NEXT: const int32_t bx_partner = (int32_t)cluster.partner.x;
// SRC-NEXT: const int32_t by_partner = (int32_t)cluster.partner.y;
// SRC: tile_cuda::cluster_sync();
// SRC: tile_cuda::bulk_tensor_load_multicast<2>(As + {{.*}}, &tensor_map2, barriers + it % 3, {it * 32, by * 128 + cluster_rank * 64}, 3);
// SRC: tile_cuda::mbarrier_arrive_cluster_warp(barriers + (it_1 % 3 + 3), 1 - cluster_rank);
// RUN: strings %t/m.o | FileCheck %s --check-prefix=MANIFEST
// MANIFEST: kernel {{.*}}gemm{{[^ ]*}} tile_cuda_{{[^ ]*}} 256 {{[0-9]+}} {{[^ ]+}} gemm
// MANIFEST-NEXT: tmap 0 64 128x32
// MANIFEST-NEXT: tmap 1 128 32x64
// MANIFEST-NEXT: tmap 0 64 64x32
// MANIFEST-NEXT: cluster 2
// MANIFEST-NEXT: fallback
// (The plugin's build above compiled it with nvcc: the image is in the object.)

#include <tile/tile.h>
namespace T = tile;

// The seed's GEMM: 128 x 128 x 32 tiles, 128 threads, 3 stages.
[[tile::kernel]] void gemm(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(128));
  T::shared<T::bf16, 128, 32> As;
  T::shared<T::bf16, 32, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 32), T::stages(3))) {
    T::copy(A.at(by * 128, k * 32), As);
    T::copy(B.at(k * 32, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

[[tile::kernel]] void gemm_launch_order(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B,
                                        T::tensor<float, 2> C) {
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(128));
  T::use_swizzle(1);
  T::shared<T::bf16, 128, 32> As;
  T::shared<T::bf16, 32, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 32), T::stages(3))) {
    T::copy(A.at(by * 128, k * 32), As);
    T::copy(B.at(k * 32, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// X's tiles are each block's own (a one-dimensional grid); W's every block's (its two boxes
// split between the two); the bias's one row cannot be halved.
[[tile::kernel]] void narrow(T::tensor<const T::bf16, 2> X, T::tensor<const T::bf16, 2> W,
                             T::tensor<const float, 2> Bias, T::tensor<float, 2> Y) {
  const int M = X.size(0), K = X.size(1);
  auto [bx] = T::grid(T::ceildiv(M, 64), T::threads(128));
  T::shared<T::bf16, 64, 64> Xs;
  T::shared<T::bf16, 64, 128> Ws;
  T::shared<float, 128> bs;
  T::fragment<float, 64, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(2))) {
    T::copy(X.at(bx * 64, k * 64), Xs);
    T::copy(W.at(k * 64, 0), Ws);
    T::copy(Bias.at(k, 0), bs);
    T::gemm(Xs, Ws, acc);
    for (auto [i, j] : T::parallel(64, 128))
      acc(i, j) = acc(i, j) + bs(j);
  }
  T::copy(acc, Y.at(bx * 64, 0));
}

// The key blocks up to the query block's last row (causal attention's bounds).
[[tile::kernel]] void causal(T::tensor<const T::bf16, 3> Q, T::tensor<const T::bf16, 3> K, T::tensor<float, 3> O) {
  const int S = Q.size(1);
  auto [bx, by] = T::grid(T::ceildiv(S, 64), Q.size(0), T::threads(128));
  T::shared<T::bf16, 64, 64> Qs;
  T::shared<T::bf16, 64, 64> Ks;
  T::fragment<float, 64, 64> s;
  T::copy(Q.at(by, bx * 64, 0), Qs);
  T::clear(s);
  for (int j : T::pipelined(bx + 1, T::stages(2))) {
    T::copy(K.at(by, j * 64, 0), Ks);
    T::gemm(Qs, Ks, s, {.transpose_b = true});
  }
  T::copy(s, O.at(by, bx * 64, 0));
}
