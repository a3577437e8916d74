// What a CUDA block can hold, per architecture, and the check of a lowered kernel against
// it: a kernel that needs more shared memory than its architectures give a block, or more
// per-thread storage than can be compiled well, is an error at the kernel, not a launch
// failure (or a device compiler that never finishes) later.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace tile::cuda {

/// Dynamic shared memory a block of `arch` ("sm_90a") may use, in bytes.
std::int64_t shared_memory_limit(const std::string &arch);

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

/// What a kernel (lowered by the CUDA pipeline once per architecture class, `builds`) needs
/// beyond what a block can have: an error when no architecture can run it, a warning naming
/// those that cannot when others can.
std::vector<LimitProblem> check_limits(const std::vector<KernelBuild> &builds);

} // namespace tile::cuda
