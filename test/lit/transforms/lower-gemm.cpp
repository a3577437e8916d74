// lower-gemm: c (+)= op(a) op(b) as parallel loops over c around a serial loop over k
// (the GPU targets' FMA path), for every transpose combination and with clear_accum.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=lower-gemm \
// RUN:   -fplugin-arg-tile-stop-after=lower-gemm %s 2>&1 | FileCheck %s

#include <tile/tile.h>
namespace T = tile;

// CHECK-LABEL: kernel gemms(
// CHECK-NOT: gemm(
// CHECK: for gi in parallel(0, 16) {
// CHECK-NEXT: for gj in parallel(0, 8) {
// CHECK-NEXT: var sum: f32 = c[gi, gj]
// CHECK-NEXT: for gk in serial(0, 32) {
// CHECK-NEXT: sum = sum + f32(a[gi, gk]) * f32(b[gk, gj])
// CHECK: c[gi, gj] = sum
// transpose_a and transpose_b swap the operands' indices; clear_accum starts from zero.
// CHECK: var sum.1: f32 = 0.0f
// CHECK: sum.1 = sum.1 + f32(at[gk.1, gi.1]) * f32(bt[gj.1, gk.1])
// CHECK-NOT: gemm(
[[tile::kernel]] void gemms(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 16, 32> a;
  T::shared<T::bf16, 32, 8> b;
  T::shared<T::bf16, 32, 16> at;
  T::shared<T::bf16, 8, 32> bt;
  T::fragment<float, 16, 8> c;
  T::gemm(a, b, c);
  T::gemm(at, bt, c, {.transpose_a = true, .transpose_b = true, .clear_accum = true});
}
