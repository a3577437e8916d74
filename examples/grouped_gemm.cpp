// The grouped GEMM of a mixture of experts: the tokens routed to expert e are the rows
// Offsets(e) to Offsets(e + 1) - 1 of A, and C's same rows = those rows times W[e]; bf16 in,
// float accumulation, bf16 out. Each expert's rows are a view chosen at run time
// (A.rows(...), docs/language.md): tiles past an expert's last token read zeros and write
// nothing, so experts of any token count share one launch of a grid sized for the largest.
//   grouped_gemm [experts tokens K N]   (default 8 experts of about 300 tokens each, K 200,
//                                        N 300: no size divides a tile; the counts vary by
//                                        expert, one expert gets none)
//   grouped_gemm bench                  (8 experts of 4096 tokens, K 4096, N 14336; every
//                                        97th token checked)
#include "common.h"

#include <cstring>

namespace T = tile;

template <class E = T::bf16, int BM = 128, int BN = 128, int BK = 64, int S = 3, int NT = 128>
[[tile::kernel]] void grouped_gemm(T::tensor<const E, 2> A,             // [tokens, K]
                                   T::tensor<const E, 3> W,             // [experts, K, N]
                                   T::tensor<const int, 1> Offsets,     // [experts + 1]
                                   T::tensor<E, 2> C,                   // [tokens, N]
                                   int max_tokens) {                    // the most any expert has
  auto [bx, by, e] = T::grid(T::ceildiv(W.size(2), BN), T::ceildiv(max_tokens, BM), W.size(0), T::threads(NT));
  T::use_swizzle(8); // blocks in panels of 8 rows, which share their tiles of W in L2
  auto Ae = A.rows(Offsets(e), Offsets(e + 1));
  auto Ce = C.rows(Offsets(e), Offsets(e + 1));
  T::shared<E, BM, BK> As;
  T::shared<E, BK, BN> Bs;
  T::fragment<float, BM, BN> acc;
  if (by * BM < Ae.size(0)) { // (blocks past this expert's tokens have nothing to do)
    T::clear(acc);
    for (int k : T::pipelined(T::ceildiv(A.size(1), BK), T::stages(S))) {
      T::copy(Ae.at(by * BM, k * BK), As);
      T::copy(W.at(e, T::slice(k * BK), T::slice(bx * BN)), Bs);
      T::gemm(As, Bs, acc);
    }
    T::copy(acc, Ce.at(by * BM, bx * BN));
  }
}

int main(int argc, char **argv) {
  const bool bench = argc > 1 && std::strcmp(argv[1], "bench") == 0;
  const int experts = bench ? 8 : example::size_arg(argc, argv, 1, 8);
  const int per_expert = bench ? 4096 : example::size_arg(argc, argv, 2, 300);
  const int K = bench ? 4096 : example::size_arg(argc, argv, 3, 200), N = bench ? 14336 : example::size_arg(argc, argv, 4, 300);
  const std::string size = std::to_string(experts) + "x" + std::to_string(per_expert) + " " + std::to_string(K) +
                           " " + std::to_string(N);
  return example::run("grouped_gemm", [&] {
    // Token counts from half to one and a half times the average, expert 1 none; in bench
    // mode every expert has the same count (the peers' shape).
    std::vector<int> offsets{0};
    int max_tokens = 0;
    auto spread = example::random<float>(experts, 7, 0.5, 1.5);
    for (int e = 0; e < experts; ++e) {
      const int n = bench ? per_expert : e == 1 ? 0 : std::max(1, int(per_expert * spread[e]));
      offsets.push_back(offsets.back() + n);
      max_tokens = std::max(max_tokens, n);
    }
    const int tokens = offsets.back();
    auto a = example::random<T::bf16>(std::size_t(tokens) * K, 1);
    auto w = example::random<T::bf16>(std::size_t(experts) * K * N, 2);
    auto A = example::device_array<T::bf16, 2>({tokens, K}, a);
    auto W = example::device_array<T::bf16, 3>({experts, K, N}, w);
    auto Offsets = example::device_array<int, 1>({experts + 1}, offsets);
    auto C = example::device_array<T::bf16, 2>({tokens, N});
    const double ms = example::time_ms([&] { grouped_gemm<T::bf16>(A, W, Offsets, C, max_tokens); });

    // The rows checked: all of them, or every 97th in bench mode.
    const int every = bench ? 97 : 1;
    std::vector<double> ref;
    std::vector<T::bf16> got, c = C.to_vector();
    for (int e = 0; e < experts; ++e)
      for (int t = offsets[e]; t < offsets[e + 1]; ++t) {
        if (t % every != 0)
          continue;
        std::vector<double> row(N, 0.0);
        for (int p = 0; p < K; ++p) {
          const double x = float(a[std::size_t(t) * K + p]);
          const T::bf16 *wr = &w[(std::size_t(e) * K + p) * N];
          for (int j = 0; j < N; ++j)
            row[j] += x * double(float(wr[j]));
        }
        ref.insert(ref.end(), row.begin(), row.end());
        got.insert(got.end(), c.begin() + std::ptrdiff_t(t) * N, c.begin() + std::ptrdiff_t(t + 1) * N);
      }
    const double err = example::rel_error(ref, got);
    example::bench_line("grouped_gemm_bf16", size, ms, 2.0 * tokens * K * N, "tflops", err);
    if (bench) { // (and with the GEMM example's tiles: 128 x 256, two consumer warpgroups)
      auto C2 = example::device_array<T::bf16, 2>({tokens, N});
      const double ms2 =
          example::time_ms([&] { grouped_gemm<T::bf16, 128, 256, 64, 3, 256>(A, W, Offsets, C2, max_tokens); });
      const std::vector<T::bf16> c2 = C2.to_vector();
      std::vector<T::bf16> got2;
      for (int e = 0; e < experts; ++e)
        for (int t = offsets[e]; t < offsets[e + 1]; ++t)
          if (t % every == 0)
            got2.insert(got2.end(), c2.begin() + std::ptrdiff_t(t) * N, c2.begin() + std::ptrdiff_t(t + 1) * N);
      example::bench_line("grouped_gemm_wide_bf16", size, ms2, 2.0 * tokens * K * N, "tflops",
                          example::rel_error(ref, got2));
    }
    return example::report("grouped_gemm", size, ms, err, 1e-2);
  });
}
