// Y = softmax(X) over the rows of a bf16 matrix, float accumulation. A row of up to 8192
// columns is read once and kept in registers (softmax_row); a longer one is read twice, in
// chunks of BN columns (softmax). The first keeps an online softmax per element position:
// each thread carries, for the columns it holds, the running maximum m and the running sum
// s of exp(x - m) over the chunks (one exp per element, no reduction per chunk); the row's
// maximum and sum are combined from them once. The second writes exp(x - max) / sum. The
// columns past N are skipped in the first pass and dropped by the copy in the second.
//   softmax [M N]      (default 1003 1001: no size divides a tile)
#include "common.h"

namespace T = tile;

template <int BM = 1, int BN = 1024, int NT = 128>
[[tile::kernel]] void softmax(T::tensor<const T::bf16, 2> X, T::tensor<T::bf16, 2> Y) {
  const int M = X.size(0), N = X.size(1);
  auto [bx] = T::grid(T::ceildiv(M, BM), T::threads(NT));
  T::fragment<float, BM, BN> x, m, s;
  T::fragment<float, BM> row_max, row_sum;
  T::fill(m, -T::infinity<float>());
  T::clear(s);
  const int chunks = T::ceildiv(N, BN);
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx * BM, c * BN), x);
    for (auto [i, j] : T::parallel(BM, BN)) {
      if (c * BN + j < N) {
        // With e = exp(-|x - m|): a new maximum rescales the sum so far, else x adds e.
        float e = T::exp(-T::abs(x(i, j) - m(i, j)));
        s(i, j) = x(i, j) > m(i, j) ? s(i, j) * e + 1.0f : s(i, j) + e;
        m(i, j) = T::max(m(i, j), x(i, j));
      }
    }
  }
  T::reduce_max(m, row_max, 1);
  for (auto [i, j] : T::parallel(BM, BN)) // positions that saw no column hold s = 0
    s(i, j) = s(i, j) * T::exp(m(i, j) - row_max(i));
  T::reduce_sum(s, row_sum, 1);
  for (int i : T::parallel(BM))
    row_sum(i) = 1.0f / row_sum(i);
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx * BM, c * BN), x);
    for (auto [i, j] : T::parallel(BM, BN))
      x(i, j) = T::exp(x(i, j) - row_max(i)) * row_sum(i);
    T::copy(x, Y.at(bx * BM, c * BN));
  }
}

/// One block per row, the whole row in registers: X read once. Columns past N are -inf.
template <int BN, int NT>
[[tile::kernel]] void softmax_row(T::tensor<const T::bf16, 2> X, T::tensor<T::bf16, 2> Y) {
  const int M = X.size(0), N = X.size(1);
  auto [bx] = T::grid(M, T::threads(NT));
  T::fragment<float, 1, BN> x;
  T::fragment<float, 1> row_max, row_sum;
  T::copy(X.at(bx, 0), x);
  for (auto [i, j] : T::parallel(1, BN))
    x(i, j) = j < N ? x(i, j) : -T::infinity<float>();
  T::reduce_max(x, row_max, 1);
  for (auto [i, j] : T::parallel(1, BN))
    x(i, j) = T::exp(x(i, j) - row_max(i));
  T::reduce_sum(x, row_sum, 1);
  for (int i : T::parallel(1))
    row_sum(i) = 1.0f / row_sum(i);
  for (auto [i, j] : T::parallel(1, BN))
    x(i, j) = x(i, j) * row_sum(i);
  T::copy(x, Y.at(bx, 0));
}

int main(int argc, char **argv) {
  const int M = example::size_arg(argc, argv, 1, 1003), N = example::size_arg(argc, argv, 2, 1001);
  const std::string size = std::to_string(M) + "x" + std::to_string(N);
  return example::run("softmax", [&] {
    auto x = example::random<T::bf16>(std::size_t(M) * N, 3, -8, 8);
    auto X = example::device_array<T::bf16, 2>({M, N}, x), Y = example::device_array<T::bf16, 2>({M, N});
    double ms = example::time_ms([&] {
      if (N <= 1024)
        softmax_row<1024, 128>(X, Y);
      else if (N <= 8192)
        softmax_row<8192, 256>(X, Y); // 32 columns a thread (bench/NOTES.md)
      else
        softmax(X, Y);
    });

    std::vector<double> ref(x.size());
    for (int i = 0; i < M; ++i) {
      const T::bf16 *row = &x[std::size_t(i) * N];
      double m = -INFINITY, sum = 0;
      for (int j = 0; j < N; ++j)
        m = std::max(m, double(float(row[j])));
      for (int j = 0; j < N; ++j)
        sum += std::exp(double(float(row[j])) - m);
      for (int j = 0; j < N; ++j)
        ref[std::size_t(i) * N + j] = std::exp(double(float(row[j])) - m) / sum;
    }
    const double err = example::rel_error(ref, Y.to_vector());
    example::bench_line("softmax_bf16", size, ms, 2.0 * double(M) * N * sizeof(T::bf16), "gbps", err); // read + write
    return example::report("softmax", size, ms, err, 1e-2);
  });
}
