// The launch ABI between code the tile plugin generates and libtile_runtime.
//
// A kernel's body is replaced by `return tile::rt::launch(key, gx, gy, gz, params...)`, and
// each translation unit registers its device images with `tile::rt::register_image`. Both
// are stable entry points: the plugin refers to them by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tile/tensor.h"
#include "tile/types.h"

namespace tile {
class stream;

namespace rt {

/// One kernel parameter as passed to a device image. Layout is part of the ABI: generated
/// CPU code reads it directly (targets/cpu/include/tile_cpu.h declares the same struct).
struct kernel_arg {
  enum kind_t : std::int32_t { tensor_arg = 0, scalar_arg = 1 };
  std::int32_t kind;
  std::int32_t rank;    // tensors: rank; scalars: 0
  std::int32_t dtype;   // tile::dtype code of the element or scalar
  std::int32_t pad_ = 0;
  void *data;           // tensors: base pointer
  std::int64_t sizes[4];
  std::int64_t strides[4];
  union {
    std::int64_t i; // integral and bool scalars, widened
    double f;       // floating scalars, widened
  } value;
};
static_assert(sizeof(kernel_arg) == 96, "kernel_arg layout is part of the launch ABI");

template <class T, int R> kernel_arg make_arg(const tensor<T, R> &t) {
  kernel_arg a{};
  a.kind = kernel_arg::tensor_arg;
  a.rank = R;
  a.dtype = std::int32_t(detail::dtype_of<std::remove_cv_t<T>>::value);
  a.data = const_cast<void *>(static_cast<const void *>(t.data()));
  for (int d = 0; d < R; ++d) {
    a.sizes[d] = t.sizes()[d];
    a.strides[d] = t.strides()[d];
  }
  return a;
}
template <class T>
  requires std::is_arithmetic_v<T>
kernel_arg make_arg(T v) {
  kernel_arg a{};
  a.kind = kernel_arg::scalar_arg;
  a.dtype = std::int32_t(detail::dtype_of<T>::value);
  if constexpr (std::is_floating_point_v<T>)
    a.value.f = double(v);
  else
    a.value.i = std::int64_t(v);
  return a;
}

/// Launches the kernel registered under `key` (its mangled name) on `s` (null: the current
/// stream). Asynchronous; errors throw tile::error.
void launch_packed(const char *key, std::int64_t gx, std::int64_t gy, std::int64_t gz,
                   const kernel_arg *args, int nargs, const tile::stream *s);

namespace detail {
template <class A> constexpr bool is_stream_v = std::is_same_v<std::remove_cvref_t<A>, tile::stream>;
} // namespace detail

/// What a kernel's body becomes. A trailing tile::stream parameter selects the stream.
template <class... A>
void launch(const char *key, std::int64_t gx, std::int64_t gy, std::int64_t gz, const A &...params) {
  constexpr int n = int(sizeof...(A));
  constexpr int nstreams = (0 + ... + int(detail::is_stream_v<A>));
  static_assert(nstreams <= 1, "a kernel takes at most one tile::stream parameter");
  kernel_arg args[n > 0 ? n : 1];
  const tile::stream *s = nullptr;
  int k = 0;
  (
      [&](const A &p) {
        if constexpr (detail::is_stream_v<A>)
          s = &p;
        else
          args[k++] = make_arg(p);
      }(params),
      ...);
  launch_packed(key, gx, gy, gz, args, k, s);
}

/// What a kernel's `tile::expect(condition, message)` becomes in its launch stub: throws
/// tile::error naming `kernel` (its display name), the device, `message` and `where`
/// (file:line) when `condition` is false.
void expect(bool condition, const char *message, const char *kernel, const char *where);

/// On the calling thread, how its last launch ran: 1 a kernel's entry with tensor maps
/// (sm_90a's bulk tensor copies), 2 that entry without an optional map that could not be
/// encoded (a bulk store's output, stored as the copy was written), 0 its fallback (a tensor
/// no tensor map describes, or the device cannot take them), -1 a kernel without tensor maps,
/// or no launch. For tests; TILE_LOG=launches in the environment also prints each fallback
/// and missing map, and why, to stderr.
int last_tensor_map_launch();
/// On the calling thread, the blocks its last launch ran (0: none): the grid's, or fewer for
/// a persistent grid (tile::persistent), whose blocks take the grid's tiles in turn. For tests.
long long last_launch_blocks();
/// On the calling thread, the blocks of each cluster its last launch ran in: 2 where a
/// kernel whose neighbouring blocks share tiles (multicast) ran in clusters of two, 1 for
/// every other launch, 0 for none. For tests; TILE_LOG=launches also prints it.
int last_launch_cluster();

/// Registers one device image of a translation unit. `manifest` lists its kernels (see
/// lib/runtime/Manifest.h); `image` holds `size` bytes. Called by static constructors.
int register_image(const char *manifest, const char *image, std::size_t size);

} // namespace rt
} // namespace tile
