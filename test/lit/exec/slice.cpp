// Copies between tiles and regions of rank-4 tensors laid out as attention's [B, S, H, D]:
// tile::slice marks on dims (1, 3), (2, 3) and on dim 1 alone, and unmarked regions that map
// onto the trailing dims; the tiles reach past S, H and D.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS slice_bshd_to_bhsd
// CHECK: PASS slice_column
// CHECK: PASS slice_trailing_hd
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

/// O[b, h, s, d] = Q[b, s, h, d] through [BM, BD] tiles; Col[b, s, h] = Q[b, s, h, D - 1].
template <int BM, int BD>
[[tile::kernel]] void bshd_to_bhsd(T::tensor<const float, 4> Q, T::tensor<float, 4> O, T::tensor<float, 3> Col) {
  const int B = Q.size(0), S = Q.size(1), H = Q.size(2), D = Q.size(3);
  auto [bx, by, bz] = T::grid(T::ceildiv(S, BM), H, B);
  T::shared<float, BM, BD> Qs;
  T::copy(Q.at(bz, T::slice(bx * BM), by, T::slice(0)), Qs);
  T::copy(Qs, O.at(bz, by, T::slice(bx * BM), T::slice(0)));
  T::fragment<float, BM> col;
  T::copy(Q.at(bz, T::slice(bx * BM), by, D - 1), col);
  T::copy(col, Col.at(bz, T::slice(bx * BM), by));
}

/// P[s, b, h, d] = Q[b, s, h, d] through [BH, BD] tiles of the trailing dims.
template <int BH, int BD>
[[tile::kernel]] void trailing_hd(T::tensor<const float, 4> Q, T::tensor<float, 4> P) {
  auto [bs, bb] = T::grid(Q.size(1), Q.size(0));
  T::fragment<float, BH, BD> hd;
  T::copy(Q.at(bb, bs, 0, 0), hd);
  T::copy(hd, P.at(bs, bb, 0, 0));
}

int main() {
  const int B = 2, S = 37, H = 3, D = 24;
  auto q = check::random<float>(std::size_t(B) * S * H * D);
  auto at = [&](int b, int s, int h, int d) { return q[((b * S + s) * H + h) * D + d]; };
  std::vector<float> o, col, p;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int s = 0; s < S; ++s)
        for (int d = 0; d < D; ++d)
          o.push_back(at(b, s, h, d));
  for (int b = 0; b < B; ++b)
    for (int s = 0; s < S; ++s)
      for (int h = 0; h < H; ++h)
        col.push_back(at(b, s, h, D - 1));
  for (int s = 0; s < S; ++s)
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h)
        for (int d = 0; d < D; ++d)
          p.push_back(at(b, s, h, d));

  auto Q = check::upload(q, {B, S, H, D});
  auto O = check::upload(check::poisoned<float>(o.size()), {B, H, S, D});
  auto Col = check::upload(check::poisoned<float>(col.size()), {B, S, H});
  auto P = check::upload(check::poisoned<float>(p.size()), {S, B, H, D});
  bshd_to_bhsd<16, 32>(Q, O, Col);
  trailing_hd<4, 32>(Q, P);
  check::equal("slice_bshd_to_bhsd", o, O.to_vector());
  check::equal("slice_column", col, Col.to_vector());
  check::equal("slice_trailing_hd", p, P.to_vector());
  return check::result();
}
