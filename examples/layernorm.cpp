// Y = (X - mean) / sqrt(var + eps) * w + b over the rows of a bf16 matrix, float
// accumulation. A row of up to 8192 columns is read once and kept in registers
// (layernorm_rows); a longer one in three passes in chunks of BN columns (layernorm): the
// mean, the variance (the columns past N masked, as x - mean is not zero there), then the
// output, the sums kept per element position across the chunks and reduced once per row.
//   layernorm [M N]      (default 1003 1001: no size divides a tile)
#include "common.h"

namespace T = tile;

template <int BM = 1, int BN = 1024, int NT = 128>
[[tile::kernel]] void layernorm(T::tensor<const T::bf16, 2> X, T::tensor<const T::bf16, 1> W,
                                T::tensor<const T::bf16, 1> B, T::tensor<T::bf16, 2> Y, float eps) {
  const int M = X.size(0), N = X.size(1);
  auto [bx] = T::grid(T::ceildiv(M, BM), T::threads(NT));
  T::fragment<float, BM, BN> x, acc;
  T::fragment<float, BN> w, b;
  T::fragment<float, BM> mean, rstd;
  const int chunks = T::ceildiv(N, BN);
  T::clear(acc);
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx * BM, c * BN), x); // the zeros read past N add nothing
    for (auto [i, j] : T::parallel(BM, BN))
      acc(i, j) = acc(i, j) + x(i, j);
  }
  T::reduce_sum(acc, mean, 1);
  for (int i : T::parallel(BM))
    mean(i) = mean(i) / float(N);
  T::clear(acc);
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx * BM, c * BN), x);
    for (auto [i, j] : T::parallel(BM, BN)) {
      float d = x(i, j) - mean(i);
      acc(i, j) = c * BN + j < N ? acc(i, j) + d * d : acc(i, j);
    }
  }
  T::reduce_sum(acc, rstd, 1);
  for (int i : T::parallel(BM))
    rstd(i) = T::rsqrt(rstd(i) / float(N) + eps);
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx * BM, c * BN), x);
    T::copy(W.at(c * BN), w);
    T::copy(B.at(c * BN), b);
    for (auto [i, j] : T::parallel(BM, BN))
      x(i, j) = (x(i, j) - mean(i)) * rstd(i) * w(j) + b(j);
    T::copy(x, Y.at(bx * BM, c * BN));
  }
}

/// Rows of up to BN columns: G blocks walk the rows (block bx takes rows bx, bx + G, ...),
/// each row read once and kept in registers (zeros past N), W and B read once per block into
/// shared memory. The sum and the sum of squares in one step, their reductions sharing a
/// barrier: var = E[x^2] - mean^2, which loses digits where the mean is far larger than the
/// spread (|mean| / std past about 1000 in float). Measured on the H200 (bench/NOTES.md):
/// the variance taken after the mean (two reductions in a row) ran at 0.57x of copy
/// bandwidth, this at 0.73x.
template <int BN, int NT>
[[tile::kernel]] void layernorm_rows(T::tensor<const T::bf16, 2> X, T::tensor<const T::bf16, 1> W,
                                     T::tensor<const T::bf16, 1> B, T::tensor<T::bf16, 2> Y, float eps, int G) {
  const int M = X.size(0), N = X.size(1);
  auto [bx] = T::grid(G, T::threads(NT));
  T::shared<T::bf16, BN> ws, bs;
  T::fragment<float, 1, BN> x, sq;
  T::fragment<float, 1> mean, rstd;
  T::copy(W.at(0), ws);
  T::copy(B.at(0), bs);
  for (int r = bx; r < M; r += G) {
    T::copy(X.at(r, 0), x);
    for (auto [i, j] : T::parallel(1, BN))
      sq(i, j) = x(i, j) * x(i, j);
    T::reduce_sum(x, mean, 1);
    T::reduce_sum(sq, rstd, 1);
    for (int i : T::parallel(1)) {
      const float m = mean(i) / float(N);
      mean(i) = m;
      rstd(i) = T::rsqrt(T::max(rstd(i) / float(N) - m * m, 0.0f) + eps);
    }
    for (auto [i, j] : T::parallel(1, BN))
      x(i, j) = (x(i, j) - mean(i)) * rstd(i) * T::cast<float>(ws(j)) + T::cast<float>(bs(j));
    T::copy(x, Y.at(r, 0));
  }
}

int main(int argc, char **argv) {
  const int M = example::size_arg(argc, argv, 1, 1003), N = example::size_arg(argc, argv, 2, 1001);
  const float eps = 1e-5f;
  const std::string size = std::to_string(M) + "x" + std::to_string(N);
  return example::run("layernorm", [&] {
    // An offset mean, so that a variance taken without subtracting it is visibly wrong.
    auto x = example::random<T::bf16>(std::size_t(M) * N, 8, 1, 5);
    auto w = example::random<T::bf16>(N, 9, 0.5, 1.5), b = example::random<T::bf16>(N, 10);
    auto X = example::device_array<T::bf16, 2>({M, N}, x);
    auto W = example::device_array<T::bf16, 1>({N}, w), B = example::device_array<T::bf16, 1>({N}, b);
    auto Y = example::device_array<T::bf16, 2>({M, N});
    double ms = example::time_ms([&] {
      // Rows in registers: 8 or 32 columns a thread, about 8 blocks an SM (bench/NOTES.md).
      const int G = std::min(M, 1056);
      if (N <= 1024)
        layernorm_rows<1024, 128>(X, W, B, Y, eps, G);
      else if (N <= 8192)
        layernorm_rows<8192, 256>(X, W, B, Y, eps, G);
      else
        layernorm(X, W, B, Y, eps);
    });

    std::vector<double> ref(x.size());
    for (int i = 0; i < M; ++i) {
      const T::bf16 *row = &x[std::size_t(i) * N];
      double mean = 0, var = 0;
      for (int j = 0; j < N; ++j)
        mean += float(row[j]);
      mean /= N;
      for (int j = 0; j < N; ++j)
        var += (float(row[j]) - mean) * (float(row[j]) - mean);
      const double rstd = 1 / std::sqrt(var / N + eps);
      for (int j = 0; j < N; ++j)
        ref[std::size_t(i) * N + j] = (float(row[j]) - mean) * rstd * double(float(w[j])) + double(float(b[j]));
    }
    const double err = example::rel_error(ref, Y.to_vector());
    example::bench_line("layernorm_bf16", size, ms, 2.0 * double(M) * N * sizeof(T::bf16), "gbps", err); // read + write
    return example::report("layernorm", size, ms, err, 1e-2);
  });
}
