// Attention over a batch of packed sequences of different lengths, as FlashAttention's
// varlen interface takes them: the tokens of all sequences one after the other,
// Q [tokens, H, D], K and V [tokens, HKV, D] (grouped-query heads: query head h reads
// key/value head h / (H / HKV)), and cu_seqlens [batch + 1], sequence b's tokens being
// cu_seqlens(b) to cu_seqlens(b + 1) - 1. Each sequence attends to itself only, causally
// (a token to the tokens up to it) or not. Each block takes BM query rows of one sequence
// and head: the sequence's rows are views chosen at run time (Q.rows(...),
// docs/language.md), so tiles past a sequence's end read zeros and write nothing, and the
// rest is examples/flash_attention.h's online softmax.
//   varlen_attention [batch H HKV max_len D causal]   (default 5 4 2 300 64 1: lengths from 1
//                                                     to 300, none a multiple of a tile)
//   varlen_attention bench   (32 sequences of 128 to 4096 tokens, H 32, HKV 8, d128, causal;
//                             every 61st token of heads 0 and 31 checked)
#include "common.h"

#include <cstring>

namespace T = tile;

template <int D, bool CAUSAL, int BM = 64, int BN = 64, int STAGES = 2, int NT = BM * 2>
[[tile::kernel]] void varlen_attention(T::tensor<const T::bf16, 3> Q, T::tensor<const T::bf16, 3> K,
                                       T::tensor<const T::bf16, 3> V, T::tensor<const int, 1> CuSeqlens,
                                       T::tensor<T::bf16, 3> O, int max_len, float scale) {
  const int H = Q.size(1), HKV = K.size(1);
  T::expect(scale > 0, "varlen_attention needs a positive scale");
  auto [qb, h, b] = T::grid(T::ceildiv(max_len, BM), H, CuSeqlens.size(0) - 1, T::threads(NT));
  const int first = CuSeqlens(b), last = CuSeqlens(b + 1);
  auto Qb = Q.rows(first, last);
  auto Kb = K.rows(first, last);
  auto Vb = V.rows(first, last);
  auto Ob = O.rows(first, last);
  const int len = Qb.size(0), hk = h / (H / HKV);
  T::shared<T::bf16, BM, D> Qs;
  T::shared<T::bf16, BN, D> Ks, Vs;
  T::fragment<float, BM, BN> s;
  T::fragment<T::bf16, BM, BN> p;
  T::fragment<float, BM, D> acc;
  T::fragment<float, BM> m, m_old, l, row_sum, rescale;
  if (qb * BM < len) { // (blocks past this sequence's end have nothing to do)
    T::copy(Qb.at(T::slice(qb * BM), h, T::slice(0)), Qs);
    T::clear(acc);
    T::clear(l);
    T::fill(m, -T::infinity<float>());
    const float scale_log2 = scale * 1.4426950408889634f;
    const int blocks = CAUSAL ? T::min(T::ceildiv(len, BN), T::ceildiv((qb + 1) * BM, BN)) : T::ceildiv(len, BN);
    for (int kb : T::pipelined(blocks, T::stages(STAGES))) {
      T::copy(Kb.at(T::slice(kb * BN), hk, T::slice(0)), Ks);
      T::copy(Vb.at(T::slice(kb * BN), hk, T::slice(0)), Vs);
      T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true});
      if (kb * BN + BN > len || (CAUSAL && kb * BN + BN - 1 > qb * BM)) {
        for (auto [i, j] : T::parallel(BM, BN)) {
          const bool masked = kb * BN + j >= len || (CAUSAL && kb * BN + j > qb * BM + i);
          if (masked)
            s(i, j) = -T::infinity<float>();
        }
      }
      T::copy(m, m_old);
      T::reduce_max(s, m, 1, false);
      for (int i : T::parallel(BM))
        rescale(i) = T::exp2((m_old(i) - m(i)) * scale_log2);
      for (auto [i, j] : T::parallel(BM, D))
        acc(i, j) = acc(i, j) * rescale(i);
      for (auto [i, j] : T::parallel(BM, BN))
        s(i, j) = T::exp2(s(i, j) * scale_log2 - m(i) * scale_log2);
      T::reduce_sum(s, row_sum, 1);
      for (int i : T::parallel(BM))
        l(i) = l(i) * rescale(i) + row_sum(i);
      T::copy(s, p);
      T::gemm(p, Vs, acc);
    }
    for (auto [i, j] : T::parallel(BM, D))
      acc(i, j) = acc(i, j) / l(i);
    T::copy(acc, Ob.at(T::slice(qb * BM), h, T::slice(0)));
  }
}

