// CUDA codegen snapshots: one extern "C" __global__ __launch_bounds__ entry per kernel;
// tensors as tile_cuda::tensor_arg, scalars widened to int64_t / double; shared and fragment
// buffers at aligned offsets of one dynamic shared allocation (fragments in registers as
// per-thread arrays); Threads loops strided by the block's threads (unrolled when their
// count is known); __syncthreads() where insert-sync put barriers; atomics and prints outside
// Threads loops done by thread 0; device_assert recorded for the runtime. The second RUN
// compiles the same file for sm_90a and sm_80 with nvcc (ptxas checks the code).
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=codegen %s 2>&1 \
// RUN:   | FileCheck %s
// REQUIRES: nvcc
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda:sm_90a+sm_80 -fplugin-arg-tile-cache=%t/cache \
// RUN:   -fplugin-arg-tile-emit-source=%t -fplugin-arg-tile-verbose %s -o %t/a.o 2>&1 | FileCheck %s --check-prefix=NVCC
// RUN: ls %t | FileCheck %s --check-prefix=FILES
// NVCC: remark: tile: cuda image of codegen.cpp (3 kernels) compiled
// FILES: codegen.cu
// FILES: tile_cuda.h

#include <tile/tile.h>
namespace T = tile;

// CHECK: #include "tile_cuda.h"
// CHECK-LABEL: // scale_rows
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(64) tile_cuda__Z10scale_rows{{[A-Za-z0-9_]+}}(const tile_cuda::tensor_arg X_arg, const tile_cuda::tensor_arg Y_arg, const tile_cuda::tensor_arg Count_arg, double alpha_arg, int64_t n_arg) {
// CHECK-NEXT: extern __shared__ __align__(128) unsigned char tile_smem[];
// The vector flags the accesses use (4-byte vectors of X and Y), and no other.
// CHECK-NEXT: const bool X_vec4 = reinterpret_cast<uintptr_t>(X_arg.data) % 4 == 0 && X_arg.strides[1] == 1 && X_arg.strides[0] % 2 == 0;
// CHECK-NEXT: const bool Y_vec4 = reinterpret_cast<uintptr_t>(Y_arg.data) % 4 == 0 && Y_arg.strides[1] == 1 && Y_arg.strides[0] % 2 == 0;
// CHECK-NEXT: const tile_cuda::bf16 *__restrict__ X = (const tile_cuda::bf16 *)X_arg.data;
// CHECK: float alpha = (float)alpha_arg;
// CHECK-NEXT: int32_t n = (int32_t)n_arg;
// CHECK-NEXT: const int32_t tid = (int32_t)threadIdx.x;
// CHECK-NEXT: const tile_cuda::block3 blk = tile_cuda::block_index(0);
// CHECK-NEXT: const int32_t bx = (int32_t)blk.x;
[[tile::kernel]] void scale_rows(T::tensor<const T::bf16, 2> X, T::tensor<T::bf16, 2> Y, T::tensor<int, 1> Count,
                                 float alpha, int n) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 8), T::threads(64));
  // CHECK-NEXT: tile_cuda::bf16 *__restrict__ s = reinterpret_cast<tile_cuda::bf16 *>(tile_smem + 0);
  // The fragment is in registers (infer-layout): two per thread.
  // CHECK-NEXT: float f[2];
  // CHECK-NEXT: float l[2];
  T::shared<T::bf16, 8, 16> s;
  T::fragment<float, 8, 16> f;
  T::local<float, 2> l;
  // The copy in: one test whether the tile lies inside X (into shared memory: the corner
  // that varies in 32 bits, against the size less the extent); then two elements a thread
  // (64 threads: one iteration each, no loop), loaded as one 4-byte access where X allows
  // such vectors (a flag tested once, outside the thread's loop), else one by one; for a
  // tile at X's edge, the flag and the bounds at each access.
  // CHECK-NEXT: if (bx * 8 <= (int32_t)X_size0 - 8 && 16l <= X_size1) {
  // (lower-vector-access decides; the codegen prints its flags, moves and lane arrays.)
  // CHECK-NEXT: if (X_vec4) {
  // (lower-thread-loops: the thread's one iteration as a block, the index as tid.)
  // CHECK-NEXT: {
  // CHECK-NEXT: alignas(4) tile_cuda::bf16 vec_lanes[2];
  // CHECK-NEXT: reinterpret_cast<tile_cuda::bytes<4> *>(vec_lanes)[0] = reinterpret_cast<const tile_cuda::bytes<4> *>(X + ((int64_t)(bx * 8) * X_stride0 + (int64_t)(tid / 8) * X_stride0 + (int64_t)(tid % 8 * 2)))[0];
  // CHECK: s[i * 16 + j] = vec_lanes[v];
  // CHECK: } else {
  // CHECK: s[i * 16 + j] = X[(int64_t)(bx * 8 + i) * X_stride0 + (int64_t)j * X_stride1];
  // CHECK: } else {
  // CHECK-NEXT: {
  // CHECK-NEXT: if (X_vec4 && ((int64_t)(bx * 8 + tid / 8) < X_size0 && (int64_t)(tid % 8 * 2) < X_size1) && ((int64_t)(bx * 8 + tid / 8) < X_size0 && (int64_t)(tid % 8 * 2 + 1) < X_size1)) {
  // CHECK: } else {
  // CHECK: s[i_1 * 16 + j_1] = ((int64_t)(bx * 8 + i_1) < X_size0 && (int64_t)j_1 < X_size1 ? X[(int64_t)(bx * 8 + i_1) * X_stride0 + (int64_t)j_1 * X_stride1] : (tile_cuda::bf16)0.0f);
  T::copy(X.at(bx * 8, 0), s);
  // A barrier, then each thread's two elements, in unrolled loops over its slots, read from
  // shared memory as one 4-byte vector first.
  // CHECK: __syncthreads();
  // CHECK-NEXT: {
  // CHECK-NEXT: const int32_t rs = 0;
  // CHECK: alignas(4) tile_cuda::bf16 s_lanes[2];
  // CHECK-NEXT: reinterpret_cast<tile_cuda::bytes<4> *>(s_lanes)[0] = reinterpret_cast<const tile_cuda::bytes<4> *>(s + ((rs * 8 + tid / 8) * 16 + (cs * 16 + tid % 8 * 2)))[0];
  // CHECK: for (int32_t v_2 = 0; v_2 < 2; ++v_2) {
  // CHECK-NEXT: int32_t i_2 = rs * 8 + tid / 8;
  // CHECK-NEXT: int32_t j_2 = cs * 16 + tid % 8 * 2 + v_2;
  // CHECK-NEXT: f[(rs + cs) * 2 + v_2] = tile_cuda::cvt<float>(s_lanes[v_2]) * alpha;
  for (auto [i, j] : T::parallel(8, 16))
    f(i, j) = float(s(i, j)) * alpha;
  // CHECK: if (threadIdx.x == 0) {
  // CHECK-NEXT: tile_cuda::atomic_add(&Count[(int64_t)bx * Count_stride0], 1);
  T::atomic_add(Count(bx), 1);
  // CHECK: if (!(n > 0)) {
  // CHECK-NEXT: tile_cuda::assert_fail("scale_rows", "n is positive ({{.*}}codegen.cpp:[[@LINE+2]])");
  // CHECK-NEXT: return;
  T::device_assert(n > 0, "n is positive");
  // Registers to global memory: no barrier; a vector store where the lanes are inside Y.
  // CHECK-NOT: __syncthreads();
  // CHECK: if ((int64_t)(bx * 8) + 8l <= Y_size0 && 16l <= Y_size1) {
  // CHECK-NEXT: if (Y_vec4) {
  // CHECK: vec_lanes_2[v_3] = tile_cuda::cvt<tile_cuda::bf16>(f[(rs_1 + cs_1) * 2 + v_3]);
  // (The vector's offset: each term of each index times its stride, so that nvcc keeps the
  // parts that are the same in every thread or iteration apart.)
  // CHECK: reinterpret_cast<tile_cuda::bytes<4> *>(Y + ((int64_t)(bx * 8) * Y_stride0 + (int64_t)(rs_1 * 8) * Y_stride0 + (int64_t)(tid / 8) * Y_stride0 + (int64_t)(cs_1 * 16) + (int64_t)(tid % 8 * 2)))[0] = reinterpret_cast<const tile_cuda::bytes<4> *>(vec_lanes_2)[0];
  // CHECK: } else {
  // CHECK: Y[(int64_t)(bx * 8 + i_3) * Y_stride0 + (int64_t)j_3 * Y_stride1] = tile_cuda::cvt<tile_cuda::bf16>(f[(rs_1 + cs_1) * 2 + v_3]);
  // CHECK: } else {
  // CHECK: if (Y_vec4 && (int64_t)(bx * 8 + (rs_2 * 8 + tid / 8)) < Y_size0
  // CHECK: } else {
  // CHECK: Y[(int64_t)(bx * 8 + i_4) * Y_stride0 + (int64_t)j_4 * Y_stride1] = tile_cuda::cvt<tile_cuda::bf16>(f[(rs_2 + cs_2) * 2 + v_4]);
  T::copy(f, Y.at(bx * 8, 0));
}

