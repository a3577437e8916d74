// tile_cpu_bench: a tile GEMM kernel on the CPU target against OpenBLAS's sgemm.
//
// The kernel is the one of API.md with 128 x 128 x 32 tiles: per block, copy tiles of A and
// B from global memory, gemm into a fragment, copy the fragment back. It is built as IR,
// compiled through lower-tile-ops, the codegen and clang++, and its blocks are spread over
// the machine's cores as the runtime's thread pool does.
//
//   tile_cpu_bench [N] [threads]    (default 1024, all cores)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "CpuTestSupport.h"
#include "tile/types.h"

#ifdef TILE_HAVE_CBLAS
#include <cblas.h>
#endif

using namespace cputest;
using namespace tile::ir;

namespace {

Kernel tile_gemm(ScalarType in, int BM, int BN, int BK) {
  KernelBuilder kb(std::string("gemm_") + name(in));
  Buffer a = kb.tensor("A", in, 2, true), b = kb.tensor("B", in, 2, true);
  Buffer c = kb.tensor("C", ScalarType::F32, 2);
  kb.grid(2);
  Buffer as = kb.buffer("As", Scope::Shared, in, {BM, BK});
  Buffer bs = kb.buffer("Bs", Scope::Shared, in, {BK, BN});
  Buffer acc = kb.buffer("acc", Scope::Fragment, ScalarType::F32, {BM, BN});
  kb.add(fill(full_region(acc), float_imm(0)));
  Var k = make_var("k", ScalarType::I32);
  Expr K = cast(ScalarType::I32, a->shape[1]);
  Expr tiles = div(sub(add(K, int_imm(BK)), int_imm(1)), int_imm(BK));
  Stmt body = seq({copy(region(a, {mul(kb.by(), int_imm(BM)), mul(k, int_imm(BK))}, {BM, BK}), full_region(as)),
                   copy(region(b, {mul(k, int_imm(BK)), mul(kb.bx(), int_imm(BN))}, {BK, BN}), full_region(bs)),
                   std::make_shared<GemmNode>(full_region(as), full_region(bs), full_region(acc), false, false, false,
                                              WarpPolicy::Square)});
  kb.add(for_loop(k, int_imm(0), tiles, ForKind::Pipelined, body, nullptr, 3));
  kb.add(copy(full_region(acc), region(c, {mul(kb.by(), int_imm(BM)), mul(kb.bx(), int_imm(BN))}, {BM, BN})));
  return kb.finish();
}

double seconds_of(const std::function<void()> &f, int reps) {
  f(); // warm-up
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1024;
  const int threads = argc > 2 ? std::atoi(argv[2]) : int(std::thread::hardware_concurrency());
  const int BM = 128, BN = 128, BK = 32;
  const double flops = 2.0 * n * n * n;

  Kernel kf = tile_gemm(ScalarType::F32, BM, BN, BK), kb16 = tile_gemm(ScalarType::BF16, BM, BN, BK);
  auto image = Image::build({kf, kb16});
  if (!image) {
    std::fprintf(stderr, "build failed\n");
    return 1;
  }
  auto a = random_floats(std::size_t(n) * n, 1), b = random_floats(std::size_t(n) * n, 2);
  std::vector<tile::bf16> a16(a.begin(), a.end()), b16(b.begin(), b.end());
  std::vector<float> c(std::size_t(n) * n, std::nanf("")), ref(std::size_t(n) * n);
  const std::int64_t gx = (n + BN - 1) / BN, gy = (n + BM - 1) / BM;
  std::vector<kernel_arg> args = {tensor_arg(a.data(), ScalarType::F32, {n, n}),
                                  tensor_arg(b.data(), ScalarType::F32, {n, n}),
                                  tensor_arg(c.data(), ScalarType::F32, {n, n})};
  std::vector<kernel_arg> args16 = {tensor_arg(a16.data(), ScalarType::BF16, {n, n}),
                                    tensor_arg(b16.data(), ScalarType::BF16, {n, n}),
                                    tensor_arg(c.data(), ScalarType::F32, {n, n})};
  Entry ef = image->entry(kf), e16 = image->entry(kb16);
  double tf = seconds_of([&] { launch(ef, args, gx, gy, 1, threads); }, 7);

  // Check against a double reference on a sample of rows.
  double err = 0, den = 0;
  for (int i = 0; i < n; i += 61)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k < n; ++k)
        s += double(a[std::size_t(i) * n + k]) * b[std::size_t(k) * n + j];
      err += (c[std::size_t(i) * n + j] - s) * (c[std::size_t(i) * n + j] - s);
      den += s * s;
    }
  double t16 = seconds_of([&] { launch(e16, args16, gx, gy, 1, threads); }, 7);

  std::printf("tile gemm f32  %d^3 (%dx%dx%d tiles, %lld blocks, %d threads): %7.1f GFLOP/s (rel. error %.2g)\n", n, BM,
              BN, BK, (long long)(gx * gy), threads, flops / tf * 1e-9, std::sqrt(err / den));
  std::printf("tile gemm bf16 %d^3 (f32 accumulate):                         %7.1f GFLOP/s\n", n, flops / t16 * 1e-9);
#ifdef TILE_HAVE_CBLAS
  double tb = seconds_of(
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
                    ref.data(), n);
      },
      7);
  std::printf("OpenBLAS sgemm %d^3:                                          %7.1f GFLOP/s\n", n, flops / tb * 1e-9);
  std::printf("ratio tile f32 / OpenBLAS: %.2f\n", tb / tf);
#endif
  return 0;
}
