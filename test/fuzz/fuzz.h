// Host side of the random-kernel differential tester (test/fuzz, see README.md there).
//
// gen.py writes, for every random program, a tile kernel and a plain C++ reference of the
// same abstract program. The reference does not compute one expected value: it computes an
// interval [lo, hi] (in long double) that provably contains every result a correct
// compiler may produce, given C++ semantics and the documented accuracy of the device's
// math functions. A result outside its interval, or an output element the program does not
// write that is not left as it was (poisoned), is a mismatch. The rules, per operation:
//
//  - +, -, *, / and fma inside an expression: the exact result of the operand intervals,
//    rounded outward to the expression's type (round down for lo, up for hi). Outward, not
//    to nearest, because C++ lets the compiler contract a*b+c into one fma within an
//    expression (-ffp-contract=on, the default of clang and nvcc), which skips a rounding.
//  - conversions (assignment to a buffer or variable, tile::copy between element types,
//    tile::cast, implicit conversions of operands): rounding to nearest even of both ends
//    (rounding is monotone, so the interval of results is exact); truncation for integers.
//  - math functions: the exact function of both ends (they are monotone) widened by 8 units
//    of the type's precision (2^-p+1 relative, plus 4 subnormal steps): CUDA documents at
//    most 2 ulp for expf, exp2f, tanhf and rsqrtf and 1 ulp for logf and log2f, glibc less.
//    sigmoid is what language.h defines, 1 / (1 + exp(-x)) in the argument's type, so
//    exp(-x) overflows to infinity and the result is 0 below x = -88.7 in float.
//  - sums of n terms (reductions, cumsum, atomic_add) in any order: the exact sum of the
//    term intervals widened by gamma(n-1) * sum |terms| (Higham's bound for any summation
//    order: gamma(k) = k u / (1 - k u), u = 2^-p); gemm's dot products by gamma(n) with
//    u = 2^-p+1 per term, because tensor-core adders need not round to nearest.
//  - comparisons give {0}, {1} or {0, 1} (when the intervals overlap); a select or if on an
//    uncertain condition takes the hull of both sides.
//  - integers are exact (the generator keeps every value in range).
#pragma once

#include <tile/tile.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace fz {

// ---------------------------------------------------------------------------------------
// Number formats
// ---------------------------------------------------------------------------------------

/// An element type as the reference sees it: a binary float of p significand bits whose
/// smallest normal exponent is emin, or an integer range, or bool.
struct Fmt {
  enum Kind { Float, Int, Bool } kind;
  int p = 0, emin = 0;
  long double max = 0;          ///< largest finite float
  bool nan_on_overflow = false; ///< e4m3: no infinity
  long double lo = 0, hi = 0;   ///< integer range
};
inline const Fmt F32{Fmt::Float, 24, -126, 0x1.fffffep127L};
inline const Fmt F64{Fmt::Float, 53, -1022, 0x1.fffffffffffffp1023L};
inline const Fmt BF16{Fmt::Float, 8, -126, 0x1.fep127L};
inline const Fmt F16{Fmt::Float, 11, -14, 65504.0L};
inline const Fmt E4M3{Fmt::Float, 4, -6, 448.0L, true};
inline const Fmt E5M2{Fmt::Float, 3, -14, 57344.0L};
inline const Fmt I8{Fmt::Int, 0, 0, 0, false, -128, 127};
inline const Fmt U8{Fmt::Int, 0, 0, 0, false, 0, 255};
inline const Fmt I16{Fmt::Int, 0, 0, 0, false, -32768, 32767};
inline const Fmt I32{Fmt::Int, 0, 0, 0, false, -2147483648.0L, 2147483647.0L};
inline const Fmt I64{Fmt::Int, 0, 0, 0, false, -0x1p63L, 0x1p63L - 1};
inline const Fmt B1{Fmt::Bool, 0, 0, 0, false, 0, 1};
/// Long double itself: exact products of the operands of gemm.
inline const Fmt LD{Fmt::Float, 64, -16382, 0x1.fffffffffffffffep16383L};

