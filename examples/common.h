// What the examples share on the host: sizes from argv, random inputs, the float64 check,
// timing, and the line they end with:
//   PASS <name> <size> <time> ms     (exit status 0)
//   FAIL <name> <size> ...           (exit status 1)
// With TILE_BENCH_REPS=N in the environment, the time is the median of N samples of 10
// launches in a row after 10 warm-up launches (time_ms), and a JSON line in the format of
// ../shared/bench/peers.py follows (bench/).
#pragma once

#include <tile/tile.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace example {

/// argv[i] as a positive int, or `fallback` when it is not given.
inline int size_arg(int argc, char **argv, int i, int fallback) {
  if (i >= argc)
    return fallback;
  int v = std::atoi(argv[i]);
  if (v <= 0) {
    std::fprintf(stderr, "%s: size '%s' is not a positive integer\n", argv[0], argv[i]);
    std::exit(2);
  }
  return v;
}

/// `n` deterministic pseudo-random values uniform in [lo, hi] (splitmix64), rounded to T.
template <class T> std::vector<T> random(std::size_t n, std::uint64_t seed, double lo = -1, double hi = 1) {
  std::vector<T> v(n);
  std::uint64_t s = seed * 0x9e3779b97f4a7c15ull;
  for (auto &x : v) {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    x = T(float(lo + (hi - lo) * double(z >> 11) * 0x1p-53));
  }
  return v;
}

/// A device array holding `host`, or NaN everywhere when `host` is empty.
template <class T, int Rank> tile::array<T, Rank> device_array(std::array<std::int64_t, Rank> sizes, const std::vector<T> &host = {}) {
  tile::array<T, Rank> a(sizes);
  if (host.empty())
    a.copy_from(std::vector<T>(std::size_t(a.numel()), T(std::numeric_limits<float>::quiet_NaN())));
  else
    a.copy_from(host);
  return a;
}

/// ||got - ref|| / ||ref|| in the Frobenius norm; NaN when `got` holds a NaN.
template <class T> double rel_error(const std::vector<double> &ref, const std::vector<T> &got) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    double d = double(float(got[i])) - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

/// TILE_BENCH_REPS, or 0 when unset.
inline int bench_reps() {
  const char *v = std::getenv("TILE_BENCH_REPS");
  return v ? std::max(0, std::atoi(v)) : 0;
}

/// Runs `launch` and waits for the device; returns the elapsed milliseconds. In bench mode,
/// after 10 warm-up launches (the first loads the image), the median over bench_reps()
/// samples of the time per launch of 10 launches in a row (the device's time per kernel,
/// without the host's launch and wake-up latency, which CUDA-event timings such as
/// peers.py's also leave out). peers.py warms up with 10 launches and times 50: with
/// TILE_BENCH_REPS=5 both run as long, which matters where a long run is held at the GPU's
/// power limit (the H200 at GEMM 8192^3: bench/NOTES.md, session 22).
template <class F> double time_ms(F &&launch) {
  auto timed = [&](int n) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i)
      launch();
    tile::synchronize();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / n;
  };
  double first = timed(1);
  const int reps = bench_reps();
  if (reps == 0)
    return first;
  timed(9);
  std::vector<double> t;
  for (int r = 0; r < reps; ++r)
    t.push_back(timed(10));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// In bench mode, the JSON line of one measurement: `work` is floating-point operations
/// (unit "tflops") or bytes moved (unit "gbps").
inline void bench_line(const char *kernel, const std::string &shape, double ms, double work, const char *unit,
                       double err) {
  if (bench_reps() == 0)
    return;
  const double rate = std::string(unit) == "tflops" ? work / ms / 1e9 : work / ms / 1e6;
  std::printf("{\"kernel\": \"%s\", \"shape\": \"%s\", \"impl\": \"tile\", \"device\": \"%s\", \"ms\": %.4f, "
              "\"%s\": %.2f, \"err\": %.3g}\n",
              kernel, shape.c_str(), tile::current_device().name().c_str(), ms, unit, rate, err);
}

/// Prints the PASS or FAIL line; returns the exit status.
inline int report(const char *name, const std::string &size, double ms, double err, double tol) {
  if (err <= tol) {
    std::printf("PASS %s %s %.3f ms\n", name, size.c_str(), ms);
    return 0;
  }
  std::printf("FAIL %s %s: relative error %.3g > %.3g\n", name, size.c_str(), err, tol);
  return 1;
}

/// Runs `body` (which returns an exit status), turning a tile::error into FAIL.
template <class F> int run(const char *name, F &&body) {
  try {
    return body();
  } catch (const tile::error &e) {
    std::printf("FAIL %s: %s\n", name, e.what());
    return 1;
  }
}

} // namespace example
