// Loops whose tiles the producer warpgroup of sm_90a moves besides a gemm's operands: a
// one-dimensional tile (a bias or log-sum-exp vector of the key block), a tile of narrow
// dense rows (32 bytes), and copies written after other statements of the body (TileLang's
// backward copies lse and dO between its gemms), which the producer issues with the
// iteration's first ones, and one-dimensional tiles of 64 and 16 bytes (stages padded to
// 128 bytes). Each kernel runs where the tensors take tensor maps (the entry with
// the producer) and where one of them does not (a vector whose rows are not a multiple of 16
// bytes apart: the fallback entry), on sizes that divide no tile, against float64. And the
// backward pass of attention as TileLang's example_mha_bwd writes it (dK and dV of a key
// block, dQ by atomics), causal and not. On the CPU the same kernels run as they are.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS bias_1_block
// CHECK: PASS bias_5_blocks
// CHECK: PASS bias_fallback
// CHECK: PASS hoisted_0_blocks
// CHECK: PASS hoisted_4_blocks
// CHECK: PASS hoisted_fallback
// CHECK: PASS vectors_1_block
// CHECK: PASS vectors_6_blocks
// CHECK: PASS vectors_fallback
// CHECK: PASS bwd_dq
// CHECK: PASS bwd_dk
// CHECK: PASS bwd_dv
// CHECK: PASS bwd_causal_dq
// CHECK: PASS bwd_causal_dk
// CHECK: PASS bwd_causal_dv
// CHECK: PASS bwd_fallback_dq
// CHECK: PASS bwd_fallback_dk
// CHECK: PASS bwd_fallback_dv
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <algorithm>

namespace T = tile;
using T::bf16;

/// O = sum over key blocks kb < blocks of (w(j, 0) * (Q K_kb^T)(i, j) - bias(j)) V_kb(j, :),
/// the scores rounded to bf16; Q [M, 64], K and V [N, 64], bias [rows, N] (row `r` used), w
/// [N, 8] (column 0 used, the others read too). The 1-D tile `bs` and the narrow tile `ws`
/// are copied by the producer; in Hoisted, `bs` and `Vs` are copied after the first gemm.
template <bool Hoisted>
[[tile::kernel]] void biased(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K, T::tensor<const bf16, 2> V,
                             T::tensor<const float, 2> bias, T::tensor<const float, 2> w, T::tensor<float, 2> O,
                             int r, int blocks) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 64), T::threads(128));
  T::shared<bf16, 64, 64> Qs, Ks, Vs;
  T::shared<float, 64> bs;
  T::shared<float, 64, 8> ws;
  T::fragment<float, 64, 64> s, acc;
  T::fragment<bf16, 64, 64> p;
  T::copy(Q.at(bx * 64, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(blocks, T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(w.at(kb * 64, 0), ws);
    if constexpr (!Hoisted) {
      T::copy(bias.at(r, kb * 64), bs);
      T::copy(V.at(kb * 64, 0), Vs);
    }
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    if constexpr (Hoisted)
      T::copy(bias.at(r, kb * 64), bs);
    for (auto [i, j] : T::parallel(64, 64))
      s(i, j) = s(i, j) * (ws(j, 0) + ws(j, 7) - ws(j, 7)) - bs(j);
    T::copy(s, p);
    if constexpr (Hoisted)
      T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(bx * 64, 0));
}

/// O[i, j] = sum over key blocks kb < blocks of (Q K_kb^T)(i, j) * g(kb * 16 + j / 4) * c(4 kb)
/// + c(4 kb + 3): one-dimensional tiles of 64 bytes (a scale for each 4 keys) and of 16 bytes
/// (four coefficients a block), which the producer loads into stages padded to 128 bytes.
/// Q [M, 64], K [N, 64], g and c vectors.
[[tile::kernel]] void small_vectors(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K,
                                    T::tensor<const float, 1> g, T::tensor<const float, 1> c, T::tensor<float, 2> O,
                                    int blocks) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 64), T::threads(128));
  T::shared<bf16, 64, 64> Qs, Ks;
  T::shared<float, 16> gs;
  T::shared<float, 4> cs;
  T::fragment<float, 64, 64> s, acc;
  T::copy(Q.at(bx * 64, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(blocks, T::stages(3))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(g.at(kb * 16), gs);
    T::copy(c.at(kb * 4), cs);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true});
    for (auto [i, j] : T::parallel(64, 64))
      acc(i, j) += s(i, j) * gs(j / 4) * cs(0) + cs(3);
  }
  T::copy(acc, O.at(bx * 64, 0));
}

