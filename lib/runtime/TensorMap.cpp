#include "runtime/TensorMap.h"

#include <cstdint>

#include "tile/types.h"

namespace tile::runtime {

namespace {

/// The driver's CUtensorMapDataType for a tile::dtype code, or -1. 8-bit floats travel as
/// bytes (a copy does not look at them).
int data_type(int code) {
  switch (dtype(code)) {
  case dtype::u8:
  case dtype::i8:
  case dtype::b1:
  case dtype::f8e4m3:
  case dtype::f8e5m2: return 0; // UINT8
  case dtype::u16:
  case dtype::i16: return 1; // UINT16
  case dtype::u32: return 2; // UINT32
  case dtype::i32: return 3; // INT32
  case dtype::u64: return 4; // UINT64
  case dtype::i64: return 5; // INT64
  case dtype::f16: return 6; // FLOAT16
  case dtype::f32: return 7; // FLOAT32
  case dtype::f64: return 8; // FLOAT64
  case dtype::bf16: return 9; // BFLOAT16
  }
  return -1;
}

int element_bytes(int code) {
  switch (dtype(code)) {
  case dtype::u8:
  case dtype::i8:
  case dtype::b1:
  case dtype::f8e4m3:
  case dtype::f8e5m2: return 1;
  case dtype::u16:
  case dtype::i16:
  case dtype::f16:
  case dtype::bf16: return 2;
  case dtype::u32:
  case dtype::i32:
  case dtype::f32: return 4;
  case dtype::u64:
  case dtype::i64:
  case dtype::f64: return 8;
  }
  return 0;
}

} // namespace

std::string encode_tensor_map(const rt::kernel_arg &arg, const TensorMapSpec &spec, TensorMapEncoding &out) {
  out = TensorMapEncoding{};
  if (arg.kind != rt::kernel_arg::tensor_arg)
    return "not a tensor";
  const int rank = arg.rank;
  if (rank < 1 || rank > 4 || int(spec.box.size()) != rank)
    return "a box of " + std::to_string(spec.box.size()) + " dimensions for a tensor of rank " + std::to_string(rank);
  const int type = data_type(arg.dtype), e = element_bytes(arg.dtype);
  if (type < 0 || e == 0)
    return "element type " + std::to_string(arg.dtype) + " has no tensor-map type";
  if (spec.swizzle_bytes != 0 && spec.swizzle_bytes != 32 && spec.swizzle_bytes != 64 && spec.swizzle_bytes != 128)
    return "swizzle of " + std::to_string(spec.swizzle_bytes) + " bytes";
  if (reinterpret_cast<std::uintptr_t>(arg.data) % 16 != 0)
    return "its data does not start on a 16-byte boundary";
  if (arg.strides[rank - 1] != 1)
    return "its last dimension is not contiguous (stride " + std::to_string(arg.strides[rank - 1]) + ")";
  out.base = arg.data;
  out.data_type = type;
  out.rank = rank;
  for (int i = 0; i < rank; ++i) {
    const int d = rank - 1 - i; // the driver counts from the innermost dimension
    // (The driver takes up to 2^32; the copies' coordinates are signed 32-bit.)
    if (arg.sizes[d] < 1 || arg.sizes[d] > std::int64_t(INT32_MAX))
      return "dimension " + std::to_string(d) + " has " + std::to_string(arg.sizes[d]) +
             " elements (a tensor map here takes 1 to 2^31 - 1)";
    if (spec.box[d] < 1 || spec.box[d] > 256)
      return "a box of " + std::to_string(spec.box[d]) + " in dimension " + std::to_string(d) + " (1 to 256)";
    out.dims[i] = std::uint64_t(arg.sizes[d]);
    out.box[i] = std::uint32_t(spec.box[d]);
    out.element_strides[i] = 1;
    if (i > 0) {
      const std::int64_t bytes = arg.strides[d] * e;
      if (arg.strides[d] < 1 || bytes % 16 != 0 || bytes >= (std::int64_t(1) << 40))
        return "the stride of dimension " + std::to_string(d) + " is " + std::to_string(bytes) +
               " bytes (a tensor map takes positive multiples of 16 below 2^40)";
      out.strides_bytes[i - 1] = std::uint64_t(bytes);
    }
  }
  const std::int64_t inner_bytes = spec.box[rank - 1] * e;
  if (inner_bytes % 16 != 0)
    return "the box's rows are " + std::to_string(inner_bytes) + " bytes (a multiple of 16)";
  if (spec.swizzle_bytes != 0 && inner_bytes > spec.swizzle_bytes)
    return "the box's rows are " + std::to_string(inner_bytes) + " bytes, more than its " +
           std::to_string(spec.swizzle_bytes) + "-byte swizzle";
  out.swizzle = spec.swizzle_bytes == 0 ? 0 : spec.swizzle_bytes == 32 ? 1 : spec.swizzle_bytes == 64 ? 2 : 3;
  return "";
}

std::string to_string(const TensorMapSpec &spec) {
  std::string s = std::to_string(spec.param) + " " + std::to_string(spec.swizzle_bytes) + " ";
  for (size_t i = 0; i < spec.box.size(); ++i)
    s += (i ? "x" : "") + std::to_string(spec.box[i]);
  return spec.optional ? s + " optional" : s;
}

} // namespace tile::runtime
