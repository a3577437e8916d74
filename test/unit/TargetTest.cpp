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
