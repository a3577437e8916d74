// tile::copy between two regions: a region of a shared, fragment or local buffer with
// tile::slice marks spans from the marks to the buffer's end (one element in the other
// dimensions), and gives the other region its shape. Sizes divide no tile; outputs poisoned.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS region_row_to_tensor
// CHECK: PASS region_tensor_to_column
// CHECK: PASS region_fragment_to_local
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

constexpr int R = 4, C = 24;

/// Y[b, :] = 2 * X[b, :] through row 1 of a shared tile; Z[b, 0:R-1] = X[b, 0:R-1] through
/// column 2 of it, rows 1..R-1 (a tensor region into a buffer's region); W[b, :] = X[b, 3:]
/// from a fragment's row into a local buffer's tail.
[[tile::kernel]] void regions(T::tensor<const float, 2> X, T::tensor<float, 2> Y, T::tensor<float, 2> Z,
                              T::tensor<float, 2> W) {
  auto [bx] = T::grid(X.size(0));
  T::shared<float, R, C> s;
  T::fill(s, 0.0f);
  T::copy(X.at(bx, 0), s.at(1, T::slice(0)));
  for (auto [i, j] : T::parallel(R, C))
    s(i, j) = 2.0f * s(i, j);
  T::copy(s.at(1, T::slice(0)), Y.at(bx, T::slice(0)));

  T::shared<float, R, 3> t;
  T::fill(t, -1.0f);
  T::copy(X.at(bx, T::slice(0)), t.at(T::slice(1), 2));
  T::copy(t.at(T::slice(1), 2), Z.at(bx, T::slice(0)));

  T::fragment<float, 2, C> f;
  T::copy(X.at(bx, 0), f);
  T::local<float, C + 5> l;
  T::copy(f.at(0, T::slice(3)), l.at(T::slice(8)));
  T::copy(l.at(T::slice(8)), W.at(bx, T::slice(0)));
}

int main() {
  const int B = 5;
  auto x = check::random<float>(B * C);
  auto X = check::upload(x, {B, C});
  auto Y = check::upload(check::poisoned<float>(B * C), {B, C});
  auto Z = check::upload(check::poisoned<float>(B * (R - 1)), {B, R - 1});
  auto W = check::upload(check::poisoned<float>(B * (C - 3)), {B, C - 3});
  regions(X, Y, Z, W);
  std::vector<double> y(B * C), z(B * (R - 1)), w(B * (C - 3));
  for (int b = 0; b < B; ++b) {
    for (int j = 0; j < C; ++j)
      y[b * C + j] = 2.0 * x[b * C + j];
    for (int j = 0; j < R - 1; ++j)
      z[b * (R - 1) + j] = x[b * C + j];
    for (int j = 0; j < C - 3; ++j)
      w[b * (C - 3) + j] = x[b * C + 3 + j];
  }
  check::close("region_row_to_tensor", y, Y.to_vector(), 0);
  check::close("region_tensor_to_column", z, Z.to_vector(), 0);
  check::close("region_fragment_to_local", w, W.to_vector(), 0);
  return check::result();
}
