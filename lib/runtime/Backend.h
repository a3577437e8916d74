// The interface every device backend implements (CPU, CUDA, HIP).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "runtime/TensorMap.h"
#include "tile/detail/launch.h"
#include "tile/host.h"

namespace tile::runtime {

/// A device image loaded by a backend (CPU: a loaded shared object; CUDA: a CUmodule).
using ModuleHandle = void *;
/// One kernel entry of a loaded image (CPU: the entry's address; CUDA: a CUfunction).
using FunctionHandle = void *;

/// How to run a kernel, besides the function and its arguments.
struct LaunchConfig {
  std::int64_t grid[3]; // every extent positive
  int threads;          // threads per block, from the manifest
  long long shared_bytes; // dynamic shared memory per block, from the manifest
  void *stream;         // the native stream; null: the device's default stream
  /// The tensor maps passed after the arguments (CUDA; bulk tensor copies): `count` blocks
  /// of 128 bytes that encode_tensor_maps() wrote.
  const void *tensor_maps = nullptr;
  int tensor_map_count = 0;
  /// A persistent grid's tile count (zeroed_counter()), passed after the tensor maps (and
  /// the mask of missing ones); null for other kernels.
  void *tile_count = nullptr;
  /// Where the kernel has optional tensor maps: the mask of those not encoded (bit m: map m,
  /// its 128 bytes zero), passed after the maps, before the tile count.
  bool pass_maps_missing = false;
  std::int32_t maps_missing = 0;
  /// > 1: blocks launched in clusters of this many neighbours along x (CUDA; grid[0] a
  /// multiple of it). Backends without clusters launch them one by one.
  int cluster = 0;
};

/// One device: memory, image loading and launches. Methods throw tile::error with the bare
/// cause ("out of memory allocating 64 bytes"); the runtime's API functions add the kernel and
/// device names. Backends live as long as the process and are used from any thread.
class Backend {
public:
  virtual ~Backend() = default;

  /// The device this backend drives.
  virtual tile::device device() const = 0;
  /// The manifest target of the images it runs: "cpu", "cuda" or "hip".
  virtual const char *target() const = 0;
  /// The device's architecture as image manifests name it ("sm_90"); empty when images
  /// of the target run on every device.
  virtual std::string arch() const { return {}; }
  /// What the device is, as its vendor names it ("NVIDIA H200", the CPU's model name);
  /// empty where it cannot be told.
  virtual std::string product() const { return {}; }
  std::string name() const { return device().name(); }

  virtual void *allocate(std::size_t bytes) = 0;
  virtual void deallocate(void *p) noexcept = 0;
  virtual void copy_to_device(void *dst, const void *src, std::size_t bytes) = 0;
  /// Waits for work on the device that may write `src` first.
  virtual void copy_to_host(void *dst, const void *src, std::size_t bytes) = 0;

  /// Loads an image. Its `size` bytes at `image` stay valid for the process's lifetime.
  virtual ModuleHandle load_module(const void *image, std::size_t size) = 0;
  virtual FunctionHandle find_function(ModuleHandle module, const std::string &symbol) = 0;
  /// Runs `fn` over the grid with arguments already checked against its signature.
  virtual void launch(FunctionHandle fn, const LaunchConfig &config, const rt::kernel_arg *args,
                      int nargs) = 0;
  /// Encodes `n` tensor maps into `out` (n blocks of 128 bytes, 64-byte aligned) for
  /// LaunchConfig::tensor_maps; returns why it cannot (empty when it did).
  virtual std::string encode_tensor_maps(const TensorMapEncoding *maps, int n, void *out) {
    (void)maps, (void)n, (void)out;
    return "this device takes no tensor maps";
  }
  /// The device's multiprocessors (a persistent grid launches at most one block each).
  virtual int multiprocessors() const { return 1; }
  /// A 32-bit count in device memory that is zero when work launched next on `stream` runs
  /// (a persistent grid's tiles taken); it stays the launch's while fewer than a thousand
  /// other persistent launches are in flight.
  virtual void *zeroed_counter(void *stream) {
    (void)stream;
    throw tile::error("this device runs no persistent grids");
  }
  /// The most dynamic shared memory a block may have.
  virtual long long max_shared_bytes() const { return std::numeric_limits<long long>::max(); }
  /// Waits for all work launched on the device.
  virtual void synchronize() = 0;
};

/// The device_assert record of a GPU image (tile_gpu::assert_state of
/// targets/common/include/tile_gpu.h), which the CUDA and HIP backends read after a sync.
struct AssertState {
  unsigned failed; // 1: a device_assert; 2: an element access outside its tensor
  int block[3];
  int thread;
  int nvalues;
  long long values[8];
  char kernel[120];
  char message[256];
};
static_assert(sizeof(AssertState) == 464, "the layout of tile_gpu::assert_state");

/// The error a failure recorded in `s` on `device` throws: a failed device_assert, or an
/// element access of a checked build outside its tensor, whose message's `{}`s stand for
/// the recorded values.
inline tile::error assert_failure(AssertState s, const std::string &device) {
  s.kernel[sizeof s.kernel - 1] = s.message[sizeof s.message - 1] = 0;
  std::string message;
  int next = 0;
  for (const char *c = s.message; *c; ++c) {
    if (s.failed == 2 && c[0] == '{' && c[1] == '}' && next < s.nvalues && next < 8) {
      message += std::to_string(s.values[next++]);
      ++c;
    } else {
      message += *c;
    }
  }
  const char *what = s.failed == 2 ? "element access outside its tensor" : "device_assert failed";
  return tile::error("tile kernel '" + std::string(s.kernel) + "' on " + device + ": " + what + " in block (" +
                     std::to_string(s.block[0]) + ", " + std::to_string(s.block[1]) + ", " +
                     std::to_string(s.block[2]) + ") thread " + std::to_string(s.thread) + ": " + message);
}

/// GPU kernels compute a tensor's per-dimension indices in 32 bits (the compiler's
/// IndexWidth::Narrow, for speed): a dimension too long for that is refused at launch, on
/// `target` ("CUDA"). The margin keeps the corners of tiles past a tensor's end, bx * BM,
/// from wrapping too.
inline void check_narrow_extents(const rt::kernel_arg *args, int nargs, const char *target) {
  constexpr std::int64_t max_extent = (std::int64_t(1) << 31) - (std::int64_t(1) << 24);
  for (int i = 0; i < nargs; ++i)
    for (int dim = 0; args[i].kind == rt::kernel_arg::tensor_arg && dim < args[i].rank; ++dim)
      if (args[i].sizes[dim] > max_extent)
        throw tile::error("argument " + std::to_string(i + 1) + " has " + std::to_string(args[i].sizes[dim]) +
                          " elements in dimension " + std::to_string(dim) + "; on " + target +
                          " a tensor dimension holds at most " + std::to_string(max_extent) +
                          " (view the data with more dimensions)");
}

} // namespace tile::runtime
