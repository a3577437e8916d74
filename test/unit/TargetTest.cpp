// The target registry (lib/ir/Target.h): the facts the passes read, per architecture, and
// the description shared by the architectures one source is compiled for.
#include <gtest/gtest.h>

#include "ir/Target.h"

namespace tile::ir {
namespace {

TEST(Target, CudaArchitectures) {
  std::string problem;
  auto h = cuda_target("sm_90a", problem), a = cuda_target("sm_80", problem), t = cuda_target("sm_75", problem);
  ASSERT_TRUE(h && a && t) << problem;
  EXPECT_EQ(h->warp_size, 32);
  EXPECT_EQ(h->max_shared_bytes, 227 * 1024);
  EXPECT_EQ(a->max_shared_bytes, 163 * 1024);
  // The atoms in the order gemms take them: wgmma (sm_90a only), mma.sync with 16-bit
  // operands (sm_80 on), with 8-bit floats (sm_89 on).
  auto families = [](const Target &x) {
    std::vector<std::string> f;
    for (const MmaAtomRef &m : x.mma_atoms)
      f.push_back(m->family + " k" + std::to_string(m->k_for(m->operand_types.front().first)));
    return f;
  };
  EXPECT_EQ(families(*h), (std::vector<std::string>{"wgmma k16", "mma.sync k16", "mma.sync k32"}));
  EXPECT_EQ(families(*a), (std::vector<std::string>{"mma.sync k16"}));
  EXPECT_EQ(families(*cuda_target("sm_89", problem)), (std::vector<std::string>{"mma.sync k16", "mma.sync k32"}));
  const MmaAtomRef sync = h->mma_atom("mma.sync", ScalarType::BF16, ScalarType::BF16);
  ASSERT_TRUE(sync);
  EXPECT_EQ(sync->remark_name(ScalarType::BF16, ScalarType::BF16, 8), "mma.sync.m16n8k16.bf16");
  EXPECT_EQ(sync->instruction(ScalarType::F16, ScalarType::F16, 8), "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
  const MmaAtomRef sync8 = h->mma_atom("mma.sync", ScalarType::F8E4M3, ScalarType::F8E5M2);
  ASSERT_TRUE(sync8);
  EXPECT_EQ(sync8->instruction(ScalarType::F8E4M3, ScalarType::F8E5M2, 8),
            "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32");
  EXPECT_FALSE(sync8->a_from_accumulator); // four 8-bit elements a register: no accumulator's layout
  EXPECT_FALSE(a->mma_atom("mma.sync", ScalarType::F8E4M3, ScalarType::F8E4M3));
  EXPECT_TRUE(h->bulk_tensor_copy && h->has_warpgroup_mma());
  EXPECT_FALSE(a->bulk_tensor_copy || a->has_warpgroup_mma());
  const MmaAtomRef wg = h->mma_atom("wgmma", ScalarType::BF16, ScalarType::BF16);
  ASSERT_TRUE(wg);
  EXPECT_EQ(wg->threads(h->warp_size), 128); // a warpgroup
  EXPECT_EQ(h->warpgroup_threads(), 128);
  EXPECT_EQ(wg->m, 64);
  EXPECT_EQ(wg->max_n, 256);
  EXPECT_EQ(wg->swizzle_code(128), 1);
  EXPECT_EQ(wg->swizzle_code(64), 2);
  EXPECT_EQ(wg->swizzle_code(32), 3);
  EXPECT_EQ(wg->swizzle_code(16), 0);
  EXPECT_EQ(wg->remark_name(ScalarType::F8E4M3, ScalarType::F8E5M2, 128), "wgmma.m64n128k32.f8e4m3.f8e5m2");
  EXPECT_EQ(wg->instruction(ScalarType::BF16, ScalarType::BF16, 96), "wgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16");
  EXPECT_TRUE(t->mma_atoms.empty()); // bf16 mma.sync and cp.async need sm_80
  EXPECT_FALSE(t->async_copy);
  EXPECT_EQ(h->name(), "cuda:sm_90a");
  EXPECT_FALSE(cuda_target("sm_9x", problem));
  EXPECT_NE(problem.find("unknown CUDA architecture 'sm_9x'"), std::string::npos);
  EXPECT_FALSE(cuda_target("gfx90a", problem));
}

TEST(Target, HipArchitectures) {
  std::string problem;
  auto mi200 = hip_target("gfx90a", problem), mi300 = hip_target("gfx942", problem),
       mi100 = hip_target("gfx908", problem), rdna = hip_target("gfx1100", problem);
  ASSERT_TRUE(mi200 && mi300 && mi100 && rdna) << problem;
  EXPECT_EQ(mi200->name(), "hip:gfx90a");
  EXPECT_EQ(mi200->warp_size, 64);
  EXPECT_EQ(rdna->warp_size, 32);
  EXPECT_EQ(mi200->max_shared_bytes, 64 * 1024);
  EXPECT_FALSE(mi200->async_copy || mi200->bulk_tensor_copy || mi200->has_warpgroup_mma());
  ASSERT_TRUE(mi200->has_warp_mma() && mi300->has_warp_mma());
  EXPECT_FALSE(mi100->has_warp_mma() || rdna->has_warp_mma()); // no bf16_1k MFMA there: gemms on FMA
  const MmaAtomRef mfma = mi200->mma_atom("MFMA", ScalarType::BF16, ScalarType::BF16);
  ASSERT_TRUE(mfma);
  EXPECT_EQ(mfma->remark_name(ScalarType::BF16, ScalarType::BF16, 16), "v_mfma_f32_16x16x16bf16_1k");
  EXPECT_EQ(mfma->remark_name(ScalarType::F16, ScalarType::F16, 16), "v_mfma_f32_16x16x16f16");
  EXPECT_EQ(mfma->instruction(ScalarType::BF16, ScalarType::BF16, 16), "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k");
  EXPECT_FALSE(mfma->a_from_accumulator);
  EXPECT_EQ(mfma->accumulator.lanes, 64);
  EXPECT_EQ(mfma->accumulator.registers(), 4);
  for (const char *bad : {"gfx90", "gfx9", "sm_90a", "gfx90aa", "gfxzzz", "gfx"}) {
    problem.clear();
    EXPECT_FALSE(hip_target(bad, problem)) << bad;
    EXPECT_NE(problem.find("unknown AMD GPU architecture"), std::string::npos) << bad << ": " << problem;
  }
  EXPECT_FALSE(hip_target("gfx803", problem));
  EXPECT_NE(problem.find("not one tile builds for"), std::string::npos) << problem;
  // One source for gfx90a and gfx942 (the same lowering); gfx908 has a class of its own.
  // A unit with bf16 gemms: one source for gfx90a and gfx942 (the same lowering); gfx908
  // (no such MFMA) has a class of its own. Without gemms all three share one.
  GemmUse bf16;
  bf16.operand_types = {{ScalarType::BF16, ScalarType::BF16}};
  EXPECT_EQ(gpu_arch_classes("hip", {"gfx90a", "gfx908", "gfx942"}, bf16),
            (std::vector<std::vector<std::string>>{{"gfx90a", "gfx942"}, {"gfx908"}}));
  EXPECT_EQ(gpu_arch_classes("hip", {"gfx90a", "gfx908", "gfx942"}),
            (std::vector<std::vector<std::string>>{{"gfx90a", "gfx908", "gfx942"}}));
  EXPECT_EQ(common_gpu_target("hip", {"gfx90a", "gfx942"}).name(), "hip:gfx90a+gfx942");
  EXPECT_EQ(default_gpu_archs("hip"), (std::vector<std::string>{"gfx90a"}));
}

TEST(Target, CommonTargetIsWhatAllShare) {
  Target both = common_cuda_target({"sm_90a", "sm_80"});
  EXPECT_EQ(both.name(), "cuda:sm_90a+sm_80");
  EXPECT_TRUE(both.has_warp_mma());
  EXPECT_FALSE(both.has_warpgroup_mma()); // sm_80 has none
  EXPECT_EQ(both.mma_atoms.size(), 1u);    // nor 8-bit mma.sync
  EXPECT_EQ(both.max_shared_bytes, 163 * 1024);
  EXPECT_TRUE(common_cuda_target({"sm_90a", "sm_75"}).mma_atoms.empty());
  EXPECT_EQ(default_cuda_archs(), (std::vector<std::string>{"sm_90a", "sm_80"}));
  EXPECT_EQ(cpu_target().name(), "cpu");
  EXPECT_TRUE(cpu_target().mma_atoms.empty());
}

} // namespace
} // namespace tile::ir
