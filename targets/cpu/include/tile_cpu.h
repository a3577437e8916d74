// tile_cpu.h: the device header library of tile's CPU target.
//
// The C++ that targets/cpu/CpuCodegen.cpp generates includes this file and nothing else.
// One call of a kernel's entry runs one block on the calling thread: parallel loops are
// loops the C++ compiler vectorizes, tile buffers are arrays on the thread's stack, and the
// runtime's thread pool runs blocks concurrently (hence real atomics).
//
// Self-contained on purpose: the plugin embeds this file and writes it next to the generated
// source, so it may include only the C++ standard library's C headers below.
#pragma once

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// ---------------------------------------------------------------------------------------
// The entry ABI (lib/runtime/CpuAbi.h, include/tile/detail/launch.h)
// ---------------------------------------------------------------------------------------

// The entry's parameter types have the names CpuAbi.h gives them, so that an entry has the
// very function type the runtime calls it through: a call through another function type is
// undefined behaviour (-fsanitize=function reports it), however alike the layouts.
namespace tile::rt {
/// One kernel parameter; the same layout as include/tile/detail/launch.h's.
struct kernel_arg {
  enum kind_t : int32_t { tensor_arg = 0, scalar_arg = 1 };
  int32_t kind;
  int32_t rank;
  int32_t dtype;
  int32_t pad_;
  void *data;
  int64_t sizes[4];
  int64_t strides[4];
  union {
    int64_t i;
    double f;
  } value;
};
static_assert(sizeof(kernel_arg) == 96, "kernel_arg layout is part of the launch ABI");
} // namespace tile::rt

/// What the runtime passes to every block.
struct tile_cpu_context {
  void *self;
  /// Reports a failed device_assert (the block returns right after) or an element access
  /// outside its tensor (the block skips the access and goes on).
  void (*fail)(tile_cpu_context *ctx, const char *message);
};

