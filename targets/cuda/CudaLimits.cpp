#include "targets/cuda/CudaLimits.h"

#include <algorithm>
#include <map>

#include "ir/Visitor.h"

namespace tile::cuda {

std::int64_t shared_memory_limit(const std::string &arch) {
  // The largest dynamic shared memory per block (CUDA programming guide, compute
  // capabilities table), by compute capability.
  std::string digits;
  for (char c : arch)
    if (c >= '0' && c <= '9')
      digits += c;
  const int cc = digits.empty() ? 0 : std::stoi(digits);
  if (cc >= 120)
    return 99 * 1024;
  if (cc >= 90)
    return 227 * 1024; // sm_90, sm_100, sm_103
  if (cc == 80 || cc == 87)
    return 163 * 1024;
  if (cc == 86 || cc == 89)
    return 99 * 1024;
  if (cc == 75)
    return 64 * 1024;
  return 48 * 1024;
}

std::vector<LimitProblem> check_limits(const ir::Kernel &kernel, std::int64_t shared_bytes,
                                       const std::vector<std::string> &archs) {
  std::vector<LimitProblem> problems;
  const std::string name = "tile kernel '" + kernel.display_name + "'";
  for (const std::string &arch : archs) {
    const std::int64_t limit = shared_memory_limit(arch);
    if (shared_bytes <= limit)
      continue;
    problems.push_back({name + " needs " + std::to_string(shared_bytes) + " bytes of shared memory per block; " +
                            arch + " gives a block at most " + std::to_string(limit),
                        "use smaller tiles, or fewer stages in tile::pipelined (each stage holds another copy "
                        "of the tiles its loop copies into shared memory)"});
    break; // one message: the archs share the source
  }
  // Per-thread arrays, all counted as if they lived at once (an upper bound).
  std::int64_t thread_bytes = 0, largest = 0;
  std::string largest_name;
  ir::for_each_node(kernel.body, nullptr, [&](const ir::Stmt &s) {
    auto d = s->as<ir::DeclBufferNode>();
    if (!d || d->buffer->scope != ir::Scope::Local)
      return;
    const std::int64_t bytes = d->buffer->num_elements() * ir::bytes(d->buffer->dtype);
    thread_bytes += bytes;
    if (bytes > largest) {
      largest = bytes;
      largest_name = d->buffer->name;
    }
  });
  if (thread_bytes > thread_storage_limit)
    problems.push_back({name + " needs " + std::to_string(thread_bytes) +
                            " bytes of registers and local memory per thread ('" + largest_name + "' alone " +
                            std::to_string(largest) + "); tile refuses more than " +
                            std::to_string(thread_storage_limit),
                        "fragments are spread over the block's threads: use smaller tiles or more threads "
                        "(tile::threads(n)), and keep large tiles in tile::shared"});
  return problems;
}

} // namespace tile::cuda
