// Views with a run-time extent: `X.rows(begin, end)` inside a kernel (begin and end read from
// tensors). Tiles that reach past a view's last row read zeros there and write nothing there:
// groups separated by guard rows keep their guards, sums over a group's tile do not see the
// next group, a GEMM over each group's rows (a pipelined loop over a view made before it)
// writes each group's rows only. Element access and size(0) through a view, a view of a
// view, an empty group, and ends past the tensor (clipped); on sizes that divide no tile.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS scaled_groups
// CHECK: PASS group_sums
// CHECK: PASS element_access
// CHECK: PASS grouped_gemm
// CHECK: PASS host_rows
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

/// Y's rows of group g (First(g) .. First(g) + Count(g) - 1) = 2 X's, 16 rows a block.
[[tile::kernel]] void scale_groups(T::tensor<const float, 2> X, T::tensor<const int, 1> First,
                                   T::tensor<const int, 1> Count, T::tensor<float, 2> Y) {
  auto [bx, g] = T::grid(8, First.size(0));
  const int first = First(g);
  auto Xg = X.rows(first, first + Count(g));
  auto Yg = Y.rows(first, first + Count(g));
  if (bx * 16 < Xg.size(0)) {
    T::fragment<float, 16, 64> f;
    T::copy(Xg.at(bx * 16, 0), f);
    for (auto [i, j] : T::parallel(16, 64))
      f(i, j) = 2.0f * f(i, j);
    T::copy(f, Yg.at(bx * 16, 0));
  }
}

/// Sums(g, bx, j) = the sum over the 16 rows of tile bx of group g (rows past the group: 0).
[[tile::kernel]] void group_sums(T::tensor<const float, 2> X, T::tensor<const int, 1> First,
                                 T::tensor<const int, 1> Count, T::tensor<float, 3> Sums) {
  auto [bx, g] = T::grid(8, First.size(0));
  auto Xg = X.rows(First(g), First(g) + Count(g));
  T::shared<float, 16, 64> s;
  T::fragment<float, 64> sum;
  T::copy(Xg.at(bx * 16, 0), s);
  T::reduce_sum(s, sum, 0);
  T::copy(sum, Sums.at(g, bx, 0));
}

/// Element access through a view of a view: Z(First(g) + 1 + i, 0) = i and
/// Z(First(g) + 1 + i, 1) = the inner view's size(0), for its rows.
[[tile::kernel]] void element_access(T::tensor<const int, 1> First, T::tensor<const int, 1> Count,
                                     T::tensor<int, 2> Z) {
  auto [g] = T::grid(First.size(0));
  auto Zg = Z.rows(First(g), First(g) + Count(g));
  auto inner = Zg.rows(1, 1000000); // rows 1.. of the group, the end clipped
  for (int i : T::parallel(64))
    if (i < inner.size(0)) {
      inner(i, 0) = i;
      inner(i, 1) = int(inner.size(0));
    }
}

/// C's rows of group g = A's rows of group g times B; 32 x 32 tiles, K in steps of 16.
[[tile::kernel]] void grouped_gemm(T::tensor<const T::f16, 2> A, T::tensor<const T::f16, 2> B,
                                   T::tensor<const int, 1> Offsets, T::tensor<float, 2> C) {
  auto [bx, by, g] = T::grid(T::ceildiv(B.size(1), 32), 4, Offsets.size(0) - 1);
  auto Ag = A.rows(Offsets(g), Offsets(g + 1));
  auto Cg = C.rows(Offsets(g), Offsets(g + 1));
  T::shared<T::f16, 32, 16> As;
  T::shared<T::f16, 16, 32> Bs;
  T::fragment<float, 32, 32> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(A.size(1), 16), T::stages(2))) {
    T::copy(Ag.at(by * 32, k * 16), As);
    T::copy(B.at(k * 16, bx * 32), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, Cg.at(by * 32, bx * 32));
}

