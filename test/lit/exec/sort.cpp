// sort and topk: rows of a shared tile sorted in place along either dimension, ascending and
// descending, with values moved along (a permutation that follows its keys), rows whose
// length is no power of two (40, 3) and one of a single element; and a router's top-k (the 5
// largest of 40 experts for each of 300 tokens, largest first, equal scores by position),
// from a fragment and from a shared tile; on shapes that divide no tile size, with many ties.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS sort_rows_ascending
// CHECK: PASS sort_rows_descending_values
// CHECK: PASS sort_columns
// CHECK: PASS sort_single
// CHECK: PASS topk_values
// CHECK: PASS topk_indices
// CHECK: PASS topk_shared_values
// CHECK: PASS topk_shared_indices
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace T = tile;

/// Each row of X [rows, 40], 16 rows a block, sorted ascending into Y.
[[tile::kernel]] void sort_rows(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 16));
  T::shared<float, 16, 40> s;
  T::copy(X.at(bx * 16, 0), s);
  T::sort(s, 1);
  T::copy(s, Y.at(bx * 16, 0));
}

/// Each row of X [rows, 40] sorted descending, with the columns it came from moved along.
[[tile::kernel]] void sort_rows_desc(T::tensor<const int, 2> X, T::tensor<int, 2> Y, T::tensor<int, 2> From) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 16));
  T::shared<int, 16, 40> keys;
  T::shared<int, 16, 40> cols;
  T::copy(X.at(bx * 16, 0), keys);
  for (auto [i, j] : T::parallel(16, 40))
    cols(i, j) = j;
  T::sort(keys, cols, 1, true);
  T::copy(keys, Y.at(bx * 16, 0));
  T::copy(cols, From.at(bx * 16, 0));
}

/// Each column of X [3, cols] sorted ascending (dimension 0, three rows); and column 32 bx of
/// X as rows of one element (dimension 1 of a [3, 1] tile: unchanged) into column bx of Z.
[[tile::kernel]] void sort_columns(T::tensor<const float, 2> X, T::tensor<float, 2> Y, T::tensor<float, 2> Z) {
  auto [bx] = T::grid(T::ceildiv(X.size(1), 32));
  T::shared<float, 3, 32> s;
  T::shared<float, 3, 1> one;
  T::copy(X.at(0, bx * 32), s);
  T::copy(X.at(0, bx * 32), one);
  T::sort(s, 0);
  T::sort(one, 1);
  T::copy(s, Y.at(0, bx * 32));
  T::copy(one, Z.at(0, bx));
}

/// The 5 largest scores of each token's 40 experts and the experts that have them.
[[tile::kernel]] void router_topk(T::tensor<const float, 2> Scores, T::tensor<float, 2> Top, T::tensor<int, 2> Expert) {
  auto [bx] = T::grid(T::ceildiv(Scores.size(0), 32));
  T::fragment<float, 32, 40> s;
  T::fragment<float, 32, 5> top;
  T::fragment<int, 32, 5> expert;
  T::copy(Scores.at(bx * 32, 0), s);
  T::topk(s, top, expert, 1);
  T::copy(top, Top.at(bx * 32, 0));
  T::copy(expert, Expert.at(bx * 32, 0));
}

/// The same from a shared tile into shared buffers.
[[tile::kernel]] void router_topk_shared(T::tensor<const float, 2> Scores, T::tensor<float, 2> Top,
                                        T::tensor<long long, 2> Expert) {
  auto [bx] = T::grid(T::ceildiv(Scores.size(0), 32));
  T::shared<float, 32, 40> s;
  T::shared<float, 32, 5> top;
  T::shared<long long, 32, 5> expert;
  T::copy(Scores.at(bx * 32, 0), s);
  T::topk(s, top, expert, 1);
  T::copy(top, Top.at(bx * 32, 0));
  T::copy(expert, Expert.at(bx * 32, 0));
}

