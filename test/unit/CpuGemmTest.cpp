// gemm on the CPU target: the four transpose combinations, f32 / f64 / bf16 / f16 operands,
// tiles that leave row, vector and scalar remainders in the micro-kernel, clear_accum, and
// operands that are regions of larger buffers (through the fast kernel and the loop
// fallback), all on odd problem sizes against float64 references.
#include <cmath>

#include <gtest/gtest.h>

#include "CpuTestSupport.h"
#include "tile/types.h"

namespace {

using namespace cputest;
using namespace tile::ir;

struct GemmCase {
  ScalarType in;
  int bm, bn, bk;
  bool ta, tb;
  bool clear_first = false; // the first k tile's gemm clears an accumulator full of garbage
  ScalarType acc = ScalarType::F32;
};

std::string case_name(const GemmCase &c) {
  return std::string("gemm_") + name(c.in) + "_" + std::to_string(c.bm) + "x" + std::to_string(c.bn) + "x" +
         std::to_string(c.bk) + (c.ta ? "_ta" : "") + (c.tb ? "_tb" : "") + (c.clear_first ? "_clear" : "") + "_" +
         name(c.acc);
}

Stmt gemm(const Region &a, const Region &b, const Region &c, bool ta, bool tb, bool clear) {
  return std::make_shared<GemmNode>(a, b, c, ta, tb, clear, WarpPolicy::Square);
}

/// C = op(A) op(B), the kernel of API.md: A is [M, K] ([K, M] with ta), B is [K, N] ([N, K]).
Kernel gemm_kernel(const GemmCase &c) {
  KernelBuilder kb(case_name(c));
  Buffer a = kb.tensor("A", c.in, 2, true), b = kb.tensor("B", c.in, 2, true);
  Buffer out = kb.tensor("C", c.acc, 2);
  kb.grid(2);
  const int BM = c.bm, BN = c.bn, BK = c.bk;
  Buffer as = kb.buffer("As", Scope::Shared, c.in, c.ta ? std::vector<std::int64_t>{BK, BM} : std::vector<std::int64_t>{BM, BK});
  Buffer bs = kb.buffer("Bs", Scope::Shared, c.in, c.tb ? std::vector<std::int64_t>{BN, BK} : std::vector<std::int64_t>{BK, BN});
  Buffer acc = kb.buffer("acc", Scope::Fragment, c.acc, {BM, BN});
  kb.add(fill(full_region(acc), float_imm(c.clear_first ? 1000.0 : 0.0, c.acc)));
  Expr K = cast(ScalarType::I32, c.ta ? a->shape[0] : a->shape[1]);
  Var k = make_var("k", ScalarType::I32);
  Expr m0 = mul(kb.by(), int_imm(BM)), n0 = mul(kb.bx(), int_imm(BN)), k0 = mul(k, int_imm(BK));
  Region ar = c.ta ? region(a, {k0, m0}, {BK, BM}) : region(a, {m0, k0}, {BM, BK});
  Region br = c.tb ? region(b, {n0, k0}, {BN, BK}) : region(b, {k0, n0}, {BK, BN});
  Stmt body = seq({copy(ar, full_region(as)), copy(br, full_region(bs)),
                   gemm(full_region(as), full_region(bs), full_region(acc), c.ta, c.tb, false)});
  if (c.clear_first) {
    // gemm(clear_accum) on the first tile, accumulating gemms on the others.
    Stmt first = seq({copy(c.ta ? region(a, {int_imm(0), m0}, {BK, BM}) : region(a, {m0, int_imm(0)}, {BM, BK}), full_region(as)),
                      copy(c.tb ? region(b, {n0, int_imm(0)}, {BN, BK}) : region(b, {int_imm(0), n0}, {BK, BN}), full_region(bs)),
                      gemm(full_region(as), full_region(bs), full_region(acc), c.ta, c.tb, true)});
    kb.add(first);
    Expr tiles = div(sub(add(K, int_imm(BK)), int_imm(1)), int_imm(BK));
    kb.add(for_loop(k, int_imm(1), sub(tiles, int_imm(1)), ForKind::Pipelined, body, nullptr, 2));
  } else {
    Expr tiles = div(sub(add(K, int_imm(BK)), int_imm(1)), int_imm(BK));
    kb.add(for_loop(k, int_imm(0), tiles, ForKind::Pipelined, body, nullptr, 3));
  }
  kb.add(copy(full_region(acc), region(out, {m0, n0}, {BM, BN})));
  return kb.finish();
}

template <class In, class Acc> void run_gemm(const Image &img, const Kernel &kern, const GemmCase &c, int M, int N, int K) {
  auto af = random_floats(std::size_t(M) * K, M + K), bf = random_floats(std::size_t(K) * N, N + 3 * K);
  std::vector<In> a(af.begin(), af.end()), b(bf.begin(), bf.end());
  std::vector<Acc> out(std::size_t(M) * N, Acc(std::nanf("")));
  std::vector<double> ref(std::size_t(M) * N, 0.0), got(std::size_t(M) * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < K; ++k)
        ref[std::size_t(i) * N + j] += double(float(c.ta ? a[std::size_t(k) * M + i] : a[std::size_t(i) * K + k])) *
                                       double(float(c.tb ? b[std::size_t(j) * K + k] : b[std::size_t(k) * N + j]));
  std::vector<std::int64_t> as = c.ta ? std::vector<std::int64_t>{K, M} : std::vector<std::int64_t>{M, K};
  std::vector<std::int64_t> bs = c.tb ? std::vector<std::int64_t>{N, K} : std::vector<std::int64_t>{K, N};
  launch(img.entry(kern), {tensor_arg(a.data(), c.in, as), tensor_arg(b.data(), c.in, bs), tensor_arg(out.data(), c.acc, {M, N})},
         (N + c.bn - 1) / c.bn, (M + c.bm - 1) / c.bm, 1, 2);
  for (size_t i = 0; i < got.size(); ++i)
    got[i] = double(out[i]);
  const double tol = c.acc == ScalarType::F64 ? 1e-12 : 1e-5;
  EXPECT_LE(rel_error(ref, got), tol) << kern.display_name;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_FALSE(std::isnan(got[i])) << kern.display_name << " element " << i;
}

TEST(CpuGemm, TransposesTypesAndRemainders) {
  std::vector<GemmCase> cases;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      cases.push_back({ScalarType::F32, 32, 48, 16, ta, tb});
      cases.push_back({ScalarType::BF16, 64, 64, 32, ta, tb});
    }
  cases.push_back({ScalarType::F16, 13, 40, 24, false, true});   // a row remainder, a scalar tail of 8 columns
  cases.push_back({ScalarType::F32, 16, 72, 8, true, false});    // 72 = 2 vectors + 1 vector + 8
  cases.push_back({ScalarType::F32, 8, 5, 7, false, false});     // fewer columns than a vector
  cases.push_back({ScalarType::F64, 24, 40, 16, true, true, false, ScalarType::F64});
  cases.push_back({ScalarType::BF16, 32, 32, 16, false, false, true}); // clear_accum
  cases.push_back({ScalarType::F32, 32, 32, 16, true, true, true});
  std::vector<Kernel> ks;
  for (auto &c : cases)
    ks.push_back(gemm_kernel(c));
  auto img = Image::build(ks);
  ASSERT_TRUE(img);
  const int M = 77, N = 45, K = 83;
  for (size_t i = 0; i < cases.size(); ++i) {
    const GemmCase &c = cases[i];
    if (c.in == ScalarType::F32)
      run_gemm<float, float>(*img, ks[i], c, M, N, K);
    else if (c.in == ScalarType::F64)
      run_gemm<double, double>(*img, ks[i], c, M, N, K);
    else if (c.in == ScalarType::BF16)
      run_gemm<tile::bf16, float>(*img, ks[i], c, M, N, K);
    else
      run_gemm<tile::f16, float>(*img, ks[i], c, M, N, K);
  }
}

