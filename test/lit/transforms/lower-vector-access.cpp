// lower-vector-access: element loops over consecutive elements become explicit vector
// accesses. A thread's copies from a tensor: one VectorMove of the lanes' bytes through a
// local lane array, under the tensor's vector flag (tested once per launch) where the
// first lane's column is a multiple of the vector, the Threads / Slots loop unswitched on
// the flag when no bounds are tested; at a tile on the tensor's edge, the flag and the
// bounds of the first and last lanes; at a column that is no multiple of the vector, a
// unit last stride and the address's alignment tested at the access. Copies out store the
// lanes, then move them. Reads of a shared tile at consecutive elements, unconditional and
// in a loop that does not write the tile, are one vector read before the loop; a read
// under a condition stays element by element; from a swizzled tile, one read a 16-byte unit.
// Stores of a loop's one statement into a shared tile at consecutive elements go through
// lanes and one vector store (one a 16-byte unit in a swizzled tile), where the values do
// not read the tile.
// Lanes must be consecutive (checked at every lane) and guards monotone across them.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-before=lower-vector-access \
// RUN:   -fplugin-arg-tile-print-after=lower-vector-access -fplugin-arg-tile-stop-after=lower-vector-access %s 2>&1 \
// RUN:   | FileCheck %s
// The codegen prints the nodes: the flags' tests at the kernel's start, each move as
// 16-byte accesses, lane arrays aligned to the move.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=codegen %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CUDA

#include <tile/tile.h>
namespace T = tile;

// CHECK-LABEL: IR before lower-vector-access
// CHECK-LABEL: kernel rows(
// CHECK-NOT: vector_move
// CHECK: for v in vectorized(0, 8) {
// CHECK-LABEL: IR after lower-vector-access
// CHECK-LABEL: kernel rows(
// CHECK: if (i64(bx * 4) + i64(4) <= X.size(0) && i64(64) <= X.size(1)) {
// CHECK-NEXT: if (vector_ok(X, 16)) {
// CHECK-NEXT: for rs in slots(0, 1) {
// CHECK-NEXT: for cs in unroll(0, 1) {
// CHECK-NEXT: local vec_lanes: bf16[8]
// CHECK-NEXT: vector_move(vec_lanes, X + i64(bx * 4) * X.stride(0) + i64(rs * 4) * X.stride(0) + i64(tid / 8) * X.stride(0) + i64(cs * 64) + i64(tid % 8 * 8), 16 bytes in 16)
// CHECK-NEXT: for v in unroll(0, 8) {
// CHECK: f[(rs + cs) * 8 + v] = f32(vec_lanes[v])
// CHECK: } else (rare) {
// CHECK-NEXT: for rs in slots(0, 1) {
// CHECK-NEXT: for cs in unroll(0, 1) {
// CHECK-NEXT: for v in vectorized(0, 8) {
// CHECK: f[(rs + cs) * 8 + v] = f32(X[bx * 4 + i, j])
// CHECK: } else (rare) {
// CHECK: if (vector_ok(X, 16) && (i64(bx * 4 + (rs.1 * 4 + tid / 8)) < X.size(0) && i64(cs.1 * 64 + tid % 8 * 8) < X.size(1)) && (i64(bx * 4 + (rs.1 * 4 + tid / 8)) < X.size(0) && i64(cs.1 * 64 + tid % 8 * 8 + 7) < X.size(1))) {
// CHECK-NEXT: local vec_lanes.1: bf16[8]
// CHECK-NEXT: vector_move(vec_lanes.1, X +
// CHECK: } else (rare) {
// CHECK-NEXT: for v.1 in vectorized(0, 8) {
// CHECK: if (vector_ok(Y, 16)) {
// CHECK: local vec_lanes.2: bf16[8]
// CHECK-NEXT: for v.2 in unroll(0, 8) {
// CHECK: vec_lanes.2[v.2] = bf16(f[(rs.2 + cs.2) * 8 + v.2])
// CHECK: vector_move(Y + i64(bx * 4) * Y.stride(0) + i64(rs.2 * 4) * Y.stride(0) + i64(tid / 8) * Y.stride(0) + i64(cs.2 * 64) + i64(tid % 8 * 8), vec_lanes.2, 16 bytes in 16)
// CUDA-LABEL: // rows (
// CUDA: const bool X_vec16 = reinterpret_cast<uintptr_t>(X_arg.data) % 16 == 0 && X_arg.strides[1] == 1 && X_arg.strides[0] % 8 == 0;
// CUDA-NEXT: const bool Y_vec16 = reinterpret_cast<uintptr_t>(Y_arg.data) % 16 == 0 && Y_arg.strides[1] == 1 && Y_arg.strides[0] % 8 == 0;
// CUDA: if (X_vec16) {
// CUDA: alignas(16) tile_cuda::bf16 vec_lanes[8];
// CUDA-NEXT: reinterpret_cast<tile_cuda::bytes<16> *>(vec_lanes)[0] = reinterpret_cast<const tile_cuda::bytes<16> *>(X + ((int64_t)(bx * 4) * X_stride0 + (int64_t)(rs * 4) * X_stride0 + (int64_t)(tid / 8) * X_stride0 + (int64_t)(cs * 64) + (int64_t)(tid % 8 * 8)))[0];
[[tile::kernel]] void rows(T::tensor<const T::bf16, 2> X, T::tensor<T::bf16, 2> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 4), T::threads(32));
  T::fragment<float, 4, 64> f;
  T::copy(X.at(bx * 4, 0), f);
  T::copy(f, Y.at(bx * 4, 0));
}