int main() {
  auto small = [](std::size_t n, int lo, int hi) {
    std::vector<float> v(n);
    for (float &x : v)
      x = float(check::inputs.integer(lo, hi));
    return v;
  };
  const int rows = 37, cols = 40;
  {
    auto x = check::random<float>(std::size_t(rows) * cols);
    auto X = check::upload(x, {rows, cols});
    auto Y = check::upload(check::poisoned<float>(rows * cols), {rows, cols});
    sort_rows(X, Y);
    std::vector<double> ref(x.begin(), x.end());
    for (int r = 0; r < rows; ++r)
      std::sort(ref.begin() + r * cols, ref.begin() + (r + 1) * cols);
    check::close("sort_rows_ascending", ref, Y.to_vector(), 0);
  }
  {
    std::vector<int> x(std::size_t(rows) * cols);
    for (int &v : x)
      v = int(check::inputs.integer(-9, 9));
    auto X = check::upload(x, {rows, cols});
    auto Y = check::upload(check::poisoned<int>(rows * cols), {rows, cols});
    auto From = check::upload(check::poisoned<int>(rows * cols), {rows, cols});
    sort_rows_desc(X, Y, From);
    auto y = Y.to_vector(), from = From.to_vector();
    bool ok = true;
    for (int r = 0; r < rows; ++r) {
      std::vector<int> seen(cols, 0);
      for (int c = 0; c < cols; ++c) {
        const int f = from[r * cols + c];
        ok &= f >= 0 && f < cols && !seen[f]++;                            // a permutation
        ok &= f >= 0 && f < cols && y[r * cols + c] == x[r * cols + f];    // that follows its keys
        ok &= c == 0 || y[r * cols + c - 1] >= y[r * cols + c];             // descending
      }
    }
    check::report("sort_rows_descending_values", ok);
  }
  {
    const int n = 70;
    auto x = check::random<float>(3 * n);
    auto X = check::upload(x, {3, n});
    auto Y = check::upload(check::poisoned<float>(3 * n), {3, n});
    const int blocks = (n + 31) / 32;
    auto Z = check::upload(check::poisoned<float>(3 * blocks), {3, blocks});
    sort_columns(X, Y, Z);
    std::vector<double> ref(3 * n);
    for (int c = 0; c < n; ++c) {
      double v[3] = {x[c], x[n + c], x[2 * n + c]};
      std::sort(v, v + 3);
      for (int r = 0; r < 3; ++r)
        ref[r * n + c] = v[r];
    }
    check::close("sort_columns", ref, Y.to_vector(), 0);
    std::vector<double> columns(3 * blocks);
    for (int r = 0; r < 3; ++r)
      for (int b = 0; b < blocks; ++b)
        columns[r * blocks + b] = x[r * n + b * 32];
    check::close("sort_single", columns, Z.to_vector(), 0);
  }
  const int tokens = 300, experts = 40, k = 5;
  auto scores = small(std::size_t(tokens) * experts, -12, 12);
  std::vector<double> top_ref(tokens * k);
  std::vector<int> expert_ref(tokens * k);
  for (int t = 0; t < tokens; ++t) {
    std::vector<int> order(experts);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      const float sa = scores[t * experts + a], sb = scores[t * experts + b];
      return sa > sb || (sa == sb && a < b);
    });
    for (int i = 0; i < k; ++i) {
      top_ref[t * k + i] = scores[t * experts + order[i]];
      expert_ref[t * k + i] = order[i];
    }
  }
  auto S = check::upload(scores, {tokens, experts});
  {
    auto Top = check::upload(check::poisoned<float>(tokens * k), {tokens, k});
    auto Expert = check::upload(check::poisoned<int>(tokens * k), {tokens, k});
    router_topk(S, Top, Expert);
    check::close("topk_values", top_ref, Top.to_vector(), 0);
    check::equal("topk_indices", expert_ref, Expert.to_vector());
  }
  {
    auto Top = check::upload(check::poisoned<float>(tokens * k), {tokens, k});
    auto Expert = check::upload(check::poisoned<long long>(tokens * k), {tokens, k});
    router_topk_shared(S, Top, Expert);
    check::close("topk_shared_values", top_ref, Top.to_vector(), 0);
    check::equal("topk_shared_indices", std::vector<long long>(expert_ref.begin(), expert_ref.end()), Expert.to_vector());
  }
  return check::result();
}