namespace {

template <int D, bool CAUSAL>
int run_case(int batch, int H, int HKV, int max_len, bool bench = false) {
  const std::string shape = "b" + std::to_string(batch) + "h" + std::to_string(H) + "kv" + std::to_string(HKV) +
                            "s" + std::to_string(max_len) + "d" + std::to_string(D) + (CAUSAL ? "c" : "");
  // Lengths from 1 to max_len: the first sequence has one token, the last max_len; in bench
  // mode from 128 to max_len, evenly apart (the peers' shape).
  std::vector<int> cu{0};
  auto spread = example::random<float>(batch, 11, 0.0, 1.0);
  for (int b = 0; b < batch; ++b) {
    const int n = bench ? 128 + int((long long)(max_len - 128) * b / std::max(1, batch - 1))
                  : b == 0 ? 1 : b == batch - 1 ? max_len : std::max(1, int(max_len * spread[b]));
    cu.push_back(cu.back() + n);
  }
  const int tokens = cu.back();
  auto q = example::random<T::bf16>(std::size_t(tokens) * H * D, 1);
  auto k = example::random<T::bf16>(std::size_t(tokens) * HKV * D, 2);
  auto v = example::random<T::bf16>(std::size_t(tokens) * HKV * D, 3);
  auto Qd = example::device_array<T::bf16, 3>({tokens, H, D}, q);
  auto Kd = example::device_array<T::bf16, 3>({tokens, HKV, D}, k);
  auto Vd = example::device_array<T::bf16, 3>({tokens, HKV, D}, v);
  auto Cu = example::device_array<int, 1>({batch + 1}, cu);
  auto Od = example::device_array<T::bf16, 3>({tokens, H, D});
  const float scale = 1.0f / std::sqrt(float(D));
  const double ms = example::time_ms([&] { varlen_attention<D, CAUSAL>(Qd, Kd, Vd, Cu, Od, max_len, scale); });
  // In bench mode, also with 128 queries a block on two consumer warpgroups.
  auto Od2 = example::device_array<T::bf16, 3>({bench ? tokens : 1, H, D});
  const double ms2 = bench ? example::time_ms([&] {
    varlen_attention<D, CAUSAL, 128, 64, 2>(Qd, Kd, Vd, Cu, Od2, max_len, scale);
  })
                           : 0.0;
  const std::vector<T::bf16> o2 = bench ? Od2.to_vector() : std::vector<T::bf16>();
  std::vector<T::bf16> got2;

  // The rows checked: all, or in bench mode every 61st token of the first and last head.
  std::vector<double> ref;
  std::vector<T::bf16> got, o = Od.to_vector();
  double flop = 0;
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < H; ++h) {
      const int hk = h / (H / HKV), first = cu[b], len = cu[b + 1] - cu[b];
      for (int i = 0; i < len; ++i) {
        const int keys = CAUSAL ? i + 1 : len;
        flop += 4.0 * keys * D;
        if (bench && ((first + i) % 61 != 0 || (h != 0 && h != H - 1)))
          continue;
        std::vector<double> w(keys), row(D, 0.0);
        double mx = -1e300, sum = 0;
        for (int j = 0; j < keys; ++j) {
          double dot = 0;
          for (int d = 0; d < D; ++d)
            dot += double(float(q[(std::size_t(first + i) * H + h) * D + d])) *
                   double(float(k[(std::size_t(first + j) * HKV + hk) * D + d]));
          w[j] = dot * scale;
          mx = std::max(mx, w[j]);
        }
        for (int j = 0; j < keys; ++j)
          sum += (w[j] = std::exp(w[j] - mx));
        for (int j = 0; j < keys; ++j)
          for (int d = 0; d < D; ++d)
            row[d] += w[j] / sum * double(float(v[(std::size_t(first + j) * HKV + hk) * D + d]));
        ref.insert(ref.end(), row.begin(), row.end());
        const auto at = o.begin() + std::ptrdiff_t((std::size_t(first + i) * H + h) * D);
        got.insert(got.end(), at, at + D);
        if (bench) {
          const auto at2 = o2.begin() + std::ptrdiff_t((std::size_t(first + i) * H + h) * D);
          got2.insert(got2.end(), at2, at2 + D);
        }
      }
    }
  const double err = example::rel_error(ref, got);
  example::bench_line(CAUSAL ? "attn_varlen_causal_bf16" : "attn_varlen_bf16", shape, ms, flop, "tflops", err);
  if (bench)
    example::bench_line(CAUSAL ? "attn_varlen_causal_bm128_bf16" : "attn_varlen_bm128_bf16", shape, ms2, flop,
                        "tflops", example::rel_error(ref, got2));
  return example::report("varlen_attention", shape, ms, err, 2e-2);
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1 && std::strcmp(argv[1], "bench") == 0)
    return example::run("varlen_attention", [] { return run_case<128, true>(32, 32, 8, 4096, true); });
  const int batch = example::size_arg(argc, argv, 1, 5), H = example::size_arg(argc, argv, 2, 4);
  const int HKV = example::size_arg(argc, argv, 3, 2), max_len = example::size_arg(argc, argv, 4, 300);
  const int D = example::size_arg(argc, argv, 5, 64);
  const bool causal = argc > 6 ? std::atoi(argv[6]) != 0 : true;
  if (H % HKV != 0 || (D != 64 && D != 128)) {
    std::fprintf(stderr, "varlen_attention: H must be a multiple of HKV, and D 64 or 128\n");
    return 2;
  }
  return example::run("varlen_attention", [&] {
    if (D == 64)
      return causal ? run_case<64, true>(batch, H, HKV, max_len) : run_case<64, false>(batch, H, HKV, max_len);
    return causal ? run_case<128, true>(batch, H, HKV, max_len) : run_case<128, false>(batch, H, HKV, max_len);
  });
}