/// m (0 <= m < 2^63) rounded to an integer, to nearest even: adding 2^63 leaves no
/// fraction bits in long double's 64-bit significand (nearbyintl is much slower).
inline long double rne_int(long double m) {
  volatile long double t = m + 0x1p63L;
  return t - 0x1p63L;
}

/// x rounded to f: mode -1 toward -infinity, 0 to nearest even, +1 toward +infinity.
inline long double round_to(long double x, const Fmt &f, int mode) {
  if (f.kind != Fmt::Float || x == 0 || std::isnan(x) || std::isinf(x))
    return x;
  const long double a = std::fabs(x);
  int e = std::ilogb(a);
  if (e < f.emin)
    e = f.emin; // subnormal: the quantum of the smallest binade
  const long double q = std::ldexp(1.0L, e - (f.p - 1));
  const long double m = a / q; // exact: a power-of-two scaling
  // The rounding direction for the magnitude.
  const int away = x < 0 ? -mode : mode;
  long double r = rne_int(m);
  if (mode != 0 && away > 0 && r < m)
    r += 1;
  else if (mode != 0 && away <= 0 && r > m)
    r -= 1;
  r *= q;
  if (r > f.max) {
    if (mode == 0 || away > 0)
      r = f.nan_on_overflow ? NAN : INFINITY;
    else
      r = f.max;
  }
  return x < 0 ? -r : r;
}

// ---------------------------------------------------------------------------------------
// Intervals
// ---------------------------------------------------------------------------------------

struct I {
  long double lo, hi;
};
inline I val(long double v) { return {v, v}; }
inline I hull(I a, I b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }
inline bool sure(I c) { return c.lo == 1 && c.hi == 1; }
inline bool never(I c) { return c.lo == 0 && c.hi == 0; }

// Exact long double operations, stepped one ulp in `dir` where they were inexact (found with
// error-free transformations), so that the result bounds the exact value from that side.
inline long double step(long double s, long double err, int dir) {
  if (dir < 0 && err < 0)
    return std::nextafter(s, -INFINITY);
  if (dir > 0 && err > 0)
    return std::nextafter(s, INFINITY);
  return s;
}
inline long double add_dir(long double a, long double b, int dir) {
  const long double s = a + b;
  if (!std::isfinite(s))
    return s;
  const long double bb = s - a, err = (a - (s - bb)) + (b - bb);
  return step(s, err, dir);
}
/// The rounding error of a * b (Dekker's product with Veltkamp's split at 32 bits: exact for
/// long double's 64-bit significand, without the slow software fmal).
inline long double prod_err(long double a, long double b, long double p) {
  const long double c = 4294967297.0L; // 2^32 + 1
  long double t = c * a;
  const long double ah = t - (t - a), al = a - ah;
  t = c * b;
  const long double bh = t - (t - b), bl = b - bh;
  return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}
inline long double mul_dir(long double a, long double b, int dir) {
  const long double p = a * b;
  if (!std::isfinite(p) || std::fabs(p) < 0x1p-16000L)
    return p == 0 && a != 0 && b != 0 ? (dir < 0 ? -0x1p-16000L : 0x1p-16000L) : p;
  return step(p, prod_err(a, b, p), dir);
}
inline long double div_dir(long double a, long double b, int dir) {
  const long double q = a / b;
  if (!std::isfinite(q) || q == 0)
    return q;
  const long double p = q * b, r = (a - p) - prod_err(q, b, p); // the sign of a - q b
  return step(q, b > 0 ? r : -r, dir);
}

inline long double down(long double x, const Fmt &f) { return round_to(x, f, -1); }
inline long double up(long double x, const Fmt &f) { return round_to(x, f, 1); }
inline I outward(long double lo, long double hi, const Fmt &f) { return {down(lo, f), up(hi, f)}; }

