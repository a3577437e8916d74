// Tensor maps for Hopper's bulk tensor copies (TMA): what a kernel asks of one of its tensor
// parameters (the box it copies, the swizzle its shared tile is stored in), whether a
// tensor the user passes at launch can be described to the hardware that way, and the
// fields of the driver's cuTensorMapEncodeTiled for it. A tensor that cannot (a base not
// 16-byte aligned, a stride that is not a multiple of 16 bytes, a last dimension that is not
// contiguous) makes the launch take the kernel's fallback entry, which copies with cp.async:
// decided per launch, never a fault (issue 9; targets/cuda/HOPPER-NOTES.md, sections 6-7).
//
// Everything here is plain arithmetic on the launch's arguments, so it is unit-tested
// without a GPU; CudaBackend makes the driver call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tile/detail/launch.h"

namespace tile::runtime {

/// A kernel's tensor-map parameter: which tensor parameter it describes, the box one copy
/// moves (the tensor's dimensions in order, outermost first: leading 1s for the dimensions
/// a tile does not span), and the shared tile's swizzle (0, 32, 64 or 128 bytes).
struct TensorMapSpec {
  int param = 0;
  std::vector<std::int64_t> box;
  int swizzle_bytes = 0;
  /// The entry runs without it where it cannot be encoded (a bulk store's output): the
  /// launch passes a mask of the missing ones after the maps.
  bool optional = false;
  friend bool operator==(const TensorMapSpec &, const TensorMapSpec &) = default;
};

/// The driver's description of one tensor map, dimensions innermost first as the driver
/// takes them.
struct TensorMapEncoding {
  const void *base = nullptr; // the tensor's first element
  int data_type = 0; // CUtensorMapDataType
  int rank = 0;
  std::uint64_t dims[5] = {};
  std::uint64_t strides_bytes[4] = {}; // of dimensions 1 .. rank - 1
  std::uint32_t box[5] = {};
  std::uint32_t element_strides[5] = {};
  int swizzle = 0; // CUtensorMapSwizzle: 0 none, 1 32B, 2 64B, 3 128B
};

/// Fills `out` for passing `arg` (a tensor argument) through a map of `spec`; returns why it
/// cannot be (empty when it can). `arg` must be the parameter `spec` names.
std::string encode_tensor_map(const rt::kernel_arg &arg, const TensorMapSpec &spec, TensorMapEncoding &out);

/// The manifest spelling of a spec: "1 128 1x64x64" (param, swizzle, box outermost first).
std::string to_string(const TensorMapSpec &spec);

} // namespace tile::runtime
