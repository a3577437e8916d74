// y = silu(a) * b = a * sigmoid(a) * b, element-wise in bf16 (the gate of a SwiGLU MLP),
// computed in float and fused into one pass over memory.
//   elementwise [M N]      (default 1003 1001: no size divides a tile)
#include "common.h"

namespace T = tile;

template <int BM = 8, int BN = 128>
[[tile::kernel]] void silu_mul(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<T::bf16, 2> Y) {
  auto [bx, by] = T::grid(T::ceildiv(A.size(1), BN), T::ceildiv(A.size(0), BM));
  T::fragment<float, BM, BN> a, b;
  T::copy(A.at(by * BM, bx * BN), a);
  T::copy(B.at(by * BM, bx * BN), b);
  for (auto [i, j] : T::parallel(BM, BN))
    a(i, j) = a(i, j) * T::sigmoid(a(i, j)) * b(i, j);
  T::copy(a, Y.at(by * BM, bx * BN));
}

int main(int argc, char **argv) {
  const int M = example::size_arg(argc, argv, 1, 1003), N = example::size_arg(argc, argv, 2, 1001);
  const std::string size = std::to_string(M) + "x" + std::to_string(N);
  return example::run("elementwise", [&] {
    auto a = example::random<T::bf16>(std::size_t(M) * N, 4, -6, 6), b = example::random<T::bf16>(std::size_t(M) * N, 5);
    auto A = example::device_array<T::bf16, 2>({M, N}, a), B = example::device_array<T::bf16, 2>({M, N}, b);
    auto Y = example::device_array<T::bf16, 2>({M, N});
    double ms = example::time_ms([&] { silu_mul(A, B, Y); });

    std::vector<double> ref(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      double x = float(a[i]);
      ref[i] = x / (1 + std::exp(-x)) * double(float(b[i]));
    }
    const double err = example::rel_error(ref, Y.to_vector());
    example::bench_line("silu_mul_bf16", size, ms, 3.0 * double(M) * N * sizeof(T::bf16), "gbps", err); // read + write
    return example::report("elementwise", size, ms, err, 1e-2);
  });
}
