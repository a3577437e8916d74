// bulk-store=on, sm_90a: in a warp-specialized kernel, a top-level copy after the loop of a
// whole fragment in registers into a tensor parameter's tile (the epilogue's
// `copy(acc, C.at(...))`) goes through a shared tile of the tensor's element type in the
// 128-byte swizzle (rows, or slabs, of 128 bytes), which one consumer thread stores by bulk
// tensor stores, a box a slab, through an optional tensor map of the output (where the launch
// could not encode it, its bit in the mask passed after the maps, the copy runs as it was); the tile's writes are
// fenced for the copy engine before a barrier of the consumers, and the first thread waits
// for the stores' reads before the kernel ends, and on a persistent grid before the next
// tile's epilogue writes the tile again. A copy from a shared tile of the kernel's own
// (TileLang's `copy(acc, Cs); copy(Cs, C...)`) stores from that tile, laid out for it, where
// only the statements after the loop use it. Copies that do not qualify say why. Without the
// option the remark says what it would do. (Blocks one by one here, multicast=off:
// multicast.cpp tests clusters.) The fragment's lanes go into the tile as vectors
// (lower-vector-access), and ptxas spills nothing.
// REQUIRES: nvcc
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-bulk-store=on -fplugin-arg-tile-multicast=off \
// RUN:   -fplugin-arg-tile-pingpong=on -fplugin-arg-tile-remarks %s 2>&1 | FileCheck %s --check-prefix=REMARKS
// REMARKS-DAG: bulk-store.cpp:[[@LINE+232]]:3: remark: [cuda:sm_90a] copy into 'C' by bulk tensor stores (TMA, 2 boxes of 128x64) from shared 'C_tile' (128-byte swizzle), which one consumer thread issues
// REMARKS-DAG: bulk-store.cpp:[[@LINE+254]]:3: remark: [cuda:sm_90a] copy into 'O' by bulk tensor stores (TMA, 2 boxes of 128x32) from shared 'O_tile' (128-byte swizzle), which one consumer thread issues
// REMARKS-DAG: bulk-store.cpp:[[@LINE+271]]:3: remark: [cuda:sm_90a] copy into 'C' not a bulk tensor store: the kernel reads or writes 'C' elsewhere too
// REMARKS-DAG: bulk-store.cpp:[[@LINE+272]]:3: remark: [cuda:sm_90a] copy into 'R' not a bulk tensor store: it does not store a whole two-dimensional fragment
// REMARKS-DAG: bulk-store.cpp:[[@LINE+286]]:3: remark: [cuda:sm_90a] copy into 'C' not a bulk tensor store: the tile's rows are 64 bytes (a bulk store's tile takes rows of a multiple of 128 bytes)
// REMARKS-DAG: bulk-store.cpp:[[@LINE+299]]:3: remark: [cuda:sm_90a] copy into 'C' not a bulk tensor store: its shared tile of 65536 bytes does not fit beside the block's other buffers (198845 bytes with their alignment; a block may have 232448; fewer stages make room)
// REMARKS-DAG: bulk-store.cpp:[[@LINE+321]]:3: remark: [cuda:sm_90a] copy into 'C' by bulk tensor stores (TMA, 2 boxes of 128x64) from shared 'Cs' (128-byte swizzle), which one consumer thread issues
// REMARKS-DAG: bulk-store.cpp:[[@LINE+345]]:3: remark: [cuda:sm_90a] copy into 'C1' not a bulk tensor store: it converts the elements of 'Cc'
// REMARKS-DAG: bulk-store.cpp:[[@LINE+345]]:3: remark: [cuda:sm_90a] copy into 'C2' not a bulk tensor store: the tile 'Ca' has a layout annotated (annotate_layout)
// REMARKS-DAG: bulk-store.cpp:[[@LINE+345]]:3: remark: [cuda:sm_90a] copy into 'C3' not a bulk tensor store: the tile 'Cl' is used in the loop
// REMARKS-NOT: stored by the consumer threads
// RUN: %tile-cxx -fplugin-arg-tile-bulk-store=off -fplugin-arg-tile-multicast=off -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OFF
// OFF: bulk-store.cpp:[[@LINE+219]]:3: remark: [cuda:sm_90a] copy into 'C' stored by the consumer threads: -fplugin-arg-tile-bulk-store=on makes it bulk tensor stores (TMA) through shared memory
// OFF: bulk-store.cpp:[[@LINE+313]]:3: remark: [cuda:sm_90a] copy into 'C' stored by the consumer threads: -fplugin-arg-tile-bulk-store=on makes it bulk tensor stores (TMA){{$}}
// OFF-NOT: by bulk tensor stores
//
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-bulk-store=on -fplugin-arg-tile-multicast=off \
// RUN:   -fplugin-arg-tile-pingpong=on -fplugin-arg-tile-print-after=warp-specialize %s 2>&1 | FileCheck %s
// CHECK-LABEL: kernel bs_gemm<false>(
// CHECK-NEXT: {{.*}} tensor_map2(C, box 128x64, swizzle 128, optional) missing_maps(maps_missing) {
// CHECK: shared C_tile: bf16[128, 128] rows of 64 swizzled 128 in slabs of 64 columns
// CHECK: registers_up_to(232)
// CHECK-NOT: bulk_store_wait
// CHECK: mbarrier_arrive(barriers[it.1 % 3 + 3])
// CHECK-NEXT: }
// CHECK-NEXT: if ((maps_missing & 4) == 0) {
// CHECK-NEXT:   copy(acc, C_tile)
// CHECK-NEXT:   proxy_fence_async_shared()
// CHECK-NEXT:   barrier()
// CHECK-NEXT:   if (tid == 0) {
// CHECK-NEXT:     bulk_store(tensor_map2[by * 128, bx * 128] <- C_tile)
// CHECK-NEXT:     bulk_store(tensor_map2[by * 128, bx * 128 + 64] <- C_tile + 8192)
// CHECK-NEXT:     bulk_store_commit(C_tile)
// CHECK-NEXT:   }
// CHECK-NEXT: } else {
// CHECK-NEXT:   copy(acc, C[by * 128 +: 128, bx * 128 +: 128])
// CHECK-NEXT: }
// CHECK-NEXT: if (tid == 0) {
// CHECK-NEXT:   bulk_store_wait(C_tile)
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// On a persistent grid: the last tile's stores have read the tile before it is written again.
// CHECK-LABEL: kernel bs_gemm<true>(
// CHECK: registers_up_to(232)
// CHECK: while (tile.1 < tiles) {
// CHECK: mbarrier_arrive(barriers[(done.1 + it.1) % 3 + 3])
// CHECK-NEXT: }
// CHECK-NEXT: if (tid == 0) {
// CHECK-NEXT:   bulk_store_wait(C_tile)
// CHECK-NEXT: }
// CHECK-NEXT: barrier()
// CHECK-NEXT: if ((maps_missing & 4) == 0) {
// CHECK-NEXT:   copy(acc, C_tile)
// CHECK-NEXT:   proxy_fence_async_shared()
// CHECK-NEXT:   barrier()
// CHECK-NEXT:   if (tid == 0) {
// CHECK-NEXT:     bulk_store(tensor_map2[by * 128, bx * 128] <- C_tile)
// CHECK-NEXT:     bulk_store(tensor_map2[by * 128, bx * 128 + 64] <- C_tile + 8192)
// CHECK-NEXT:     bulk_store_commit(C_tile)
// CHECK-NEXT:   }
// CHECK-NEXT: } else {
// CHECK-NEXT:   copy(acc, C[by * 128 +: 128, bx * 128 +: 128])
// CHECK-NEXT: }
// CHECK-NEXT: done.1 = done.1 + max((K + 64 - 1) / 64, 0)
// CHECK: n.1 = n.1 + 1
// CHECK-NEXT: }
// CHECK-NEXT: if (tid == 0) {
// CHECK-NEXT:   bulk_store_wait(C_tile)
// CHECK-NEXT: }
// With ping-pong: the epilogue after the last turn is handed on; f32 rows of 32 elements.
// CHECK-LABEL: kernel bs_attention(
// CHECK-NEXT: {{.*}} tensor_map2(O, box 1x128x32, swizzle 128, optional) missing_maps(maps_missing) {
// CHECK: shared O_tile: f32[128, 64] rows of 32 swizzled 128 in slabs of 32 columns
// CHECK: if ((N + 64 - 1) / 64 > 0) {
// CHECK-NEXT:   named_barrier_arrive(3 - tid / 128, 256 threads)
// CHECK-NEXT: }
// CHECK-NEXT: if ((maps_missing & 4) == 0) {
// CHECK-NEXT:   copy(acc, O_tile)
// CHECK-NEXT:   proxy_fence_async_shared()
// CHECK-NEXT:   barrier()
// CHECK-NEXT:   if (tid == 0) {
// CHECK-NEXT:     bulk_store(tensor_map2[by, bx * 128, 0] <- O_tile)
// CHECK-NEXT:     bulk_store(tensor_map2[by, bx * 128, 32] <- O_tile + 4096)
// CHECK-NEXT:     bulk_store_commit(O_tile)
// CHECK-NEXT:   }
// CHECK-NEXT: } else {
// CHECK-NEXT:   copy(acc, O[by, bx * 128 +: 128, 0 +: 64])
// CHECK-NEXT: }
// CHECK-NEXT: if (tid == 0) {
// CHECK-NEXT:   bulk_store_wait(O_tile)
// CHECK-NEXT: }
// CHECK-NEXT: if (tid / 128 == 0) {
// CHECK-NEXT:   named_barrier_sync(2, 256 threads)
// CHECK-NEXT: }
// CHECK-LABEL: kernel bs_refused(
// CHECK-NOT: tensor_map2
// CHECK: copy(acc, C[by * 128 +: 128, bx * 128 +: 128])
// The kernel's own tile, declared before the roles split; on a persistent grid the wait goes
// before the tile's first use after the loop (the copy into it, after the scaling).
// CHECK-LABEL: kernel own_gemm<false>(
// CHECK-NEXT: {{.*}} tensor_map2(C, box 128x64, swizzle 128, optional) missing_maps(maps_missing) {
// CHECK: shared Cs: bf16[128, 128] rows of 64 swizzled 128 in slabs of 64 columns
// CHECK: registers_up_to(232)
// CHECK-NOT: shared Cs
// CHECK: copy(acc, Cs)
// CHECK-NEXT: if ((maps_missing & 4) == 0) {
// CHECK-NEXT:   proxy_fence_async_shared()
// CHECK-NEXT:   barrier()
// CHECK-NEXT:   if (tid == 0) {
// CHECK-NEXT:     bulk_store(tensor_map2[by * 128, bx * 128] <- Cs)
// CHECK-NEXT:     bulk_store(tensor_map2[by * 128, bx * 128 + 64] <- Cs + 8192)
// CHECK-NEXT:     bulk_store_commit(Cs)
// CHECK-NEXT:   }
// CHECK-NEXT: } else {
// CHECK-NEXT:   copy(Cs, C[by * 128 +: 128, bx * 128 +: 128])
// CHECK-NEXT: }
// CHECK-NEXT: if (tid == 0) {
// CHECK-NEXT:   bulk_store_wait(Cs)
// CHECK-NEXT: }
// CHECK-LABEL: kernel own_gemm<true>(
// CHECK: while (tile.1 < tiles) {
// CHECK: acc[i, j] = acc[i, j] * 2.0f
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: if (tid == 0) {
// CHECK-NEXT:   bulk_store_wait(Cs)
// CHECK-NEXT: }
// CHECK-NEXT: barrier()
// CHECK-NEXT: copy(acc, Cs)
// CHECK-NEXT: if ((maps_missing & 4) == 0) {
// CHECK-NEXT:   proxy_fence_async_shared()
// CHECK-NEXT:   barrier()
// CHECK-NEXT:   if (tid == 0) {
// CHECK-NEXT:     bulk_store(tensor_map2[by * 128, bx * 128] <- Cs)
// CHECK: n.1 = n.1 + 1
// CHECK-NEXT: }
// CHECK-NEXT: if (tid == 0) {
// CHECK-NEXT:   bulk_store_wait(Cs)
// CHECK-NEXT: }
// CHECK-LABEL: kernel own_refused(
// CHECK-NOT: tensor_map2
// CHECK: copy(Cc, C1[by * 128 +: 128, bx * 128 +: 128])
// CHECK-NEXT: copy(Ca, C2[by * 128 +: 128, bx * 128 +: 128])
// CHECK-NEXT: copy(Cl, C3[by * 128 +: 128, bx * 128 +: 128])
//
// insert-sync adds no barrier of its own (none inside the first thread's branches): the two
// before and after the tile's writes order them with the stores' reads.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-bulk-store=on -fplugin-arg-tile-multicast=off \
// RUN:   -fplugin-arg-tile-print-after=insert-sync %s 2>&1 | FileCheck %s --check-prefix=SYNC
// SYNC-LABEL: kernel bs_gemm<true>(
// SYNC: while (tile.1 < tiles) {
// SYNC-NOT: barrier()
// SYNC: bulk_store_wait(C_tile)
// SYNC-NEXT: }
// SYNC-NEXT: barrier()
// SYNC-NOT: barrier()
// SYNC: if ((maps_missing & 4) == 0) {
// SYNC-NOT: barrier()
// SYNC: proxy_fence_async_shared()
// SYNC-NEXT: barrier()
// SYNC-NEXT: if (tid == 0) {
// SYNC-NEXT: bulk_store(
// SYNC-NOT: barrier()
// SYNC: bulk_store_wait(C_tile)
// SYNC-NOT: barrier()
// SYNC-LABEL: kernel bs_attention(
//
// The lanes into the tile as vectors of 4 bytes, in the tile's swizzle; one fence before the
// barrier (lower-mma adds none where warp-specialize put one).
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-bulk-store=on -fplugin-arg-tile-multicast=off \
// RUN:   -fplugin-arg-tile-print-after=lower-mma %s 2>&1 | FileCheck %s --check-prefix=LOWERED
// LOWERED-LABEL: kernel bs_gemm<false>(
// LOWERED: local C_tile_lanes: bf16[2]
// LOWERED: C_tile_lanes[vl.1] = bf16(acc[
// LOWERED: vector_move(C_tile + (cs.1 * 8 + tid % 4 * 2) / 64 * 8192 + {{.*}}, C_tile_lanes, 4 bytes in 4)
// LOWERED: proxy_fence_async_shared()
// LOWERED-NEXT: barrier()
// LOWERED-NEXT: if (tid == 0) {
// LOWERED-NEXT: bulk_store(
//
// The generated CUDA (the mask of missing maps after the maps), the manifest's optional
// tensor map of C (parameter 2, boxes of 128 x 64), nvcc's
// PTX (bulk tensor stores, their commit and wait) and ptxas (no spills).
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-bulk-store=on -fplugin-arg-tile-multicast=off -fplugin-arg-tile-pingpong=on \
// RUN:   -fplugin-arg-tile-remarks -fplugin-arg-tile-emit-source=%t %s -o %t/bs.o 2> %t/remarks.txt
// RUN: FileCheck %s --check-prefix=SRC < %t/bulk-store.cu
// SRC: const __grid_constant__ tile_cuda::tensor_map tensor_map2, const int32_t maps_missing) {
// SRC: if ((maps_missing & 4) == 0) {
// SRC: tile_cuda::bulk_tensor_store<2>(&tensor_map2, C_tile, {bx * 128, by * 128});
// SRC-NEXT: tile_cuda::bulk_tensor_store<2>(&tensor_map2, C_tile + 8192, {bx * 128 + 64, by * 128});
// SRC-NEXT: tile_cuda::bulk_store_commit();
// SRC: tile_cuda::bulk_store_wait();
// SRC: const __grid_constant__ tile_cuda::tensor_map tensor_map2, const int32_t maps_missing, unsigned *__restrict__ tile_count) {
// SRC: tile_cuda::bulk_tensor_store<3>(&tensor_map2, O_tile, {0, bx * 128, by});
// RUN: strings %t/bs.o | FileCheck %s --check-prefix=MANIFEST
// MANIFEST: kernel {{.*}}bs_gemmILb0{{[^ ]*}} tile_cuda_{{[^ ]*}} 384 {{[0-9]+}} {{[^ ]+}} bs_gemm<false>
// MANIFEST-NEXT: tmap 0 128 128x64
// MANIFEST-NEXT: tmap 1 128 64x64
// MANIFEST-NEXT: tmap 2 128 128x64 optional
// MANIFEST-NEXT: fallback tile_cuda_{{[^ ]*}}_fallback 256 {{[0-9]+}}
// RUN: %nvcc -ptx -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I%t %t/bulk-store.cu -o - \
// RUN:   | FileCheck %s --check-prefix=PTX
// PTX: st.shared.v2.u16
// PTX: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// PTX: cp.async.bulk.commit_group
// PTX: cp.async.bulk.wait_group.read 0
// PTX: cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group
// ptxas's report (the remarks give it): nothing serialized, nothing spilled.
// RUN: FileCheck %s --check-prefix=PTXAS --implicit-check-not='ptxas: (' --implicit-check-not=spills: --implicit-check-not='bytes of stack' < %t/remarks.txt
// PTXAS-COUNT-20: registers a thread (ptxas), no stack, no spills
// PTXAS-NOT: registers a thread (ptxas)

#include <tile/tile.h>
namespace T = tile;

template <bool Persistent>
[[tile::kernel]] void bs_gemm(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<T::bf16, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(256));
  T::persistent(Persistent);
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
template void bs_gemm<false>(T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>, T::tensor<T::bf16, 2>);
template void bs_gemm<true>(T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>, T::tensor<T::bf16, 2>);

[[tile::kernel]] void bs_attention(T::tensor<const T::bf16, 3> Q, T::tensor<const T::bf16, 3> K,
                                   T::tensor<const T::bf16, 3> V, T::tensor<float, 3> O) {
  const int M = Q.size(1), N = K.size(1);
  auto [bx, by] = T::grid(T::ceildiv(M, 128), Q.size(0), T::threads(256));
  T::shared<T::bf16, 128, 64> Qs;
  T::shared<T::bf16, 64, 64> Ks, Vs;
  T::fragment<float, 128, 64> s;
  T::fragment<T::bf16, 128, 64> p;
  T::fragment<float, 128, 64> acc;
  T::copy(Q.at(by, bx * 128, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(T::ceildiv(N, 64), T::stages(2))) {
    T::copy(K.at(by, kb * 64, 0), Ks);
    T::copy(V.at(by, kb * 64, 0), Vs);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    T::copy(s, p);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(by, bx * 128, 0));
}

// Not bulk stores: a tensor written twice; a fragment of one dimension; rows of 64 bytes; no room.
[[tile::kernel]] void bs_refused(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C,
                                 T::tensor<float, 1> R) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(256));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::fragment<float, 128> rows;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
  T::reduce_sum(acc, rows, 1);
  T::copy(rows, R.at(by * 128));
  T::copy(acc, C.at(by * 128, bx * 128));
}
[[tile::kernel]] void bs_narrow(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<T::bf16, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 32), T::ceildiv(M, 128), T::threads(256));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 32, 64> Bs;
  T::fragment<float, 128, 32> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(bx * 32, k * 64), Bs);
    T::gemm(As, Bs, acc, {.transpose_b = true});
  }
  T::copy(acc, C.at(by * 128, bx * 32));
}
[[tile::kernel]] void bs_no_room(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<T::bf16, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 256), T::ceildiv(M, 128), T::threads(256));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 256> Bs;
  T::fragment<float, 128, 256> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(4))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 256), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 256));
}

