// Element types of the kernel language that C++ lacks: f16, bf16, f8e4m3, f8e5m2.
//
// On the host they are value types holding their bit pattern, converted from and to
// float with round-to-nearest-even. Inside kernels the compiler maps them onto the
// target's native types; arithmetic on them happens in float (they convert implicitly).
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

namespace tile {

namespace detail {

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Encodes `f` as a minifloat with `E` exponent bits and `M` mantissa bits, rounding to
// nearest even. `Ieee` selects IEEE-style infinities (f16, e5m2); otherwise (e4m3fn) the
// all-ones pattern is the only NaN, there is no infinity, and overflow saturates to NaN as
// in the OCP FP8 specification's conversion without saturation.
template <int E, int M, bool Ieee> std::uint32_t encode_minifloat(float f) {
  const std::uint32_t u = float_bits(f);
  const std::uint32_t sign = (u >> 31) << (E + M);
  const std::uint32_t abs = u & 0x7fffffffu;
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr std::uint32_t exp_all = (1u << E) - 1;
  if (abs > 0x7f800000u) // NaN
    return Ieee ? (sign | (exp_all << M) | (1u << (M - 1))) : (sign | (exp_all << M) | ((1u << M) - 1));
  // Largest finite magnitude of the target format.
  const std::uint32_t max_bits = Ieee ? (((exp_all - 1) << M) | ((1u << M) - 1))
                                      : ((exp_all << M) | ((1u << M) - 2));
  if (abs == 0x7f800000u) // infinity
    return Ieee ? (sign | (exp_all << M)) : (sign | (exp_all << M) | ((1u << M) - 1));
  const int exp = int(abs >> 23) - 127; // unbiased exponent of the float
  std::uint32_t mant = (abs & 0x7fffffu) | (abs >= 0x00800000u ? 0x800000u : 0u);
  int target_exp = exp + bias;
  std::uint32_t result;
  if (target_exp <= 0) {
    // Subnormal in the target: shift the full significand right.
    const int shift = 23 - M + (1 - target_exp);
    if (shift > 31)
      return sign;
    const std::uint32_t lsb = (mant >> shift) & 1u;
    const std::uint32_t round_bits = mant & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    result = mant >> shift;
    if (round_bits > half || (round_bits == half && lsb))
      result += 1; // may carry into the smallest normal, which is the right encoding
  } else {
    const int shift = 23 - M;
    const std::uint32_t lsb = (mant >> shift) & 1u;
    const std::uint32_t round_bits = mant & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    result = (std::uint32_t(target_exp) << M) | ((mant >> shift) & ((1u << M) - 1));
    if (round_bits > half || (round_bits == half && lsb))
      result += 1;
  }
  if (result > max_bits)
    return Ieee ? (sign | (exp_all << M)) : (sign | (exp_all << M) | ((1u << M) - 1));
  return sign | result;
}

template <int E, int M, bool Ieee> float decode_minifloat(std::uint32_t v) {
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr std::uint32_t exp_all = (1u << E) - 1;
  const std::uint32_t sign = (v >> (E + M)) & 1u;
  const std::uint32_t exp = (v >> M) & exp_all;
  const std::uint32_t mant = v & ((1u << M) - 1);
  float mag;
  if (Ieee && exp == exp_all)
    mag = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else if (!Ieee && exp == exp_all && mant == (1u << M) - 1)
    mag = std::numeric_limits<float>::quiet_NaN();
  else if (exp == 0)
    mag = float(mant) * bits_float(std::uint32_t(127 - bias - M + 1) << 23);
  else
    mag = bits_float((std::uint32_t(int(exp) - bias + 127) << 23) | (mant << (23 - M)));
  return sign ? -mag : mag;
}

} // namespace detail

/// IEEE binary16.
struct f16 {
  std::uint16_t bits = 0;
  f16() = default;
  f16(float f) : bits(std::uint16_t(detail::encode_minifloat<5, 10, true>(f))) {}
  operator float() const { return detail::decode_minifloat<5, 10, true>(bits); }
  static f16 from_bits(std::uint16_t b) {
    f16 h;
    h.bits = b;
    return h;
  }
};

/// bfloat16: the upper half of an IEEE binary32.
struct bf16 {
  std::uint16_t bits = 0;
  bf16() = default;
  bf16(float f) {
    std::uint32_t u = detail::float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      bits = std::uint16_t((u >> 16) | 0x40u); // quiet NaN, sign kept
      return;
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    bits = std::uint16_t(u >> 16);
  }
  operator float() const { return detail::bits_float(std::uint32_t(bits) << 16); }
  static bf16 from_bits(std::uint16_t b) {
    bf16 h;
    h.bits = b;
    return h;
  }
};

/// OCP FP8 E4M3 ("fn": no infinities, one NaN pattern per sign).
struct f8e4m3 {
  std::uint8_t bits = 0;
  f8e4m3() = default;
  f8e4m3(float f) : bits(std::uint8_t(detail::encode_minifloat<4, 3, false>(f))) {}
  operator float() const { return detail::decode_minifloat<4, 3, false>(bits); }
};

/// OCP FP8 E5M2 (IEEE-style infinities and NaNs).
struct f8e5m2 {
  std::uint8_t bits = 0;
  f8e5m2() = default;
  f8e5m2(float f) : bits(std::uint8_t(detail::encode_minifloat<5, 2, true>(f))) {}
  operator float() const { return detail::decode_minifloat<5, 2, true>(bits); }
};

/// Element type codes shared by the host API, the launch ABI and the compiler's manifest.
enum class dtype : std::int32_t {
  f32 = 0,
  f64,
  i8,
  u8,
  i16,
  u16,
  i32,
  u32,
  i64,
  u64,
  b1,
  f16,
  bf16,
  f8e4m3,
  f8e5m2,
};

namespace detail {
template <class T> struct dtype_of;
#define TILE_DTYPE_OF(T, D)                                                                        \
  template <> struct dtype_of<T> {                                                                 \
    static constexpr dtype value = dtype::D;                                                       \
  };
TILE_DTYPE_OF(float, f32)
TILE_DTYPE_OF(double, f64)
TILE_DTYPE_OF(std::int8_t, i8)
TILE_DTYPE_OF(std::uint8_t, u8)
TILE_DTYPE_OF(std::int16_t, i16)
TILE_DTYPE_OF(std::uint16_t, u16)
TILE_DTYPE_OF(std::int32_t, i32)
TILE_DTYPE_OF(std::uint32_t, u32)
TILE_DTYPE_OF(long, i64)
TILE_DTYPE_OF(long long, i64)
TILE_DTYPE_OF(unsigned long, u64)
TILE_DTYPE_OF(unsigned long long, u64)
TILE_DTYPE_OF(bool, b1)
TILE_DTYPE_OF(char, i8)
TILE_DTYPE_OF(tile::f16, f16)
TILE_DTYPE_OF(tile::bf16, bf16)
TILE_DTYPE_OF(tile::f8e4m3, f8e4m3)
TILE_DTYPE_OF(tile::f8e5m2, f8e5m2)
#undef TILE_DTYPE_OF
template <class T> struct dtype_of<const T> : dtype_of<T> {};
} // namespace detail

} // namespace tile
