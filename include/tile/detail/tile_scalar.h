// Scalar semantics of the kernel language that the host API and every target's device
// library share, written once. It includes nothing and is included inside a namespace
// (tile::detail on the host, tile_cpu / tile_cuda in device code) after TILE_SCALAR_FN is
// defined as that side's function specifiers (`inline`, `__device__ __forceinline__`).
// The device libraries carry a copy of this file (embedded by the build), so generated
// code and the host agree bit for bit.

/// Conversion of a floating-point value to an integer type, as GPUs' conversion
/// instructions do it: truncation toward zero, values beyond the type's range saturate to
/// its limits (infinities too), NaN gives 0. (A plain C++ cast is undefined for all of
/// those but truncation.) `F` is float or double; `To` an integer type other than bool.
template <class To, class F> TILE_SCALAR_FN To saturate_cast(F x) {
  constexpr int bits = int(sizeof(To)) * 8;
  constexpr bool is_signed = To(-1) < To(0);
  // 2^(bits - 1) and the type's limits; powers of two are exact in F.
  constexpr F half_range = F(1ull << (bits - 1));
  constexpr F lo = is_signed ? -half_range : F(0);
  constexpr F hi = is_signed ? half_range : F(2) * half_range; // one past the largest value
  constexpr To min = is_signed ? To(1ull << (bits - 1)) : To(0);
  constexpr To max = To(~min);
  if (!(x == x))
    return To(0);
  if (x <= lo)
    return min;
  if (x >= hi)
    return max;
  return To(x); // |x| now truncates into the type's range
}

/// Integer division and remainder, defined for every operand: C++'s (truncating) where it
/// is defined; x / 0 is 0 and x % 0 is x; the most negative value / -1 wraps to itself
/// and % -1 is 0. (C++ leaves those undefined: a CPU traps on them, a GPU gives what it
/// happens to.) x == (x / y) * y + x % y holds for every x and y.
template <class T> TILE_SCALAR_FN T checked_div(T x, T y) {
  if (y == T(0))
    return T(0);
  if (T(-1) < T(0) && y == T(-1)) {
    constexpr T min = T(1ull << (int(sizeof(T)) * 8 - 1)); // the most negative value
    return x == min ? x : T(-x);
  }
  return T(x / y);
}
template <class T> TILE_SCALAR_FN T checked_mod(T x, T y) {
  if (y == T(0))
    return x;
  if (T(-1) < T(0) && y == T(-1))
    return T(0);
  return T(x % y);
}
