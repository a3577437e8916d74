// Kernels named like tile operations (`copy`, `gemm`, `fill`, `reduce_sum`), called from the
// host with arrays: argument-dependent lookup must find the kernels, not tile::copy and the
// others (whose host bodies do nothing), so each output is the kernel's, checked against
// float64 with outputs poisoned.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS copy
// CHECK: PASS gemm
// CHECK: PASS fill
// CHECK: PASS reduce_sum
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

[[tile::kernel]] void copy(T::tensor<const float, 1> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 128), T::threads(128));
  T::fragment<float, 128> x;
  T::copy(X.at(bx * 128), x);
  T::copy(x, Y.at(bx * 128));
}

[[tile::kernel]] void gemm(T::tensor<const float, 2> A, T::tensor<const float, 2> B, T::tensor<float, 2> C) {
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 32), T::ceildiv(C.size(0), 32), T::threads(128));
  T::shared<float, 32, 32> As, Bs;
  T::fragment<float, 32, 32> acc;
  T::clear(acc);
  for (int k : T::serial(T::ceildiv(A.size(1), 32))) {
    T::copy(A.at(by * 32, k * 32), As);
    T::copy(B.at(k * 32, bx * 32), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 32, bx * 32));
}

[[tile::kernel]] void fill(T::tensor<float, 1> Y, float v) {
  auto [bx] = T::grid(T::ceildiv(Y.size(0), 128), T::threads(128));
  T::fragment<float, 128> y;
  T::fill(y, v);
  T::copy(y, Y.at(bx * 128));
}

[[tile::kernel]] void reduce_sum(T::tensor<const float, 2> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 4), T::threads(128));
  T::fragment<float, 4, 64> x;
  T::fragment<float, 4> s;
  T::copy(X.at(bx * 4, 0), x);
  T::reduce_sum(x, s, 1);
  T::copy(s, Y.at(bx * 4));
}

int main() {
  {
    const int n = 300;
    auto x = check::random<float>(n);
    auto X = check::upload(x, {n});
    auto Y = check::upload(check::poisoned<float>(n), {n});
    copy(X, Y);
    check::close("copy", std::vector<double>(x.begin(), x.end()), Y.to_vector(), 0);
  }
  {
    const int M = 70, N = 50, K = 40;
    auto a = check::random<float>(std::size_t(M) * K), b = check::random<float>(std::size_t(K) * N);
    std::vector<double> ref(std::size_t(M) * N, 0.0);
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k)
        for (int j = 0; j < N; ++j)
          ref[std::size_t(i) * N + j] += double(a[std::size_t(i) * K + k]) * b[std::size_t(k) * N + j];
    auto A = check::upload(a, {M, K}), B = check::upload(b, {K, N});
    auto C = check::upload(check::poisoned<float>(std::size_t(M) * N), {M, N});
    gemm(A, B, C);
    check::close("gemm", ref, C.to_vector(), 1e-5);
  }
  {
    const int n = 200;
    auto Y = check::upload(check::poisoned<float>(n), {n});
    fill(Y, 2.5f);
    check::close("fill", std::vector<double>(n, 2.5), Y.to_vector(), 0);
  }
  {
    const int M = 10;
    auto x = check::random<float>(std::size_t(M) * 64);
    std::vector<double> ref(M, 0.0);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < 64; ++j)
        ref[i] += x[std::size_t(i) * 64 + j];
    auto X = check::upload(x, {M, 64});
    auto Y = check::upload(check::poisoned<float>(M), {M});
    reduce_sum(X, Y);
    check::close("reduce_sum", ref, Y.to_vector(), 1e-5);
  }
  return check::result();
}
