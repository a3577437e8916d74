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
  EXPECT_TRUE(h->mma && a->mma);
  EXPECT_EQ(h->mma->name, "mma.sync.m16n8k16");
  EXPECT_EQ(h->mma->k, 16);
  EXPECT_TRUE(h->bulk_tensor_copy && h->warpgroup_mma);
  EXPECT_FALSE(a->bulk_tensor_copy || a->warpgroup_mma);
  ASSERT_TRUE(h->warpgroup_mma);
  EXPECT_EQ(h->warpgroup_mma->warps * h->warp_size, 128); // a warpgroup
  EXPECT_EQ(h->warpgroup_mma->m, 64);
  EXPECT_EQ(h->warpgroup_mma->max_n, 256);
  EXPECT_EQ(h->warpgroup_mma->swizzle_alignment, 1024);
  EXPECT_FALSE(t->mma); // bf16 mma.sync and cp.async need sm_80
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
  EXPECT_FALSE(mi200->async_copy || mi200->bulk_tensor_copy || mi200->warpgroup_mma);
  ASSERT_TRUE(mi200->mma && mi300->mma);
  EXPECT_FALSE(mi100->mma || rdna->mma); // no bf16_1k MFMA there: gemms on FMA
  EXPECT_EQ(mi200->mma->instruction(ScalarType::BF16), "v_mfma_f32_16x16x16bf16_1k");
  EXPECT_EQ(mi200->mma->instruction(ScalarType::F16), "v_mfma_f32_16x16x16f16");
  EXPECT_FALSE(mi200->mma->a_from_accumulator);
  EXPECT_EQ(mi200->mma->accumulator.lanes, 64);
  EXPECT_EQ(mi200->mma->accumulator.registers(), 4);
  // The CUDA instruction's name is as before.
  EXPECT_EQ(cuda_target("sm_80", problem)->mma->instruction(ScalarType::BF16), "mma.sync.m16n8k16.bf16");
  for (const char *bad : {"gfx90", "gfx9", "sm_90a", "gfx90aa", "gfxzzz", "gfx"}) {
    problem.clear();
    EXPECT_FALSE(hip_target(bad, problem)) << bad;
    EXPECT_NE(problem.find("unknown AMD GPU architecture"), std::string::npos) << bad << ": " << problem;
  }
  EXPECT_FALSE(hip_target("gfx803", problem));
  EXPECT_NE(problem.find("not one tile builds for"), std::string::npos) << problem;
  // One source for gfx90a and gfx942 (the same lowering); gfx908 has a class of its own.
  EXPECT_EQ(gpu_arch_classes("hip", {"gfx90a", "gfx908", "gfx942"}),
            (std::vector<std::vector<std::string>>{{"gfx90a", "gfx942"}, {"gfx908"}}));
  EXPECT_EQ(common_gpu_target("hip", {"gfx90a", "gfx942"}).name(), "hip:gfx90a+gfx942");
  EXPECT_EQ(default_gpu_archs("hip"), (std::vector<std::string>{"gfx90a"}));
}

TEST(Target, CommonTargetIsWhatAllShare) {
  Target both = common_cuda_target({"sm_90a", "sm_80"});
  EXPECT_EQ(both.name(), "cuda:sm_90a+sm_80");
  EXPECT_TRUE(both.mma);
  EXPECT_FALSE(both.warpgroup_mma); // sm_80 has none
  EXPECT_EQ(both.max_shared_bytes, 163 * 1024);
  EXPECT_FALSE(common_cuda_target({"sm_90a", "sm_75"}).mma);
  EXPECT_EQ(default_cuda_archs(), (std::vector<std::string>{"sm_90a", "sm_80"}));
  EXPECT_EQ(cpu_target().name(), "cpu");
  EXPECT_FALSE(cpu_target().mma);
}

} // namespace
} // namespace tile::ir
