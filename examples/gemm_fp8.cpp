// C = scale * A B^T in 8-bit floats (f8e4m3) with float accumulation and a bf16 result, as
// inference GEMMs take FP8 weights and activations: A [M, K] and B [N, K], both K-major,
// which is how Hopper's wgmma reads 8-bit operands (K tiles of 128 bytes: 128 elements).
// Built for the CPU and sm_90a only (examples/CMakeLists.txt): sm_80 has no 8-bit tensor
// cores, and this tile's float accumulator would not fit its shared memory on FMA.
//   gemm_fp8 [M N K]      (default 1000 1000 1000: no size divides a tile)
#include "common.h"

namespace T = tile;

template <int BM = 128, int BN = 256, int BK = 128, int NT = 256, int S = 4, int PANEL = 8>
[[tile::kernel]] void matmul_fp8(T::tensor<const T::f8e4m3, 2> A, // [M, K]
                                 T::tensor<const T::f8e4m3, 2> B, // [N, K]
                                 T::tensor<T::bf16, 2> C,         // [M, N]
                                 float scale) {
  const int M = A.size(0), K = A.size(1), N = B.size(0);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM), T::threads(NT));
  T::use_swizzle(PANEL);
  T::shared<T::f8e4m3, BM, BK> As;
  T::shared<T::f8e4m3, BN, BK> Bs;
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, BK), T::stages(S))) {
    T::copy(A.at(by * BM, k * BK), As);
    T::copy(B.at(bx * BN, k * BK), Bs);
    T::gemm(As, Bs, acc, {.transpose_b = true});
  }
  for (auto [i, j] : T::parallel(BM, BN))
    acc(i, j) = acc(i, j) * scale;
  T::copy(acc, C.at(by * BM, bx * BN));
}

int main(int argc, char **argv) {
  const int M = example::size_arg(argc, argv, 1, 1000), N = example::size_arg(argc, argv, 2, 1000),
            K = example::size_arg(argc, argv, 3, 1000);
  return example::run("gemm_fp8", [&] {
    const std::string size = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
    auto a = example::random<T::f8e4m3>(std::size_t(M) * K, 1, -2, 2);
    auto b = example::random<T::f8e4m3>(std::size_t(N) * K, 2, -2, 2);
    auto A = example::device_array<T::f8e4m3, 2>({M, K}, a), B = example::device_array<T::f8e4m3, 2>({N, K}, b);
    auto C = example::device_array<T::bf16, 2>({M, N});
    const float scale = 0.25f;
    double ms = example::time_ms([&] { matmul_fp8(A, B, C, scale); });

    // The float64 reference on every row, or 97 rows spread over C at large sizes.
    const int step = double(M) * N * K > 4e10 ? std::max(1, M / 97) : 1;
    std::vector<double> ref, got;
    std::vector<T::bf16> c_all = C.to_vector();
    std::vector<double> bd(b.size());
    for (std::size_t i = 0; i < b.size(); ++i)
      bd[i] = float(b[i]);
    for (int i = 0; i < M; i += step)
      for (int j = 0; j < N; ++j) {
        double s = 0;
        const double *bj = &bd[std::size_t(j) * K];
        for (int k = 0; k < K; ++k)
          s += double(float(a[std::size_t(i) * K + k])) * bj[k];
        ref.push_back(s * scale);
        got.push_back(double(float(c_all[std::size_t(i) * N + j])));
      }
    const double err = example::rel_error(ref, got);
    // The JSON name of ../shared/bench/peers.py's torch._scaled_mm (cuBLASLt).
    example::bench_line("gemm_fp8_e4m3", size, ms, 2.0 * M * N * K, "tflops", err);
    return example::report("gemm_fp8", size, ms, err, 1e-2);
  });
}
