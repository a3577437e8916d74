// Every reduction (sum, max, min, absmax, abssum, each also with clear = false onto what
// the destination holds) of f32 and int32 tiles, along both dimensions, at widths 1, 3, 7,
// 33 and 100, with thread counts that are not powers of two; one-row tiles whose row spans
// several warps (128 to 256 threads on a row); and of rank-1 tiles.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS reduce_f32_dim1_5x1
// CHECK: PASS reduce_f32_dim1_4x3
// CHECK: PASS reduce_f32_dim1_3x7
// CHECK: PASS reduce_f32_dim1_7x33
// CHECK: PASS reduce_f32_dim1_2x100
// CHECK: PASS reduce_f32_dim1_1x1024
// CHECK: PASS reduce_f32_dim1_1x512
// CHECK: PASS reduce_f32_dim1_1x2048
// CHECK: PASS reduce_f32_dim0_1x5
// CHECK: PASS reduce_f32_dim0_3x4
// CHECK: PASS reduce_f32_dim0_7x3
// CHECK: PASS reduce_f32_dim0_33x7
// CHECK: PASS reduce_f32_dim0_100x2
// CHECK: PASS reduce_f32_rank1_1
// CHECK: PASS reduce_f32_rank1_33
// CHECK: PASS reduce_f32_rank1_100
// CHECK: PASS reduce_i32_dim1_5x1
// CHECK: PASS reduce_i32_dim1_4x3
// CHECK: PASS reduce_i32_dim1_3x7
// CHECK: PASS reduce_i32_dim1_7x33
// CHECK: PASS reduce_i32_dim1_2x100
// CHECK: PASS reduce_i32_dim1_1x1024
// CHECK: PASS reduce_i32_dim1_1x512
// CHECK: PASS reduce_i32_dim1_1x2048
// CHECK: PASS reduce_i32_dim0_1x5
// CHECK: PASS reduce_i32_dim0_3x4
// CHECK: PASS reduce_i32_dim0_7x3
// CHECK: PASS reduce_i32_dim0_33x7
// CHECK: PASS reduce_i32_dim0_100x2
// CHECK: PASS reduce_i32_rank1_1
// CHECK: PASS reduce_i32_rank1_33
// CHECK: PASS reduce_i32_rank1_100
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <algorithm>

namespace T = tile;

/// Out[k] is reduction k of X along Dim: sum, max, min, absmax, abssum, then the same five
/// with clear = false onto Init[0] (sum, max, min) or Init[1] (absmax, abssum; >= 0).
template <class E, int R, int C, int Dim, int Threads>
[[tile::kernel]] void reduce_2d(T::tensor<const E, 2> X, T::tensor<const E, 2> Init, T::tensor<E, 2> Out) {
  auto [bx] = T::grid(1, T::threads(Threads));
  T::fragment<E, R, C> x;
  T::fragment<E, Dim == 0 ? C : R> r;
  T::copy(X.at(0, 0), x);
  T::reduce_sum(x, r, Dim);
  T::copy(r, Out.at(0, 0));
  T::reduce_max(x, r, Dim);
  T::copy(r, Out.at(1, 0));
  T::reduce_min(x, r, Dim);
  T::copy(r, Out.at(2, 0));
  T::reduce_absmax(x, r, Dim);
  T::copy(r, Out.at(3, 0));
  T::reduce_abssum(x, r, Dim);
  T::copy(r, Out.at(4, 0));
  T::copy(Init.at(0, 0), r);
  T::reduce_sum(x, r, Dim, false);
  T::copy(r, Out.at(5, 0));
  T::copy(Init.at(0, 0), r);
  T::reduce_max(x, r, Dim, false);
  T::copy(r, Out.at(6, 0));
  T::copy(Init.at(0, 0), r);
  T::reduce_min(x, r, Dim, false);
  T::copy(r, Out.at(7, 0));
  T::copy(Init.at(1, 0), r);
  T::reduce_absmax(x, r, Dim, false);
  T::copy(r, Out.at(8, 0));
  T::copy(Init.at(1, 0), r);
  T::reduce_abssum(x, r, Dim, false);
  T::copy(r, Out.at(9, 0));
}

/// The same for a rank-1 tile, reduced into a tile of one element.
template <class E, int N>
[[tile::kernel]] void reduce_1d(T::tensor<const E, 1> X, T::tensor<const E, 2> Init, T::tensor<E, 2> Out) {
  auto [bx] = T::grid(1, T::threads(96));
  T::fragment<E, N> x;
  T::fragment<E, 1> r;
  T::copy(X.at(0), x);
  T::reduce_sum(x, r, 0);
  T::copy(r, Out.at(0, 0));
  T::reduce_max(x, r, 0);
  T::copy(r, Out.at(1, 0));
  T::reduce_min(x, r, 0);
  T::copy(r, Out.at(2, 0));
  T::reduce_absmax(x, r, 0);
  T::copy(r, Out.at(3, 0));
  T::reduce_abssum(x, r, 0);
  T::copy(r, Out.at(4, 0));
  T::copy(Init.at(0, 0), r);
  T::reduce_sum(x, r, 0, false);
  T::copy(r, Out.at(5, 0));
  T::copy(Init.at(0, 0), r);
  T::reduce_max(x, r, 0, false);
  T::copy(r, Out.at(6, 0));
  T::copy(Init.at(0, 0), r);
  T::reduce_min(x, r, 0, false);
  T::copy(r, Out.at(7, 0));
  T::copy(Init.at(1, 0), r);
  T::reduce_absmax(x, r, 0, false);
  T::copy(r, Out.at(8, 0));
  T::copy(Init.at(1, 0), r);
  T::reduce_abssum(x, r, 0, false);
  T::copy(r, Out.at(9, 0));
}