// Operands that are regions of larger buffers: the slice [1, :, :] of a [2, 24, 16] buffer
// goes to the fast kernel with an offset pointer; the slice [:, 1, :] of a [24, 2, 16]
// buffer (rows not contiguous) and a bf16 accumulator take the loop fallback.
TEST(CpuGemm, RegionOperands) {
  KernelBuilder kb("gemm_regions");
  Buffer a = kb.tensor("A", ScalarType::F32, 2, true), b = kb.tensor("B", ScalarType::F32, 2, true);
  Buffer c1 = kb.tensor("C1", ScalarType::F32, 2), c2 = kb.tensor("C2", ScalarType::F32, 2);
  kb.grid(1);
  Buffer a3 = kb.buffer("a3", Scope::Shared, ScalarType::F32, {2, 24, 16});
  Buffer a3t = kb.buffer("a3t", Scope::Shared, ScalarType::F32, {24, 2, 16});
  Buffer bs = kb.buffer("bs", Scope::Shared, ScalarType::F32, {16, 40});
  Buffer acc = kb.buffer("acc", Scope::Fragment, ScalarType::F32, {24, 40});
  Buffer acc16 = kb.buffer("acc16", Scope::Fragment, ScalarType::BF16, {24, 40});
  Expr z = int_imm(0), one = int_imm(1);
  kb.add(fill(full_region(a3), float_imm(std::nan(""))));
  kb.add(fill(full_region(a3t), float_imm(std::nan(""))));
  kb.add(copy(region(a, {z, z}, {24, 16}), region(a3, {one, z, z}, {24, 16}, {1, 2})));
  kb.add(copy(region(a, {z, z}, {24, 16}), region(a3t, {z, one, z}, {24, 16}, {0, 2})));
  kb.add(copy(region(b, {z, z}, {16, 40}), full_region(bs)));
  kb.add(gemm(region(a3, {one, z, z}, {24, 16}, {1, 2}), full_region(bs), full_region(acc), false, false, true));
  kb.add(fill(full_region(acc16), float_imm(0, ScalarType::BF16)));
  kb.add(gemm(region(a3t, {z, one, z}, {24, 16}, {0, 2}), full_region(bs), full_region(acc16), false, false, false));
  kb.add(copy(full_region(acc), region(c1, {z, z}, {24, 40})));
  kb.add(copy(full_region(acc16), region(c2, {z, z}, {24, 40})));
  Kernel k = kb.finish();
  auto img = Image::build({k});
  ASSERT_TRUE(img);
  EXPECT_NE(img->source().find("tile_cpu::gemm_clear<24, 40, 16, false, false>(&a3[384], 16, bs, 40, acc, 40);"),
            std::string::npos)
      << img->source();
  auto av = random_floats(24 * 16, 11), bv = random_floats(16 * 40, 12);
  std::vector<float> o1(24 * 40, std::nanf("")), o2(24 * 40, std::nanf(""));
  launch(img->entry(k),
         {tensor_arg(av.data(), ScalarType::F32, {24, 16}), tensor_arg(bv.data(), ScalarType::F32, {16, 40}),
          tensor_arg(o1.data(), ScalarType::F32, {24, 40}), tensor_arg(o2.data(), ScalarType::F32, {24, 40})},
         1);
  for (int i = 0; i < 24; ++i)
    for (int j = 0; j < 40; ++j) {
      double ref = 0;
      for (int kk = 0; kk < 16; ++kk)
        ref += double(av[i * 16 + kk]) * bv[kk * 40 + j];
      ASSERT_NEAR(o1[i * 40 + j], ref, 1e-5) << i << ", " << j;
      ASSERT_NEAR(o2[i * 40 + j], ref, std::fabs(ref) / 128 + 1e-6) << i << ", " << j; // bf16 accumulator
    }
}

} // namespace
