// Reductions of a fragment in registers into a destination that lives in shared memory (a
// cumsum's operand, or rows that two layouts ask for): the source and the gemm that wrote it
// stay in registers, and the first thread holding each result stores it. Within a warp and
// across warps, with clear and combining with what the destination holds. And MLA decoding
// as TileLang's example writes it with key blocks of 32 over 8 warps side by side (full_col,
// which 32 columns cannot take: the score gemms run on 4x2 warps, the output's on 1x8, and
// the softmax's row vectors go to shared memory between them), against float64 at sizes
// that divide no tile. On the CPU the same kernels run as they are.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS rowmax_in_warp
// CHECK: PASS rowsum_across_warps
// CHECK: PASS mla_bn32
// CHECK: PASS mla_bn32_short
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <algorithm>

namespace T = tile;
using T::bf16;

/// Y[0:4] = the running sum of X's rows 0-3's maxima; Y[4:6] = the running sum of 1 + the
/// sums of rows 4-5 (1024 columns: 2 warps a row).
[[tile::kernel]] void reduce_shared(T::tensor<const float, 2> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(1, T::threads(128));
  T::fragment<float, 4, 256> x;
  T::fragment<float, 4> m, mc;
  T::fragment<float, 2, 1024> w;
  T::fragment<float, 2> s, sc;
  T::copy(X.at(0, 0), x);
  T::reduce_max(x, m, 1);
  T::cumsum(m, mc, 0); // (m and mc in shared memory: cumsum scans there)
  T::copy(mc, Y.at(0));
  T::copy(X.at(4, 0), w);
  T::fill(s, 1.0f);
  T::reduce_sum(w, s, 1, false);
  T::cumsum(s, sc, 0);
  T::copy(sc, Y.at(4));
}

/// MLA decoding: 64 heads a block over a 512-wide latent and a 64-wide rope part, key
/// blocks of BN, 256 threads whose warps go side by side (full_col).
template <int BN>
[[tile::kernel]] void mla(T::tensor<const bf16, 3> Q, T::tensor<const bf16, 3> Qpe, T::tensor<const bf16, 3> KV,
                          T::tensor<const bf16, 3> Kpe, T::tensor<float, 3> O, float scale) {
  constexpr int BH = 64, D = 512, P = 64;
  const int S = KV.size(1);
  auto [hb, b] = T::grid(T::ceildiv(Q.size(1), BH), Q.size(0), T::threads(256));
  T::shared<bf16, BH, D> Qs;
  T::shared<bf16, BH, P> Qpes;
  T::shared<bf16, BN, D> KVs;
  T::shared<bf16, BN, P> Kpes;
  T::shared<bf16, BH, BN> Ss;
  T::fragment<float, BH, BN> s;
  T::fragment<float, BH, D> acc;
  T::fragment<float, BH> m, m_prev, l, rs, sc;
  const float sl = scale * 1.4426950408889634f;
  T::copy(Q.at(b, hb * BH, 0), Qs);
  T::copy(Qpe.at(b, hb * BH, 0), Qpes);
  T::clear(acc);
  T::clear(l);
  T::fill(m, -T::infinity<float>());
  for (int kb : T::pipelined(T::ceildiv(S, BN), T::stages(2))) {
    T::copy(KV.at(b, kb * BN, 0), KVs);
    T::copy(Kpe.at(b, kb * BN, 0), Kpes);
    T::gemm(Qs, KVs, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_col});
    T::gemm(Qpes, Kpes, s, {.transpose_b = true, .policy = T::warp_policy::full_col});
    for (auto [i, j] : T::parallel(BH, BN))
      if (kb * BN + j >= S)
        s(i, j) = -T::infinity<float>();
    T::copy(m, m_prev);
    T::reduce_max(s, m, 1, false);
    for (int i : T::parallel(BH))
      sc(i) = T::exp2(m_prev(i) * sl - m(i) * sl);
    for (auto [i, j] : T::parallel(BH, BN))
      s(i, j) = T::exp2(s(i, j) * sl - m(i) * sl);
    T::reduce_sum(s, rs, 1);
    T::copy(s, Ss);
    for (int i : T::parallel(BH))
      l(i) = l(i) * sc(i) + rs(i);
    for (auto [i, j] : T::parallel(BH, D))
      acc(i, j) *= sc(i);
    T::gemm(Ss, KVs, acc, {.policy = T::warp_policy::full_col});
  }
  for (auto [i, j] : T::parallel(BH, D))
    acc(i, j) /= l(i);
  T::copy(acc, O.at(b, hb * BH, 0));
}