// 16-byte vectors: whether a tensor allows them at 16-byte multiples of its last index
// (aligned start, unit last stride, other strides multiples of 16 bytes) is tested once
// per launch; a thread's loop of such accesses is unswitched on it: plain vector accesses,
// addressed with a unit last stride, where it holds, element by element where not.
// CHECK-LABEL: // wide_rows
// CHECK: const bool X_vec16 = reinterpret_cast<uintptr_t>(X_arg.data) % 16 == 0 && X_arg.strides[1] == 1 && X_arg.strides[0] % 8 == 0;
// CHECK: if ((int64_t)(bx * 4) + 4l <= X_size0 && 64l <= X_size1) {
// CHECK-NEXT: if (X_vec16) {
// CHECK: alignas(16) tile_cuda::bf16 vec_lanes[8];
// CHECK-NEXT: reinterpret_cast<tile_cuda::bytes<16> *>(vec_lanes)[0] = reinterpret_cast<const tile_cuda::bytes<16> *>(X + ((int64_t)(bx * 4) * X_stride0 + (int64_t)(rs * 4) * X_stride0 + (int64_t)(tid / 8) * X_stride0 + (int64_t)(cs * 64) + (int64_t)(tid % 8 * 8)))[0];
// CHECK: } else {
// CHECK-NOT: vec_lanes
// CHECK: f[(rs + cs) * 8 + v] = tile_cuda::cvt<float>(X[(int64_t)(bx * 4 + i) * X_stride0 + (int64_t)j * X_stride1]);
// In the path for a tile at the tensor's edge, the flag and the bounds of the first and
// last lanes, at each access.
// CHECK: } else {
[[tile::kernel]] void wide_rows(T::tensor<const T::bf16, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 4), T::threads(32));
  T::fragment<float, 4, 64> f;
  T::copy(X.at(bx * 4, 0), f);
  T::copy(f, Y.at(bx * 4, 0));
}