/// biased<Hoisted> on M queries, N keys and `blocks` key blocks, bias rows of `stride`
/// floats (row 1 used: a stride of N + 1 is not a multiple of 16 bytes where N is a multiple
/// of 4, so no tensor map takes it).
template <bool Hoisted> void run_biased(const char *name, int M, int N, int blocks, int stride) {
  auto q = check::random<bf16>(std::size_t(M) * 64), k = check::random<bf16>(std::size_t(N) * 64),
       v = check::random<bf16>(std::size_t(N) * 64);
  auto bias = check::random<float>(std::size_t(2) * stride), w = check::random<float>(std::size_t(N) * 8, 0.5, 1.5);
  std::vector<double> ref(std::size_t(M) * 64, 0.0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < std::min(N, blocks * 64); ++j) {
      double dot = 0;
      for (int d = 0; d < 64; ++d)
        dot += check::value(q[std::size_t(i) * 64 + d]) * check::value(k[std::size_t(j) * 64 + d]);
      const double pij = check::value(bf16(float(dot * w[std::size_t(j) * 8] - bias[std::size_t(stride) + j])));
      for (int d = 0; d < 64; ++d)
        ref[std::size_t(i) * 64 + d] += pij * check::value(v[std::size_t(j) * 64 + d]);
    }
  auto Qd = check::upload(q, {M, 64}), Kd = check::upload(k, {N, 64}), Vd = check::upload(v, {N, 64});
  auto Bd = check::upload(bias, {2, stride}), Wd = check::upload(w, {N, 8});
  T::tensor<const float, 2> B(Bd.data(), {2, N}, {stride, 1});
  auto O = check::upload(check::poisoned<float>(std::size_t(M) * 64), {M, 64});
  biased<Hoisted>(Qd, Kd, Vd, B, Wd, O, 1, blocks);
  check::entry(name, stride % 4 == 0);
  check::close(name, ref, O.to_vector(), 2e-2);
}

/// small_vectors on M queries, N keys and `blocks` key blocks; g holds `gn` scales, c
/// 4 * blocks coefficients, from `shift` floats past a 16-byte boundary (1: no tensor map
/// takes g, the fallback entry runs).
void run_small_vectors(const char *name, int M, int N, int blocks, int gn, int shift) {
  auto q = check::random<bf16>(std::size_t(M) * 64), k = check::random<bf16>(std::size_t(N) * 64);
  auto g = check::random<float>(std::size_t(gn + shift), 0.5, 1.5), c = check::random<float>(std::size_t(4 * blocks));
  std::vector<double> ref(std::size_t(M) * 64, 0.0);
  for (int i = 0; i < M; ++i)
    for (int kb = 0; kb < blocks; ++kb)
      for (int j = 0; j < 64; ++j) {
        const int n = kb * 64 + j, gi = kb * 16 + j / 4;
        double dot = 0;
        for (int d = 0; n < N && d < 64; ++d)
          dot += check::value(q[std::size_t(i) * 64 + d]) * check::value(k[std::size_t(n) * 64 + d]);
        const double scale = gi < gn ? g[std::size_t(gi + shift)] : 0.0;
        ref[std::size_t(i) * 64 + j] += dot * scale * c[std::size_t(4 * kb)] + c[std::size_t(4 * kb + 3)];
      }
  auto Qd = check::upload(q, {M, 64}), Kd = check::upload(k, {N, 64});
  auto Gd = check::upload(g, {gn + shift}), Cd = check::upload(c, {4 * blocks});
  T::tensor<const float, 1> G(Gd.data() + shift, {gn}, {1});
  auto O = check::upload(check::poisoned<float>(std::size_t(M) * 64), {M, 64});
  small_vectors(Qd, Kd, G, Cd, O, blocks);
  check::entry(name, shift % 4 == 0);
  check::close(name, ref, O.to_vector(), 2e-2);
}

