// tile::persistent on sm_90a: warp-specialize puts the producer's and the consumers' work in
// a loop over tiles (a While statement); a block's first tile is its index in the launched
// grid, each next one the producer takes from the launch's count (publish_next_tile) and
// hands the consumers through a one-element shared slot and two more mbarriers. Each side
// counts the loop iterations of its earlier tiles (`done`), which the stages and parities
// continue from, and computes the tile's block indices (use_swizzle's panels included) and
// the declarations that read them. A copy before the loop into a tile nothing else writes
// (attention's Q) is then the producer's bulk copy on a barrier of its own, which the
// consumers wait on where the copy was and hand back after the loop.
// Epilogues here are stored by the consumer threads (bulk-store=off); bulk-store.cpp tests bulk stores.
// REQUIRES: nvcc
// RUN: %tile-cxx -fplugin-arg-tile-bulk-store=off -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-print-after=warp-specialize \
// RUN:   -fplugin-arg-tile-pingpong=off %s 2>&1 | FileCheck %s
// CHECK-LABEL: kernel p_gemm(
// CHECK: swizzle(4) tensor_map0(A, box 128x64, swizzle 128) tensor_map1(B, box 64x64, swizzle 128) persistent {
// CHECK: shared barriers: u64[8]
// CHECK-NEXT: shared next_tile: i32[1]
// CHECK: mbarrier_init(barriers[6], count 1)
// CHECK-NEXT: mbarrier_init(barriers[7], count 256)
// CHECK: var tiles: i32 = (N + 128 - 1) / 128 * ((M + 128 - 1) / 128)
// CHECK-NEXT: if (tid >= 256) {
// CHECK:      tile = first_tile()
// CHECK:      while (tile < tiles) {
// CHECK-NEXT:   var tile_xy: i32 = tile % ((N + 128 - 1) / 128 * ((M + 128 - 1) / 128))
// CHECK-NEXT:   var panel: i32 = tile_xy / (4 * ((N + 128 - 1) / 128))
// CHECK-NEXT:   var panel_offset: i32 = tile_xy % (4 * ((N + 128 - 1) / 128))
// CHECK-NEXT:   var panel_rows: i32 = min(4, (M + 128 - 1) / 128 - panel * 4)
// CHECK-NEXT:   var panel_column: i32 = panel_offset / panel_rows
// CHECK-NEXT:   var bx: i32 = select(panel % 2 == 1, (N + 128 - 1) / 128 - 1 - panel_column, panel_column)
// CHECK-NEXT:   var by: i32 = panel * 4 + panel_offset % panel_rows
// CHECK-NEXT:   for it in serial(0, (K + 64 - 1) / 64) {
// CHECK-NEXT:     if (done + it >= 3) {
// CHECK-NEXT:       mbarrier_wait(barriers[(done + it) % 3 + 3], parity ((done + it) / 3 + 1) % 2)
// CHECK:        done = done + max((K + 64 - 1) / 64, 0)
// CHECK-NEXT:   if (n > 0) {
// CHECK-NEXT:     mbarrier_wait(barriers[7], parity (n + 1) % 2)
// CHECK-NEXT:   }
// CHECK-NEXT:   tile = publish_next_tile(next_tile)
// CHECK-NEXT:   mbarrier_arrive(barriers[6])
// CHECK-NEXT:   n = n + 1
// CHECK:      registers_up_to(232)
// CHECK:      tile.1 = first_tile()
// CHECK:      while (tile.1 < tiles) {
// CHECK:          mbarrier_wait(barriers[(done.1 + it.1) % 3], parity (done.1 + it.1) / 3 % 2)
// CHECK:        copy(acc, C[by * 128 +: 128, bx * 128 +: 128])
// CHECK-NEXT:   done.1 = done.1 + max((K + 64 - 1) / 64, 0)
// CHECK-NEXT:   mbarrier_wait(barriers[6], parity n.1 % 2)
// CHECK-NEXT:   tile.1 = received_tile(next_tile)
// CHECK-NEXT:   mbarrier_arrive(barriers[7])
// CHECK-NEXT:   n.1 = n.1 + 1
//
// CHECK-LABEL: kernel p_attention<true>(
// CHECK: tensor_map2(Q, box 1x128x64, swizzle 128) persistent {
// CHECK: shared Qs: bf16[128, 64] rows of 64 swizzled 128
// CHECK: mbarrier_init(barriers[4], count 1)
// CHECK-NEXT: mbarrier_init(barriers[5], count 256)
// CHECK: while (tile < tiles) {
// CHECK:   var blocks: i32 = min((N + 64 - 1) / 64, ((bx + 1) * 128 + 64 - 1) / 64)
// CHECK-NEXT: if (n > 0) {
// CHECK-NEXT:   mbarrier_wait(barriers[5], parity (n + 1) % 2)
// CHECK-NEXT: }
// CHECK-NEXT: mbarrier_arrive_expect_tx(barriers[4], bytes 16384)
// CHECK-NEXT: bulk_copy(Qs <- tensor_map2[by, bx * 128, 0], barriers[4])
// CHECK-NEXT: for it in serial(0, blocks) {
// CHECK:      done = done + max(blocks, 0)
// CHECK:    while (tile.1 < tiles) {
// CHECK:      var blocks: i32 = min((N + 64 - 1) / 64, ((bx + 1) * 128 + 64 - 1) / 64)
// CHECK:      mbarrier_wait(barriers[4], parity n.1 % 2)
// CHECK-NEXT: fill(acc, 0.0f)
// CHECK-NEXT: for it.1 in serial(0, blocks) {
// CHECK:        gemm(Qs, Ks[(done.1 + it.1) % 2, 0 +: 64, 0 +: 64], s.1, transpose_b, clear_accum, policy=full_row)
// CHECK:      }
// CHECK-NEXT: mbarrier_arrive(barriers[5])
// CHECK-NEXT: copy(acc, O[by, bx * 128 +: 128, 0 +: 64])
//
// Not persistent: Q stays the consumers' copy (as it ran on the H200 before persistent grids).
// CHECK-LABEL: kernel p_attention<false>(
// CHECK-NEXT: tensor_map1(V, box 1x64x64, swizzle 128) {
// CHECK: shared barriers: u64[4]
// CHECK: if (tid == 256) {
// CHECK-NEXT: for it in serial(0, blocks) {
// CHECK:    registers_up_to(232)
// CHECK-NOT: while
// CHECK:    copy(Q[by, bx * 128 +: 128, 0 +: 64], Qs)
// CHECK: copy(acc, O[by, bx * 128 +: 128, 0 +: 64])
//
// pingpong=on: the two consumer warpgroups take turns at the tensor cores
// (hardware barriers 2 + w, 256 threads): warpgroup 1 grants warpgroup 0 the first turn;
// each syncs on its own turn just before iteration 0's first gemm (after any barrier the
// compiler places before the loop) and before each second gemm, and hands the turn on after
// issuing each first gemm (waited for after that) and after a loop that took one; warpgroup
// 0 takes the last grant back at the end. The GEMM's loop of one gemm takes no turns, and
// says nothing of them.
// RUN: %tile-cxx -fplugin-arg-tile-bulk-store=off -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-pingpong=on \
// RUN:   -fplugin-arg-tile-print-after=warp-specialize %s 2>&1 | FileCheck %s --check-prefix=PINGPONG
// RUN: %tile-cxx -fplugin-arg-tile-bulk-store=off -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-pingpong=on \
// RUN:   -fplugin-arg-tile-remarks %s 2>&1 | FileCheck %s --check-prefix=PINGPONG-REMARKS
// PINGPONG-REMARKS-NOT: take turns at the tensor cores: the loop's body has
// PINGPONG-REMARKS: persistent.cpp:[[@LINE+106]]:5: remark: [cuda:sm_90a] warpgroups take turns at the tensor cores (ping-pong): each one's gemms run while the other runs the statement between them
// PINGPONG-LABEL: kernel p_attention<false>(
// PINGPONG:      registers_up_to(232)
// PINGPONG-NEXT: if (tid / 128 == 1) {
// PINGPONG-NEXT:   named_barrier_arrive(2, 256 threads)
// PINGPONG-NEXT: }
// PINGPONG:      copy(Q[by, bx * 128 +: 128, 0 +: 64], Qs)
// PINGPONG-NEXT: fill(acc, 0.0f)
// PINGPONG-NEXT: for it.1 in serial(0, blocks) {
// PINGPONG-NEXT:   var kb: i32 = it.1
// PINGPONG-NEXT:   mbarrier_wait(barriers[it.1 % 2], parity it.1 / 2 % 2)
// PINGPONG-NEXT:   if (it.1 == 0) {
// PINGPONG-NEXT:     named_barrier_sync(2 + tid / 128, 256 threads)
// PINGPONG-NEXT:   }
// PINGPONG-NEXT:   gemm(Qs, Ks[it.1 % 2, 0 +: 64, 0 +: 64], s.1, transpose_b, clear_accum, deferred_wait, policy=full_row)
// PINGPONG-NEXT:   named_barrier_arrive(3 - tid / 128, 256 threads)
// PINGPONG-NEXT:   wgmma_wait(0; s.1)
// PINGPONG-NEXT:   copy(s.1, p)
// PINGPONG-NEXT:   named_barrier_sync(2 + tid / 128, 256 threads)
// PINGPONG-NEXT:   gemm(p, Vs[it.1 % 2, 0 +: 64, 0 +: 64], acc, policy=full_row)
// PINGPONG-NEXT:   mbarrier_arrive(barriers[it.1 % 2 + 2])
// PINGPONG-NEXT: }
// PINGPONG-NEXT: if (blocks > 0) {
// PINGPONG-NEXT:   named_barrier_arrive(3 - tid / 128, 256 threads)
// PINGPONG-NEXT: }
// PINGPONG-NEXT: copy(acc, O[by, bx * 128 +: 128, 0 +: 64])
// PINGPONG-NEXT: if (tid / 128 == 0) {
// PINGPONG-NEXT:   named_barrier_sync(2, 256 threads)
// PINGPONG-NEXT: }
//
// Remarks: what was made persistent, and why not where it was asked for and could not be.
// RUN: %tile-cxx -fplugin-arg-tile-bulk-store=off -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a+sm_80 -fplugin-arg-tile-remarks -DWITH_PRINT %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARKS
// REMARKS-DAG: persistent.cpp:[[@LINE+45]]:3: remark: [cuda:sm_90a] persistent grid: at most one block an SM, each taking the grid's tiles in turn (in panels of 4 rows); the producer loads a block's next tile while its consumers finish the last
// REMARKS-DAG: persistent.cpp:[[@LINE+67]]:3: remark: [cuda:sm_90a] pipelined loop: 2 stages, the copies into 'Ks', 'Vs' (and before it into 'Qs') are bulk tensor copies
// REMARKS-DAG: persistent.cpp:[[@LINE+34]]:23: remark: [cuda:sm_80] grid not persistent: the target has no bulk tensor copies and warpgroup gemms (sm_90a has)
// REMARKS-DAG: persistent.cpp:[[@LINE+80]]:23: remark: [cuda:sm_90a] grid not persistent: tile::warp_specialize(false) (a persistent grid needs the producer warpgroup)
// REMARKS-DAG: persistent.cpp:[[@LINE+94]]:23: remark: [cuda:sm_90a] grid not persistent: the kernel is not warp-specialized (a persistent grid needs the producer warpgroup)
// REMARKS-DAG: persistent.cpp:[[@LINE+108]]:3: remark: [cuda:sm_90a] grid not persistent: the kernel prints, and a print names its block by the launch's indices
//
// The generated CUDA takes the count after the tensor maps; the manifest says the grid is
// persistent (between the maps and the fallback); the PTX takes tiles by a global atomic
// add; ptxas spills nothing.
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -fplugin-arg-tile-bulk-store=off -c -fplugin-arg-tile-targets=cuda:sm_90a \
// RUN:   -fplugin-arg-tile-remarks -fplugin-arg-tile-emit-source=%t %s -o %t/p.o 2> %t/remarks.txt
// RUN: FileCheck %s --check-prefix=SRC < %t/persistent.cu
// SRC: tile_cuda_{{.*}}p_gemm{{.*}}(const tile_cuda::tensor_arg A_arg, const tile_cuda::tensor_arg B_arg, const tile_cuda::tensor_arg C_arg, const __grid_constant__ tile_cuda::tensor_map tensor_map0, const __grid_constant__ tile_cuda::tensor_map tensor_map1, unsigned *__restrict__ tile_count)
// SRC: tile = (int32_t)blockIdx.x;
// SRC: tile = tile_cuda::next_tile(tile_count, next_tile);
// SRC: tile_1 = tile_cuda::received_tile(next_tile);
// RUN: strings %t/p.o | FileCheck %s --check-prefix=MANIFEST
// MANIFEST: kernel {{.*}}p_gemm{{[^ ]*}} tile_cuda_{{[^ ]*}} 384 {{[0-9]+}} {{[^ ]+}} p_gemm
// MANIFEST-NEXT: tmap 0 128 128x64
// MANIFEST-NEXT: tmap 1 128 64x64
// MANIFEST-NEXT: persistent
// MANIFEST-NEXT: fallback tile_cuda_{{[^ ]*}}_fallback 256 {{[0-9]+}}
// RUN: %nvcc -ptx -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I%t %t/persistent.cu -o - \
// RUN:   | FileCheck %s --check-prefix=PTX
// PTX: atom.global.add.u32
// RUN: FileCheck %s --check-prefix=PTXAS --implicit-check-not='ptxas: (' --implicit-check-not=spills: \
// RUN:   --implicit-check-not='bytes of stack' < %t/remarks.txt
// PTXAS-COUNT-8: registers a thread (ptxas), no stack, no spills
// PTXAS-NOT: registers a thread (ptxas)

