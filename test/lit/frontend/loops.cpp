// Every loop kind and if/else become IR loops with their trip counts.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-print-after=frontend %s 2>&1 | FileCheck %s

#include <tile/tile.h>
namespace T = tile;

// CHECK-LABEL: kernel loops(x: tensor<f32, 1>, n: i32, s: i32)
// CHECK-NEXT: grid(bx < 1) threads(64)
[[tile::kernel]] void loops(T::tensor<float, 1> x, int n, int s) {
  auto [bx] = T::grid(1, T::threads(64));
  // CHECK: for i in serial(0, n) {
  for (int i : T::serial(n))
    x(i) = 1.0f;
  // CHECK: for i_1 in serial(2, max(n - 2, 0)) {
  for (int i : T::serial(2, n))
    x(i) = 2.0f;
  // CHECK: for k in pipelined(0, n, stages=3) {
  for (int k : T::pipelined(n, T::stages(3)))
    x(k) = 3.0f;
  // CHECK: for k_1 in pipelined(1, max(n - 1, 0), stages=2) {
  for (int k : T::pipelined(1, n, T::stages(2)))
    x(k) = 4.0f;
  // CHECK: for u in unroll(0, 4) {
  for (int u : T::unroll(4))
    x(u) = 5.0f;
  // An ordinary loop with a run-time bound and step.
  // CHECK: for j in serial(3, max((n - 3 + s - 1) / s, 0), step=s) {
  for (int j = 3; j < n; j += s)
    x(j) = 6.0f;
  // Counting down, inclusive.
  // CHECK: for d in serial(n, max(n + 1 + 1 - 1, 0), step=-1) {
  for (int d = n; d >= 0; --d)
    x(d) = 7.0f;
  // CHECK: if (bx == 0) {
  // CHECK-NEXT: x[0] = 8.0f
  // CHECK-NEXT: } else {
  // CHECK-NEXT: x[1] = 9.0f
  if (bx == 0)
    x(0) = 8.0f;
  else
    x(1) = 9.0f;
  // CHECK: var acc: f32 = 0.0f
  // CHECK: for t in serial(0, 10) {
  // CHECK-NEXT: acc = acc + f32(t)
  float acc = 0;
  for (int t = 0; t < 10; t++)
    acc += t;
  x(2) = acc;
}

// CHECK-LABEL: kernel nested(y: tensor<f32, 2>)
[[tile::kernel]] void nested(T::tensor<float, 2> y) {
  auto [bx, by] = T::grid(2, 3);
  T::fragment<float, 8, 16> f;
  // CHECK: for i in parallel(0, 8) {
  // CHECK-NEXT: for j in parallel(0, 16) {
  // CHECK-NEXT: f[i, j] = f32(i * 16 + j)
  for (auto [i, j] : T::parallel(8, 16))
    f(i, j) = i * 16 + j;
  // A serial loop inside a parallel loop.
  // CHECK: for r in parallel(0, 8) {
  // CHECK-NEXT: for c in serial(0, 16) {
  for (int r : T::parallel(8))
    for (int c = 0; c < 16; ++c)
      f(r, c) = f(r, c) * 2.0f;
  T::copy(f, y.at(by * 8, bx * 16));
}
