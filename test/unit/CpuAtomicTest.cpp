// Atomics on the CPU target: element atomics of every kind and many element types from
// many blocks running on several threads, and region atomics from a fragment onto a
// tensor region that reaches past the tensor's edge.
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "CpuTestSupport.h"
#include "tile/types.h"

namespace {

using namespace cputest;
using namespace tile::ir;

constexpr int blocks = 64, threads = 4;

Stmt element_atomic(AtomicKind kind, const Buffer &t, Expr value) {
  Region r;
  r.buffer = t;
  r.begin = {int_imm(0)};
  r.extent = {1};
  return std::make_shared<AtomicNode>(kind, r, cast(arith_type(t->dtype), value), std::nullopt);
}

TEST(CpuAtomic, ElementAtomicsFromManyBlocks) {
  KernelBuilder kb("element_atomics");
  struct Out {
    const char *name;
    ScalarType type;
    AtomicKind kind;
  };
  const Out outs[] = {{"count", ScalarType::I32, AtomicKind::Add}, {"total", ScalarType::I64, AtomicKind::Add},
                      {"fsum", ScalarType::F32, AtomicKind::Add},  {"dsum", ScalarType::F64, AtomicKind::Add},
                      {"hsum", ScalarType::F16, AtomicKind::Add},  {"bsum", ScalarType::BF16, AtomicKind::Add},
                      {"imax", ScalarType::I32, AtomicKind::Max},  {"fmin", ScalarType::F32, AtomicKind::Min},
                      {"bmax", ScalarType::BF16, AtomicKind::Max}, {"umin", ScalarType::U32, AtomicKind::Min}};
  std::vector<Buffer> ts;
  for (auto &o : outs)
    ts.push_back(kb.tensor(o.name, o.type, 1));
  kb.grid(1);
  Expr bx = kb.bx();
  kb.add(element_atomic(AtomicKind::Add, ts[0], int_imm(1)));
  kb.add(element_atomic(AtomicKind::Add, ts[1], mul(cast(ScalarType::I64, bx), int_imm(1000000000, ScalarType::I64))));
  kb.add(element_atomic(AtomicKind::Add, ts[2], cast(ScalarType::F32, bx)));
  kb.add(element_atomic(AtomicKind::Add, ts[3], div(cast(ScalarType::F64, bx), float_imm(4, ScalarType::F64))));
  kb.add(element_atomic(AtomicKind::Add, ts[4], float_imm(1)));
  kb.add(element_atomic(AtomicKind::Add, ts[5], float_imm(2)));
  kb.add(element_atomic(AtomicKind::Max, ts[6], mul(bx, int_imm(3))));
  kb.add(element_atomic(AtomicKind::Min, ts[7], unary(UnaryOp::Neg, cast(ScalarType::F32, bx))));
  kb.add(element_atomic(AtomicKind::Max, ts[8], cast(ScalarType::F32, bx)));
  kb.add(element_atomic(AtomicKind::Min, ts[9], add(cast(ScalarType::U32, bx), int_imm(7, ScalarType::U32))));
  Kernel k = kb.finish();
  auto img = Image::build({k});
  ASSERT_TRUE(img);

  std::int32_t count = 0, imax = -5;
  std::int64_t total = 0;
  float fsum = 0, fmin = 1;
  double dsum = 0;
  tile::f16 hsum(0.0f);
  tile::bf16 bsum(0.0f), bmax(-100.0f);
  std::uint32_t umin = 1000;
  void *ptrs[] = {&count, &total, &fsum, &dsum, &hsum, &bsum, &imax, &fmin, &bmax, &umin};
  std::vector<kernel_arg> args;
  for (size_t i = 0; i < ts.size(); ++i)
    args.push_back(tensor_arg(ptrs[i], outs[i].type, {1}));
  for (int rep = 0; rep < 3; ++rep)
    launch(img->entry(k), args, blocks, 1, 1, threads);
  const std::int64_t sum_bx = blocks * (blocks - 1) / 2;
  EXPECT_EQ(count, 3 * blocks);
  EXPECT_EQ(total, 3 * sum_bx * 1000000000ll);
  EXPECT_EQ(fsum, 3.0f * sum_bx);
  EXPECT_EQ(dsum, 3.0 * sum_bx / 4);
  EXPECT_EQ(float(hsum), 3.0f * blocks);
  EXPECT_EQ(float(bsum), 2.0f * 3 * blocks);
  EXPECT_EQ(imax, 3 * (blocks - 1));
  EXPECT_EQ(fmin, -float(blocks - 1));
  EXPECT_EQ(float(bmax), float(blocks - 1));
  EXPECT_EQ(umin, 7u);
}

// atomic_add / atomic_max(T.at(bx % 2 * 4), f) with an 8-element fragment f onto a tensor of
// 10 elements: the tile of the second half reaches 2 elements past the edge.
TEST(CpuAtomic, RegionAtomicsArePredicated) {
  KernelBuilder kb("region_atomics");
  Buffer t = kb.tensor("T", ScalarType::F32, 1), m = kb.tensor("M", ScalarType::I32, 1);
  kb.grid(1);
  Buffer f = kb.buffer("f", Scope::Fragment, ScalarType::F32, {8});
  Buffer l = kb.buffer("l", Scope::Local, ScalarType::I32, {8});
  Expr bx = kb.bx();
  kb.add(fill(full_region(f), cast(ScalarType::F32, bx)));
  kb.add(fill(full_region(l), bx));
  Expr at = mul(binary(BinaryOp::Mod, bx, int_imm(2)), int_imm(4));
  kb.add(std::make_shared<AtomicNode>(AtomicKind::Add, region(t, {at}, {8}), nullptr, full_region(f)));
  kb.add(std::make_shared<AtomicNode>(AtomicKind::Max, region(m, {at}, {8}), nullptr, full_region(l)));
  Kernel k = kb.finish();
  auto img = Image::build({k});
  ASSERT_TRUE(img);
  std::vector<float> tv(16);
  std::vector<std::int32_t> mv(16);
  std::memset(tv.data(), 0, 10 * 4);
  std::memset(tv.data() + 10, 0xAB, 6 * 4);
  std::memset(mv.data(), 0, 10 * 4);
  std::memset(mv.data() + 10, 0xAB, 6 * 4);
  launch(img->entry(k), {tensor_arg(tv.data(), ScalarType::F32, {10}), tensor_arg(mv.data(), ScalarType::I32, {10})},
         blocks, 1, 1, threads);
  double even = 0, odd = 0;
  for (int b = 0; b < blocks; ++b)
    (b % 2 ? odd : even) += b;
  for (int i = 0; i < 10; ++i) {
    double want = (i < 8 ? even : 0) + (i >= 4 ? odd : 0);
    EXPECT_EQ(tv[i], float(want)) << i;
    EXPECT_EQ(mv[i], i < 4 ? blocks - 2 : blocks - 1) << i;
  }
  for (int i = 10; i < 16; ++i) {
    std::uint32_t u;
    std::memcpy(&u, &tv[i], 4);
    EXPECT_EQ(u, 0xABABABABu) << "atomic past the edge at " << i;
    EXPECT_EQ(std::uint32_t(mv[i]), 0xABABABABu) << "atomic past the edge at " << i;
  }
}

} // namespace
