// Tile-shape exploration on the GPU: the GEMM of the examples with its tile sizes, thread
// count and stages as template parameters, each variant checked against a float64
// reference on sampled rows and timed as the examples are (example::time_ms); the
// attention kernel of examples/flash_attention.h at b4 h32 s4096 with its key block and
// stages varied, each variant checked against the example's own choice (which the example
// checks against float64); and a plain copy, the bandwidth the memory-bound examples are
// measured against. (The variants of the norm kernels tried so far, and their figures, are
// in bench/NOTES.md.) Prints one line per variant; used to choose the examples' defaults.
//   tune_gpu [gemm|attn|decode|copy|all] [sizes: N for gemm, M N for copy]
#include "../examples/common.h"
#include "../examples/flash_attention.h"
#include "../examples/flash_decoding.h"


namespace T = tile;

template <int BM, int BN, int BK, int NT, int S, int PANEL = 1, bool PERSISTENT = false>
[[tile::kernel]] void gemm_v(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<T::bf16, 2> C) {
  const int K = A.size(1), N = B.size(1), M = A.size(0);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM), T::threads(NT));
  T::use_swizzle(PANEL); // blocks in panels of PANEL rows (1: in order)
  if constexpr (PERSISTENT)
    T::persistent();
  T::shared<T::bf16, BM, BK> As;
  T::shared<T::bf16, BK, BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, BK), T::stages(S))) {
    T::copy(A.at(by * BM, k * BK), As);
    T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * BM, bx * BN));
}

// Plain copy: the bandwidth the memory-bound kernels are measured against.
template <int BM, int BN, int NT>
[[tile::kernel]] void copy_v(T::tensor<const T::bf16, 2> X, T::tensor<T::bf16, 2> Y) {
  const int M = X.size(0), N = X.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM), T::threads(NT));
  T::fragment<T::bf16, BM, BN> x;
  T::copy(X.at(by * BM, bx * BN), x);
  T::copy(x, Y.at(by * BM, bx * BN));
}

