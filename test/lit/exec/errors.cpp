// Run-time errors: a failing tile::device_assert throws tile::error naming the kernel and
// the assert's message (and later launches still work); a null tensor with elements is
// refused at launch; a grid with a zero extent runs no block.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS assert_passes
// CHECK: message: {{.*}}check_non_negative{{.*}}
// CHECK: PASS assert_fails
// CHECK: PASS after_assert
// CHECK: message: {{.*}}
// CHECK: PASS null_tensor
// CHECK: PASS zero_grid_2d
// CHECK: PASS grid_2_rows
// CHECK: PASS zero_grid_empty_tensor
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <algorithm>

namespace T = tile;

/// Y = sqrt(X), asserting that X holds no negative value.
[[tile::kernel]] void check_non_negative(T::tensor<const float, 1> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 64));
  T::fragment<float, 64> f;
  T::copy(X.at(bx * 64), f);
  for (int i : T::parallel(64)) {
    T::device_assert(f(i) >= 0.0f, "values are non-negative");
    f(i) = T::sqrt(f(i));
  }
  T::copy(f, Y.at(bx * 64));
}

/// Y = 1 over a grid of 4 x rows blocks, one row per block row.
[[tile::kernel]] void fill_rows(T::tensor<float, 2> Y, int rows) {
  auto [bx, by] = T::grid(4, rows);
  T::fragment<float, 1, 8> f;
  T::fill(f, 1.0f);
  T::copy(f, Y.at(by, bx * 8));
}

int main() {
  const int n = 100;
  auto run_sqrt = [&](const std::vector<float> &x) {
    auto X = check::upload(x, {n});
    auto Y = check::upload(check::poisoned<float>(n), {n});
    check_non_negative(X, Y);
    return Y.to_vector();
  };
  auto x = check::random<float>(n, 0, 4);
  std::vector<double> ref;
  for (float v : x)
    ref.push_back(std::sqrt(double(v)));
  check::close("assert_passes", ref, run_sqrt(x), 1e-6);

  auto bad = x;
  bad[77] = -1.0f;
  check::throws("assert_fails", [&] { run_sqrt(bad); }, {"values are non-negative", "check_non_negative"});
  check::close("after_assert", ref, run_sqrt(x), 1e-6);

  auto Y = check::upload(check::poisoned<float>(n), {n});
  check::throws("null_tensor", [&] { check_non_negative(T::tensor<const float, 1>(nullptr, {n}), Y); },
                {"check_non_negative"});

  const float guard = -777.0f;
  auto Rows = check::upload(std::vector<float>(3 * 32, guard), {3, 32});
  fill_rows(Rows, 0);
  check::equal("zero_grid_2d", std::vector<float>(3 * 32, guard), Rows.to_vector());
  // The same kernel with 2 rows of blocks writes rows 0 and 1.
  std::vector<float> two_rows(3 * 32, guard);
  std::fill(two_rows.begin(), two_rows.begin() + 2 * 32, 1.0f);
  fill_rows(Rows, 2);
  check::equal("grid_2_rows", two_rows, Rows.to_vector());
  T::array<float, 1> Empty({0});
  check_non_negative(Empty, Empty);
  T::synchronize();
  check::report("zero_grid_empty_tensor", true);
  return check::result();
}
