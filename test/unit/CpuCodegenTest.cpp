// The CPU codegen and its device header library: entry names, deterministic output and
// naming, scalar parameters, C semantics of integer arithmetic, loop forms, print and
// assert, block rasterization, and the header's element type conversions.
#include <cmath>
#include <cstring>
#include <set>

#include <gtest/gtest.h>

#include "CpuTestSupport.h"
#include "targets/cpu/CpuCodegen.h"
#include "tile/types.h"
#include "tile_cpu.h"
#include "transforms/LowerTileOps.h"

namespace {

using namespace cputest;
using namespace tile::ir;

Stmt store1(const Buffer &b, Expr i, Expr v) { return store(b, {std::move(i)}, std::move(v)); }

TEST(CpuCodegen, KernelSymbols) {
  Kernel a, b, c;
  a.key = "_Z6squareN4tile6tensorIfLi1EEE";
  b.key = "a.b";
  c.key = "a$b";
  std::string sa = tile::cpu::kernel_symbol(a);
  EXPECT_EQ(sa.rfind("tile_cpu__Z6squareN4tile6tensorIfLi1EEE_", 0), 0u) << sa;
  EXPECT_EQ(sa.size(), std::string("tile_cpu__Z6squareN4tile6tensorIfLi1EEE_").size() + 8);
  EXPECT_NE(tile::cpu::kernel_symbol(b), tile::cpu::kernel_symbol(c));
  EXPECT_EQ(tile::cpu::kernel_symbol(b).find_first_not_of(
                "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"),
            std::string::npos);
  EXPECT_EQ(tile::cpu::kernel_symbol(a), tile::cpu::kernel_symbol(a));
}

// Names that collide with each other, with C++ keywords and with the entry's own names get
// suffixes; the output is the same on every run.
TEST(CpuCodegen, DeterministicNames) {
  auto build = [] {
    KernelBuilder kb("names");
    Buffer x = kb.tensor("args", ScalarType::I32, 1);
    Var n = kb.scalar("int", ScalarType::I32);
    kb.grid(1);
    Var i1 = make_var("i", ScalarType::I32), i2 = make_var("i", ScalarType::I32);
    kb.add(for_loop(i1, int_imm(0), int_imm(4), ForKind::Serial, store1(x, i1, n)));
    kb.add(for_loop(i2, int_imm(4), int_imm(4), ForKind::Serial, store1(x, i2, add(i2, n))));
    Var blk = make_var("blk", ScalarType::I32);
    kb.add(declare(blk, int_imm(1)));
    kb.add(store1(x, int_imm(8), blk));
    return tile::transforms::lower_tile_ops(kb.finish());
  };
  std::string s1 = tile::cpu::emit_source({build()}), s2 = tile::cpu::emit_source({build()});
  EXPECT_EQ(s1, s2);
  EXPECT_NE(s1.find("int32_t *__restrict args_1 = (int32_t *)args[0].data;"), std::string::npos) << s1;
  EXPECT_NE(s1.find("int32_t int_1 = (int32_t)args[1].value.i;"), std::string::npos) << s1;
  EXPECT_NE(s1.find("for (int32_t i = 0; i < 4; ++i) {"), std::string::npos) << s1;
  EXPECT_NE(s1.find("for (int32_t i_1 = 4; i_1 < 8; ++i_1) {"), std::string::npos) << s1;
  EXPECT_NE(s1.find("int32_t blk_1 = 1;"), std::string::npos) << s1;
  auto img = Image::build({build()});
  ASSERT_TRUE(img);
  std::vector<std::int32_t> out(9, -1);
  launch(img->entry(build()), {tensor_arg(out.data(), ScalarType::I32, {9}), int_arg(5)}, 1);
  EXPECT_EQ(out, (std::vector<std::int32_t>{5, 5, 5, 5, 9, 10, 11, 12, 1}));
}

// Scalars of every kind arrive through kernel_arg; integer division and modulo truncate
// toward zero as in C++; float modulo is fmod; min/max; shifts of 64-bit values.
TEST(CpuCodegen, ScalarsAndArithmetic) {
  KernelBuilder kb("scalars");
  Buffer o = kb.tensor("O", ScalarType::F64, 1);
  Var a = kb.scalar("a", ScalarType::I32), b = kb.scalar("b", ScalarType::I32);
  Var f = kb.scalar("f", ScalarType::F32), d = kb.scalar("d", ScalarType::F64);
  Var flag = kb.scalar("flag", ScalarType::Bool), big = kb.scalar("big", ScalarType::I64);
  Var h = kb.scalar("h", ScalarType::BF16);
  kb.grid(1);
  std::vector<Expr> values = {
      div(a, b),                                      // -7 / 2 = -3
      binary(BinaryOp::Mod, a, b),                     // -7 % 2 = -1
      binary(BinaryOp::Mod, f, float_imm(2.0f)),       // fmod(-7.5, 2) = -1.5
      mul(d, float_imm(2, ScalarType::F64)),           // 0.25 * 2
      select(flag, int_imm(10), int_imm(20)),          // true -> 10
      binary(BinaryOp::Shl, big, int_imm(3)),          // (1 << 40) << 3
      binary(BinaryOp::Max, f, cast(ScalarType::F32, a)),  // max(-7.5, -7)
      binary(BinaryOp::Min, a, unary(UnaryOp::Neg, b)),    // min(-7, -2)
      cast(ScalarType::F32, h),                        // bf16 3.5
      call(Intrinsic::Sqrt, {d}),                      // 0.5
      call(Intrinsic::Abs, {a}),                       // 7
      call(Intrinsic::Sigmoid, {float_imm(0.0f)}),     // 0.5
      cast(ScalarType::I32, f),                        // -7 (truncation)
      binary(BinaryOp::Div, binary(BinaryOp::Shr, int_imm(-8), int_imm(1)), int_imm(3)), // -4 / 3 = -1
  };
  for (size_t i = 0; i < values.size(); ++i)
    kb.add(store1(o, int_imm(int(i)), cast(ScalarType::F64, values[i])));
  Kernel k = kb.finish();
  auto img = Image::build({k});
  ASSERT_TRUE(img);
  std::vector<double> out(values.size(), std::nan(""));
  launch(img->entry(k),
         {tensor_arg(out.data(), ScalarType::F64, {std::int64_t(out.size())}), int_arg(-7), int_arg(2), float_arg(-7.5),
          float_arg(0.25, ScalarType::F64), int_arg(1, ScalarType::Bool), int_arg(std::int64_t(1) << 40, ScalarType::I64),
          float_arg(3.5, ScalarType::BF16)},
         1);
  std::vector<double> want = {-3, -1, -1.5, 0.5, 10, double(std::int64_t(1) << 43), -7, -7, 3.5, 0.5, 7, 0.5, -7, -1};
  EXPECT_EQ(out, want);
}

// Loop forms: steps of -1 and 3, a step known only at run time, an unrolled loop, and a
// loop whose bound the body changes (the IR evaluates it once).
TEST(CpuCodegen, LoopForms) {
  KernelBuilder kb("loops");
  Buffer o = kb.tensor("O", ScalarType::I32, 1);
  Var s = kb.scalar("s", ScalarType::I32);
  kb.grid(1);
  Var cnt = make_var("cnt", ScalarType::I32);
  kb.add(declare(cnt, int_imm(0)));
  auto bump = [&] { return assign(cnt, add(cnt, int_imm(1))); };
  Var i = make_var("i", ScalarType::I32), j = make_var("j", ScalarType::I32), k = make_var("k", ScalarType::I32);
  Var u = make_var("u", ScalarType::I32), w = make_var("w", ScalarType::I32);
  // i = 9, 8, ..., 0: writes O[i] = i
  kb.add(for_loop(i, int_imm(9), int_imm(10), ForKind::Serial, seq({store1(o, i, i), bump()}), int_imm(-1)));
  // j = 10, 13, 16: O[j] = 100 + j
  kb.add(for_loop(j, int_imm(10), int_imm(3), ForKind::Serial, seq({store1(o, j, add(j, int_imm(100))), bump()}),
                  int_imm(3)));
  // k = 30, 30 - s, ... (s = 2 at run time; 4 iterations): O[k] = 200 + k
  kb.add(for_loop(k, int_imm(30), int_imm(4), ForKind::Serial, seq({store1(o, k, add(k, int_imm(200))), bump()}),
                  unary(UnaryOp::Neg, s)));
  kb.add(for_loop(u, int_imm(0), int_imm(4), ForKind::Unrolled, seq({store1(o, add(u, int_imm(40)), u), bump()})));
  // The extent is read once: 3 iterations although the body raises `limit`.
  Var limit = make_var("limit", ScalarType::I32);
  kb.add(declare(limit, int_imm(3)));
  kb.add(for_loop(w, int_imm(0), limit, ForKind::Serial, seq({assign(limit, add(limit, int_imm(1))), bump()})));
  kb.add(store1(o, int_imm(50), cnt));
  Kernel kern = kb.finish();
  auto img = Image::build({kern});
  ASSERT_TRUE(img);
  EXPECT_NE(img->source().find("#pragma unroll"), std::string::npos);
  std::vector<std::int32_t> out(51, -1);
  launch(img->entry(kern), {tensor_arg(out.data(), ScalarType::I32, {51}), int_arg(2)}, 1);
  for (int x = 0; x <= 9; ++x)
    EXPECT_EQ(out[x], x);
  for (int x : {10, 13, 16})
    EXPECT_EQ(out[x], 100 + x);
  for (int x : {30, 28, 26, 24})
    EXPECT_EQ(out[x], 200 + x);
  EXPECT_EQ(out[29], -1);
  for (int x = 0; x < 4; ++x)
    EXPECT_EQ(out[40 + x], x);
  EXPECT_EQ(out[50], 10 + 3 + 4 + 4 + 3);
}

// print writes its arguments after the block's coordinates; a failed assert reports its
// message through the context and ends the block.
TEST(CpuCodegen, PrintAndAssert) {
  KernelBuilder kb("print_assert");
  Buffer o = kb.tensor("O", ScalarType::I32, 1);
  kb.grid(2);
  kb.add(if_then_else(binary(BinaryOp::EQ, kb.bx(), int_imm(2)),
                      std::make_shared<PrintNode>(std::vector<Expr>{string_imm("value 100%"), kb.by(), float_imm(1.5f),
                                                                    int_imm(-3, ScalarType::I64), bool_imm(true)})));
  kb.add(std::make_shared<AssertNode>(binary(BinaryOp::NE, kb.bx(), int_imm(3)), "bx must not be 3 (CpuTest.cpp:9)"));
  kb.add(store1(o, add(mul(kb.by(), int_imm(4)), kb.bx()), int_imm(1)));
  Kernel k = kb.finish();
  auto img = Image::build({k});
  ASSERT_TRUE(img);
  std::vector<std::int32_t> out(8, 0);
  Context ctx;
  testing::internal::CaptureStdout();
  launch(img->entry(k), {tensor_arg(out.data(), ScalarType::I32, {8})}, 4, 2, 1, 1, &ctx);
  std::fflush(stdout);
  std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_EQ(printed, "[block 2,0,0] value 100% 0 1.5 -3 1\n[block 2,1,0] value 100% 1 1.5 -3 1\n");
  ASSERT_EQ(ctx.failures.size(), 2u);
  EXPECT_EQ(ctx.failures[0], "bx must not be 3 (CpuTest.cpp:9)");
  EXPECT_EQ(out, (std::vector<std::int32_t>{1, 1, 1, 0, 1, 1, 1, 0}));
}

// Panel rasterization visits every block once, also when the panel does not divide the grid.
TEST(CpuCodegen, SwizzleVisitsEveryBlockOnce) {
  for (std::int64_t gx : {1, 3, 5, 8})
    for (std::int64_t gy : {1, 2, 7, 9})
      for (std::int64_t gz : {1, 2})
        for (std::int64_t panel : {0, 1, 2, 3, 4, 8}) {
          const std::int64_t grid[3] = {gx, gy, gz};
          std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> seen;
          for (std::int64_t b = 0; b < gx * gy * gz; ++b) {
            auto c = tile_cpu::block_index(b, grid, panel);
            ASSERT_TRUE(c.x >= 0 && c.x < gx && c.y >= 0 && c.y < gy && c.z >= 0 && c.z < gz);
            seen.insert({c.x, c.y, c.z});
          }
          ASSERT_EQ(std::int64_t(seen.size()), gx * gy * gz) << gx << "x" << gy << "x" << gz << " panel " << panel;
        }
  // Through a kernel: each block adds 1 to its cell.
  KernelBuilder kb("swizzled");
  Buffer o = kb.tensor("O", ScalarType::I32, 2);
  kb.grid(2);
  kb.swizzle(3);
  Region cell;
  cell.buffer = o;
  cell.begin = {kb.by(), kb.bx()};
  cell.extent = {1, 1};
  kb.add(std::make_shared<AtomicNode>(AtomicKind::Add, cell, int_imm(1), std::nullopt));
  Kernel k = kb.finish();
  auto img = Image::build({k});
  ASSERT_TRUE(img);
  EXPECT_NE(img->source().find("tile_cpu::block_index(block, grid, 3)"), std::string::npos);
  std::vector<std::int32_t> out(7 * 5, 0);
  launch(img->entry(k), {tensor_arg(out.data(), ScalarType::I32, {7, 5})}, 5, 7, 1, 2);
  for (auto v : out)
    EXPECT_EQ(v, 1);
  // Consecutive blocks walk down a panel's column first.
  const std::int64_t grid[3] = {5, 7, 1};
  EXPECT_EQ(tile_cpu::block_index(1, grid, 3).y, 1);
  EXPECT_EQ(tile_cpu::block_index(1, grid, 3).x, 0);
}

// The innermost element-wise loops of a copy carry `#pragma omp simd`; loops with inner
// loops, prints or values carried across iterations do not.
TEST(CpuCodegen, SimdPragmas) {
  KernelBuilder kb("simd");
  Buffer x = kb.tensor("X", ScalarType::F32, 1);
  kb.grid(1);
  Buffer f = kb.buffer("f", Scope::Fragment, ScalarType::F32, {64});
  kb.add(copy(region(x, {int_imm(0)}, {64}), full_region(f)));
  Var acc = make_var("acc", ScalarType::F32), i = make_var("i", ScalarType::I32);
  kb.add(declare(acc, float_imm(0)));
  kb.add(for_loop(i, int_imm(0), int_imm(64), ForKind::Parallel, assign(acc, add(acc, load(f, {i})))));
  kb.add(store1(x, int_imm(0), acc));
  std::string src = tile::cpu::emit_source({tile::transforms::lower_tile_ops(kb.finish())});
  // The copy's two paths (tile inside the tensor, tile at its edge) have one each; the
  // loop carrying acc has none.
  std::size_t count = 0, last = std::string::npos;
  for (auto at = src.find("#pragma omp simd"); at != std::string::npos; at = src.find("#pragma omp simd", at + 1))
    ++count, last = at;
  EXPECT_EQ(count, 2u) << src;
  const auto carried = src.find("float acc = ");
  ASSERT_NE(carried, std::string::npos) << src;
  EXPECT_LT(last, carried) << src;
}

// The header's conversions agree with the host types of include/tile/types.h.
TEST(CpuHeader, ConversionsMatchHostTypes) {
  for (int b = 0; b < 256; ++b) {
    tile_cpu::f8e4m3 d;
    d.bits = std::uint8_t(b);
    tile::f8e4m3 h;
    h.bits = std::uint8_t(b);
    float x = float(d), y = float(h);
    ASSERT_TRUE(x == y || (std::isnan(x) && std::isnan(y))) << b;
    tile_cpu::f8e5m2 d5;
    d5.bits = std::uint8_t(b);
    tile::f8e5m2 h5;
    h5.bits = std::uint8_t(b);
    x = float(d5), y = float(h5);
    ASSERT_TRUE(x == y || (std::isnan(x) && std::isnan(y))) << b;
  }
  auto vals = random_floats(20000, 42, -600, 600);
  vals.insert(vals.end(), {0.0f, -0.0f, 448.0f, 449.0f, 464.0f, 1e-9f, 57344.0f, 61440.0f, INFINITY, -INFINITY, NAN});
  for (float v : vals) {
    ASSERT_EQ(tile_cpu::f8e4m3(v).bits, tile::f8e4m3(v).bits) << v;
    ASSERT_EQ(tile_cpu::f8e5m2(v).bits, tile::f8e5m2(v).bits) << v;
    tile_cpu::bf16 b = tile_cpu::bf16(v);
    std::uint16_t bits;
    std::memcpy(&bits, &b, 2);
    if (std::isnan(v))
      continue;
    ASSERT_EQ(bits, tile::bf16(v).bits) << v;
    ASSERT_EQ(float(tile_cpu::f16(v)), float(tile::f16(v))) << v;
  }
  // double -> bf16 rounds once: a double just above the midpoint of two bf16 values goes up
  // although its nearest float is the midpoint itself (which would round to even, down).
  double above = 1.0 + 0x1p-8 + 0x1p-40;
  EXPECT_EQ(float(__truncdfbf2(above)), 1.0f + 0x1p-7f);
  EXPECT_EQ(float(__truncdfbf2(1.0 + 0x1p-8)), 1.0f);
  EXPECT_EQ(float(__truncdfbf2(1e300)), INFINITY);
  EXPECT_EQ(float(__truncdfbf2(-3.0)), -3.0f);
}

} // namespace
