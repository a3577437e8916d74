// Copies at tensor edges: reads past the edge give zero, writes past the edge are dropped
// (the memory around the output, inside one allocation, stays untouched), blocks wholly
// past the edge do nothing; and copies between regions of shared buffers and tiles.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS edge_reads_zero_2d
// CHECK: PASS edge_writes_dropped_2d
// CHECK: PASS edge_writes_dropped_1d
// CHECK: PASS shared_regions
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

/// Z (whole tiles) receives the tiles of X as read, zeros past X's edge included;
/// Y = 2 X + 1, whose tiles reach past Y's edge.
template <int BM, int BN>
[[tile::kernel]] void edges_2d(T::tensor<const float, 2> X, T::tensor<float, 2> Y, T::tensor<float, 2> Z) {
  auto [bx, by] = T::grid(T::ceildiv(X.size(1), BN), T::ceildiv(X.size(0), BM));
  T::fragment<float, BM, BN> f;
  T::copy(X.at(by * BM, bx * BN), f);
  T::copy(f, Z.at(by * BM, bx * BN));
  for (auto [i, j] : T::parallel(BM, BN))
    f(i, j) = 2.0f * f(i, j) + 1.0f;
  T::copy(f, Y.at(by * BM, bx * BN));
}

/// Y = X + 1 with two more blocks than X needs.
template <int N> [[tile::kernel]] void edges_1d(T::tensor<const float, 1> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), N) + 2);
  T::shared<float, N> s;
  T::local<float, N> l;
  T::copy(X.at(bx * N), s);
  for (int i : T::parallel(N))
    s(i) = s(i) + 1.0f;
  T::copy(s, l);
  T::copy(l, Y.at(bx * N));
}

/// Right = X[:, 16:], Bottom = X[16:, :], Placed = X[:, 16:] placed at (4, 8) of zeros.
[[tile::kernel]] void shared_regions(T::tensor<const float, 2> X, T::tensor<float, 2> Right, T::tensor<float, 2> Bottom,
                                     T::tensor<float, 2> Placed) {
  auto [bx] = T::grid(1);
  T::shared<float, 32, 32> s;
  T::shared<float, 40, 32> p;
  T::fragment<float, 32, 16> right;
  T::fragment<float, 16, 32> bottom;
  T::copy(X.at(0, 0), s);
  T::copy(s.at(0, 16), right);
  T::copy(s.at(16, 0), bottom);
  T::clear(p);
  T::copy(right, p.at(4, 8));
  T::copy(right, Right.at(0, 0));
  T::copy(bottom, Bottom.at(0, 0));
  T::copy(p, Placed.at(0, 0));
}

int main() {
  const float guard = -777.0f;
  {
    const int M = 37, N = 29, BM = 16, BN = 16, pad = 16, ld = N + 2 * pad;
    const int ZM = (M + BM - 1) / BM * BM, ZN = (N + BN - 1) / BN * BN;
    auto x = check::random<float>(std::size_t(M) * N);
    std::vector<float> z(std::size_t(ZM) * ZN, 0.0f), g(std::size_t(M + 2 * pad) * ld, guard);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        z[i * ZN + j] = x[i * N + j];
        g[(i + pad) * ld + j + pad] = 2.0f * x[i * N + j] + 1.0f;
      }
    auto X = check::upload(x, {M, N});
    auto Z = check::upload(check::poisoned<float>(z.size()), {ZM, ZN});
    // Y is a window of G with a guard band of `pad` elements on every side.
    auto G = check::upload(std::vector<float>(g.size(), guard), {M + 2 * pad, ld});
    T::tensor<float, 2> Y(G.data() + pad * ld + pad, {M, N}, {ld, 1});
    edges_2d<BM, BN>(X, Y, Z);
    check::equal("edge_reads_zero_2d", z, Z.to_vector());
    check::equal("edge_writes_dropped_2d", g, G.to_vector());
  }
  {
    const int n = 70, pad = 100;
    auto x = check::random<float>(n);
    std::vector<float> g(n + 2 * pad, guard);
    for (int i = 0; i < n; ++i)
      g[pad + i] = x[i] + 1.0f;
    auto X = check::upload(x, {n});
    auto G = check::upload(std::vector<float>(g.size(), guard), {n + 2 * pad});
    T::tensor<float, 1> Y(G.data() + pad, {n});
    edges_1d<32>(X, Y);
    check::equal("edge_writes_dropped_1d", g, G.to_vector());
  }
  {
    auto x = check::random<float>(32 * 32);
    std::vector<float> right, bottom(x.begin() + 16 * 32, x.end()), placed(40 * 32, 0.0f);
    for (int i = 0; i < 32; ++i)
      for (int j = 0; j < 16; ++j) {
        right.push_back(x[i * 32 + 16 + j]);
        placed[(i + 4) * 32 + j + 8] = x[i * 32 + 16 + j];
      }
    auto X = check::upload(x, {32, 32});
    auto Right = check::upload(check::poisoned<float>(32 * 16), {32, 16});
    auto Bottom = check::upload(check::poisoned<float>(16 * 32), {16, 32});
    auto Placed = check::upload(check::poisoned<float>(40 * 32), {40, 32});
    shared_regions(X, Right, Bottom, Placed);
    std::vector<float> got = Right.to_vector(), b = Bottom.to_vector(), p = Placed.to_vector();
    got.insert(got.end(), b.begin(), b.end());
    got.insert(got.end(), p.begin(), p.end());
    right.insert(right.end(), bottom.begin(), bottom.end());
    right.insert(right.end(), placed.begin(), placed.end());
    check::equal("shared_regions", right, got);
  }
  return check::result();
}
