// The GEMM of examples/gemm.cpp (bf16, relu), tuned: tile::autotune times five compiled
// instantiations (tile shapes, threads, stages) at the first launch for a shape class,
// keeps the fastest, and remembers it in the tuning cache (docs/host.md, "Autotuning").
//   gemm_autotune [M N K]        (default 1000 1000 1000)
// Prints what the autotuner chose and why, checks the result of every candidate against a
// float64 reference, and, with TILE_BENCH_REPS=N, times the tuned launch and each candidate
// alone (JSON lines, "kernel": "gemm_autotune_bfloat16") and the chosen one's time over the
// fastest's ("vs_fastest").
#include "gemm.h"
#include "gemm_check.h"

#include <tile/autotune.h>

using E = T::bf16;

/// The candidates: the H200's tuned shape first (gemm.cpp's), then others that win at other
/// sizes or on other devices; the last fits AMD's 64 KiB of LDS.
static auto gemm = T::autotune("gemm_relu_bf16",                                     //
                               T::candidate("128x256x64 t256 s3", &matmul_relu<E, 128, 256, 64, 256, 3>),
                               T::candidate("256x128x64 t256 s3", &matmul_relu<E, 256, 128, 64, 256, 3>),
                               T::candidate("128x128x64 t256 s4", &matmul_relu<E, 128, 128, 64, 256, 4>),
                               T::candidate("128x128x32 t128 s4", &matmul_relu<E, 128, 128, 32, 128, 4>),
                               T::candidate("128x128x32 t256 s2", &matmul_relu<E, 128, 128, 32, 256, 2>));

int main(int argc, char **argv) {
  const int M = example::size_arg(argc, argv, 1, 1000), N = example::size_arg(argc, argv, 2, 1000),
            K = example::size_arg(argc, argv, 3, 1000);
  const std::string size = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  return example::run("gemm_autotune", [&] {
    auto a = example::random<E>(std::size_t(M) * K, 1), b = example::random<E>(std::size_t(K) * N, 2);
    auto A = example::device_array<E, 2>({M, K}, a), B = example::device_array<E, 2>({K, N}, b);
    auto C = example::device_array<E, 2>({M, N}); // poisoned: NaN

    const std::string chosen = gemm.choice(A, B, C); // tunes where no choice is known
    std::printf("%s\n", gemm.explanation().c_str());
    C = example::device_array<E, 2>({M, N});
    double ms = example::time_ms([&] { gemm(A, B, C); });
    double err = example::gemm_error(a, b, C.to_vector(), M, N, K);
    int status = example::report("gemm_autotune", size + " (" + chosen + ")", ms, err, 1e-2);

    // Every candidate alone: its result, and in bench mode its time.
    double fastest = 0, chosen_alone = 0;
    std::string fastest_label;
    for (const auto &c : gemm.candidates()) {
      auto Cc = example::device_array<E, 2>({M, N});
      double t = 0;
      try {
        t = example::time_ms([&] { c.launch(A, B, Cc); });
      } catch (const tile::error &e) {
        std::printf("  %-20s does not run here: %s\n", c.label.c_str(), e.what());
        continue;
      }
      const double e = example::gemm_error(a, b, Cc.to_vector(), M, N, K);
      std::printf("  %-20s %.3f ms, relative error %.3g\n", c.label.c_str(), t, e);
      if (!(e <= 1e-2)) {
        std::printf("FAIL gemm_autotune %s: candidate %s has relative error %.3g\n", size.c_str(), c.label.c_str(), e);
        status = 1;
      }
      if (fastest == 0 || t < fastest) {
        fastest = t;
        fastest_label = c.label;
      }
      if (c.label == chosen)
        chosen_alone = t;
    }
    if (example::bench_reps() > 0 && fastest > 0) {
      example::bench_line("gemm_autotune_bfloat16", size, ms, 2.0 * M * N * K, "tflops", err);
      std::printf("{\"kernel\": \"gemm_autotune_bfloat16\", \"shape\": \"%s\", \"choice\": \"%s\", \"chosen_alone_ms\": "
                  "%.4f, \"fastest\": \"%s\", \"fastest_ms\": %.4f, \"vs_fastest\": %.4f}\n",
                  size.c_str(), chosen.c_str(), chosen_alone, fastest_label.c_str(), fastest, chosen_alone / fastest);
    }
    return status;
  });
}
