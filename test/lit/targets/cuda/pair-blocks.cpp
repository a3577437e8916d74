// pair-blocks=on, sm_90a: a warp-specialized kernel of one warpgroup whose loop copies some
// tiles that neighbouring blocks share gets each launched block running two blocks of the
// grid (2i and 2i + 1 along the dimension whose shared tiles are the most bytes), a consumer
// group each and one producer: the shared tiles are loaded once a stage, each group's own
// into stages of its own (the staged buffer has 2 S, group g's from g S), all on the stage's
// one full barrier, whose bytes count the groups that run the iteration. The empty barriers
// count both groups' consumers. Each group computes the prelude's declarations that read the
// paired block index for both blocks, so that the producer loads the most iterations of the
// two and a group with fewer hands the rest back unread; a group whose block is past the
// grid's end runs nothing else. The codegen declares the group (the thread's index / 128),
// the thread's index in its group, and the paired block index as 2i + the group; each group
// has its own barrier (4 + the group) and its own copy of the other shared buffers. Where the
// pair has fewer blocks an SM than the blocks alone, its loop gets more stages, up to the
// bytes in flight an SM of the blocks alone, where they fit.
// pair-blocks=auto (the default) pairs the blocks of a loop of one gemm, and the kernel has a
// second entry, warp-specialized without pairs, with the same tensor maps (an optional map
// one of them does not use, where only the other stores its output in bulk), which the
// manifest lists after `pair` with the blocks an SM it is built for: the runtime launches it
// where the grid's blocks fit the SMs at once.
// REQUIRES: nvcc
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-print-after=warp-specialize \
// RUN:   -fplugin-arg-tile-pair-blocks=on %s 2>&1 | FileCheck %s
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-print-after=codegen \
// RUN:   -fplugin-arg-tile-pair-blocks=on %s 2>&1 | FileCheck %s --check-prefix=CODE
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks -fplugin-arg-tile-pair-blocks=on \
// RUN:   %s -o %t.o 2> %t.remarks && FileCheck %s --check-prefix=REMARK < %t.remarks
// RUN: FileCheck %s --check-prefix=TURNS < %t.remarks
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks %s -o %t.auto.o 2> %t.auto
// RUN: FileCheck %s --check-prefix=AUTO < %t.auto
// RUN: strings %t.auto.o | FileCheck %s --check-prefix=MANIFEST
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-print-after=codegen %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=AUTO-CODE
// Off: no pairs.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks -fplugin-arg-tile-pair-blocks=off %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OFF --implicit-check-not='blocks in pairs' --implicit-check-not='not paired'
// OFF: remark: [cuda:sm_90a] 2 blocks an SM expected
// AUTO-DAG: pair-blocks.cpp:[[@LINE+67]]:3: remark: [cuda:sm_90a] blocks in pairs along the grid's x: a launched block runs blocks 2i and 2i + 1, a consumer warpgroup each, and its producer loads the tiles of 'As' once for both ('Bs' for each); launched so where the grid has more blocks than the SMs hold alone at once (2 an SM), else one by one from the kernel's entry without pairs
// AUTO-DAG: kernel 'gemm' (its entry without pairs): {{[0-9]+}} registers a thread (ptxas), no stack, no spills
// MANIFEST: kernel _Z4gemm{{[^ ]*}} tile_cuda__Z4gemm{{[^ ]*}} 384 {{[0-9]+}} t12x2,t12x2,t0x2 gemm
// MANIFEST-NEXT: tmap 0 64 128x32
// MANIFEST-NEXT: tmap 1 128 32x64
// MANIFEST-NEXT: tmap 2 128 128x32 optional
// MANIFEST-NEXT: pair 0
// MANIFEST-NEXT: unpaired tile_cuda__Z4gemm{{[^ ]*}}_unpaired 256 {{[0-9]+}} 2
// MANIFEST-NEXT: fallback tile_cuda__Z4gemm{{[^ ]*}}_fallback 128 {{[0-9]+}}
// The entry without pairs: two blocks an SM, the launch's block index; it takes the optional
// map of the paired entry's bulk store (and the mask), which it does not use.
// AUTO-CODE: __launch_bounds__(256, 2) tile_cuda__Z4gemm{{[^(]*}}_unpaired(const tile_cuda::tensor_arg A_arg, const tile_cuda::tensor_arg B_arg, const tile_cuda::tensor_arg C_arg, const __grid_constant__ tile_cuda::tensor_map tensor_map0, const __grid_constant__ tile_cuda::tensor_map tensor_map1, const __grid_constant__ tile_cuda::tensor_map tensor_map2, const int32_t maps_missing)
// AUTO-CODE-NOT: pair_group
// AUTO-CODE: const int32_t bx = (int32_t)blk.x;
// AUTO-CODE: _fallback(

