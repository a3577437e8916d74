// What the GEMM examples share: inputs, a launch timed, its result checked against a
// float64 reference of C = relu(A B), and the lines the benchmarks read.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "common.h"

namespace example {

/// ||C - relu(A B)|| / ||relu(A B)|| in float64 (A M x K, B K x N, C M x N, row-major), a
/// row of C at a time: every row, or 97 rows spread over C when that would take long (large
/// benchmark sizes).
template <class E>
double gemm_error(const std::vector<E> &a, const std::vector<E> &b, const std::vector<E> &c, int M, int N, int K) {
  const int step = double(M) * N * K > 4e10 ? std::max(1, M / 97) : 1;
  std::vector<double> ref, bd(b.begin(), b.end());
  std::vector<E> got;
  for (int i = 0; i < M; i += step) {
    std::vector<double> row(N);
    for (int k = 0; k < K; ++k) {
      const double aik = float(a[std::size_t(i) * K + k]), *bk = &bd[std::size_t(k) * N];
      for (int j = 0; j < N; ++j)
        row[j] += aik * bk[j];
    }
    for (int j = 0; j < N; ++j)
      ref.push_back(std::max(row[j], 0.0));
    got.insert(got.end(), c.begin() + std::size_t(i) * N, c.begin() + std::size_t(i + 1) * N);
  }
  return rel_error(ref, got);
}

/// Runs `launch(A, B, C)` on random M x K and K x N inputs of type E, times it, checks C
/// against relu(A B) in float64 and reports it as `name` ("gemm", "gemm_simple").
template <class E, class Launch> int check_gemm(const char *name, int M, int N, int K, const char *type_name, Launch &&launch) {
  const std::string size = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  auto a = random<E>(std::size_t(M) * K, 1), b = random<E>(std::size_t(K) * N, 2);
  auto A = device_array<E, 2>({M, K}, a), B = device_array<E, 2>({K, N}, b);
  auto C = device_array<E, 2>({M, N});
  const double ms = time_ms([&] { launch(A, B, C); });
  // bf16 output: about 2^-9 relative rounding per element (fp16: 2^-12).
  const double err = gemm_error(a, b, C.to_vector(), M, N, K);
  bench_line((std::string(name) + "_" + type_name).c_str(), size, ms, 2.0 * M * N * K, "tflops", err);
  return report(name, size + " " + type_name, ms, err, 1e-2);
}

/// The examples' command line: M N K [bf16 | f16] (each size 1000 by default); runs
/// `body.template operator()<E>(M, N, K, type_name)` with E the element type, type_name
/// its name in ../shared/bench/peers.py's JSON (torch's dtype names).
template <class Body> int gemm_main(const char *name, int argc, char **argv, Body &&body) {
  const int M = size_arg(argc, argv, 1, 1000), N = size_arg(argc, argv, 2, 1000), K = size_arg(argc, argv, 3, 1000);
  const std::string type = argc > 4 ? argv[4] : "bf16";
  if (type != "bf16" && type != "f16") {
    std::fprintf(stderr, "%s: element type '%s' is not bf16 or f16\n", argv[0], type.c_str());
    return 2;
  }
  return run(name, [&] {
    return type == "bf16" ? body.template operator()<tile::bf16>(M, N, K, "bfloat16")
                          : body.template operator()<tile::f16>(M, N, K, "float16");
  });
}

} // namespace example