// Column 3: no flag; 32 bytes of f32 as two 16-byte accesses.
// CHECK-LABEL: IR after lower-vector-access
// CHECK-LABEL: kernel shifted(
// CHECK-NOT: vector_ok(X
// CHECK: if (X.stride(1) == i64(1) && aligned(X + i64(bx * 4) * X.stride(0) + i64(rs * 4) * X.stride(0) + i64(tid / 8) * X.stride(0) + i64(3) * X.stride(1) + i64(cs * 64) * X.stride(1) + i64(tid % 8 * 8) * X.stride(1), 16)) {
// CHECK-NEXT: local vec_lanes: f32[8]
// CHECK-NEXT: vector_move(vec_lanes, X + i64(bx * 4) * X.stride(0) + i64(rs * 4) * X.stride(0) + i64(tid / 8) * X.stride(0) + i64(3) * X.stride(1) + i64(cs * 64) * X.stride(1) + i64(tid % 8 * 8) * X.stride(1), 32 bytes in 16)
// CHECK: } else (rare) {
// CHECK-NEXT: for v in vectorized(0, 8) {
// CUDA-LABEL: // shifted (
// CUDA-NOT: X_vec
// CUDA: if (X_stride1 == 1l && reinterpret_cast<uintptr_t>(X + ((int64_t)(bx * 4) * X_stride0 + (int64_t)(rs * 4) * X_stride0 + (int64_t)(tid / 8) * X_stride0 + 3l * X_stride1 + (int64_t)(cs * 64) * X_stride1 + (int64_t)(tid % 8 * 8) * X_stride1)) % 16 == 0) {
// CUDA-NEXT: alignas(16) float vec_lanes[8];
// CUDA-NEXT: reinterpret_cast<tile_cuda::bytes<16> *>(vec_lanes)[0] = reinterpret_cast<const tile_cuda::bytes<16> *>(X + ((int64_t)(bx * 4) * X_stride0 + (int64_t)(rs * 4) * X_stride0 + (int64_t)(tid / 8) * X_stride0 + 3l * X_stride1 + (int64_t)(cs * 64) * X_stride1 + (int64_t)(tid % 8 * 8) * X_stride1))[0];
// CUDA-NEXT: reinterpret_cast<tile_cuda::bytes<16> *>(vec_lanes)[1] = reinterpret_cast<const tile_cuda::bytes<16> *>(X + ((int64_t)(bx * 4) * X_stride0 + (int64_t)(rs * 4) * X_stride0 + (int64_t)(tid / 8) * X_stride0 + 3l * X_stride1 + (int64_t)(cs * 64) * X_stride1 + (int64_t)(tid % 8 * 8) * X_stride1))[1];
[[tile::kernel]] void shifted(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 4), T::threads(32));
  T::fragment<float, 4, 64> f;
  T::copy(X.at(bx * 4, 3), f);
  T::copy(f, Y.at(bx * 4, 0));
}

