// Tensor maps (lib/runtime/TensorMap.h): which launch arguments a bulk tensor copy can take,
// and the driver's fields for them, checked against cuTensorMapEncodeTiled's documented
// requirements (targets/cuda/HOPPER-NOTES.md, section 6).
#include "runtime/TensorMap.h"

#include <gtest/gtest.h>

namespace {

using tile::runtime::encode_tensor_map;
using tile::runtime::TensorMapEncoding;
using tile::runtime::TensorMapSpec;

alignas(256) unsigned char storage[512];

/// A row-major tensor argument of `sizes` (strides from them) at `offset` bytes into storage.
tile::rt::kernel_arg tensor(tile::dtype type, std::vector<std::int64_t> sizes, std::size_t offset = 0) {
  tile::rt::kernel_arg a{};
  a.kind = tile::rt::kernel_arg::tensor_arg;
  a.rank = int(sizes.size());
  a.dtype = std::int32_t(type);
  a.data = storage + offset;
  std::int64_t stride = 1;
  for (int d = a.rank - 1; d >= 0; --d) {
    a.sizes[d] = sizes[d];
    a.strides[d] = stride;
    stride *= sizes[d];
  }
  return a;
}

TEST(RuntimeTensorMap, AttentionKeysBf16) {
  // K [4, 32, 4096, 128] bf16, a box of 64 keys x 64 columns (one 128-byte slab), swizzled.
  TensorMapEncoding e;
  const tile::rt::kernel_arg keys = tensor(tile::dtype::bf16, {4, 32, 4096, 128});
  EXPECT_EQ(encode_tensor_map(keys, {2, {1, 1, 64, 64}, 128}, e), "");
  EXPECT_EQ(e.base, keys.data);
  EXPECT_EQ(e.data_type, 9);
  EXPECT_EQ(e.rank, 4);
  EXPECT_EQ(e.dims[0], 128u);
  EXPECT_EQ(e.dims[1], 4096u);
  EXPECT_EQ(e.dims[2], 32u);
  EXPECT_EQ(e.dims[3], 4u);
  EXPECT_EQ(e.strides_bytes[0], 256u);
  EXPECT_EQ(e.strides_bytes[1], 4096u * 256);
  EXPECT_EQ(e.strides_bytes[2], 32u * 4096 * 256);
  EXPECT_EQ(e.box[0], 64u);
  EXPECT_EQ(e.box[1], 64u);
  EXPECT_EQ(e.box[2], 1u);
  EXPECT_EQ(e.box[3], 1u);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(e.element_strides[i], 1u);
  EXPECT_EQ(e.swizzle, 3);
}

TEST(RuntimeTensorMap, Fp8RowsOf128) {
  TensorMapEncoding e;
  EXPECT_EQ(encode_tensor_map(tensor(tile::dtype::f8e4m3, {1000, 4096}), {0, {128, 128}, 128}, e), "");
  EXPECT_EQ(e.data_type, 0);
  EXPECT_EQ(e.strides_bytes[0], 4096u);
  EXPECT_EQ(e.swizzle, 3);
  EXPECT_EQ(encode_tensor_map(tensor(tile::dtype::f32, {100, 64}), {0, {8, 32}, 0}, e), "");
  EXPECT_EQ(e.data_type, 7);
  EXPECT_EQ(e.swizzle, 0);
}

TEST(RuntimeTensorMap, WhatTheHardwareCannotTake) {
  TensorMapEncoding e;
  // A base off a 16-byte boundary (a view that starts one element in).
  EXPECT_EQ(encode_tensor_map(tensor(tile::dtype::bf16, {64, 64}, 2), {0, {64, 64}, 128}, e),
            "its data does not start on a 16-byte boundary");
  // Rows of 1001 bf16: 2002 bytes apart.
  EXPECT_EQ(encode_tensor_map(tensor(tile::dtype::bf16, {64, 1001}), {0, {64, 64}, 128}, e),
            "the stride of dimension 0 is 2002 bytes (a tensor map takes positive multiples of 16 below 2^40)");
  // A last dimension that is not contiguous (a transposed view).
  auto t = tensor(tile::dtype::bf16, {64, 64});
  t.strides[0] = 1;
  t.strides[1] = 64;
  EXPECT_EQ(encode_tensor_map(t, {0, {64, 64}, 128}, e), "its last dimension is not contiguous (stride 64)");
  // Rows of the box wider than the swizzle, a box past 256, a box of the wrong rank.
  EXPECT_EQ(encode_tensor_map(tensor(tile::dtype::bf16, {64, 256}), {0, {64, 128}, 128}, e),
            "the box's rows are 256 bytes, more than its 128-byte swizzle");
  EXPECT_EQ(encode_tensor_map(tensor(tile::dtype::bf16, {512, 64}), {0, {300, 64}, 128}, e),
            "a box of 300 in dimension 0 (1 to 256)");
  EXPECT_EQ(encode_tensor_map(tensor(tile::dtype::bf16, {64, 64}), {0, {64}, 128}, e),
            "a box of 1 dimensions for a tensor of rank 2");
  // Box rows of 12 bytes; a swizzle the hardware does not have; an empty dimension.
  EXPECT_EQ(encode_tensor_map(tensor(tile::dtype::f32, {64, 64}), {0, {8, 3}, 0}, e),
            "the box's rows are 12 bytes (a multiple of 16)");
  EXPECT_EQ(encode_tensor_map(tensor(tile::dtype::f32, {64, 64}), {0, {8, 8}, 16}, e), "swizzle of 16 bytes");
  EXPECT_EQ(encode_tensor_map(tensor(tile::dtype::f32, {0, 64}), {0, {8, 8}, 0}, e),
            "dimension 0 has 0 elements (a tensor map here takes 1 to 2^31 - 1)");
  // Coordinates are signed 32-bit: a dimension of 2^31 elements takes the entry without maps.
  EXPECT_EQ(encode_tensor_map(tensor(tile::dtype::u8, {std::int64_t(1) << 31, 16}), {0, {8, 16}, 0}, e),
            "dimension 0 has 2147483648 elements (a tensor map here takes 1 to 2^31 - 1)");
  tile::rt::kernel_arg scalar{};
  scalar.kind = tile::rt::kernel_arg::scalar_arg;
  EXPECT_EQ(encode_tensor_map(scalar, {0, {8, 8}, 0}, e), "not a tensor");
}

TEST(RuntimeTensorMap, ManifestSpelling) {
  EXPECT_EQ(to_string(TensorMapSpec{1, {1, 64, 64}, 128}), "1 128 1x64x64");
}

} // namespace
