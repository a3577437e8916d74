// Integer division and remainder have a value for every operand, the same on every target:
// C++'s where C++ defines one; x / 0 = 0 and x % 0 = x; the most negative value / -1 wraps
// to itself and % -1 = 0 (a CPU would trap on both). Divisors known only at run time, in
// 8- to 64-bit types, signed and unsigned. Also before tile::grid, where the statements run
// on the host (to size the grid) and on the device: the same values on both, no trap.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS divide_i32
// CHECK: PASS divide_i64
// CHECK: PASS divide_u32
// CHECK: PASS divide_i8
// CHECK: PASS divide_u64
// CHECK: PASS prologue_i32
// CHECK: PASS prologue_i64
// CHECK: PASS prologue_u32
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

/// q = x / y, r = x % y and c = ceildiv(x / 4, y % 8) before tile::grid (a divisor from -7
/// to 7, 0 and -1 among them; x / 4 + y % 8 - 1 does not overflow): block 0 stores the
/// device's values in out[0..2]; the grid's extent is computed from the host's, 1 to 8
/// blocks, each storing 1 in out[8 + bx].
template <class I>
[[tile::kernel]] void prologue(T::tensor<I, 1> out, I x, I y) {
  const I q = x / y, r = x % y;
  const I c = T::ceildiv(x / 4, y % 8);
  auto [bx] = T::grid(1 + int((q ^ r ^ c) & 7), T::threads(32));
  for (int i : T::parallel(32))
    if (i == 0) {
      if (bx == 0) {
        out(0) = q;
        out(1) = r;
        out(2) = c;
      }
      out(8 + bx) = I(1);
    }
}

template <class I> void run_prologue(const char *name) {
  using L = std::numeric_limits<I>;
  const I values[] = {I(0), I(7), I(-7), L::max(), L::min(), I(-1), I(3)};
  for (I x : values)
    for (I y : values) {
      auto out = check::upload(std::vector<I>(16, I(0)), {16});
      prologue<I>(out, x, y);
      const std::vector<I> got = out.to_vector();
      // The reference in 128 bits, wrapped to I: x / 0 = 0, x % 0 = x; ceildiv(a, b) =
      // (a + b - 1) / b.
      auto wrap = [](__int128 v) { return I(v); };
      auto div = [&](__int128 a, __int128 b) { return b == 0 ? I(0) : wrap(a / b); };
      const I q = div(x, y), r = y == 0 ? x : wrap(__int128(x) % __int128(y));
      const I a = I(x / 4), b = I(y % 8);
      const I c = div(wrap(__int128(a) + __int128(b) - 1), b);
      const int blocks = 1 + int((q ^ r ^ c) & 7);
      bool ok = got[0] == q && got[1] == r && got[2] == c;
      for (int b = 0; b < 8; ++b)
        ok &= got[8 + b] == I(b < blocks ? 1 : 0);
      if (!ok) {
        char why[200];
        std::snprintf(why, sizeof why, "x %lld y %lld: q r c %lld %lld %lld (expected %lld %lld %lld), blocks %d",
                      (long long)x, (long long)y, (long long)got[0], (long long)got[1], (long long)got[2],
                      (long long)q, (long long)r, (long long)c, blocks);
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
  run_prologue<std::int32_t>("prologue_i32");
  run_prologue<std::int64_t>("prologue_i64");
  run_prologue<std::uint32_t>("prologue_u32");
  return check::result();
}
