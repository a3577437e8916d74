#include <cstdlib>
#include <gtest/gtest.h>

#include "runtime/CudaBackend.h"
#include "runtime/Device.h"
#include "runtime/HipBackend.h"
#include "tile/host.h"

namespace tile::runtime {
namespace {

std::string error_of(const char *env) {
  try {
    choose_device(env);
  } catch (const tile::error &e) {
    return e.what();
  }
  return "";
}

TEST(RuntimeDevice, ParsesDeviceNames) {
  EXPECT_EQ(parse_device("cpu"), (device{backend::cpu, 0}));
  EXPECT_EQ(parse_device("cuda"), (device{backend::cuda, 0}));
  EXPECT_EQ(parse_device("cuda:1"), (device{backend::cuda, 1}));
  EXPECT_EQ(parse_device("hip:12"), (device{backend::hip, 12}));
}

TEST(RuntimeDevice, RejectsMalformedNames) {
  for (const char *bad : {"", "gpu", "CPU", " cpu", "cpu ", "cpu:0", "cuda:", "cuda:-1", "cuda:+1",
                          "cuda:1x", "cuda:0:1", "cuda1", "hip:99999999999", "cuda: 1"})
    EXPECT_FALSE(parse_device(bad).has_value()) << bad;
}

TEST(RuntimeDevice, NamesDevices) {
  EXPECT_EQ((device{backend::cpu, 0}).name(), "cpu");
  EXPECT_EQ((device{backend::cuda, 3}).name(), "cuda:3");
  EXPECT_EQ((device{backend::hip, 0}).name(), "hip:0");
  for (const char *name : {"cpu", "cuda:3", "hip:0"})
    EXPECT_EQ(parse_device(name)->name(), name);
}

/// How many CUDA devices this machine has, and why none when it has none.
int gpus(std::string &why) { return cuda_device_count(why); }

TEST(RuntimeDevice, Architectures) {
  EXPECT_EQ((device{backend::cpu, 0}).architecture(), "");
  std::string why;
  if (gpus(why) > 0) {
    const std::string arch = device{backend::cuda, 0}.architecture();
    EXPECT_EQ(arch.rfind("sm_", 0), 0u) << arch;
  } else {
    // No GPU here: asking is an error naming the device.
    try {
      (void)device{backend::cuda, 0}.architecture();
      ADD_FAILURE() << "no error";
    } catch (const tile::error &e) {
      EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos) << e.what();
    }
  }
}

TEST(RuntimeDevice, ChoosesTheFirstGpuElseTheCpu) {
  std::string why;
  const device expected = gpus(why) > 0 ? device{backend::cuda, 0} : device{backend::cpu, 0};
  EXPECT_EQ(choose_device(nullptr), expected);
  EXPECT_EQ(choose_device(""), expected);
  EXPECT_EQ(choose_device("cpu"), (device{backend::cpu, 0}));
}

TEST(RuntimeDevice, ReportsBadTileDeviceValues) {
  std::string garbage = error_of("garbage");
  EXPECT_NE(garbage.find("TILE_DEVICE=garbage"), std::string::npos) << garbage;
  EXPECT_NE(garbage.find("expected cpu, cuda[:N] or hip[:N]"), std::string::npos) << garbage;

  std::string why;
  const int n = gpus(why);
  const std::string missing = "cuda:" + std::to_string(n);
  std::string cuda = error_of(missing.c_str());
  EXPECT_NE(cuda.find("TILE_DEVICE=" + missing), std::string::npos) << cuda;
  // Without GPUs the reason is the driver's; with n GPUs, device n does not exist.
  const std::string reason = n == 0 ? why : "there is no CUDA device " + std::to_string(n);
  EXPECT_FALSE(reason.empty());
  EXPECT_NE(cuda.find(reason), std::string::npos) << cuda;
  // Without AMD GPUs the reason is the HIP backend's (no backend, no library, no device).
  std::string hip_why;
  if (hip_device_count(hip_why) == 0) {
    std::string hip = error_of("hip");
    EXPECT_FALSE(hip_why.empty());
    EXPECT_NE(hip.find("TILE_DEVICE=hip: " + hip_why), std::string::npos) << hip;
  }
}

TEST(RuntimeDevice, SetDeviceRejectsUnavailableDevices) {
  std::string why;
  if (!std::getenv("TILE_DEVICE"))
    EXPECT_EQ(current_device(), gpus(why) > 0 ? (device{backend::cuda, 0}) : (device{backend::cpu, 0}));
  const device before = current_device();
  EXPECT_THROW(set_device(backend::cuda, gpus(why)), tile::error);
  EXPECT_THROW(set_device(backend::cpu, 1), tile::error);
  EXPECT_EQ(current_device(), before);
  set_device(backend::cpu);
  EXPECT_EQ(current_device(), (device{backend::cpu, 0}));
  synchronize();
}

TEST(RuntimeDevice, BackendForNamesTheDevice) {
  EXPECT_EQ(backend_for(device{backend::cpu, 0}).target(), std::string("cpu"));
  std::string why;
  const int n = gpus(why);
  try {
    backend_for(device{backend::cuda, n});
    FAIL() << "expected tile::error";
  } catch (const tile::error &e) {
    const std::string expected = "cuda:" + std::to_string(n) + ": " + (n == 0 ? why : "there is no CUDA device");
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace tile::runtime
