// Launches through tile::rt::launch, as the plugin's stubs do, of the hand-written CPU image
// built from RuntimeTestImage.cpp.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "tile/tile.h"

namespace {

/// The test image: TILE_TEST_IMAGE in the environment (where the tests were carried to
/// another machine), else where the build put it.
std::string test_image_path() {
  const char *env = std::getenv("TILE_TEST_IMAGE");
  return env && *env ? env : TILE_TEST_IMAGE;
}

const char *const manifest = "tile-image 1\n"
                             "target cpu\n"
                             "kernel _Z7add_oneN4tile6tensorIfLi1EEE tile_test_add_one 64 t0x1 "
                             "add_one(tile::tensor<float, 1>)\n"
                             "kernel _Z5scaleN4tile6tensorIfLi2EEEf tile_test_scale 1 t0x2,s0 "
                             "scale(tile::tensor<float, 2>, float)\n"
                             "kernel _Z14check_positivei tile_test_fail 1 s6 check_positive(int)\n"
                             "kernel _Z5countv tile_test_count 1 t8x1,t6x1 count\n"
                             "kernel _Z7missingv tile_test_missing 1 - missing\n";

const char *const add_one = "_Z7add_oneN4tile6tensorIfLi1EEE";

/// Registers the test image once, from its file's bytes (kept until the process exits, as the
/// plugin's images are).
void register_test_image() {
  static const std::string bytes = [] {
    std::ifstream in(test_image_path(), std::ios::binary);
    EXPECT_TRUE(in) << "cannot read " << test_image_path();
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  static const int once = tile::rt::register_image(manifest, bytes.data(), bytes.size());
  (void)once;
}

/// The message of the tile::error that `f` throws, or "" when it throws none.
template <class F> std::string error_of(F &&f) {
  try {
    f();
  } catch (const tile::error &e) {
    return e.what();
  }
  return "";
}

// Registered before main, as the plugin's static constructors do.
const char static_image[] = "never loaded";
const int static_registration = tile::rt::register_image(
    "tile-image 1\ntarget hip\nkernel _Z11from_staticv from_static 64 - from_static()\n",
    static_image, sizeof static_image);

#define EXPECT_CONTAINS(text, part)                                                                \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "message: " << (text)

class RuntimeLaunch : public ::testing::Test {
protected:
  void SetUp() override { register_test_image(); }
};

TEST_F(RuntimeLaunch, RunsEveryBlockOfTheCpuImage) {
  const int n = 1000; // not a multiple of the 64-element chunk of a block
  tile::array<float, 1> x({n});
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i)
    host[i] = float(i);
  x.copy_from(host);
  tile::rt::launch(add_one, tile::ceildiv(n, 64), 1, 1, tile::tensor<float, 1>(x));
  std::vector<float> out = x.to_vector();
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out[i], float(i) + 1.0f) << "element " << i;
}

TEST_F(RuntimeLaunch, PassesScalarsAndStrides) {
  std::vector<float> host(3 * 8, 2.0f); // a 3x4 view with row stride 8
  tile::tensor<float, 2> x(host.data(), {3, 4}, {8, 1});
  tile::rt::launch("_Z5scaleN4tile6tensorIfLi2EEEf", 4, 3, 1, x, 1.5f, tile::stream());
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 8; ++c)
      EXPECT_EQ(host[r * 8 + c], c < 4 ? 3.0f : 2.0f) << r << ", " << c;
}

TEST_F(RuntimeLaunch, LosesNoBlocks) {
  const int blocks = 10000;
  tile::array<std::int64_t, 1> total({1});
  tile::array<std::int32_t, 1> seen({blocks});
  total.copy_from(std::vector<std::int64_t>{0});
  seen.copy_from(std::vector<std::int32_t>(blocks, 0));
  tile::rt::launch("_Z5countv", 100, 25, 4, tile::tensor<std::int64_t, 1>(total),
                   tile::tensor<std::int32_t, 1>(seen));
  EXPECT_EQ(total.to_vector()[0], blocks);
  EXPECT_EQ(seen.to_vector(), std::vector<std::int32_t>(blocks, 1));
}

TEST_F(RuntimeLaunch, ZeroExtentLaunchesNothing) {
  tile::array<std::int64_t, 1> total({1});
  tile::array<std::int32_t, 1> seen({1});
  total.copy_from(std::vector<std::int64_t>{0});
  tile::rt::launch("_Z5countv", 5, 0, 1, tile::tensor<std::int64_t, 1>(total),
                   tile::tensor<std::int32_t, 1>(seen));
  EXPECT_EQ(total.to_vector()[0], 0);
}