int main() {
  // Groups of 37, 0, 64 and 5 rows, separated by 3 guard rows, and a last group whose
  // count runs past X's end (clipped).
  const int cols = 64, total = 140;
  const std::vector<int> first{0, 40, 43, 110, 118}, count{37, 0, 64, 5, 50};
  std::vector<bool> in_group(total, false);
  for (size_t g = 0; g < first.size(); ++g)
    for (int r = first[g]; r < std::min(total, first[g] + count[g]); ++r)
      in_group[r] = true;
  auto x = check::random<float>(std::size_t(total) * cols);
  auto X = check::upload(x, {total, cols});
  const int groups = int(first.size());
  auto First = check::upload(first, {groups});
  auto Count = check::upload(count, {groups});
  {
    const float guard = -777.0f;
    auto Y = check::upload(std::vector<float>(std::size_t(total) * cols, guard), {total, cols});
    scale_groups(X, First, Count, Y);
    std::vector<double> ref(std::size_t(total) * cols);
    for (int r = 0; r < total; ++r)
      for (int c = 0; c < cols; ++c)
        ref[r * cols + c] = in_group[r] ? 2.0 * x[r * cols + c] : guard;
    check::close("scaled_groups", ref, Y.to_vector(), 0);
  }
  {
    auto Sums = check::upload(check::poisoned<float>(groups * 8 * cols), {groups, 8, cols});
    group_sums(X, First, Count, Sums);
    std::vector<double> ref(groups * 8 * cols, 0.0);
    for (int g = 0; g < groups; ++g)
      for (int r = first[g]; r < std::min(total, first[g] + count[g]); ++r)
        for (int c = 0; c < cols; ++c)
          ref[(g * 8 + (r - first[g]) / 16) * cols + c] += x[r * cols + c];
    check::close("group_sums", ref, Sums.to_vector(), 1e-5);
  }
  {
    auto Z = check::upload(std::vector<int>(total * 2, -1), {total, 2});
    element_access(First, Count, Z);
    std::vector<int> ref(total * 2, -1);
    for (int g = 0; g < groups; ++g) {
      const int end = std::min(total, first[g] + count[g]), rows = std::max(0, end - first[g] - 1);
      for (int i = 0; i < std::min(rows, 64); ++i) {
        ref[(first[g] + 1 + i) * 2] = i;
        ref[(first[g] + 1 + i) * 2 + 1] = rows;
      }
    }
    check::equal("element_access", ref, Z.to_vector());
  }
  {
    // 3 groups of 50, 1 and 75 rows; K = 40, N = 72.
    const std::vector<int> offsets{0, 50, 51, 126};
    const int m = offsets.back(), k = 40, n = 72;
    auto a = check::random<T::f16>(std::size_t(m) * k);
    auto b = check::random<T::f16>(std::size_t(k) * n);
    auto A = check::upload(a, {m, k});
    auto B = check::upload(b, {k, n});
    auto Offsets = check::upload(offsets, {int(offsets.size())});
    auto C = check::upload(check::poisoned<float>(m * n), {m, n});
    grouped_gemm(A, B, Offsets, C);
    std::vector<double> ref(std::size_t(m) * n, 0.0);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        for (int p = 0; p < k; ++p)
          ref[i * n + j] += check::value(a[i * k + p]) * check::value(b[p * n + j]);
    check::close("grouped_gemm", ref, C.to_vector(), 1e-3);
  }
  {
    // The host's rows(): the same clipping.
    T::tensor<const float, 2> t(x.data(), {total, cols});
    auto r1 = t.rows(130, 200), r2 = t.rows(-5, 3), r3 = t.rows(50, 20);
    const bool ok = r1.size(0) == 10 && r1.data() == x.data() + 130 * cols && r2.size(0) == 3 &&
                    r2.data() == x.data() && r3.size(0) == 0 && r1.size(1) == cols;
    check::report("host_rows", ok);
  }
  return check::result();
}
