// insert-sync: a barrier between accesses of block-shared memory by different threads
// where one of them writes (RAW, WAR, WAW), on every path, the loop back edge included;
// none where no hazard exists.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=insert-sync \
// RUN:   -fplugin-arg-tile-stop-after=insert-sync %s 2>&1 | FileCheck %s

#include <tile/tile.h>
namespace T = tile;

// Read after write: a copy into shared memory, then a copy out of it; each copy has a path
// for a tile inside the tensor and one for a tile at its edge: one barrier before the
// second copy's two paths, none inside them.
// CHECK-LABEL: kernel raw(
// CHECK: s[i.1, j.1] = select(
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: barrier()
// CHECK-NEXT: if (i64(8) <= Y.size(0) && i64(16) <= Y.size(1)) {
// CHECK-NOT: barrier()
// CHECK: Y[i.3, j.3] = s[i.3, j.3]
[[tile::kernel]] void raw(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<float, 8, 16> s;
  T::copy(X.at(0, 0), s);
  T::copy(s, Y.at(0, 0));
}

// Write after read and write after write: s is read then filled, then filled again.
// CHECK-LABEL: kernel war_waw(
// CHECK: Y[i.1, j.1] = s[i.1, j.1]
// CHECK: barrier()
// CHECK-NEXT: for t.2 in threads(0, 128) {
// CHECK: s[i.2, j.2] = 1.0f
// CHECK: barrier()
// CHECK-NEXT: for t.3 in threads(0, 128) {
// CHECK: s[i.3, j.3] = 2.0f
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
// CHECK-NEXT: if (
// CHECK-NEXT: for t in threads(0, 128) {
// CHECK: s[i, j] = X[bx * 8 + i, k * 16 + j]
// CHECK: s[i.1, j.1] = select(
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: barrier()
// CHECK-NEXT: if (
// CHECK-NEXT: for t.2 in threads(0, 128) {
// CHECK: Y[bx * 8 + i.3, k * 16 + j.3] = s[i.3, j.3]
// CHECK-NEXT: }
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
// CHECK: Y[i.2, j.2] = f[i.2, j.2]
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: barrier()
// CHECK-NEXT: if (
// CHECK-NEXT: for t.3 in threads(0, 128) {
// CHECK: Y[i.3, j.3] = s[i.3, j.3]
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

// Slots: accesses whose first index is (k + c) % S, k an enclosing serial loop's variable,
// touch different elements for different c (mod S): the write of stage k % 2 and the read
// of stage (k + 1) % 2 need no barrier between them. Around the back edge the read of
// (k + 1) % 2 is the next iteration's k % 2, which it writes: a barrier at the top.
// CHECK-LABEL: kernel stages(
// CHECK: for k in serial(0, n) {
// CHECK-NEXT: barrier()
// CHECK-NEXT: for t in threads(0, 128) {
// CHECK: s[k % 2, i, j] = X[i, k * 16 + j]
// CHECK-NOT: barrier()
// CHECK: Y[i_1, k * 16 + j_1] = s[(k + 1) % 2, i_1, j_1]
[[tile::kernel]] void stages(T::tensor<const float, 2> X, T::tensor<float, 2> Y, int n) {
  auto [bx] = T::grid(1);
  T::shared<float, 2, 8, 16> s;
  for (int k : T::serial(n)) {
    for (auto [i, j] : T::parallel(8, 16))
      s(k % 2, i, j) = X(i, k * 16 + j);
    for (auto [i, j] : T::parallel(8, 16))
      Y(i, k * 16 + j) = s((k + 1) % 2, i, j);
  }
}

// With a constant trip count, a loop carries accesses back only that many iterations:
// two iterations writing stages 0 and 1 of s need no barrier; three iterations of r come
// back to stage 0 and need one.
// CHECK-LABEL: kernel trip_counts(
// CHECK: for k in serial(0, 2) {
// CHECK-NEXT: for t in threads(0, 128) {
// CHECK-NOT: barrier()
// CHECK: for k_1 in serial(0, 3) {
// CHECK-NEXT: barrier()
// CHECK-NEXT: for t.1 in threads(0, 128) {
// CHECK: r[k_1 % 2, i_1, j_1] = X[i_1, k_1 * 16 + j_1]
[[tile::kernel]] void trip_counts(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<float, 2, 8, 16> s;
  T::shared<float, 2, 8, 16> r;
  for (int k : T::serial(2))
    for (auto [i, j] : T::parallel(8, 16))
      s(k % 2, i, j) = X(i, k * 16 + j);
  for (int k : T::serial(3))
    for (auto [i, j] : T::parallel(8, 16))
      r(k % 2, i, j) = X(i, k * 16 + j);
}

// No slots without a constant stage count, or through a variable the kernel assigns to:
// the reads of s and r need barriers after their writes (and, around the back edge, those
// barriers also order each read before the next iteration's write).
// CHECK-LABEL: kernel not_slots(
// CHECK: for k in serial(0, n) {
// CHECK-NOT: barrier()
// CHECK: s[k % 2, i, j] = X[i, k * 16 + j]
// CHECK: barrier()
// CHECK-NEXT: for t.1 in threads(0, 128) {
// CHECK: Y[i_1, k * 16 + j_1] = s[(k + 1) % m, i_1, j_1]
// CHECK-NOT: barrier()
// CHECK: r[k % 2, i_2, j_2] = X[i_2, k * 16 + j_2]
// CHECK: barrier()
// CHECK-NEXT: for t.3 in threads(0, 128) {
// CHECK: Y[i_3, k * 16 + j_3] = r[q % 2, i_3, j_3]
[[tile::kernel]] void not_slots(T::tensor<const float, 2> X, T::tensor<float, 2> Y, int n, int m) {
  auto [bx] = T::grid(1);
  T::shared<float, 2, 8, 16> s;
  T::shared<float, 2, 8, 16> r;
  for (int k : T::serial(n)) {
    int q = k + 1;
    q += 2 * m;
    for (auto [i, j] : T::parallel(8, 16))
      s(k % 2, i, j) = X(i, k * 16 + j);
    for (auto [i, j] : T::parallel(8, 16))
      Y(i, k * 16 + j) = s((k + 1) % m, i, j);
    for (auto [i, j] : T::parallel(8, 16))
      r(k % 2, i, j) = X(i, k * 16 + j);
    for (auto [i, j] : T::parallel(8, 16))
      Y(i, k * 16 + j) = r(q % 2, i, j);
  }
}

// A serial loop that reads what the threads just wrote (every thread reduces the whole tile
// into its local buffer): one barrier before the loop, none in its iterations.
// CHECK-LABEL: kernel before_loop(
// CHECK: s[i.1, j.1] = select(
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: barrier()
// CHECK-NEXT: for i.2 in serial(0, 8) {
// CHECK-NOT: barrier()
// CHECK: l[i.2] = red
// CHECK-NEXT: }
// CHECK-NEXT: }
[[tile::kernel]] void before_loop(T::tensor<const float, 2> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(1);
  T::shared<float, 8, 16> s;
  T::local<float, 8> l;
  T::copy(X.at(0, 0), s);
  T::reduce_sum(s, l, 1);
}