// An atomic's value: inside a Threads loop each thread's own; outside, thread 0's, given to
// the block through a shared slot between barriers (insert-sync's), a ticket a round.
// CHECK-LABEL: // tickets
// CHECK: for (int32_t r = 0; r < 3; ++r) {
// CHECK-NEXT: int32_t old;
// CHECK-NEXT: if (threadIdx.x == 0) {
// CHECK-NEXT: old = tile_cuda::atomic_add(&Counter[0l], 1);
// CHECK: __syncthreads();
// CHECK-NEXT: if (threadIdx.x == 0) {
// CHECK-NEXT: atomic_slot[0] = old;
// CHECK: __syncthreads();
// CHECK-NEXT: int32_t old_1 = atomic_slot[0];
// CHECK: int32_t old_2;
// CHECK-NEXT: old_2 = tile_cuda::atomic_compare_exchange(&Flag[(int64_t)tid * Flag_stride0], 0, ticket + 1);
[[tile::kernel]] void tickets(T::tensor<int, 1> Counter, T::tensor<int, 1> Flag, T::tensor<int, 2> Seen) {
  auto [bx] = T::grid(Seen.size(0), T::threads(64));
  for (int r : T::serial(3)) {
    const int ticket = T::atomic_add(Counter(0), 1);
    for (int i : T::parallel(64)) {
      const int found = T::atomic_compare_exchange(Flag(i), 0, ticket + 1);
      Seen(bx, i) = found;
    }
  }
}
