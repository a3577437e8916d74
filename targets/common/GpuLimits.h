// What a GPU block can hold, per architecture (CUDA and HIP), and the check of a lowered
// kernel against it: a kernel that needs more shared memory than its architectures give a block, or more
// per-thread storage than can be compiled well, is an error at the kernel, not a launch
// failure (or a device compiler that never finishes) later.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace tile::targets {

/// Dynamic shared memory a block of `arch` ("sm_90a", "gfx90a") of target `kind` ("cuda",
/// "hip") may use, in bytes.
std::int64_t shared_memory_limit(const std::string &kind, const std::string &arch);

/// Per-thread storage (fragments in registers and local buffers) beyond which a kernel is
/// refused: a thread has 255 registers; past a few KiB its arrays live in local memory, and
/// past this the unrolled per-thread code is too large to compile.
inline constexpr std::int64_t thread_storage_limit = 16 * 1024;

/// Bytes of the per-thread arrays (fragments in registers, local buffers) of a lowered
/// kernel, all counted as if they lived at once (an upper bound), and the largest of them.
struct ThreadStorage {
  std::int64_t bytes = 0, largest = 0;
  std::string largest_name;
};
ThreadStorage thread_storage(const ir::Kernel &kernel);

struct LimitProblem {
  std::string message, note;
  /// A warning: the kernel fits some of the architectures (and will launch only there).
  bool warning = false;
};

/// One kernel as one architecture class lowered it: `shared_bytes` of dynamic shared memory
/// on each of `archs`.
struct KernelBuild {
  const ir::Kernel *kernel;
  std::int64_t shared_bytes;
  std::vector<std::string> archs;
};

/// What a kernel (lowered by the `kind` pipeline once per architecture class, `builds`)
/// needs beyond what a block can have: an error when no architecture can run it, a warning
/// naming those that cannot when others can.
/// `other_target`: the build has another GPU target that runs the kernel (CUDA, for HIP's
/// 64 KiB of LDS): a kernel no architecture of `kind` can run is a warning then.
std::vector<LimitProblem> check_limits(const std::string &kind, const std::vector<KernelBuild> &builds,
                                       bool other_target = false);

} // namespace tile::targets
