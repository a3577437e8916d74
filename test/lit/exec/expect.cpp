// tile::expect states what a kernel assumes of its arguments: checked on the host at each
// launch, a failure throws tile::error naming the kernel, the message and its line, and
// the kernel does not run. Statements before tile::grid may use the expectations' values.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS expect_holds
// CHECK: message: tile kernel 'axpy<64>' on {{.*}}: expectation failed: x and y have the same length (
// CHECK-SAME: expect.cpp:[[@LINE+14]])
// CHECK: PASS expect_fails
// CHECK: PASS expect_failed_launch_wrote_nothing
// CHECK: message: tile kernel 'axpy<64>' on {{.*}}: expectation failed: alpha is finite
// CHECK: PASS expect_second
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

template <int N>
[[tile::kernel]] void axpy(T::tensor<const float, 1> x, T::tensor<float, 1> y, float alpha) {
  const int n = x.size(0);
  T::expect(n == y.size(0), "x and y have the same length");
  T::expect(alpha == alpha && alpha - alpha == 0, "alpha is finite");
  auto [bx] = T::grid(T::ceildiv(n, N));
  T::fragment<float, N> a, b;
  T::copy(x.at(bx * N), a);
  T::copy(y.at(bx * N), b);
  for (int i : T::parallel(N))
    b(i) = alpha * a(i) + b(i);
  T::copy(b, y.at(bx * N));
}

int main() {
  const int n = 1000;
  auto xs = check::random<float>(n), ys = check::random<float>(n);
  auto X = check::upload(xs, {n});
  auto Y = check::upload(ys, {n});
  axpy<64>(X, Y, 2.0f);
  std::vector<double> ref(n);
  for (int i = 0; i < n; ++i)
    ref[i] = 2.0 * xs[i] + ys[i];
  check::close("expect_holds", ref, Y.to_vector(), 1e-6);

  auto Z = check::upload(check::poisoned<float>(n - 1), {n - 1});
  check::throws("expect_fails", [&] { axpy<64>(X, Z, 2.0f); }, {"axpy<64>", "x and y have the same length"});
  std::vector<float> z = Z.to_vector();
  bool untouched = true;
  for (float v : z)
    untouched &= std::isnan(v);
  check::report("expect_failed_launch_wrote_nothing", untouched);
  check::throws("expect_second", [&] { axpy<64>(X, Y, std::numeric_limits<float>::infinity()); },
                {"alpha is finite"});
  return check::result();
}
