// tile's GPU device library: the part its GPU targets share (CUDA and HIP), included by
// each target's own header (targets/cuda/include/tile_cuda.h, targets/hip/include/tile_hip.h)
// after it has defined the port, the few things the two toolchains spell differently:
//
//   tile_gpu::bf16, tile_gpu::f16                       the 16-bit float types
//   port::to_float(bf16 | f16), port::to_bf16(float | double), port::to_f16(float | double)
//                                                       conversions, one correct rounding
//   port::float_bits, port::bits_float                  a float's bits and back
//   port::exp2(float)                                   the fast base-2 exponential
//   port::shfl_xor(v, mask)                             a butterfly step within the warp
//   port::bytes_of<N>::type                             N bytes moved as one access
//   port::atomic_max_i64, port::atomic_min_i64          on 64-bit signed integers, giving the old value
//
// The target's namespace (tile_cuda, tile_hip) then takes everything here with a using
// directive, so that generated code spells tile_cuda::bf16 or tile_hip::bf16 alike.
#pragma once

namespace tile_gpu {

// ---------------------------------------------------------------------------------------
// The launch ABI (lib/runtime/CudaBackend.cpp, HipBackend.cpp): a tensor parameter arrives as
// this struct (the tail of tile::rt::kernel_arg from `data` on), a scalar as int64_t or double.
// ---------------------------------------------------------------------------------------

struct tensor_arg {
  void *data;
  int64_t sizes[4];
  int64_t strides[4];
};

/// N bytes moved as one access (vector loads and stores of consecutive elements).
template <int N> using bytes = typename port::bytes_of<N>::type;

struct block3 {
  int64_t x, y, z;
};

/// The tile indices of the launch's block (hx, hy, hz). With `panel` > 1 (tile::use_swizzle)
/// blocks are rasterized in panels of `panel` rows, alternate panels walking columns
/// backwards, as on the CPU.
__device__ __forceinline__ block3 block_index_of(int64_t panel, int64_t hx, int64_t hy, int64_t hz) {
  const int64_t gx = gridDim.x, gy = gridDim.y;
  block3 b;
  b.z = hz;
  if (panel <= 1 || gy <= 1) {
    b.x = hx;
    b.y = hy;
    return b;
  }
  const int64_t xy = hy * gx + hx;
  const int64_t panel_blocks = panel * gx;
  const int64_t p = xy / panel_blocks, offset = xy % panel_blocks;
  const int64_t rows = (p + 1) * panel <= gy ? panel : gy - p * panel; // the last panel may be short
  const int64_t column = offset / rows;
  b.x = (p & 1) ? gx - 1 - column : column;
  b.y = p * panel + offset % rows;
  return b;
}
/// This block's tile indices.
__device__ __forceinline__ block3 block_index(int64_t panel) {
  return block_index_of(panel, blockIdx.x, blockIdx.y, blockIdx.z);
}

// ---------------------------------------------------------------------------------------
// Element types (bf16 and f16: the port's)
// ---------------------------------------------------------------------------------------

namespace detail {

__host__ __device__ __forceinline__ uint32_t float_bits(float f) { return port::float_bits(f); }
__host__ __device__ __forceinline__ float bits_float(uint32_t u) { return port::bits_float(u); }

// The minifloat conversions of the host types (include/tile/types.h): `E` exponent and `M`
// mantissa bits, round to nearest even; `Ieee` selects infinities (e5m2), otherwise (e4m3fn)
// the all-ones pattern is the only NaN and overflow gives NaN. Bit for bit the same results
// as the host and the CPU target.
template <int E, int M, bool Ieee> __device__ uint32_t encode_minifloat(float f) {
  const uint32_t u = float_bits(f);
  const uint32_t sign = (u >> 31) << (E + M);
  const uint32_t abs = u & 0x7fffffffu;
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr uint32_t exp_all = (1u << E) - 1;
  constexpr uint32_t nan_bits = Ieee ? ((exp_all << M) | (1u << (M - 1))) : ((exp_all << M) | ((1u << M) - 1));
  constexpr uint32_t overflow_bits = Ieee ? (exp_all << M) : nan_bits;
  constexpr uint32_t max_bits = Ieee ? (((exp_all - 1) << M) | ((1u << M) - 1)) : ((exp_all << M) | ((1u << M) - 2));
  if (abs > 0x7f800000u)
    return sign | nan_bits;
  if (abs == 0x7f800000u)
    return sign | overflow_bits;
  const int exp = int(abs >> 23) - 127;
  const uint32_t mant = (abs & 0x7fffffu) | (abs >= 0x00800000u ? 0x800000u : 0u);
  const int target_exp = exp + bias;
  const int shift = target_exp <= 0 ? 23 - M + (1 - target_exp) : 23 - M;
  if (shift > 31)
    return sign;
  const uint32_t lsb = (mant >> shift) & 1u, round_bits = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
  uint32_t result = target_exp <= 0 ? mant >> shift : (uint32_t(target_exp) << M) | ((mant >> shift) & ((1u << M) - 1));
  if (round_bits > half || (round_bits == half && lsb))
    result += 1;
  if (result > max_bits)
    return sign | overflow_bits;
  return sign | result;
}

template <int E, int M, bool Ieee> __device__ float decode_minifloat(uint32_t v) {
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr uint32_t exp_all = (1u << E) - 1;
  const uint32_t sign = (v >> (E + M)) & 1u, exp = (v >> M) & exp_all, mant = v & ((1u << M) - 1);
  float mag;
  if (Ieee && exp == exp_all)
    mag = mant ? __int_as_float(0x7fc00000) : __int_as_float(0x7f800000);
  else if (!Ieee && exp == exp_all && mant == (1u << M) - 1)
    mag = __int_as_float(0x7fc00000);
  else if (exp == 0)
    mag = float(mant) * bits_float(uint32_t(127 - bias - M + 1) << 23);
  else
    mag = bits_float((uint32_t(int(exp) - bias + 127) << 23) | (mant << (23 - M)));
  return sign ? -mag : mag;
}

} // namespace detail

/// OCP FP8 E4M3 ("fn": no infinities; overflow and NaN give NaN).
struct f8e4m3 {
  uint8_t bits;
  f8e4m3() = default;
  __device__ f8e4m3(float f) : bits(uint8_t(detail::encode_minifloat<4, 3, false>(f))) {}
  __device__ operator float() const { return detail::decode_minifloat<4, 3, false>(bits); }
};

/// OCP FP8 E5M2 (IEEE-style infinities and NaNs).
struct f8e5m2 {
  uint8_t bits;
  f8e5m2() = default;
  __device__ f8e5m2(float f) : bits(uint8_t(detail::encode_minifloat<5, 2, true>(f))) {}
  __device__ operator float() const { return detail::decode_minifloat<5, 2, true>(bits); }
};

template <class A, class B> struct same { static constexpr bool value = false; };
template <class A> struct same<A, A> { static constexpr bool value = true; };
template <class T> struct extended {
  static constexpr bool value = same<T, bf16>::value || same<T, f16>::value || same<T, f8e4m3>::value ||
                                same<T, f8e5m2>::value;
};

// Float -> integer conversion: saturate_cast<To>(x).
#define TILE_SCALAR_FN __device__ __forceinline__
#include "tile_scalar.h"
#undef TILE_SCALAR_FN

namespace detail {
template <class T> __device__ __forceinline__ float to_float(T v) {
  if constexpr (same<T, bf16>::value || same<T, f16>::value)
    return port::to_float(v);
  else
    return float(v);
}
/// One correct rounding from any type: 32-bit integers and double go through double
/// (exact), 64-bit integers through float as on the CPU, minifloats through float (exact).
template <class T> __device__ __forceinline__ bf16 to_bf16(T v) {
  if constexpr (same<T, float>::value || same<T, double>::value)
    return port::to_bf16(v);
  else if constexpr (extended<T>::value)
    return port::to_bf16(to_float(v));
  else if constexpr (sizeof(T) <= 4)
    return port::to_bf16(double(v));
  else
    return port::to_bf16(float(v));
}
template <class T> __device__ __forceinline__ f16 to_f16(T v) {
  if constexpr (same<T, float>::value || same<T, double>::value)
    return port::to_f16(v);
  else if constexpr (extended<T>::value)
    return port::to_f16(to_float(v));
  else if constexpr (sizeof(T) <= 4)
    return port::to_f16(double(v));
  else
    return port::to_f16(float(v));
}
} // namespace detail

/// A conversion where either side is an extended float.
template <class To, class From> __device__ __forceinline__ To cvt(From v) {
  if constexpr (same<To, From>::value)
    return v;
  else if constexpr (same<To, bf16>::value)
    return detail::to_bf16(v);
  else if constexpr (same<To, f16>::value)
    return detail::to_f16(v);
  else if constexpr (extended<To>::value) // fp8
    return To(extended<From>::value ? detail::to_float(v) : float(v));
  else if constexpr (same<To, bool>::value)
    return detail::to_float(v) != 0.0f;
  else if constexpr (extended<From>::value && !same<To, float>::value && !same<To, double>::value)
    return saturate_cast<To>(detail::to_float(v)); // to an integer type
  else
    return To(detail::to_float(v));
}

// ---------------------------------------------------------------------------------------
// Math (the IR computes in float or double only)
// ---------------------------------------------------------------------------------------

__device__ __forceinline__ float exp(float x) { return ::expf(x); }
__device__ __forceinline__ double exp(double x) { return ::exp(x); }
__device__ __forceinline__ float exp2(float x) { return port::exp2(x); }
__device__ __forceinline__ double exp2(double x) { return ::exp2(x); }
__device__ __forceinline__ float log(float x) { return ::logf(x); }
__device__ __forceinline__ double log(double x) { return ::log(x); }
__device__ __forceinline__ float log2(float x) { return ::log2f(x); }
__device__ __forceinline__ double log2(double x) { return ::log2(x); }
__device__ __forceinline__ float sqrt(float x) { return ::sqrtf(x); }
__device__ __forceinline__ double sqrt(double x) { return ::sqrt(x); }
__device__ __forceinline__ float rsqrt(float x) { return ::rsqrtf(x); }
__device__ __forceinline__ double rsqrt(double x) { return ::rsqrt(x); }
__device__ __forceinline__ float tanh(float x) { return ::tanhf(x); }
__device__ __forceinline__ double tanh(double x) { return ::tanh(x); }
__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + ::expf(-x)); }
__device__ __forceinline__ double sigmoid(double x) { return 1.0 / (1.0 + ::exp(-x)); }
__device__ __forceinline__ float fma(float a, float b, float c) { return ::fmaf(a, b, c); }
__device__ __forceinline__ double fma(double a, double b, double c) { return ::fma(a, b, c); }
__device__ __forceinline__ float fmod(float a, float b) { return ::fmodf(a, b); }
__device__ __forceinline__ double fmod(double a, double b) { return ::fmod(a, b); }
__device__ __forceinline__ float round(float x) { return ::roundf(x); }
__device__ __forceinline__ double round(double x) { return ::round(x); }
__device__ __forceinline__ float floor(float x) { return ::floorf(x); }
__device__ __forceinline__ double floor(double x) { return ::floor(x); }
__device__ __forceinline__ float ceil(float x) { return ::ceilf(x); }
__device__ __forceinline__ double ceil(double x) { return ::ceil(x); }
__device__ __forceinline__ float trunc(float x) { return ::truncf(x); }
__device__ __forceinline__ double trunc(double x) { return ::trunc(x); }
__device__ __forceinline__ float sin(float x) { return ::sinf(x); }
__device__ __forceinline__ double sin(double x) { return ::sin(x); }
__device__ __forceinline__ float cos(float x) { return ::cosf(x); }
__device__ __forceinline__ double cos(double x) { return ::cos(x); }
__device__ __forceinline__ float erf(float x) { return ::erff(x); }
__device__ __forceinline__ double erf(double x) { return ::erf(x); }
__device__ __forceinline__ float pow(float a, float b) { return ::powf(a, b); }
__device__ __forceinline__ double pow(double a, double b) { return ::pow(a, b); }
__device__ __forceinline__ float log1p(float x) { return ::log1pf(x); }
__device__ __forceinline__ double log1p(double x) { return ::log1p(x); }
__device__ __forceinline__ float expm1(float x) { return ::expm1f(x); }
__device__ __forceinline__ double expm1(double x) { return ::expm1(x); }
__device__ __forceinline__ bool isnan(float x) { return ::isnan(x); }
__device__ __forceinline__ bool isnan(double x) { return ::isnan(x); }
__device__ __forceinline__ bool isinf(float x) { return ::isinf(x); }
__device__ __forceinline__ bool isinf(double x) { return ::isinf(x); }
template <class T> __device__ __forceinline__ T abs(T x) { return x < T(0) ? T(-x) : x; }
__device__ __forceinline__ float abs(float x) { return ::fabsf(x); }
__device__ __forceinline__ double abs(double x) { return ::fabs(x); }

