// reduce_absmax and reduce_abssum of signed elements into an unsigned (or narrower)
// destination: |x| of each element, then the conversion (converting first would make -3 a
// 253 in uint8). int8 into uint8 and int16 into uint8, int32 into uint16-range int16, along
// both dimensions and of a rank-1 tile, from fragments and shared memory.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS abs_i8_u8_dim1
// CHECK: PASS abs_i8_u8_dim0
// CHECK: PASS abs_i16_u8_shared_dim1
// CHECK: PASS abs_i32_i16_dim0
// CHECK: PASS abs_i8_u8_rank1
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <algorithm>
#include <cstdlib>
#include <type_traits>

namespace T = tile;

/// Out[0, :] = absmax of X along Dim, Out[1, :] = abssum, into element type D.
template <class S, class D, int R, int C, int Dim, bool Shared>
[[tile::kernel]] void abs_2d(T::tensor<const S, 2> X, T::tensor<D, 2> Out) {
  auto [bx] = T::grid(1, T::threads(64));
  std::conditional_t<Shared, T::shared<S, R, C>, T::fragment<S, R, C>> x;
  T::fragment<D, Dim == 0 ? C : R> r;
  T::copy(X.at(0, 0), x);
  T::reduce_absmax(x, r, Dim);
  T::copy(r, Out.at(0, 0));
  T::reduce_abssum(x, r, Dim);
  T::copy(r, Out.at(1, 0));
}

template <int N> [[tile::kernel]] void abs_1d(T::tensor<const std::int8_t, 1> X, T::tensor<std::uint8_t, 2> Out) {
  auto [bx] = T::grid(1, T::threads(32));
  T::fragment<std::int8_t, N> x;
  T::fragment<std::uint8_t, 1> r;
  T::copy(X.at(0), x);
  T::reduce_absmax(x, r, 0);
  T::copy(r, Out.at(0, 0));
  T::reduce_abssum(x, r, 0);
  T::copy(r, Out.at(1, 0));
}

/// Checks Out against |x| reduced along `dim` of an R x C matrix (x holds negative values).
template <class S, class D, class Kernel> void run(const char *name, int R, int C, int dim, Kernel kernel) {
  auto x = check::random<S>(std::size_t(R) * C, -20, 20);
  x[0] = S(-17); // a negative element in the first row and column
  const int L = dim == 0 ? C : R, W = dim == 0 ? R : C;
  std::vector<long long> ref(2 * std::size_t(L), 0);
  for (int l = 0; l < L; ++l)
    for (int w = 0; w < W; ++w) {
      long long v = std::llabs((long long)x[dim == 0 ? w * C + l : l * C + w]);
      ref[l] = std::max(ref[l], v);
      ref[L + l] += v;
    }
  auto X = check::upload(x, {R, C});
  auto Out = check::upload(check::poisoned<D>(2 * std::size_t(L)), {2, L});
  kernel(X, Out);
  check::equal(name, ref, Out.to_vector());
}

int main() {
  using i8 = std::int8_t;
  using u8 = std::uint8_t;
  using i16 = std::int16_t;
  run<i8, u8>("abs_i8_u8_dim1", 5, 9, 1, [](auto &x, auto &o) { abs_2d<i8, u8, 5, 9, 1, false>(x, o); });
  run<i8, u8>("abs_i8_u8_dim0", 7, 3, 0, [](auto &x, auto &o) { abs_2d<i8, u8, 7, 3, 0, false>(x, o); });
  run<i16, u8>("abs_i16_u8_shared_dim1", 4, 6, 1, [](auto &x, auto &o) { abs_2d<i16, u8, 4, 6, 1, true>(x, o); });
  run<int, i16>("abs_i32_i16_dim0", 9, 5, 0, [](auto &x, auto &o) { abs_2d<int, i16, 9, 5, 0, false>(x, o); });
  run<i8, u8>("abs_i8_u8_rank1", 1, 11, 1, [](auto &x, auto &o) {
    T::tensor<const i8, 1> flat(x.data(), {11});
    abs_1d<11>(flat, o);
  });
  return check::result();
}