namespace {

void line(const std::string &name, double ms, double rate, const char *unit, double err) {
  std::printf("%-36s %9.4f ms %9.1f %s  err %.2g%s\n", name.c_str(), ms, rate, unit, err, err < 1e-2 ? "" : "  WRONG");
  std::fflush(stdout);
}

void tune_gemm(int n) {
  const int M = n, N = n, K = n;
  auto a = example::random<T::bf16>(std::size_t(M) * K, 1), b = example::random<T::bf16>(std::size_t(K) * N, 2);
  auto A = example::device_array<T::bf16, 2>({M, K}, a), B = example::device_array<T::bf16, 2>({K, N}, b);
  std::vector<double> bd(b.begin(), b.end());
  std::vector<int> rows;
  for (int i = 0; i < M; i += std::max(1, M / 13))
    rows.push_back(i);
  std::vector<double> ref;
  for (int i : rows) {
    std::vector<double> c(N);
    for (int k = 0; k < K; ++k) {
      const double aik = float(a[std::size_t(i) * K + k]), *bk = &bd[std::size_t(k) * N];
      for (int j = 0; j < N; ++j)
        c[j] += aik * bk[j];
    }
    ref.insert(ref.end(), c.begin(), c.end());
  }
  auto run = [&](const char *name, auto kernel) {
    auto C = example::device_array<T::bf16, 2>({M, N});
    kernel(A, B, C); // the first launch loads the module: not timed
    double ms = example::time_ms([&] { kernel(A, B, C); });
    std::vector<T::bf16> all = C.to_vector(), got;
    for (int i : rows)
      got.insert(got.end(), all.begin() + std::size_t(i) * N, all.begin() + std::size_t(i + 1) * N);
    line(std::string("gemm ") + std::to_string(n) + " " + name, ms, 2.0 * M * N * K / ms / 1e9, "TFLOP/s",
         example::rel_error(ref, got));
  };
  run("128x256x64 t256 s3", [](auto &&...x) { gemm_v<128, 256, 64, 256, 3>(x...); });
  run("128x256x64 t256 s4", [](auto &&...x) { gemm_v<128, 256, 64, 256, 4>(x...); });
  run("256x128x64 t256 s3", [](auto &&...x) { gemm_v<256, 128, 64, 256, 3>(x...); });
  run("128x128x64 t128 s3", [](auto &&...x) { gemm_v<128, 128, 64, 128, 3>(x...); });
  run("128x128x32 t128 s4", [](auto &&...x) { gemm_v<128, 128, 32, 128, 4>(x...); });
  // Block rasterization (L2 reuse of the operands' tiles).
  run("128x256x64 t256 s3 panel 8", [](auto &&...x) { gemm_v<128, 256, 64, 256, 3, 8>(x...); });
  run("128x256x64 t256 s3 panel 16", [](auto &&...x) { gemm_v<128, 256, 64, 256, 3, 16>(x...); });
  run("128x256x64 t256 s4 panel 8", [](auto &&...x) { gemm_v<128, 256, 64, 256, 4, 8>(x...); });
  // Persistent grids (a block an SM taking tiles in turn).
  run("128x256x64 t256 s3 panel 8 persistent", [](auto &&...x) { gemm_v<128, 256, 64, 256, 3, 8, true>(x...); });
  run("128x256x64 t256 s4 panel 8 persistent", [](auto &&...x) { gemm_v<128, 256, 64, 256, 4, 8, true>(x...); });
}

/// Attention b4 h32 s4096 at head_dim D, causal or not: the variants against the first
/// (the example's choice), element by element.
template <int D, bool CAUSAL> void tune_attention() {
  const int b = 4, h = 32, s = 4096;
  const std::size_t n = std::size_t(b) * h * s * D;
  auto Q = example::device_array<T::bf16, 4>({b, h, s, D}, example::random<T::bf16>(n, 1, -2, 2));
  auto K = example::device_array<T::bf16, 4>({b, h, s, D}, example::random<T::bf16>(n, 2, -2, 2));
  auto V = example::device_array<T::bf16, 4>({b, h, s, D}, example::random<T::bf16>(n, 3, -1, 1));
  const float scale = 1.0f / std::sqrt(float(D));
  const double flop = 4.0 * b * h * double(s) * s * D / (CAUSAL ? 2 : 1);
  std::vector<double> first;
  auto run = [&](const char *name, auto kernel) {
    auto O = example::device_array<T::bf16, 4>({b, h, s, D});
    kernel(Q, K, V, O, scale); // the first launch loads the module: not timed
    double ms = example::time_ms([&] { kernel(Q, K, V, O, scale); });
    std::vector<T::bf16> out = O.to_vector();
    std::vector<double> got(out.begin(), out.end());
    if (first.empty())
      first = got;
    line(std::string("attn d") + std::to_string(D) + (CAUSAL ? " causal " : " ") + name, ms, flop / ms / 1e9,
         "TFLOP/s", example::rel_error(first, got));
  };
#ifndef FLASH_ATTENTION_MMA
  // Both gemms on wgmma (the default on sm_90a), which takes 64 query rows a warpgroup: one
  // or two warpgroups, key blocks and stages, warp-specialized (the default: a producer
  // warpgroup; in test/gpu's tune-gpu, built with overlap-gemms=on, the P V gemm also
  // overlapped with the next block's softmax; tune-gpu-no-overlap without) or not (cp.async
  // by the block's own threads). The example's choice second.
  constexpr bool WS = true, CP = false;
  run("BM128 BN128 s3 ws", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 128, 256, 3, true, WS>(x...); });
  run("BM128 BN128 s2 ws", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 128, 256, 2, true, WS>(x...); });
  // Persistent grids (a block an SM taking query blocks in turn).
  run("BM128 BN128 s2 ws persistent",
      [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 128, 256, 2, true, WS, true>(x...); });
  run("BM128 BN128 s3 ws persistent",
      [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 128, 256, 3, true, WS, true>(x...); });
  run("BM128 BN64 s3 ws persistent",
      [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 64, 256, 3, true, WS, true>(x...); });
  if constexpr (D == 64) // (at head_dim 128, 4 stages of 128 keys take more shared memory than a block has)
    run("BM128 BN128 s4 ws", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 128, 256, 4, true, WS>(x...); });
  run("BM128 BN64 s3 ws", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 64, 256, 3, true, WS>(x...); });
  run("BM128 BN64 s4 ws", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 64, 256, 4, true, WS>(x...); });
  if constexpr (CAUSAL)
    run("BM128 BN128 s3 ws in order",
        [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 128, 256, 3, false, WS>(x...); });
  if constexpr (D == 64) {
    run("BM64 BN128 s3 ws", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 64, 128, 128, 3, true, WS>(x...); });
    run("BM128 BN64 s3 cp.async", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 64, 256, 3, true, CP>(x...); });
  } else {
    run("BM128 BN128 s2 cp.async", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 128, 256, 2, true, CP>(x...); });
  }
  return;
#endif
  // BM 128 on 4 warps throughout (bench/NOTES.md: 8 warps and BM 64 lost); key blocks and stages.
  if constexpr (D == 64) {
    run("BN96 s2", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 96, 128, 2>(x...); });
    run("BN64 s2", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 64, 128, 2>(x...); });
    run("BN128 s2", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 128, 128, 2>(x...); });
    run("BN96 s3", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 96, 128, 3>(x...); });
    if constexpr (CAUSAL)
      run("BN96 s2 in order", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 96, 128, 2, false>(x...); });
  } else {
    run("BN64 s2", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 64, 128, 2>(x...); });
    run("BN48 s2", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 48, 128, 2>(x...); });
    run("BN32 s2", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 32, 128, 2>(x...); });
    run("BN80 s2", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 80, 128, 2>(x...); });
    if constexpr (CAUSAL)
      run("BN64 s2 in order", [](auto &&...x) { flash::flash_attention<D, CAUSAL, 128, 64, 128, 2, false>(x...); });
  }
}