/// The value of `v` in the lane whose index differs from this one's by the bits of `mask`
/// (a butterfly step). Every thread of the block calls it together; the lanes of a last,
/// partial warp exchange among themselves.
template <class T> __device__ __forceinline__ T shfl_xor(T v, int mask) { return port::shfl_xor(v, mask); }

// min / max: integers compare; floats ignore a NaN operand (fminf / fmaxf).
template <class T> __device__ __forceinline__ T min(T a, T b) { return b < a ? b : a; }
template <class T> __device__ __forceinline__ T max(T a, T b) { return a < b ? b : a; }
__device__ __forceinline__ float min(float a, float b) { return ::fminf(a, b); }
__device__ __forceinline__ float max(float a, float b) { return ::fmaxf(a, b); }
__device__ __forceinline__ double min(double a, double b) { return ::fmin(a, b); }
__device__ __forceinline__ double max(double a, double b) { return ::fmax(a, b); }

// ---------------------------------------------------------------------------------------
// Atomics on global memory: native instructions where the toolchain has them, else a
// compare-and-swap loop on the aligned 32- or 64-bit word that holds the element.
// ---------------------------------------------------------------------------------------

namespace detail {
/// Atomically replaces *p by f(*p) with a compare-and-swap loop; returns the value it
/// replaced.
template <class T, class F> __device__ T atomic_update(T *p, F f) {
  if constexpr (sizeof(T) == 8) {
    unsigned long long *a = reinterpret_cast<unsigned long long *>(p);
    unsigned long long old = *a, assumed;
    T cur;
    do {
      assumed = old;
      T next;
      memcpy(&cur, &assumed, 8);
      next = f(cur);
      unsigned long long bits;
      memcpy(&bits, &next, 8);
      old = atomicCAS(a, assumed, bits);
    } while (assumed != old);
    return cur;
  } else {
    // The element within its aligned 32-bit word (sizeof(T) is 1, 2 or 4).
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    unsigned *word = reinterpret_cast<unsigned *>(addr & ~uintptr_t(3));
    const unsigned shift = unsigned(addr & 3) * 8;
    const unsigned mask = sizeof(T) == 4 ? 0xffffffffu : ((1u << (8 * sizeof(T))) - 1) << shift;
    unsigned old = *word, assumed;
    T cur;
    do {
      assumed = old;
      unsigned field = (assumed & mask) >> shift;
      T next;
      memcpy(&cur, &field, sizeof(T));
      next = f(cur);
      unsigned bits = 0;
      memcpy(&bits, &next, sizeof(T));
      old = atomicCAS(word, assumed, (assumed & ~mask) | ((bits << shift) & mask));
    } while (assumed != old);
    return cur;
  }
}
/// The value an atomic computes with, and back.
template <class T> __device__ __forceinline__ auto arith(T v) {
  if constexpr (extended<T>::value)
    return to_float(v);
  else if constexpr (sizeof(T) < 4)
    return int(v);
  else
    return v;
}
template <class T, class A> __device__ __forceinline__ T from_arith(A a) {
  if constexpr (extended<T>::value)
    return cvt<T>(a);
  else
    return T(a);
}
/// The operand of an atomic on a T, in T's arithmetic type: an f16, bf16 or fp8 target
/// takes the f32 value as it is (one rounding, of the result, as on the CPU), integers
/// are converted to T first.
template <class T, class V> __device__ __forceinline__ auto atomic_operand(V v) {
  if constexpr (extended<T>::value)
    return float(v);
  else
    return arith(T(v));
}
template <class T, class V, class F> __device__ __forceinline__ T atomic_combine(T *p, V v, F combine) {
  return atomic_update(p, [v, combine](T cur) {
    auto a = arith(cur);
    return from_arith<T>(combine(a, decltype(a)(atomic_operand<T>(v))));
  });
}
/// A value's bits, widened (to compare two values bit for bit).
template <class T> __device__ __forceinline__ unsigned long long bits_of(T v) {
  unsigned long long b = 0;
  memcpy(&b, &v, sizeof(T));
  return b;
}
} // namespace detail

