/* The ABI between libtile_runtime and the entry points of CPU images.
 *
 * A CPU image is a shared object exporting one entry per kernel:
 *
 *   extern "C" void SYMBOL(const tile::rt::kernel_arg *args, int64_t block,
 *                          const int64_t *grid, struct tile_cpu_context *ctx);
 *
 * It runs the one block whose linear index is `block`, in [0, grid[0] * grid[1] * grid[2])
 * with x fastest: (bx, by, bz) = (block % gx, block / gx % gy, block / (gx * gy)). `args`
 * holds the kernel's parameters in order (the kernel_arg layout of tile/detail/launch.h).
 * The runtime calls entries concurrently from several threads, each on a stack of at least
 * TILE_CPU_MIN_STACK_BYTES (the calling thread of a launch also runs blocks, on its own stack).
 *
 * This header is plain C so that generated code can mirror it exactly.
 */
#ifndef TILE_RUNTIME_CPU_ABI_H
#define TILE_RUNTIME_CPU_ABI_H

#ifdef __cplusplus
#include <cstdint>
#else
#include <stdint.h>
#endif

#define TILE_CPU_MIN_STACK_BYTES (64ull << 20)

struct tile_cpu_context {
  /* Owned by the runtime; entries must not touch it. */
  void *self;
  /* Reports a failed device_assert, or an element access outside its tensor in a checked
   * build. Thread-safe; the launch keeps the first message and throws it once every running
   * block has returned. It returns: after an assert the entry returns, after an access it
   * skips the access and goes on; blocks that have not started yet are skipped. */
  void (*fail)(struct tile_cpu_context *ctx, const char *message);
};

#ifdef __cplusplus
namespace tile::rt {
struct kernel_arg;
}
using tile_cpu_entry = void (*)(const tile::rt::kernel_arg *args, std::int64_t block,
                                const std::int64_t *grid, tile_cpu_context *ctx);
#endif

#endif /* TILE_RUNTIME_CPU_ABI_H */
