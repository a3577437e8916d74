// The kernel language: what a [[tile::kernel]] body is written in.
//
// These are declarations for the compiler: the tile plugin reads calls to them out of the
// kernel's AST and replaces the kernel's body by a launch. Compiled without the plugin
// (editors, clangd, a plain clang++), the header still compiles and a kernel call throws
// tile::error at its tile::grid statement; the bodies below only keep that build linkable.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tile/tensor.h"
#include "tile/types.h"

namespace tile {

namespace detail {
#define TILE_SCALAR_FN constexpr
#include "tile/detail/tile_scalar.h"
#undef TILE_SCALAR_FN
template <class T>
constexpr bool is_extended_float_v =
    std::is_same_v<T, f16> || std::is_same_v<T, bf16> || std::is_same_v<T, f8e4m3> ||
    std::is_same_v<T, f8e5m2>;
/// The arithmetic type a value of type T computes in: extended floats compute in float.
template <class T> using arith_t = std::conditional_t<is_extended_float_v<std::remove_cvref_t<T>>, float, std::remove_cvref_t<T>>;
/// The result of a math function of T: double stays double, everything else is float.
template <class T> using math_t = std::conditional_t<std::is_same_v<arith_t<T>, double>, double, float>;
template <class A, class B> using common_t = std::common_type_t<arith_t<A>, arith_t<B>>;
template <class T> T &unreachable_ref() { no_plugin("a tile buffer"); }
} // namespace detail

template <class T, int Rank> class array;
namespace detail {
template <class T> struct is_host_array : std::false_type {};
template <class T, int Rank> struct is_host_array<array<T, Rank>> : std::true_type {};
/// The operands of a tile operation: never tile::array (memory of the host's), so that a
/// host call of a kernel named like one (`gemm(A, B, C)` with arrays) finds the kernel, not
/// the operation, by argument-dependent lookup.
template <class... T> concept tile_operands = (!is_host_array<std::remove_cvref_t<T>>::value && ...);
} // namespace detail

// ---------------------------------------------------------------------------------------
// Launch configuration
// ---------------------------------------------------------------------------------------

struct threads_t {
  int count;
};
/// Threads per block (default 128), as the last argument of tile::grid.
constexpr threads_t threads(int n) { return threads_t{n}; }

/// Binds the block's indices; its arguments are the grid's extents.
inline std::array<int, 1> grid(int) { detail::no_plugin("tile::grid"); }
inline std::array<int, 1> grid(int, threads_t) { detail::no_plugin("tile::grid"); }
inline std::array<int, 2> grid(int, int) { detail::no_plugin("tile::grid"); }
inline std::array<int, 2> grid(int, int, threads_t) { detail::no_plugin("tile::grid"); }
inline std::array<int, 3> grid(int, int, int) { detail::no_plugin("tile::grid"); }
inline std::array<int, 3> grid(int, int, int, threads_t) { detail::no_plugin("tile::grid"); }

/// States what the kernel assumes of its arguments, as a statement before tile::grid:
/// evaluated on the host at each launch; when `condition` is false the launch throws
/// tile::error naming the kernel and `message` instead of running.
void expect(bool condition, const char *message);

/// Rasterizes blocks in panels of `panel` for L2 reuse.
inline void use_swizzle(int panel = 8) { (void)panel; }

/// Whether the compiler gives the kernel a producer warpgroup that runs a pipelined loop's
/// copies as bulk tensor copies (Hopper, sm_90a). Without the call it does so for loops of
/// copies and gemms only; warp_specialize(true) also for loops with other work (attention's
/// softmax); warp_specialize(false) keeps the kernel's pipelines on cp.async.
inline void warp_specialize(bool on = true) { (void)on; }

/// Whether a warp-specialized kernel (Hopper, sm_90a) runs on a persistent grid: at most one
/// block an SM, each taking the grid's tiles in turn (in the order the launch would run
/// them, use_swizzle's panels included), its producer warpgroup loading the next tile while
/// its consumers finish the last. Off without the call.
inline void persistent(bool on = true) { (void)on; }

// ---------------------------------------------------------------------------------------
// Buffers
// ---------------------------------------------------------------------------------------

namespace detail {
template <class T, int... D> struct tile_buffer {
  static_assert(sizeof...(D) >= 1 && sizeof...(D) <= 4, "tile buffers have rank 1 to 4");
  static_assert(((D > 0) && ...), "tile buffer extents must be positive");
  using element_type = T;
  static constexpr int rank = sizeof...(D);
  static constexpr std::array<int, sizeof...(D)> shape{D...};

  template <class... I>
    requires(sizeof...(I) == sizeof...(D) && (std::is_integral_v<I> && ...))
  T &operator()(I...) const {
    return unreachable_ref<T>();
  }
  template <class... I>
    requires(sizeof...(I) == sizeof...(D) && (is_index_v<I> && ...))
  region<tile_buffer, sizeof...(D)> at(I... idx) const {
    return {this, {index_start(idx)...}};
  }
};
} // namespace detail

/// Block-shared memory.
template <class T, int... D> struct shared : detail::tile_buffer<T, D...> {};
/// Registers distributed over the block's threads (layout chosen by the compiler).
template <class T, int... D> struct fragment : detail::tile_buffer<T, D...> {};
/// Registers private to each thread.
template <class T, int... D> struct local : detail::tile_buffer<T, D...> {};

// ---------------------------------------------------------------------------------------
// Loops
// ---------------------------------------------------------------------------------------

namespace detail {
/// A range over [begin, end) yielding int (N == 1) or std::array<int, N>.
template <int N> struct index_range {
  std::array<int, N> extent;
  struct iterator {
    std::array<int, N> idx;
    const std::array<int, N> *extent;
    bool operator!=(const iterator &o) const { return idx != o.idx; }
    void operator++() {
      for (int d = N - 1; d >= 0; --d) {
        if (++idx[d] < (*extent)[d] || d == 0)
          return;
        idx[d] = 0;
      }
    }
    auto operator*() const {
      if constexpr (N == 1)
        return idx[0];
      else
        return idx;
    }
  };
  iterator begin() const {
    for (int e : extent)
      if (e <= 0)
        return end();
    return {{}, &extent};
  }
  iterator end() const {
    std::array<int, N> e{};
    e[0] = extent[0];
    return {e, &extent};
  }
};
struct seq_range {
  int first, last;
  struct iterator {
    int i;
    bool operator!=(const iterator &o) const { return i != o.i; }
    void operator++() { ++i; }
    int operator*() const { return i; }
  };
  iterator begin() const { return {first}; }
  iterator end() const { return {last > first ? last : first}; }
};
} // namespace detail

struct stages_t {
  int count;
};
/// Pipeline depth of a tile::pipelined loop.
constexpr stages_t stages(int n) { return stages_t{n}; }

/// Element-wise loop over a tile; extents are compile-time constants.
template <class... E>
  requires(sizeof...(E) >= 1 && sizeof...(E) <= 4 && (std::is_integral_v<E> && ...))
detail::index_range<sizeof...(E)> parallel(E... extents) {
  return {{int(extents)...}};
}
/// A sequential loop whose copies overlap with compute `s.count` deep.
inline detail::seq_range pipelined(int n, stages_t = {2}) { return {0, n}; }
inline detail::seq_range pipelined(int begin, int end, stages_t = {2}) { return {begin, end}; }
/// Sequential loops.
inline detail::seq_range serial(int n) { return {0, n}; }
inline detail::seq_range serial(int begin, int end) { return {begin, end}; }
/// A sequential loop, fully unrolled (its extent must be a compile-time constant).
inline detail::seq_range unroll(int n) { return {0, n}; }

// ---------------------------------------------------------------------------------------
// Tile operations
// ---------------------------------------------------------------------------------------

enum class warp_policy { square, full_row, full_col };

struct gemm_options {
  bool transpose_a = false;
  bool transpose_b = false;
  bool clear_accum = false;
  warp_policy policy = warp_policy::square;
};

template <class Src, class Dst> requires detail::tile_operands<Src, Dst> void copy(const Src &, const Dst &) {}
template <class A, class B, class C> requires detail::tile_operands<A, B, C> void gemm(const A &, const B &, C &, gemm_options = {}) {}
template <class Buf> requires detail::tile_operands<Buf> void clear(Buf &) {}
template <class Buf, class V> requires detail::tile_operands<Buf> void fill(Buf &, V) {}

template <class Src, class Dst> requires detail::tile_operands<Src, Dst> void reduce_sum(const Src &, Dst &, int /*dim*/, bool /*clear*/ = true) {}
template <class Src, class Dst> requires detail::tile_operands<Src, Dst> void reduce_max(const Src &, Dst &, int /*dim*/, bool /*clear*/ = true) {}
template <class Src, class Dst> requires detail::tile_operands<Src, Dst> void reduce_min(const Src &, Dst &, int /*dim*/, bool /*clear*/ = true) {}
template <class Src, class Dst> requires detail::tile_operands<Src, Dst> void reduce_absmax(const Src &, Dst &, int /*dim*/, bool /*clear*/ = true) {}
template <class Src, class Dst> requires detail::tile_operands<Src, Dst> void reduce_abssum(const Src &, Dst &, int /*dim*/, bool /*clear*/ = true) {}
/// The extreme of `src` along `dim` into `values` and its first position along `dim` (plus
/// `first`) into `indices`; with `clear = false`, combined with what they hold.
template <class Src, class Val, class Idx>
  requires detail::tile_operands<Src, Val, Idx>
void reduce_argmax(const Src &, Val &, Idx &, int /*dim*/, bool /*clear*/ = true, long long /*first*/ = 0) {}
template <class Src, class Val, class Idx>
  requires detail::tile_operands<Src, Val, Idx>
void reduce_argmin(const Src &, Val &, Idx &, int /*dim*/, bool /*clear*/ = true, long long /*first*/ = 0) {}
/// Sorts each row of shared buffer `keys` along `dim` in place (with `values`: moves them
/// with their keys), ascending or descending.
template <class Keys> requires detail::tile_operands<Keys> void sort(Keys &, int /*dim*/, bool /*descending*/ = false) {}
template <class Keys, class Values>
  requires detail::tile_operands<Keys, Values>
void sort(Keys &, Values &, int /*dim*/, bool /*descending*/ = false) {}
/// The largest k elements of each row of `src` along `dim` (k: the extent of `values` and
/// `indices` along it), largest first, into `values`, and their positions into `indices`.
template <class Src, class Val, class Idx>
  requires detail::tile_operands<Src, Val, Idx>
void topk(const Src &, Val &, Idx &, int /*dim*/) {}
template <class Src, class Dst> requires detail::tile_operands<Src, Dst> void cumsum(const Src &, Dst &, int /*dim*/, bool /*reverse*/ = false) {}

namespace detail {
/// What an atomic gives: the element's type for an element `C(i, j)`, nothing for a region.
template <class Dst>
using atomic_result_t = std::conditional_t<std::is_arithmetic_v<std::remove_cvref_t<Dst>> ||
                                               is_extended_float_v<std::remove_cvref_t<Dst>>,
                                           std::remove_cvref_t<Dst>, void>;
template <class Dst> atomic_result_t<Dst> atomic_result() {
  if constexpr (!std::is_void_v<atomic_result_t<Dst>>)
    return atomic_result_t<Dst>{};
}
} // namespace detail

/// On a tensor element (`atomic_add(C(i, j), v)`: returns the element's value before it), or
/// element-wise from a buffer onto a tensor region (`atomic_add(C.at(i, j), frag)`).
template <class Dst, class V> detail::atomic_result_t<Dst> atomic_add(Dst &&, const V &) { return detail::atomic_result<Dst>(); }
template <class Dst, class V> detail::atomic_result_t<Dst> atomic_max(Dst &&, const V &) { return detail::atomic_result<Dst>(); }
template <class Dst, class V> detail::atomic_result_t<Dst> atomic_min(Dst &&, const V &) { return detail::atomic_result<Dst>(); }
/// On a tensor element: stores v, returns the value it replaced.
template <class Dst, class V> detail::atomic_result_t<Dst> atomic_exchange(Dst &&, const V &) { return detail::atomic_result<Dst>(); }
/// On a tensor element: stores v where the element equals `expected` (bit for bit), returns
/// the value it found (equal to `expected` where it stored).
template <class Dst, class E, class V>
detail::atomic_result_t<Dst> atomic_compare_exchange(Dst &&, const E &, const V &) { return detail::atomic_result<Dst>(); }

// ---------------------------------------------------------------------------------------
// Scalar functions
// ---------------------------------------------------------------------------------------

/// (a + b - 1) / b with the language's integer division, on the host as in kernels: a
/// divisor of 0 gives 0 (see the manual's Element types).
template <class A, class B> constexpr auto ceildiv(A a, B b) {
  using R = decltype((a + b - 1) / b);
  if constexpr (std::is_integral_v<R>) {
    using U = std::make_unsigned_t<R>;
    return detail::checked_div<R>(R(U(R(a)) + U(R(b)) - U(1)), R(b));
  } else {
    return (a + b - 1) / b;
  }
}

template <class A, class B> constexpr detail::common_t<A, B> min(A a, B b) {
  using R = detail::common_t<A, B>;
  return R(a) < R(b) ? R(a) : R(b);
}
template <class A, class B> constexpr detail::common_t<A, B> max(A a, B b) {
  using R = detail::common_t<A, B>;
  return R(a) > R(b) ? R(a) : R(b);
}
template <class T> constexpr detail::arith_t<T> abs(T x) {
  using R = detail::arith_t<T>;
  return R(x) < R(0) ? -R(x) : R(x);
}
#define TILE_MATH_FN(NAME, EXPR)                                                                   \
  template <class T> detail::math_t<T> NAME(T x_) {                                                \
    using R = detail::math_t<T>;                                                                   \
    R x = R(x_);                                                                                   \
    return EXPR;                                                                                   \
  }
TILE_MATH_FN(exp, std::exp(x))
TILE_MATH_FN(exp2, std::exp2(x))
TILE_MATH_FN(log, std::log(x))
TILE_MATH_FN(log2, std::log2(x))
TILE_MATH_FN(sqrt, std::sqrt(x))
TILE_MATH_FN(rsqrt, R(1) / std::sqrt(x))
TILE_MATH_FN(tanh, std::tanh(x))
TILE_MATH_FN(sigmoid, R(1) / (R(1) + std::exp(-x)))
/// Rounds half away from zero (as std::round).
TILE_MATH_FN(round, std::round(x))
TILE_MATH_FN(floor, std::floor(x))
TILE_MATH_FN(ceil, std::ceil(x))
TILE_MATH_FN(trunc, std::trunc(x))
TILE_MATH_FN(sin, std::sin(x))
TILE_MATH_FN(cos, std::cos(x))
TILE_MATH_FN(erf, std::erf(x))
TILE_MATH_FN(log1p, std::log1p(x))
TILE_MATH_FN(expm1, std::expm1(x))
#undef TILE_MATH_FN
template <class A, class B, class C> detail::math_t<detail::common_t<detail::common_t<A, B>, C>> fma(A a, B b, C c) {
  using R = detail::math_t<detail::common_t<detail::common_t<A, B>, C>>;
  return std::fma(R(a), R(b), R(c));
}
template <class A, class B> detail::math_t<detail::common_t<A, B>> pow(A a, B b) {
  using R = detail::math_t<detail::common_t<A, B>>;
  return std::pow(R(a), R(b));
}
template <class T> bool isnan(T x) { return std::isnan(detail::math_t<T>(x)); }
template <class T> bool isinf(T x) { return std::isinf(detail::math_t<T>(x)); }

/// Converts between element types. Floating-point to integer truncates toward zero,
/// saturates at the integer type's limits and gives 0 for NaN, on every target.
template <class T, class U> constexpr T cast(U x) {
  using A = detail::arith_t<U>;
  if constexpr (std::is_floating_point_v<A> && std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return detail::saturate_cast<T>(A(x));
  else
    return T(A(x));
}
namespace rt {
/// What a kernel's launch stub runs for an integer `/` or `%` whose divisor may be 0 or -1,
/// and for a floating-point to integer conversion, in the statements before tile::grid (the
/// plugin rewrites them so that the host computes what the device does).
template <class T> constexpr T divide(T x, T y) { return tile::detail::checked_div<T>(x, y); }
template <class T> constexpr T remainder(T x, T y) { return tile::detail::checked_mod<T>(x, y); }
template <class F, class To> constexpr To to_integer(F x, To) { return tile::detail::saturate_cast<To>(x); }
} // namespace rt

template <class T> T infinity() {
  return T(std::numeric_limits<detail::math_t<T>>::infinity());
}
template <class T> T lowest() {
  if constexpr (detail::is_extended_float_v<T>)
    return T(-std::numeric_limits<float>::infinity());
  else
    return std::numeric_limits<T>::lowest();
}

// ---------------------------------------------------------------------------------------
// Layout control and debugging
// ---------------------------------------------------------------------------------------

/// A layout annotation for tile::annotate_layout.
struct layout {
  enum class kind { row_major, col_major, swizzled } k = kind::row_major;
  int swizzle_bytes = 0;
};
namespace layouts {
constexpr layout row_major() { return {layout::kind::row_major, 0}; }
constexpr layout col_major() { return {layout::kind::col_major, 0}; }
/// A row-major shared layout whose 16-byte chunks are XOR-swizzled within `bytes`.
constexpr layout swizzled(int bytes = 128) { return {layout::kind::swizzled, bytes}; }
} // namespace layouts
template <class Buf> void annotate_layout(const Buf &, layout) {}

/// Prints its arguments on one line with a block-index prefix: once per block, or once per
/// iteration inside a parallel loop. `print("label", buf)` prints a whole shared, fragment
/// or local buffer once per block, one line per row.
template <class... A> void print(const A &...) {}
/// Traps the kernel with `message` when `cond` is false.
inline void device_assert(bool cond, const char *message) { (void)cond, (void)message; }

} // namespace tile
