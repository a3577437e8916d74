// Entries of the CPU image the runtime tests launch, written by hand against the ABI that
// generated code implements (lib/runtime/CpuAbi.h).
#include <atomic>
#include <cstdint>

#include "runtime/CpuAbi.h"
#include "tile/detail/launch.h"

using tile::rt::kernel_arg;

// add_one(tensor<float, 1> x): each block adds 1 to its 64 elements of x.
extern "C" void tile_test_add_one(const kernel_arg *args, std::int64_t block, const std::int64_t *,
                                  tile_cpu_context *) {
  const kernel_arg &x = args[0];
  float *data = static_cast<float *>(x.data);
  const std::int64_t begin = block * 64;
  const std::int64_t end = begin + 64 < x.sizes[0] ? begin + 64 : x.sizes[0];
  for (std::int64_t i = begin; i < end; ++i)
    data[i * x.strides[0]] += 1.0f;
}

// scale(tensor<float, 2> x, float s): block (bx, by) multiplies x(by, bx) by s.
extern "C" void tile_test_scale(const kernel_arg *args, std::int64_t block,
                                const std::int64_t *grid, tile_cpu_context *) {
  const kernel_arg &x = args[0];
  const std::int64_t bx = block % grid[0], by = block / grid[0];
  float *data = static_cast<float *>(x.data);
  data[by * x.strides[0] + bx * x.strides[1]] *= float(args[1].value.f);
}

// check_positive(int32_t n): block 3 fails a device_assert; the others do nothing.
extern "C" void tile_test_fail(const kernel_arg *, std::int64_t block, const std::int64_t *,
                               tile_cpu_context *ctx) {
  if (block == 3)
    ctx->fail(ctx, "n must be positive");
}

// count(tensor<int64_t, 1> total, tensor<int32_t, 1> seen): counts blocks, marks each one.
extern "C" void tile_test_count(const kernel_arg *args, std::int64_t block, const std::int64_t *,
                                tile_cpu_context *) {
  std::atomic_ref<std::int64_t>(*static_cast<std::int64_t *>(args[0].data))
      .fetch_add(1, std::memory_order_relaxed);
  std::atomic_ref<std::int32_t>(static_cast<std::int32_t *>(args[1].data)[block])
      .fetch_add(1, std::memory_order_relaxed);
}
