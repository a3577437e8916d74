// A gemm whose a is a fragment copied once from a shared tile before a pipelined loop (the
// query tile of attention kept in registers), read by every iteration: on sm_90a the wgmma
// form with a from registers, K-major b from the loop's stages. Head widths 64 and 128, one
// gemm a loop and two (the second's a the first's result, as attention's P V), and attention
// with its online softmax, each against float64 on sizes that divide no tile, outputs
// poisoned. (The attention example written this way gave a wrong result at head width 64 on
// the H100 in the wgmma build, with and without warp specialization, and the right one with
// gemm=mma: bench/NOTES.md, session 36. attention_d64 is that kernel over two-dimensional
// tensors; it has not yet run on a GPU.)
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS scores_d64
// CHECK: PASS scores_d128
// CHECK: PASS two_gemms_d64
// CHECK: PASS two_gemms_d128
// CHECK: PASS attention_d64
// CHECK: PASS attention_d128
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;
using T::bf16;

// out(i, j) = sum over key blocks kb of sum_d Q(i, d) K(kb * 64 + j, d).
template <int D>
[[tile::kernel]] void scores(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K, T::tensor<float, 2> out) {
  const int M = Q.size(0), N = K.size(0);
  auto [bx] = T::grid(T::ceildiv(M, 64), T::threads(128));
  T::shared<bf16, 64, D> Qs;
  T::shared<bf16, 64, D> Ks;
  T::fragment<bf16, 64, D> qf;
  T::fragment<float, 64, 64> s, acc;
  T::copy(Q.at(bx * 64, 0), Qs);
  T::copy(Qs, qf);
  T::clear(acc);
  for (int kb : T::pipelined(T::ceildiv(N, 64), T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::gemm(qf, Ks, s, {.transpose_b = true, .clear_accum = true});
    for (auto [i, j] : T::parallel(64, 64))
      acc(i, j) = acc(i, j) + s(i, j);
  }
  T::copy(acc, out.at(bx * 64, 0));
}

// out = sum over key blocks of bf16(Q K_kb^T / 8) V_kb.
template <int D>
[[tile::kernel]] void two_gemms(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K, T::tensor<const bf16, 2> V,
                                T::tensor<float, 2> out) {
  const int M = Q.size(0), N = K.size(0);
  auto [bx] = T::grid(T::ceildiv(M, 64), T::threads(128));
  T::shared<bf16, 64, D> Qs;
  T::shared<bf16, 64, D> Ks, Vs;
  T::fragment<bf16, 64, D> qf;
  T::fragment<float, 64, 64> s;
  T::fragment<bf16, 64, 64> p;
  T::fragment<float, 64, D> acc;
  T::copy(Q.at(bx * 64, 0), Qs);
  T::copy(Qs, qf);
  T::clear(acc);
  for (int kb : T::pipelined(T::ceildiv(N, 64), T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(qf, Ks, s, {.transpose_b = true, .clear_accum = true});
    for (auto [i, j] : T::parallel(64, 64))
      s(i, j) = s(i, j) * 0.125f;
    T::copy(s, p);
    T::gemm(p, Vs, acc);
  }
  T::copy(acc, out.at(bx * 64, 0));
}

// Attention as examples/flash_attention.h computes it (64 x 64 tiles, 128 threads, 2 stages),
// with the query tile in registers.
template <int D>
[[tile::kernel]] void attention(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K, T::tensor<const bf16, 2> V,
                                T::tensor<float, 2> O, float scale) {
  const int M = Q.size(0), N = K.size(0);
  auto [bx] = T::grid(T::ceildiv(M, 64), T::threads(128));
  T::shared<bf16, 64, D> Qs;
  T::shared<bf16, 64, D> Ks, Vs;
  T::fragment<bf16, 64, D> qf;
  T::fragment<float, 64, 64> s;
  T::fragment<bf16, 64, 64> p;
  T::fragment<float, 64, D> acc;
  T::fragment<float, 64> m, m_old, l, row_sum, rescale;
  T::copy(Q.at(bx * 64, 0), Qs);
  T::copy(Qs, qf);
  T::clear(acc);
  T::clear(l);
  T::fill(m, -T::infinity<float>());
  const float c = scale * 1.4426950408889634f;
  for (int kb : T::pipelined(T::ceildiv(N, 64), T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(qf, Ks, s, {.transpose_b = true, .clear_accum = true});
    if (kb * 64 + 64 > N) {
      for (auto [i, j] : T::parallel(64, 64))
        if (kb * 64 + j >= N)
          s(i, j) = -T::infinity<float>();
    }
    T::copy(m, m_old);
    T::reduce_max(s, m, 1, false);
    for (int i : T::parallel(64))
      rescale(i) = T::exp2((m_old(i) - m(i)) * c);
    for (auto [i, j] : T::parallel(64, D))
      acc(i, j) = acc(i, j) * rescale(i);
    for (auto [i, j] : T::parallel(64, 64))
      s(i, j) = T::exp2(s(i, j) * c - m(i) * c);
    T::reduce_sum(s, row_sum, 1);
    for (int i : T::parallel(64))
      l(i) = l(i) * rescale(i) + row_sum(i);
    T::copy(s, p);
    T::gemm(p, Vs, acc);
  }
  for (auto [i, j] : T::parallel(64, D))
    acc(i, j) = acc(i, j) / l(i);
  T::copy(acc, O.at(bx * 64, 0));
}

template <int D> void run_attention(int M, int N) {
  auto q = check::random<bf16>(std::size_t(M) * D, -2, 2), k = check::random<bf16>(std::size_t(N) * D, -2, 2),
       v = check::random<bf16>(std::size_t(N) * D);
  auto Q = check::upload(q, {M, D}), K = check::upload(k, {N, D}), V = check::upload(v, {N, D});
  auto out = check::upload(check::poisoned<float>(std::size_t(M) * D), {M, D});
  const float scale = 1.0f / std::sqrt(float(D));
  attention<D>(Q, K, V, out, scale);
  std::vector<double> ref(std::size_t(M) * D, 0.0);
  for (int i = 0; i < M; ++i) {
    std::vector<double> w(N);
    double most = -INFINITY, sum = 0;
    for (int n = 0; n < N; ++n) {
      double dot = 0;
      for (int d = 0; d < D; ++d)
        dot += check::value(q[std::size_t(i) * D + d]) * check::value(k[std::size_t(n) * D + d]);
      w[n] = dot * scale;
      most = std::max(most, w[n]);
    }
    for (double &x : w)
      sum += x = std::exp(x - most);
    for (int n = 0; n < N; ++n)
      for (int d = 0; d < D; ++d)
        ref[std::size_t(i) * D + d] += w[n] / sum * check::value(v[std::size_t(n) * D + d]);
  }
  check::close(D == 64 ? "attention_d64" : "attention_d128", ref, out.to_vector(), 2e-2);
}

template <int D> void run_scores(int M, int N) {
  auto q = check::random<bf16>(std::size_t(M) * D), k = check::random<bf16>(std::size_t(N) * D);
  auto Q = check::upload(q, {M, D}), K = check::upload(k, {N, D});
  auto out = check::upload(check::poisoned<float>(std::size_t(M) * 64), {M, 64});
  scores<D>(Q, K, out);
  std::vector<double> ref(std::size_t(M) * 64, 0.0);
  for (int i = 0; i < M; ++i)
    for (int n = 0; n < N; ++n) {
      double dot = 0;
      for (int d = 0; d < D; ++d)
        dot += check::value(q[std::size_t(i) * D + d]) * check::value(k[std::size_t(n) * D + d]);
      ref[std::size_t(i) * 64 + n % 64] += dot;
    }
  check::close(D == 64 ? "scores_d64" : "scores_d128", ref, out.to_vector(), 1e-4);
}

template <int D> void run_two_gemms(int M, int N) {
  auto q = check::random<bf16>(std::size_t(M) * D), k = check::random<bf16>(std::size_t(N) * D),
       v = check::random<bf16>(std::size_t(N) * D);
  auto Q = check::upload(q, {M, D}), K = check::upload(k, {N, D}), V = check::upload(v, {N, D});
  auto out = check::upload(check::poisoned<float>(std::size_t(M) * D), {M, D});
  two_gemms<D>(Q, K, V, out);
  std::vector<double> ref(std::size_t(M) * D, 0.0);
  for (int i = 0; i < M; ++i)
    for (int n = 0; n < N; ++n) {
      double dot = 0;
      for (int d = 0; d < D; ++d)
        dot += check::value(q[std::size_t(i) * D + d]) * check::value(k[std::size_t(n) * D + d]);
      const double p = check::value(bf16(float(dot * 0.125))); // P as the kernel rounds it
      for (int d = 0; d < D; ++d)
        ref[std::size_t(i) * D + d] += p * check::value(v[std::size_t(n) * D + d]);
    }
  check::close(D == 64 ? "two_gemms_d64" : "two_gemms_d128", ref, out.to_vector(), 1e-2);
}

int main() {
  run_scores<64>(150, 200);
  run_scores<128>(150, 200);
  run_two_gemms<64>(150, 200);
  run_two_gemms<128>(150, 200);
  run_attention<64>(150, 333);
  run_attention<128>(150, 333);
  return check::result();
}