// CHECK-LABEL: IR after lower-vector-access
// CHECK-LABEL: kernel shared_reads(
// CHECK: barrier()
// CHECK-NEXT: for rs.2 in slots(0, 4) {
// CHECK-NEXT: for cs.2 in unroll(0, 1) {
// CHECK-NEXT: local ws_lanes: bf16[8]
// CHECK-NEXT: vector_move(ws_lanes, ws + cs.2 * 256 + tid * 8, 16 bytes in 16)
// CHECK-NEXT: for v.4 in vectorized(0, 8) {
// CHECK: f[(rs.2 + cs.2) * 8 + v.4] = f[(rs.2 + cs.2) * 8 + v.4] * f32(ws_lanes[v.4])
// CHECK: for v.5 in vectorized(0, 8) {
// CHECK-NOT: vector_move
// CHECK: select(c > i_1, f[(rs.3 + cs.3) * 8 + v.5] + f32(ws[j_1]), f[(rs.3 + cs.3) * 8 + v.5])
// CUDA-LABEL: // shared_reads (
// CUDA: alignas(16) tile_cuda::bf16 ws_lanes[8];
// CUDA-NEXT: reinterpret_cast<tile_cuda::bytes<16> *>(ws_lanes)[0] = reinterpret_cast<const tile_cuda::bytes<16> *>(ws + (cs_2 * 256 + tid * 8))[0];
[[tile::kernel]] void shared_reads(T::tensor<const T::bf16, 2> X, T::tensor<const T::bf16, 1> W, T::tensor<T::bf16, 2> Y,
                                   int c) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 4), T::threads(32));
  T::shared<T::bf16, 256> ws;
  T::fragment<float, 4, 256> f;
  T::copy(W.at(0), ws);
  T::copy(X.at(bx * 4, 0), f);
  for (auto [i, j] : T::parallel(4, 256))
    f(i, j) = f(i, j) * float(ws(j));
  for (auto [i, j] : T::parallel(4, 256))
    f(i, j) = c > i ? f(i, j) + float(ws(j)) : f(i, j);
  T::copy(f, Y.at(bx * 4, 0));
}

// A copy out of a shared tile: its lanes read from the tile as one vector, then stored as one.
// CHECK-LABEL: IR after lower-vector-access
// CHECK-LABEL: kernel copy_out(
// CHECK: if (vector_ok(Y, 16)) {
// CHECK: local vec_lanes.2: bf16[8]
// CHECK-NEXT: local s_lanes: bf16[8]
// CHECK-NEXT: vector_move(s_lanes, s + tid / 8 * 64 + tid % 8 * 8, 16 bytes in 16)
// CHECK-NEXT: for v.2 in unroll(0, 8) {
// CHECK: vec_lanes.2[v.2] = s_lanes[v.2]
// CHECK: vector_move(Y + i64(bx * 4) * Y.stride(0) + i64(tid / 8) * Y.stride(0) + i64(tid % 8 * 8), vec_lanes.2, 16 bytes in 16)
[[tile::kernel]] void copy_out(T::tensor<const T::bf16, 2> X, T::tensor<T::bf16, 2> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 4), T::threads(32));
  T::shared<T::bf16, 4, 64> s;
  T::copy(X.at(bx * 4, 0), s);
  for (auto [i, j] : T::parallel(4, 64))
    s(i, j) = s(i, j) * T::bf16(2.0f);
  T::copy(s, Y.at(bx * 4, 0));
}