const char *const kinds[] = {"sum", "max", "min", "absmax", "abssum"};

/// Reduction `kind` of v onto acc.
double combine(int kind, double acc, double v) {
  switch (kind) {
  case 0: return acc + v;
  case 1: return std::max(acc, v);
  case 2: return std::min(acc, v);
  case 3: return std::max(acc, std::abs(v));
  default: return acc + std::abs(v);
  }
}
double identity(int kind) { return kind == 1 ? -INFINITY : kind == 2 ? INFINITY : 0.0; }

/// Runs kernel(X, Init, Out) on an R x C matrix (R * C elements for a rank-1 X) reduced
/// along `dim`, checks the ten results and prints one line naming the wrong ones. Float
/// errors are measured against the sum of magnitudes, which bounds float rounding.
template <class E, bool Rank1, class Kernel> void run(const char *type, int R, int C, int dim, Kernel kernel) {
  const int L = dim == 0 ? C : R, W = dim == 0 ? R : C;
  const double range = std::is_integral_v<E> ? 50 : 1;
  auto x = check::random<E>(std::size_t(R) * C, -range, range);
  auto init = check::random<E>(std::size_t(L), -range, range), init_abs = check::random<E>(std::size_t(L), 0, range);
  init.insert(init.end(), init_abs.begin(), init_abs.end());
  auto Init = check::upload(init, {2, L});
  auto Out = check::upload(check::poisoned<E>(std::size_t(10) * L), {10, L});
  if constexpr (Rank1) {
    auto X = check::upload(x, {R * C});
    kernel(X, Init, Out);
  } else {
    auto X = check::upload(x, {R, C});
    kernel(X, Init, Out);
  }
  auto out = Out.to_vector();
  std::string wrong;
  for (int k = 0; k < 10; ++k) {
    double err = 0, scale = 0;
    for (int l = 0; l < L; ++l) {
      double acc = k < 5 ? identity(k) : check::value(init[(k < 8 ? 0 : L) + l]), mag = std::abs(acc);
      for (int w = 0; w < W; ++w) {
        double v = check::value(x[dim == 0 ? w * C + l : l * C + w]);
        acc = combine(k % 5, acc, v);
        mag += std::abs(v);
      }
      double d = check::value(out[k * L + l]) - acc;
      err += d * d;
      scale += mag * mag;
    }
    if (!(std::sqrt(err) <= (std::is_integral_v<E> ? 0.0 : 1e-5 * std::sqrt(scale))))
      wrong += std::string(" ") + kinds[k % 5] + (k < 5 ? "" : "(clear=false)");
  }
  std::string name = std::string("reduce_") + type +
                     (Rank1 ? "_rank1_" + std::to_string(R * C)
                            : "_dim" + std::to_string(dim) + "_" + std::to_string(R) + "x" + std::to_string(C));
  check::report(name, wrong.empty(), "wrong:" + wrong);
}

template <class E, int R, int C, int Dim, int Threads> void case_2d(const char *type) {
  run<E, false>(type, R, C, Dim, [](auto &x, auto &init, auto &out) { reduce_2d<E, R, C, Dim, Threads>(x, init, out); });
}
template <class E, int N> void case_1d(const char *type) {
  run<E, true>(type, N, 1, 0, [](auto &x, auto &init, auto &out) { reduce_1d<E, N>(x, init, out); });
}

template <class E> void run_all(const char *type) {
  case_2d<E, 5, 1, 1, 128>(type);
  case_2d<E, 4, 3, 1, 96>(type);
  case_2d<E, 3, 7, 1, 128>(type);
  case_2d<E, 7, 33, 1, 160>(type);
  case_2d<E, 2, 100, 1, 96>(type);
  case_2d<E, 1, 1024, 1, 128>(type);
  case_2d<E, 1, 512, 1, 256>(type);
  case_2d<E, 1, 2048, 1, 256>(type);
  case_2d<E, 1, 5, 0, 128>(type);
  case_2d<E, 3, 4, 0, 96>(type);
  case_2d<E, 7, 3, 0, 128>(type);
  case_2d<E, 33, 7, 0, 160>(type);
  case_2d<E, 100, 2, 0, 96>(type);
  case_1d<E, 1>(type);
  case_1d<E, 33>(type);
  case_1d<E, 100>(type);
}

int main() {
  run_all<float>("f32");
  run_all<int>("i32");
  return check::result();
}