/// Attention's backward over one key block a block (BM keys), its loop over query blocks
/// (BN queries) as TileLang's example_mha_bwd: P^T = exp(scale K Q^T - lse), dV += P^T dO,
/// dP^T = V dO^T, dS^T = P^T (dP^T - delta) scale, dK += dS^T Q, dQ += dS K by atomics.
/// Q, K, V, dO [B, H, S, D]; lse, delta [B, H, S]; dQ (zeroed) [B, H, S, D] in f32.
template <int D, bool CAUSAL, int BM = 64, int BN = 64>
[[tile::kernel]] void bwd(T::tensor<const bf16, 4> Q, T::tensor<const bf16, 4> K, T::tensor<const bf16, 4> V,
                          T::tensor<const bf16, 4> dO, T::tensor<const float, 3> lse, T::tensor<const float, 3> delta,
                          T::tensor<float, 4> dQ, T::tensor<bf16, 4> dK, T::tensor<bf16, 4> dV, float scale) {
  const int S = Q.size(2);
  auto [bx, by, bz] = T::grid(T::ceildiv(S, BM), Q.size(1), Q.size(0), T::threads(128));
  const float log2e = 1.4426950408889634f;
  T::shared<bf16, BM, D> Ks, Vs;
  T::shared<bf16, BN, D> Qs, dOs;
  T::shared<float, BN> lse_s, delta_s;
  T::shared<bf16, BM, BN> dSs;
  T::fragment<float, BM, BN> qkT, dsT;
  T::fragment<bf16, BM, BN> qkT_cast, dsT_cast;
  T::fragment<float, BM, D> dv, dk;
  T::fragment<float, BN, D> dq;
  T::copy(K.at(bz, by, bx * BM, 0), Ks);
  T::copy(V.at(bz, by, bx * BM, 0), Vs);
  T::clear(dv);
  T::clear(dk);
  const int first = CAUSAL ? bx * BM / BN : 0;
  for (int kb : T::pipelined(first, T::ceildiv(S, BN), T::stages(2))) {
    T::copy(Q.at(bz, by, kb * BN, 0), Qs);
    T::gemm(Ks, Qs, qkT, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    T::copy(lse.at(bz, by, kb * BN), lse_s);
    for (auto [i, j] : T::parallel(BM, BN))
      qkT(i, j) = T::exp2((qkT(i, j) * scale - lse_s(j)) * log2e);
    for (auto [i, j] : T::parallel(BM, BN))
      if ((CAUSAL && bx * BM + i > kb * BN + j) || kb * BN + j >= S)
        qkT(i, j) = 0.0f;
    T::copy(dO.at(bz, by, kb * BN, 0), dOs);
    T::gemm(Vs, dOs, dsT, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    T::copy(qkT, qkT_cast);
    T::gemm(qkT_cast, dOs, dv, {.policy = T::warp_policy::full_row});
    T::copy(delta.at(bz, by, kb * BN), delta_s);
    for (auto [i, j] : T::parallel(BM, BN))
      dsT_cast(i, j) = qkT(i, j) * (dsT(i, j) - delta_s(j)) * scale;
    T::gemm(dsT_cast, Qs, dk, {.policy = T::warp_policy::full_row});
    T::copy(dsT_cast, dSs);
    T::gemm(dSs, Ks, dq, {.transpose_a = true, .clear_accum = true});
    T::atomic_add(dQ.at(bz, by, kb * BN, 0), dq);
  }
  T::copy(dv, dV.at(bz, by, bx * BM, 0));
  T::copy(dk, dK.at(bz, by, bx * BM, 0));
}

/// bwd<64, causal> on B x H heads of S tokens against float64 (lse and delta from the
/// float64 forward, given to the kernel in f32); `pad` floats after each head's lse and
/// delta (1: rows no tensor map takes, the fallback entry).
template <bool causal> void run_bwd(const char *name, int B, int H, int S, int pad) {
  constexpr int D = 64;
  const double scale = 0.125;
  const std::size_t n = std::size_t(B) * H * S * D;
  auto q = check::random<bf16>(n), k = check::random<bf16>(n), v = check::random<bf16>(n), dout = check::random<bf16>(n);
  const int L = S + pad;
  std::vector<float> lse(std::size_t(B) * H * L, 0.0f), delta(std::size_t(B) * H * L, 0.0f);
  std::vector<double> dq(n, 0.0), dk(n, 0.0), dv(n, 0.0);
  auto at = [&](auto &x, int bh, int i, int d) -> auto & { return x[(std::size_t(bh) * S + i) * D + d]; };
  std::vector<double> p(std::size_t(S) * S), ds(std::size_t(S) * S);
  for (int bh = 0; bh < B * H; ++bh) {
    for (int i = 0; i < S; ++i) {
      double m = -1e300;
      for (int j = 0; j < S; ++j) {
        double s = 0;
        for (int d = 0; d < D; ++d)
          s += check::value(at(q, bh, i, d)) * check::value(at(k, bh, j, d));
        p[std::size_t(i) * S + j] = causal && j > i ? -1e300 : s * scale;
        m = std::max(m, p[std::size_t(i) * S + j]);
      }
      double l = 0;
      for (int j = 0; j < S; ++j)
        l += std::exp(p[std::size_t(i) * S + j] - m);
      const double lse_i = m + std::log(l);
      lse[std::size_t(bh) * L + i] = float(lse_i);
      double dlt = 0;
      for (int d = 0; d < D; ++d) {
        double o = 0;
        for (int j = 0; j < S; ++j)
          o += std::exp(p[std::size_t(i) * S + j] - lse_i) * check::value(at(v, bh, j, d));
        dlt += o * check::value(at(dout, bh, i, d));
      }
      delta[std::size_t(bh) * L + i] = float(dlt);
      for (int j = 0; j < S; ++j) {
        const double pij = std::exp(p[std::size_t(i) * S + j] - double(lse[std::size_t(bh) * L + i]));
        double dp = 0;
        for (int d = 0; d < D; ++d)
          dp += check::value(at(dout, bh, i, d)) * check::value(at(v, bh, j, d));
        p[std::size_t(i) * S + j] = pij;
        ds[std::size_t(i) * S + j] = pij * (dp - double(delta[std::size_t(bh) * L + i])) * scale;
      }
    }
    for (int i = 0; i < S; ++i)
      for (int j = 0; j < S; ++j)
        for (int d = 0; d < D; ++d) {
          at(dq, bh, i, d) += ds[std::size_t(i) * S + j] * check::value(at(k, bh, j, d));
          at(dk, bh, j, d) += ds[std::size_t(i) * S + j] * check::value(at(q, bh, i, d));
          at(dv, bh, j, d) += p[std::size_t(i) * S + j] * check::value(at(dout, bh, i, d));
        }
  }
  auto Qd = check::upload(q, {B, H, S, D}), Kd = check::upload(k, {B, H, S, D}), Vd = check::upload(v, {B, H, S, D}),
       dOd = check::upload(dout, {B, H, S, D});
  auto lse_d = check::upload(lse, {B, H, L}), delta_d = check::upload(delta, {B, H, L});
  T::tensor<const float, 3> lse_t(lse_d.data(), {B, H, S}, {std::int64_t(H) * L, L, 1}),
      delta_t(delta_d.data(), {B, H, S}, {std::int64_t(H) * L, L, 1});
  auto dQd = check::upload(std::vector<float>(n, 0.0f), {B, H, S, D});
  auto dKd = check::upload(check::poisoned<bf16>(n), {B, H, S, D}), dVd = check::upload(check::poisoned<bf16>(n), {B, H, S, D});
  bwd<D, causal>(Qd, Kd, Vd, dOd, lse_t, delta_t, dQd, dKd, dVd, float(scale));
  check::entry(name, pad == 0);
  const std::string base = name;
  check::close(base + "_dq", dq, dQd.to_vector(), 2e-2);
  check::close(base + "_dk", dk, dKd.to_vector(), 2e-2);
  check::close(base + "_dv", dv, dVd.to_vector(), 2e-2);
}

int main() {
  run_biased<false>("bias_1_block", 100, 40, 1, 40);
  run_biased<false>("bias_5_blocks", 130, 300, 5, 300);
  run_biased<false>("bias_fallback", 70, 300, 5, 301);
  run_biased<true>("hoisted_0_blocks", 100, 40, 0, 40);
  run_biased<true>("hoisted_4_blocks", 200, 250, 4, 252);
  run_biased<true>("hoisted_fallback", 130, 250, 4, 253);
  run_small_vectors("vectors_1_block", 70, 50, 1, 13, 0);
  run_small_vectors("vectors_6_blocks", 130, 333, 6, 83, 0);
  run_small_vectors("vectors_fallback", 100, 333, 6, 83, 1);
  run_bwd<false>("bwd", 1, 2, 200, 0);
  run_bwd<true>("bwd_causal", 2, 1, 260, 0);
  run_bwd<false>("bwd_fallback", 1, 2, 130, 1);
  return check::result();
}