inline I neg(I a) { return {-a.hi, -a.lo}; }
inline I add(I a, I b, const Fmt &f) { return outward(add_dir(a.lo, b.lo, -1), add_dir(a.hi, b.hi, 1), f); }
inline I sub(I a, I b, const Fmt &f) { return add(a, neg(b), f); }
/// The product's bounds, each rounded outward in long double (not yet to a format).
inline I product(I a, I b) {
  const long double x[2] = {a.lo, a.hi}, y[2] = {b.lo, b.hi};
  I p{INFINITY, -INFINITY};
  for (long double u : x)
    for (long double v : y) {
      p.lo = std::min(p.lo, mul_dir(u, v, -1));
      p.hi = std::max(p.hi, mul_dir(u, v, 1));
    }
  return p;
}
inline I mul(I a, I b, const Fmt &f) {
  I p = product(a, b);
  return outward(p.lo, p.hi, f);
}
inline I div(I a, I b, const Fmt &f) {
  if (b.lo <= 0 && b.hi >= 0)
    return {-INFINITY, INFINITY};
  const long double x[2] = {a.lo, a.hi}, y[2] = {b.lo, b.hi};
  long double lo = INFINITY, hi = -INFINITY;
  for (long double u : x)
    for (long double v : y) {
      if (f.kind == Fmt::Float) {
        lo = std::min(lo, div_dir(u, v, -1));
        hi = std::max(hi, div_dir(u, v, 1));
      } else { // C++ integer division truncates; exact in long double for 64-bit values
        long double t = std::trunc(u / v);
        lo = std::min(lo, t);
        hi = std::max(hi, t);
      }
    }
  return outward(lo, hi, f);
}
/// Integer remainder (C++ truncating division); exact operands give the exact result.
inline I mod(I a, I b) {
  if (a.lo == a.hi && b.lo == b.hi)
    return val(std::fmod(a.lo, b.lo));
  const long double m = std::max(std::fabs(b.lo), std::fabs(b.hi)) - 1;
  return {a.lo < 0 ? -m : 0, a.hi > 0 ? m : 0};
}
inline I fma(I a, I b, I c, const Fmt &f) {
  I p = product(a, b);
  return outward(add_dir(p.lo, c.lo, -1), add_dir(p.hi, c.hi, 1), f);
}
inline I min(I a, I b) { return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)}; }
inline I max(I a, I b) { return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)}; }
inline I abs(I a) {
  if (a.lo >= 0)
    return a;
  if (a.hi <= 0)
    return neg(a);
  return {0, std::max(-a.lo, a.hi)};
}

/// Conversion to f: monotone rounding to nearest even of both ends (truncation for
/// integers, != 0 for bool).
inline I cvt(I a, const Fmt &f) {
  switch (f.kind) {
  case Fmt::Float: return {round_to(a.lo, f, 0), round_to(a.hi, f, 0)};
  case Fmt::Int: return {std::trunc(a.lo), std::trunc(a.hi)};
  default:
    if (a.lo == 0 && a.hi == 0)
      return val(0);
    if (a.lo > 0 || a.hi < 0)
      return val(1);
    return {0, 1};
  }
}

// Comparisons and logic: {0}, {1}, or {0, 1} when the operands' intervals do not decide.
inline I truth(bool yes, bool no) { return yes ? val(1) : no ? val(0) : I{0, 1}; }
inline I lt(I a, I b) { return truth(a.hi < b.lo, a.lo >= b.hi); }
inline I le(I a, I b) { return truth(a.hi <= b.lo, a.lo > b.hi); }
inline I gt(I a, I b) { return lt(b, a); }
inline I ge(I a, I b) { return le(b, a); }
inline I eq(I a, I b) { return truth(a.lo == a.hi && b.lo == b.hi && a.lo == b.lo, a.hi < b.lo || b.hi < a.lo); }
inline I ne(I a, I b) {
  I e = eq(a, b);
  return {1 - e.hi, 1 - e.lo};
}
inline I lnot(I a) { return {1 - a.hi, 1 - a.lo}; }
inline I land(I a, I b) { return truth(sure(a) && sure(b), never(a) || never(b)); }
inline I lor(I a, I b) { return truth(sure(a) || sure(b), never(a) && never(b)); }
inline I sel(I c, I t, I f) { return sure(c) ? t : never(c) ? f : hull(t, f); }

