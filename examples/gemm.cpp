// C = relu(A B) in bf16 (or fp16) with float accumulation: the kernel of API.md, with the
// element type as a template parameter, and block rasterization (panels of 8 rows of
// blocks: 8192^3 on the H200 went 523 -> 572 TFLOP/s, bench/NOTES.md session 20).
//   gemm [M N K [bf16|f16]]      (default 1000 1000 1000 bf16: no size divides a tile)
#include "common.h"

namespace T = tile;

template <class E = T::bf16, int BM = 128, int BN = 256, int BK = 64, int NT = 256, int S = 3, int PANEL = 8>
[[tile::kernel]] void matmul_relu(T::tensor<const E, 2> A,   // [M, K]
                                  T::tensor<const E, 2> B,   // [K, N]
                                  T::tensor<E, 2> C) {       // [M, N]
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM), T::threads(NT));
  T::use_swizzle(PANEL); // blocks in panels of PANEL rows, which share their tiles of B in L2

  T::shared<E, BM, BK> As;
  T::shared<E, BK, BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, BK), T::stages(S))) {
    T::copy(A.at(by * BM, k * BK), As);
    T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(As, Bs, acc);
  }
  for (auto [i, j] : T::parallel(BM, BN))
    acc(i, j) = T::max(acc(i, j), 0.0f);
  T::copy(acc, C.at(by * BM, bx * BN));
}

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
