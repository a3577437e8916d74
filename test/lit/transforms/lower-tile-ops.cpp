// lower-tile-ops: tile operations become element-level loops, with predication only at
// the tensor edges that can be crossed.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-print-before=lower-tile-ops \
// RUN:   -fplugin-arg-tile-print-after=lower-tile-ops -fplugin-arg-tile-stop-after=lower-tile-ops %s 2>&1 \
// RUN:   | FileCheck %s

#include <tile/tile.h>
namespace T = tile;

// A copy tests once whether its tile lies inside the tensor: then it is a plain loop;
// else a copy in reads zero past the tensor's end through a select and a copy out skips
// the stores past it with an if; the upper bound alone is checked (bx * 256 + i is not
// negative), in 64 bits (past 2^31 it does not wrap around to a negative index).
// CHECK-LABEL: IR before lower-tile-ops
// CHECK: kernel copies(
// CHECK: copy(x[bx * 256 +: 256], f)
// CHECK-LABEL: IR after lower-tile-ops
// CHECK: kernel copies(
// CHECK: if (i64(bx) * i64(256) + i64(256) <= x.size(0)) {
// CHECK-NEXT: for i in parallel(0, 256) {
// CHECK-NEXT: f[i] = x[bx * 256 + i]
// CHECK: } else (rare) {
// CHECK-NEXT: for i.1 in parallel(0, 256) {
// CHECK-NEXT: f[i.1] = select(i64(bx) * i64(256) + i64(i.1) < x.size(0), x[bx * 256 + i.1], 0.0f)
// CHECK: if (i64(bx) * i64(256) + i64(256) <= y.size(0)) {
// CHECK-NEXT: for i.2 in parallel(0, 256) {
// CHECK-NEXT: y[bx * 256 + i.2] = f[i.2]
// CHECK: } else (rare) {
// CHECK-NEXT: for i.3 in parallel(0, 256) {
// CHECK-NEXT: if (i64(bx) * i64(256) + i64(i.3) < y.size(0)) {
// CHECK-NEXT: y[bx * 256 + i.3] = f[i.3]
// CHECK-NOT: copy(
[[tile::kernel]] void copies(T::tensor<const float, 1> x, T::tensor<float, 1> y) {
  auto [bx] = T::grid(T::ceildiv(x.size(0), 256));
  T::fragment<float, 256> f;
  T::copy(x.at(bx * 256), f);
  T::copy(f, y.at(bx * 256));
}

// A guard that reads only the outer loop's variable is placed around the inner loop, so
// a row past the edge is skipped whole; a copy between on-chip buffers has no guard.
// A negative start (bx - 1) gets a lower bound too, in the tile's test as well.
// CHECK-LABEL: IR after lower-tile-ops
// CHECK: kernel rows(
// CHECK: if (i64(bx) - i64(1) >= i64(0) && i64(bx) - i64(1) + i64(4) <= x.size(0) && i64(8) <= x.size(1)) {
// CHECK-NEXT: for i in parallel(0, 4) {
// CHECK-NEXT: for j in parallel(0, 8) {
// CHECK-NEXT: s[i, j] = x[bx - 1 + i, j]
// CHECK: } else (rare) {
// CHECK-NEXT: for i.1 in parallel(0, 4) {
// CHECK-NEXT: for j.1 in parallel(0, 8) {
// CHECK-NEXT: s[i.1, j.1] = select(i64(bx) - i64(1) + i64(i.1) >= i64(0) && i64(bx) - i64(1) + i64(i.1) < x.size(0) && i64(j.1) < x.size(1), x[bx - 1 + i.1, j.1], bf16(0.0))
// CHECK: for i.2 in parallel(0, 4) {
// CHECK-NEXT: for j.2 in parallel(0, 8) {
// CHECK-NEXT: f[i.2, j.2] = f32(s[i.2, j.2])
// CHECK: } else (rare) {
// CHECK-NEXT: for i.4 in parallel(0, 4) {
// CHECK-NEXT: if (i64(bx) * i64(4) + i64(i.4) < y.size(0)) {
// CHECK-NEXT: for j.4 in parallel(0, 8) {
// CHECK-NEXT: if (i64(j.4) < y.size(1)) {
[[tile::kernel]] void rows(T::tensor<const T::bf16, 2> x, T::tensor<float, 2> y) {
  auto [bx] = T::grid(T::ceildiv(x.size(0), 4));
  T::shared<T::bf16, 4, 8> s;
  T::fragment<float, 4, 8> f;
  T::copy(x.at(bx - 1, 0), s);
  T::copy(s, f);
  T::copy(f, y.at(bx * 4, 0));
}

