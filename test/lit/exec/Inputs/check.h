// Host helpers of the execution tests: deterministic inputs, poisoned outputs, float64
// references and the PASS / FAIL lines that FileCheck reads.
#pragma once

#include <tile/tile.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace check {

template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T> || tile::detail::is_extended_float_v<T>;

/// Deterministic pseudo-random numbers (splitmix64); each seed gives its own stream.
class rng {
public:
  explicit rng(std::uint64_t seed) : s_(seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * double(next() >> 11) * 0x1p-53; }
  /// An integer in [lo, hi].
  std::int64_t integer(std::int64_t lo, std::int64_t hi) { return lo + std::int64_t(next() % std::uint64_t(hi - lo + 1)); }

private:
  std::uint64_t s_;
};

/// The stream all inputs of a test program come from: fresh values for every input, the
/// same values in every run.
inline rng inputs(2024);

/// `n` values uniform in [lo, hi] (integers for integral T), rounded to T.
template <class T> std::vector<T> random(std::size_t n, double lo = -1, double hi = 1) {
  rng &r = inputs;
  std::vector<T> v(n);
  for (auto &x : v) {
    if constexpr (is_float_v<T>)
      x = T(float(r.uniform(lo, hi)));
    else
      x = T(r.integer(std::int64_t(lo), std::int64_t(hi)));
  }
  return v;
}

/// What an output holds before a kernel runs: NaN for floats, 0x5a5a... for integers.
template <class T> T poison() {
  if constexpr (std::is_floating_point_v<T>)
    return std::numeric_limits<T>::quiet_NaN();
  else if constexpr (is_float_v<T>)
    return T(std::numeric_limits<float>::quiet_NaN());
  else {
    T v;
    std::memset(&v, 0x5a, sizeof v);
    return v;
  }
}
template <class T> std::vector<T> poisoned(std::size_t n) { return std::vector<T>(n, poison<T>()); }

/// The exact value of x as a double.
template <class T> double value(T x) {
  if constexpr (tile::detail::is_extended_float_v<T>)
    return double(float(x));
  else
    return double(x);
}
template <class T> std::vector<double> values(const std::vector<T> &v) {
  std::vector<double> d(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    d[i] = value(v[i]);
  return d;
}

/// A device array of the given sizes holding `host`.
template <class T, std::size_t R> tile::array<T, int(R)> upload(const std::vector<T> &host, const std::int64_t (&sizes)[R]) {
  std::array<std::int64_t, R> s;
  for (std::size_t d = 0; d < R; ++d)
    s[d] = sizes[d];
  tile::array<T, int(R)> a(s);
  a.copy_from(host);
  return a;
}

inline int failures = 0;

/// Prints "PASS name" or "FAIL name: why" and counts failures.
inline bool report(const std::string &name, bool ok, const std::string &why = "") {
  if (ok)
    std::printf("PASS %s\n", name.c_str());
  else
    std::printf("FAIL %s: %s\n", name.c_str(), why.c_str());
  std::fflush(stdout);
  failures += !ok;
  return ok;
}
/// The exit status of a test program.
inline int result() { return failures ? 1 : 0; }

/// The relative Frobenius-norm error of `got` against `ref` (NaN when `got` holds a NaN).
template <class T> double rel_error(const std::vector<double> &ref, const std::vector<T> &got) {
  if (ref.size() != got.size())
    return std::numeric_limits<double>::infinity();
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    double d = value(got[i]) - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

/// Checks `got` against a float64 reference by relative norm error.
template <class T> bool close(const std::string &name, const std::vector<double> &ref, const std::vector<T> &got, double tol) {
  double err = rel_error(ref, got);
  char why[96];
  std::snprintf(why, sizeof why, "relative error %.3g > %.3g", err, tol);
  return report(name, err <= tol, why);
}

/// Checks `got` element by element against `ref`: exactly (a NaN equals a NaN).
template <class T, class U> bool equal(const std::string &name, const std::vector<T> &ref, const std::vector<U> &got) {
  if (ref.size() != got.size())
    return report(name, false, "size " + std::to_string(got.size()) + ", expected " + std::to_string(ref.size()));
  char why[128];
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if constexpr (std::is_integral_v<T> && std::is_integral_v<U>) {
      if (std::cmp_equal(ref[i], got[i]))
        continue;
      std::snprintf(why, sizeof why, "element %zu is %lld, expected %lld", i, (long long)got[i], (long long)ref[i]);
    } else {
      double r = value(ref[i]), g = value(got[i]);
      if (r == g || (std::isnan(r) && std::isnan(g)))
        continue;
      std::snprintf(why, sizeof why, "element %zu is %.9g, expected %.9g", i, g, r);
    }
    return report(name, false, why);
  }
  return report(name, true);
}

/// Runs `f`, expecting a tile::error whose message contains every string of `needles`.
inline bool throws(const std::string &name, const std::function<void()> &f, std::initializer_list<const char *> needles) {
  try {
    f();
    tile::synchronize();
  } catch (const tile::error &e) {
    std::string msg = e.what();
    std::printf("message: %s\n", msg.c_str());
    for (const char *n : needles)
      if (msg.find(n) == std::string::npos)
        return report(name, false, std::string("the message does not mention '") + n + "'");
    return report(name, true);
  }
  return report(name, false, "no tile::error was thrown");
}

/// Checks which entry the last launch ran (tile::rt::last_tensor_map_launch): on an sm_90
/// GPU the warp-specialized one with tensor maps where the tensors allow them (`maps`), else
/// the fallback; on other devices, or in a build with gemm=mma (test/gpu's NAME-mma programs,
/// TILE_GPU_TEST_GEMM_MMA: no wgmma, no producer), the kernel has no tensor maps.
inline void entry(const char *name, bool maps) {
  const tile::device d = tile::current_device();
#ifdef TILE_GPU_TEST_GEMM_MMA
  const bool specialized = false;
#else
  const bool specialized = d.backend == tile::backend::cuda && d.architecture() == "sm_90";
#endif
  const int want = specialized ? (maps ? 1 : 0) : -1;
  const int got = tile::rt::last_tensor_map_launch();
  if (got != want) {
    std::printf("FAIL %s: entry %d, expected %d (1: tensor maps, 0: fallback, -1: none)\n", name, got, want);
    failures++;
  }
}

} // namespace check
