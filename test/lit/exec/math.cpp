// The scalar functions round (half away from zero), floor, ceil, trunc, sin, cos, erf,
// pow, log1p, expm1, isnan and isinf in kernels, against the C library in float64: within
// 1e-5 relative in f32 (16-bit types compute in f32), 1e-12 in f64, exact where the
// function is exact; NaN where the C library gives NaN.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS math_f32_round
// CHECK: PASS math_f32_floor
// CHECK: PASS math_f32_ceil
// CHECK: PASS math_f32_trunc
// CHECK: PASS math_f32_sin
// CHECK: PASS math_f32_cos
// CHECK: PASS math_f32_erf
// CHECK: PASS math_f32_pow
// CHECK: PASS math_f32_log1p
// CHECK: PASS math_f32_expm1
// CHECK: PASS math_f32_isnan
// CHECK: PASS math_f32_isinf
// CHECK: PASS math_f64_round
// CHECK: PASS math_f64_pow
// CHECK: PASS math_f64_isinf
// CHECK: PASS math_bf16_round
// CHECK: PASS math_bf16_erf
// CHECK: PASS math_bf16_isnan
// CHECK: PASS math_f16_sin
// CHECK: PASS math_f16_expm1
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

constexpr int F = 12; // functions, in the order of `names`
const char *names[F] = {"round", "floor", "ceil", "trunc", "sin", "cos", "erf", "pow", "log1p", "expm1", "isnan", "isinf"};

/// R[f, i] = function f of X[i] (pow: of X[i] and Y[i]); R is f32 for 16-bit inputs.
template <class E, class R, int N = 48>
[[tile::kernel]] void math(T::tensor<const E, 1> X, T::tensor<const E, 1> Y, T::tensor<R, 2> Out) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), N));
  T::fragment<E, N> x, y;
  T::fragment<R, F, N> r;
  T::copy(X.at(bx * N), x);
  T::copy(Y.at(bx * N), y);
  for (int i : T::parallel(N)) {
    r(0, i) = T::round(x(i));
    r(1, i) = T::floor(x(i));
    r(2, i) = T::ceil(x(i));
    r(3, i) = T::trunc(x(i));
    r(4, i) = T::sin(x(i));
    r(5, i) = T::cos(x(i));
    r(6, i) = T::erf(x(i));
    r(7, i) = T::pow(x(i), y(i));
    r(8, i) = T::log1p(x(i));
    r(9, i) = T::expm1(x(i));
    r(10, i) = T::isnan(x(i)) ? 1 : 0;
    r(11, i) = T::isinf(x(i)) ? 1.0f : 0.0f;
  }
  T::copy(r, Out.at(0, bx * N));
}

double reference(int f, double x, double y) {
  switch (f) {
  case 0: return std::round(x);
  case 1: return std::floor(x);
  case 2: return std::ceil(x);
  case 3: return std::trunc(x);
  case 4: return std::sin(x);
  case 5: return std::cos(x);
  case 6: return std::erf(x);
  case 7: return std::pow(x, y);
  case 8: return std::log1p(x);
  case 9: return std::expm1(x);
  case 10: return std::isnan(x);
  default: return std::isinf(x);
  }
}

template <class E, class R> void run(const char *type, std::initializer_list<int> functions, double tol) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> xs = {nan, inf, -inf, 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 1.0, -1.0, 0.25, -0.75, 7.0};
  std::vector<double> ys = {2.0, 2.0, 2.0, 3.0, 2.0, 0.5, 3.0, 2.0, 3.0, -1.0, 2.0, 0.5, 5.0, 3.0, -2.0, 2.0, 1.5};
  check::rng r(11);
  for (int i = 0; i < 140; ++i) {
    xs.push_back(r.uniform(-12, 12));
    ys.push_back(i % 3 ? r.uniform(-3, 3) : double(r.integer(-3, 3)));
  }
  std::vector<E> x, y;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    x.push_back(E(xs[i]));
    y.push_back(E(ys[i]));
  }
  const std::int64_t n = std::int64_t(x.size());
  auto X = check::upload(x, {n});
  auto Y = check::upload(y, {n});
  auto Out = check::upload(check::poisoned<R>(F * x.size()), {F, n});
  math<E, R>(X, Y, Out);
  std::vector<R> got = Out.to_vector();
  for (int f : functions) {
    const bool exact = f <= 3 || f >= 10;
    std::string name = std::string("math_") + type + "_" + names[f];
    bool ok = true;
    char why[200] = "";
    for (std::size_t i = 0; i < x.size() && ok; ++i) {
      const double xv = check::value(x[i]), yv = check::value(y[i]);
      const double want = reference(f, xv, yv), g = check::value(got[f * x.size() + i]);
      if (std::isnan(want) || std::isinf(want))
        ok = std::isnan(want) ? std::isnan(g) : g == want;
      else
        ok = exact ? g == want : std::fabs(g - want) <= tol * std::fabs(want) + 1e-30;
      if (!ok)
        std::snprintf(why, sizeof why, "%s(%.9g, %.9g) = %.9g, expected %.9g", names[f], xv, yv, g, want);
    }
    check::report(name, ok, why);
  }
}

int main() {
  const auto all = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  run<float, float>("f32", all, 1e-5);
  run<double, double>("f64", all, 1e-12);
  run<T::bf16, float>("bf16", all, 1e-5);
  run<T::f16, float>("f16", all, 1e-5);
  return check::result();
}
