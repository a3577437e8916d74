// Local buffers are each thread's own: every thread holds all of one. Filled by a reduction
// of a fragment or a shared tile, by a copy and by a parallel loop, then read at any index
// by every thread (a broadcast over a tile). On the GPU, splitting the work of filling a
// local over the threads left each thread one row of it (found by test/fuzz on the H200);
// a fragment in registers copied into a local, or read by a loop that fills one, gave each
// thread only the elements it held.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS local_reduce_fragment
// CHECK: PASS local_reduce_shared
// CHECK: PASS local_copy_and_loop
// CHECK: PASS local_from_row_vector
// CHECK: PASS local_from_fragment
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <cmath>

namespace T = tile;

constexpr int BM = 16, BN = 64;

/// Y = X * rowsum(|X|)(i) per tile (Shared: the tile in shared memory, else a fragment).
template <bool Shared>
[[tile::kernel]] void scale_rows(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  const int M = X.size(0), N = X.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM), T::threads(192));
  std::conditional_t<Shared, T::shared<float, BM, BN>, T::fragment<float, BM, BN>> x;
  T::local<double, BM> s;
  T::fragment<float, BM, BN> y;
  T::copy(X.at(by * BM, bx * BN), x);
  T::reduce_abssum(x, s, 1);
  for (auto [i, j] : T::parallel(BM, BN))
    y(i, j) = x(i, j) * float(s(i));
  T::copy(y, Y.at(by * BM, bx * BN));
}

/// Y(i, j) = 2 * V(j) + j for a row of N <= 32 values copied into a local.
[[tile::kernel]] void local_row(T::tensor<const float, 1> V, T::tensor<float, 2> Y) {
  const int M = Y.size(0);
  auto [by] = T::grid(T::ceildiv(M, BM), T::threads(96));
  T::local<float, 32> v;
  T::copy(V.at(0), v);
  for (int j : T::parallel(32))
    v(j) = 2 * v(j) + j;
  T::fragment<float, BM, 32> y;
  for (auto [i, j] : T::parallel(BM, 32))
    y(i, j) = v(j);
  T::copy(y, Y.at(by * BM, 0));
}

/// Y(i, j) = X(i, j) * 2 rowsum(X)(15 - i): a local filled from a row vector, read at other rows.
[[tile::kernel]] void mirror_rows(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1, T::threads(128));
  T::fragment<float, 16, 64> x;
  T::fragment<float, 16> r;
  T::local<float, 16> l;
  T::copy(X.at(0, 0), x);
  T::reduce_sum(x, r, 1);
  for (int i : T::parallel(16))
    l(i) = r(i) * 2;
  for (auto [i, j] : T::parallel(16, 64))
    x(i, j) = x(i, j) * l(15 - i);
  T::copy(x, Y.at(0, 0));
}

/// Y(i, j) = X(15 - i, j) through a fragment copied into a local.
[[tile::kernel]] void mirror_copy(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1, T::threads(128));
  T::fragment<float, 16, 64> x;
  T::local<float, 16, 64> l;
  T::copy(X.at(0, 0), x);
  T::copy(x, l);
  for (auto [i, j] : T::parallel(16, 64))
    x(i, j) = l(15 - i, j);
  T::copy(x, Y.at(0, 0));
}

template <bool Shared> void run_scale(const char *name) {
  const int M = 53, N = 150;
  auto x = check::random<float>(std::size_t(M) * N, -2, 2);
  std::vector<double> ref(x.size());
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      // The row sum of |x| over this element's tile of columns (zeros past the edge).
      double s = 0;
      for (int c = j / BN * BN; c < std::min(N, j / BN * BN + BN); ++c)
        s += std::fabs(x[std::size_t(i) * N + c]);
      ref[std::size_t(i) * N + j] = double(x[std::size_t(i) * N + j]) * float(s);
    }
  auto X = check::upload(x, {M, N});
  auto Y = check::upload(check::poisoned<float>(x.size()), {M, N});
  scale_rows<Shared>(X, Y);
  check::close(name, ref, Y.to_vector(), 1e-5);
}

int main() {
  run_scale<false>("local_reduce_fragment");
  run_scale<true>("local_reduce_shared");
  const int M = 37, N = 32;
  auto v = check::random<float>(N, -3, 3);
  std::vector<double> ref(std::size_t(M) * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      ref[std::size_t(i) * N + j] = 2.0 * v[j] + j;
  auto V = check::upload(v, {N});
  auto Y = check::upload(check::poisoned<float>(ref.size()), {M, N});
  local_row(V, Y);
  check::close("local_copy_and_loop", ref, Y.to_vector(), 1e-6);

  auto x = check::random<float>(16 * 64, -2, 2);
  std::vector<double> rows(16, 0), ref2(x.size()), ref3(x.size());
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 64; ++j)
      rows[i] += x[i * 64 + j];
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 64; ++j) {
      ref2[i * 64 + j] = double(x[i * 64 + j]) * 2 * rows[15 - i];
      ref3[i * 64 + j] = x[(15 - i) * 64 + j];
    }
  auto X = check::upload(x, {16, 64});
  auto Y2 = check::upload(check::poisoned<float>(x.size()), {16, 64});
  mirror_rows(X, Y2);
  check::close("local_from_row_vector", ref2, Y2.to_vector(), 1e-5);
  auto Y3 = check::upload(check::poisoned<float>(x.size()), {16, 64});
  mirror_copy(X, Y3);
  check::close("local_from_fragment", ref3, Y3.to_vector(), 0);
  return check::result();
}
