// DeepSeek's multi-head latent attention (MLA) at decoding, over a paged latent cache: each
// sequence's cached tokens are rows of fixed-size pages, its pages listed in a block table,
// each token's row the 512-wide latent c (the values, and the keys' first 512 columns) and
// a 64-wide rotary key. Every query head attends to the same cache:
//   scores = (q_latent . c + q_rope . k_rope) * scale,   out = softmax(scores) . c.
// One launch splits each sequence's pages over `splits` blocks (flash decoding), each block
// 64 heads: its page's rows are copied from the page the block table names (a tile addressed
// by data), keys past the sequence's length masked; each block writes its partial output and
// log-sum-exp, and a second kernel combines the splits.
//   mla_decode [batch heads max_len splits]   (default 3 20 333 4: lengths 1 to 333, pages
//                                            of 64 tokens, no size a multiple of a tile)
//   mla_decode bench                         (batch 64, 128 heads, 8192 cached tokens each, 4
//                                            splits; every 13th sequence's first and last
//                                            head checked)
#include "common.h"

#include <cstring>

namespace T = tile;

constexpr int DC = 512, DR = 64, PAGE = 64;

template <int BH = 64, int S = 2>
[[tile::kernel]] void mla_split(T::tensor<const T::bf16, 3> Q,          // [batch, heads, DC + DR]
                                T::tensor<const T::bf16, 3> Cache,      // [pages, PAGE, DC + DR]
                                T::tensor<const int, 2> BlockTable,     // [batch, max pages]
                                T::tensor<const int, 1> Lengths,        // [batch]
                                T::tensor<float, 4> Partial,            // [batch, splits, heads, DC]
                                T::tensor<float, 3> Lse,                // [batch, splits, heads]
                                float scale) {
  const int H = Q.size(1), splits = Partial.size(1);
  auto [hb, split, b] = T::grid(T::ceildiv(H, BH), splits, Q.size(0), T::threads(256));
  const int len = Lengths(b), pages = T::ceildiv(len, PAGE);
  const int per_split = T::ceildiv(pages, splits);
  const int first = T::min(split * per_split, pages), last = T::min(first + per_split, pages);
  T::shared<T::bf16, BH, DC> Qc;
  T::shared<T::bf16, BH, DR> Qr;
  T::shared<T::bf16, PAGE, DC> Kc;
  T::shared<T::bf16, PAGE, DR> Kr;
  T::fragment<float, BH, PAGE> s;
  T::fragment<T::bf16, BH, PAGE> p;
  T::fragment<float, BH, DC> acc;
  T::fragment<float, BH> m, m_old, l, row_sum, rescale, lse;
  T::copy(Q.at(b, T::slice(hb * BH), T::slice(0)), Qc);
  T::copy(Q.at(b, T::slice(hb * BH), T::slice(DC)), Qr);
  T::clear(acc);
  T::clear(l);
  T::fill(m, -T::infinity<float>());
  const float scale_log2 = scale * 1.4426950408889634f;
  for (int page : T::pipelined(last - first, T::stages(S))) {
    const int pid = BlockTable(b, first + page); // the page that holds these tokens
    T::copy(Cache.at(pid, T::slice(0), T::slice(0)), Kc);
    T::copy(Cache.at(pid, T::slice(0), T::slice(DC)), Kr);
    T::gemm(Qc, Kc, s, {.transpose_b = true, .clear_accum = true});
    T::gemm(Qr, Kr, s, {.transpose_b = true});
    const int token0 = (first + page) * PAGE;
    if (token0 + PAGE > len) {
      for (auto [i, j] : T::parallel(BH, PAGE))
        if (token0 + j >= len)
          s(i, j) = -T::infinity<float>();
    }
    T::copy(m, m_old);
    T::reduce_max(s, m, 1, false);
    for (int i : T::parallel(BH))
      rescale(i) = T::exp2((m_old(i) - m(i)) * scale_log2);
    for (auto [i, j] : T::parallel(BH, DC))
      acc(i, j) = acc(i, j) * rescale(i);
    for (auto [i, j] : T::parallel(BH, PAGE))
      s(i, j) = T::exp2(s(i, j) * scale_log2 - m(i) * scale_log2);
    T::reduce_sum(s, row_sum, 1);
    for (int i : T::parallel(BH))
      l(i) = l(i) * rescale(i) + row_sum(i);
    T::copy(s, p);
    T::gemm(p, Kc, acc);
  }
  // A split without pages: output 0, log-sum-exp -inf (its weight in the combination is 0).
  for (auto [i, j] : T::parallel(BH, DC))
    acc(i, j) = l(i) > 0.0f ? acc(i, j) / l(i) : 0.0f;
  for (int i : T::parallel(BH))
    lse(i) = l(i) > 0.0f ? m(i) * scale + T::log(l(i)) : -T::infinity<float>();
  T::copy(acc, Partial.at(b, split, T::slice(hb * BH), T::slice(0)));
  T::copy(lse, Lse.at(b, split, hb * BH));
}

