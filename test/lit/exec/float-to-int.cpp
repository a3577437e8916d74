// Floating-point to integer conversion in kernels truncates toward zero, saturates at the
// integer type's limits and gives 0 for NaN, the same on every target and on every path:
// tile::copy converting on load, a store into an integer buffer, tile::cast in an
// expression, a conversion of a constant that the compiler folds, and conversions before
// tile::grid, which also run on the host (to size the grid). Checked against an
// independent reference (truncate in long double, then clamp) on edge values.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS f32_to_i8_copy
// CHECK: PASS f32_to_i8_store
// CHECK: PASS f32_to_i8_cast
// CHECK: PASS f32_to_u8_copy
// CHECK: PASS f32_to_i16_store
// CHECK: PASS f32_to_u16_cast
// CHECK: PASS f32_to_i32_copy
// CHECK: PASS f32_to_u32_store
// CHECK: PASS f32_to_i64_cast
// CHECK: PASS f32_to_u64_copy
// CHECK: PASS f64_to_i8_copy
// CHECK: PASS f64_to_i32_store
// CHECK: PASS f64_to_i64_cast
// CHECK: PASS f64_to_u64_store
// CHECK: PASS f16_to_i8_copy
// CHECK: PASS f16_to_u8_store
// CHECK: PASS bf16_to_i16_cast
// CHECK: PASS bf16_to_i32_copy
// CHECK: PASS f8e4m3_to_i8_store
// CHECK: PASS f8e5m2_to_u8_cast
// CHECK: PASS folded_constants
// CHECK: PASS prologue_conversions
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

/// Y = Dst(X): by tile::copy into an integer fragment (Path 0), by element stores into an
/// integer buffer (Path 1), or by tile::cast in an expression (Path 2).
template <class Src, class Dst, int Path, int N = 48>
[[tile::kernel]] void to_int(T::tensor<const Src, 1> X, T::tensor<Dst, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), N));
  T::fragment<Src, N> x;
  T::fragment<Dst, N> y;
  T::copy(X.at(bx * N), x);
  if constexpr (Path == 0) {
    T::copy(x, y);
  } else if constexpr (Path == 1) {
    for (int i : T::parallel(N))
      y(i) = x(i);
  } else {
    for (int i : T::parallel(N))
      y(i) = T::cast<Dst>(x(i)) + Dst(0);
  }
  T::copy(y, Y.at(bx * N));
}

/// Conversions of constants, folded at compile time.
[[tile::kernel]] void folded(T::tensor<std::int64_t, 1> Y) {
  auto [bx] = T::grid(1);
  Y(0) = std::int8_t(448.0f);
  Y(1) = T::cast<std::int8_t>(-1e10f);
  Y(2) = std::uint8_t(-3.5f);
  Y(3) = std::int32_t(T::infinity<float>());
  Y(4) = std::int16_t(-T::infinity<double>());
  Y(5) = std::int32_t(0.0f / 0.0f);
  Y(6) = std::uint32_t(4294967296.0);
  Y(7) = std::int64_t(-9.5e18);
  Y(8) = std::int8_t(-127.9f);
}

/// Conversions before tile::grid (written, implicit, static_cast, functional): block 0
/// stores the device's values in Y[0..3]; the grid's extent comes from the host's, 1 to 8
/// blocks, each storing 1 in Y[8 + bx].
[[tile::kernel]] void prologue(T::tensor<std::int64_t, 1> Y, float s, double d) {
  const int a = (int)s;
  const int b = s * 1.0f;
  const std::int64_t c = static_cast<std::int64_t>(d);
  const unsigned u = unsigned(d);
  auto [bx] = T::grid(1 + ((a ^ b ^ int(c) ^ int(u)) & 7), T::threads(32));
  for (int i : T::parallel(32))
    if (i == 0) {
      if (bx == 0) {
        Y(0) = a;
        Y(1) = b;
        Y(2) = c;
        Y(3) = u;
      }
      Y(8 + bx) = 1;
    }
}

/// The reference: truncate exactly (long double holds every integer limit), then clamp.
template <class Dst> long double expected(long double v) {
  if (std::isnan(v))
    return 0;
  const long double lo = (long double)std::numeric_limits<Dst>::min();
  const long double hi = (long double)std::numeric_limits<Dst>::max();
  const long double t = std::trunc(v);
  return t < lo ? lo : t > hi ? hi : t;
}