// From a shared tile of the kernel's own (TileLang's way): its layout becomes the bulk store's,
// and on a persistent grid the wait goes before its first use after the loop.
template <bool Persistent>
[[tile::kernel]] void own_gemm(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<T::bf16, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(256));
  T::persistent(Persistent);
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::shared<T::bf16, 128, 128> Cs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  for (auto [i, j] : T::parallel(128, 128))
    acc(i, j) = acc(i, j) * 2.0f;
  T::copy(acc, Cs);
  T::copy(Cs, C.at(by * 128, bx * 128));
}
template void own_gemm<false>(T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>, T::tensor<T::bf16, 2>);
template void own_gemm<true>(T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>, T::tensor<T::bf16, 2>);

// Not from these tiles: one converts its elements, one has a layout annotated, one is used in
// the loop.
[[tile::kernel]] void own_refused(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B,
                                  T::tensor<T::f16, 2> C1, T::tensor<T::bf16, 2> C2, T::tensor<T::bf16, 2> C3) {
  const int M = C1.size(0), N = C1.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(256));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::shared<T::bf16, 128, 128> Cc, Ca, Cl;
  T::annotate_layout(Ca, T::layouts::swizzled(64));
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
    T::copy(acc, Cl);
  }
  T::copy(acc, Cc);
  T::copy(acc, Ca);
  T::copy(Cc, C1.at(by * 128, bx * 128));
  T::copy(Ca, C2.at(by * 128, bx * 128));
  T::copy(Cl, C3.at(by * 128, bx * 128));
}
// A box may start only on a 16-byte boundary of the tensor's rows: a store at an offset not
// known to be one stays with the consumer threads.
// REMARKS-DAG: bulk-store.cpp:[[@LINE+13]]:3: remark: [cuda:sm_90a] copy into 'C' not a bulk tensor store: it starts at a column not known to be a multiple of 16 bytes into the tensor's rows (a bulk store's box starts on one)
[[tile::kernel]] void bs_odd_column(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<T::bf16, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 64), T::ceildiv(M, 128), T::threads(256));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 64> Bs;
  T::fragment<float, 128, 64> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(bx * 64, k * 64), Bs);
    T::gemm(As, Bs, acc, {.transpose_b = true});
  }
  T::copy(acc, C.at(by * 128, bx * 64 + 1));
}
