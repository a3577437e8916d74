// Tile-shape exploration on the GPU: the examples' kernels with their tile sizes, thread
// counts and stages as template parameters, each variant checked against a float64
// reference on sampled rows and timed as the examples are (example::time_ms).
// Prints one line per variant; used to choose the examples' defaults (bench/NOTES.md).
//   tune_gpu [gemm|norm|all] [sizes: N for gemm, M N for norm]
#include "../examples/common.h"

#include <functional>

namespace T = tile;

template <int BM, int BN, int BK, int NT, int S>
[[tile::kernel]] void gemm_v(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<T::bf16, 2> C) {
  const int K = A.size(1), N = B.size(1), M = A.size(0);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM), T::threads(NT));
  T::shared<T::bf16, BM, BK> As;
  T::shared<T::bf16, BK, BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, BK), T::stages(S))) {
    T::copy(A.at(by * BM, k * BK), As);
    T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * BM, bx * BN));
}

// Online softmax over chunks of BN columns (the example's kernel with a thread count).
template <int BM, int BN, int NT>
[[tile::kernel]] void softmax_v(T::tensor<const T::bf16, 2> X, T::tensor<T::bf16, 2> Y) {
  const int M = X.size(0), N = X.size(1);
  auto [bx] = T::grid(T::ceildiv(M, BM), T::threads(NT));
  T::fragment<float, BM, BN> x;
  T::fragment<float, BM> row_max, row_sum, part;
  T::fill(row_max, -T::infinity<float>());
  T::clear(row_sum);
  const int chunks = T::ceildiv(N, BN);
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx * BM, c * BN), x);
    for (auto [i, j] : T::parallel(BM, BN))
      x(i, j) = c * BN + j < N ? x(i, j) : -T::infinity<float>();
    T::reduce_max(x, part, 1);
    for (int i : T::parallel(BM)) {
      float m = T::max(row_max(i), part(i));
      row_sum(i) = row_sum(i) * T::exp(row_max(i) - m);
      row_max(i) = m;
    }
    for (auto [i, j] : T::parallel(BM, BN))
      x(i, j) = T::exp(x(i, j) - row_max(i));
    T::reduce_sum(x, part, 1);
    for (int i : T::parallel(BM))
      row_sum(i) = row_sum(i) + part(i);
  }
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx * BM, c * BN), x);
    for (auto [i, j] : T::parallel(BM, BN))
      x(i, j) = T::exp(x(i, j) - row_max(i)) / row_sum(i);
    T::copy(x, Y.at(bx * BM, c * BN));
  }
}

template <int BM, int BN, int NT>
[[tile::kernel]] void layernorm_v(T::tensor<const T::bf16, 2> X, T::tensor<const T::bf16, 1> W,
                                  T::tensor<const T::bf16, 1> B, T::tensor<T::bf16, 2> Y, float eps) {
  const int M = X.size(0), N = X.size(1);
  auto [bx] = T::grid(T::ceildiv(M, BM), T::threads(NT));
  T::fragment<float, BM, BN> x;
  T::fragment<float, BN> w, b;
  T::fragment<float, BM> mean, rstd, part;
  T::clear(mean);
  T::clear(rstd);
  const int chunks = T::ceildiv(N, BN);
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx * BM, c * BN), x);
    T::reduce_sum(x, part, 1);
    for (int i : T::parallel(BM))
      mean(i) = mean(i) + part(i);
  }
  for (int i : T::parallel(BM))
    mean(i) = mean(i) / float(N);
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx * BM, c * BN), x);
    for (auto [i, j] : T::parallel(BM, BN)) {
      float d = x(i, j) - mean(i);
      x(i, j) = c * BN + j < N ? d * d : 0.0f;
    }
    T::reduce_sum(x, part, 1);
    for (int i : T::parallel(BM))
      rstd(i) = rstd(i) + part(i);
  }
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

