// Local buffers are each thread's own: every thread holds all of one. Filled by a reduction
// of a fragment or a shared tile, by a copy and by a parallel loop, then read at any index
// by every thread (a broadcast over a tile). On the GPU, splitting the work of filling a
// local over the threads left each thread one row of it (found by test/fuzz on the H200).
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS local_reduce_fragment
// CHECK: PASS local_reduce_shared
// CHECK: PASS local_copy_and_loop
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
  return check::result();
}
