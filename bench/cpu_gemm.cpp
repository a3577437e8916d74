// CPU fp32 GEMM written in the kernel language, timed side by side with OpenBLAS's sgemm
// (Debian's libopenblas) on the same inputs and the same cores.
//   cpu_gemm [N]      (default 1024)
// Prints one JSON line per measurement, as ../shared/bench/peers.py does, then the ratio.
#include <tile/tile.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include <cblas.h>

namespace T = tile;

template <int BM = 128, int BN = 128, int BK = 32>
[[tile::kernel]] void sgemm(T::tensor<const float, 2> A, T::tensor<const float, 2> B, T::tensor<float, 2> C) {
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM));
  T::shared<float, BM, BK> As;
  T::shared<float, BK, BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, BK), T::stages(2))) {
    T::copy(A.at(by * BM, k * BK), As);
    T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * BM, bx * BN));
}

static double median_ms(const std::function<void()> &f, int reps) {
  f(); // warm-up
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char **argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1024;
  const double flops = 2.0 * n * n * n;
  std::vector<float> a(std::size_t(n) * n), b(a.size());
  unsigned s = 12345;
  for (auto *v : {&a, &b})
    for (auto &x : *v)
      x = float((s = s * 1664525u + 1013904223u) >> 8) * 0x1p-24f * 2 - 1;
  T::array<float, 2> A({n, n}), B({n, n}), C({n, n});
  A.copy_from(a);
  B.copy_from(b);
  C.copy_from(std::vector<float>(a.size(), NAN));
  std::vector<float> ref(a.size());

  double t_tile = median_ms([&] { sgemm(A, B, C); T::synchronize(); }, 9);
  double t_blas = median_ms([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, ref.data(), n);
  }, 9);
  auto c = C.to_vector();
  double num = 0, den = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    num += (double(c[i]) - ref[i]) * (double(c[i]) - ref[i]);
    den += double(ref[i]) * ref[i];
  }
  double err = std::sqrt(num / den);
  std::printf("{\"kernel\": \"gemm_f32\", \"shape\": \"%dx%dx%d\", \"impl\": \"tile-cpu\", \"ms\": %.3f, \"gflops\": %.1f, "
              "\"rel_err\": %.2g}\n", n, n, n, t_tile, flops / t_tile * 1e-6, err);
  std::printf("{\"kernel\": \"gemm_f32\", \"shape\": \"%dx%dx%d\", \"peer\": \"openblas\", \"ms\": %.3f, \"gflops\": %.1f}\n",
              n, n, n, t_blas, flops / t_blas * 1e-6);
  std::printf("ratio tile / openblas: %.2f\n", t_blas / t_tile);
  return err < 1e-4 ? 0 : 1;
}