// The same online softmax with the row chunks staged through shared memory by a pipelined
// loop (asynchronous copies S - 1 chunks ahead).
template <int BM, int BN, int NT, int S>
[[tile::kernel]] void softmax_p(T::tensor<const T::bf16, 2> X, T::tensor<T::bf16, 2> Y) {
  const int M = X.size(0), N = X.size(1);
  auto [bx] = T::grid(T::ceildiv(M, BM), T::threads(NT));
  T::shared<T::bf16, BM, BN> xs;
  T::shared<T::bf16, BM, BN> ys;
  T::fragment<float, BM, BN> x;
  T::fragment<float, BM> row_max, row_sum, part;
  T::fill(row_max, -T::infinity<float>());
  T::clear(row_sum);
  const int chunks = T::ceildiv(N, BN);
  for (int c : T::pipelined(chunks, T::stages(S))) {
    T::copy(X.at(bx * BM, c * BN), xs);
    T::copy(xs, x);
    for (auto [i, j] : T::parallel(BM, BN))
      x(i, j) = c * BN + j < N ? x(i, j) : -T::infinity<float>();
    T::reduce_max(x, part, 1);
    for (int i : T::parallel(BM)) {
      float m = T::max(row_max(i), part(i));
      row_sum(i) = row_sum(i) * T::exp(row_max(i) - m);
      row_max(i) = m;
    }
    for (auto [i, j] : T::parallel(BM, BN))
      x(i, j) = T::exp(x(i, j) - row_max(i));
    T::reduce_sum(x, part, 1);
    for (int i : T::parallel(BM))
      row_sum(i) = row_sum(i) + part(i);
  }
  for (int c : T::pipelined(chunks, T::stages(S))) {
    T::copy(X.at(bx * BM, c * BN), ys);
    T::copy(ys, x);
    for (auto [i, j] : T::parallel(BM, BN))
      x(i, j) = T::exp(x(i, j) - row_max(i)) / row_sum(i);
    T::copy(x, Y.at(bx * BM, c * BN));
  }
}

template <int BM, int BN, int NT, int S>
[[tile::kernel]] void layernorm_p(T::tensor<const T::bf16, 2> X, T::tensor<const T::bf16, 1> W,
                                  T::tensor<const T::bf16, 1> B, T::tensor<T::bf16, 2> Y, float eps) {
  const int M = X.size(0), N = X.size(1);
  auto [bx] = T::grid(T::ceildiv(M, BM), T::threads(NT));
  T::shared<T::bf16, BM, BN> xs1;
  T::shared<T::bf16, BM, BN> xs2;
  T::shared<T::bf16, BM, BN> xs3;
  T::fragment<float, BM, BN> x;
  T::fragment<float, BN> w, b;
  T::fragment<float, BM> mean, rstd, part;
  T::clear(mean);
  T::clear(rstd);
  const int chunks = T::ceildiv(N, BN);
  for (int c : T::pipelined(chunks, T::stages(S))) {
    T::copy(X.at(bx * BM, c * BN), xs1);
    T::copy(xs1, x);
    T::reduce_sum(x, part, 1);
    for (int i : T::parallel(BM))
      mean(i) = mean(i) + part(i);
  }
  for (int i : T::parallel(BM))
    mean(i) = mean(i) / float(N);
  for (int c : T::pipelined(chunks, T::stages(S))) {
    T::copy(X.at(bx * BM, c * BN), xs2);
    T::copy(xs2, x);
    for (auto [i, j] : T::parallel(BM, BN)) {
      float d = x(i, j) - mean(i);
      x(i, j) = c * BN + j < N ? d * d : 0.0f;
    }
    T::reduce_sum(x, part, 1);
    for (int i : T::parallel(BM))
      rstd(i) = rstd(i) + part(i);
  }
  for (int i : T::parallel(BM))
    rstd(i) = T::rsqrt(rstd(i) / float(N) + eps);
  for (int c : T::pipelined(chunks, T::stages(S))) {
    T::copy(X.at(bx * BM, c * BN), xs3);
    T::copy(xs3, x);
    T::copy(W.at(c * BN), w);
    T::copy(B.at(c * BN), b);
    for (auto [i, j] : T::parallel(BM, BN))
      x(i, j) = (x(i, j) - mean(i)) * rstd(i) * w(j) + b(j);
    T::copy(x, Y.at(bx * BM, c * BN));
  }
}

// Online softmax kept per element position: each thread carries the running maximum and
// sum of the columns it holds across the chunks (one exp per element, no reduction per
// chunk), and the row's are combined once at the end.
template <int BM, int BN, int NT>
[[tile::kernel]] void softmax_t(T::tensor<const T::bf16, 2> X, T::tensor<T::bf16, 2> Y) {
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
        float e = T::exp(-T::abs(x(i, j) - m(i, j)));
        s(i, j) = x(i, j) > m(i, j) ? s(i, j) * e + 1.0f : s(i, j) + e;
        m(i, j) = T::max(m(i, j), x(i, j));
      }
    }
  }
  T::reduce_max(m, row_max, 1);
  for (auto [i, j] : T::parallel(BM, BN))
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

