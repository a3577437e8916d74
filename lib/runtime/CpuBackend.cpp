#include "runtime/CpuBackend.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/CpuAbi.h"
#include "runtime/ThreadPool.h"

namespace tile::runtime {

namespace {

constexpr std::size_t alignment = 64;

/// A loaded image. The memfd stays open while the object is loaded: glibc identifies loaded
/// objects by path, and a reused descriptor number would make dlopen return the old image.
struct CpuModule {
  void *handle;
  int fd;
};

/// What the blocks of one launch share: the first failure wins.
struct LaunchState {
  std::atomic<bool> failed{false};
  std::string message; // written once, by the block that set `failed`
};

/// The context of one block; ctx.self points back at it.
struct BlockContext {
  tile_cpu_context ctx;
  LaunchState *state;
  std::int64_t block;
  const std::int64_t *grid;
};

std::string block_coordinates(std::int64_t block, const std::int64_t *grid) {
  std::string s = "block (" + std::to_string(block % grid[0]);
  if (grid[1] > 1 || grid[2] > 1)
    s += ", " + std::to_string(block / grid[0] % grid[1]);
  if (grid[2] > 1)
    s += ", " + std::to_string(block / (grid[0] * grid[1]));
  return s + ")";
}

/// Records the first failure of a launch. Called from generated code, so it never throws.
void record_failure(BlockContext &b, const char *message) noexcept {
  if (b.state->failed.exchange(true, std::memory_order_acq_rel))
    return;
  try {
    b.state->message = block_coordinates(b.block, b.grid) + ": " +
                       (message && *message ? message : "device_assert failed");
  } catch (...) {
    // Out of memory while formatting: the launch still fails, with a generic message.
  }
}

void tile_cpu_fail(tile_cpu_context *ctx, const char *message) {
  record_failure(*static_cast<BlockContext *>(ctx->self), message);
}

std::string errno_text(const char *what) {
  return std::string(what) + ": " + std::strerror(errno);
}

/// Writes all of `size` bytes to `fd`.
bool write_all(int fd, const char *data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= std::size_t(n);
  }
  return true;
}

} // namespace

std::string CpuBackend::product() const {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const std::size_t colon = line.find(':');
      const std::size_t start = colon == std::string::npos ? line.size() : line.find_first_not_of(' ', colon + 1);
      return start == std::string::npos ? std::string() : line.substr(start);
    }
  return {};
}

void *CpuBackend::allocate(std::size_t bytes) {
  // Exactly `bytes` (posix_memalign, unlike aligned_alloc, takes any size), so that ASan
  // reports an access past the end of an array, however close. An empty allocation still
  // gets a unique pointer so that arrays of no elements behave like any other.
  // No object is larger than PTRDIFF_MAX bytes; asking for more is an error, not a crash
  // (ASan aborts on such requests).
  void *p = nullptr;
  if (bytes > std::size_t(PTRDIFF_MAX) || ::posix_memalign(&p, alignment, bytes == 0 ? 1 : bytes) != 0)
    throw tile::error("out of memory allocating " + std::to_string(bytes) + " bytes");
  return p;
}

void CpuBackend::deallocate(void *p) noexcept {
  std::free(p);
}

void CpuBackend::copy_to_device(void *dst, const void *src, std::size_t bytes) {
  if (bytes)
    std::memcpy(dst, src, bytes);
}

void CpuBackend::copy_to_host(void *dst, const void *src, std::size_t bytes) {
  if (bytes)
    std::memcpy(dst, src, bytes);
}

ModuleHandle CpuBackend::load_module(const void *image, std::size_t size) {
  if (size < 4 || std::memcmp(image,
                              "\x7f"
                              "ELF",
                              4) != 0)
    throw tile::error("the CPU image is not an ELF shared object");
  int fd = ::memfd_create("tile-cpu-image", MFD_CLOEXEC);
  if (fd < 0)
    throw tile::error("cannot load the CPU image: " + errno_text("memfd_create"));
  if (!write_all(fd, static_cast<const char *>(image), size)) {
    std::string why = errno_text("write");
    ::close(fd);
    throw tile::error("cannot load the CPU image: " + why);
  }
  // Named through the process id, not /proc/self: other processes that read the loaded objects
  // by their names (a sanitizer's symbolizer, a debugger) then find the image.
  std::string path = "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fd);
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = ::dlerror();
    ::close(fd);
    throw tile::error(std::string("cannot load the CPU image: ") + (why ? why : "dlopen failed"));
  }
  return new CpuModule{handle, fd};
}

FunctionHandle CpuBackend::find_function(ModuleHandle module, const std::string &symbol) {
  void *entry = ::dlsym(static_cast<CpuModule *>(module)->handle, symbol.c_str());
  if (!entry)
    throw tile::error("the CPU image has no entry '" + symbol + "'");
  return entry;
}

void CpuBackend::launch(FunctionHandle fn, const LaunchConfig &config, const rt::kernel_arg *args,
                        int) {
  auto entry = reinterpret_cast<tile_cpu_entry>(fn);
  const std::int64_t *grid = config.grid;
  const std::int64_t blocks = grid[0] * grid[1] * grid[2];
  LaunchState state;
  ThreadPool &pool = pool_ ? *pool_ : ThreadPool::global();
  pool.parallel_for(blocks, [&](std::int64_t block) {
    // After a failure, blocks not yet started are skipped, as a GPU trap would.
    if (state.failed.load(std::memory_order_relaxed))
      return;
    BlockContext b{{nullptr, &tile_cpu_fail}, &state, block, grid};
    b.ctx.self = &b;
    try {
      entry(args, block, grid, &b.ctx);
    } catch (...) {
      // Generated code does not throw; C++ linked into an image might. Keep it in the launch.
      record_failure(b, "a C++ exception escaped the kernel");
    }
  });
  if (state.failed.load(std::memory_order_acquire))
    throw tile::error(state.message.empty() ? "device_assert failed" : state.message);
}

CpuBackend &cpu_backend() {
  static CpuBackend *backend =
      new CpuBackend(); // leaked: loaded images live as long as the process
  return *backend;
}

} // namespace tile::runtime
