// Control flow in kernels: ordinary for loops with run-time bounds and steps (counting up,
// down, inclusive, empty), tile::serial and tile::unroll, if / else if / else on block
// indices around tile operations, serial loops inside parallel loops, and scalar kernel
// parameters of every integer and floating type (with a last tile::stream).
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS loops_-7_40_3
// CHECK: PASS loops_5_5_2
// CHECK: PASS loops_9_2_1
// CHECK: PASS branches
// CHECK: PASS scalar_params_int
// CHECK: PASS scalar_params_float
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

/// Block b folds the values of its loop's variable into Out[b], in order.
[[tile::kernel]] void loops(T::tensor<std::int64_t, 1> Out, int lo, int hi, int step) {
  auto [bx] = T::grid(6);
  std::int64_t acc = bx + 1;
  if (bx == 0) {
    for (int i = lo; i < hi; i += step)
      acc = (acc * 31 + i) % 1000003;
  } else if (bx == 1) {
    for (int i = hi; i >= lo; --i)
      acc = (acc * 31 + i) % 1000003;
  } else if (bx == 2) {
    for (int i = hi; i > lo; i -= step)
      acc = (acc * 31 + i) % 1000003;
  } else if (bx == 3) {
    for (int i = lo; i <= hi; i += step)
      for (int j = i; j < hi; j += 2 * step)
        acc = (acc * 31 + i * 7 + j) % 1000003;
  } else if (bx == 4) {
    for (int i : T::serial(lo, hi))
      acc = (acc * 31 + i) % 1000003;
  } else {
    T::local<int, 5> l;
    for (int u : T::unroll(5))
      l(u) = u * lo + hi;
    for (int u = 4; u >= 0; u--)
      acc = (acc * 31 + l(u)) % 1000003;
  }
  Out(bx) = acc;
}

/// The same on the host.
std::vector<std::int64_t> loops_ref(int lo, int hi, int step) {
  std::vector<std::int64_t> r;
  auto fold = [](std::int64_t &acc, std::int64_t v) { acc = (acc * 31 + v) % 1000003; };
  for (int b = 0; b < 6; ++b) {
    std::int64_t acc = b + 1;
    if (b == 0)
      for (int i = lo; i < hi; i += step)
        fold(acc, i);
    if (b == 1)
      for (int i = hi; i >= lo; --i)
        fold(acc, i);
    if (b == 2)
      for (int i = hi; i > lo; i -= step)
        fold(acc, i);
    if (b == 3)
      for (int i = lo; i <= hi; i += step)
        for (int j = i; j < hi; j += 2 * step)
          fold(acc, i * 7 + j);
    if (b == 4)
      for (int i = lo; i < hi; ++i)
        fold(acc, i);
    if (b == 5)
      for (int u = 4; u >= 0; u--)
        fold(acc, u * lo + hi);
    r.push_back(acc);
  }
  return r;
}

/// Each block of a 5 x 3 grid fills its [4, 8] tile by a branch on its indices, then
/// writes the tile's running row sums.
[[tile::kernel]] void branches(T::tensor<float, 2> Out) {
  auto [bx, by] = T::grid(5, 3);
  T::fragment<float, 4, 8> f, g;
  if (bx % 2 == 0 && by != 1) {
    T::fill(f, float(bx + 10 * by));
  } else if (bx == 3) {
    for (auto [i, j] : T::parallel(4, 8))
      f(i, j) = float(i * 8 + j);
  } else {
    T::fill(f, -1.0f);
  }
  for (int r : T::parallel(4)) {
    float s = 0.0f;
    for (int c = 0; c < 8; ++c) {
      s = s + f(r, c);
      g(r, c) = s;
    }
  }
  T::copy(g, Out.at(by * 4, bx * 8));
}

/// Every scalar parameter, widened into I or F.
[[tile::kernel]] void scalars(T::tensor<std::int64_t, 1> I, T::tensor<double, 1> F, std::int8_t a, std::uint8_t b,
                              std::int16_t c, int d, unsigned e, std::int64_t f, std::uint64_t g, bool flag, float x,
                              double y, T::stream s) {
  auto [bx] = T::grid(1);
  I(0) = a;
  I(1) = b;
  I(2) = c;
  I(3) = d;
  I(4) = e;
  I(5) = f;
  I(6) = std::int64_t(g >> 20);
  I(7) = flag ? 11 : 22;
  F(0) = x;
  F(1) = y;
  F(2) = x * y;
  F(3) = double(d) / 3.0;
}

int main() {
  for (auto [lo, hi, step] : {std::array{-7, 40, 3}, std::array{5, 5, 2}, std::array{9, 2, 1}}) {
    auto Out = check::upload(check::poisoned<std::int64_t>(6), {6});
    loops(Out, lo, hi, step);
    check::equal("loops_" + std::to_string(lo) + "_" + std::to_string(hi) + "_" + std::to_string(step),
                 loops_ref(lo, hi, step), Out.to_vector());
  }
  {
    std::vector<float> ref(12 * 40);
    for (int by = 0; by < 3; ++by)
      for (int bx = 0; bx < 5; ++bx)
        for (int i = 0; i < 4; ++i) {
          float s = 0;
          for (int j = 0; j < 8; ++j) {
            s += bx % 2 == 0 && by != 1 ? float(bx + 10 * by) : bx == 3 ? float(i * 8 + j) : -1.0f;
            ref[(by * 4 + i) * 40 + bx * 8 + j] = s;
          }
        }
    auto Out = check::upload(check::poisoned<float>(ref.size()), {12, 40});
    branches(Out);
    check::equal("branches", ref, Out.to_vector());
  }
  {
    const std::int8_t a = -100;
    const std::uint8_t b = 200;
    const std::int16_t c = -30000;
    const int d = -2000000000;
    const unsigned e = 4000000000u;
    const std::int64_t f = -(std::int64_t(1) << 40) - 3;
    const std::uint64_t g = 0xfedcba9876543210ull;
    const float x = 1.1f;
    const double y = 1e300;
    auto I = check::upload(check::poisoned<std::int64_t>(8), {8});
    auto F = check::upload(check::poisoned<double>(4), {4});
    scalars(I, F, a, b, c, d, e, f, g, true, x, y, T::stream{});
    check::equal("scalar_params_int", std::vector<std::int64_t>{a, b, c, d, e, f, std::int64_t(g >> 20), 11},
                 I.to_vector());
    check::equal("scalar_params_float", std::vector<double>{x, y, x * y, double(d) / 3.0}, F.to_vector());
  }
  return check::result();
}