/// Decoding b8 h32 hkv8 s32768 d128 (examples/flash_decoding.cpp): key blocks, stages,
/// threads and the number of chunks, each against the first, in GB/s of KV cache read.
void tune_decoding() {
  const int b = 8, h = 32, hkv = 8, s = 32768, D = decoding::D;
  const std::size_t kv = std::size_t(b) * hkv * s * D;
  auto Q = example::device_array<T::bf16, 3>({b, h, D}, example::random<T::bf16>(std::size_t(b) * h * D, 1, -2, 2));
  auto K = example::device_array<T::bf16, 4>({b, hkv, s, D}, example::random<T::bf16>(kv, 2, -2, 2));
  auto V = example::device_array<T::bf16, 4>({b, hkv, s, D}, example::random<T::bf16>(kv, 3, -1, 1));
  const float scale = 1.0f / std::sqrt(float(D));
  std::vector<double> first;
  auto run = [&](const std::string &name, int chunks, auto kernel) {
    const int chunk = T::ceildiv(T::ceildiv(s, chunks), 128) * 128, splits = T::ceildiv(s, chunk);
    auto Out = example::device_array<float, 4>({b, splits, h, D});
    auto Lse = example::device_array<float, 3>({b, splits, h});
    auto O = example::device_array<T::bf16, 3>({b, h, D});
    auto launch = [&] {
      kernel(Q, K, V, Out, Lse, scale, chunk);
      decoding::combine(Out, Lse, O);
    };
    launch();
    double ms = example::time_ms(launch);
    std::vector<T::bf16> out = O.to_vector();
    std::vector<double> got(out.begin(), out.end());
    if (first.empty())
      first = got;
    line("decode " + name + " chunks " + std::to_string(splits), ms, 2.0 * kv * sizeof(T::bf16) / ms / 1e6, "GB/s",
         example::rel_error(first, got));
  };
  run("G16 BN64 t128 s2", 32, [](auto &&...x) { decoding::decode_chunk<16, 64, 128, 2>(x...); });
  run("G16 BN64 t128 s2", 16, [](auto &&...x) { decoding::decode_chunk<16, 64, 128, 2>(x...); });
  run("G16 BN64 t128 s3", 16, [](auto &&...x) { decoding::decode_chunk<16, 64, 128, 3>(x...); });
  run("G16 BN128 t128 s2", 16, [](auto &&...x) { decoding::decode_chunk<16, 128, 128, 2>(x...); });
  run("G16 BN32 t128 s4", 16, [](auto &&...x) { decoding::decode_chunk<16, 32, 128, 4>(x...); });
  run("G16 BN64 t64 s2", 16, [](auto &&...x) { decoding::decode_chunk<16, 64, 64, 2>(x...); });
  run("G16 BN64 t32 s2 (registers)", 16, [](auto &&...x) { decoding::decode_chunk<16, 64, 32, 2>(x...); });
}

void tune_copy(int M, int N) {
  auto x = example::random<T::bf16>(std::size_t(M) * N, 8, 1, 5);
  auto X = example::device_array<T::bf16, 2>({M, N}, x);
  const double bytes = 2.0 * double(M) * N * sizeof(T::bf16);
  auto copy = [&](const char *name, auto kernel) {
    auto Y = example::device_array<T::bf16, 2>({M, N});
    double ms = example::time_ms([&] { kernel(X, Y); });
    std::vector<T::bf16> all = Y.to_vector();
    double err = 0;
    for (std::size_t i = 0; i < all.size(); ++i)
      err = std::max(err, std::abs(double(float(all[i])) - double(float(x[i]))));
    line(std::string("copy ") + name, ms, bytes / ms / 1e6, "GB/s", err);
  };
  copy("8x256 t128", [](auto &&...a) { copy_v<8, 256, 128>(a...); });
  copy("16x512 t256", [](auto &&...a) { copy_v<16, 512, 256>(a...); });
}

} // namespace

int main(int argc, char **argv) {
  const std::string what = argc > 1 ? argv[1] : "all";
  return example::run("tune_gpu", [&] {
    std::printf("device: %s\n", T::current_device().name().c_str());
    if (what == "gemm" || what == "all")
      tune_gemm(example::size_arg(argc, argv, 2, 4096));
    if (what == "attn" || what == "all") {
      tune_attention<64, false>();
      tune_attention<64, true>();
      tune_attention<128, false>();
      tune_attention<128, true>();
    }
    if (what == "decode" || what == "all")
      tune_decoding();
    if (what == "copy" || what == "all")
      tune_copy(example::size_arg(argc, argv, 2, 32768), example::size_arg(argc, argv, 3, 8192));
    return 0;
  });
}