#include <tile/tile.h>
namespace T = tile;

// A persistent GEMM in panels of 4 rows.
[[tile::kernel]] void p_gemm(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(256));
  T::persistent();
  T::use_swizzle(4);
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// Attention's loop, causal: a count of key blocks for each query block.
template <bool Persistent>
[[tile::kernel]] void p_attention(T::tensor<const T::bf16, 3> Q, T::tensor<const T::bf16, 3> K,
                                  T::tensor<const T::bf16, 3> V, T::tensor<float, 3> O) {
  const int M = Q.size(1), N = K.size(1);
  auto [bx, by] = T::grid(T::ceildiv(M, 128), Q.size(0), T::threads(256));
  T::persistent(Persistent);
  T::shared<T::bf16, 128, 64> Qs;
  T::shared<T::bf16, 64, 64> Ks, Vs;
  T::fragment<float, 128, 64> s;
  T::fragment<T::bf16, 128, 64> p;
  T::fragment<float, 128, 64> acc;
  T::copy(Q.at(by, bx * 128, 0), Qs);
  T::clear(acc);
  const int blocks = T::min(T::ceildiv(N, 64), T::ceildiv((bx + 1) * 128, 64));
  for (int kb : T::pipelined(blocks, T::stages(2))) {
    T::copy(K.at(by, kb * 64, 0), Ks);
    T::copy(V.at(by, kb * 64, 0), Vs);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    T::copy(s, p);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(by, bx * 128, 0));
}
template void p_attention<true>(T::tensor<const T::bf16, 3>, T::tensor<const T::bf16, 3>, T::tensor<const T::bf16, 3>,
                                T::tensor<float, 3>);
