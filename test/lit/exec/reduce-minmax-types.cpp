// reduce_max and reduce_min into a destination type that holds the result but not every
// element: int8 elements with negative values into uint8 (max), int elements far outside
// int8 into int8 (max and min). Each element is compared as it is; only the result is
// converted (converting each element first made max(-3, 5) into uint8 a 253). With
// clear = false the destination's value takes part. Fragments (register reductions, one
// warp and several warps per row) and shared buffers, along both dimensions.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS max_i8_u8_dim1
// CHECK: PASS max_i8_u8_dim0_shared
// CHECK: PASS max_i32_i8_dim1
// CHECK: PASS min_i32_i8_dim0
// CHECK: PASS max_i32_i8_keep_dim1
// CHECK: PASS min_i32_i8_keep_dim1_shared
// CHECK: PASS max_i8_u8_wide_rows
// CHECK: PASS min_i32_i8_wide_rows
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <algorithm>
#include <type_traits>

namespace T = tile;

/// Out[0, :] = max (or min) of X along Dim into element type D; with Keep, Out's own values
/// (read first) take part.
template <class S, class D, int R, int C, int Dim, bool Max, bool Keep, bool Shared, int Threads>
[[tile::kernel]] void minmax(T::tensor<const S, 2> X, T::tensor<D, 2> Out) {
  auto [bx] = T::grid(1, T::threads(Threads));
  std::conditional_t<Shared, T::shared<S, R, C>, T::fragment<S, R, C>> x;
  T::fragment<D, Dim == 0 ? C : R> r;
  T::copy(X.at(0, 0), x);
  if constexpr (Keep)
    T::copy(Out.at(0, 0), r);
  if constexpr (Max)
    T::reduce_max(x, r, Dim, !Keep);
  else
    T::reduce_min(x, r, Dim, !Keep);
  T::copy(r, Out.at(0, 0));
}

/// Runs one instantiation on X with elements in [lo, hi] (and `plant` at [0, 0]); the
/// destination starts at `start` (taken in when Keep) and must hold every result.
template <class S, class D, int R, int C, int Dim, bool Max, bool Keep, bool Shared, int Threads = 64>
void run(const char *name, double lo, double hi, S plant, D start) {
  auto x = check::random<S>(std::size_t(R) * C, lo, hi);
  x[0] = plant;
  const int L = Dim == 0 ? C : R, W = Dim == 0 ? R : C;
  std::vector<long long> ref(L);
  std::vector<D> out(L, Keep ? start : check::poison<D>());
  for (int l = 0; l < L; ++l) {
    long long v = Keep ? (long long)start : (long long)x[Dim == 0 ? l : l * C];
    for (int w = 0; w < W; ++w) {
      long long e = x[Dim == 0 ? w * C + l : l * C + w];
      v = Max ? std::max(v, e) : std::min(v, e);
    }
    ref[l] = v;
  }
  auto X = check::upload(x, {R, C});
  auto Out = check::upload(out, {1, L});
  minmax<S, D, R, C, Dim, Max, Keep, Shared, Threads>(X, Out);
  check::equal(name, ref, Out.to_vector());
}

int main() {
  using i8 = std::int8_t;
  using u8 = std::uint8_t;
  // Maxima in [0, 20] of elements down to -20 (-3 as uint8 is 253).
  run<i8, u8, 5, 9, 1, true, false, false>("max_i8_u8_dim1", -20, 20, i8(-17), u8(0));
  run<i8, u8, 7, 3, 0, true, false, true>("max_i8_u8_dim0_shared", -20, 20, i8(-17), u8(0));
  // Elements of int outside int8 (they wrap when converted: -200 is 56, 300 is 44).
  run<int, i8, 6, 10, 1, true, false, false>("max_i32_i8_dim1", -1000, 100, -300, i8(0));
  run<int, i8, 11, 4, 0, false, false, false>("min_i32_i8_dim0", -100, 1000, 300, i8(0));
  run<int, i8, 6, 10, 1, true, true, false>("max_i32_i8_keep_dim1", -1000, 50, -200, i8(60));
  run<int, i8, 6, 10, 1, false, true, true>("min_i32_i8_keep_dim1_shared", -50, 1000, 200, i8(-60));
  // Rows long enough that several warps hold one row on the GPU (partials through shared memory).
  run<i8, u8, 2, 1024, 1, true, false, false, 256>("max_i8_u8_wide_rows", -100, 90, i8(-3), u8(0));
  run<int, i8, 2, 1024, 1, false, false, false, 256>("min_i32_i8_wide_rows", -120, 2000, 700, i8(0));
  return check::result();
}