std::vector<double> edge_values() {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v = {nan, -nan, inf, -inf, 0.0, -0.0, 0.5, -0.5, 0.999, -0.999, 1.5, -1.5, 2.5,
                           126.9, 127.0, 127.5, 128.0, 255.0, 255.9, 256.0, -127.9, -128.0, -128.9, -129.0,
                           448.0, -448.0, 32767.5, 32768.0, -32768.5, -32769.0, 65535.9, 65536.0,
                           2147483520.0, 2147483647.0, 2147483648.0, -2147483648.0, -2147483904.0,
                           4294967040.0, 4294967296.0, 9.2233720368547748e18, 9.223372036854775808e18,
                           -9.223372036854775808e18, -9.3e18, 1.8446744073709550e19, 1.8446744073709552e19,
                           1e30, -1e30, 1e300, -1e300};
  check::rng r(77);
  for (int i = 0; i < 60; ++i) // magnitudes from 2^-2 to 2^70, both signs
    v.push_back((r.next() & 1 ? 1 : -1) * std::ldexp(r.uniform(1, 2), int(r.integer(-2, 70))));
  return v;
}

template <class Src, class Dst, int Path> void run(const char *name) {
  std::vector<Src> x;
  for (double v : edge_values())
    x.push_back(Src(v)); // rounded to Src (f32 and narrower round; the reference sees the same value)
  const std::int64_t n = std::int64_t(x.size());
  auto X = check::upload(x, {n});
  auto Y = check::upload(check::poisoned<Dst>(x.size()), {n});
  to_int<Src, Dst, Path>(X, Y);
  std::vector<Dst> got = Y.to_vector();
  std::vector<long double> want;
  for (Src s : x)
    want.push_back(expected<Dst>((long double)check::value(s)));
  for (std::size_t i = 0; i < x.size(); ++i)
    if ((long double)got[i] != want[i]) {
      char why[160];
      std::snprintf(why, sizeof why, "%.17g gives %lld, expected %.0Lf", check::value(x[i]), (long long)got[i], want[i]);
      check::report(name, false, why);
      return;
    }
  check::report(name, true);
}

void run_prologue() {
  for (double v : edge_values()) {
    const float f = float(v);
    auto Y = check::upload(std::vector<std::int64_t>(16, 0), {16});
    prologue(Y, f, v);
    const std::vector<std::int64_t> got = Y.to_vector();
    const std::int64_t a = (std::int64_t)expected<int>(f), c = (std::int64_t)expected<std::int64_t>(v),
                       u = (std::int64_t)expected<unsigned>(v);
    const int blocks = 1 + ((int(a) ^ int(a) ^ int(c) ^ int(unsigned(u))) & 7);
    bool ok = got[0] == a && got[1] == a && got[2] == c && got[3] == u;
    for (int k = 0; k < 8; ++k)
      ok &= got[8 + k] == (k < blocks ? 1 : 0);
    if (!ok) {
      char why[200];
      std::snprintf(why, sizeof why, "%.17g gives %lld %lld %lld %lld (expected %lld %lld %lld), blocks %d", v,
                    (long long)got[0], (long long)got[1], (long long)got[2], (long long)got[3], (long long)a,
                    (long long)c, (long long)u, blocks);
      check::report("prologue_conversions", false, why);
      return;
    }
  }
  check::report("prologue_conversions", true);
}

int main() {
  run<float, std::int8_t, 0>("f32_to_i8_copy");
  run<float, std::int8_t, 1>("f32_to_i8_store");
  run<float, std::int8_t, 2>("f32_to_i8_cast");
  run<float, std::uint8_t, 0>("f32_to_u8_copy");
  run<float, std::int16_t, 1>("f32_to_i16_store");
  run<float, std::uint16_t, 2>("f32_to_u16_cast");
  run<float, std::int32_t, 0>("f32_to_i32_copy");
  run<float, std::uint32_t, 1>("f32_to_u32_store");
  run<float, std::int64_t, 2>("f32_to_i64_cast");
  run<float, std::uint64_t, 0>("f32_to_u64_copy");
  run<double, std::int8_t, 0>("f64_to_i8_copy");
  run<double, std::int32_t, 1>("f64_to_i32_store");
  run<double, std::int64_t, 2>("f64_to_i64_cast");
  run<double, std::uint64_t, 1>("f64_to_u64_store");
  run<T::f16, std::int8_t, 0>("f16_to_i8_copy");
  run<T::f16, std::uint8_t, 1>("f16_to_u8_store");
  run<T::bf16, std::int16_t, 2>("bf16_to_i16_cast");
  run<T::bf16, std::int32_t, 0>("bf16_to_i32_copy");
  run<T::f8e4m3, std::int8_t, 1>("f8e4m3_to_i8_store");
  run<T::f8e5m2, std::uint8_t, 2>("f8e5m2_to_u8_cast");

  auto Y = check::upload(check::poisoned<std::int64_t>(9), {9});
  folded(Y);
  check::equal("folded_constants", std::vector<std::int64_t>{127, -128, 0, 2147483647, -32768, 0, 4294967295, INT64_MIN, -127},
               Y.to_vector());
  run_prologue();
  return check::result();
}
