// A 3-D grid (tile::grid(gx, gy, gz)) whose kernel lives in a namespace and calls
// [[tile::macro]] functions from namespaces (returning values, taking buffers and scalars
// by reference, templated, nested) and lambdas that capture kernel scalars.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS grid3d_values
// CHECK: PASS grid3d_block_ids
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

namespace ops {
[[tile::macro]] float square(float x) { return x * x; }

namespace detail {
/// x * s + t, through another macro.
[[tile::macro]] float affine(float x, float s, float t) { return square(1.0f) * x * s + t; }
} // namespace detail

/// f = f * alpha + beta, element-wise; counts its calls in `calls`.
template <int R, int C> [[tile::macro]] void scale(T::fragment<float, R, C> &f, float alpha, float beta, int &calls) {
  for (auto [i, j] : T::parallel(R, C))
    f(i, j) = detail::affine(f(i, j), alpha, beta);
  calls += 1;
}
} // namespace ops

namespace kernels {
/// Y[z, y, x] = (X[z, y, x] * alpha + beta)^2 + z + calls, over tiles of [BY, BX] per block;
/// each block also writes its indices into Ids[bz, by, bx].
template <int BY, int BX>
[[tile::kernel]] void apply(T::tensor<const float, 3> X, T::tensor<float, 3> Y, T::tensor<int, 3> Ids, float alpha,
                            float beta) {
  const int D0 = X.size(0), D1 = X.size(1), D2 = X.size(2);
  auto [bx, by, bz] = T::grid(T::ceildiv(D2, BX), T::ceildiv(D1, BY), D0);
  auto plus_block = [&](float v) { return v + float(bz); };
  T::fragment<float, BY, BX> f;
  int calls = 0;
  T::copy(X.at(bz, by * BY, bx * BX), f);
  ops::scale(f, alpha, beta, calls);
  for (auto [i, j] : T::parallel(BY, BX))
    f(i, j) = plus_block(ops::square(f(i, j))) + float(calls);
  T::copy(f, Y.at(bz, by * BY, bx * BX));
  Ids(bz, by, bx) = bz * 10000 + by * 100 + bx;
}
} // namespace kernels

int main() {
  const int D0 = 3, D1 = 37, D2 = 29, BY = 8, BX = 16;
  const int gy = (D1 + BY - 1) / BY, gx = (D2 + BX - 1) / BX;
  const float alpha = 1.5f, beta = -0.25f;
  auto x = check::random<float>(std::size_t(D0) * D1 * D2);
  std::vector<double> ref(x.size());
  for (int z = 0; z < D0; ++z)
    for (int i = 0; i < D1 * D2; ++i) {
      double v = double(x[z * D1 * D2 + i]) * alpha + beta;
      ref[z * D1 * D2 + i] = v * v + z + 1;
    }
  std::vector<int> ids;
  for (int z = 0; z < D0; ++z)
    for (int y = 0; y < gy; ++y)
      for (int b = 0; b < gx; ++b)
        ids.push_back(z * 10000 + y * 100 + b);
  auto X = check::upload(x, {D0, D1, D2});
  auto Y = check::upload(check::poisoned<float>(x.size()), {D0, D1, D2});
  auto Ids = check::upload(check::poisoned<int>(ids.size()), {D0, gy, gx});
  kernels::apply<BY, BX>(X, Y, Ids, alpha, beta);
  check::close("grid3d_values", ref, Y.to_vector(), 1e-6);
  check::equal("grid3d_block_ids", ids, Ids.to_vector());
  return check::result();
}
