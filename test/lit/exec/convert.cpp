// Element type conversions in tile::copy (on load into a fragment, between shared memory
// and a fragment, and on store), checked bit for bit against the host types' conversions:
// f32 <-> bf16 / f16 / f8e4m3 / f8e5m2 over their whole range (subnormals, overflow,
// infinities, NaN), every fp8 bit pattern, float <-> int and int <-> int.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS convert_f32_bf16
// CHECK: PASS convert_bf16_f32
// CHECK: PASS convert_f32_f16
// CHECK: PASS convert_f16_f32
// CHECK: PASS convert_f32_f8e4m3
// CHECK: PASS convert_f8e4m3_f32
// CHECK: PASS convert_f32_f8e5m2
// CHECK: PASS convert_f8e5m2_f32
// CHECK: PASS convert_bf16_f16
// CHECK: PASS convert_f16_f8e4m3
// CHECK: PASS convert_f8e5m2_bf16
// CHECK: PASS convert_f32_f64
// CHECK: PASS convert_f64_f32
// CHECK: PASS convert_f32_i32
// CHECK: PASS convert_i32_f32
// CHECK: PASS convert_f32_u8
// CHECK: PASS convert_u8_f32
// CHECK: PASS convert_i8_i32
// CHECK: PASS convert_i32_i16
// CHECK: PASS convert_i16_i8
// CHECK: PASS convert_i64_i32
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

/// Y = Dst(X), converted by copy on load (Path 0), from shared memory into a fragment
/// (Path 1) or on store (Path 2).
template <class Src, class Dst, int Path, int N = 48>
[[tile::kernel]] void convert(T::tensor<const Src, 1> X, T::tensor<Dst, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), N));
  if constexpr (Path == 0) {
    T::fragment<Dst, N> f;
    T::copy(X.at(bx * N), f);
    T::copy(f, Y.at(bx * N));
  } else if constexpr (Path == 1) {
    T::shared<Src, N> s;
    T::fragment<Dst, N> f;
    T::copy(X.at(bx * N), s);
    T::copy(s, f);
    T::copy(f, Y.at(bx * N));
  } else {
    T::fragment<Src, N> f;
    T::copy(X.at(bx * N), f);
    T::copy(f, Y.at(bx * N));
  }
}

/// What the host's types make of s: extended floats convert through float.
template <class D, class S> D host_convert(S s) {
  if constexpr (tile::detail::is_extended_float_v<S> || tile::detail::is_extended_float_v<D>)
    return D(float(s));
  else
    return D(s);
}

/// Floats of random sign with exponents in [lo, hi], and the special values.
std::vector<float> wide(double lo, double hi) {
  check::rng &r = check::inputs;
  std::vector<float> v = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 0.5f};
  for (int i = 0; i < 1000; ++i)
    v.push_back(float((r.next() & 1 ? -1 : 1) * std::exp2(r.uniform(lo, hi))));
  return v;
}

/// Every bit pattern of an 8-bit float.
template <class F> std::vector<F> all_patterns() {
  std::vector<F> v(256);
  for (int i = 0; i < 256; ++i)
    v[i].bits = std::uint8_t(i);
  return v;
}

template <class Src, class Dst, int Path> void run(const char *name, const std::vector<Src> &x) {
  std::vector<Dst> ref;
  for (Src s : x)
    ref.push_back(host_convert<Dst>(s));
  int n = int(x.size());
  auto X = check::upload(x, {n});
  auto Y = check::upload(check::poisoned<Dst>(x.size()), {n});
  convert<Src, Dst, Path>(X, Y);
  check::equal(name, ref, Y.to_vector());
}

/// `v` converted to S on the host.
template <class S, class V> std::vector<S> as(const std::vector<V> &v) {
  std::vector<S> r;
  for (V x : v)
    r.push_back(host_convert<S>(x));
  return r;
}

int main() {
  using T::bf16, T::f16, T::f8e4m3, T::f8e5m2;
  run<float, bf16, 0>("convert_f32_bf16", wide(-140, 127.9));
  run<bf16, float, 1>("convert_bf16_f32", as<bf16>(wide(-140, 127.9)));
  run<float, f16, 2>("convert_f32_f16", wide(-26, 17));
  run<f16, float, 0>("convert_f16_f32", as<f16>(wide(-26, 17)));
  run<float, f8e4m3, 1>("convert_f32_f8e4m3", wide(-11, 9));
  run<f8e4m3, float, 2>("convert_f8e4m3_f32", all_patterns<f8e4m3>());
  run<float, f8e5m2, 0>("convert_f32_f8e5m2", wide(-18, 17));
  run<f8e5m2, float, 1>("convert_f8e5m2_f32", all_patterns<f8e5m2>());
  run<bf16, f16, 2>("convert_bf16_f16", as<bf16>(wide(-26, 17)));
  run<f16, f8e4m3, 0>("convert_f16_f8e4m3", as<f16>(wide(-11, 9)));
  run<f8e5m2, bf16, 1>("convert_f8e5m2_bf16", all_patterns<f8e5m2>());
  run<float, double, 2>("convert_f32_f64", wide(-149, 127.9));
  std::vector<double> d;
  for (int i = 0; i < 1000; ++i)
    d.push_back((i % 2 ? -1 : 1) * std::exp2(check::inputs.uniform(-160, 127.9)));
  run<double, float, 0>("convert_f64_f32", d);
  run<float, int, 1>("convert_f32_i32", check::random<float>(1000, -1e6, 1e6));
  run<int, float, 2>("convert_i32_f32", check::random<int>(1000, -(1 << 30), 1 << 30));
  run<float, std::uint8_t, 0>("convert_f32_u8", check::random<float>(1000, 0, 255.9));
  run<std::uint8_t, float, 1>("convert_u8_f32", check::random<std::uint8_t>(1000, 0, 255));
  run<std::int8_t, int, 2>("convert_i8_i32", check::random<std::int8_t>(1000, -128, 127));
  run<int, std::int16_t, 0>("convert_i32_i16", check::random<int>(1000, -32768, 32767));
  run<std::int16_t, std::int8_t, 1>("convert_i16_i8", check::random<std::int16_t>(1000, -128, 127));
  run<std::int64_t, int, 2>("convert_i64_i32", check::random<std::int64_t>(1000, -(1ll << 31), (1ll << 31) - 1));
  return check::result();
}
