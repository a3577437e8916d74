// lower-mma: a tensor-core gemm becomes the instructions' nodes. Each k step of 16 loads
// the warp's A atoms (four 8 x 8 matrices an atom) and B atoms (two atoms a four-matrix
// load; an odd last atom by a two-matrix load), read transposed where the operand is
// stored with K across its rows' other side, then runs an mma per atom of the warp's tile
// into the accumulator's registers, in the order its layout gives them. A first operand in
// registers is the mma's A as it is (pairs of bf16 slots), and B's next k step is loaded
// before this one's mma. The warp grid is fixed by the gemms' policies and tile shapes.
// (sm_80: mma.sync; lit targets/cuda/wgmma.cpp has the warpgroup instruction.)
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_80 -fplugin-arg-tile-print-before=lower-mma \
// RUN:   -fplugin-arg-tile-print-after=lower-mma -fplugin-arg-tile-stop-after=lower-mma %s 2>&1 \
// RUN:   | FileCheck %s

#include <tile/tile.h>
namespace T = tile;

// CHECK-LABEL: IR before lower-mma
// CHECK-LABEL: kernel transposed_b(
// CHECK: local acc: f32[32] in registers: mma(64x64, 4x1 warps of 1x8 m16n8 atoms)
// CHECK: gemm(As, Bs, acc, transpose_b, clear_accum, policy=full_row)
// CHECK-LABEL: kernel odd_atoms(
// CHECK: gemm(As, Bs, acc, policy=full_row)
// CHECK-LABEL: kernel p_in_registers(
// CHECK: gemm(Qs, Ks, s, transpose_b, clear_accum, policy=full_row)
// CHECK: gemm(p, Vs, o, policy=full_row)

// CHECK-LABEL: IR after lower-mma
// CHECK-LABEL: kernel transposed_b(
// CHECK-NOT: gemm(
// CHECK: for g in slots(0, 1) {
// CHECK-NEXT: local a_frag: u32[4]
// CHECK-NEXT: local b_frag: u32[16]
// CHECK-NEXT: for [[I:i.[0-9]+]] in slots(0, 32) {
// CHECK-NEXT: acc[[[I]]] = 0.0f
// CHECK: for ks in slots(0, 2) {
// CHECK-NEXT: for am in slots(0, 1) {
// CHECK-NEXT: matrix_load(a_frag[am * 4, am * 4 + 1, am * 4 + 2, am * 4 + 3], As + (tid / 32 * 16 + am * 16 + tid % 32 / 8 % 2 * 8 + tid % 32 % 8) * 40 + (ks * 16 + tid % 32 / 8 / 2 * 8))
// CHECK: for an in slots(0, 4) {
// CHECK-NEXT: matrix_load(b_frag[an * 4, an * 4 + 1, an * 4 + 2, an * 4 + 3], Bs + (an * 2 * 8 + tid % 32 / 8 / 2 * 8 + tid % 32 % 8) * 40 + (ks * 16 + tid % 32 / 8 % 2 * 8))
// CHECK: for am.1 in slots(0, 1) {
// CHECK-NEXT: for an.1 in slots(0, 8) {
// CHECK-NEXT: mma_m16n8k16.bf16(acc[(am.1 * 8 + an.1) * 2 * 2, (am.1 * 8 + an.1) * 2 * 2 + 1, ((am.1 * 8 + an.1) * 2 + 1) * 2, ((am.1 * 8 + an.1) * 2 + 1) * 2 + 1] += a_frag[am.1 * 4, am.1 * 4 + 1, am.1 * 4 + 2, am.1 * 4 + 3] * b_frag[an.1 * 2, an.1 * 2 + 1])
// CHECK-NOT: gemm(

// Three atoms of 8 columns a warp: one four-matrix load for the first two, a two-matrix
// load for the third (B stored [K, N]: transposed).
// CHECK-LABEL: kernel odd_atoms(
// CHECK: local b_frag: u32[6]
// CHECK: for an in slots(0, 1) {
// CHECK-NEXT: matrix_load_trans(b_frag[an * 4, an * 4 + 1, an * 4 + 2, an * 4 + 3], Bs + (ks * 16 + tid % 32 / 8 % 2 * 8 + tid % 32 % 8) * 24 + (an * 2 * 8 + tid % 32 / 8 / 2 * 8))
// CHECK: matrix_load_trans(b_frag[4, 5], Bs + (ks * 16 + tid % 32 / 8 % 2 * 8 + tid % 32 % 8) * 24 + 16)
// CHECK: for an.1 in slots(0, 3) {
// CHECK-NEXT: mma_m16n8k16.f16(

