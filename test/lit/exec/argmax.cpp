// reduce_argmax and reduce_argmin: the extreme along a dimension and its first position,
// from fragments (a router's top-1 over 40 experts, masked to -inf past them), from a
// shared tile in a loop that combines with what the buffers hold (clear = false, positions
// offset by `first`, ties keeping the earlier position) over rows of 300 ints, and from a
// one-dimensional tile; on shapes that divide no tile size, with many ties.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS top1_values
// CHECK: PASS top1_indices
// CHECK: PASS running_argmin_values
// CHECK: PASS running_argmin_indices
// CHECK: PASS vector_argmax
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <limits>

namespace T = tile;

/// For each of X's rows (tokens), the largest of its E columns (experts) and its first column.
[[tile::kernel]] void top1(T::tensor<const float, 2> X, T::tensor<float, 1> Val, T::tensor<int, 1> Idx) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 64));
  T::fragment<float, 64, 64> f;
  T::fragment<float, 64> best;
  T::fragment<int, 64> at;
  T::copy(X.at(bx * 64, 0), f);
  for (auto [i, j] : T::parallel(64, 64))
    if (j >= X.size(1))
      f(i, j) = -std::numeric_limits<float>::infinity();
  T::reduce_argmax(f, best, at, 1);
  T::copy(best, Val.at(bx * 64));
  T::copy(at, Idx.at(bx * 64));
}

/// For each row of X, its smallest element and that element's first column, 64 columns at a time.
[[tile::kernel]] void running_argmin(T::tensor<const int, 2> X, T::tensor<int, 1> Val, T::tensor<long long, 1> Idx) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 16));
  T::shared<int, 16, 64> s;
  T::fragment<int, 16> best;
  T::fragment<long long, 16> at;
  T::fill(best, std::numeric_limits<int>::max());
  T::fill(at, -1);
  for (int k : T::serial(T::ceildiv(X.size(1), 64))) {
    T::copy(X.at(bx * 16, k * 64), s);
    for (auto [i, j] : T::parallel(16, 64))
      if (k * 64 + j >= X.size(1))
        s(i, j) = std::numeric_limits<int>::max();
    T::reduce_argmin(s, best, at, 1, false, k * 64);
  }
  T::copy(best, Val.at(bx * 16));
  T::copy(at, Idx.at(bx * 16));
}

/// The largest of each block's 128 elements of X (past the end: -inf) and its position in X.
[[tile::kernel]] void vector_argmax(T::tensor<const float, 1> X, T::tensor<float, 1> Val, T::tensor<int, 1> Idx) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 128));
  T::fragment<float, 128> f;
  T::fragment<float, 1> best;
  T::fragment<int, 1> at;
  T::copy(X.at(bx * 128), f);
  for (int i : T::parallel(128))
    if (bx * 128 + i >= X.size(0))
      f(i) = -std::numeric_limits<float>::infinity();
  T::reduce_argmax(f, best, at, 0, true, bx * 128);
  T::copy(best, Val.at(bx));
  T::copy(at, Idx.at(bx));
}

int main() {
  // Values from a small set of integers, so that rows have ties.
  auto small = [](std::size_t n, int lo, int hi) {
    std::vector<float> v(n);
    for (float &x : v)
      x = float(check::inputs.integer(lo, hi));
    return v;
  };
  {
    const int tokens = 300, experts = 40;
    auto x = small(std::size_t(tokens) * experts, -30, 30);
    auto X = check::upload(x, {tokens, experts});
    auto Val = check::upload(check::poisoned<float>(tokens), {tokens});
    auto Idx = check::upload(check::poisoned<int>(tokens), {tokens});
    top1(X, Val, Idx);
    std::vector<double> vref(tokens);
    std::vector<int> iref(tokens);
    for (int t = 0; t < tokens; ++t) {
      int best = 0;
      for (int e = 1; e < experts; ++e)
        if (x[t * experts + e] > x[t * experts + best])
          best = e;
      vref[t] = x[t * experts + best];
      iref[t] = best;
    }
    check::close("top1_values", vref, Val.to_vector(), 0);
    check::equal("top1_indices", iref, Idx.to_vector());
  }
  {
    const int rows = 37, cols = 300;
    std::vector<int> x(std::size_t(rows) * cols);
    for (int &v : x)
      v = int(check::inputs.integer(-20, 20));
    auto X = check::upload(x, {rows, cols});
    auto Val = check::upload(check::poisoned<int>(rows), {rows});
    auto Idx = check::upload(check::poisoned<long long>(rows), {rows});
    running_argmin(X, Val, Idx);
    std::vector<int> vref(rows);
    std::vector<long long> iref(rows);
    for (int r = 0; r < rows; ++r) {
      int best = 0;
      for (int c = 1; c < cols; ++c)
        if (x[r * cols + c] < x[r * cols + best])
          best = c;
      vref[r] = x[r * cols + best];
      iref[r] = best;
    }
    check::equal("running_argmin_values", vref, Val.to_vector());
    check::equal("running_argmin_indices", iref, Idx.to_vector());
  }
  {
    const int n = 1000, blocks = (n + 127) / 128;
    auto x = small(n, -50, 50);
    auto X = check::upload(x, {n});
    auto Val = check::upload(check::poisoned<float>(blocks), {blocks});
    auto Idx = check::upload(check::poisoned<int>(blocks), {blocks});
    vector_argmax(X, Val, Idx);
    std::vector<float> vref(blocks);
    std::vector<int> iref(blocks);
    for (int b = 0; b < blocks; ++b) {
      int best = b * 128;
      for (int i = b * 128 + 1; i < std::min(n, b * 128 + 128); ++i)
        if (x[i] > x[best])
          best = i;
      vref[b] = x[best];
      iref[b] = best;
    }
    check::equal("vector_argmax", std::vector<double>(vref.begin(), vref.end()), check::values(Val.to_vector()));
    check::equal("vector_argmax", iref, Idx.to_vector());
  }
  return check::result();
}