void run_reduce() {
  auto x = check::random<float>(6 * 1024);
  std::vector<double> ref(6, 0.0);
  double run = 0;
  for (int r = 0; r < 4; ++r) {
    double mx = -1e300;
    for (int c = 0; c < 256; ++c)
      mx = std::max(mx, double(x[std::size_t(r) * 1024 + c]));
    ref[r] = run += mx;
  }
  run = 0;
  for (int r = 4; r < 6; ++r) {
    double sum = 1;
    for (int c = 0; c < 1024; ++c)
      sum += x[std::size_t(r) * 1024 + c];
    ref[r] = run += sum;
  }
  auto X = check::upload(x, {6, 1024});
  auto Y = check::upload(check::poisoned<float>(6), {6});
  reduce_shared(X, Y);
  const auto y = Y.to_vector();
  check::close("rowmax_in_warp", std::vector<double>(ref.begin(), ref.begin() + 4), std::vector<float>(y.begin(), y.begin() + 4), 1e-6);
  check::close("rowsum_across_warps", std::vector<double>(ref.begin() + 4, ref.end()), std::vector<float>(y.begin() + 4, y.end()), 1e-5);
}

/// mla<32> on B sequences of S keys, H heads, against float64 softmax(scale [Q Qpe][KV Kpe]^T) KV.
void run_mla(const char *name, int B, int H, int S) {
  constexpr int D = 512, P = 64;
  const double scale = 1.0 / std::sqrt(double(D + P));
  auto q = check::random<bf16>(std::size_t(B) * H * D), qpe = check::random<bf16>(std::size_t(B) * H * P);
  auto kv = check::random<bf16>(std::size_t(B) * S * D), kpe = check::random<bf16>(std::size_t(B) * S * P);
  std::vector<double> ref(std::size_t(B) * H * D, 0.0), p(static_cast<std::size_t>(S), 0.0);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      double mx = -1e300;
      for (int j = 0; j < S; ++j) {
        double dot = 0;
        for (int d = 0; d < D; ++d)
          dot += check::value(q[(std::size_t(b) * H + h) * D + d]) * check::value(kv[(std::size_t(b) * S + j) * D + d]);
        for (int d = 0; d < P; ++d)
          dot += check::value(qpe[(std::size_t(b) * H + h) * P + d]) * check::value(kpe[(std::size_t(b) * S + j) * P + d]);
        p[j] = dot * scale;
        mx = std::max(mx, p[j]);
      }
      double l = 0;
      for (int j = 0; j < S; ++j)
        l += p[j] = std::exp(p[j] - mx);
      for (int j = 0; j < S; ++j)
        for (int d = 0; d < D; ++d)
          ref[(std::size_t(b) * H + h) * D + d] += p[j] / l * check::value(kv[(std::size_t(b) * S + j) * D + d]);
    }
  auto Qd = check::upload(q, {B, H, D}), Qped = check::upload(qpe, {B, H, P});
  auto KVd = check::upload(kv, {B, S, D}), Kped = check::upload(kpe, {B, S, P});
  auto O = check::upload(check::poisoned<float>(std::size_t(B) * H * D), {B, H, D});
  mla<32>(Qd, Qped, KVd, Kped, O, float(scale));
  check::close(name, ref, O.to_vector(), 2e-2);
}

int main() {
  run_reduce();
  run_mla("mla_bn32", 2, 128, 200);
  run_mla("mla_bn32_short", 1, 64, 17);
  return check::result();
}
