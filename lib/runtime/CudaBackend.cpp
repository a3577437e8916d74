#include "runtime/CudaBackend.h"

#ifndef TILE_HAVE_CUDA

namespace tile::runtime {
int cuda_device_count(std::string &why) {
  why = "this build of tile has no CUDA backend (it was configured without the CUDA toolkit)";
  return 0;
}
Backend &cuda_backend(int) { throw tile::error("this build of tile has no CUDA backend"); }
} // namespace tile::runtime

#else

#include <cuda.h>
#include <dlfcn.h>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace tile::runtime {

namespace {

/// The driver's entry points, resolved once.
struct Driver {
#define TILE_CUDA_FUNCTIONS(X)                                                                                         \
  X(cuInit, "cuInit")                                                                                                  \
  X(cuDeviceGetCount, "cuDeviceGetCount")                                                                              \
  X(cuDeviceGet, "cuDeviceGet")                                                                                        \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute")                                                                      \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")                                                              \
  X(cuCtxSetCurrent, "cuCtxSetCurrent")                                                                                \
  X(cuCtxSynchronize, "cuCtxSynchronize")                                                                              \
  X(cuMemAlloc, "cuMemAlloc_v2")                                                                                       \
  X(cuMemFree, "cuMemFree_v2")                                                                                         \
  X(cuMemsetD32Async, "cuMemsetD32Async")                                                                              \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2")                                                                                   \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2")                                                                                   \
  X(cuModuleLoadData, "cuModuleLoadData")                                                                              \
  X(cuModuleGetFunction, "cuModuleGetFunction")                                                                        \
  X(cuModuleGetGlobal, "cuModuleGetGlobal_v2")                                                                         \
  X(cuFuncSetAttribute, "cuFuncSetAttribute")                                                                          \
  X(cuLaunchKernel, "cuLaunchKernel")                                                                                  \
  X(cuGetErrorName, "cuGetErrorName")                                                                                  \
  X(cuGetErrorString, "cuGetErrorString")
#define X(name, symbol) decltype(&::name) name = nullptr;
  TILE_CUDA_FUNCTIONS(X)
#undef X
  /// Tensor maps (CUDA 12 drivers and later); null in older ones, whose launches of kernels
  /// with tensor maps take the kernels' fallbacks.
  decltype(&::cuTensorMapEncodeTiled) cuTensorMapEncodeTiled = nullptr;
  /// Launches in clusters (CUDA 12 drivers and later); null in older ones, which launch
  /// blocks one by one (a kernel built for clusters runs so too).
  decltype(&::cuLaunchKernelEx) cuLaunchKernelEx = nullptr;
  decltype(&::cuDeviceGetName) cuDeviceGetName = nullptr; // optional: only names the device
  int count = 0;
  std::string why; // when count is 0
};

const Driver &driver() {
  static const Driver d = [] {
    Driver d;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      d.why = "no CUDA driver: libcuda.so.1 could not be loaded";
      return d;
    }
#define X(name, symbol)                                                                                                \
  d.name = reinterpret_cast<decltype(&::name)>(dlsym(lib, symbol));                                                    \
  if (!d.name) {                                                                                                       \
    d.why = "the CUDA driver has no " symbol "; it is older than this build of tile needs";                           \
    return d;                                                                                                          \
  }
    TILE_CUDA_FUNCTIONS(X)
#undef X
    d.cuTensorMapEncodeTiled =
        reinterpret_cast<decltype(&::cuTensorMapEncodeTiled)>(dlsym(lib, "cuTensorMapEncodeTiled"));
    d.cuLaunchKernelEx = reinterpret_cast<decltype(&::cuLaunchKernelEx)>(dlsym(lib, "cuLaunchKernelEx"));
    d.cuDeviceGetName = reinterpret_cast<decltype(&::cuDeviceGetName)>(dlsym(lib, "cuDeviceGetName"));
    if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
      const char *name = nullptr;
      d.cuGetErrorName(r, &name);
      d.why = std::string("cuInit failed: ") + (name ? name : "unknown error");
      return d;
    }
    if (d.cuDeviceGetCount(&d.count) != CUDA_SUCCESS || d.count == 0) {
      d.count = 0;
      d.why = "the CUDA driver sees no GPU";
    }
    return d;
  }();
  return d;
}