// A swizzled tile: each 16-byte unit read where the swizzle put it (8 floats: two moves).
// CHECK-LABEL: IR after lower-vector-access
// CHECK-LABEL: kernel swizzled_reads(
// CHECK: local s_lanes: f32[8]
// CHECK-NEXT: vector_move(s_lanes, s + (rs * 8 + tid / 8) * 64 + (((cs * 64 + tid % 8 * 8) / 4 ^ (rs * 8 + tid / 8) % 8) * 4 + (cs * 64 + tid % 8 * 8) % 4), 16 bytes in 16)
// CHECK-NEXT: vector_move(s_lanes + 4, s + (rs * 8 + tid / 8) * 64 + (((cs * 64 + tid % 8 * 8 + 4) / 4 ^ (rs * 8 + tid / 8) % 8) * 4 + (cs * 64 + tid % 8 * 8 + 4) % 4), 16 bytes in 16)
[[tile::kernel]] void swizzled_reads(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 8), T::threads(64));
  T::shared<float, 8, 64> s;
  T::annotate_layout(s, T::layouts::swizzled(128));
  T::fragment<float, 8, 64> f;
  T::copy(X.at(bx * 8, 0), s);
  T::copy(s, f);
  T::copy(f, Y.at(bx * 8, 0));
}

// What stays element by element (found by review): lanes that are not consecutive in the
// tensor (every second column; a reversed row) or in a shared tile filled asynchronously;
// guards that are not monotone across the lanes (j % 3 < 2); a shared read on the right of
// && (it happens only when the left side holds).
// CHECK-LABEL: IR after lower-vector-access
// CHECK-LABEL: kernel not_consecutive(
// CHECK-NOT: vector_move(vec_lanes{{.*}}, X +
// CHECK: f[{{.*}}] = X[bx * 4 + i, 2 * j]
// CHECK-NOT: vector_move(vec_lanes{{.*}}, X +
// CHECK: g[{{.*}}] = X[bx * 4 + i_1, 63 - j_1]
// CHECK-NOT: vector_move(vec_lanes{{.*}}, X +
// CHECK: vector_move(Y +
[[tile::kernel]] void not_consecutive(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 4), T::threads(32));
  T::fragment<float, 4, 64> f, g;
  for (auto [i, j] : T::parallel(4, 64))
    f(i, j) = X(bx * 4 + i, 2 * j);
  for (auto [i, j] : T::parallel(4, 64))
    g(i, j) = X(bx * 4 + i, 63 - j);
  for (auto [i, j] : T::parallel(4, 64))
    f(i, j) = f(i, j) + g(i, j);
  T::copy(f, Y.at(bx * 4, 0));
}

// CHECK-LABEL: IR after lower-vector-access
// CHECK-LABEL: kernel spread_async(
// CHECK-NOT: async_vector_move
// CHECK: s[stage % 2, i{{.*}}, 2 * j{{.*}}] = vec_lanes[v
// CHECK-NOT: async_vector_move
// CHECK-LABEL: IR after lower-vector-access
[[tile::kernel]] void spread_async(T::tensor<const T::bf16, 2> A, T::tensor<float, 2> C) {
  auto [bx] = T::grid(T::ceildiv(A.size(0), 16), T::threads(64));
  T::shared<T::bf16, 16, 128> s;
  T::fragment<float, 16, 64> f;
  T::clear(f);
  for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(2))) {
    for (auto [i, j] : T::parallel(16, 64))
      s(i, 2 * j) = A(bx * 16 + i, k * 64 + j);
    for (auto [i, j] : T::parallel(16, 64))
      f(i, j) = f(i, j) + float(s(i, 2 * j));
  }
  T::copy(f, C.at(bx * 16, 0));
}

// CHECK-LABEL: kernel every_third(
// CHECK-NOT: vector_
// CHECK-LABEL: IR after lower-vector-access
[[tile::kernel]] void every_third(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 4), T::threads(32));
  T::fragment<float, 4, 64> f;
  for (auto [i, j] : T::parallel(4, 64))
    f(i, j) = j % 3 < 2 ? X(bx * 4 + i, j) : 0.0f;
  for (auto [i, j] : T::parallel(4, 64))
    if (j % 3 < 2)
      Y(bx * 4 + i, j) = f(i, j);
}

