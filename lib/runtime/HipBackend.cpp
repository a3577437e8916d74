#include "runtime/HipBackend.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#ifndef TILE_HAVE_HIP

namespace tile::runtime {
struct HipRuntime {};
int hip_device_count(std::string &why) {
  why = "this build of tile has no HIP backend (it was configured without ROCm's HIP headers)";
  return 0;
}
Backend &hip_backend(int) { throw tile::error("this build of tile has no HIP backend"); }
std::shared_ptr<HipRuntime> load_hip_runtime(const std::string &, std::string &why) {
  hip_device_count(why);
  return nullptr;
}
int hip_runtime_device_count(const HipRuntime &, std::string &why) { return hip_device_count(why); }
std::unique_ptr<Backend> make_hip_backend(std::shared_ptr<HipRuntime>, int) {
  throw tile::error("this build of tile has no HIP backend");
}
} // namespace tile::runtime

#else

#include <dlfcn.h>
#include <mutex>
#include <hip/hip_runtime_api.h>

namespace tile::runtime {

/// The runtime's entry points, resolved once per library.
struct HipRuntime {
#define TILE_HIP_FUNCTIONS(X)                                                                                          \
  X(hipInit)                                                                                                           \
  X(hipGetDeviceCount)                                                                                                 \
  X(hipSetDevice)                                                                                                      \
  X(hipDeviceGetAttribute)                                                                                             \
  X(hipGetDeviceProperties)                                                                                            \
  X(hipFree)                                                                                                           \
  X(hipMemcpyHtoD)                                                                                                     \
  X(hipMemcpyDtoH)                                                                                                     \
  X(hipModuleLoadData)                                                                                                 \
  X(hipModuleGetFunction)                                                                                              \
  X(hipModuleGetGlobal)                                                                                                \
  X(hipModuleLaunchKernel)                                                                                             \
  X(hipDeviceSynchronize)                                                                                              \
  X(hipGetErrorName)                                                                                                   \
  X(hipGetErrorString)
#define X(name) decltype(&::name) name = nullptr;
  TILE_HIP_FUNCTIONS(X)
#undef X
  hipError_t (*hipMalloc)(void **, size_t) = nullptr; // (overloaded in C++: a template too)
  void *library = nullptr;
  int count = 0;
  std::string why; // when count is 0
};

std::shared_ptr<HipRuntime> load_hip_runtime(const std::string &library, std::string &why) {
  auto r = std::make_shared<HipRuntime>();
  r->library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!r->library) {
    why = "no HIP runtime: " + library + " could not be loaded (install ROCm's HIP runtime, libamdhip64)";
    return nullptr;
  }
#define X(name)                                                                                                        \
  r->name = reinterpret_cast<decltype(&::name)>(dlsym(r->library, #name));                                             \
  if (!r->name) {                                                                                                      \
    why = "the HIP runtime " + library + " has no " #name "; it is not one this build of tile can use";               \
    return nullptr;                                                                                                    \
  }
  TILE_HIP_FUNCTIONS(X)
#undef X
  r->hipMalloc = reinterpret_cast<decltype(r->hipMalloc)>(dlsym(r->library, "hipMalloc"));
  if (!r->hipMalloc) {
    why = "the HIP runtime " + library + " has no hipMalloc; it is not one this build of tile can use";
    return nullptr;
  }
  // Without an AMD GPU (or its kernel driver) hipInit fails: a runtime with no devices.
  if (hipError_t e = r->hipInit(0); e != hipSuccess) {
    const char *name = r->hipGetErrorName(e);
    r->why = std::string("the HIP runtime found no usable AMD GPU (hipInit: ") + (name ? name : "unknown error") + ")";
    return r;
  }
  if (r->hipGetDeviceCount(&r->count) != hipSuccess || r->count <= 0) {
    r->count = 0;
    r->why = "the HIP runtime sees no AMD GPU";
  }
  return r;
}

int hip_runtime_device_count(const HipRuntime &runtime, std::string &why) {
  why = runtime.why;
  return runtime.count;
}

namespace {

/// The process's runtime: TILE_HIP_LIBRARY, else libamdhip64.so (the development link),
/// else the ROCm 6 and 5 sonames.
const std::shared_ptr<HipRuntime> &process_runtime(std::string &why) {
  static std::string load_why;
  static const std::shared_ptr<HipRuntime> runtime = [] {
    const char *env = std::getenv("TILE_HIP_LIBRARY");
    if (env && *env)
      return load_hip_runtime(env, load_why);
    std::string first_why;
    for (const char *name : {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"}) {
      std::string w;
      if (auto r = load_hip_runtime(name, w))
        return r;
      if (first_why.empty())
        first_why = w;
    }
    load_why = first_why;
    return std::shared_ptr<HipRuntime>();
  }();
  why = load_why;
  return runtime;
}


class HipBackend final : public Backend {
public:
  HipBackend(std::shared_ptr<HipRuntime> runtime, int index) : rt_(std::move(runtime)), index_(index) {
    enter();
    check(rt_->hipDeviceGetAttribute(&max_shared_, hipDeviceAttributeMaxSharedMemoryPerBlock, index),
          "hipDeviceGetAttribute");
    // The architecture from the properties' gcnArchName ("gfx90a:sramecc+:xnack-"), read
    // into room to spare (newer runtimes' structures are larger).
    std::vector<unsigned char> props(sizeof(hipDeviceProp_t) + 4096);
    check(rt_->hipGetDeviceProperties(reinterpret_cast<hipDeviceProp_t *>(props.data()), index),
          "hipGetDeviceProperties");
    const char *name = reinterpret_cast<const char *>(props.data() + offsetof(hipDeviceProp_t, gcnArchName));
    arch_ = std::string(name, strnlen(name, sizeof(hipDeviceProp_t::gcnArchName)));
    arch_ = arch_.substr(0, arch_.find(':'));
    const char *product = reinterpret_cast<const char *>(props.data() + offsetof(hipDeviceProp_t, name));
    product_ = std::string(product, strnlen(product, sizeof(hipDeviceProp_t::name)));
  }

  tile::device device() const override { return tile::device{tile::backend::hip, index_}; }
  const char *target() const override { return "hip"; }
  std::string arch() const override { return arch_; }
  std::string product() const override { return product_; }

  void *allocate(std::size_t bytes) override {
    enter();
    void *p = nullptr;
    hipError_t e = rt_->hipMalloc(&p, bytes ? bytes : 1); // zero bytes: a unique pointer all the same
    if (e == hipErrorOutOfMemory)
      throw tile::error("out of memory allocating " + std::to_string(bytes) + " bytes");
    check(e, "hipMalloc");
    return p;
  }
  void deallocate(void *p) noexcept override {
    if (!p)
      return;
    if (rt_->hipSetDevice(index_) == hipSuccess)
      (void)rt_->hipFree(p);
  }
  void copy_to_device(void *dst, const void *src, std::size_t bytes) override {
    synchronize(); // kernels still reading dst finish first
    if (bytes)
      check(rt_->hipMemcpyHtoD(dst, const_cast<void *>(src), bytes), "hipMemcpyHtoD");
  }
  void copy_to_host(void *dst, const void *src, std::size_t bytes) override {
    synchronize(); // kernels on every stream that may write src finish first
    if (bytes)
      check(rt_->hipMemcpyDtoH(dst, const_cast<void *>(src), bytes), "hipMemcpyDtoH");
  }

  ModuleHandle load_module(const void *image, std::size_t size) override {
    std::string problem;
    const std::vector<std::string> archs = hip_image_archs(image, size, problem);
    if (!problem.empty())
      throw tile::error("the image is not a HIP code object bundle: " + problem);
    bool found = false;
    std::string list;
    for (const std::string &a : archs) {
      found |= a == arch_;
      list += (list.empty() ? "" : ", ") + a;
    }
    if (!found)
      throw tile::error("the image has code for " + (list.empty() ? std::string("no AMD GPU") : list) + ", not for this " +
                        arch_ + " (build with -fplugin-arg-tile-targets=hip:" + arch_ + ")");
    enter();
    hipModule_t m = nullptr;
    check(rt_->hipModuleLoadData(&m, image), "hipModuleLoadData");
    void *state = nullptr;
    size_t bytes = 0;
    if (rt_->hipModuleGetGlobal(&state, &bytes, m, "tile_assert_state") == hipSuccess && bytes == sizeof(AssertState)) {
      std::lock_guard lock(mutex_);
      assert_states_.push_back(state);
    }
    return m;
  }
  FunctionHandle find_function(ModuleHandle module, const std::string &symbol) override {
    enter();
    hipFunction_t f = nullptr;
    check(rt_->hipModuleGetFunction(&f, static_cast<hipModule_t>(module), symbol.c_str()), "hipModuleGetFunction");
    return f;
  }

  void launch(FunctionHandle fn, const LaunchConfig &c, const rt::kernel_arg *args, int nargs) override {
    enter();
    if (c.grid[0] > 0x7fffffff || c.grid[1] > 65535 || c.grid[2] > 65535 ||
        c.grid[0] * std::int64_t(c.threads) > std::int64_t(0xffffffff))
      throw tile::error("grid (" + std::to_string(c.grid[0]) + ", " + std::to_string(c.grid[1]) + ", " +
                        std::to_string(c.grid[2]) + ") of " + std::to_string(c.threads) +
                        " threads exceeds HIP's limits (2^32 - 1 threads along x, 65535 blocks along y and z)");
    if (c.shared_bytes > max_shared_)
      throw tile::error("a block needs " + std::to_string(c.shared_bytes) + " bytes of shared memory (LDS); this " +
                        arch_ + " has " + std::to_string(max_shared_) + " per block; use smaller tiles");
    check_narrow_extents(args, nargs, "HIP");
    std::vector<void *> params(nargs);
    for (int i = 0; i < nargs; ++i) {
      auto &a = const_cast<rt::kernel_arg &>(args[i]);
      params[i] = a.kind == rt::kernel_arg::tensor_arg ? static_cast<void *>(&a.data) : static_cast<void *>(&a.value);
    }
    check(rt_->hipModuleLaunchKernel(static_cast<hipFunction_t>(fn), unsigned(c.grid[0]), unsigned(c.grid[1]),
                                     unsigned(c.grid[2]), unsigned(c.threads), 1, 1, unsigned(c.shared_bytes),
                                     static_cast<hipStream_t>(c.stream), params.data(), nullptr),
          "hipModuleLaunchKernel");
  }
  long long max_shared_bytes() const override { return max_shared_; }

  /// Waits for the device, then reports the first failed device_assert of any image.
  void synchronize() override {
    enter();
    check(rt_->hipDeviceSynchronize(), "kernel execution (hipDeviceSynchronize)");
    std::vector<void *> states;
    {
      std::lock_guard lock(mutex_);
      states = assert_states_;
    }
    for (void *p : states) {
      unsigned failed = 0;
      check(rt_->hipMemcpyDtoH(&failed, p, sizeof failed), "hipMemcpyDtoH");
      if (!failed)
        continue;
      AssertState s;
      check(rt_->hipMemcpyDtoH(&s, p, sizeof s), "hipMemcpyDtoH");
      unsigned zero = 0;
      check(rt_->hipMemcpyHtoD(p, &zero, sizeof zero), "hipMemcpyHtoD");
      throw assert_failure(s, device().name());
    }
  }

private:
  /// Throws tile::error for a failed runtime call: "hipModuleLaunchKernel failed: hipError...: <text>".
  void check(hipError_t e, const char *what) const {
    if (e == hipSuccess)
      return;
    const char *name = rt_->hipGetErrorName(e), *text = rt_->hipGetErrorString(e);
    throw tile::error(std::string(what) + " failed: " + (name ? name : "unknown error") +
                      (text ? std::string(" (") + text + ")" : ""));
  }
  /// Makes the device current on the calling thread.
  void enter() const { check(rt_->hipSetDevice(index_), "hipSetDevice"); }

  std::shared_ptr<HipRuntime> rt_;
  int index_;
  int max_shared_ = 64 * 1024;
  std::string arch_; // "gfx90a"
  std::string product_; // "AMD Instinct MI250X", from the properties' name
  std::mutex mutex_;
  std::vector<void *> assert_states_; // of every loaded image that has one
};

} // namespace

std::unique_ptr<Backend> make_hip_backend(std::shared_ptr<HipRuntime> runtime, int index) {
  return std::make_unique<HipBackend>(std::move(runtime), index);
}

int hip_device_count(std::string &why) {
  const std::shared_ptr<HipRuntime> &r = process_runtime(why);
  return r ? hip_runtime_device_count(*r, why) : 0;
}

Backend &hip_backend(int index) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<Backend>> backends;
  std::lock_guard lock(mutex);
  if (index >= int(backends.size()))
    backends.resize(index + 1);
  if (!backends[index]) {
    std::string why;
    backends[index] = make_hip_backend(process_runtime(why), index);
  }
  return *backends[index];
}

} // namespace tile::runtime

#endif

namespace tile::runtime {

std::vector<std::string> hip_image_archs(const void *image, std::size_t size, std::string &problem) {
  // A clang offload bundle: the magic, the number of entries (u64), then per entry its
  // offset, its size and the length of its id (u64 each) and the id
  // ("hipv4-amdgcn-amd-amdhsa--gfx90a", "...--gfx90a:xnack-", "host-x86_64-...").
  static const char magic[] = "__CLANG_OFFLOAD_BUNDLE__";
  const std::size_t magic_size = sizeof magic - 1;
  const unsigned char *p = static_cast<const unsigned char *>(image);
  std::vector<std::string> archs;
  if (!image || size < magic_size + 8 || std::memcmp(p, magic, magic_size) != 0) {
    problem = "it does not start with " + std::string(magic);
    return archs;
  }
  std::size_t at = magic_size;
  auto u64 = [&](std::uint64_t &v) {
    if (size - at < 8)
      return false;
    std::memcpy(&v, p + at, 8);
    at += 8;
    return true;
  };
  std::uint64_t entries = 0;
  if (!u64(entries) || entries > 4096) {
    problem = "its entry count is damaged";
    return archs;
  }
  for (std::uint64_t i = 0; i < entries; ++i) {
    std::uint64_t offset = 0, bytes = 0, id_size = 0;
    if (!u64(offset) || !u64(bytes) || !u64(id_size) || id_size > size - at || offset > size || bytes > size - offset) {
      problem = "entry " + std::to_string(i) + " runs past the image's end";
      return {};
    }
    const std::string id(reinterpret_cast<const char *>(p + at), id_size);
    at += id_size;
    const std::size_t dashes = id.rfind("--");
    if (id.rfind("hip", 0) != 0 || dashes == std::string::npos)
      continue; // the host's (empty) entry
    std::string arch = id.substr(dashes + 2);
    archs.push_back(arch.substr(0, arch.find(':')));
  }
  return archs;
}

} // namespace tile::runtime
