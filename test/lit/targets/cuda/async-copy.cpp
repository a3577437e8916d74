// Copies into shared memory in a pipelined loop: cp.async moves bytes as they are, so a copy
// that keeps its element type uses it and one that converts (bf16 into an f32 tile) loads,
// converts and stores (it once took 16 bytes of bf16 for four floats: found by test/fuzz).
// (lower-vector-access decides: its IR shows the async moves; the codegen prints them.)
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=lower-vector-access,codegen %s 2>&1 \
// RUN:   | FileCheck %s

#include <tile/tile.h>
namespace T = tile;

// CHECK-LABEL: kernel same_type(
// CHECK: async {
// CHECK: async_vector_move(xs + stage % 2 * 1024 + (tid / 8 * 64 + tid % 8 * 8), X + i64(bx * 16) * X.stride(0) + i64(tid / 8) * X.stride(0) + i64(stage * 64) + i64(tid % 8 * 8), 16 bytes in 16)
// CHECK-LABEL: kernel converting(
// CHECK-NOT: async_vector_move
// CHECK: vector_move(vec_lanes, X + 
// CHECK-NOT: async_vector_move
// CHECK-LABEL: // same_type (
// CHECK: tile_cuda::cp_async<16>(reinterpret_cast<char *>(xs + (stage % 2 * 1024 + (tid / 8 * 64 + tid % 8 * 8))) + 0, reinterpret_cast<const char *>(X + ((int64_t)(bx * 16) * X_stride0 + (int64_t)(tid / 8) * X_stride0 + (int64_t)(stage * 64) + (int64_t)(tid % 8 * 8))) + 0);
// CHECK-LABEL: // converting (
// CHECK-NOT: cp_async<
// CHECK: xs[{{.*}}] = tile_cuda::cvt<float>(X[
// CHECK-NOT: cp_async<
// CHECK: cp_async_commit
// CHECK-NOT: cp_async<
#define ROW_SUMS(NAME, E, S_E)                                                               \
  [[tile::kernel]] void NAME(T::tensor<const E, 2> X, T::tensor<float, 1> S) {              \
    auto [bx] = T::grid(T::ceildiv(X.size(0), 16));                                          \
    T::shared<S_E, 16, 64> xs;                                                               \
    T::fragment<float, 16, 64> xf;                                                           \
    T::fragment<float, 16> acc, part;                                                        \
    T::clear(acc);                                                                           \
    for (int k : T::pipelined(T::ceildiv(X.size(1), 64), T::stages(2))) {                    \
      T::copy(X.at(bx * 16, k * 64), xs);                                                    \
      T::copy(xs, xf);                                                                       \
      T::reduce_sum(xf, part, 1);                                                            \
      for (int i : T::parallel(16))                                                          \
        acc(i) = acc(i) + part(i);                                                           \
    }                                                                                        \
    T::copy(acc, S.at(bx * 16));                                                             \
  }

ROW_SUMS(same_type, T::f16, T::f16)
ROW_SUMS(converting, T::bf16, float)
