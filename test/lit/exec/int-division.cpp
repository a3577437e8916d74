// Integer division and remainder have a value for every operand, the same on every target:
// C++'s where C++ defines one; x / 0 = 0 and x % 0 = x; the most negative value / -1 wraps
// to itself and % -1 = 0 (a CPU would trap on both). Divisors known only at run time, in
// 8- to 64-bit types, signed and unsigned.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS divide_i32
// CHECK: PASS divide_i64
// CHECK: PASS divide_u32
// CHECK: PASS divide_i8
// CHECK: PASS divide_u64
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

/// Q = X / Y and R = X % Y element by element.
template <class I, int N = 32>
[[tile::kernel]] void divide(T::tensor<const I, 1> X, T::tensor<const I, 1> Y, T::tensor<I, 1> Q, T::tensor<I, 1> R) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), N));
  T::fragment<I, N> x, y, q, r;
  T::copy(X.at(bx * N), x);
  T::copy(Y.at(bx * N), y);
  for (int i : T::parallel(N)) {
    q(i) = x(i) / y(i);
    r(i) = x(i) % y(i);
  }
  T::copy(q, Q.at(bx * N));
  T::copy(r, R.at(bx * N));
}

template <class I> void run(const char *name) {
  using L = std::numeric_limits<I>;
  const I values[] = {I(0), I(1), I(2), I(7), I(100), L::max(), I(L::max() - 1), L::min(), I(L::min() + 1),
                      I(-1), I(-2), I(-7), I(-100)};
  std::vector<I> x, y;
  for (I a : values)
    for (I b : values) {
      x.push_back(a);
      y.push_back(b);
    }
  const std::int64_t n = std::int64_t(x.size());
  auto X = check::upload(x, {n});
  auto Y = check::upload(y, {n});
  auto Q = check::upload(check::poisoned<I>(x.size()), {n});
  auto R = check::upload(check::poisoned<I>(x.size()), {n});
  divide<I>(X, Y, Q, R);
  std::vector<I> q = Q.to_vector(), r = R.to_vector();
  for (std::size_t i = 0; i < x.size(); ++i) {
    // The reference, in 128 bits: quotient truncated, then wrapped to I.
    __int128 a = x[i], b = y[i], wq, wr;
    if (b == 0) {
      wq = 0;
      wr = a;
    } else {
      wq = a / b;
      wr = a % b;
    }
    const I eq = I(wq), er = I(wr);
    if (q[i] != eq || r[i] != er) {
      char why[160];
      std::snprintf(why, sizeof why, "%lld / %lld gives %lld r %lld, expected %lld r %lld", (long long)x[i],
                    (long long)y[i], (long long)q[i], (long long)r[i], (long long)eq, (long long)er);
      check::report(name, false, why);
      return;
    }
  }
  check::report(name, true);
}

int main() {
  run<std::int32_t>("divide_i32");
  run<std::int64_t>("divide_i64");
  run<std::uint32_t>("divide_u32");
  run<std::int8_t>("divide_i8");
  run<std::uint64_t>("divide_u64");
  return check::result();
}
