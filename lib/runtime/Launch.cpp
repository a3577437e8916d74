// tile::rt::launch_packed: finds a kernel's image for the current device, checks the
// arguments against the manifest's signature, and hands the launch to the backend.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>
#include <memory>
#include <string>

#include "runtime/Device.h"
#include "runtime/Registry.h"
#include "tile/detail/launch.h"
#include "tile/host.h"

namespace tile::runtime {

namespace {

/// A readable name for a kernel that is not registered: its demangled key.
std::string demangle(const char *key) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(key, nullptr, nullptr, &status), &std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(key);
}

[[noreturn]] void fail(std::string_view kernel, const tile::device &d, const std::string &cause) {
  throw tile::error("tile kernel '" + std::string(kernel) + "' on " + d.name() + ": " + cause);
}

std::string describe_arg(const rt::kernel_arg &a) {
  if (a.kind == rt::kernel_arg::tensor_arg)
    return describe(ParamSignature{true, a.dtype, a.rank});
  if (a.kind == rt::kernel_arg::scalar_arg)
    return describe(ParamSignature{false, a.dtype, 0});
  return "an argument of unknown kind " + std::to_string(a.kind);
}

/// Why `args` cannot be passed to `k`, or an empty string when they can.
std::string check_arguments(const KernelInfo &k, const rt::kernel_arg *args, int nargs) {
  if (nargs != int(k.params.size()))
    return "expected " + std::to_string(k.params.size()) + " arguments, got " +
           std::to_string(nargs);
  if (nargs > 0 && !args)
    return "null argument array";
  for (int i = 0; i < nargs; ++i) {
    const ParamSignature &p = k.params[i];
    const rt::kernel_arg &a = args[i];
    const std::string which = "argument " + std::to_string(i + 1);
    const bool is_tensor = a.kind == rt::kernel_arg::tensor_arg;
    if ((a.kind != rt::kernel_arg::tensor_arg && a.kind != rt::kernel_arg::scalar_arg) ||
        is_tensor != p.is_tensor || a.dtype != p.dtype || (is_tensor && a.rank != p.rank))
      return which + ": expected " + describe(p) + ", got " + describe_arg(a);
    if (!is_tensor)
      continue;
    bool empty = false;
    for (int d = 0; d < a.rank; ++d) {
      if (a.sizes[d] < 0)
        return which + " (" + describe(p) + "): size " + std::to_string(d) + " is negative (" +
               std::to_string(a.sizes[d]) + ")";
      empty |= a.sizes[d] == 0;
    }
    if (!empty && !a.data)
      return which + " (" + describe(p) + "): null data pointer for a tensor with elements";
  }
  return "";
}

std::string grid_text(std::int64_t gx, std::int64_t gy, std::int64_t gz) {
  return "(" + std::to_string(gx) + ", " + std::to_string(gy) + ", " + std::to_string(gz) + ")";
}

} // namespace

} // namespace tile::runtime