// Atomics on a tensor element (relaxed: they order no other memory access); each returns
// the element's value before it.
template <class T, class V> __device__ T atomic_add(T *p, V v) {
  if constexpr (same<T, float>::value || same<T, double>::value || same<T, int32_t>::value ||
                same<T, uint32_t>::value || same<T, unsigned long long>::value)
    return atomicAdd(p, T(v));
  else if constexpr (sizeof(T) == 8 && !same<T, double>::value) // 64-bit integers wrap as unsigned
    return T(atomicAdd(reinterpret_cast<unsigned long long *>(p), (unsigned long long)(T(v))));
  else
    return detail::atomic_combine(p, v, [](auto a, auto b) { return a + b; });
}

template <class T, class V> __device__ T atomic_max(T *p, V v) {
  if constexpr (same<T, int32_t>::value || same<T, uint32_t>::value || same<T, unsigned long long>::value)
    return atomicMax(p, T(v));
  else if constexpr (same<T, int64_t>::value)
    return T(port::atomic_max_i64(reinterpret_cast<long long *>(p), (long long)v));
  else
    return detail::atomic_combine(p, v, [](auto a, auto b) { return max(a, b); });
}

template <class T, class V> __device__ T atomic_min(T *p, V v) {
  if constexpr (same<T, int32_t>::value || same<T, uint32_t>::value || same<T, unsigned long long>::value)
    return atomicMin(p, T(v));
  else if constexpr (same<T, int64_t>::value)
    return T(port::atomic_min_i64(reinterpret_cast<long long *>(p), (long long)v));
  else
    return detail::atomic_combine(p, v, [](auto a, auto b) { return min(a, b); });
}

