// C = relu(A B) in bf16 (or fp16) with float accumulation: the kernel of API.md, with the
// element type as a template parameter, and block rasterization (panels of 8 rows of
// blocks: 8192^3 on the H200 went 523 -> 572 TFLOP/s, bench/NOTES.md session 20).
//   gemm [M N K [bf16|f16]]      (default 1000 1000 1000 bf16: no size divides a tile)
#include "common.h"
#include "gemm.h"

template <class E> int run(int M, int N, int K, const char *type_name) {
  const std::string size = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  auto a = example::random<E>(std::size_t(M) * K, 1), b = example::random<E>(std::size_t(K) * N, 2);
  auto A = example::device_array<E, 2>({M, K}, a), B = example::device_array<E, 2>({K, N}, b);
  auto C = example::device_array<E, 2>({M, N});
  // AMD GPUs (64 KiB of LDS a block): 128x128 tiles, K steps of 32, two stages (35 KiB;
  // compiled for gfx90a, not yet run on one). Elsewhere the H200's shapes above.
  const bool amd = T::current_device().backend == T::backend::hip;
  double ms = example::time_ms([&] {
    if (amd)
      matmul_relu<E, 128, 128, 32, 256, 2>(A, B, C);
    else
      matmul_relu<E>(A, B, C);
  });

  // The float64 reference, a row of C at a time: every row, or 97 rows spread over C when
  // that would take long (large benchmark sizes).
  const int step = double(M) * N * K > 4e10 ? std::max(1, M / 97) : 1;
  std::vector<double> ref, bd(b.begin(), b.end());
  std::vector<E> got, c_all = C.to_vector();
  for (int i = 0; i < M; i += step) {
    std::vector<double> c(N);
    for (int k = 0; k < K; ++k) {
      const double aik = float(a[std::size_t(i) * K + k]), *bk = &bd[std::size_t(k) * N];
      for (int j = 0; j < N; ++j)
        c[j] += aik * bk[j];
    }
    for (int j = 0; j < N; ++j)
      ref.push_back(std::max(c[j], 0.0));
    got.insert(got.end(), c_all.begin() + std::size_t(i) * N, c_all.begin() + std::size_t(i + 1) * N);
  }
  // bf16 output: about 2^-9 relative rounding per element (fp16: 2^-12).
  const double err = example::rel_error(ref, got);
  example::bench_line((std::string("gemm_") + type_name).c_str(), size, ms, 2.0 * M * N * K, "tflops", err);
  return example::report("gemm", size + " " + type_name, ms, err, 1e-2);
}

int main(int argc, char **argv) {
  const int M = example::size_arg(argc, argv, 1, 1000), N = example::size_arg(argc, argv, 2, 1000),
            K = example::size_arg(argc, argv, 3, 1000);
  const std::string type = argc > 4 ? argv[4] : "bf16";
  if (type != "bf16" && type != "f16") {
    std::fprintf(stderr, "%s: element type '%s' is not bf16 or f16\n", argv[0], type.c_str());
    return 2;
  }
  return example::run("gemm", [&] {
    // The JSON names of ../shared/bench/peers.py (torch's dtype names).
    return type == "bf16" ? run<T::bf16>(M, N, K, "bfloat16") : run<T::f16>(M, N, K, "float16");
  });
}
