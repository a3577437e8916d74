// tile::use_swizzle (block rasterization in panels, including panels that divide neither
// grid extent) and tile::annotate_layout change no result: a gemm gives bit-identical
// output with and without them, and matches a float64 reference. On the GPU the swizzled
// tiles are stored swizzled (their copies, ldmatrix's addresses) and col_major is not acted
// on (a remark says so).
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS reference
// CHECK: PASS swizzle_panel_default
// CHECK: PASS swizzle_panel_1
// CHECK: PASS swizzle_panel_3
// CHECK: PASS swizzle_panel_16
// CHECK: PASS annotate_layout_swizzled
// CHECK: PASS annotate_layout_col_major
// CHECK: PASS gemm64_reference
// CHECK: PASS annotate_layout_swizzled_128
// CHECK: PASS dense_f32_rows
// CHECK: PASS swizzled_f32_rows
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

/// Panel 0: no use_swizzle; -1: use_swizzle(); Layout 0: no annotation, 1: swizzled(64)
/// shared operands, 2: a column-major A tile.
template <int Panel, int Layout>
[[tile::kernel]] void gemm(T::tensor<const T::f16, 2> A, T::tensor<const T::f16, 2> B, T::tensor<float, 2> C) {
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 16), T::ceildiv(M, 16));
  if constexpr (Panel == -1)
    T::use_swizzle();
  else if constexpr (Panel > 0)
    T::use_swizzle(Panel);
  T::shared<T::f16, 16, 32> As;
  T::shared<T::f16, 32, 16> Bs;
  if constexpr (Layout == 1) {
    T::annotate_layout(As, T::layouts::swizzled(64));
    T::annotate_layout(Bs, T::layouts::swizzled(32));
  } else if constexpr (Layout == 2) {
    T::annotate_layout(As, T::layouts::col_major());
  }
  T::fragment<float, 16, 16> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 32), T::stages(2))) {
    T::copy(A.at(by * 16, k * 32), As);
    T::copy(B.at(k * 32, bx * 16), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 16, bx * 16));
}

/// Tiles of 64 x 64 x 64 on tensor cores (GPU): Layout 0 pads the operands' rows, 1 swizzles
/// their 16-byte chunks within 128-byte spans.
template <int Layout>
[[tile::kernel]] void gemm64(T::tensor<const T::f16, 2> A, T::tensor<const T::f16, 2> B, T::tensor<float, 2> C) {
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 64), T::ceildiv(M, 64), T::threads(128));
  T::shared<T::f16, 64, 64> As, Bs;
  if constexpr (Layout == 1) {
    T::annotate_layout(As, T::layouts::swizzled(128));
    T::annotate_layout(Bs, T::layouts::swizzled(128));
  }
  T::fragment<float, 64, 64> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(2))) {
    T::copy(A.at(by * 64, k * 64), As);
    T::copy(B.at(k * 64, bx * 64), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 64, bx * 64));
}

/// f32 rows through a swizzled shared tile into registers: each thread reads 8 consecutive
/// floats of a row, two 16-byte units the swizzle places apart (on the GPU, one vector read
/// a unit: lower-vector-access).
template <bool Swizzled>
[[tile::kernel]] void scaled_rows(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 8), T::threads(64));
  T::shared<float, 8, 64> s;
  if constexpr (Swizzled)
    T::annotate_layout(s, T::layouts::swizzled(128));
  T::fragment<float, 8, 64> f;
  T::copy(X.at(bx * 8, 0), s);
  T::copy(s, f);
  for (auto [i, j] : T::parallel(8, 64))
    f(i, j) = f(i, j) * 2.0f + float(i);
  T::copy(f, Y.at(bx * 8, 0));
}

int main() {
  const int M = 100, N = 70, K = 75; // a 5 x 7 grid
  auto a = check::random<T::f16>(std::size_t(M) * K), b = check::random<T::f16>(std::size_t(K) * N);
  std::vector<double> ref(std::size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j)
        ref[i * N + j] += check::value(a[i * K + k]) * check::value(b[k * N + j]);
  auto A = check::upload(a, {M, K}), B = check::upload(b, {K, N});
  auto run = [&](auto kernel) {
    auto C = check::upload(check::poisoned<float>(ref.size()), {M, N});
    kernel(A, B, C);
    return C.to_vector();
  };
  auto plain = run([](auto &a, auto &b, auto &c) { gemm<0, 0>(a, b, c); });
  check::close("reference", ref, plain, 1e-5);
  check::equal("swizzle_panel_default", plain, run([](auto &a, auto &b, auto &c) { gemm<-1, 0>(a, b, c); }));
  check::equal("swizzle_panel_1", plain, run([](auto &a, auto &b, auto &c) { gemm<1, 0>(a, b, c); }));
  check::equal("swizzle_panel_3", plain, run([](auto &a, auto &b, auto &c) { gemm<3, 0>(a, b, c); }));
  check::equal("swizzle_panel_16", plain, run([](auto &a, auto &b, auto &c) { gemm<16, 0>(a, b, c); }));
  check::equal("annotate_layout_swizzled", plain, run([](auto &a, auto &b, auto &c) { gemm<0, 1>(a, b, c); }));
  check::equal("annotate_layout_col_major", plain, run([](auto &a, auto &b, auto &c) { gemm<0, 2>(a, b, c); }));
  auto padded = run([](auto &a, auto &b, auto &c) { gemm64<0>(a, b, c); });
  check::close("gemm64_reference", ref, padded, 1e-5);
  check::equal("annotate_layout_swizzled_128", padded, run([](auto &a, auto &b, auto &c) { gemm64<1>(a, b, c); }));

  const int R = 37, W = 61; // a partial block of rows and of columns
  auto x = check::random<float>(std::size_t(R) * W);
  std::vector<double> want(x.size());
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < W; ++j)
      want[i * W + j] = 2.0 * x[i * W + j] + i % 8;
  auto X = check::upload(x, {R, W});
  auto rows = [&](auto kernel) {
    auto Y = check::upload(check::poisoned<float>(want.size()), {R, W});
    kernel(X, Y);
    return Y.to_vector();
  };
  auto dense = rows([](auto &x, auto &y) { scaled_rows<false>(x, y); });
  check::close("dense_f32_rows", want, dense, 1e-6);
  check::equal("swizzled_f32_rows", dense, rows([](auto &x, auto &y) { scaled_rows<true>(x, y); }));
  return check::result();
}
