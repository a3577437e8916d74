// int32 reduce_sum / reduce_max / reduce_min of block tiles, combined across blocks into
// small outputs with atomic_add, atomic_max and atomic_min (region and element forms, onto
// outputs that already hold values), on matrices that divide no tile size. And f32 values
// added atomically into bf16 and f16 outputs: the sum is rounded once (the value was
// rounded to the output's type first on the GPU, a second rounding: found by test/fuzz).
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS row_sum_45x71
// CHECK: PASS row_max_45x71
// CHECK: PASS col_min_45x71
// CHECK: PASS total_45x71
// CHECK: PASS row_sum_3x100
// CHECK: PASS row_max_3x100
// CHECK: PASS col_min_3x100
// CHECK: PASS total_3x100
// CHECK: PASS add_f32_into_bf16
// CHECK: PASS add_f32_into_f16
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <algorithm>
#include <cmath>

namespace T = tile;

constexpr int int_max = 2147483647;

template <int BM, int BN>
[[tile::kernel]] void reduce_tiles(T::tensor<const int, 2> X, T::tensor<int, 1> RowSum, T::tensor<int, 1> RowMax,
                                   T::tensor<int, 1> ColMin, T::tensor<int, 1> Total) {
  const int M = X.size(0), N = X.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM));
  T::fragment<int, BM, BN> x, hi, lo;
  T::fragment<int, BM> rsum, rmax;
  T::fragment<int, BN> cmin;
  T::fragment<int, 1> tsum;
  T::copy(X.at(by * BM, bx * BN), x);
  // Elements past the edge read as 0: keep them out of the maximum and the minimum.
  for (auto [i, j] : T::parallel(BM, BN)) {
    bool inside = by * BM + i < M && bx * BN + j < N;
    hi(i, j) = inside ? x(i, j) : T::lowest<int>();
    lo(i, j) = inside ? x(i, j) : int_max;
  }
  T::reduce_sum(x, rsum, 1);
  T::reduce_max(hi, rmax, 1);
  T::reduce_min(lo, cmin, 0);
  T::reduce_sum(rsum, tsum, 0);
  T::atomic_add(RowSum.at(by * BM), rsum); // rows past M are dropped
  for (int i : T::parallel(BM))
    if (by * BM + i < M)
      T::atomic_max(RowMax(by * BM + i), rmax(i));
  T::atomic_min(ColMin.at(bx * BN), cmin);
  for (int i : T::parallel(1))
    T::atomic_add(Total(0), tsum(i));
}

template <int BM, int BN> void run(int M, int N) {
  auto x = check::random<int>(std::size_t(M) * N, -1000, 1000);
  // The outputs start with values the atomics must combine with.
  auto row_sum = check::random<int>(M, -100, 100), row_max = check::random<int>(M, -1000, 1500);
  auto col_min = check::random<int>(N, -1500, 1000), total = check::random<int>(1, -100, 100);
  auto X = check::upload(x, {M, N});
  auto RowSum = check::upload(row_sum, {M}), RowMax = check::upload(row_max, {M});
  auto ColMin = check::upload(col_min, {N}), Total = check::upload(total, {1});
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      int v = x[i * N + j];
      row_sum[i] += v;
      row_max[i] = std::max(row_max[i], v);
      col_min[j] = std::min(col_min[j], v);
      total[0] += v;
    }
  reduce_tiles<BM, BN>(X, RowSum, RowMax, ColMin, Total);
  std::string size = std::to_string(M) + "x" + std::to_string(N);
  check::equal("row_sum_" + size, row_sum, RowSum.to_vector());
  check::equal("row_max_" + size, row_max, RowMax.to_vector());
  check::equal("col_min_" + size, col_min, ColMin.to_vector());
  check::equal("total_" + size, total, Total.to_vector());
}

/// Y += X element-wise (region form) and Z(i) += X(0, i) (element form), X in f32.
template <class E> [[tile::kernel]] void add_narrow(T::tensor<const float, 2> X, T::tensor<E, 2> Y, T::tensor<E, 1> Z) {
  auto [bx] = T::grid(1, T::threads(32));
  T::fragment<float, 4, 8> x;
  T::copy(X.at(0, 0), x);
  T::atomic_add(Y.at(0, 0), x);
  for (int i : T::serial(3))
    T::atomic_add(Z(i), X(0, i));
}

/// Onto 1.0, v = u/2 (1 + 2^-8), u the output type's spacing at 1: 1 + v rounds to 1 + u,
/// but v rounded to the output type first is u/2, and 1 + u/2 is a tie that rounds to 1.
template <class E> void run_narrow(const char *name, int mantissa_bits) {
  const float u = std::ldexp(1.0f, -mantissa_bits), v = u / 2 * (1 + std::ldexp(1.0f, -8));
  std::vector<float> x(4 * 8, v);
  x[5] = -v; // and one below (1 - u/2 either way)
  auto X = check::upload(x, {4, 8});
  auto Y = check::upload(std::vector<E>(32, E(1.0f)), {4, 8});
  auto Z = check::upload(std::vector<E>(3, E(1.0f)), {3});
  add_narrow<E>(X, Y, Z);
  std::vector<double> ref;
  for (float e : x)
    ref.push_back(float(E(1.0f + e))); // 1 + e is exact in float: one rounding, to E
  auto y = Y.to_vector(), z = Z.to_vector();
  y.insert(y.end(), z.begin(), z.end());
  ref.insert(ref.end(), ref.begin(), ref.begin() + 3);
  check::equal(name, ref, y);
}

int main() {
  run<16, 32>(45, 71);
  run<8, 24>(3, 100);
  run_narrow<T::bf16>("add_f32_into_bf16", 7);
  run_narrow<T::f16>("add_f32_into_f16", 10);
  return check::result();
}
