// int32 reduce_sum / reduce_max / reduce_min of block tiles, combined across blocks into
// small outputs with atomic_add, atomic_max and atomic_min (region and element forms, onto
// outputs that already hold values), on matrices that divide no tile size.
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
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <algorithm>

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

int main() {
  run<16, 32>(45, 71);
  run<8, 24>(3, 100);
  return check::result();
}