// CHECK-LABEL: kernel short_circuit(
// CHECK-NOT: ws_lanes
// CHECK: select(c < 4 && ws[c, j{{.*}}] > 0.0f
[[tile::kernel]] void short_circuit(T::tensor<const float, 2> W, T::tensor<const float, 2> X, T::tensor<float, 2> Y,
                                    int c) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 4), T::threads(32));
  T::shared<float, 4, 64> ws;
  T::fragment<float, 4, 64> f;
  T::copy(W.at(0, 0), ws);
  T::copy(X.at(bx * 4, 0), f);
  for (auto [i, j] : T::parallel(4, 64))
    f(i, j) = (c < 4 && ws(c, j) > 0.0f) ? f(i, j) : 0.0f;
  T::copy(f, Y.at(bx * 4, 0));
}

// An unsigned index wraps in 32 bits: the offset widens its sum whole, not term by term (a
// term widened apart would address 2^32 elements away; found by review).
// CHECK-LABEL: IR after lower-vector-access
// CHECK-LABEL: kernel unsigned_index(
// CHECK: vector_move(vec_lanes, X + i64((b - u32(1)) * u32(64) + u32(64) + u32(tid * 2)), 8 bytes in 8)
[[tile::kernel]] void unsigned_index(T::tensor<const float, 1> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 64), T::threads(32));
  T::shared<float, 64> s;
  unsigned b = bx;
  T::copy(X.at((b - 1u) * 64u + 64u), s);
  for (int i : T::parallel(64))
    Y(bx * 64 + i) = s(i);
}

// Stores into a shared tile at consecutive elements (a fragment's lanes into a tile): the
// values into lanes, then one vector store; into a swizzled tile, one a 16-byte unit. A
// value that reads the tile stays element by element. A loop whose shared reads became one
// vector stores its lanes as one vector too.
// CHECK-LABEL: IR after lower-vector-access
// CHECK-LABEL: kernel shared_writes(
// CHECK: local s_lanes: f32[4]
// CHECK-NEXT: for v{{.*}} in unroll(0, 4) {
// CHECK: s_lanes[v{{.*}}] = f[
// CHECK: vector_move(s + {{.*}}, s_lanes, 16 bytes in 16)
// CHECK: local t_lanes: f32[8]
// CHECK: vector_move(t + (rs{{.*}} * 8 + tid / 8) * 64 + (((cs{{.*}} * 64 + tid % 8 * 8) / 4 ^ (rs{{.*}} * 8 + tid / 8) % 8) * 4 + {{.*}}), t_lanes, 16 bytes in 16)
// CHECK-NEXT: vector_move(t + (rs{{.*}} * 8 + tid / 8) * 64 + (((cs{{.*}} * 64 + tid % 8 * 8 + 4) / 4 ^ (rs{{.*}} * 8 + tid / 8) % 8) * 4 + {{.*}}), t_lanes + 4, 16 bytes in 16)
// CHECK-NOT: vector_move(s +
// CHECK: s[i{{.*}}, j{{.*}}] = s[i{{.*}}, j{{.*}}] * 2.0f
// CHECK-NOT: vector_move(s +
// CHECK: local w_lanes: f32[4]
// CHECK: local s_lanes{{.*}}: f32[4]
// CHECK: vector_move(s + {{.*}}, s_lanes{{.*}}, 16 bytes in 16)
[[tile::kernel]] void shared_writes(T::tensor<const float, 2> X, T::tensor<const float, 1> W, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 8), T::threads(64));
  T::shared<float, 8, 32> s;
  T::shared<float, 8, 64> t;
  T::shared<float, 32> w;
  T::annotate_layout(t, T::layouts::swizzled(128));
  T::fragment<float, 8, 32> f;
  T::fragment<float, 8, 64> g;
  T::copy(X.at(bx * 8, 0), f);
  T::copy(X.at(bx * 8, 0), g);
  T::copy(W.at(0), w);
  T::copy(f, s);
  T::copy(g, t);
  for (auto [i, j] : T::parallel(8, 32))
    s(i, j) = s(i, j) * 2.0f;
  for (auto [i, j] : T::parallel(8, 32))
    s(i, j) = f(i, j) + w(j);
  T::copy(s, Y.at(bx * 8, 0));
  T::copy(t, Y.at(bx * 8, 0));
}