/// Exact integer operations on exact operands (the generator uses them on exact values only).
inline long long exact_int(I a) { return (long long)a.lo; }
inline I band(I a, I b) { return val((long double)(exact_int(a) & exact_int(b))); }
inline I bor(I a, I b) { return val((long double)(exact_int(a) | exact_int(b))); }
inline I bxor(I a, I b) { return val((long double)(exact_int(a) ^ exact_int(b))); }
inline I shl(I a, I b) { return val((long double)(exact_int(a) << exact_int(b))); }
inline I shr(I a, I b) { return val((long double)(exact_int(a) >> exact_int(b))); }

enum Fn { Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Tanh, Sigmoid };
inline long double eval(Fn fn, long double x) {
  switch (fn) {
  case Exp: return std::exp(x);
  case Exp2: return std::exp2(x);
  case Log: return std::log(x);
  case Log2: return std::log2(x);
  case Sqrt: return std::sqrt(x);
  case Rsqrt: return 1 / std::sqrt(x);
  case Tanh: return std::tanh(x);
  default: return 1 / (1 + std::exp(-x));
  }
}
/// A math function of type f (F32 or F64) of the interval a (already converted to f).
inline I call(Fn fn, I a, const Fmt &f) {
  long double y1 = eval(fn, a.lo), y2 = eval(fn, a.hi);
  long double lo = std::min(y1, y2), hi = std::max(y1, y2); // every Fn is monotone
  // The long double functions' own error (a few ulp of 2^-64), then the device's allowance.
  const long double rel = 0x1p-58L + std::ldexp(8.0L, -(f.p - 1));
  const long double tiny = std::ldexp(4.0L, f.emin - (f.p - 1));
  lo -= std::fabs(lo) * rel + tiny;
  hi += std::fabs(hi) * rel + tiny;
  return outward(lo, hi, f);
}

/// tile::sigmoid as language.h defines it: 1 / (1 + exp(-x)), each step in f.
inline I sigmoid(I a, const Fmt &f) { return div(val(1), add(val(1), call(Exp, neg(a), f), f), f); }

/// A sum of terms in any order (reductions, cumsum, atomic_add, gemm).
struct Sum {
  long double lo = 0, hi = 0, mag = 0;
  long n = 0;
  void add(I x) {
    lo = add_dir(lo, x.lo, -1);
    hi = add_dir(hi, x.hi, 1);
    mag += std::max(std::fabs(x.lo), std::fabs(x.hi));
    ++n;
  }
};
/// The interval of what summing `s`'s terms in format f gives: `roundings` additions (or
/// dot-product steps), each off by at most `ulps` units of 2^-p relative.
inline I sum_result(const Sum &s, const Fmt &f, long roundings, int ulps = 1) {
  if (f.kind != Fmt::Float || roundings <= 0)
    return f.kind == Fmt::Float ? outward(s.lo, s.hi, f) : I{s.lo, s.hi};
  const long double u = std::ldexp((long double)ulps, -f.p), k = (long double)roundings;
  const long double gamma = k * u / (1 - k * u);
  const long double slack = gamma * s.mag * (1 + 0x1p-40L) + k * std::ldexp(1.0L, f.emin - (f.p - 1));
  // The sum is a value of f: round inward to the nearest values of f inside the bounds.
  return {up(s.lo - slack, f), down(s.hi + slack, f)};
}

