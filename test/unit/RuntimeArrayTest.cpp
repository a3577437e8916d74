#include <cstdint>
#include <gtest/gtest.h>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/CudaBackend.h"
#include "tile/tile.h"

namespace {

TEST(RuntimeArray, CopiesRoundTrip) {
  tile::array<float, 2> a({3, 5});
  EXPECT_EQ(a.numel(), 15);
  EXPECT_EQ(a.device(), tile::current_device());
  std::vector<float> host(15);
  std::iota(host.begin(), host.end(), 0.5f);
  a.copy_from(host);
  EXPECT_EQ(a.to_vector(), host);

  tile::tensor<const float, 2> view = a;
  EXPECT_EQ(view.data(), a.data());
  EXPECT_EQ(view.stride(0), 5);
}

TEST(RuntimeArray, RejectsSizeMismatch) {
  tile::array<std::int32_t, 1> a({4});
  std::vector<std::int32_t> three(3);
  try {
    a.copy_from(three);
    FAIL() << "expected tile::error";
  } catch (const tile::error &e) {
    EXPECT_NE(std::string(e.what()).find("3 elements given, the array holds 4"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((tile::array<float, 1>({-1})), tile::error);
}

TEST(RuntimeArray, HandlesBoolAndEmptyArrays) {
  tile::array<bool, 1> flags({3});
  const bool values[] = {true, false, true};
  flags.copy_from(values);
  EXPECT_EQ(flags.to_vector(), (std::vector<bool>{true, false, true}));

  tile::array<double, 2> empty({0, 7});
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_NE(empty.data(), nullptr);
  empty.copy_from(std::vector<double>{});
  EXPECT_TRUE(empty.to_vector().empty());
}

TEST(RuntimeArray, RejectsSizesWhoseElementsOrBytesOverflow) {
  // (2^62 + 1) * 4 elements wrap around to 4, 2^32 * 2^32 to 0, 2^61 doubles' bytes to 0:
  // each would allocate next to nothing for an array that kernels then index in full.
  auto message = [](auto make) {
    try {
      make();
    } catch (const tile::error &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string m = message([] { tile::array<float, 2> a({(1ll << 62) + 1, 4}); });
  EXPECT_NE(m.find("tile::array of sizes (4611686018427387905, 4)"), std::string::npos) << m;
  EXPECT_NE(m.find("overflows 64 bits"), std::string::npos) << m;
  m = message([] { tile::array<float, 2> a({1ll << 32, 1ll << 32}); });
  EXPECT_NE(m.find("(4294967296, 4294967296)"), std::string::npos) << m;
  m = message([] { tile::array<double, 1> a({1ll << 61}); });
  EXPECT_NE(m.find("2305843009213693952 elements of 8 bytes overflow 64 bits"), std::string::npos) << m;
  m = message([] { tile::array<float, 3> a({4, -2, 1}); });
  EXPECT_NE(m.find("(4, -2, 1): negative size"), std::string::npos) << m;
  // Large but representable: the allocation itself fails, as an error.
  m = message([] { tile::array<std::uint8_t, 2> a({1ll << 31, 1ll << 31}); });
  EXPECT_NE(m.find("out of memory"), std::string::npos) << m;
}

TEST(RuntimeTensor, SizesPast32Bits) {
  // A view of memory no kernel touches: only its sizes are read.
  float cell = 0;
  tile::tensor<float, 2> t(&cell, {(1ll << 32) + 512, 3});
  EXPECT_EQ(t.size(0), (1ll << 32) + 512);
  EXPECT_EQ(t.stride(0), 3);
  EXPECT_EQ(t.numel(), ((1ll << 32) + 512) * 3);
  tile::tensor<const float, 1> u(&cell, {(1ll << 31) + 77});
  EXPECT_EQ(u.size(0), (1ll << 31) + 77);
  static_assert(std::is_same_v<decltype(t.size(0)), std::int64_t>);
  static_assert(std::is_same_v<decltype(std::declval<tile::array<float, 1> &>().size(0)), std::int64_t>);
}

TEST(RuntimeArray, MovesOwnership) {
  tile::array<float, 1> a({8});
  float *p = a.data();
  tile::array<float, 1> b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(a.data(), nullptr);
}

TEST(RuntimeMemory, AllocatesAlignedAndUnique) {
  const tile::device cpu{tile::backend::cpu, 0};
  void *zero1 = tile::rt::allocate(cpu, 0);
  void *zero2 = tile::rt::allocate(cpu, 0);
  EXPECT_NE(zero1, nullptr);
  EXPECT_NE(zero1, zero2);
  void *odd = tile::rt::allocate(cpu, 100);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(odd) % 64, 0u);
  for (void *p : {zero1, zero2, odd})
    tile::rt::deallocate(cpu, p);
  tile::rt::deallocate(cpu, nullptr);
  EXPECT_THROW(tile::rt::allocate(cpu, SIZE_MAX - 8), tile::error);
  // CUDA memory where there is a GPU, an error naming the reason where there is none.
  std::string why;
  if (tile::runtime::cuda_device_count(why) > 0) {
    const tile::device gpu{tile::backend::cuda, 0};
    const std::vector<int> host = {1, 2, 3, 4, 5};
    void *p = tile::rt::allocate(gpu, host.size() * sizeof(int));
    EXPECT_NE(p, nullptr);
    tile::rt::copy_to_device(gpu, p, host.data(), host.size() * sizeof(int));
    std::vector<int> back(host.size(), -1);
    tile::rt::copy_to_host(gpu, back.data(), p, back.size() * sizeof(int));
    EXPECT_EQ(back, host);
    tile::rt::deallocate(gpu, p);
  } else {
    try {
      tile::rt::allocate(tile::device{tile::backend::cuda, 0}, 8);
      ADD_FAILURE() << "expected tile::error";
    } catch (const tile::error &e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

TEST(RuntimeNoPlugin, ThrowsTileError) {
  try {
    tile::detail::no_plugin("tile::grid");
    FAIL() << "expected tile::error";
  } catch (const tile::error &e) {
    std::string message = e.what();
    EXPECT_NE(message.find("tile::grid"), std::string::npos) << message;
    EXPECT_NE(message.find("without the tile plugin"), std::string::npos) << message;
    EXPECT_NE(message.find("-fplugin=libtile.so"), std::string::npos) << message;
  }
  // What a kernel body does when its file is built without the plugin.
  EXPECT_THROW(tile::grid(4), tile::error);
}

} // namespace
