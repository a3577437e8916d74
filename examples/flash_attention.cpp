// Forward attention O = softmax(Q K^T * scale) V, written as FlashAttention-2 computes it:
// a block of BM query rows keeps its Q tile in shared memory and walks the keys in blocks of
// BN, pipelined: S = Q K^T on tensor cores, the mask, the online softmax in base 2 (a running
// row maximum m of the unscaled scores and row sum l; P = exp2(S c - m c) with c = scale *
// log2(e), earlier work rescaled by exp2((m_old - m_new) c)), then P as bf16 and O += P V.
// Every fragment stays in registers and P goes from the first gemm's accumulator into the
// second gemm without moving (compile with -fplugin-arg-tile-remarks to see the layouts the
// compiler chose). The kernel is in flash_attention.h; this program runs and checks it.
//
// Tensors are [batch, heads, sequence, head_dim], bf16, with grouped-query heads: query head
// h reads key/value head h / (H / HKV). Causal attention masks key j > query i (both counted
// from the start) and stops at the query block's diagonal.
//   flash_attention [B H HKV SQ SK D causal]   (default 2 4 2 333 271 64 0: no size divides a tile)
//   flash_attention bench                      (b4 h32 s4096, d64 and d128, causal and not)
#include "common.h"
#include "flash_attention.h"

#include <cstring>

namespace T = tile;