// ---------------------------------------------------------------------------------------
// Host data: inputs, poisoned outputs, strided views with guard bands
// ---------------------------------------------------------------------------------------

/// Deterministic pseudo-random numbers (splitmix64).
class Rng {
public:
  explicit Rng(std::uint64_t seed) : s_(seed * 0x9e3779b97f4a7c15ull + 0x7f4a7c159e3779b9ull) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * double(next() >> 11) * 0x1p-53; }
  long long integer(long long lo, long long hi) { return lo + (long long)(next() % (unsigned long long)(hi - lo + 1)); }

private:
  std::uint64_t s_;
};

template <class E> constexpr bool is_ext = tile::detail::is_extended_float_v<E>;
template <class E> constexpr bool is_fp = std::is_floating_point_v<E> || is_ext<E>;

template <class E> long double value_of(E x) {
  if constexpr (is_ext<E>)
    return (long double)float(x);
  else
    return (long double)x;
}
template <class E> E from_value(long double v) {
  if constexpr (is_ext<E>)
    return E(float(v)); // v is a value of E: exact
  else
    return E(v);
}

/// What an output holds before the launch: NaN for floats, 0x5a bytes otherwise.
template <class E> E poison() {
  if constexpr (std::is_floating_point_v<E>)
    return std::numeric_limits<E>::quiet_NaN();
  else if constexpr (is_ext<E>)
    return E(std::numeric_limits<float>::quiet_NaN());
  else {
    E v;
    std::memset(&v, 0x5a, sizeof v);
    return v;
  }
}

/// A tensor of logical sizes `dims` (rank 1 to 3) inside one device allocation: a view
/// with strides (row-major, padded rows, transposed or every other element) that starts
/// past a guard band. Everything around and between the view's elements is filled with
/// `fill` and must still hold it after the launch (outputs) or must not be read (inputs:
/// NaN or a large value).
template <class E, int R> struct Tensor {
  /// Host storage (std::vector<bool> would pack its bits).
  using S = std::conditional_t<std::is_same_v<E, bool>, unsigned char, E>;
  std::array<std::int64_t, R> dims{}, strides{};
  std::int64_t offset = 0, total = 0;
  std::vector<S> host; // the whole allocation
  std::unique_ptr<tile::array<E, 1>> dev;

  /// layout: 0 row-major, 1 padded rows, 2 transposed (last two dims swapped in memory),
  /// 3 every other element of the last dim, 4 stride 0 along the first dim (inputs only:
  /// a broadcast view). The view starts `offset` elements into the allocation, past
  /// `before` rows of dimension 0 of guard memory; `after` more such rows follow it
  /// (padded(): the tensor with those rows, which a kernel views back with rows()).
  Tensor(std::array<std::int64_t, R> d, int layout, S fill, std::int64_t start = 5, std::int64_t before = 0,
         std::int64_t after = 0)
      : dims(d) {
    std::array<int, R> order; // dims from fastest to slowest in memory
    for (int i = 0; i < R; ++i)
      order[i] = R - 1 - i;
    if (layout == 2 && R >= 2)
      std::swap(order[0], order[1]);
    std::int64_t s = layout == 3 ? 2 : 1;
    for (int i = 0; i < R; ++i) {
      if (layout == 4 && order[i] == 0) {
        strides[0] = 0;
        continue;
      }
      strides[order[i]] = s;
      s *= std::max<std::int64_t>(dims[order[i]], 1);
      if (i == 0 && layout == 1)
        s += 3; // padding after each row
    }
    offset = start + before * strides[0];
    total = offset + s + after * strides[0] + 7;
    host.assign(std::size_t(total), fill);
  }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto d : dims)
      n *= d;
    return n;
  }
  /// The memory offset of logical element `flat` (row-major over dims).
  std::int64_t at(std::int64_t flat) const {
    std::int64_t off = offset;
    for (int d = R - 1; d >= 0; --d) {
      off += (flat % dims[d]) * strides[d];
      flat /= dims[d];
    }
    return off;
  }
  S &operator[](std::int64_t flat) { return host[std::size_t(at(flat))]; }
  void upload() {
    dev = std::make_unique<tile::array<E, 1>>(std::array<std::int64_t, 1>{total});
    tile::rt::copy_to_device(dev->device(), dev->data(), host.data(), host.size() * sizeof(S));
  }
  void download() {
    tile::synchronize();
    tile::rt::copy_to_host(dev->device(), host.data(), dev->data(), host.size() * sizeof(S));
  }
  tile::tensor<E, R> view() const { return tile::tensor<E, R>(dev->data() + offset, dims, strides); }
  /// The view with `before` rows of dimension 0 before it and `after` after it (guard memory).
  tile::tensor<E, R> padded(std::int64_t before, std::int64_t after) const {
    auto d = dims;
    d[0] += before + after;
    return tile::tensor<E, R>(dev->data() + offset - before * strides[0], d, strides);
  }
};