/// Out(b, h) = the splits' partial outputs weighted by exp(their log-sum-exp).
template <int BH = 16, int SPLITS = 16>
[[tile::kernel]] void mla_combine(T::tensor<const float, 4> Partial, T::tensor<const float, 3> Lse,
                                  T::tensor<T::bf16, 3> Out) {
  const int H = Out.size(1), splits = Partial.size(1);
  T::expect(splits <= SPLITS, "mla_combine takes at most SPLITS splits");
  auto [hb, b] = T::grid(T::ceildiv(H, BH), Out.size(0));
  T::fragment<float, SPLITS, BH> lse, w;
  T::fragment<float, BH> top, total;
  T::fragment<float, BH, DC> out;
  T::shared<float, BH, DC> part;
  for (auto [s, i] : T::parallel(SPLITS, BH))
    lse(s, i) = s < splits && hb * BH + i < H ? Lse(b, s, hb * BH + i) : -T::infinity<float>();
  T::reduce_max(lse, top, 0);
  for (auto [s, i] : T::parallel(SPLITS, BH))
    w(s, i) = lse(s, i) == -T::infinity<float>() ? 0.0f : T::exp(lse(s, i) - top(i));
  T::reduce_sum(w, total, 0);
  T::clear(out);
  for (int s : T::serial(splits)) {
    T::copy(Partial.at(b, s, T::slice(hb * BH), T::slice(0)), part);
    for (auto [i, j] : T::parallel(BH, DC))
      out(i, j) = out(i, j) + w(s, i) / total(i) * part(i, j);
  }
  T::copy(out, Out.at(b, T::slice(hb * BH), T::slice(0)));
}

