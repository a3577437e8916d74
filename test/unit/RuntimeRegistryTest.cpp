#include <gtest/gtest.h>

#include "runtime/Registry.h"
#include "tile/host.h"

namespace tile::runtime {
namespace {

const char image_bytes[] = "not loaded by these tests";

TEST(RuntimeRegistry, FindsRegisteredKernels) {
  Registry r;
  r.add_image("tile-image 1\ntarget cpu\nkernel _Z1kv k_entry 64 t0x1 k(tensor)\n", image_bytes,
              sizeof image_bytes);
  std::optional<Registry::Lookup> k = r.find("_Z1kv", "cpu");
  ASSERT_TRUE(k);
  ASSERT_NE(k->kernel, nullptr);
  EXPECT_EQ(k->kernel->symbol, "k_entry");
  EXPECT_EQ(k->display_name, "k(tensor)");
  EXPECT_TRUE(k->conflict.empty());
  EXPECT_FALSE(r.find("_Z1jv", "cpu"));
}

TEST(RuntimeRegistry, KeepsTheFirstOfDuplicates) {
  Registry r;
  const char *first = "tile-image 1\ntarget cpu\nkernel _Z1kv first 64 t0x1 k\n";
  const char *second = "tile-image 1\ntarget cpu\nkernel _Z1kv second 128 t0x1 k again\n";
  r.add_image(first, image_bytes, sizeof image_bytes);
  r.add_image(first, image_bytes, sizeof image_bytes); // the same TU's image twice
  r.add_image(second, image_bytes, sizeof image_bytes);
  std::optional<Registry::Lookup> k = r.find("_Z1kv", "cpu");
  ASSERT_TRUE(k && k->kernel);
  EXPECT_EQ(k->kernel->symbol, "first");
  EXPECT_EQ(k->display_name, "k");
  EXPECT_TRUE(k->conflict.empty());
}

TEST(RuntimeRegistry, BindsOneImagePerTarget) {
  Registry r;
  r.add_image("tile-image 1\ntarget cuda\nkernel _Z1kv k_cuda 128 s0 k\n", image_bytes, 1);
  std::optional<Registry::Lookup> k = r.find("_Z1kv", "cpu");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->kernel, nullptr);
  EXPECT_EQ(k->targets, "cuda");

  r.add_image("tile-image 1\ntarget cpu\nkernel _Z1kv k_cpu 128 s0 k\n", image_bytes, 1);
  k = r.find("_Z1kv", "cpu");
  ASSERT_TRUE(k && k->kernel);
  EXPECT_EQ(k->kernel->symbol, "k_cpu");
  EXPECT_EQ(r.find("_Z1kv", "cuda")->kernel->symbol, "k_cuda");
}

// Images of one target for different architectures (a translation unit whose sm_90a code
// differs from its sm_80 code): each device gets the best fit, machine code of its own
// architecture before code the driver compiles; none that can run is an answer too.
TEST(RuntimeRegistry, ChoosesTheImageOfTheDevicesArchitecture) {
  Registry r;
  static const char generic[] = "generic", hopper[] = "hopper";
  r.add_image("tile-image 2\ntarget cuda\narchs sm_80 compute_80\nkernel _Z1kv k80 128 0 s0 k\n", generic, 1);
  r.add_image("tile-image 2\ntarget cuda\narchs sm_90a\nkernel _Z1kv k90 384 1024 s0 k\n", hopper, 1);
  auto on = [&](const char *arch) { return r.find("_Z1kv", "cuda", arch); };
  ASSERT_TRUE(on("sm_90") && on("sm_90")->kernel);
  EXPECT_EQ(on("sm_90")->kernel->symbol, "k90");
  EXPECT_EQ(on("sm_90")->kernel->threads, 384);
  EXPECT_EQ(on("sm_80")->kernel->symbol, "k80");
  EXPECT_EQ(on("sm_89")->kernel->symbol, "k80"); // compute_80: the driver compiles it
  EXPECT_EQ(on("sm_100")->kernel->symbol, "k80");
  ASSERT_TRUE(on("sm_75"));
  EXPECT_EQ(on("sm_75")->kernel, nullptr);
  EXPECT_TRUE(on("sm_75")->other_archs_only);
  EXPECT_EQ(on("sm_75")->targets, "cuda (sm_80 compute_80), cuda (sm_90a)");
  // A registration order the other way round chooses the same.
  Registry q;
  q.add_image("tile-image 2\ntarget cuda\narchs sm_90a\nkernel _Z1kv k90 384 1024 s0 k\n", hopper, 1);
  q.add_image("tile-image 2\ntarget cuda\narchs sm_80 compute_80\nkernel _Z1kv k80 128 0 s0 k\n", generic, 1);
  EXPECT_EQ(q.find("_Z1kv", "cuda", "sm_90")->kernel->symbol, "k90");
  EXPECT_EQ(q.find("_Z1kv", "cuda", "sm_86")->kernel->symbol, "k80");
  // sm_90a code runs on sm_90 devices only, and compute_90a code is never JIT-compiled
  // for later ones.
  EXPECT_EQ(arch_fit({"sm_90a"}, "sm_100"), 0);
  EXPECT_EQ(arch_fit({"compute_90a"}, "sm_100"), 0);
  EXPECT_EQ(arch_fit({}, "sm_100"), 1);
  EXPECT_EQ(arch_fit({"sm_80"}, ""), 1);
}

TEST(RuntimeRegistry, ReportsSignatureConflicts) {
  Registry r;
  r.add_image("tile-image 1\ntarget cpu\nkernel _Z1kv a 64 t0x1 k\n", image_bytes, 1);
  r.add_image("tile-image 1\ntarget cpu\nkernel _Z1kv b 64 t0x2 k\n", image_bytes, 1);
  std::optional<Registry::Lookup> k = r.find("_Z1kv", "cpu");
  ASSERT_TRUE(k);
  EXPECT_NE(k->conflict.find("t0x1 and t0x2"), std::string::npos) << k->conflict;
}

TEST(RuntimeRegistry, MalformedManifestLeavesTheRegistryUnchanged) {
  Registry r;
  EXPECT_THROW(r.add_image("tile-image 1\ntarget cpu\nkernel _Z1kv a 64 t0x1 k\nkernel _Z1jv\n",
                           image_bytes, 1),
               tile::error);
  EXPECT_FALSE(r.find("_Z1kv", "cpu"));
}

TEST(RuntimeRegistry, RegisterImageRejectsMalformedManifests) {
  try {
    tile::rt::register_image("tile-image 1\nkernel x\n", image_bytes, 1);
    FAIL() << "expected tile::error";
  } catch (const tile::error &e) {
    EXPECT_NE(std::string(e.what()).find("register_image: malformed tile image manifest"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(tile::rt::register_image(nullptr, image_bytes, 1), tile::error);
  EXPECT_THROW(tile::rt::register_image("tile-image 1\ntarget cpu\n", nullptr, 4), tile::error);
}

} // namespace
} // namespace tile::runtime