/// Fills the logical elements of an input with values uniform in [lo, hi] (integers for
/// integer types) and returns their exact values, row-major (read back: elements of a
/// broadcast view share memory).
template <class E, int R> std::vector<long double> fill_input(Tensor<E, R> &t, Rng &rng, double lo, double hi) {
  std::vector<long double> v(std::size_t(t.numel()));
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    typename Tensor<E, R>::S x;
    if constexpr (std::is_same_v<E, bool>)
      x = rng.next() & 1;
    else if constexpr (is_fp<E>)
      x = E(float(rng.uniform(lo, hi)));
    else
      x = E(rng.integer((long long)lo, (long long)hi));
    t[i] = x;
  }
  for (std::int64_t i = 0; i < t.numel(); ++i)
    v[std::size_t(i)] = value_of(t[i]);
  return v;
}

/// Fills a rank-1 int tensor with an order of its indices: 0 first, the others shuffled
/// (an index list of k tiles); returns the values.
/// A selection of k tiles (a block-sparse loop's mask): 1 for tile 0 (the loop runs at
/// least once), then 0 or 1 each; in runs of one value where `runs` (longer than the
/// producer's batch of tests).
template <class E> std::vector<long double> fill_select(Tensor<E, 1> &t, Rng &rng, bool runs) {
  const std::int64_t n = t.numel();
  std::vector<long double> v(static_cast<std::size_t>(n));
  long long on = 1;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i > 0 && (!runs || rng.integer(0, 9) == 0))
      on = rng.integer(0, 1);
    t[i] = E(on);
    v[std::size_t(i)] = (long double)on;
  }
  return v;
}

template <class E> std::vector<long double> fill_order(Tensor<E, 1> &t, Rng &rng) {
  const std::int64_t n = t.numel();
  std::vector<long long> order(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    order[std::size_t(i)] = i;
  for (std::int64_t i = n - 1; i > 1; --i)
    std::swap(order[std::size_t(i)], order[std::size_t(rng.integer(1, (long long)i))]);
  std::vector<long double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    t[i] = E(order[std::size_t(i)]);
    v[std::size_t(i)] = (long double)order[std::size_t(i)];
  }
  return v;
}

/// The expectation for one output element: an interval, or "left as it was" (poison or the
/// initial value).
struct Want {
  I v{NAN, NAN};
  bool untouched = true;
};