namespace tile_cpu {

using kernel_arg = tile::rt::kernel_arg;
using context = tile_cpu_context;

/// The coordinates of block `block` of `grid` (x fastest). With `panel` > 0 the blocks of
/// each z slice are rasterized in panels of `panel` rows of y, column by column and in
/// alternating directions, so that consecutive blocks share tiles of their operands in
/// cache; every (x, y) is still visited once, also when grid[1] is not a multiple of panel.
struct block3 {
  int64_t x, y, z;
};
inline block3 block_index(int64_t block, const int64_t *grid, int64_t panel) {
  const int64_t gx = grid[0], gy = grid[1];
  block3 b;
  b.z = block / (gx * gy);
  const int64_t xy = block % (gx * gy);
  if (panel <= 1 || gy <= 1) {
    b.x = xy % gx;
    b.y = xy / gx;
    return b;
  }
  const int64_t panel_blocks = panel * gx;
  const int64_t p = xy / panel_blocks, offset = xy % panel_blocks;
  // The last panel may have fewer rows.
  const int64_t rows = (p + 1) * panel <= gy ? panel : gy - p * panel;
  const int64_t column = offset / rows;
  b.x = (p & 1) ? gx - 1 - column : column;
  b.y = p * panel + offset % rows;
  return b;
}

/// A tile buffer too large for the block's stack: on the heap while the block runs (null
/// data when there is not enough memory).
template <class T> struct heap_buffer {
  T *data;
  explicit heap_buffer(int64_t count)
      : data(static_cast<T *>(std::aligned_alloc(64, (size_t(count) * sizeof(T) + 63) / 64 * 64))) {}
  ~heap_buffer() { std::free(data); }
  heap_buffer(const heap_buffer &) = delete;
  heap_buffer &operator=(const heap_buffer &) = delete;
};

// ---------------------------------------------------------------------------------------
// Element types
// ---------------------------------------------------------------------------------------

/// Clang's native types; arithmetic on them happens in float (the IR converts explicitly).
using bf16 = __bf16;
using f16 = _Float16;

namespace detail {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The minifloat conversions of include/tile/types.h, repeated because this header must not
// include tile headers: `E` exponent and `M` mantissa bits, round to nearest even; `Ieee`
// selects infinities (e5m2), otherwise (e4m3fn) the all-ones pattern is the only NaN and
// overflow gives NaN.
template <int E, int M, bool Ieee> uint32_t encode_minifloat(float f) {
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
  uint32_t result;
  if (target_exp <= 0) {
    const int shift = 23 - M + (1 - target_exp);
    if (shift > 31)
      return sign;
    const uint32_t lsb = (mant >> shift) & 1u, round_bits = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    result = mant >> shift;
    if (round_bits > half || (round_bits == half && lsb))
      result += 1;
  } else {
    const int shift = 23 - M;
    const uint32_t lsb = (mant >> shift) & 1u, round_bits = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    result = (uint32_t(target_exp) << M) | ((mant >> shift) & ((1u << M) - 1));
    if (round_bits > half || (round_bits == half && lsb))
      result += 1;
  }
  if (result > max_bits)
    return sign | overflow_bits;
  return sign | result;
}

template <int E, int M, bool Ieee> float decode_minifloat(uint32_t v) {
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr uint32_t exp_all = (1u << E) - 1;
  const uint32_t sign = (v >> (E + M)) & 1u, exp = (v >> M) & exp_all, mant = v & ((1u << M) - 1);
  float mag;
  if (Ieee && exp == exp_all)
    mag = mant ? __builtin_nanf("") : __builtin_inff();
  else if (!Ieee && exp == exp_all && mant == (1u << M) - 1)
    mag = __builtin_nanf("");
  else if (exp == 0)
    mag = float(mant) * bits_float(uint32_t(127 - bias - M + 1) << 23);
  else
    mag = bits_float((uint32_t(int(exp) - bias + 127) << 23) | (mant << (23 - M)));
  return sign ? -mag : mag;
}

/// float -> bf16 bits, round to nearest even, NaN stays a quiet NaN.
inline uint16_t bf16_bits(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

/// `d` rounded to float with round-to-odd, so that a second rounding to a narrower type
/// gives the correctly rounded result of `d`.
inline float round_to_odd(double d) {
  float f = float(d);
  if (double(f) == d || d != d)
    return f;
  uint32_t u = float_bits(f);
  if (__builtin_fabs(double(f)) > __builtin_fabs(d))
    --u; // rounded away from zero: step back toward zero (the magnitude shrinks)
  return bits_float(u | 1u);
}

/// Conversions to bf16 in software, exact for every input: the AVX-512 BF16 instruction
/// treats subnormal inputs as zero, and the generated code uses these instead.
inline bf16 to_bf16(float f) { return __builtin_bit_cast(bf16, bf16_bits(f)); }
inline bf16 to_bf16(double d) { return to_bf16(round_to_odd(d)); }
template <class T> inline bf16 to_bf16(T v) {
  if constexpr (sizeof(T) <= 4 && __is_integral(T))
    return to_bf16(double(v)); // exact in double, then one correct rounding
  else
    return to_bf16(float(v)); // f16, fp8: exact in float
}

} // namespace detail

/// Reports an element access outside its tensor: `message` with its `{}`s replaced by
/// `values` in order.
[[gnu::noinline, gnu::cold]] inline void bounds_failed(context *ctx, const char *message, const long long *values,
                                                       int nvalues) {
  char text[512];
  int at = 0, next = 0;
  for (const char *c = message; *c && at + 1 < int(sizeof text); ++c) {
    if (c[0] == '{' && c[1] == '}' && next < nvalues) {
      const int n = std::snprintf(text + at, sizeof text - size_t(at), "%lld", values[next++]);
      at = n > 0 && at + n < int(sizeof text) ? at + n : int(sizeof text) - 1;
      ++c;
    } else {
      text[at++] = *c;
    }
  }
  text[at] = 0;
  ctx->fail(ctx, text);
}

/// An element access of a checked build (-fplugin-arg-tile-check-bounds): `ok` where the
/// index lies inside the tensor; else the launch fails with `message` (its `{}`s: the
/// index, then the tensor's sizes), and the caller skips the access and goes on.
template <class... V> inline bool bounds_check(context *ctx, bool ok, const char *message, V... values) {
  if (!ok) [[unlikely]] {
    const long long v[] = {values...};
    bounds_failed(ctx, message, v, int(sizeof...(V)));
  }
  return ok;
}

/// OCP FP8 E4M3 ("fn": no infinities; overflow and NaN give NaN).
struct f8e4m3 {
  uint8_t bits;
  f8e4m3() = default; // trivial: buffers of them stay uninitialized like any other
  f8e4m3(float f) : bits(uint8_t(detail::encode_minifloat<4, 3, false>(f))) {}
  operator float() const { return detail::decode_minifloat<4, 3, false>(bits); }
};

/// OCP FP8 E5M2 (IEEE-style infinities and NaNs).
struct f8e5m2 {
  uint8_t bits;
  f8e5m2() = default;
  f8e5m2(float f) : bits(uint8_t(detail::encode_minifloat<5, 2, true>(f))) {}
  operator float() const { return detail::decode_minifloat<5, 2, true>(bits); }
};

} // namespace tile_cpu

// The compiler calls these for conversions to __bf16 that the target has no instruction for;
// the libgcc of older toolchains lacks them. Weak and hidden: a library's own copy wins, and
// the image exports nothing but its entries.
extern "C" __attribute__((weak, visibility("hidden"))) __bf16 __truncsfbf2(float f) {
  return __builtin_bit_cast(__bf16, tile_cpu::detail::bf16_bits(f));
}
extern "C" __attribute__((weak, visibility("hidden"))) __bf16 __truncdfbf2(double d) {
  return __builtin_bit_cast(__bf16, tile_cpu::detail::bf16_bits(tile_cpu::detail::round_to_odd(d)));
}

namespace tile_cpu {

// ---------------------------------------------------------------------------------------
// Math (for float and double; the IR computes in float or double only)
// ---------------------------------------------------------------------------------------

inline float exp(float x) { return __builtin_expf(x); }
inline double exp(double x) { return __builtin_exp(x); }
inline float exp2(float x) { return __builtin_exp2f(x); }
inline double exp2(double x) { return __builtin_exp2(x); }
inline float log(float x) { return __builtin_logf(x); }
inline double log(double x) { return __builtin_log(x); }
inline float log2(float x) { return __builtin_log2f(x); }
inline double log2(double x) { return __builtin_log2(x); }
inline float sqrt(float x) { return __builtin_sqrtf(x); }
inline double sqrt(double x) { return __builtin_sqrt(x); }
inline float rsqrt(float x) { return 1.0f / __builtin_sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / __builtin_sqrt(x); }
inline float tanh(float x) { return __builtin_tanhf(x); }
inline double tanh(double x) { return __builtin_tanh(x); }
inline float sigmoid(float x) { return 1.0f / (1.0f + __builtin_expf(-x)); }
inline double sigmoid(double x) { return 1.0 / (1.0 + __builtin_exp(-x)); }
inline float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
inline double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
inline float fmod(float a, float b) { return __builtin_fmodf(a, b); }
inline double fmod(double a, double b) { return __builtin_fmod(a, b); }
inline float round(float x) { return __builtin_roundf(x); }
inline double round(double x) { return __builtin_round(x); }
inline float floor(float x) { return __builtin_floorf(x); }
inline double floor(double x) { return __builtin_floor(x); }
inline float ceil(float x) { return __builtin_ceilf(x); }
inline double ceil(double x) { return __builtin_ceil(x); }
inline float trunc(float x) { return __builtin_truncf(x); }
inline double trunc(double x) { return __builtin_trunc(x); }
inline float sin(float x) { return __builtin_sinf(x); }
inline double sin(double x) { return __builtin_sin(x); }
inline float cos(float x) { return __builtin_cosf(x); }
inline double cos(double x) { return __builtin_cos(x); }
inline float erf(float x) { return __builtin_erff(x); }
inline double erf(double x) { return __builtin_erf(x); }
inline float pow(float a, float b) { return __builtin_powf(a, b); }
inline double pow(double a, double b) { return __builtin_pow(a, b); }
inline float log1p(float x) { return __builtin_log1pf(x); }
inline double log1p(double x) { return __builtin_log1p(x); }
inline float expm1(float x) { return __builtin_expm1f(x); }
inline double expm1(double x) { return __builtin_expm1(x); }
inline bool isnan(float x) { return __builtin_isnan(x); }
inline bool isnan(double x) { return __builtin_isnan(x); }
inline bool isinf(float x) { return __builtin_isinf(x); }
inline bool isinf(double x) { return __builtin_isinf(x); }

// Float -> integer conversion: saturate_cast<To>(x).
#define TILE_SCALAR_FN inline
#include "tile_scalar.h"
#undef TILE_SCALAR_FN

inline float abs(float x) { return __builtin_fabsf(x); }
inline double abs(double x) { return __builtin_fabs(x); }
inline int32_t abs(int32_t x) { return x < 0 ? -x : x; }
inline int64_t abs(int64_t x) { return x < 0 ? -x : x; }
inline uint32_t abs(uint32_t x) { return x; }
inline uint64_t abs(uint64_t x) { return x; }

// min / max: integers compare; floats ignore a NaN operand (fminf / fmaxf, as CUDA does).
template <class T> inline T min(T a, T b) { return b < a ? b : a; }
template <class T> inline T max(T a, T b) { return a < b ? b : a; }
inline float min(float a, float b) { return __builtin_fminf(a, b); }
inline float max(float a, float b) { return __builtin_fmaxf(a, b); }
inline double min(double a, double b) { return __builtin_fmin(a, b); }
inline double max(double a, double b) { return __builtin_fmax(a, b); }

// ---------------------------------------------------------------------------------------
// Atomics on tensor elements (blocks run concurrently on the runtime's threads)
// ---------------------------------------------------------------------------------------

namespace detail {

template <class T> struct is_integer {
  static constexpr bool value = false;
};
#define TILE_CPU_INTEGER(T)                                                                        \
  template <> struct is_integer<T> {                                                               \
    static constexpr bool value = true;                                                            \
  };
TILE_CPU_INTEGER(int8_t)
TILE_CPU_INTEGER(uint8_t)
TILE_CPU_INTEGER(int16_t)
TILE_CPU_INTEGER(uint16_t)
TILE_CPU_INTEGER(int32_t)
TILE_CPU_INTEGER(uint32_t)
TILE_CPU_INTEGER(long)
TILE_CPU_INTEGER(unsigned long)
TILE_CPU_INTEGER(long long)
TILE_CPU_INTEGER(unsigned long long)
#undef TILE_CPU_INTEGER

template <int Bytes> struct bits_type;
template <> struct bits_type<1> {
  using type = uint8_t;
};
template <> struct bits_type<2> {
  using type = uint16_t;
};
template <> struct bits_type<4> {
  using type = uint32_t;
};
template <> struct bits_type<8> {
  using type = uint64_t;
};

/// The type arithmetic on T happens in.
template <class T> struct arith {
  using type = T;
};
template <> struct arith<bf16> {
  using type = float;
};
template <> struct arith<f16> {
  using type = float;
};
template <> struct arith<f8e4m3> {
  using type = float;
};
template <> struct arith<f8e5m2> {
  using type = float;
};

/// Atomically replaces *p by combine(*p) with a compare-and-swap on its bits (without
/// writing where the value would not change); returns the value it replaced.
template <class T, class F> inline T atomic_update(T *p, F combine) {
  using U = typename bits_type<sizeof(T)>::type;
  U *q = reinterpret_cast<U *>(p);
  U old = __atomic_load_n(q, __ATOMIC_RELAXED);
  for (;;) {
    T cur;
    std::memcpy(&cur, &old, sizeof(T));
    T next = combine(cur);
    U next_bits;
    std::memcpy(&next_bits, &next, sizeof(T));
    if (next_bits == old)
      return cur;
    if (__atomic_compare_exchange_n(q, &old, next_bits, /*weak=*/true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      return cur;
  }
}
template <class T> inline typename bits_type<sizeof(T)>::type bits_of(T v) {
  typename bits_type<sizeof(T)>::type b;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}

} // namespace detail

// Atomics on a tensor element (relaxed: they order no other memory access); each returns
// the element's value before it.
template <class T, class V> inline T atomic_add(T *p, V v) {
  if constexpr (detail::is_integer<T>::value) {
    return __atomic_fetch_add(p, T(v), __ATOMIC_RELAXED);
  } else {
    using A = typename detail::arith<T>::type;
    return detail::atomic_update(p, [v](T cur) { return T(A(cur) + A(v)); });
  }
}
template <class T, class V> inline T atomic_max(T *p, V v) {
  using A = typename detail::arith<T>::type;
  return detail::atomic_update(p, [v](T cur) { return T(max(A(cur), A(v))); });
}
template <class T, class V> inline T atomic_min(T *p, V v) {
  using A = typename detail::arith<T>::type;
  return detail::atomic_update(p, [v](T cur) { return T(min(A(cur), A(v))); });
}
/// Stores v (converted to T); returns the value it replaced.
template <class T, class V> inline T atomic_exchange(T *p, V v) {
  const T next = T(v);
  return detail::atomic_update(p, [next](T) { return next; });
}
/// Stores v where the element's bits equal those of `expected` (converted to T); returns the
/// value it found (equal to `expected` where it stored).
template <class T, class E, class V> inline T atomic_compare_exchange(T *p, E expected, V v) {
  const T want = T(expected), next = T(v);
  return detail::atomic_update(
      p, [want, next](T cur) { return detail::bits_of(cur) == detail::bits_of(want) ? next : cur; });
}

// ---------------------------------------------------------------------------------------
// GEMM: c[M, N] += op(a)[M, K] * op(b)[K, N] on tiles of compile-time shape
// ---------------------------------------------------------------------------------------

namespace detail {

template <class A, class B> struct same {
  static constexpr bool value = false;
};
template <class A> struct same<A, A> {
  static constexpr bool value = true;
};

// Clang splits 512-bit vectors into halves unless a function asks for them
// (-march=native on recent Intel cores prefers 256-bit vectors).
#if defined(__AVX512F__)
#define TILE_CPU_SIMD __attribute__((min_vector_width(512)))
inline constexpr int simd_bytes = 64;
inline constexpr int simd_registers = 32;
#elif defined(__AVX__)
#define TILE_CPU_SIMD __attribute__((min_vector_width(256)))
inline constexpr int simd_bytes = 32;
inline constexpr int simd_registers = 16;
#elif defined(__aarch64__)
#define TILE_CPU_SIMD
inline constexpr int simd_bytes = 16;
inline constexpr int simd_registers = 32;
#else
#define TILE_CPU_SIMD
inline constexpr int simd_bytes = 16;
inline constexpr int simd_registers = 16;
#endif

/// A native vector of T and its unaligned variant, for loads and stores at any element.
template <class T> struct simd {
  static constexpr int lanes = simd_bytes / int(sizeof(T));
  typedef T vec __attribute__((vector_size(simd_bytes)));
  typedef T uvec __attribute__((vector_size(simd_bytes), aligned(sizeof(T))));
};

/// The register block of the micro-kernel: MR rows of NV vectors of C stay in registers
/// (MR * NV accumulators, NV registers of B, broadcasts of A straight from memory). 8 x 2
/// measured as fast as 6 x 4 and 8 x 3 with AVX-512 and suits small tiles better.
#ifndef TILE_CPU_GEMM_NV
#define TILE_CPU_GEMM_NV 2
#endif
#ifndef TILE_CPU_GEMM_MR
#define TILE_CPU_GEMM_MR (simd_registers >= 32 ? 8 : 6)
#endif
inline constexpr int gemm_nv = TILE_CPU_GEMM_NV;
inline constexpr int gemm_mr = TILE_CPU_GEMM_MR;

/// The type a gemm computes in: the accumulator's type for float, double and wide
/// integers, float for the extended floats.
template <class C> struct gemm_compute {
  using type = C;
};
template <> struct gemm_compute<bf16> {
  using type = float;
};
template <> struct gemm_compute<f16> {
  using type = float;
};
template <> struct gemm_compute<f8e4m3> {
  using type = float;
};
template <> struct gemm_compute<f8e5m2> {
  using type = float;
};
template <> struct gemm_compute<int8_t> {
  using type = int32_t;
};
template <> struct gemm_compute<int16_t> {
  using type = int32_t;
};

/// C[MR, NV vectors] (+)= A[MR, K] * B[K, NV vectors]: A(i, k) = a[i * ars + k * acs],
/// B(k, j) = b[k * ldb + j], C(i, j) = c[i * ldc + j].
template <int MR, int NV, int K, bool Clear, class T>
__attribute__((always_inline)) TILE_CPU_SIMD inline void gemm_block(const T *__restrict a, long ars, long acs,
                                                      const T *__restrict b, long ldb, T *__restrict c,
                                                      long ldc) {
  using V = typename simd<T>::vec;
  using U = typename simd<T>::uvec;
  constexpr int W = simd<T>::lanes;
  V acc[MR][NV];
#pragma unroll
  for (int i = 0; i < MR; ++i)
#pragma unroll
    for (int v = 0; v < NV; ++v)
      acc[i][v] = Clear ? V{} : *reinterpret_cast<const U *>(c + i * ldc + v * W);
  for (int k = 0; k < K; ++k) {
    V bv[NV];
#pragma unroll
    for (int v = 0; v < NV; ++v)
      bv[v] = *reinterpret_cast<const U *>(b + k * ldb + v * W);
#pragma unroll
    for (int i = 0; i < MR; ++i) {
      const T s = a[i * ars + k * acs];
#pragma unroll
      for (int v = 0; v < NV; ++v)
        acc[i][v] += s * bv[v];
    }
  }
#pragma unroll
  for (int i = 0; i < MR; ++i)
#pragma unroll
    for (int v = 0; v < NV; ++v)
      *reinterpret_cast<U *>(c + i * ldc + v * W) = acc[i][v];
}

/// Columns [j, j + NV vectors) of C, all rows.
template <int M, int NV, int K, bool Clear, class T>
TILE_CPU_SIMD inline void gemm_columns(const T *a, long ars, long acs, const T *b, long ldb, T *c, long ldc) {
  constexpr int MR = gemm_mr < M ? gemm_mr : M;
  int i = 0;
  for (; i + MR <= M; i += MR)
    gemm_block<MR, NV, K, Clear>(a + i * ars, ars, acs, b, ldb, c + i * ldc, ldc);
  if constexpr (M % MR != 0)
    gemm_block<M % MR, NV, K, Clear>(a + i * ars, ars, acs, b, ldb, c + i * ldc, ldc);
}

/// The whole C tile in compute type T: full column panels, then the remaining whole
/// vectors, then a scalar tail of fewer columns than a vector.
template <int M, int N, int K, bool Clear, class T>
TILE_CPU_SIMD void gemm_compute_tile(const T *a, long ars, long acs, const T *b, long ldb, T *c, long ldc) {
  constexpr int W = simd<T>::lanes, NR = gemm_nv * W;
  constexpr int full = N / NR * NR;
  for (int j = 0; j < full; j += NR)
    gemm_columns<M, gemm_nv, K, Clear>(a, ars, acs, b + j, ldb, c + j, ldc);
  constexpr int rest_vectors = (N - full) / W;
  if constexpr (rest_vectors > 0)
    gemm_columns<M, rest_vectors, K, Clear>(a, ars, acs, b + full, ldb, c + full, ldc);
  constexpr int tail = full + rest_vectors * W;
  for (int i = 0; i < M; ++i)
    for (int j = tail; j < N; ++j) {
      T s = Clear ? T(0) : c[i * ldc + j];
      for (int k = 0; k < K; ++k)
        s += a[i * ars + k * acs] * b[k * ldb + j];
      c[i * ldc + j] = s;
    }
}

template <int M, int N, int K, bool TA, bool TB, bool Clear, class TAe, class TBe, class TC>
void gemm(const TAe *a, long lda, const TBe *b, long ldb, TC *c, long ldc) {
  using T = typename gemm_compute<TC>::type;
  // A: used in place when it already holds T (either orientation works, A is only read a
  // scalar at a time); otherwise converted into a copy of the same orientation.
  const T *pa;
  long ars, acs;
  alignas(64) T a_pack[same<TAe, T>::value ? 1 : M * K];
  if constexpr (same<TAe, T>::value) {
    pa = a;
    ars = TA ? 1 : lda;
    acs = TA ? lda : 1;
  } else {
    const int rows = TA ? K : M, cols = TA ? M : K;
    for (int r = 0; r < rows; ++r)
      for (int q = 0; q < cols; ++q)
        a_pack[r * cols + q] = T(a[r * lda + q]);
    pa = a_pack;
    ars = TA ? 1 : K;
    acs = TA ? M : 1;
  }
  // B: rows of K must be contiguous vectors of T; transposed or converted B is packed.
  constexpr bool b_direct = same<TBe, T>::value && !TB;
  const T *pb;
  long pldb;
  alignas(64) T b_pack[b_direct ? 1 : K * N];
  if constexpr (b_direct) {
    pb = b;
    pldb = ldb;
  } else {
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j)
        b_pack[k * N + j] = T(TB ? b[j * ldb + k] : b[k * ldb + j]);
    pb = b_pack;
    pldb = N;
  }
  if constexpr (same<TC, T>::value) {
    gemm_compute_tile<M, N, K, Clear>(pa, ars, acs, pb, pldb, c, ldc);
  } else {
    alignas(64) T c_pack[M * N];
    if constexpr (!Clear)
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j)
          c_pack[i * N + j] = T(c[i * ldc + j]);
    gemm_compute_tile<M, N, K, Clear>(pa, ars, acs, pb, pldb, c_pack, N);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        c[i * ldc + j] = TC(c_pack[i * N + j]);
  }
}

} // namespace detail

/// c[M, N] += op(a) * op(b): a is row-major [M, K] ([K, M] with TA) with row stride lda,
/// b is [K, N] ([N, K] with TB) with row stride ldb, c is [M, N] with row stride ldc.
template <int M, int N, int K, bool TA, bool TB, class TAe, class TBe, class TC>
void gemm(const TAe *a, long lda, const TBe *b, long ldb, TC *c, long ldc) {
  detail::gemm<M, N, K, TA, TB, false>(a, lda, b, ldb, c, ldc);
}

/// c[M, N] = op(a) * op(b) (gemm with clear_accum): c's old values are never read.
template <int M, int N, int K, bool TA, bool TB, class TAe, class TBe, class TC>
void gemm_clear(const TAe *a, long lda, const TBe *b, long ldb, TC *c, long ldc) {
  detail::gemm<M, N, K, TA, TB, true>(a, lda, b, ldb, c, ldc);
}

} // namespace tile_cpu
