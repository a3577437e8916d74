#include "targets/common/GpuLimits.h"

#include <algorithm>
#include <map>

#include "ir/Target.h"
#include "ir/Visitor.h"

namespace tile::targets {

std::int64_t shared_memory_limit(const std::string &kind, const std::string &arch) {
  std::string problem;
  auto t = ir::gpu_target(kind, arch, problem);
  return t ? t->max_shared_bytes : 48 * 1024;
}

ThreadStorage thread_storage(const ir::Kernel &kernel) {
  ThreadStorage t;
  ir::for_each_node(kernel.body, nullptr, [&](const ir::Stmt &s) {
    auto d = s->as<ir::DeclBufferNode>();
    if (!d || d->buffer->scope != ir::Scope::Local)
      return;
    const std::int64_t bytes = d->buffer->num_elements() * ir::bytes(d->buffer->dtype);
    t.bytes += bytes;
    if (bytes > t.largest) {
      t.largest = bytes;
      t.largest_name = d->buffer->name;
    }
  });
  return t;
}

std::vector<LimitProblem> check_limits(const std::string &kind, const std::vector<KernelBuild> &builds,
                                       bool other_target) {
  std::vector<LimitProblem> problems;
  if (builds.empty())
    return problems;
  const std::string name = "tile kernel '" + builds.front().kernel->display_name + "'";
  const std::string fewer = "use smaller tiles, or fewer stages in tile::pipelined (each stage holds another copy "
                            "of the tiles its loop copies into shared memory)";
  std::string too_small, largest_arch, fitting_arch;
  std::int64_t largest = 0, largest_needs = 0, too_small_needs = 0, fitting = 0;
  bool fits_one = false;
  ThreadStorage storage;
  for (const KernelBuild &b : builds) {
    for (const std::string &arch : b.archs) {
      const std::int64_t limit = shared_memory_limit(kind, arch);
      if (limit > largest) {
        largest = limit;
        largest_arch = arch;
        largest_needs = b.shared_bytes;
      }
      if (b.shared_bytes > limit) {
        too_small += (too_small.empty() ? "" : ", ") + arch + " (" + std::to_string(limit) + ")";
        too_small_needs = std::max(too_small_needs, b.shared_bytes);
      } else {
        fits_one = true;
        if (limit > fitting) { // the note names an architecture the kernel fits
          fitting = limit;
          fitting_arch = arch;
        }
      }
    }
    const ThreadStorage t = thread_storage(*b.kernel);
    if (t.bytes > storage.bytes)
      storage = t;
  }
  if (!fits_one && other_target)
    problems.push_back({name + " needs " + std::to_string(largest_needs) + " bytes of shared memory per block; " +
                            largest_arch + " gives a block at most " + std::to_string(largest) +
                            ": it will not launch on " + kind + " devices",
                        "choose tiles that fit " + kind + " devices in host code "
                        "(tile::current_device().architecture() names the device's architecture)",
                        /*warning=*/true});
  else if (!fits_one)
    problems.push_back({name + " needs " + std::to_string(largest_needs) + " bytes of shared memory per block; " +
                            largest_arch + " gives a block at most " + std::to_string(largest),
                        fewer});
  else if (!too_small.empty())
    problems.push_back({name + " needs " + std::to_string(too_small_needs) +
                            " bytes of shared memory per block, more than a block may have on " + too_small +
                            ": it will not launch there",
                        "build for the other architectures only (-fplugin-arg-tile-targets=" + kind + ":" + fitting_arch +
                            "), or " + fewer,
                        /*warning=*/true});
  if (storage.bytes > thread_storage_limit)
    problems.push_back({name + " needs " + std::to_string(storage.bytes) +
                            " bytes of registers and local memory per thread ('" + storage.largest_name +
                            "' alone " + std::to_string(storage.largest) + "); tile refuses more than " +
                            std::to_string(thread_storage_limit),
                        "fragments are spread over the block's threads: use smaller tiles or more threads "
                        "(tile::threads(n)), and keep large tiles in tile::shared"});
  return problems;
}

} // namespace tile::targets
