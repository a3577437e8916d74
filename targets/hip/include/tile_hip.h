// tile's HIP device library: what generated HIP code includes. Self-contained (HIP's own
// headers only). The part the GPU targets share is tile_gpu.h (targets/common/include), for
// which this header defines the HIP port first; then the instructions only AMD GPUs have
// (MFMA). Generated code spells element types tile_hip::bf16 and so on, calls the math and
// atomic functions of tile_gpu.h, and gets its block's indices from block_index().
#pragma once

#include <hip/hip_runtime.h>
#include <stdint.h>

namespace tile_gpu {

/// bfloat16 as its bits: HIP 5.2 has no bf16 type of its own that device code can compute
/// with, and tile converts every value to float (or double) before it computes. The
/// conversions from and to float (round to nearest even) serve the casts generated code
/// writes for constants.
struct bf16 {
  uint16_t bits;
  bf16() = default;
  __device__ explicit bf16(float f);
  __device__ explicit operator float() const;
};
using f16 = _Float16;

namespace port {

template <int N> struct bytes_of;
template <> struct bytes_of<16> { using type = unsigned __attribute__((ext_vector_type(4))); };
template <> struct bytes_of<8> { using type = unsigned __attribute__((ext_vector_type(2))); };
template <> struct bytes_of<4> { using type = unsigned; };
template <> struct bytes_of<2> { using type = unsigned short; };

__host__ __device__ __forceinline__ uint32_t float_bits(float f) { return __builtin_bit_cast(uint32_t, f); }
__host__ __device__ __forceinline__ float bits_float(uint32_t u) { return __builtin_bit_cast(float, u); }

__device__ __forceinline__ float to_float(bf16 v) { return bits_float(uint32_t(v.bits) << 16); }
__device__ __forceinline__ float to_float(f16 v) { return float(v); }
/// Round to nearest even; a NaN stays a (quiet) NaN.
__device__ __forceinline__ bf16 to_bf16(float v) {
  const uint32_t u = float_bits(v);
  bf16 b;
  b.bits = (u & 0x7fffffffu) > 0x7f800000u ? uint16_t((u >> 16) | 0x40u) : uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  return b;
}
/// One correct rounding from double: to float rounding to odd (toward zero, the last bit
/// set where that lost anything), whose extra bits make the rounding to bf16 exact.
__device__ __forceinline__ bf16 to_bf16(double v) {
  float f = float(v);
  if (double(f) != v && f == f) { // inexact (a NaN is neither)
    uint32_t u = float_bits(f);
    if (__builtin_fabs(double(f)) > __builtin_fabs(v)) // rounded away from zero (an overflow too)
      u -= 1;
    f = bits_float(u | 1u);
  }
  return to_bf16(f);
}
__device__ __forceinline__ f16 to_f16(float v) { return f16(v); }
__device__ __forceinline__ f16 to_f16(double v) { return f16(v); }

__device__ __forceinline__ float exp2(float x) { return ::exp2f(x); }

/// A wavefront's lanes exchange through ds_bpermute (or DPP where the compiler sees a
/// pattern); the lanes of a last, partial wavefront exchange among themselves.
template <class T> __device__ __forceinline__ T shfl_xor(T v, int mask) { return __shfl_xor(v, mask, warpSize); }

/// HIP has no atomicMax / atomicMin of long long: a compare-and-swap loop.
/// Returns the value it replaced.
template <bool Max> __device__ long long atomic_minmax_i64(long long *p, long long v) {
  unsigned long long *a = reinterpret_cast<unsigned long long *>(p);
  unsigned long long old = *a, assumed;
  do {
    assumed = old;
    const long long cur = (long long)assumed;
    if (Max ? !(cur < v) : !(v < cur))
      return cur;
    old = atomicCAS(a, assumed, (unsigned long long)v);
  } while (assumed != old);
  return (long long)old;
}
__device__ __forceinline__ long long atomic_max_i64(long long *p, long long v) { return atomic_minmax_i64<true>(p, v); }
__device__ __forceinline__ long long atomic_min_i64(long long *p, long long v) { return atomic_minmax_i64<false>(p, v); }

} // namespace port

__device__ __forceinline__ bf16::bf16(float f) : bits(port::to_bf16(f).bits) {}
__device__ __forceinline__ bf16::operator float() const { return port::to_float(*this); }

} // namespace tile_gpu

#include "tile_gpu.h"

namespace tile_hip {

using namespace tile_gpu;

// ---------------------------------------------------------------------------------------
// Matrix cores (gfx90a, gfx94x): the instructions lower-mma's nodes print as. Which
// registers and addresses each lane passes is decided in the IR (lib/transforms/LowerMma).
// ---------------------------------------------------------------------------------------

/// The operands of an MFMA instruction of four 16-bit elements a lane, as its builtin takes them.
typedef short mfma_bf16x4 __attribute__((ext_vector_type(4)));
typedef _Float16 mfma_f16x4 __attribute__((ext_vector_type(4)));
typedef float mfma_f32x4 __attribute__((ext_vector_type(4)));
typedef unsigned mfma_u32x2 __attribute__((ext_vector_type(2)));

} // namespace tile_hip

/// An MFMA instruction (BUILTIN, the compiler's builtin of it, whose operands are of vector
/// type V) with f32 accumulators d0..d3 of the lane, and the lane's four elements of A and of
/// B each in two 32-bit registers (the first element in the low half of the first). The
/// instruction a gemm runs on is chosen in the IR (lib/transforms/LowerMma), which the
/// codegen prints here.
#define TILE_HIP_MFMA_F32X4(BUILTIN, V, d0, d1, d2, d3, a0, a1, b0, b1)                                             \
  do {                                                                                                            \
    const tile_hip::mfma_u32x2 mfma_a_ = {(a0), (a1)}, mfma_b_ = {(b0), (b1)};                                    \
    tile_hip::mfma_f32x4 mfma_d_ = {(d0), (d1), (d2), (d3)};                                                      \
    mfma_d_ = BUILTIN(__builtin_bit_cast(V, mfma_a_), __builtin_bit_cast(V, mfma_b_), mfma_d_, 0, 0, 0);         \
    (d0) = mfma_d_[0];                                                                                            \
    (d1) = mfma_d_[1];                                                                                            \
    (d2) = mfma_d_[2];                                                                                            \
    (d3) = mfma_d_[3];                                                                                            \
  } while (0)

