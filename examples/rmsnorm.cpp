// Y = X / sqrt(mean(X^2) + eps) * w over the rows of a bf16 matrix, float accumulation. A
// row of up to 8192 columns is read once and kept in registers (rmsnorm_rows); a longer one
// in two passes in chunks of BN (rmsnorm), the sum of squares kept per element position
// across the chunks and reduced once per row.
//   rmsnorm [M N]      (default 1003 1001: no size divides a tile)
#include "common.h"

namespace T = tile;

template <int BM = 1, int BN = 1024, int NT = 128>
[[tile::kernel]] void rmsnorm(T::tensor<const T::bf16, 2> X, T::tensor<const T::bf16, 1> W, T::tensor<T::bf16, 2> Y,
                              float eps) {
  const int M = X.size(0), N = X.size(1);
  auto [bx] = T::grid(T::ceildiv(M, BM), T::threads(NT));
  T::fragment<float, BM, BN> x, acc;
  T::fragment<float, BN> w;
  T::fragment<float, BM> scale;
  T::clear(acc);
  const int chunks = T::ceildiv(N, BN);
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx * BM, c * BN), x); // the zeros read past N add nothing
    for (auto [i, j] : T::parallel(BM, BN))
      acc(i, j) = acc(i, j) + x(i, j) * x(i, j);
  }
  T::reduce_sum(acc, scale, 1);
  for (int i : T::parallel(BM))
    scale(i) = T::rsqrt(scale(i) / float(N) + eps);
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx * BM, c * BN), x);
    T::copy(W.at(c * BN), w);
    for (auto [i, j] : T::parallel(BM, BN))
      x(i, j) = x(i, j) * scale(i) * w(j);
    T::copy(x, Y.at(bx * BM, c * BN));
  }
}

/// Rows of up to BN columns: G blocks walk the rows (block bx takes rows bx, bx + G, ...),
/// each row read once and kept in registers (zeros past N), W read once per block into
/// shared memory.
template <int BN, int NT>
[[tile::kernel]] void rmsnorm_rows(T::tensor<const T::bf16, 2> X, T::tensor<const T::bf16, 1> W,
                                   T::tensor<T::bf16, 2> Y, float eps, int G) {
  const int M = X.size(0), N = X.size(1);
  auto [bx] = T::grid(G, T::threads(NT));
  T::shared<T::bf16, BN> ws;
  T::fragment<float, 1, BN> x, sq;
  T::fragment<float, 1> scale;
  T::copy(W.at(0), ws);
  for (int r = bx; r < M; r += G) {
    T::copy(X.at(r, 0), x);
    for (auto [i, j] : T::parallel(1, BN))
      sq(i, j) = x(i, j) * x(i, j);
    T::reduce_sum(sq, scale, 1);
    for (int i : T::parallel(1))
      scale(i) = T::rsqrt(scale(i) / float(N) + eps);
    for (auto [i, j] : T::parallel(1, BN))
      x(i, j) = x(i, j) * scale(i) * T::cast<float>(ws(j));
    T::copy(x, Y.at(r, 0));
  }
}

int main(int argc, char **argv) {
  const int M = example::size_arg(argc, argv, 1, 1003), N = example::size_arg(argc, argv, 2, 1001);
  const float eps = 1e-6f;
  const std::string size = std::to_string(M) + "x" + std::to_string(N);
  return example::run("rmsnorm", [&] {
    auto x = example::random<T::bf16>(std::size_t(M) * N, 6, -2, 2), w = example::random<T::bf16>(N, 7, 0.5, 1.5);
    auto X = example::device_array<T::bf16, 2>({M, N}, x);
    auto W = example::device_array<T::bf16, 1>({N}, w);
    auto Y = example::device_array<T::bf16, 2>({M, N});
    double ms = example::time_ms([&] {
      // Rows in registers: 8 or 32 columns a thread, about 8 blocks an SM (bench/NOTES.md).
      const int G = std::min(M, 1056);
      if (N <= 1024)
        rmsnorm_rows<1024, 128>(X, W, Y, eps, G);
      else if (N <= 8192)
        rmsnorm_rows<8192, 256>(X, W, Y, eps, G);
      else
        rmsnorm(X, W, Y, eps);
    });

    std::vector<double> ref(x.size());
    for (int i = 0; i < M; ++i) {
      const T::bf16 *row = &x[std::size_t(i) * N];
      double sumsq = 0;
      for (int j = 0; j < N; ++j)
        sumsq += double(float(row[j])) * double(float(row[j]));
      const double scale = 1 / std::sqrt(sumsq / N + eps);
      for (int j = 0; j < N; ++j)
        ref[std::size_t(i) * N + j] = double(float(row[j])) * scale * double(float(w[j]));
    }
    const double err = example::rel_error(ref, Y.to_vector());
    example::bench_line("rmsnorm_bf16", size, ms, 2.0 * double(M) * N * sizeof(T::bf16), "gbps", err); // read + write
    return example::report("rmsnorm", size, ms, err, 1e-2);
  });
}