/// Stores v (converted to T); returns the value it replaced.
template <class T, class V> __device__ T atomic_exchange(T *p, V v) {
  const T next = detail::from_arith<T>(detail::atomic_operand<T>(v));
  return detail::atomic_update(p, [next](T) { return next; });
}

/// Stores v where the element's bits equal those of `expected` (both converted to T);
/// returns the value it found (equal to `expected` where it stored).
template <class T, class E, class V> __device__ T atomic_compare_exchange(T *p, E expected, V v) {
  const T want = detail::from_arith<T>(detail::atomic_operand<T>(expected));
  const T next = detail::from_arith<T>(detail::atomic_operand<T>(v));
  return detail::atomic_update(p, [want, next](T cur) { return detail::bits_of(cur) == detail::bits_of(want) ? next : cur; });
}

/// Two 16-bit values as one 32-bit register, the first in the low half (mma's operand order).
template <class T> __device__ __forceinline__ unsigned pack2(T lo, T hi) {
  unsigned short l, h;
  memcpy(&l, &lo, 2);
  memcpy(&h, &hi, 2);
  return unsigned(l) | (unsigned(h) << 16);
}

// ---------------------------------------------------------------------------------------
// Debugging
// ---------------------------------------------------------------------------------------

/// The first failed tile::device_assert of the image's kernels since the runtime last looked.
/// The runtime (lib/runtime/CudaBackend.cpp, HipBackend.cpp) reads it by name after each
/// synchronization, throws tile::error with what it holds, and clears it; its layout is
/// shared with the runtime.
struct assert_state {
  unsigned failed; // 0: none; 1: a device_assert; 2: an element access outside its tensor
  int block[3];
  int thread;
  int nvalues;     // (failed == 2) the values that stand for the message's `{}`s, in order
  long long values[8];
  char kernel[120];
  char message[256];
};

} // namespace tile_gpu

