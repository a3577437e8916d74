// Decoding attention: one new query row per head against a long KV cache, as a language
// model generates a token. Grouped-query heads: the H query heads share HKV key/value
// heads, H / HKV each. With one row per head there is little work per block, so the keys
// are split along the sequence (split-KV, FlashDecoding): a block takes the query rows of
// one KV head's group and one chunk of its keys, runs FlashAttention's online softmax over
// the chunk (S = Q K^T on tensor cores with the group's rows padded to G, P V into the
// output), and writes its partial output normalized by its own sum, with the log2 of that
// sum past its maximum (a log-sum-exp); a second kernel combines the chunks of each head
// (weights exp2(lse_c - max lse), which the partial outputs were normalized against).
// Reading K and V is all the time this takes: the figure to reach is the KV cache's bytes
// over the copy bandwidth.
//
// Tensors: Q and O [batch, heads, head_dim], K and V [batch, kv_heads, tokens, head_dim],
// bf16; head_dim 128.
//   flash_decoding [B H HKV S]   (default 2 12 3 1001: no size divides a tile)
//   flash_decoding bench         (b8 h32 hkv8 s32768)
#include "common.h"
#include "flash_decoding.h"

#include <cstring>

namespace T = tile;

namespace {

using decoding::D;

struct Case {
  int b, h, hkv, s;
};

int run_case(const Case &c, bool bench) {
  const std::string shape = "b" + std::to_string(c.b) + "h" + std::to_string(c.h) + "hkv" + std::to_string(c.hkv) +
                            "s" + std::to_string(c.s) + "d" + std::to_string(D);
  auto q = example::random<T::bf16>(std::size_t(c.b) * c.h * D, 1, -2, 2);
  auto k = example::random<T::bf16>(std::size_t(c.b) * c.hkv * c.s * D, 2, -2, 2);
  auto v = example::random<T::bf16>(std::size_t(c.b) * c.hkv * c.s * D, 3, -1, 1);
  auto Q = example::device_array<T::bf16, 3>({c.b, c.h, D}, q);
  auto K = example::device_array<T::bf16, 4>({c.b, c.hkv, c.s, D}, k);
  auto V = example::device_array<T::bf16, 4>({c.b, c.hkv, c.s, D}, v);
  auto O = example::device_array<T::bf16, 3>({c.b, c.h, D}); // poisoned: NaN
  // Chunks: enough blocks to fill the GPU several times over (2048 at the bench size: 32
  // chunks measured 3959 GB/s on the H200 against 3778 with 16), whole key blocks of 128
  // each, at most 32 of them (what combine takes).
  const int want = std::max(1, std::min(32, 2048 / (c.b * c.hkv)));
  const int chunk = T::ceildiv(T::ceildiv(c.s, want), 128) * 128;
  const int splits = T::ceildiv(c.s, chunk);
  auto Out = example::device_array<float, 4>({c.b, splits, c.h, D});
  auto Lse = example::device_array<float, 3>({c.b, splits, c.h});
  const float scale = 1.0f / std::sqrt(float(D));
  // AMD GPUs (64 KiB of LDS a block): key blocks of 32 (39 KiB; compiled for gfx90a, not
  // yet run on one). Elsewhere the H200's shapes.
  const bool amd = T::current_device().backend == T::backend::hip;
  double ms = example::time_ms([&] {
    if (amd)
      decoding::decode_chunk<16, 32, 128, 2>(Q, K, V, Out, Lse, scale, chunk);
    else
      decoding::decode_chunk(Q, K, V, Out, Lse, scale, chunk);
    decoding::combine(Out, Lse, O);
  });

  // The float64 reference (every head of batch 0 when benchmarking, else all).
  std::vector<T::bf16> out = O.to_vector();
  std::vector<double> ref, got;
  for (int b = 0; b < (bench ? 1 : c.b); ++b)
    for (int h = 0; h < c.h; ++h) {
      const int hk = h / (c.h / c.hkv);
      const T::bf16 *qh = &q[(std::size_t(b) * c.h + h) * D];
      std::vector<double> w(c.s);
      double mx = -INFINITY;
      for (int j = 0; j < c.s; ++j) {
        const T::bf16 *kj = &k[((std::size_t(b) * c.hkv + hk) * c.s + j) * D];
        double dot = 0;
        for (int x = 0; x < D; ++x)
          dot += double(float(qh[x])) * double(float(kj[x]));
        w[j] = dot * scale;
        mx = std::max(mx, w[j]);
      }
      double sum = 0;
      for (auto &x : w)
        sum += (x = std::exp(x - mx));
      for (int x = 0; x < D; ++x) {
        double o = 0;
        for (int j = 0; j < c.s; ++j)
          o += w[j] * double(float(v[((std::size_t(b) * c.hkv + hk) * c.s + j) * D + x]));
        ref.push_back(o / sum);
        got.push_back(double(float(out[(std::size_t(b) * c.h + h) * D + x])));
      }
    }
  const double err = example::rel_error(ref, got);
  // The work is reading the KV cache (Q, the partials and O are a few MB).
  const double kv_bytes = 2.0 * c.b * c.hkv * double(c.s) * D * sizeof(T::bf16);
  example::bench_line("decode_bf16", shape, ms, kv_bytes, "gbps", err);
  const std::string size = std::to_string(c.b) + "x" + std::to_string(c.h) + "/" + std::to_string(c.hkv) + "x" +
                           std::to_string(c.s) + " (" + std::to_string(splits) + " chunks)";
  return example::report("flash_decoding", bench ? shape : size, ms, err, 2e-2);
}

} // namespace

int main(int argc, char **argv) {
  return example::run("flash_decoding", [&] {
    if (argc > 1 && std::strcmp(argv[1], "bench") == 0)
      return run_case({8, 32, 8, 32768}, true);
    Case c{example::size_arg(argc, argv, 1, 2), example::size_arg(argc, argv, 2, 12),
           example::size_arg(argc, argv, 3, 3), example::size_arg(argc, argv, 4, 1001)};
    if (c.h % c.hkv != 0 || c.h / c.hkv > 16) {
      std::printf("FAIL flash_decoding: heads must be a multiple of kv heads, at most 16 per kv head\n");
      return 1;
    }
    return run_case(c, false);
  });
}
