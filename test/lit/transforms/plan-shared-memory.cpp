// plan-shared-memory: each block-shared buffer at an offset that is a multiple of the
// target's alignment (128 bytes on CUDA); buffers whose lives at the kernel's top level are
// apart share bytes, with a barrier between (the pass adds one where insert-sync put none);
// buffers filled by asynchronous copies and buffers nothing touches share nothing.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=insert-sync,plan-shared-memory \
// RUN:   -fplugin-arg-tile-stop-after=plan-shared-memory %s 2>&1 | FileCheck %s
// The codegen prints the offsets; buffers that take turns with the same bytes are not
// declared __restrict__.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=codegen %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CUDA
// CUDA: float *a = reinterpret_cast<float *>(tile_smem + 0);
// CUDA-NEXT: float *b = reinterpret_cast<float *>(tile_smem + 0);
// CUDA: float *__restrict__ a = reinterpret_cast<float *>(tile_smem + 0);
// CUDA-NEXT: float *__restrict__ b = reinterpret_cast<float *>(tile_smem + 512);

#include <tile/tile.h>
namespace T = tile;

// Two phases, a then b: b takes a's bytes once a is dead, after a barrier the pass adds
// (insert-sync has no reason for one: the phases touch different buffers).
// CHECK-LABEL: after insert-sync
// CHECK-LABEL: kernel phases(
// CHECK: shared a: f32[100]
// CHECK-NOT: at byte
// CHECK: shared b: f32[300]
// CHECK: if (i64(100) <= Y.size(0)) {
// CHECK-NOT: barrier()
// CHECK: if (i64(400) <= X.size(0)) {
// CHECK-LABEL: after plan-shared-memory
// CHECK-LABEL: kernel phases(
// CHECK-NEXT: grid(bx < 1) threads(128) shared_bytes(1200) {
// CHECK: shared a: f32[100] at byte 0
// CHECK-NEXT: shared b: f32[300] at byte 0
// The last use of a (the copy out), then the added barrier, then the first of b.
// CHECK: if (i64(100) <= Y.size(0)) {
// CHECK-NOT: if (i64(400) <= X.size(0)) {
// CHECK: barrier()
// CHECK-NEXT: if (i64(400) <= X.size(0)) {
[[tile::kernel]] void phases(T::tensor<const float, 1> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(1, T::threads(128));
  T::shared<float, 100> a;
  T::shared<float, 300> b;
  T::copy(X.at(0), a);
  T::copy(a, Y.at(0));
  T::copy(X.at(100), b);
  T::copy(b, Y.at(100));
}

// Lives that overlap: one after another, each at a multiple of 128 bytes (a's 400 bytes
// end at 400; b starts at 512).
// CHECK-LABEL: after plan-shared-memory
// CHECK-LABEL: kernel overlapping(
// CHECK-NEXT: grid(bx < 1) threads(128) shared_bytes(1712) {
// CHECK: shared a: f32[100] at byte 0
// CHECK-NEXT: shared b: f32[300] at byte 512
[[tile::kernel]] void overlapping(T::tensor<const float, 1> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(1, T::threads(128));
  T::shared<float, 100> a;
  T::shared<float, 300> b;
  T::copy(X.at(0), a);
  T::copy(X.at(100), b);
  T::copy(a, Y.at(0));
  T::copy(b, Y.at(100));
}

// A pipelined loop's stages are filled by asynchronous copies (cp.async): their bytes may
// land after the loop, so nothing shares them; a buffer nothing touches shares nothing
// either.
// CHECK-LABEL: after plan-shared-memory
// CHECK-LABEL: kernel staged(
// CHECK: shared unused: f32[64] at byte 0
// CHECK: shared after: f32[64] at byte 256
// CHECK: shared t{{.*}}: f32[2, 64] at byte 512
[[tile::kernel]] void staged(T::tensor<const float, 1> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(1, T::threads(64));
  T::shared<float, 64> unused, after;
  T::shared<float, 64> t;
  T::fragment<float, 64> acc;
  T::clear(acc);
  for (int k : T::pipelined(4, T::stages(2))) {
    T::copy(X.at(k * 64), t);
    for (int i : T::parallel(64))
      acc(i) = acc(i) + t(i);
  }
  T::copy(acc, after);
  T::copy(after, Y.at(0));
}
