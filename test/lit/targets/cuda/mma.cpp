// A gemm of bf16 or f16 tiles in shared memory into an f32 fragment runs on tensor cores:
// lower-mma made it ldmatrix and mma.sync nodes for the warp grid infer-layout chose, the
// codegen prints each as one device-library instruction, and the PTX nvcc makes of it for
// sm_80 and sm_90a has ldmatrix and mma.sync m16n8k16.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-gemm=mma -fplugin-arg-tile-print-after=codegen %s 2>&1 \
// RUN:   | FileCheck %s
// REQUIRES: nvcc
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-gemm=mma -fplugin-arg-tile-emit-source=%t %s
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-gemm=mma -fplugin-arg-tile-emit-source=%t %s -o %t/mma.o
// RUN: %nvcc -ptx -std=c++17 -gencode=arch=compute_80,code=sm_80 -I%t %t/mma.cu -o - | FileCheck %s --check-prefix=PTX
// RUN: %nvcc -ptx -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I%t %t/mma.cu -o - | FileCheck %s --check-prefix=PTX
// PTX: ldmatrix.sync.aligned.m8n8.x4
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

#include <tile/tile.h>
namespace T = tile;

// CHECK-LABEL: // mm
// CHECK: float acc[128];
// The operands' rows are padded (infer-layout): 40 and 136 elements apart. Each k step
// loads the warp's 4 A atoms (64 rows of the 2 x 2 warps' 128) and 8 B atoms (two a
// load, transposed: B is stored [K, N]), then runs the 4 x 8 atoms.
// CHECK: uint32_t a_frag[16];
// CHECK-NEXT: uint32_t b_frag[16];
// CHECK: for (int32_t ks = 0; ks < 2; ++ks) {
// CHECK: for (int32_t am = 0; am < 4; ++am) {
// CHECK-NEXT: tile_cuda::ldmatrix_x4<false>(a_frag[am * 4], a_frag[am * 4 + 1], a_frag[am * 4 + 2], a_frag[am * 4 + 3], As + ((tid % 64 / 32 * 64 + am * 16 + tid % 32 / 8 % 2 * 8 + tid % 32 % 8) * 40 + (ks * 16 + tid % 32 / 8 / 2 * 8)));
// CHECK: for (int32_t an = 0; an < 4; ++an) {
// CHECK-NEXT: tile_cuda::ldmatrix_x4<true>(b_frag[an * 4], b_frag[an * 4 + 1], b_frag[an * 4 + 2], b_frag[an * 4 + 3], Bs + ((ks * 16 + tid % 32 / 8 % 2 * 8 + tid % 32 % 8) * 136 + (tid / 64 * 64 + an * 2 * 8 + tid % 32 / 8 / 2 * 8)));
// CHECK: for (int32_t an_1 = 0; an_1 < 8; ++an_1) {
// CHECK-NEXT: asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n" : "+f"(acc[(am_1 * 8 + an_1) * 2 * 2]), "+f"(acc[(am_1 * 8 + an_1) * 2 * 2 + 1]), "+f"(acc[((am_1 * 8 + an_1) * 2 + 1) * 2]), "+f"(acc[((am_1 * 8 + an_1) * 2 + 1) * 2 + 1]) : "r"(a_frag[am_1 * 4]), "r"(a_frag[am_1 * 4 + 1]), "r"(a_frag[am_1 * 4 + 2]), "r"(a_frag[am_1 * 4 + 3]), "r"(b_frag[an_1 * 2]), "r"(b_frag[an_1 * 2 + 1]));
// The epilogue writes each thread's accumulators where the instruction put them: two rows
// (vh) of two adjacent columns (vl) per atom, the pair as one 8-byte store (f32) where C
// allows it.
// CHECK: if (C_vec8) {
// CHECK: reinterpret_cast<tile_cuda::bytes<8> *>(C + ((int64_t)(by * 128) * C_stride0 + (int64_t)(tid % 64 / 32 * 64) * C_stride0 + (int64_t)(rs_{{[0-9]+}} * 16) * C_stride0 + (int64_t)(vh_{{[0-9]+}} * 8) * C_stride0 + (int64_t)(tid % 32 / 4) * C_stride0 + (int64_t)(bx * 128) + (int64_t)(tid / 64 * 64) + (int64_t)(cs_{{[0-9]+}} * 8) + (int64_t)(tid % 4 * 2)))[0] = reinterpret_cast<const tile_cuda::bytes<8> *>(vec_lanes{{[_0-9]*}})[0];
[[tile::kernel]] void mm(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128));
  T::shared<T::bf16, 128, 32> As;
  T::shared<T::bf16, 32, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::serial(T::ceildiv(A.size(1), 32))) {
    T::copy(A.at(by * 128, k * 32), As);
    T::copy(B.at(k * 32, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// A first operand in registers (FlashAttention-2's P, on warps stacked along the rows): the
// accumulator of the first gemm converted in place, then mma with those registers (two
// bf16 slots packed a register) and B from shared memory, whose next k step is loaded
// before this one's mma (compiled by nvcc to PTX above).
// CHECK-LABEL: tile_cuda__Z14p_in_registers
// CHECK: s[i_{{[0-9]+}}] = 0.0f;
// CHECK: tile_cuda::ldmatrix_x4<false>(b_frag[an * 4], b_frag[an * 4 + 1], b_frag[an * 4 + 2], b_frag[an * 4 + 3], Ks + ((an * 2 * 8 + tid % 32 / 8 / 2 * 8 + tid % 32 % 8) * 72 + (ks * 16 + tid % 32 / 8 % 2 * 8)));
// CHECK: p[{{.*}}] = tile_cuda::cvt<tile_cuda::bf16>(s[{{.*}}]);
// CHECK: uint32_t b_frag_1[32];
// CHECK: tile_cuda::ldmatrix_x4<true>(b_frag_1[an_2 * 4], {{.*}}, Vs + ((tid % 32 / 8 % 2 * 8 + tid % 32 % 8) * 72 + (an_2 * 2 * 8 + tid % 32 / 8 / 2 * 8)));
// CHECK: for (int32_t ks_1 = 0; ks_1 < 4; ++ks_1) {
// CHECK-NEXT: if (ks_1 + 1 < 4) {
// CHECK: tile_cuda::ldmatrix_x4<true>(b_frag_1[(ks_1 + 1) % 2 * 16 + an_3 * 4],
// CHECK: asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {{.*}} : "+f"(o[(am_2 * 8 + an_4) * 2 * 2]), {{.*}} : "r"(tile_cuda::pack2(p[(am_2 * 8 + ks_1 * 2) * 2 * 2], p[(am_2 * 8 + ks_1 * 2) * 2 * 2 + 1])), {{.*}}, "r"(b_frag_1[ks_1 % 2 * 16 + an_4 * 2]), "r"(b_frag_1[ks_1 % 2 * 16 + (an_4 * 2 + 1)]));
[[tile::kernel]] void p_in_registers(T::tensor<const T::bf16, 2> Q, T::tensor<float, 2> O) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 64, 64> Qs, Ks, Vs;
  T::fragment<float, 64, 64> s, o;
  T::fragment<T::bf16, 64, 64> p;
  T::copy(Q.at(0, 0), Qs);
  T::copy(Q.at(0, 0), Ks);
  T::copy(Q.at(0, 0), Vs);
  T::clear(o);
  T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
  T::copy(s, p);
  T::gemm(p, Vs, o, {.policy = T::warp_policy::full_row});
  T::copy(o, O.at(0, 0));
}

// exp2 in float is one ex2.approx.ftz (tile_cuda.h; no rescaling around it).
// RUN: %nvcc -ptx -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I%t %t/mma.cu -o - | FileCheck %s --check-prefix=EXP2
// EXP2-LABEL: .entry {{.*}}exp2_rows
// EXP2: ex2.approx.ftz.f32
// EXP2-NOT: ex2.approx.f32
// EXP2: ret;
[[tile::kernel]] void exp2_rows(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1, T::threads(128));
  T::fragment<float, 16, 64> x;
  T::copy(X.at(0, 0), x);
  for (auto [i, j] : T::parallel(16, 64))
    x(i, j) = T::exp2(x(i, j));
  T::copy(x, Y.at(0, 0));
}
