// lower-thread-loops: a Threads loop of constant extent whose threads each run at most 8 of
// its iterations becomes a Slots loop over a thread's trips, the loop's index replaced by
// tid + trip * threads; a division or remainder of it by a constant that divides the
// thread count splits (tid / c + trip * (threads / c), tid % c). Where the threads do not
// divide the extent, the last trip tests the index; a loop of one trip stays a Slots loop
// (the codegen prints a block); one of more than 8 trips a thread stays a Threads loop.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-before=lower-thread-loops \
// RUN:   -fplugin-arg-tile-print-after=lower-thread-loops -fplugin-arg-tile-stop-after=lower-thread-loops %s 2>&1 \
// RUN:   | FileCheck %s
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=codegen %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CUDA

#include <tile/tile.h>
namespace T = tile;

// Before: the Threads loops of the copies, as bind-threads made them.
// CHECK-LABEL: IR before lower-thread-loops
// CHECK-LABEL: kernel exact(
// CHECK: for t in threads(0, 128) {
// CHECK-NEXT: for v in vectorized(0, 8) {
// CHECK-NEXT: var i: i32 = t / 8
// CHECK-NEXT: var j: i32 = t % 8 * 8 + v
// CHECK-LABEL: kernel many(
// CHECK: for t in threads(0, 1024) {

// 128 vectors on 32 threads: 4 trips; 8 vectors a row, and 8 divides 32.
// CHECK-LABEL: IR after lower-thread-loops
// CHECK-LABEL: kernel exact(
// CHECK: for t_r in slots(0, 4) {
// CHECK-NEXT: for v in vectorized(0, 8) {
// CHECK-NEXT: var i: i32 = tid / 8 + t_r * 4
// CHECK-NEXT: var j: i32 = tid % 8 * 8 + v
// CHECK-NEXT: s[i, j] = X[bx * 16 + i, j]
// CUDA-LABEL: // exact (
// CUDA: #pragma unroll
// CUDA-NEXT: for (int32_t t_r = 0; t_r < 4; ++t_r) {
// CUDA-NOT: threadIdx.x
// CUDA: reinterpret_cast<const tile_cuda::bytes<16> *>(X + ((int64_t)(bx * 16) * X_stride0 + (int64_t)(tid / 8) * X_stride0 + (int64_t)(t_r * 4) * X_stride0 + (int64_t)(tid % 8 * 8)))[0];
[[tile::kernel]] void exact(T::tensor<const T::bf16, 2> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 16), T::threads(32));
  T::shared<T::bf16, 16, 64> s;
  T::copy(X.at(bx * 16, 0), s);
  Y(bx) = float(s(1, 2));
}

// 40 elements on 32 threads: 2 trips, the second tested.
// CHECK-LABEL: kernel ragged(
// CHECK: for t_r in slots(0, 2) {
// CHECK-NEXT: if (tid + t_r * 32 < 40) {
// CHECK-NEXT: var i: i32 = tid / 8 + t_r * 4
// CHECK-NEXT: var j: i32 = tid % 8
[[tile::kernel]] void ragged(T::tensor<const float, 2> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 5), T::threads(32));
  T::shared<float, 5, 8> s;
  T::copy(X.at(bx * 5, 0), s);
  Y(bx) = s(1, 2);
}

// 6 vectors a row: 6 does not divide 32, so the division stays whole.
// CHECK-LABEL: kernel thirds(
// CHECK: for t_r in slots(0, 2) {
// CHECK-NEXT: if (tid + t_r * 32 < 48) {
// CHECK-NEXT: for v in vectorized(0, 2) {
// CHECK-NEXT: var i: i32 = (tid + t_r * 32) / 6
// CHECK-NEXT: var j: i32 = (tid + t_r * 32) % 6 * 2 + v
[[tile::kernel]] void thirds(T::tensor<const float, 2> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 8), T::threads(32));
  T::shared<float, 8, 12> s;
  T::copy(X.at(bx * 8, 0), s);
  Y(bx) = s(1, 2);
}

// 32 vectors on 32 threads: one trip, a block in CUDA with the index the thread's.
// CHECK-LABEL: kernel one_trip(
// CHECK: for t_r in slots(0, 1) {
// CHECK-NEXT: for v in vectorized(0, 8) {
// CHECK-NEXT: var i: i32 = tid / 8
// CUDA-LABEL: // one_trip (
// CUDA: if (X_vec16) {
// CUDA-NEXT: {
// CUDA-NEXT: alignas(16) tile_cuda::bf16 vec_lanes[8];
[[tile::kernel]] void one_trip(T::tensor<const T::bf16, 2> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 4), T::threads(32));
  T::shared<T::bf16, 4, 64> s;
  T::copy(X.at(bx * 4, 0), s);
  Y(bx) = float(s(1, 2));
}

// 1024 vectors on 32 threads: 32 trips each, more than 8: the Threads loop stays (in CUDA
// a loop with the threads' stride).
// CHECK-LABEL: kernel many(
// CHECK: for t in threads(0, 1024) {
// CHECK-NEXT: for v in vectorized(0, 4) {
// CHECK-NEXT: var i: i32 = t / 16
// CUDA-LABEL: // many (
// CUDA: for (int32_t t = (int32_t)threadIdx.x; t < 1024; t += 32) {
[[tile::kernel]] void many(T::tensor<const float, 2> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 64), T::threads(32));
  T::shared<float, 64, 64> s;
  T::copy(X.at(bx * 64, 0), s);
  Y(bx) = s(1, 2);
}