template void p_attention<false>(T::tensor<const T::bf16, 3>, T::tensor<const T::bf16, 3>, T::tensor<const T::bf16, 3>,
                                 T::tensor<float, 3>);

// Asked for, and cannot be: no producer warpgroup; no pipelined loop; a print.
[[tile::kernel]] void no_producer(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128), T::threads(256));
  T::persistent();
  T::warp_specialize(false);
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}
[[tile::kernel]] void no_loop(T::tensor<const float, 1> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 128), T::threads(128));
  T::persistent();
  T::fragment<float, 128> x;
  T::copy(X.at(bx * 128), x);
  T::copy(x, Y.at(bx * 128));
}
#ifdef WITH_PRINT // (nvcc alone, below, would not know printf)
[[tile::kernel]] void prints(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128), T::threads(256));
  T::persistent();
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::print(acc);
  T::copy(acc, C.at(by * 128, bx * 128));
}
#endif

// overlap-gemms=on on a persistent grid: the last iteration's deferred second gemm hands its
// V stage back after the loop, as every iteration before it does, for the producer refills
// that stage for the block's next tile (it waits for it when its count of iterations, `done`
// included, reaches the stage again); without it a block's second tile of more than a few
// iterations waited forever.
// RUN: %tile-cxx -fplugin-arg-tile-bulk-store=off -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-overlap-gemms=on \
// RUN:   -fplugin-arg-tile-print-after=warp-specialize -DWITH_OVERLAP %s 2>&1 | FileCheck %s --check-prefix=OVERLAP
// OVERLAP-LABEL: kernel p_overlap(
// OVERLAP:      for it in serial(0, blocks) {
// OVERLAP:        mbarrier_wait(barriers[(done + it) % 3 + 9], parity ((done + it) / 3 + 1) % 2)
// OVERLAP:        bulk_copy(Vs + (done + it) % 3 * 4096 <- tensor_map1[it * 64, 0], barriers[(done + it) % 3 + 3])
// OVERLAP:      for it.1 in serial(1, blocks - 1) {
// OVERLAP:        mbarrier_arrive(barriers[(done.1 + (it.1 - 1)) % 3 + 9])
// OVERLAP:        mbarrier_arrive(barriers[(done.1 + it.1) % 3 + 6])
// OVERLAP-NEXT: }
// OVERLAP-NEXT: if (blocks > 0) {
// OVERLAP-NEXT:   mbarrier_wait(barriers[(done.1 + (blocks - 1)) % 3 + 3], parity (done.1 + (blocks - 1)) / 3 % 2)
// OVERLAP-NEXT:   gemm(p, Vs[(done.1 + (blocks - 1)) % 3, 0 +: 64, 0 +: 64], acc, deferred_wait, policy=full_row)
// OVERLAP-NEXT:   wgmma_wait(0; acc)
// OVERLAP-NEXT:   mbarrier_arrive(barriers[(done.1 + (blocks - 1)) % 3 + 9])
// OVERLAP-NEXT: }
#ifdef WITH_OVERLAP
[[tile::kernel]] void p_overlap(T::tensor<const T::bf16, 2> Q, T::tensor<const T::bf16, 2> K,
                                T::tensor<const T::bf16, 2> V, T::tensor<float, 2> O, int blocks) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 128), T::threads(256));
  T::persistent();
  T::shared<T::bf16, 128, 64> Qs;
  T::shared<T::bf16, 64, 64> Ks, Vs;
  T::fragment<float, 128, 64> s;
  T::fragment<T::bf16, 128, 64> p;
  T::fragment<float, 128, 64> acc;
  T::copy(Q.at(bx * 128, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(blocks, T::stages(3))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    for (auto [i, j] : T::parallel(128, 64))
      s(i, j) = s(i, j) * 0.25f;
    for (auto [i, j] : T::parallel(128, 64))
      acc(i, j) = acc(i, j) * 0.5f;
    T::copy(s, p);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(bx * 128, 0));
}
#endif