TEST_F(RuntimeLaunch, DeviceAssertFailureBecomesError) {
  std::string message = error_of([] { tile::rt::launch("_Z14check_positivei", 8, 1, 1, 0); });
  EXPECT_CONTAINS(message, "check_positive(int)");
  EXPECT_CONTAINS(message, "on cpu");
  EXPECT_CONTAINS(message, "block (3): n must be positive");
  // The runtime stays usable after a failed launch.
  EXPECT_EQ(error_of([] { tile::rt::launch("_Z14check_positivei", 3, 1, 1, 0); }), "");
}

TEST_F(RuntimeLaunch, UnknownKernel) {
  std::string message = error_of([] { tile::rt::launch("_Z6absentv", 1, 1, 1); });
  EXPECT_CONTAINS(message, "no image of kernel 'absent()' was registered");
  EXPECT_CONTAINS(message, "tile plugin");
  EXPECT_CONTAINS(message, "on cpu");
}

TEST_F(RuntimeLaunch, TakesTheFallbackWhereNoTensorMapCanBeUsed) {
  // A kernel whose own entry takes tensor maps (here a symbol the image does not have) and
  // whose fallback is add_one: a backend that takes no tensor maps (the CPU's) launches the
  // fallback (and says so to the calling thread).
  static const std::string bytes = [] {
    std::ifstream in(test_image_path(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  tile::rt::register_image("tile-image 2\ntarget cpu\nkernel _Z8add_tmapv tile_test_no_such_entry 192 0 t0x1 "
                           "add_tmap\ntmap 0 0 64\nfallback tile_test_add_one 64 0\n",
                           bytes.data(), bytes.size());
  std::vector<float> host(300, 1.0f);
  tile::rt::launch("_Z8add_tmapv", 5, 1, 1, tile::tensor<float, 1>(host.data(), {300}));
  EXPECT_EQ(tile::rt::last_tensor_map_launch(), 0);
  for (int i = 0; i < 300; ++i)
    ASSERT_EQ(host[i], 2.0f) << "element " << i;
  // A kernel without tensor maps resets it.
  tile::rt::launch(add_one, 5, 1, 1, tile::tensor<float, 1>(host.data(), {300}));
  EXPECT_EQ(tile::rt::last_tensor_map_launch(), -1);
}

TEST_F(RuntimeLaunch, RunsTheEntryWithoutAnOptionalTensorMap) {
  // A kernel whose only tensor map is optional (a bulk store's output): where it cannot be
  // encoded (the CPU's backend encodes none), its own entry runs all the same, with the map
  // marked missing, and the calling thread is told (2).
  static const std::string bytes = [] {
    std::ifstream in(test_image_path(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  tile::rt::register_image("tile-image 2\ntarget cpu\nkernel _Z12add_optionalv tile_test_add_one 64 0 t0x1 "
                           "add_optional\ntmap 0 0 64 optional\nfallback tile_test_no_such_entry 64 0\n",
                           bytes.data(), bytes.size());
  std::vector<float> host(300, 1.0f);
  tile::rt::launch("_Z12add_optionalv", 5, 1, 1, tile::tensor<float, 1>(host.data(), {300}));
  EXPECT_EQ(tile::rt::last_tensor_map_launch(), 2);
  for (int i = 0; i < 300; ++i)
    ASSERT_EQ(host[i], 2.0f) << "element " << i;
}

TEST_F(RuntimeLaunch, LoadsAnImageOnceUnderConcurrentFirstLaunches) {
  // A second registration of the same bytes is a separate image, not loaded yet.
  static const std::string bytes = [] {
    std::ifstream in(test_image_path(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  tile::rt::register_image("tile-image 1\ntarget cpu\nkernel _Z9add_againv tile_test_add_one 64 "
                           "t0x1 add_again\n",
                           bytes.data(), bytes.size());
  std::vector<std::vector<float>> data(4, std::vector<float>(300, 1.0f));
  std::vector<std::thread> threads;
  std::vector<std::string> errors(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      errors[t] = error_of([&] {
        for (int round = 0; round < 10; ++round)
          tile::rt::launch("_Z9add_againv", 5, 1, 1, tile::tensor<float, 1>(data[t].data(), {300}));
      });
    });
  for (auto &t : threads)
    t.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(errors[t], "");
    EXPECT_EQ(data[t], std::vector<float>(300, 11.0f));
  }
}

TEST_F(RuntimeLaunch, ImagesRegisteredBeforeMainAreFound) {
  EXPECT_GE(static_registration, 0);
  EXPECT_CONTAINS(error_of([] { tile::rt::launch("_Z11from_staticv", 1, 1, 1); }),
                  "'from_static()' on cpu: no image for target cpu (it has images for hip)");
}

TEST_F(RuntimeLaunch, NoImageForThisTarget) {
  static const char bytes[] = "cuda image";
  tile::rt::register_image("tile-image 1\ntarget cuda\nkernel _Z8gpu_onlyv gpu_only 128 - "
                           "gpu_only()\n",
                           bytes, sizeof bytes);
  std::string message = error_of([] { tile::rt::launch("_Z8gpu_onlyv", 1, 1, 1); });
  EXPECT_CONTAINS(message, "tile kernel 'gpu_only()' on cpu");
  EXPECT_CONTAINS(message, "no image for target cpu (it has images for cuda)");
}

TEST_F(RuntimeLaunch, ArgumentMismatches) {
  std::vector<float> f(10);
  std::vector<double> d(10);
  tile::tensor<float, 1> floats(f.data(), {10});
  tile::tensor<float, 2> matrix(f.data(), {2, 5});
  tile::tensor<double, 1> doubles(d.data(), {10});

  EXPECT_CONTAINS(error_of([&] { tile::rt::launch(add_one, 1, 1, 1); }),
                  "expected 1 arguments, got 0");
  EXPECT_CONTAINS(error_of([&] { tile::rt::launch(add_one, 1, 1, 1, floats, floats); }),
                  "expected 1 arguments, got 2");
  EXPECT_CONTAINS(error_of([&] { tile::rt::launch(add_one, 1, 1, 1, doubles); }),
                  "argument 1: expected tensor<float, 1>, got tensor<double, 1>");
  EXPECT_CONTAINS(error_of([&] { tile::rt::launch(add_one, 1, 1, 1, matrix); }),
                  "expected tensor<float, 1>, got tensor<float, 2>");
  EXPECT_CONTAINS(error_of([&] { tile::rt::launch(add_one, 1, 1, 1, 1.0f); }),
                  "expected tensor<float, 1>, got float");
  EXPECT_CONTAINS(
      error_of([&] { tile::rt::launch("_Z5scaleN4tile6tensorIfLi2EEEf", 1, 1, 1, matrix, 2.0); }),
      "argument 2: expected float, got double");
  std::string message = error_of([&] { tile::rt::launch(add_one, 1, 1, 1, doubles); });
  EXPECT_CONTAINS(message, "tile kernel 'add_one(tile::tensor<float, 1>)' on cpu: ");
}

TEST_F(RuntimeLaunch, BadSizesPointersAndGrids) {
  std::vector<float> f(10);
  tile::tensor<float, 1> negative(f.data(), {-3});
  tile::tensor<float, 1> null_data(nullptr, {10});
  tile::tensor<float, 1> null_empty(nullptr, {0});
  tile::tensor<float, 1> ok(f.data(), {10});
  EXPECT_CONTAINS(error_of([&] { tile::rt::launch(add_one, 1, 1, 1, negative); }),
                  "size 0 is negative (-3)");
  EXPECT_CONTAINS(error_of([&] { tile::rt::launch(add_one, 1, 1, 1, null_data); }),
                  "null data pointer");
  EXPECT_EQ(error_of([&] { tile::rt::launch(add_one, 1, 1, 1, null_empty); }), "");
  EXPECT_CONTAINS(error_of([&] { tile::rt::launch(add_one, -1, 1, 1, ok); }),
                  "negative grid extent (-1, 1, 1)");
  EXPECT_CONTAINS(error_of([&] { tile::rt::launch(add_one, INT64_MAX, 2, 1, ok); }),
                  "too many blocks");
  // Extents past what a kernel's int block index holds, also in a grid of no blocks.
  EXPECT_CONTAINS(error_of([&] { tile::rt::launch(add_one, 1ll << 31, 1, 1, ok); }),
                  "grid extent past 2^31 - 1 (2147483648, 1, 1)");
  EXPECT_CONTAINS(error_of([&] { tile::rt::launch(add_one, 1, 1ll << 32, 0, ok); }),
                  "grid extent past 2^31 - 1 (1, 4294967296, 0)");
}

TEST_F(RuntimeLaunch, ReportsMissingEntries) {
  EXPECT_CONTAINS(error_of([] { tile::rt::launch("_Z7missingv", 1, 1, 1); }),
                  "tile kernel 'missing' on cpu: the CPU image has no entry 'tile_test_missing'");
}

TEST_F(RuntimeLaunch, ReportsImagesThatAreNotSharedObjects) {
  static const char bytes[] = "definitely not ELF";
  tile::rt::register_image("tile-image 1\ntarget cpu\nkernel _Z6brokenv broken 1 - broken\n", bytes,
                           sizeof bytes);
  EXPECT_CONTAINS(error_of([] { tile::rt::launch("_Z6brokenv", 1, 1, 1); }),
                  "tile kernel 'broken' on cpu: the CPU image is not an ELF shared object");
}

} // namespace