/// Throws tile::error for a failed driver call: "cuLaunchKernel: CUDA_ERROR_...: <text>".
void check(CUresult r, const char *what) {
  if (r == CUDA_SUCCESS)
    return;
  const Driver &d = driver();
  const char *name = nullptr, *text = nullptr;
  d.cuGetErrorName(r, &name);
  d.cuGetErrorString(r, &text);
  throw tile::error(std::string(what) + " failed: " + (name ? name : "unknown error") + (text ? std::string(" (") + text + ")" : ""));
}

class CudaBackend final : public Backend {
public:
  explicit CudaBackend(int index) : index_(index) {
    const Driver &d = driver();
    check(d.cuDeviceGet(&device_, index), "cuDeviceGet");
    check(d.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    check(d.cuDeviceGetAttribute(&max_shared_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device_),
          "cuDeviceGetAttribute");
    int major = 0, minor = 0;
    check(d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_), "cuDeviceGetAttribute");
    check(d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_), "cuDeviceGetAttribute");
    arch_ = "sm_" + std::to_string(major * 10 + minor);
    check(d.cuDeviceGetAttribute(&multiprocessors_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_),
          "cuDeviceGetAttribute");
  }

  tile::device device() const override { return tile::device{tile::backend::cuda, index_}; }
  const char *target() const override { return "cuda"; }
  std::string arch() const override { return arch_; }
  std::string product() const override {
    char name[256] = {};
    if (driver().cuDeviceGetName && driver().cuDeviceGetName(name, sizeof name - 1, device_) == CUDA_SUCCESS)
      return name;
    return {};
  }

  void *allocate(std::size_t bytes) override {
    enter();
    CUdeviceptr p = 0;
    CUresult r = driver().cuMemAlloc(&p, bytes ? bytes : 1); // zero bytes: a unique pointer all the same
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      throw tile::error("out of memory allocating " + std::to_string(bytes) + " bytes");
    check(r, "cuMemAlloc");
    return reinterpret_cast<void *>(p);
  }
  void deallocate(void *p) noexcept override {
    if (!p)
      return;
    // noexcept: a context that is gone (a DLPack consumer freeing at interpreter exit) frees
    // nothing rather than terminating.
    if (driver().cuCtxSetCurrent(context_) == CUDA_SUCCESS)
      driver().cuMemFree(reinterpret_cast<CUdeviceptr>(p));
  }
  void copy_to_device(void *dst, const void *src, std::size_t bytes) override {
    synchronize(); // kernels still reading dst finish first
    if (bytes)
      check(driver().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, bytes), "cuMemcpyHtoD");
  }
  void copy_to_host(void *dst, const void *src, std::size_t bytes) override {
    synchronize(); // kernels on every stream that may write src finish first
    if (bytes)
      check(driver().cuMemcpyDtoH(dst, reinterpret_cast<CUdeviceptr>(src), bytes), "cuMemcpyDtoH");
  }

  ModuleHandle load_module(const void *image, std::size_t) override {
    enter();
    CUmodule m = nullptr;
    check(driver().cuModuleLoadData(&m, image), "cuModuleLoadData");
    CUdeviceptr state = 0;
    size_t bytes = 0;
    if (driver().cuModuleGetGlobal(&state, &bytes, m, "tile_assert_state") == CUDA_SUCCESS &&
        bytes == sizeof(AssertState)) {
      std::lock_guard lock(mutex_);
      assert_states_.push_back(state);
    }
    return m;
  }
  FunctionHandle find_function(ModuleHandle module, const std::string &symbol) override {
    enter();
    CUfunction f = nullptr;
    check(driver().cuModuleGetFunction(&f, static_cast<CUmodule>(module), symbol.c_str()), "cuModuleGetFunction");
    return f;
  }

  void launch(FunctionHandle fn, const LaunchConfig &c, const rt::kernel_arg *args, int nargs) override {
    enter();
    const Driver &d = driver();
    if (c.grid[0] > 0x7fffffff || c.grid[1] > 65535 || c.grid[2] > 65535)
      throw tile::error("grid (" + std::to_string(c.grid[0]) + ", " + std::to_string(c.grid[1]) + ", " +
                        std::to_string(c.grid[2]) + ") exceeds CUDA's limits (2^31 - 1, 65535, 65535)");
    if (c.shared_bytes > max_shared_)
      throw tile::error("a block needs " + std::to_string(c.shared_bytes) + " bytes of shared memory; this GPU has " +
                        std::to_string(max_shared_) + " per block; use smaller tiles");
    check_narrow_extents(args, nargs, "CUDA");
    CUfunction f = static_cast<CUfunction>(fn);
    if (c.shared_bytes > 48 * 1024) {
      // Past 48 KB a kernel must ask for its dynamic shared memory, once per function.
      std::lock_guard lock(mutex_);
      if (raised_.insert(f).second)
        check(d.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(c.shared_bytes)),
              "cuFuncSetAttribute");
    }
    std::vector<void *> params(nargs);
    for (int i = 0; i < nargs; ++i) {
      auto &a = const_cast<rt::kernel_arg &>(args[i]);
      params[i] = a.kind == rt::kernel_arg::tensor_arg ? static_cast<void *>(&a.data) : static_cast<void *>(&a.value);
    }
    // Tensor maps after the arguments, passed by value (128 bytes each), then a persistent
    // grid's count.
    for (int i = 0; i < c.tensor_map_count; ++i)
      params.push_back(const_cast<unsigned char *>(static_cast<const unsigned char *>(c.tensor_maps) + 128 * i));
    std::int32_t missing = c.maps_missing;
    if (c.pass_maps_missing)
      params.push_back(&missing);
    void *count = c.tile_count;
    if (count)
      params.push_back(&count);
    if (c.cluster > 1 && d.cuLaunchKernelEx) {
      CUlaunchAttribute cluster{};
      cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      cluster.value.clusterDim.x = unsigned(c.cluster);
      cluster.value.clusterDim.y = cluster.value.clusterDim.z = 1;
      CUlaunchConfig config{};
      config.gridDimX = unsigned(c.grid[0]);
      config.gridDimY = unsigned(c.grid[1]);
      config.gridDimZ = unsigned(c.grid[2]);
      config.blockDimX = unsigned(c.threads);
      config.blockDimY = config.blockDimZ = 1;
      config.sharedMemBytes = unsigned(c.shared_bytes);
      config.hStream = static_cast<CUstream>(c.stream);
      config.attrs = &cluster;
      config.numAttrs = 1;
      check(d.cuLaunchKernelEx(&config, f, params.data(), nullptr), "cuLaunchKernelEx");
      return;
    }
    check(d.cuLaunchKernel(f, unsigned(c.grid[0]), unsigned(c.grid[1]), unsigned(c.grid[2]), unsigned(c.threads), 1, 1,
                           unsigned(c.shared_bytes), static_cast<CUstream>(c.stream), params.data(), nullptr),
          "cuLaunchKernel");
  }

  std::string encode_tensor_maps(const TensorMapEncoding *maps, int n, void *out) override {
    const Driver &d = driver();
    if (!d.cuTensorMapEncodeTiled)
      return "the CUDA driver has no cuTensorMapEncodeTiled";
    static_assert(sizeof(CUtensorMap) == 128, "a tensor map is 128 bytes");
    for (int i = 0; i < n; ++i) {
      const TensorMapEncoding &e = maps[i];
      CUresult r = d.cuTensorMapEncodeTiled(
          reinterpret_cast<CUtensorMap *>(static_cast<unsigned char *>(out) + 128 * i), CUtensorMapDataType(e.data_type),
          cuuint32_t(e.rank), const_cast<void *>(e.base), reinterpret_cast<const cuuint64_t *>(e.dims),
          reinterpret_cast<const cuuint64_t *>(e.strides_bytes), reinterpret_cast<const cuuint32_t *>(e.box),
          reinterpret_cast<const cuuint32_t *>(e.element_strides), CU_TENSOR_MAP_INTERLEAVE_NONE,
          CUtensorMapSwizzle(e.swizzle), CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
      if (r != CUDA_SUCCESS) {
        const char *name = nullptr;
        d.cuGetErrorName(r, &name);
        return "cuTensorMapEncodeTiled refused " + (n == 1 ? std::string("it") : "tensor map " + std::to_string(i)) +
               " (" + (name ? name : "?") + ")";
      }
    }
    return "";
  }
  long long max_shared_bytes() const override { return max_shared_; }
  int multiprocessors() const override { return multiprocessors_; }
  void *zeroed_counter(void *stream) override {
    enter();
    std::lock_guard lock(mutex_);
    if (!counters_) {
      CUdeviceptr p = 0;
      check(driver().cuMemAlloc(&p, kCounters * sizeof(unsigned)), "cuMemAlloc");
      counters_ = p;
    }
    // A ring: a count is reused a thousand persistent launches later, when the launch that
    // had it is long done (or, on the same stream, certainly done).
    const CUdeviceptr p = counters_ + (next_counter_++ % kCounters) * sizeof(unsigned);
    check(driver().cuMemsetD32Async(p, 0, 1, static_cast<CUstream>(stream)), "cuMemsetD32Async");
    return reinterpret_cast<void *>(p);
  }

  /// Waits for the device, then reports the first failed device_assert of any image.
  void synchronize() override {
    enter();
    const Driver &d = driver();
    check(d.cuCtxSynchronize(), "kernel execution (cuCtxSynchronize)");
    std::vector<CUdeviceptr> states;
    {
      std::lock_guard lock(mutex_);
      states = assert_states_;
    }
    for (CUdeviceptr p : states) {
      unsigned failed = 0;
      check(d.cuMemcpyDtoH(&failed, p, sizeof failed), "cuMemcpyDtoH");
      if (!failed)
        continue;
      AssertState s;
      check(d.cuMemcpyDtoH(&s, p, sizeof s), "cuMemcpyDtoH");
      const unsigned zero = 0;
      check(d.cuMemcpyHtoD(p, &zero, sizeof zero), "cuMemcpyHtoD");
      throw assert_failure(s, device().name());
    }
  }

private:
  /// Makes the device's primary context current on the calling thread.
  void enter() { check(driver().cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }

  int index_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  int max_shared_ = 48 * 1024;
  std::string arch_; // "sm_90"
  std::mutex mutex_;
  std::unordered_set<CUfunction> raised_;
  static constexpr unsigned kCounters = 1024;
  CUdeviceptr counters_ = 0; // persistent grids' tile counts
  unsigned next_counter_ = 0;
  int multiprocessors_ = 1;
  std::vector<CUdeviceptr> assert_states_; // of every loaded image that has one
};

} // namespace

int cuda_device_count(std::string &why) {
  const Driver &d = driver();
  why = d.why;
  return d.count;
}

Backend &cuda_backend(int index) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<CudaBackend>> backends;
  std::lock_guard lock(mutex);
  if (index >= int(backends.size()))
    backends.resize(index + 1);
  if (!backends[index])
    backends[index] = std::make_unique<CudaBackend>(index);
  return *backends[index];
}

} // namespace tile::runtime

#endif