int main(int argc, char **argv) {
  const bool bench = argc > 1 && std::strcmp(argv[1], "bench") == 0;
  const int B = bench ? 64 : example::size_arg(argc, argv, 1, 3), H = bench ? 128 : example::size_arg(argc, argv, 2, 20);
  const int max_len = bench ? 8192 : example::size_arg(argc, argv, 3, 333);
  const int splits = bench ? 4 : example::size_arg(argc, argv, 4, 4);
  const std::string shape =
      "b" + std::to_string(B) + "h" + std::to_string(H) + "s" + std::to_string(max_len) + "x" + std::to_string(splits);
  if (splits > 16) {
    std::fprintf(stderr, "mla_decode: at most 16 splits\n");
    return 2;
  }
  return example::run("mla_decode", [&] {
    constexpr int D = DC + DR;
    // Lengths from 1 to max_len; one page of the cache left unused.
    std::vector<int> lengths(B);
    auto spread = example::random<float>(B, 5, 0.0, 1.0);
    for (int b = 0; b < B; ++b)
      lengths[b] = bench ? max_len : b == 0 ? 1 : b == B - 1 ? max_len : std::max(1, int(max_len * spread[b]));
    const int max_pages = (max_len + PAGE - 1) / PAGE;
    int used = 0;
    for (int len : lengths)
      used += (len + PAGE - 1) / PAGE;
    const int total_pages = used + 1;
    // Pages handed out from both ends of the cache in turn: 0, last, 1, last - 1, ...
    std::vector<int> order(total_pages);
    for (int i = 0; i < total_pages; ++i)
      order[i] = i % 2 == 0 ? i / 2 : total_pages - 1 - i / 2;
    std::vector<int> table(std::size_t(B) * max_pages, -1);
    for (int b = 0, next = 0; b < B; ++b)
      for (int p = 0; p < (lengths[b] + PAGE - 1) / PAGE; ++p)
        table[std::size_t(b) * max_pages + p] = order[next++];
    auto q = example::random<T::bf16>(std::size_t(B) * H * D, 1);
    auto cache = example::random<T::bf16>(std::size_t(total_pages) * PAGE * D, 2);
    auto Qd = example::device_array<T::bf16, 3>({B, H, D}, q);
    auto Cd = example::device_array<T::bf16, 3>({total_pages, PAGE, D}, cache);
    auto Td = example::device_array<int, 2>({B, max_pages}, table);
    auto Ld = example::device_array<int, 1>({B}, lengths);
    auto Pd = example::device_array<float, 4>({B, splits, H, DC});
    auto Sd = example::device_array<float, 3>({B, splits, H});
    auto Od = example::device_array<T::bf16, 3>({B, H, DC});
    const float scale = 1.0f / std::sqrt(float(D));
    // Two stages of a page (its next page copied while one is computed) take 226 KB of
    // shared memory, which sm_90 has; elsewhere one.
    const bool hopper = T::current_device().architecture() == "sm_90";
    const double ms = example::time_ms([&] {
      if (hopper)
        mla_split<64, 2>(Qd, Cd, Td, Ld, Pd, Sd, scale);
      else
        mla_split<64, 1>(Qd, Cd, Td, Ld, Pd, Sd, scale);
      mla_combine(Pd, Sd, Od);
    });

    // The rows checked: all, or in bench mode the first and last head of every 13th sequence.
    std::vector<double> ref;
    std::vector<T::bf16> got, o = Od.to_vector();
    double flop = 0;
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h) {
        const int len = lengths[b];
        flop += 2.0 * len * (D + DC);
        if (bench && (b % 13 != 0 || (h != 0 && h != H - 1)))
          continue;
        std::vector<double> w(len), out(DC, 0.0);
        double mx = -1e300, sum = 0;
        auto row = [&](int t) {
          const int pid = table[std::size_t(b) * max_pages + t / PAGE];
          return &cache[(std::size_t(pid) * PAGE + t % PAGE) * D];
        };
        for (int t = 0; t < len; ++t) {
          const T::bf16 *k = row(t);
          double dot = 0;
          for (int d = 0; d < D; ++d)
            dot += double(float(q[(std::size_t(b) * H + h) * D + d])) * double(float(k[d]));
          w[t] = dot * scale;
          mx = std::max(mx, w[t]);
        }
        for (int t = 0; t < len; ++t)
          sum += (w[t] = std::exp(w[t] - mx));
        for (int t = 0; t < len; ++t) {
          const T::bf16 *c = row(t);
          for (int d = 0; d < DC; ++d)
            out[d] += w[t] / sum * double(float(c[d]));
        }
        ref.insert(ref.end(), out.begin(), out.end());
        const auto at = o.begin() + std::ptrdiff_t((std::size_t(b) * H + h) * DC);
        got.insert(got.end(), at, at + DC);
      }
    const double err = example::rel_error(ref, got);
    example::bench_line("mla_decode_bf16", shape, ms, flop, "tflops", err);
    return example::report("mla_decode", shape, ms, err, 2e-2);
  });
}