namespace {

struct Case {
  int b, h, hkv, sq, sk, d;
  bool causal;
};

// A persistent grid on Hopper (tile::persistent: on the H200 it ran d128 attention 1.04x and
// 1.14x as fast with the consumer warpgroups' turns, bench/NOTES.md session 25);
// -DFLASH_ATTENTION_PERSISTENT=false keeps the launch's grid (test/gpu's
// example-flash_attention-launch-grid).
#ifndef FLASH_ATTENTION_PERSISTENT
#define FLASH_ATTENTION_PERSISTENT true
#endif
constexpr bool persistent = FLASH_ATTENTION_PERSISTENT;

// -DFLASH_ATTENTION_SIMPLE: the kernel with its default tiles everywhere, as a user first
// writes it (TileLang's simple example's: 64 query rows and 64 keys a block, 128 threads,
// 2 stages), leaving the rest to the compiler (test/gpu's example-flash_attention-simple).
#ifdef FLASH_ATTENTION_SIMPLE
constexpr bool simple = true;
#else
constexpr bool simple = false;
#endif

template <int D, bool CAUSAL>
void launch(const T::array<T::bf16, 4> &q, const T::array<T::bf16, 4> &k, const T::array<T::bf16, 4> &v,
            T::array<T::bf16, 4> &o, float scale) {
  if constexpr (simple) {
    flash::flash_attention<D, CAUSAL>(q, k, v, o, scale);
    return;
  }
  // Tile shapes measured on the H200 (bench/NOTES.md). On Hopper both gemms run on wgmma,
  // which takes 64 query rows a warpgroup: two warpgroups and key blocks of 128, two stages
  // (warp-specialized: a producer warpgroup loads K and V). With
  // -fplugin-arg-tile-overlap-gemms=on each P V gemm also overlaps the next block's softmax
  // (test/gpu's example-flash_attention-overlap). Built with
  // -fplugin-arg-tile-gemm=mma (test/gpu's example-flash_attention-mma), or on other GPUs,
  // mma.sync: 4 warps of 32 query rows (each K and V fragment read from shared memory
  // serves two row atoms), key blocks of 96 for head_dim 64 and of 64 for head_dim 128.
  // AMD GPUs (64 KiB of LDS a block, 64-wide wavefronts): one stage, four wavefronts of
  // 32 query rows for head_dim 64 and of 16 for head_dim 128 (compiled for gfx90a, not yet
  // run on one).
  if (T::current_device().backend == T::backend::hip) {
    if constexpr (D == 64)
      flash::flash_attention<D, CAUSAL, 128, 64, 256, 1>(q, k, v, o, scale);
    else
      flash::flash_attention<D, CAUSAL, 64, 64, 256, 1>(q, k, v, o, scale);
    return;
  }
#ifndef FLASH_ATTENTION_MMA
  if (T::current_device().architecture() == "sm_90") {
    flash::flash_attention<D, CAUSAL, 128, 128, 256, 2, true, true, persistent>(q, k, v, o, scale);
    return;
  }
#endif
  if constexpr (D == 64)
    flash::flash_attention<D, CAUSAL, 128, 96, 128>(q, k, v, o, scale);
  else
    flash::flash_attention<D, CAUSAL, 128, 64, 128>(q, k, v, o, scale);
}

/// Runs one case; checks against a float64 reference (on `check_heads` heads of batch 0 when
/// the case is large). Returns the exit status.
int run_case(const Case &c, bool bench, int check_heads) {
  const std::string shape = "b" + std::to_string(c.b) + "h" + std::to_string(c.h) + "s" + std::to_string(c.sq) + "d" +
                            std::to_string(c.d) + (c.causal ? "c" : "");
  const std::string size = bench ? shape
                                 : std::to_string(c.b) + "x" + std::to_string(c.h) + "/" + std::to_string(c.hkv) + "x" +
                                       std::to_string(c.sq) + "x" + std::to_string(c.sk) + "x" + std::to_string(c.d) +
                                       (c.causal ? " causal" : "");
  auto q = example::random<T::bf16>(std::size_t(c.b) * c.h * c.sq * c.d, 1, -2, 2);
  auto k = example::random<T::bf16>(std::size_t(c.b) * c.hkv * c.sk * c.d, 2, -2, 2);
  auto v = example::random<T::bf16>(std::size_t(c.b) * c.hkv * c.sk * c.d, 3, -1, 1);
  auto Q = example::device_array<T::bf16, 4>({c.b, c.h, c.sq, c.d}, q);
  auto K = example::device_array<T::bf16, 4>({c.b, c.hkv, c.sk, c.d}, k);
  auto V = example::device_array<T::bf16, 4>({c.b, c.hkv, c.sk, c.d}, v);
  // Poisoned output: every element must be written.
  auto O = example::device_array<T::bf16, 4>(
      {c.b, c.h, c.sq, c.d}, std::vector<T::bf16>(std::size_t(c.b) * c.h * c.sq * c.d, T::bf16(NAN)));
  const float scale = 1.0f / std::sqrt(float(c.d));
  double ms = example::time_ms([&] {
    if (c.d == 64)
      c.causal ? launch<64, true>(Q, K, V, O, scale) : launch<64, false>(Q, K, V, O, scale);
    else
      c.causal ? launch<128, true>(Q, K, V, O, scale) : launch<128, false>(Q, K, V, O, scale);
  });

  // The float64 reference on the heads checked.
  std::vector<T::bf16> out = O.to_vector();
  std::vector<double> ref, got;
  const int heads = std::min(c.h, check_heads);
  for (int b = 0; b < (bench ? 1 : c.b); ++b)
    for (int h = 0; h < heads; ++h) {
      const int hk = h / (c.h / c.hkv);
      for (int i = 0; i < c.sq; ++i) {
        const T::bf16 *qi = &q[((std::size_t(b) * c.h + h) * c.sq + i) * c.d];
        std::vector<double> w(c.sk, -INFINITY);
        double mx = -INFINITY;
        for (int j = 0; j < c.sk && (!c.causal || j <= i); ++j) {
          const T::bf16 *kj = &k[((std::size_t(b) * c.hkv + hk) * c.sk + j) * c.d];
          double dot = 0;
          for (int x = 0; x < c.d; ++x)
            dot += double(float(qi[x])) * double(float(kj[x]));
          w[j] = dot * scale;
          mx = std::max(mx, w[j]);
        }
        double sum = 0;
        for (auto &x : w) {
          x = std::exp(x - mx);
          sum += x;
        }
        for (int x = 0; x < c.d; ++x) {
          double o = 0;
          for (int j = 0; j < c.sk; ++j)
            o += w[j] * double(float(v[((std::size_t(b) * c.hkv + hk) * c.sk + j) * c.d + x]));
          ref.push_back(o / sum);
          got.push_back(double(float(out[((std::size_t(b) * c.h + h) * c.sq + i) * c.d + x])));
        }
      }
    }
  const double err = example::rel_error(ref, got);
  const double flop = 4.0 * c.b * c.h * double(c.sq) * c.sk * c.d / (c.causal ? 2 : 1);
  example::bench_line(simple ? "attn_fwd_simple_bf16" : "attn_fwd_bf16", shape, ms, flop, "tflops", err);
  return example::report("flash_attention", size, ms, err, 2e-2);
}

} // namespace

int main(int argc, char **argv) {
  return example::run("flash_attention", [&] {
    if (argc > 1 && std::strcmp(argv[1], "bench") == 0) {
      int status = 0;
      for (int d : {64, 128})
        for (bool causal : {false, true})
          status |= run_case({4, 32, 32, 4096, 4096, d, causal}, true, 1);
      return status;
    }
    Case c{example::size_arg(argc, argv, 1, 2), example::size_arg(argc, argv, 2, 4), example::size_arg(argc, argv, 3, 2),
           example::size_arg(argc, argv, 4, 333), example::size_arg(argc, argv, 5, 271),
           example::size_arg(argc, argv, 6, 64), argc > 7 && std::strcmp(argv[7], "0") != 0};
    if ((c.d != 64 && c.d != 128) || c.h % c.hkv != 0) {
      std::printf("FAIL flash_attention: head_dim must be 64 or 128 and heads a multiple of kv heads\n");
      return 1;
    }
    return run_case(c, false, c.h);
  });
}
