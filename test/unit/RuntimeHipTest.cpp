// The HIP backend's error paths, on a machine without an AMD GPU: a runtime library that is
// missing or lacks a function, one that sees no device, and images it must refuse, through
// a fake libamdhip64 (FakeHipRuntime.cpp); the offload bundle reader; and what a GPU launch's recorded failure says.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <gtest/gtest.h>
#include <string>

#include "runtime/Backend.h"
#include "runtime/HipBackend.h"

using namespace tile::runtime;

namespace {

/// An offload bundle with one entry per id (and a host entry), each holding `body`.
std::string bundle(const std::vector<std::string> &ids, const std::string &body = "code") {
  std::vector<std::string> all = {"host-x86_64-unknown-linux--"};
  all.insert(all.end(), ids.begin(), ids.end());
  std::string header = "__CLANG_OFFLOAD_BUNDLE__";
  auto u64 = [](std::string &s, std::uint64_t v) { s.append(reinterpret_cast<const char *>(&v), 8); };
  std::size_t size = header.size() + 8;
  for (auto &id : all)
    size += 24 + id.size();
  u64(header, all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    u64(header, size + i * body.size());
    u64(header, body.size());
    u64(header, all[i].size());
    header += all[i];
  }
  for (size_t i = 0; i < all.size(); ++i)
    header += body;
  return header;
}

std::string error_of(const std::function<void()> &f) {
  try {
    f();
  } catch (const tile::error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(RuntimeHip, ReadsTheArchitecturesOfAnOffloadBundle) {
  std::string problem;
  const std::string b = bundle({"hipv4-amdgcn-amd-amdhsa--gfx90a", "hipv4-amdgcn-amd-amdhsa--gfx942:xnack-"});
  EXPECT_EQ(hip_image_archs(b.data(), b.size(), problem), (std::vector<std::string>{"gfx90a", "gfx942"}));
  EXPECT_EQ(problem, "");
  const std::string elf = "\x7f" "ELF and more";
  EXPECT_TRUE(hip_image_archs(elf.data(), elf.size(), problem).empty());
  EXPECT_NE(problem.find("does not start with __CLANG_OFFLOAD_BUNDLE__"), std::string::npos) << problem;
  // Cut short anywhere in its header: refused, never read past the end (the entries' code
  // runs past the end too, which the reader checks before it reads an id).
  const std::size_t header = b.size() - 3 * 4;
  for (std::size_t n = 0; n < header; ++n) {
    problem.clear();
    EXPECT_TRUE(hip_image_archs(b.data(), n, problem).empty()) << n;
    EXPECT_FALSE(problem.empty()) << n;
  }
}

#ifdef TILE_FAKE_HIP
/// The libraries these tests load: from the environment where the tests were carried to
/// another machine (the GPU test set's run.sh sets them), else from the build tree.
std::string from_env(const char *name, const char *built) {
  const char *env = std::getenv(name);
  return env && *env ? env : built;
}
std::string fake_hip() { return from_env("TILE_FAKE_HIP", TILE_FAKE_HIP); }
std::string test_image() { return from_env("TILE_TEST_IMAGE", TILE_TEST_IMAGE); }

TEST(RuntimeHip, AMissingLibraryIsAReason) {
  std::string why;
  EXPECT_EQ(load_hip_runtime("/nonexistent/libamdhip64.so", why), nullptr);
  EXPECT_NE(why.find("no HIP runtime: /nonexistent/libamdhip64.so could not be loaded"), std::string::npos) << why;
  why.clear();
  EXPECT_EQ(load_hip_runtime(test_image(), why), nullptr); // a library without HIP's functions
  EXPECT_NE(why.find("has no hipInit"), std::string::npos) << why;
}

TEST(RuntimeHip, NoDeviceIsAReason) {
  setenv("FAKE_HIP_INIT_FAILS", "1", 1);
  std::string why;
  auto rt = load_hip_runtime(fake_hip(), why);
  unsetenv("FAKE_HIP_INIT_FAILS");
  ASSERT_NE(rt, nullptr) << why;
  EXPECT_EQ(hip_runtime_device_count(*rt, why), 0);
  EXPECT_EQ(why, "the HIP runtime found no usable AMD GPU (hipInit: hipErrorInvalidDevice)");
  setenv("FAKE_HIP_DEVICES", "0", 1);
  rt = load_hip_runtime(fake_hip(), why);
  ASSERT_NE(rt, nullptr) << why;
  EXPECT_EQ(hip_runtime_device_count(*rt, why), 0);
  EXPECT_EQ(why, "the HIP runtime sees no AMD GPU");
}

TEST(RuntimeHip, RefusesImagesItCannotRun) {
  setenv("FAKE_HIP_DEVICES", "1", 1);
  std::string why;
  auto rt = load_hip_runtime(fake_hip(), why);
  ASSERT_NE(rt, nullptr) << why;
  ASSERT_EQ(hip_runtime_device_count(*rt, why), 1);
  auto backend = make_hip_backend(rt, 0);
  EXPECT_EQ(backend->arch(), "gfx90a");
  EXPECT_STREQ(backend->target(), "hip");
  EXPECT_EQ(backend->max_shared_bytes(), 65536);
  static const std::string garbage = "not an image";
  EXPECT_EQ(error_of([&] { backend->load_module(garbage.data(), garbage.size()); }),
            "the image is not a HIP code object bundle: it does not start with __CLANG_OFFLOAD_BUNDLE__");
  static const std::string other = bundle({"hipv4-amdgcn-amd-amdhsa--gfx942"});
  EXPECT_EQ(error_of([&] { backend->load_module(other.data(), other.size()); }),
            "the image has code for gfx942, not for this gfx90a (build with -fplugin-arg-tile-targets=hip:gfx90a)");
  // The runtime's own refusal, with its name for it.
  static const std::string ours = bundle({"hipv4-amdgcn-amd-amdhsa--gfx90a"});
  EXPECT_EQ(error_of([&] { backend->load_module(ours.data(), ours.size()); }),
            "hipModuleLoadData failed: hipErrorInvalidImage (fake HIP runtime)");
  EXPECT_EQ(error_of([&] { backend->allocate(64); }), "out of memory allocating 64 bytes");
  unsetenv("FAKE_HIP_DEVICES");
}
#endif

// What a GPU launch's recorded failure says (the layout tile_gpu.h's assert_state shares
// with the CUDA and HIP backends): a failed device_assert keeps its message as written; an
// element access of a checked build outside its tensor fills the message's {}s with the
// recorded index and sizes.
TEST(RuntimeGpuFailure, DescribesAssertsAndOutOfRangeAccesses) {
  AssertState s{};
  s.failed = 1;
  s.block[0] = 3;
  s.thread = 17;
  std::snprintf(s.kernel, sizeof s.kernel, "k<1>");
  std::snprintf(s.message, sizeof s.message, "x is {} positive (a.cpp:3)");
  EXPECT_EQ(std::string(assert_failure(s, "GPU 0").what()),
            "tile kernel 'k<1>' on GPU 0: device_assert failed in block (3, 0, 0) thread 17: x is {} positive (a.cpp:3)");

  s.failed = 2;
  s.nvalues = 4;
  const long long values[] = {9, -2, 9, 40};
  std::copy(values, values + 4, s.values);
  std::snprintf(s.message, sizeof s.message, "element ({}, {}) of tensor 'Y' is outside its sizes ({}, {}) (a.cpp:5)");
  EXPECT_EQ(std::string(assert_failure(s, "GPU 0").what()),
            "tile kernel 'k<1>' on GPU 0: element access outside its tensor in block (3, 0, 0) thread 17: "
            "element (9, -2) of tensor 'Y' is outside its sizes (9, 40) (a.cpp:5)");
  // More {}s than values (a message cut short): the rest stay as they are.
  s.nvalues = 1;
  EXPECT_NE(std::string(assert_failure(s, "GPU 0").what()).find("element (9, {}) of tensor 'Y'"), std::string::npos);
}
