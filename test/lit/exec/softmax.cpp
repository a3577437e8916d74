// Online softmax over rows in chunks, with the ragged last chunk masked to -infinity, in
// f32 and bf16: rows and columns that divide no tile size, a row shorter than one chunk,
// and many chunks; one-row tiles whose rows span several warps (their reductions combine
// the warps through shared memory), with thread counts of 128 and 256.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS softmax_f32_13x100
// CHECK: PASS softmax_f32_5x7
// CHECK: PASS softmax_bf16_37x333
// CHECK: PASS softmax_f32_3x1
// CHECK: PASS softmax_f32_1row_5x2500
// CHECK: PASS softmax_bf16_1row_3x5000
// CHECK: PASS softmax_f32_1row_4x700
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

template <class E, int BM, int BN, int NT>
[[tile::kernel]] void softmax(T::tensor<const E, 2> X, T::tensor<E, 2> Y) {
  const int M = X.size(0), N = X.size(1);
  auto [bx] = T::grid(T::ceildiv(M, BM), T::threads(NT));
  T::fragment<float, BM, BN> x;
  T::fragment<float, BM> m, l, part;
  T::fill(m, -T::infinity<float>());
  T::clear(l);
  const int chunks = T::ceildiv(N, BN);
  // Pass 1: running maximum m and running sum l of exp(x - m).
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx * BM, c * BN), x);
    for (auto [i, j] : T::parallel(BM, BN))
      x(i, j) = c * BN + j < N ? x(i, j) : -T::infinity<float>();
    T::reduce_max(x, part, 1);
    for (int i : T::parallel(BM)) {
      float m_new = T::max(m(i), part(i));
      l(i) = l(i) * T::exp(m(i) - m_new);
      m(i) = m_new;
    }
    for (auto [i, j] : T::parallel(BM, BN))
      x(i, j) = T::exp(x(i, j) - m(i));
    T::reduce_sum(x, part, 1);
    for (int i : T::parallel(BM))
      l(i) = l(i) + part(i);
  }
  // Pass 2: normalize; the columns past N are dropped by the copy.
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx * BM, c * BN), x);
    for (auto [i, j] : T::parallel(BM, BN))
      x(i, j) = T::exp(x(i, j) - m(i)) / l(i);
    T::copy(x, Y.at(bx * BM, c * BN));
  }
}

template <class E, int BM, int BN, int NT = 128> void run(const char *name, int M, int N, double tol) {
  // A range where exp(x) without the running maximum overflows float.
  auto x = check::random<E>(std::size_t(M) * N, -100, 100);
  std::vector<double> ref(x.size());
  for (int i = 0; i < M; ++i) {
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < N; ++j)
      mx = std::max(mx, check::value(x[i * N + j]));
    for (int j = 0; j < N; ++j)
      sum += std::exp(check::value(x[i * N + j]) - mx);
    for (int j = 0; j < N; ++j)
      ref[i * N + j] = std::exp(check::value(x[i * N + j]) - mx) / sum;
  }
  auto X = check::upload(x, {M, N});
  auto Y = check::upload(check::poisoned<E>(x.size()), {M, N});
  softmax<E, BM, BN, NT>(X, Y);
  check::close(name, ref, Y.to_vector(), tol);
}

int main() {
  run<float, 4, 32>("softmax_f32_13x100", 13, 100, 1e-5);
  run<float, 4, 32>("softmax_f32_5x7", 5, 7, 1e-5);
  run<T::bf16, 8, 64>("softmax_bf16_37x333", 37, 333, 1e-2);
  run<float, 2, 16>("softmax_f32_3x1", 3, 1, 1e-5);
  run<float, 1, 1024, 128>("softmax_f32_1row_5x2500", 5, 2500, 1e-5);
  run<T::bf16, 1, 2048, 256>("softmax_bf16_1row_3x5000", 3, 5000, 1e-2);
  run<float, 1, 512, 256>("softmax_f32_1row_4x700", 4, 700, 1e-5);
  return check::result();
}