// CHECK-LABEL: kernel p_in_registers(
// CHECK: mma_m16n8k16.bf16(s[
// The second gemm: B's registers twice over, the first k step's loaded ahead.
// CHECK: for g.1 in slots(0, 1) {
// CHECK-NEXT: local b_frag.1: u32[16]
// CHECK-NEXT: for an.2 in slots(0, 2) {
// CHECK-NEXT: matrix_load_trans(b_frag.1[an.2 * 4, an.2 * 4 + 1, an.2 * 4 + 2, an.2 * 4 + 3], Vs + (tid % 32 / 8 % 2 * 8 + tid % 32 % 8) * 40 + (an.2 * 2 * 8 + tid % 32 / 8 / 2 * 8))
// CHECK: for ks.1 in slots(0, 2) {
// CHECK-NEXT: if (ks.1 + 1 < 2) {
// CHECK-NEXT: for an.3 in slots(0, 2) {
// CHECK-NEXT: matrix_load_trans(b_frag.1[(ks.1 + 1) % 2 * 8 + an.3 * 4,
// CHECK: for an.4 in slots(0, 4) {
// CHECK-NEXT: mma_m16n8k16.bf16(o[(am.2 * 4 + an.4) * 2 * 2, (am.2 * 4 + an.4) * 2 * 2 + 1, ((am.2 * 4 + an.4) * 2 + 1) * 2, ((am.2 * 4 + an.4) * 2 + 1) * 2 + 1] += p[(am.2 * 4 + ks.1 * 2) * 2 * 2, ((am.2 * 4 + ks.1 * 2) * 2 + 1) * 2, (am.2 * 4 + (ks.1 * 2 + 1)) * 2 * 2, ((am.2 * 4 + (ks.1 * 2 + 1)) * 2 + 1) * 2] * b_frag.1[ks.1 % 2 * 8 + an.4 * 2, ks.1 % 2 * 8 + (an.4 * 2 + 1)])

[[tile::kernel]] void transposed_b(T::tensor<const T::bf16, 2> A, T::tensor<float, 2> C) {
  auto [bx] = T::grid(1, T::threads(128));
  T::shared<T::bf16, 64, 32> As, Bs;
  T::fragment<float, 64, 64> acc;
  T::copy(A.at(0, 0), As);
  T::copy(A.at(0, 0), Bs);
  T::gemm(As, Bs, acc, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
  T::copy(acc, C.at(0, 0));
}

[[tile::kernel]] void odd_atoms(T::tensor<const T::f16, 2> A, T::tensor<float, 2> C) {
  auto [bx] = T::grid(1, T::threads(64));
  T::shared<T::f16, 32, 16> As;
  T::shared<T::f16, 16, 24> Bs;
  T::fragment<float, 32, 24> acc;
  T::copy(A.at(0, 0), As);
  T::copy(A.at(0, 0), Bs);
  T::clear(acc);
  T::gemm(As, Bs, acc, {.policy = T::warp_policy::full_row});
  T::copy(acc, C.at(0, 0));
}

[[tile::kernel]] void p_in_registers(T::tensor<const T::bf16, 2> Q, T::tensor<float, 2> O) {
  auto [bx] = T::grid(1, T::threads(64));
  T::shared<T::bf16, 32, 32> Qs, Ks, Vs;
  T::fragment<float, 32, 32> s, o;
  T::fragment<T::bf16, 32, 32> p;
  T::copy(Q.at(0, 0), Qs);
  T::copy(Q.at(0, 0), Ks);
  T::copy(Q.at(0, 0), Vs);
  T::clear(o);
  T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
  T::copy(s, p);
  T::gemm(p, Vs, o, {.policy = T::warp_policy::full_row});
  T::copy(o, O.at(0, 0));
}