/// One per image (every generated source includes this header once); not mangled, so the
/// runtime finds it by this name.
__device__ tile_gpu::assert_state tile_assert_state;

namespace tile_gpu {

/// tile::device_assert failed: the first failure of a launch is recorded for the runtime;
/// the generated code then ends the thread (the launch's results are not to be used), and
/// the context stays usable for later launches.
/// Records the first failure of a launch (`kind` as assert_state::failed says).
__device__ __noinline__ void record_failure(unsigned kind, const char *kernel, const char *message,
                                            const long long *values, int nvalues) {
  if (atomicCAS(&tile_assert_state.failed, 0u, kind) != 0u)
    return;
  tile_assert_state.block[0] = int(blockIdx.x);
  tile_assert_state.block[1] = int(blockIdx.y);
  tile_assert_state.block[2] = int(blockIdx.z);
  tile_assert_state.thread = int(threadIdx.x);
  const int kept = nvalues < 8 ? nvalues : 8;
  tile_assert_state.nvalues = kept;
  for (int i = 0; i < kept; ++i)
    tile_assert_state.values[i] = values[i];
  auto copy = [](char *to, const char *from, int n) {
    int i = 0;
    for (; i + 1 < n && from[i]; ++i)
      to[i] = from[i];
    to[i] = 0;
  };
  copy(tile_assert_state.kernel, kernel, int(sizeof tile_assert_state.kernel));
  copy(tile_assert_state.message, message, int(sizeof tile_assert_state.message));
  __threadfence();
}

__device__ __noinline__ void assert_fail(const char *kernel, const char *message) {
  record_failure(1u, kernel, message, nullptr, 0);
}

/// An element access of a checked build (-fplugin-arg-tile-check-bounds): `ok` where the
/// index lies inside the tensor; else the launch's first failure records `message` and
/// `values` (its `{}`s: the index, then the tensor's sizes), and the caller skips the
/// access and goes on (no thread leaves early, so no barrier waits for one).
template <class... V>
__device__ __forceinline__ bool bounds_check(bool ok, const char *kernel, const char *message, V... values) {
  if (!ok) {
    const long long v[] = {values...};
    record_failure(2u, kernel, message, v, int(sizeof...(V)));
  }
  return ok;
}

} // namespace tile_gpu
