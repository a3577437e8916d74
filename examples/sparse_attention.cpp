// Block-sparse attention as TileLang's example writes it: a mask says which blocks of BN keys
// each block of BM queries attends to (Mask(b, h, query block, key block) != 0), and the loop
// over key blocks skips the others: `if (Mask(...)) { copy K; copy V; gemm; softmax; gemm }`
// inside the pipelined loop. Q, K, V and O are [batch, heads, sequence, head_dim], bf16; the
// mask always keeps a query block's own diagonal block, so that every row sees a key.
//   sparse_attention [B H S D density]   (default 2 4 300 64 0.25: no size divides a tile)
//   sparse_attention bench               (b1 h32 s8192 d128, a quarter of the key blocks; every
//                                         67th row of heads 0 and 31 checked)
#include "common.h"

#include <cstring>

namespace T = tile;

template <int D, int BM = 64, int BN = 64, int STAGES = 2>
[[tile::kernel]] void sparse_attention(T::tensor<const T::bf16, 4> Q, T::tensor<const T::bf16, 4> K,
                                       T::tensor<const T::bf16, 4> V, T::tensor<const std::int8_t, 4> Mask,
                                       T::tensor<T::bf16, 4> O, float scale) {
  const int H = Q.size(1), S = Q.size(2);
  T::expect(scale > 0, "sparse_attention needs a positive scale");
  T::expect(Mask.size(2) == T::ceildiv(S, BM) && Mask.size(3) == T::ceildiv(S, BN),
            "the mask has a row per block of BM queries and a column per block of BN keys");
  auto [qb, h, b] = T::grid(T::ceildiv(S, BM), H, Q.size(0));
  T::shared<T::bf16, BM, D> Qs;
  T::shared<T::bf16, BN, D> Ks, Vs;
  T::fragment<float, BM, BN> s;
  T::fragment<T::bf16, BM, BN> p;
  T::fragment<float, BM, D> acc;
  T::fragment<float, BM> m, m_old, l, row_sum, rescale;
  T::copy(Q.at(b, h, qb * BM, 0), Qs);
  T::clear(acc);
  T::clear(l);
  T::fill(m, -T::infinity<float>());
  const float scale_log2 = scale * 1.4426950408889634f;
  for (int kb : T::pipelined(T::ceildiv(S, BN), T::stages(STAGES))) {
    if (Mask(b, h, qb, kb) != 0) {
      T::copy(K.at(b, h, kb * BN, 0), Ks);
      T::copy(V.at(b, h, kb * BN, 0), Vs);
      T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true});
      if (kb * BN + BN > S) {
        for (auto [i, j] : T::parallel(BM, BN))
          if (kb * BN + j >= S)
            s(i, j) = -T::infinity<float>();
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
  }
  for (auto [i, j] : T::parallel(BM, D))
    acc(i, j) = acc(i, j) / l(i);
  T::copy(acc, O.at(b, h, qb * BM, 0));
}

namespace {

template <int D> int run_case(int B, int H, int S, double density, bool bench = false) {
  constexpr int BM = 64, BN = 64;
  const int QB = (S + BM - 1) / BM, KB = (S + BN - 1) / BN;
  char dens[16];
  std::snprintf(dens, sizeof dens, "%.2f", density);
  const std::string shape = "b" + std::to_string(B) + "h" + std::to_string(H) + "s" + std::to_string(S) + "d" +
                            std::to_string(D) + "p" + dens;
  auto q = example::random<T::bf16>(std::size_t(B) * H * S * D, 1);
  auto k = example::random<T::bf16>(std::size_t(B) * H * S * D, 2);
  auto v = example::random<T::bf16>(std::size_t(B) * H * S * D, 3);
  auto coin = example::random<float>(std::size_t(B) * H * QB * KB, 4, 0.0, 1.0);
  std::vector<std::int8_t> mask(coin.size());
  std::size_t visited = 0;
  for (std::size_t i = 0; i < mask.size(); ++i) {
    const int qb = int(i / KB % QB), kb = int(i % KB);
    mask[i] = std::int8_t(kb == qb * BM / BN || coin[i] < density);
    visited += mask[i];
  }
  auto Qd = example::device_array<T::bf16, 4>({B, H, S, D}, q);
  auto Kd = example::device_array<T::bf16, 4>({B, H, S, D}, k);
  auto Vd = example::device_array<T::bf16, 4>({B, H, S, D}, v);
  auto Md = example::device_array<std::int8_t, 4>({B, H, QB, KB}, mask);
  auto Od = example::device_array<T::bf16, 4>({B, H, S, D});
  const float scale = 1.0f / std::sqrt(float(D));
  const double ms = example::time_ms([&] { sparse_attention<D>(Qd, Kd, Vd, Md, Od, scale); });

  // The rows checked: all, or in bench mode every 67th of the first and last head.
  std::vector<double> ref;
  std::vector<T::bf16> got, o = Od.to_vector();
  for (int bh = 0; bh < B * H; ++bh)
    for (int i = 0; i < S; ++i) {
      if (bench && (i % 67 != 0 || (bh % H != 0 && bh % H != H - 1)))
        continue;
      const std::size_t row = std::size_t(bh) * S;
      std::vector<double> w(S, 0.0), out(D, 0.0);
      std::vector<bool> seen(S, false);
      double mx = -1e300, sum = 0;
      for (int j = 0; j < S; ++j) {
        if (!mask[(std::size_t(bh) * QB + i / BM) * KB + j / BN])
          continue;
        double dot = 0;
        for (int d = 0; d < D; ++d)
          dot += double(float(q[(row + i) * D + d])) * double(float(k[(row + j) * D + d]));
        w[j] = dot * scale;
        seen[j] = true;
        mx = std::max(mx, w[j]);
      }
      for (int j = 0; j < S; ++j)
        if (seen[j])
          sum += (w[j] = std::exp(w[j] - mx));
      for (int j = 0; j < S; ++j)
        if (seen[j])
          for (int d = 0; d < D; ++d)
            out[d] += w[j] / sum * double(float(v[(row + j) * D + d]));
      ref.insert(ref.end(), out.begin(), out.end());
      got.insert(got.end(), o.begin() + std::ptrdiff_t((row + i) * D), o.begin() + std::ptrdiff_t((row + i + 1) * D));
    }
  const double err = example::rel_error(ref, got);
  // The work of the blocks visited (whole blocks, as the kernel computes them).
  const double flop = 4.0 * double(visited) * BM * BN * D;
  example::bench_line("attn_block_sparse_bf16", shape, ms, flop, "tflops", err);
  return example::report("sparse_attention", shape, ms, err, 2e-2);
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1 && std::strcmp(argv[1], "bench") == 0)
    return example::run("sparse_attention", [] { return run_case<128>(1, 32, 8192, 0.25, true); });
  const int B = example::size_arg(argc, argv, 1, 2), H = example::size_arg(argc, argv, 2, 4);
  const int S = example::size_arg(argc, argv, 3, 300), D = example::size_arg(argc, argv, 4, 64);
  const double density = argc > 5 ? std::atof(argv[5]) : 0.25;
  if (D != 64 && D != 128) {
    std::fprintf(stderr, "sparse_attention: D is 64 or 128\n");
    return 2;
  }
  return example::run("sparse_attention",
                      [&] { return D == 64 ? run_case<64>(B, H, S, density) : run_case<128>(B, H, S, density); });
}
