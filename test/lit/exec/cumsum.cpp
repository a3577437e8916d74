// tile::cumsum forward and reverse, along both dimensions and of rank-1 tiles, at
// non-power-of-two widths, in place and into another buffer, in fragments and in shared
// memory, on tensors whose last tile is partial (the zeros read past the edge add nothing).
// A rank-1 scan or reduction is one thread's work on the GPU, not every thread's at once.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS cumsum_dim1_fwd_5x7
// CHECK: PASS cumsum_dim1_rev_5x7
// CHECK: PASS cumsum_dim1_rev_inplace_3x33
// CHECK: PASS cumsum_dim1_fwd_shared_7x100
// CHECK: PASS cumsum_dim0_fwd_100x3
// CHECK: PASS cumsum_dim0_rev_100x3
// CHECK: PASS cumsum_dim0_fwd_inplace_7x5
// CHECK: PASS cumsum_dim0_rev_shared_33x1
// CHECK: PASS cumsum_rank1_fwd_100
// CHECK: PASS cumsum_rank1_rev_inplace_1
// CHECK: PASS cumsum_rank1_fwd_inplace_100
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <type_traits>

namespace T = tile;

template <bool Shared, int... D>
using buffer = std::conditional_t<Shared, T::shared<float, D...>, T::fragment<float, D...>>;

/// Y = cumsum of the [R, C] tiles of X along Dim; a column of blocks over the rows.
template <int R, int C, int Dim, bool Reverse, bool InPlace, bool Shared>
[[tile::kernel]] void cumsum_2d(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), R));
  buffer<Shared, R, C> x, y;
  T::copy(X.at(bx * R, 0), x);
  if constexpr (InPlace) {
    T::cumsum(x, x, Dim, Reverse);
    T::copy(x, Y.at(bx * R, 0));
  } else {
    T::cumsum(x, y, Dim, Reverse);
    T::copy(y, Y.at(bx * R, 0));
  }
}

template <int N, bool Reverse, bool InPlace>
[[tile::kernel]] void cumsum_1d(T::tensor<const float, 1> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), N));
  T::fragment<float, N> x, y;
  T::copy(X.at(bx * N), x);
  if constexpr (InPlace) {
    T::cumsum(x, x, 0, Reverse);
    T::copy(x, Y.at(bx * N));
  } else {
    T::cumsum(x, y, 0, Reverse);
    T::copy(y, Y.at(bx * N));
  }
}

/// Checks kernel(X, Y) on an M x N matrix whose tiles are R rows high, summed along `dim`.
/// Inputs are small integers, so that float sums are exact.
template <int Rank, class Kernel>
void run(const std::string &name, int M, int N, int R, int dim, bool reverse, Kernel kernel) {
  auto x = check::random<float>(std::size_t(M) * N, -8, 8);
  for (auto &v : x)
    v = std::round(v);
  std::vector<float> ref(x.size());
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      // Sum over the positions of (i, j)'s tile from its start (or end) to (i, j).
      int tile_begin = dim == 0 ? i / R * R : 0, tile_end = dim == 0 ? std::min(M, tile_begin + R) : N;
      int pos = dim == 0 ? i : j, first = reverse ? pos : tile_begin, last = reverse ? tile_end - 1 : pos;
      float s = 0;
      for (int p = first; p <= last; ++p)
        s += x[dim == 0 ? p * N + j : i * N + p];
      ref[i * N + j] = s;
    }
  if constexpr (Rank == 1) {
    auto X = check::upload(x, {M}), Y = check::upload(check::poisoned<float>(x.size()), {M});
    kernel(X, Y);
    check::equal(name, ref, Y.to_vector());
  } else {
    auto X = check::upload(x, {M, N}), Y = check::upload(check::poisoned<float>(x.size()), {M, N});
    kernel(X, Y);
    check::equal(name, ref, Y.to_vector());
  }
}

template <int R, int C, int Dim, bool Reverse, bool InPlace = false, bool Shared = false>
void case_2d(const char *name, int M, int N) {
  run<2>(name, M, N, R, Dim, Reverse, [](auto &x, auto &y) { cumsum_2d<R, C, Dim, Reverse, InPlace, Shared>(x, y); });
}

int main() {
  // M is one past a multiple of the tile's height; N is the tile's width or less.
  case_2d<5, 7, 1, false>("cumsum_dim1_fwd_5x7", 11, 7);
  case_2d<5, 7, 1, true>("cumsum_dim1_rev_5x7", 11, 6);
  case_2d<3, 33, 1, true, true>("cumsum_dim1_rev_inplace_3x33", 7, 31);
  case_2d<7, 100, 1, false, false, true>("cumsum_dim1_fwd_shared_7x100", 15, 97);
  case_2d<100, 3, 0, false>("cumsum_dim0_fwd_100x3", 201, 3);
  case_2d<100, 3, 0, true>("cumsum_dim0_rev_100x3", 201, 2);
  case_2d<7, 5, 0, false, true>("cumsum_dim0_fwd_inplace_7x5", 15, 5);
  case_2d<33, 1, 0, true, false, true>("cumsum_dim0_rev_shared_33x1", 67, 1);
  run<1>("cumsum_rank1_fwd_100", 201, 1, 100, 0, false, [](auto &x, auto &y) { cumsum_1d<100, false, false>(x, y); });
  run<1>("cumsum_rank1_rev_inplace_1", 3, 1, 1, 0, true, [](auto &x, auto &y) { cumsum_1d<1, true, true>(x, y); });
  // In place over 100 elements: on the GPU every thread scanned the shared tile at once
  // (each read sums the others had already written).
  run<1>("cumsum_rank1_fwd_inplace_100", 201, 1, 100, 0, false, [](auto &x, auto &y) { cumsum_1d<100, false, true>(x, y); });
  return check::result();
}