// Layernorm with per-element partial sums: one reduction per statistic, not per chunk.
template <int BM, int BN, int NT>
[[tile::kernel]] void layernorm_t(T::tensor<const T::bf16, 2> X, T::tensor<const T::bf16, 1> W,
                                  T::tensor<const T::bf16, 1> B, T::tensor<T::bf16, 2> Y, float eps) {
  const int M = X.size(0), N = X.size(1);
  auto [bx] = T::grid(T::ceildiv(M, BM), T::threads(NT));
  T::fragment<float, BM, BN> x, acc;
  T::fragment<float, BN> w, b;
  T::fragment<float, BM> mean, rstd;
  const int chunks = T::ceildiv(N, BN);
  T::clear(acc);
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx * BM, c * BN), x); // zeros past N
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

// Plain copy: the bandwidth the memory-bound kernels are measured against.
template <int BM, int BN, int NT>
[[tile::kernel]] void copy_v(T::tensor<const T::bf16, 2> X, T::tensor<T::bf16, 2> Y) {
  const int M = X.size(0), N = X.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM), T::threads(NT));
  T::fragment<T::bf16, BM, BN> x;
  T::copy(X.at(by * BM, bx * BN), x);
  T::copy(x, Y.at(by * BM, bx * BN));
}

namespace {

double median_ms(const std::function<void()> &launch) { return example::time_ms(launch); }

void line(const std::string &name, double ms, double rate, const char *unit, double err) {
  std::printf("%-36s %9.4f ms %9.1f %s  err %.2g%s\n", name.c_str(), ms, rate, unit, err, err < 1e-2 ? "" : "  WRONG");
  std::fflush(stdout);
}

void tune_gemm(int n) {
  const int M = n, N = n, K = n;
  auto a = example::random<T::bf16>(std::size_t(M) * K, 1), b = example::random<T::bf16>(std::size_t(K) * N, 2);
  auto A = example::device_array<T::bf16, 2>({M, K}, a), B = example::device_array<T::bf16, 2>({K, N}, b);
  std::vector<double> bd(b.begin(), b.end());
  std::vector<int> rows;
  for (int i = 0; i < M; i += std::max(1, M / 13))
    rows.push_back(i);
  std::vector<double> ref;
  for (int i : rows) {
    std::vector<double> c(N);
    for (int k = 0; k < K; ++k) {
      const double aik = float(a[std::size_t(i) * K + k]), *bk = &bd[std::size_t(k) * N];
      for (int j = 0; j < N; ++j)
        c[j] += aik * bk[j];
    }
    ref.insert(ref.end(), c.begin(), c.end());
  }
  auto run = [&](const char *name, auto kernel) {
    auto C = example::device_array<T::bf16, 2>({M, N});
    double ms = median_ms([&] { kernel(A, B, C); });
    std::vector<T::bf16> all = C.to_vector(), got;
    for (int i : rows)
      got.insert(got.end(), all.begin() + std::size_t(i) * N, all.begin() + std::size_t(i + 1) * N);
    line(std::string("gemm ") + std::to_string(n) + " " + name, ms, 2.0 * M * N * K / ms / 1e9, "TFLOP/s",
         example::rel_error(ref, got));
  };
  run("128x256x64 t256 s3", [](auto &&...x) { gemm_v<128, 256, 64, 256, 3>(x...); });
  run("128x256x64 t256 s4", [](auto &&...x) { gemm_v<128, 256, 64, 256, 4>(x...); });
  run("256x128x64 t256 s3", [](auto &&...x) { gemm_v<256, 128, 64, 256, 3>(x...); });
  run("128x128x64 t128 s3", [](auto &&...x) { gemm_v<128, 128, 64, 128, 3>(x...); });
  run("128x128x32 t128 s4", [](auto &&...x) { gemm_v<128, 128, 32, 128, 4>(x...); });
}

void tune_norm(int M, int N) {
  auto x = example::random<T::bf16>(std::size_t(M) * N, 8, 1, 5);
  auto w = example::random<T::bf16>(N, 9, 0.5, 1.5), bb = example::random<T::bf16>(N, 10);
  auto X = example::device_array<T::bf16, 2>({M, N}, x);
  auto W = example::device_array<T::bf16, 1>({N}, w), Bv = example::device_array<T::bf16, 1>({N}, bb);
  const double bytes = 2.0 * double(M) * N * sizeof(T::bf16);
  std::vector<int> rows;
  for (int i = 0; i < M; i += std::max(1, M / 17))
    rows.push_back(i);
  std::vector<double> sm_ref, ln_ref;
  for (int i : rows) {
    const T::bf16 *r = &x[std::size_t(i) * N];
    double m = -INFINITY, s = 0, mean = 0, var = 0;
    for (int j = 0; j < N; ++j)
      m = std::max(m, double(float(r[j]))), mean += float(r[j]);
    mean /= N;
    for (int j = 0; j < N; ++j)
      s += std::exp(double(float(r[j])) - m), var += (float(r[j]) - mean) * (float(r[j]) - mean);
    const double rstd = 1 / std::sqrt(var / N + 1e-5);
    for (int j = 0; j < N; ++j) {
      sm_ref.push_back(std::exp(double(float(r[j])) - m) / s);
      ln_ref.push_back((float(r[j]) - mean) * rstd * double(float(w[j])) + double(float(bb[j])));
    }
  }
  auto sampled = [&](const std::vector<T::bf16> &all) {
    std::vector<T::bf16> got;
    for (int i : rows)
      got.insert(got.end(), all.begin() + std::size_t(i) * N, all.begin() + std::size_t(i + 1) * N);
    return got;
  };
  auto copy = [&](const char *name, auto kernel) {
    auto Y = example::device_array<T::bf16, 2>({M, N});
    double ms = median_ms([&] { kernel(X, Y); });
    std::vector<T::bf16> all = Y.to_vector();
    double err = 0;
    for (std::size_t i = 0; i < all.size(); i += 4099)
      err = std::max(err, std::abs(double(float(all[i])) - double(float(x[i]))));
    line(std::string("copy ") + name, ms, bytes / ms / 1e6, "GB/s", err);
  };
  auto softmax = [&](const char *name, auto kernel) {
    auto Y = example::device_array<T::bf16, 2>({M, N});
    double ms = median_ms([&] { kernel(X, Y); });
    line(std::string("softmax ") + name, ms, bytes / ms / 1e6, "GB/s", example::rel_error(sm_ref, sampled(Y.to_vector())));
  };
  auto layernorm = [&](const char *name, auto kernel) {
    auto Y = example::device_array<T::bf16, 2>({M, N});
    double ms = median_ms([&] { kernel(X, W, Bv, Y, 1e-5f); });
    line(std::string("layernorm ") + name, ms, bytes / ms / 1e6, "GB/s", example::rel_error(ln_ref, sampled(Y.to_vector())));
  };
  copy("8x256 t128", [](auto &&...a) { copy_v<8, 256, 128>(a...); });
  copy("16x512 t256", [](auto &&...a) { copy_v<16, 512, 256>(a...); });
  softmax("1x1024 t128", [](auto &&...a) { softmax_v<1, 1024, 128>(a...); });
  softmax("thread-online 1x1024 t128", [](auto &&...a) { softmax_t<1, 1024, 128>(a...); });
  softmax("thread-online 1x2048 t128", [](auto &&...a) { softmax_t<1, 2048, 128>(a...); });
  softmax("thread-online 1x2048 t256", [](auto &&...a) { softmax_t<1, 2048, 256>(a...); });
  softmax("thread-online 1x512 t64", [](auto &&...a) { softmax_t<1, 512, 64>(a...); });
  softmax("thread-online 2x1024 t128", [](auto &&...a) { softmax_t<2, 1024, 128>(a...); });
  softmax("thread-online 4x256 t128", [](auto &&...a) { softmax_t<4, 256, 128>(a...); });
  layernorm("1x1024 t128", [](auto &&...a) { layernorm_v<1, 1024, 128>(a...); });
  layernorm("partials 1x1024 t128", [](auto &&...a) { layernorm_t<1, 1024, 128>(a...); });
  layernorm("partials 1x2048 t128", [](auto &&...a) { layernorm_t<1, 2048, 128>(a...); });
  layernorm("partials 1x2048 t256", [](auto &&...a) { layernorm_t<1, 2048, 256>(a...); });
  layernorm("partials 1x512 t64", [](auto &&...a) { layernorm_t<1, 512, 64>(a...); });
  layernorm("partials 4x256 t128", [](auto &&...a) { layernorm_t<4, 256, 128>(a...); });
}

} // namespace

int main(int argc, char **argv) {
  const std::string what = argc > 1 ? argv[1] : "all";
  return example::run("tune_gpu", [&] {
    std::printf("device: %s\n", T::current_device().name().c_str());
    if (what == "gemm" || what == "all")
      tune_gemm(example::size_arg(argc, argv, 2, 4096));
    if (what == "norm" || what == "all")
      tune_norm(example::size_arg(argc, argv, 2, 32768), example::size_arg(argc, argv, 3, 8192));
    return 0;
  });
}
