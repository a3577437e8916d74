// Macros, lambdas and constexpr functions are inlined or folded; kernels live in
// namespaces, as static members and as templates instantiated by host code.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-print-after=frontend %s 2>&1 | FileCheck %s

#include <tile/tile.h>
namespace T = tile;

namespace lib {
constexpr int tile_of(int n) { return n * 16; }

[[tile::macro]] float scaled(float x, float s) { return x * s; }

template <int N> [[tile::macro]] void zero(T::fragment<float, N> &f) {
  for (int i : T::parallel(N))
    f(i) = 0.0f;
}

[[tile::macro]] void bump(int &counter) { counter += 2; }

// CHECK-LABEL: kernel lib::inner::k3(x: tensor<f32, 3>, alpha: f32)
// CHECK-NEXT: grid(bx < 2, by < 3, bz < 4) threads(128)
namespace inner {
[[tile::kernel]] void k3(T::tensor<float, 3> x, float alpha) {
  auto [bx, by, bz] = T::grid(2, 3, 4);
  T::fragment<float, tile_of(2)> f;
  // CHECK: fragment f: f32[32]
  zero(f);
  // CHECK: for i in parallel(0, 32) {
  // CHECK-NEXT: f[i] = 0.0f
  auto twice = [&](float v) { return v * 2.0f + alpha; };
  for (int i : T::parallel(32)) {
    // CHECK: for i_1 in parallel(0, 32) {
    // CHECK-NEXT: var x_1: f32 = f[i_1]
    // CHECK-NEXT: var s: f32 = 3.0f
    // CHECK-NEXT: var scaled: f32
    // CHECK-NEXT: scaled = x_1 * s
    // CHECK-NEXT: var v: f32 = scaled
    // CHECK-NEXT: var result: f32
    // CHECK-NEXT: result = v * 2.0f + alpha
    // CHECK-NEXT: f[i_1] = result
    f(i) = twice(scaled(f(i), 3.0f));
  }
  int c = 0;
  bump(c);
  // CHECK: var c: i32 = 0
  // CHECK-NEXT: c = c + 2
  T::copy(f, x.at(bz, by, bx * 32 + c));
}
} // namespace inner
} // namespace lib

struct Ops {
  // CHECK-LABEL: kernel Ops::negate(x: tensor<f32, 1>)
  [[tile::kernel]] static void negate(T::tensor<float, 1> x) {
    auto [bx] = T::grid(T::ceildiv(x.size(0), 64));
    T::fragment<float, 64> f;
    T::copy(x.at(bx * 64), f);
    for (int i : T::parallel(64))
      f(i) = -f(i);
    T::copy(f, x.at(bx * 64));
  }
};

// Each instantiation is its own kernel.
// CHECK-LABEL: kernel fill_value<16>(x: tensor<i32, 1>)
// CHECK: local l: i32[16]
// CHECK-LABEL: kernel fill_value<48>(x: tensor<i32, 1>)
// CHECK: local l: i32[48]
template <int N> [[tile::kernel]] void fill_value(T::tensor<int, 1> x) {
  auto [bx] = T::grid(1);
  T::local<int, N> l;
  T::fill(l, N);
  T::copy(l, x.at(0));
}

void host(T::tensor<float, 3> a, T::tensor<float, 1> b, T::tensor<int, 1> c) {
  lib::inner::k3(a, 1.0f);
  Ops::negate(b);
  fill_value<16>(c);
  fill_value<48>(c);
}