/// Compares an output's logical elements with `want` and its other memory with `fill`.
/// Prints at most three wrong elements; returns the number of wrong ones.
template <class E, int R>
long compare(const char *name, const Tensor<E, R> &t, const std::vector<Want> &want,
             const std::vector<typename Tensor<E, R>::S> &before, std::string &why) {
  using S = typename Tensor<E, R>::S;
  long wrong = 0;
  std::vector<char> logical(t.host.size(), 0);
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const std::size_t off = std::size_t(t.at(i));
    logical[off] = 1;
    const S got = t.host[off];
    bool ok;
    long double g = value_of(got);
    if (want[std::size_t(i)].untouched)
      ok = std::memcmp(&got, &before[off], sizeof(S)) == 0;
    else
      ok = !std::isnan(g) && g >= want[std::size_t(i)].v.lo && g <= want[std::size_t(i)].v.hi;
    if (!ok && wrong++ < 3) {
      char buf[256];
      if (want[std::size_t(i)].untouched)
        std::snprintf(buf, sizeof buf, " %s[%lld]=%.9Lg (must stay %.9Lg)", name, (long long)i, g,
                      value_of(before[off]));
      else
        std::snprintf(buf, sizeof buf, " %s[%lld]=%.9Lg not in [%.9Lg, %.9Lg]", name, (long long)i, g,
                      want[std::size_t(i)].v.lo, want[std::size_t(i)].v.hi);
      why += buf;
    }
  }
  for (std::size_t off = 0; off < t.host.size(); ++off)
    if (!logical[off] && std::memcmp(&t.host[off], &before[off], sizeof(S)) != 0 && wrong++ < 3)
      why += " " + std::string(name) + ": memory outside the view written at offset " + std::to_string(off);
  return wrong;
}

/// Reads of input tensors in the reference: zero past the edge (as tile::copy reads).
inline long double read(const std::vector<long double> &v, std::initializer_list<long long> idx,
                        std::initializer_list<long long> dims) {
  long long flat = 0;
  auto d = dims.begin();
  for (long long i : idx) {
    if (i < 0 || i >= *d)
      return 0;
    flat = flat * *d + i;
    ++d;
  }
  return v[std::size_t(flat)];
}
inline long long flat_index(std::initializer_list<long long> idx, std::initializer_list<long long> dims, bool &inside) {
  long long flat = 0;
  auto d = dims.begin();
  inside = true;
  for (long long i : idx) {
    if (i < 0 || i >= *d)
      inside = false;
    flat = flat * *d + i;
    ++d;
  }
  return flat;
}

/// An output combined by atomics: per element the initial value and what the blocks add.
struct Atomic {
  enum Kind { Add, Max, Min } kind;
  const Fmt *fmt;
  std::vector<Sum> sums;
  std::vector<I> ext;
  std::vector<char> touched;
  Atomic(Kind k, const Fmt &f, const std::vector<long double> &init) : kind(k), fmt(&f) {
    sums.resize(init.size());
    ext.resize(init.size());
    touched.assign(init.size(), 0);
    for (std::size_t i = 0; i < init.size(); ++i) {
      sums[i].add(val(init[i]));
      ext[i] = val(init[i]);
    }
  }
  void apply(long long flat, I v) {
    v = cvt(v, fmt->kind == Fmt::Float && fmt->p < 24 ? F32 : *fmt); // to the tensor's arithmetic type
    touched[std::size_t(flat)] = 1;
    if (kind == Add)
      sums[std::size_t(flat)].add(v);
    else
      ext[std::size_t(flat)] = kind == Max ? max(ext[std::size_t(flat)], v) : min(ext[std::size_t(flat)], v);
  }
  std::vector<Want> result() const {
    std::vector<Want> w(sums.size());
    for (std::size_t i = 0; i < sums.size(); ++i) {
      if (!touched[i])
        continue;
      w[i].untouched = false;
      // Each atomic add rounds to the tensor's type.
      w[i].v = kind == Add ? sum_result(sums[i], *fmt, sums[i].n - 1) : cvt(ext[i], *fmt);
    }
    return w;
  }
};

inline int failures = 0;
inline void report(unsigned long long seed, bool ok, const std::string &why) {
  if (ok)
    std::printf("PASS %llu\n", seed);
  else
    std::printf("FAIL %llu:%s\n", seed, why.c_str());
  std::fflush(stdout);
  failures += !ok;
}

} // namespace fz
