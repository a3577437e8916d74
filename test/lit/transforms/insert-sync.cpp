// insert-sync: a barrier between accesses of block-shared memory by different threads
// where one of them writes (RAW, WAR, WAW), on every path, the loop back edge included;
// none where no hazard exists.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=insert-sync \
// RUN:   -fplugin-arg-tile-stop-after=insert-sync %s 2>&1 | FileCheck %s

#include <tile/tile.h>
namespace T = tile;

// Read after write: a copy into shared memory, then a copy out of it.
// CHECK-LABEL: kernel raw(
// CHECK: s[i, j] = select(
// CHECK-NEXT: }
// CHECK-NEXT: barrier()
// CHECK-NEXT: for t.1 in threads(0, 128) {
// CHECK-NOT: barrier()
// CHECK: }
[[tile::kernel]] void raw(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<float, 8, 16> s;
  T::copy(X.at(0, 0), s);
  T::copy(s, Y.at(0, 0));
}

// Write after read and write after write: s is read then filled, then filled again.
// CHECK-LABEL: kernel war_waw(
// CHECK: Y[i, j] = s[i, j]
// CHECK: barrier()
// CHECK-NEXT: for t.1 in threads(0, 128) {
// CHECK: s[i.1, j.1] = 1.0f
// CHECK: barrier()
// CHECK-NEXT: for t.2 in threads(0, 128) {
// CHECK: s[i.2, j.2] = 2.0f
[[tile::kernel]] void war_waw(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<float, 8, 16> s;
  T::copy(s, Y.at(0, 0));
  T::fill(s, 1.0f);
  T::fill(s, 2.0f);
}

// No hazard, no barrier: loops on different buffers, local buffers (private to each
// thread), global memory only.
// CHECK-LABEL: kernel independent(
// CHECK-NOT: barrier()
[[tile::kernel]] void independent(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<float, 8, 16> a;
  T::shared<float, 8, 16> b;
  T::local<float, 4> l;
  T::fill(a, 1.0f);
  T::fill(b, 2.0f);
  for (int i : T::unroll(4))
    l(i) = 1.0f;
  for (int i : T::unroll(4))
    l(i) = l(i) + 1.0f;
  Y(0, 0) = X(0, 0);
}

// Around a loop's back edge: the next iteration's copy into s must wait for this
// iteration's reads of s, and nothing is needed after the loop for reads only.
// CHECK-LABEL: kernel loop(
// CHECK: for k in serial(0, 4) {
// CHECK-NEXT: barrier()
// CHECK-NEXT: for t in threads(0, 128) {
// CHECK: s[i, j] = select(
// CHECK: barrier()
// CHECK-NEXT: for t.1 in threads(0, 128) {
// CHECK: Y[bx * 8 + i.1, k * 16 + j.1] = s[i.1, j.1]
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
[[tile::kernel]] void loop(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(4);
  T::shared<float, 8, 16> s;
  for (int k : T::serial(4)) {
    T::copy(X.at(bx * 8, k * 16), s);
    T::copy(s, Y.at(bx * 8, k * 16));
  }
}

// A write in one branch of an if is a hazard for a read after the if.
// CHECK-LABEL: kernel branches(
// CHECK: if (n > 0) {
// CHECK: s[i, j] = 1.0f
// CHECK: } else {
// CHECK-NOT: barrier()
// CHECK: Y[i.1, j.1] = f[i.1, j.1]
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: barrier()
// CHECK-NEXT: for t.2 in threads(0, 128) {
// CHECK: Y[i.2, j.2] = s[i.2, j.2]
[[tile::kernel]] void branches(T::tensor<float, 2> Y, int n) {
  auto [bx] = T::grid(1);
  T::shared<float, 8, 16> s;
  T::shared<float, 8, 16> f;
  if (n > 0)
    T::fill(s, 1.0f);
  else
    T::copy(f, Y.at(0, 0));
  T::copy(s, Y.at(0, 0));
}