#include <tile/tile.h>

namespace T = tile;
using T::bf16;

// The seed's GEMM: A's tile reads by, B's bx; both 8 KiB: the pair goes along x (the first),
// sharing A's tile.
// CHECK-LABEL: kernel gemm(
// CHECK-NEXT: threads(128) producer_threads(128) paired(bx, pair_group) blocks_per_sm(1)
// CHECK: shared As: bf16[3, 128, 32]
// CHECK-NEXT: shared Bs: bf16[6, 32, 128]
// CHECK: if (tid == 0 && pair_group == 0) {
// CHECK: mbarrier_init(barriers[s + 3], count 256)
// CHECK: if (pair_group >= 2) {
// CHECK: if (tid == 0) {
// CHECK-NEXT: var iterations_0: i32 = select(bx - (pair_group & 1) < (N + 128 - 1) / 128, max((K + 32 - 1) / 32, 0), 0)
// CHECK-NEXT: var iterations_1: i32 = select(bx - (pair_group & 1) + 1 < (N + 128 - 1) / 128, max((K + 32 - 1) / 32, 0), 0)
// CHECK-NEXT: var iterations: i32 = max(iterations_0, iterations_1)
// CHECK-NEXT: for it in serial(0, iterations) {
// CHECK: mbarrier_arrive_expect_tx(barriers[it % 3], bytes 8192 + select(it < iterations_0, 8192, 0) + select(it < iterations_1, 8192, 0))
// CHECK-NEXT: bulk_copy(As + it % 3 * 4096 <- tensor_map0[by * 128, it * 32], barriers[it % 3])
// CHECK-NEXT: if (it < iterations_0) {
// CHECK-NEXT: bulk_copy(Bs + it % 3 * 4096 <- tensor_map1[it * 32, (bx - (pair_group & 1)) * 128], barriers[it % 3])
// CHECK: if (it < iterations_1) {
// CHECK-NEXT: bulk_copy(Bs + (3 + it % 3) * 4096 <- tensor_map1[it * 32, (bx - (pair_group & 1) + 1) * 128], barriers[it % 3])
// The consumers: the group's block where it is in the grid; B's tile from the group's stages.
// CHECK: registers_up_to(232)
// CHECK: if (bx < (N + 128 - 1) / 128) {
// CHECK: gemm(As[it.1 % 3, 0 +: 128, 0 +: 32], Bs[pair_group * 3 + it.1 % 3, 0 +: 32, 0 +: 128], acc)
// CHECK: mbarrier_arrive(barriers[it.1 % 3 + 3])
// CHECK-NEXT: }
// The other group's iterations past its own, handed back unread before the epilogue.
// CHECK-NEXT: for it.2 in serial(max((K + 32 - 1) / 32, 0), iterations.1 - max((K + 32 - 1) / 32, 0)) {
// CHECK-NEXT: mbarrier_wait(barriers[it.2 % 3], parity it.2 / 3 % 2)
// CHECK-NEXT: mbarrier_arrive(barriers[it.2 % 3 + 3])
// CHECK-NEXT: }
// CHECK-NEXT: if ((maps_missing & 4) == 0) {
// A group whose block is past the grid's end hands every stage back unread.
// CHECK: copy(acc, C[by * 128 +: 128, bx * 128 +: 128])
// CHECK-NEXT: }
// CHECK-NEXT: } else {
// CHECK-NEXT: for it.3 in serial(0, iterations.1) {
// CHECK-NEXT: mbarrier_wait(barriers[it.3 % 3], parity it.3 / 3 % 2)
// CHECK-NEXT: mbarrier_arrive(barriers[it.3 % 3 + 3])
[[tile::kernel]] void gemm(T::tensor<const bf16, 2> A, T::tensor<const bf16, 2> B, T::tensor<float, 2> C) {
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(128));
  T::shared<bf16, 128, 32> As;
  T::shared<bf16, 32, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 32), T::stages(3))) {
    T::copy(A.at(by * 128, k * 32), As);
    T::copy(B.at(k * 32, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// A loop whose count reads the block index (attention's causal loop): each group computes
// both blocks' counts, the declaration they read included, for the block index of each.
// CHECK-LABEL: kernel triangle(
// CHECK-NEXT: paired(bx, pair_group)
// Alone, two blocks an SM; paired, one: twice the stages (the own tiles' twice again).
// CHECK: shared Xs: bf16[8, 64, 64]
// CHECK-NEXT: shared Ws: bf16[4, 64, 128]
// CHECK: var steps_0: i32 = min((K + 64 - 1) / 64, bx - (pair_group & 1) + 1)
// CHECK-NEXT: var iterations_0: i32 = select(bx - (pair_group & 1) < (M + 64 - 1) / 64, max(steps_0, 0), 0)
// CHECK-NEXT: var steps_1: i32 = min((K + 64 - 1) / 64, bx - (pair_group & 1) + 1 + 1)
// CHECK-NEXT: var iterations_1: i32 = select(bx - (pair_group & 1) + 1 < (M + 64 - 1) / 64, max(steps_1, 0), 0)
// The consumers' own loop runs the block's own count.
// CHECK: for it.1 in serial(0, steps) {
// CHECK: for it.2 in serial(max(steps, 0), iterations.1 - max(steps, 0)) {
[[tile::kernel]] void triangle(T::tensor<const bf16, 2> X, T::tensor<const bf16, 2> W, T::tensor<float, 2> Y) {
  const int M = X.size(0), K = X.size(1);
  auto [bx] = T::grid(T::ceildiv(M, 64), T::threads(128));
  const int steps = T::min(T::ceildiv(K, 64), bx + 1);
  T::shared<bf16, 64, 64> Xs;
  T::shared<bf16, 64, 128> Ws;
  T::fragment<float, 64, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(steps, T::stages(2))) {
    T::copy(X.at(bx * 64, k * 64), Xs);
    T::copy(W.at(k * 64, 0), Ws);
    T::gemm(Xs, Ws, acc);
  }
  T::copy(acc, Y.at(bx * 64, 0));
}

// REMARK: pair-blocks.cpp:[[@LINE-38]]:3: remark: [cuda:sm_90a] blocks in pairs along the grid's x: a launched block runs blocks 2i and 2i + 1, a consumer warpgroup each, and its producer loads the tiles of 'As' once for both ('Bs' for each)
// REMARK: pair-blocks.cpp:[[@LINE-9]]:3: remark: [cuda:sm_90a] blocks in pairs along the grid's x: a launched block runs blocks 2i and 2i + 1, a consumer warpgroup each, and its producer loads the tiles of 'Ws' once for both ('Xs' for each); 4 stages instead of 2, for the bytes in flight of the blocks alone
// Every tile reads both block indices: nothing to share.
// REMARK: pair-blocks.cpp:[[@LINE+8]]:3: remark: [cuda:sm_90a] blocks not paired: no dimension of the grid has neighbouring blocks that copy the same tiles in the loop
[[tile::kernel]] void diagonal(T::tensor<const bf16, 2> A, T::tensor<const bf16, 2> B, T::tensor<float, 2> C) {
  const int N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(N, 128), T::threads(128));
  T::shared<bf16, 128, 64> As;
  T::shared<bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(4, T::stages(2))) {
    T::copy(A.at(by * 128, (bx + by) * 64 + k * 16), As);
    T::copy(B.at((bx + by) * 64 + k * 16, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// Two warpgroups of the kernel's own.
// REMARK: pair-blocks.cpp:[[@LINE+8]]:3: remark: [cuda:sm_90a] blocks not paired: the kernel has 256 threads (a pair takes a warpgroup for each block)
[[tile::kernel]] void wide(T::tensor<const bf16, 2> A, T::tensor<const bf16, 2> B, T::tensor<float, 2> C) {
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(256));
  T::shared<bf16, 128, 64> As;
  T::shared<bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// The pair's shared memory: 4 stages of 48 KiB tiles, the own ones twice.
// REMARK: pair-blocks.cpp:[[@LINE+8]]:3: remark: [cuda:sm_90a] blocks not paired: the pair's shared memory, about {{[0-9]+}} bytes, is more than a block may have (232448)
[[tile::kernel]] void big(T::tensor<const bf16, 2> A, T::tensor<const bf16, 2> B, T::tensor<float, 2> C) {
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(128));
  T::shared<bf16, 128, 64> As;
  T::shared<bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(6))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// REMARK: kernel 'gemm': {{[0-9]+}} registers a thread (ptxas), no stack, no spills

// The codegen: the group, the thread's index in it, the paired block index; the own copy of
// the epilogue's tile; each group's barrier.
// CODE-LABEL: __launch_bounds__(384, 1) tile_cuda__Z4gemm
// CODE: const int32_t pair_group = (int32_t)threadIdx.x / 128;
// CODE-NEXT: const int32_t tid = (int32_t)threadIdx.x % 128;
// CODE: const int32_t bx = (int32_t)(2 * blk.x + (pair_group & 1));
// CODE-NEXT: const int32_t by = (int32_t)blk.y;
// CODE: C_tile = reinterpret_cast<float *>(tile_smem + {{[0-9]+}} + (pair_group & 1) * 65536);
// CODE: tile_cuda::named_barrier_sync<128>(4 + pair_group);

// Two gemms with work between them (attention's): the pair's two groups take turns at the
// tensor cores, and a group with fewer iterations takes its turns in the iterations it hands
// back unread, so that each turn's barrier sees both groups' iterations alike.
// CHECK-LABEL: kernel attention(
// CHECK-NEXT: paired(bx, pair_group)
// CHECK: if (pair_group == 1) {
// CHECK-NEXT: named_barrier_arrive(2, 256 threads)
// CHECK: named_barrier_sync(2 + pair_group, 256 threads)
// CHECK: for it.2 in serial(max(blocks, 0), iterations.1 - max(blocks, 0)) {
// CHECK-NEXT: mbarrier_wait(barriers[it.2 % 6], parity it.2 / 6 % 2)
// CHECK-NEXT: if (it.2 == 0) {
// CHECK-NEXT: named_barrier_sync(2 + pair_group, 256 threads)
// CHECK-NEXT: }
// CHECK-NEXT: named_barrier_arrive(3 - pair_group, 256 threads)
// CHECK-NEXT: named_barrier_sync(2 + pair_group, 256 threads)
// CHECK-NEXT: mbarrier_arrive(barriers[it.2 % 6 + 6])
// CHECK-NEXT: }
// CHECK-NEXT: if (iterations.1 > 0) {
// CHECK-NEXT: named_barrier_arrive(3 - pair_group, 256 threads)
// CHECK: copy(acc, O[bx * 64 +: 64, 0 +: 64])
// CHECK-NEXT: }
// CHECK-NEXT: } else {
// CHECK-NEXT: for it.3 in serial(0, iterations.1) {
// CHECK: if (iterations.1 > 0) {
// CHECK-NEXT: named_barrier_arrive(3 - pair_group, 256 threads)
// CHECK: if (pair_group == 0) {
// CHECK-NEXT: named_barrier_sync(2, 256 threads)
// TURNS: pair-blocks.cpp:[[@LINE+24]]:5: remark: [cuda:sm_90a] warpgroups take turns at the tensor cores (ping-pong): each one's gemms run while the other runs the 5 statements between them
// TURNS: pair-blocks.cpp:[[@LINE+12]]:3: remark: [cuda:sm_90a] blocks in pairs along the grid's x: a launched block runs blocks 2i and 2i + 1, a consumer warpgroup each, and its producer loads the tiles of 'Ks', 'Vs' once for both; 6 stages instead of 2, for the bytes in flight of the blocks alone
[[tile::kernel]] void attention(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K, T::tensor<const bf16, 2> V,
                                T::tensor<bf16, 2> O) {
  const int S = Q.size(0);
  auto [bx] = T::grid(T::ceildiv(S, 64), T::threads(128));
  const int blocks = T::min(T::ceildiv(S, 64), bx + 1);
  T::shared<bf16, 64, 64> Qs, Ks, Vs;
  T::fragment<float, 64, 64> s, acc;
  T::fragment<bf16, 64, 64> p;
  T::fragment<float, 64> m, sum;
  T::copy(Q.at(bx * 64, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(blocks, T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true});
    T::reduce_max(s, m, 1);
    for (auto [i, j] : T::parallel(64, 64))
      s(i, j) = T::exp2(s(i, j) - m(i));
    T::reduce_sum(s, sum, 1);
    for (auto [i, j] : T::parallel(64, 64))
      s(i, j) = s(i, j) / sum(i);
    T::copy(s, p);
    T::gemm(p, Vs, acc);
  }
  T::copy(acc, O.at(bx * 64, 0));
}