namespace tile::rt {

namespace {
thread_local int last_tensor_map_launch_state = -1;
thread_local long long last_launch_blocks_state = 0;
thread_local int last_launch_cluster_state = 0;

/// TILE_LOG=launches (a comma-separated list that holds it).
bool log_launches() {
  static const bool on = [] {
    const char *v = std::getenv("TILE_LOG");
    if (!v)
      return false;
    const std::string list = std::string(",") + v + ",";
    return list.find(",launches,") != std::string::npos;
  }();
  return on;
}
} // namespace

int last_tensor_map_launch() { return last_tensor_map_launch_state; }
long long last_launch_blocks() { return last_launch_blocks_state; }
int last_launch_cluster() { return last_launch_cluster_state; }

void launch_packed(const char *key, std::int64_t gx, std::int64_t gy, std::int64_t gz,
                   const kernel_arg *args, int nargs, const tile::stream *s) {
  using namespace tile::runtime;
  last_tensor_map_launch_state = -1;
  last_launch_blocks_state = 0;
  last_launch_cluster_state = 0;
  const tile::device dev = tile::current_device();
  if (!key)
    fail("(null)", dev, "null kernel key");
  Backend &backend = backend_for(dev);

  std::optional<Registry::Lookup> found = Registry::global().find(key, backend.target(), backend.arch());
  if (!found) {
    const std::string name = demangle(key);
    fail(name, dev,
         "no image of kernel '" + name +
             "' was registered; was its file built with the tile plugin?");
  }
  if (!found->conflict.empty())
    fail(found->display_name, dev, found->conflict);
  if (!found->kernel && found->other_archs_only)
    fail(found->display_name, dev,
         "no image for this device's architecture " + backend.arch() + " (it has images for " + found->targets +
             "); build its file with " + backend.target() + ":" + backend.arch() + " in -fplugin-arg-tile-targets=");
  if (!found->kernel)
    fail(found->display_name, dev,
         "no image for target " + std::string(backend.target()) + " (it has images for " +
             found->targets + "); build its file with " + backend.target() +
             " in -fplugin-arg-tile-targets=");
  const KernelInfo &kernel = *found->kernel;
  if (std::string why = check_arguments(kernel, args, nargs); !why.empty())
    fail(found->display_name, dev, why);
  if (gx < 0 || gy < 0 || gz < 0)
    fail(found->display_name, dev, "negative grid extent " + grid_text(gx, gy, gz));
  std::int64_t blocks = 0;
  if (__builtin_mul_overflow(gx, gy, &blocks) || __builtin_mul_overflow(blocks, gz, &blocks))
    fail(found->display_name, dev, "grid " + grid_text(gx, gy, gz) + " has too many blocks");
  // Block indices are ints in kernels; a larger extent would wrap them around.
  if (gx > INT32_MAX || gy > INT32_MAX || gz > INT32_MAX)
    fail(found->display_name, dev,
         "grid extent past 2^31 - 1 " + grid_text(gx, gy, gz) + "; use larger tiles or a loop inside each block");
  if (blocks == 0)
    return;

  LaunchConfig config{{gx, gy, gz}, kernel.threads, kernel.shared_bytes, s ? s->native() : nullptr};
  // A kernel with tensor maps runs where every map can describe its tensor (alignment and
  // strides, known only now) and the device can encode them and give the block its shared
  // memory, else its fallback entry, which copies without them.
  struct alignas(64) MapBytes {
    unsigned char bytes[128];
  };
  // An optional map (a bulk store's output) that cannot be encoded does not stop the entry:
  // its bytes stay zero and its bit in the mask passed after the maps says it is missing.
  std::vector<TensorMapEncoding> maps(kernel.tensor_maps.size());
  std::vector<MapBytes> encoded(maps.size());
  std::string why_not, why_missing;
  std::int32_t missing = 0;
  bool any_optional = false;
  if (!maps.empty() && kernel.shared_bytes > backend.max_shared_bytes())
    why_not = "its entry needs " + std::to_string(kernel.shared_bytes) + " bytes of shared memory, more than a block "
              "has here";
  for (size_t i = 0; i < maps.size() && why_not.empty(); ++i) {
    const TensorMapSpec &spec = kernel.tensor_maps[i];
    any_optional |= spec.optional;
    std::string why = encode_tensor_map(args[spec.param], spec, maps[i]);
    if (why.empty())
      why = backend.encode_tensor_maps(&maps[i], 1, &encoded[i]);
    if (why.empty())
      continue;
    why = "argument " + std::to_string(spec.param + 1) + ": " + why;
    if (!spec.optional || i >= 31) {
      why_not = why;
    } else {
      encoded[i] = MapBytes{};
      missing |= std::int32_t(1) << i;
      why_missing = why;
    }
  }
  // A persistent grid counts its tiles in 32 bits (tile_cuda.h's next_tile).
  const std::int64_t resident = kernel.persistent ? std::max(1, backend.multiprocessors()) : 0;
  if (kernel.persistent && why_not.empty() && blocks > INT32_MAX - resident)
    why_not = "its persistent grid counts tiles in 32 bits, and the grid has " + std::to_string(blocks) + " blocks";
  const bool fallback = !why_not.empty();
  last_tensor_map_launch_state = maps.empty() ? -1 : fallback ? 0 : missing ? 2 : 1;
  if (fallback && log_launches())
    std::fprintf(stderr, "tile: %s on %s: its entry without tensor maps runs (%s)\n",
                 std::string(found->display_name).c_str(), dev.name().c_str(), why_not.c_str());
  if (!fallback && missing && log_launches())
    std::fprintf(stderr, "tile: %s on %s: its entry stores without a tensor map of its output (%s)\n",
                 std::string(found->display_name).c_str(), dev.name().c_str(), why_missing.c_str());
  if (fallback) {
    config.threads = kernel.fallback->threads;
    config.shared_bytes = kernel.fallback->shared_bytes;
  } else if (!maps.empty()) {
    config.tensor_maps = encoded.data();
    config.tensor_map_count = int(maps.size());
    config.pass_maps_missing = any_optional;
    config.maps_missing = missing;
  }
  if (!fallback && kernel.persistent) {
    config.grid[0] = std::min(blocks, resident);
    config.grid[1] = config.grid[2] = 1;
  }
  // Two of the grid's blocks a launched block along the paired dimension, where the grid
  // has more blocks than the SMs hold at once (else its entry without pairs).
  const bool paired = !fallback && kernel.launches_paired(blocks, backend.multiprocessors());
  if (paired)
    config.grid[kernel.pair_dim] = (config.grid[kernel.pair_dim] + 1) / 2;
  const bool unpaired = !fallback && kernel.pair_dim >= 0 && !paired;
  if (unpaired) {
    config.threads = kernel.unpaired->threads;
    config.shared_bytes = kernel.unpaired->shared_bytes;
  }
  if (log_launches() && kernel.pair_dim >= 0 && !fallback)
    std::fprintf(stderr, "tile: %s on %s: %s\n", std::string(found->display_name).c_str(), dev.name().c_str(),
                 paired ? ("blocks in pairs (" + std::to_string(blocks) + " blocks)").c_str()
                        : ("blocks one by one (" + std::to_string(blocks) + " blocks: the SMs hold " +
                           std::to_string(kernel.unpaired->blocks_per_sm * backend.multiprocessors()) + " at once)")
                              .c_str());
  if (!fallback && kernel.cluster > 1 && config.grid[0] % kernel.cluster == 0)
    config.cluster = kernel.cluster;
  if (log_launches() && !fallback && kernel.cluster > 1)
    std::fprintf(stderr, "tile: %s on %s: %s\n", std::string(found->display_name).c_str(), dev.name().c_str(),
                 config.cluster > 1 ? ("blocks in clusters of " + std::to_string(config.cluster)).c_str()
                                    : ("blocks one by one (the grid's x extent " + std::to_string(config.grid[0]) +
                                       " is not a multiple of " + std::to_string(kernel.cluster) + ")")
                                          .c_str());
  if (log_launches() && !fallback && kernel.persistent)
    std::fprintf(stderr, "tile: %s on %s: a persistent grid of %lld blocks takes its %lld tiles\n",
                 std::string(found->display_name).c_str(), dev.name().c_str(), (long long)config.grid[0],
                 (long long)blocks);
  try {
    if (!fallback && kernel.persistent)
      config.tile_count = backend.zeroed_counter(config.stream);
    FunctionHandle fn = Registry::global().function(*found->image, kernel, backend,
                                                    fallback   ? Registry::Entry::Fallback
                                                    : unpaired ? Registry::Entry::Unpaired
                                                               : Registry::Entry::Own);
    backend.launch(fn, config, args, nargs);
    last_launch_blocks_state = config.grid[0] * config.grid[1] * config.grid[2];
    last_launch_cluster_state = std::max(1, config.cluster);
  } catch (const tile::error &e) {
    fail(found->display_name, dev, e.what());
  }
}

void expect(bool condition, const char *message, const char *kernel, const char *where) {
  if (condition)
    return;
  runtime::fail(kernel ? kernel : "?", current_device(),
       std::string("expectation failed: ") + (message ? message : "") + (where && *where ? std::string(" (") + where + ")" : ""));
}

} // namespace tile::rt

namespace tile {

// Without the plugin a kernel's statements run on the host as plain C++ (until tile::grid
// says the file was built without the plugin); an expectation is checked all the same.
void expect(bool condition, const char *message) {
  if (!condition)
    throw tile::error(std::string("tile::expect failed: ") + (message ? message : ""));
}

} // namespace tile

namespace tile::detail {

void no_plugin(const char *what) {
  throw tile::error(std::string("tile: ") + (what ? what : "a kernel") +
                    " ran on the host because the kernel's file was compiled without the tile "
                    "plugin; build it with tile-c++ or `clang++ -fplugin=libtile.so`");
}

} // namespace tile::detail