// fill is a parallel loop of stores; reductions are parallel loops over the kept
// dimensions around a serial loop that combines into an accumulator starting from the
// identity (clear) or from the destination (accumulate); absmax starts from 0, which no
// absolute value is below; cumsum stores its running sum.
// CHECK-LABEL: IR after lower-tile-ops
// CHECK: kernel reductions(
// CHECK: for i in parallel(0, 4) {
// CHECK-NEXT: for j in parallel(0, 8) {
// CHECK-NEXT: f[i, j] = 1.0f
// CHECK: var red: f32 = 0.0f
// CHECK-NEXT: for r in serial(0, 8) {
// CHECK-NEXT: red = red + f[i.1, r]
// CHECK: s[i.1] = red
// CHECK: var red.1: f32 = s[i.2]
// CHECK-NEXT: for r.1 in serial(0, 8) {
// CHECK-NEXT: red.1 = max(red.1, f[i.2, r.1])
// CHECK: var red.2: f32 = inf:f32
// CHECK-NEXT: for r.2 in serial(0, 4) {
// CHECK-NEXT: red.2 = min(red.2, f[r.2, i.3])
// CHECK: var red.3: f32 = 0.0f
// CHECK: red.3 = max(red.3, abs(f[i.4, r.3]))
// CHECK: var red.4: f32 = 0.0f
// CHECK: red.4 = red.4 + abs(f[i.5, r.4])
// CHECK: var scan: f32 = 0.0f
// CHECK-NEXT: for s.1 in serial(0, 8) {
// CHECK-NEXT: scan = scan + f[i.6, s.1]
// CHECK-NEXT: g[i.6, s.1] = scan
// CHECK-NOT: reduce_
// CHECK-NOT: cumsum(
[[tile::kernel]] void reductions(T::tensor<float, 1> y) {
  auto [bx] = T::grid(1);
  T::fragment<float, 4, 8> f, g;
  T::fragment<float, 4> s;
  T::fragment<float, 8> c;
  T::fill(f, 1.0f);
  T::reduce_sum(f, s, 1);
  T::reduce_max(f, s, 1, false);
  T::reduce_min(f, c, 0);
  T::reduce_absmax(f, s, 1);
  T::reduce_abssum(f, s, 1);
  T::cumsum(f, g, 1);
  T::copy(s, y.at(0));
}

// A reverse cumsum walks from the end; annotate_layout is dropped on the CPU; gemm, print
// and element atomics stay for the codegen; a region atomic becomes element atomics.
// CHECK-LABEL: IR after lower-tile-ops
// CHECK: kernel rest(
// CHECK-NOT: annotate_layout
// CHECK: for s in serial(0, 8) {
// CHECK-NEXT: scan = scan + f[i, 7 - s]
// CHECK: gemm(a, b, f)
// CHECK: atomic_add(y[bx], 1.0f)
// CHECK: for i.1 in parallel(0, 4) {
// CHECK: atomic_max(z[i.1, j], f[i.1, j])
[[tile::kernel]] void rest(T::tensor<float, 1> y, T::tensor<float, 2> z) {
  auto [bx] = T::grid(2);
  T::shared<T::f16, 4, 16> a;
  T::shared<T::f16, 16, 8> b;
  T::fragment<float, 4, 8> f;
  T::annotate_layout(a, T::layouts::swizzled(64));
  T::cumsum(f, f, 1, true);
  T::gemm(a, b, f);
  T::atomic_add(y(bx), 1.0f);
  T::atomic_max(z.at(0, 0), f);
}

// On CUDA (indices in 32 bits, IndexWidth::Narrow) a copy into shared memory tests its
// varying corner in 32 bits against the size less the extent, once per tile; a constant
// corner, and the tiles copied elsewhere, keep the 64-bit test.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=lower-tile-ops \
// RUN:   -fplugin-arg-tile-stop-after=lower-tile-ops %s 2>&1 | FileCheck %s --check-prefix=NARROW
// NARROW-LABEL: kernel corners(
// NARROW: if (k * 32 <= i32(x.size(0)) - 32 && i64(64) <= x.size(1)) {
// NARROW: if (i64(k * 32) + i64(32) <= x.size(0) && i64(64) <= x.size(1)) {
[[tile::kernel]] void corners(T::tensor<const T::bf16, 2> x, T::tensor<T::bf16, 2> y) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 32, 64> s;
  T::fragment<T::bf16, 32, 64> f;
  for (int k : T::serial(T::ceildiv(x.size(0), 32))) {
    T::copy(x.at(k * 32, 0), s);
    T::copy(x.at(k * 32, 0), f);
    T::copy(s, y.at(k * 32, 0));
    T::copy(f, y.at(k * 32, 0));
  }
}
