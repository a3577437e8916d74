// Non-contiguous tensor views made with tile::tensor(ptr, sizes, strides): a transposed
// input, an output with padded rows and one with every other column (the gaps stay
// untouched), a permuted rank-3 view, and a gemm operand given as a transposed view.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS strided_transposed_to_padded
// CHECK: PASS strided_every_other_column
// CHECK: PASS strided_permuted_rank3
// CHECK: PASS strided_gemm_b_view
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

/// Y = 2 X + 1 over [16, 16] tiles.
[[tile::kernel]] void affine(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx, by] = T::grid(T::ceildiv(X.size(1), 16), T::ceildiv(X.size(0), 16));
  T::fragment<float, 16, 16> f;
  T::copy(X.at(by * 16, bx * 16), f);
  for (auto [i, j] : T::parallel(16, 16))
    f(i, j) = 2.0f * f(i, j) + 1.0f;
  T::copy(f, Y.at(by * 16, bx * 16));
}

/// Y = X - 1 over [4, 8, 8] tiles.
[[tile::kernel]] void minus_one(T::tensor<const float, 3> X, T::tensor<float, 3> Y) {
  auto [bx, by, bz] = T::grid(T::ceildiv(X.size(2), 8), T::ceildiv(X.size(1), 8), T::ceildiv(X.size(0), 4));
  T::shared<float, 4, 8, 8> s;
  T::copy(X.at(bz * 4, by * 8, bx * 8), s);
  for (auto [i, j, k] : T::parallel(4, 8, 8))
    s(i, j, k) = s(i, j, k) - 1.0f;
  T::copy(s, Y.at(bz * 4, by * 8, bx * 8));
}

template <int BM, int BN, int BK>
[[tile::kernel]] void gemm(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM));
  T::shared<T::bf16, BM, BK> As;
  T::shared<T::bf16, BK, BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, BK), T::stages(2))) {
    T::copy(A.at(by * BM, k * BK), As);
    T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * BM, bx * BN));
}

int main() {
  const float guard = -777.0f;
  const int M = 37, N = 29;
  {
    // X[i, j] = xt[j, i]; Y rows are ld = N + 5 apart.
    const int ld = N + 5;
    auto xt = check::random<float>(std::size_t(N) * M);
    std::vector<float> y(std::size_t(M) * ld, guard);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        y[i * ld + j] = 2.0f * xt[j * M + i] + 1.0f;
    auto Xt = check::upload(xt, {N, M});
    auto Yp = check::upload(std::vector<float>(y.size(), guard), {M, ld});
    affine(T::tensor<const float, 2>(Xt.data(), {M, N}, {1, M}), T::tensor<float, 2>(Yp.data(), {M, N}, {ld, 1}));
    check::equal("strided_transposed_to_padded", y, Yp.to_vector());
  }
  {
    // Y[i, j] is element (i, 2 j) of a [M, 2 N] buffer.
    auto x = check::random<float>(std::size_t(M) * N);
    std::vector<float> y(std::size_t(M) * 2 * N, guard);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        y[i * 2 * N + 2 * j] = 2.0f * x[i * N + j] + 1.0f;
    auto X = check::upload(x, {M, N});
    auto Y2 = check::upload(std::vector<float>(y.size(), guard), {M, 2 * N});
    affine(X, T::tensor<float, 2>(Y2.data(), {M, N}, {2 * N, 2}));
    check::equal("strided_every_other_column", y, Y2.to_vector());
  }
  {
    // X[a, b, c] is stored at p[c, a, b].
    const int A = 5, B = 11, C = 9;
    auto p = check::random<float>(std::size_t(A) * B * C);
    std::vector<float> y;
    for (int a = 0; a < A; ++a)
      for (int b = 0; b < B; ++b)
        for (int c = 0; c < C; ++c)
          y.push_back(p[(c * A + a) * B + b] - 1.0f);
    auto P = check::upload(p, {C, A, B});
    auto Y = check::upload(check::poisoned<float>(y.size()), {A, B, C});
    minus_one(T::tensor<const float, 3>(P.data(), {A, B, C}, {B, 1, A * B}), Y);
    check::equal("strided_permuted_rank3", y, Y.to_vector());
  }
  {
    // B[k, j] = bt[j, k].
    const int K = 45;
    auto a = check::random<T::bf16>(std::size_t(M) * K), bt = check::random<T::bf16>(std::size_t(N) * K);
    std::vector<double> ref(std::size_t(M) * N, 0.0);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        for (int k = 0; k < K; ++k)
          ref[i * N + j] += check::value(a[i * K + k]) * check::value(bt[j * K + k]);
    auto Am = check::upload(a, {M, K}), Bt = check::upload(bt, {N, K});
    auto Cm = check::upload(check::poisoned<float>(ref.size()), {M, N});
    gemm<32, 16, 16>(Am, T::tensor<const T::bf16, 2>(Bt.data(), {K, N}, {1, K}), Cm);
    check::close("strided_gemm_b_view", ref, Cm.to_vector(), 1e-5);
  }
  return check::result();
}
