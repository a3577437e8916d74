// wgmma (the default, gemm=auto, spelled gemm=wgmma here; run on the H200): on sm_90a a gemm that
// fits Hopper's warpgroup instruction runs on it; sm_80 keeps mma.sync in an image of its
// own. The operands are laid out in the hardware's 128-byte swizzle (a K-major, b in
// 64-column slabs) on 1024-byte boundaries; lower-mma makes one wgmma a k step between a
// fence and a commit, and fences each barrier for the async proxy. inject-pipeline puts
// the gemm before the next stage's copies, and lower-mma waits for it after them, so that
// they are issued while the tensor cores run. nvcc takes the source: its sm_90a PTX has
// wgmma.mma_async.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a+sm_80 -fplugin-arg-tile-gemm=wgmma \
// RUN:   -fplugin-arg-tile-remarks %s 2>&1 | FileCheck %s --check-prefix=REMARKS
// REMARKS: remark: [cuda:sm_90a] gemm on tensor cores (wgmma.m64n128k16.bf16, 2 warpgroups, a and b from shared memory)
// REMARKS: remark: [cuda:sm_80] gemm on tensor cores (mma.sync.m16n8k16.bf16
// The pipelines say how far ahead their copies run: with 4 stages and a lone wgmma gemm, one
// iteration less than stages - 1 (the lagging wait below), on mma.sync stages - 1. (Without
// warp-specialize, whose producer warpgroup takes these loops by default on sm_90a: this is
// the path of its fallback, warp-specialize.cpp.)
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a+sm_80 -fplugin-arg-tile-remarks \
// RUN:   -fplugin-arg-tile-warp-specialize=off %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=STAGES
// STAGES-DAG: wgmma.cpp:{{[0-9]+}}:3: remark: [cuda:sm_90a] pipelined loop: 2 stages, the copies into 'As', 'Bs' run 1 iteration ahead, issued while the first gemm runs (wgmma)
// STAGES-DAG: wgmma.cpp:{{[0-9]+}}:3: remark: [cuda:sm_90a] pipelined loop: 4 stages, the copies into 'As', 'Bs' run 2 iterations ahead, issued while the first gemm runs (wgmma)
// STAGES-DAG: wgmma.cpp:{{[0-9]+}}:3: remark: [cuda:sm_80] pipelined loop: 4 stages, the copies into 'As', 'Bs' run 3 iterations ahead
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-gemm=wgmma \
// RUN:   -fplugin-arg-tile-warp-specialize=off \
// RUN:   -fplugin-arg-tile-print-after=infer-layout,inject-pipeline,lower-mma %s 2>&1 | FileCheck %s
// CHECK-LABEL: IR after infer-layout
// CHECK: shared As: bf16[128, 64] rows of 64 swizzled 128
// CHECK: shared Bs: bf16[64, 128] rows of 64 swizzled 128 in slabs of 64 columns
// CHECK-LABEL: IR after inject-pipeline
// CHECK: for it in serial(
// CHECK: barrier()
// CHECK-NEXT: gemm(As[it % 2, 0 +: 128, 0 +: 64], Bs[it % 2, 0 +: 64, 0 +: 128], acc)
// CHECK-NEXT: if (it + 1 < {{.*}}) {
// CHECK-NEXT: async(ahead 1 of 2) {
// CHECK: async_commit()
// CHECK-NEXT: }
// CHECK-LABEL: IR after lower-mma
// CHECK: proxy_fence_async_shared()
// CHECK-NEXT: barrier()
// CHECK: wgmma_fence()
// CHECK-NEXT: for ks in slots(0, 4) {
// CHECK-NEXT: wgmma_m64n128k16.bf16(acc[{{.*}}] += desc(As + {{.*}}, k-major, swizzle 128, lbo 16, sbo 1024) * desc(Bs + {{.*}}, mn-major, swizzle 128, lbo 8192, sbo 1024), accumulate 1)
// CHECK: wgmma_commit()
// CHECK-NEXT: }
// CHECK-NEXT: if (it + 1 < {{.*}}) {
// CHECK-NEXT: async(ahead 1 of 2) {
// CHECK: async_commit()
// CHECK-NEXT: wgmma_wait(0; acc)
// CHECK-NEXT: }
// The block's shared memory must start where the swizzle counts from: checked, an error
// at run time rather than a wrong result.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-gemm=wgmma \
// RUN:   -fplugin-arg-tile-print-after=codegen %s 2>&1 | FileCheck %s --check-prefix=ALIGN
// ALIGN: extern __shared__ __align__(1024) unsigned char tile_smem[];
// ALIGN-NEXT: if (tile_cuda::detail::smem_address(tile_smem) % 1024 != 0) {
// ALIGN-NEXT: tile_cuda::assert_fail("mm", "shared memory does not start at a multiple of 1024 bytes");
// REQUIRES: nvcc
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-gemm=wgmma \
// RUN:   -fplugin-arg-tile-emit-source=%t %s -o %t/wgmma.o
// RUN: %nvcc -ptx -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I%t %t/wgmma.cu -o - | FileCheck %s --check-prefix=PTX
// PTX: fence.proxy.async.shared::cta
// PTX: wgmma.fence.sync.aligned
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX: wgmma.commit_group.sync.aligned
// PTX: wgmma.wait_group.sync.aligned 0

#include <tile/tile.h>
namespace T = tile;

[[tile::kernel]] void mm(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128), T::threads(256));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(2))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// Attention's two gemms: S = Q K^T with a head dimension of 128 (both operands K-major in
// 64-column slabs), then O += P V with P converted from S in registers and given to the
// instruction as its A registers (the RS form), V N-major.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-gemm=wgmma \
// RUN:   -fplugin-arg-tile-remarks %s 2>&1 | FileCheck %s --check-prefix=ATTN
// ATTN-DAG: remark: [cuda:sm_90a] fragment 'p' in registers: mma operand a(64x64, 4x1 warps of 1x8 m16n8 atoms)
// ATTN-DAG: remark: [cuda:sm_90a] gemm on tensor cores (wgmma.m64n64k16.bf16, 1 warpgroup, a and b from shared memory)
// ATTN-DAG: remark: [cuda:sm_90a] gemm on tensor cores (wgmma.m64n128k16.bf16, 1 warpgroup, a from registers, b from shared memory)
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-gemm=wgmma \
// RUN:   -fplugin-arg-tile-print-after=infer-layout,lower-mma %s 2>&1 | FileCheck %s --check-prefix=AIR
// AIR-LABEL: kernel attention_step(
// AIR: shared Qs: bf16[64, 128] rows of 64 swizzled 128 in slabs of 64 columns
// AIR: shared Ks: bf16[64, 128] rows of 64 swizzled 128 in slabs of 64 columns
// AIR: shared Vs: bf16[64, 128] rows of 64 swizzled 128 in slabs of 64 columns
// AIR-LABEL: IR after lower-mma
// AIR-LABEL: kernel attention_step(
// AIR: for ks in slots(0, 8) {
// AIR-NEXT: wgmma_m64n64k16.bf16(s[{{.*}}] += desc(Qs + {{.*}}, k-major, swizzle 128, lbo 16, sbo 1024) * desc(Ks + {{.*}}, k-major, swizzle 128, lbo 16, sbo 1024), accumulate i32(ks != 0))
// AIR: for ks.1 in slots(0, 4) {
// AIR-NEXT: wgmma_m64n128k16.bf16(acc[{{.*}}] += a_packed[{{.*}}] * desc(Vs + {{.*}}, mn-major, swizzle 128, lbo 8192, sbo 1024), accumulate 1)
// AIR: wgmma_commit()
// AIR-NEXT: }
// AIR-NEXT: wgmma_wait(0; acc, a_packed)
// The codegen pins the waited-for registers after the wait (later accesses stay after it):
// the accumulator, and a's packed registers, which the instructions read after they issue.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-gemm=wgmma \
// RUN:   -fplugin-arg-tile-print-after=codegen %s 2>&1 | FileCheck %s --check-prefix=PIN
// PIN-LABEL: // attention_step (
// PIN: tile_cuda::wgmma_wait<0>();
// PIN-NEXT: #pragma unroll
// PIN-NEXT: for (int r = 0; r < 32; ++r) tile_cuda::pin_register(s[r]);
// PIN: tile_cuda::wgmma_wait<0>();
// PIN-NEXT: #pragma unroll
// PIN-NEXT: tile_cuda::pin_register(acc[
// PIN-NEXT: #pragma unroll
// PIN-NEXT: tile_cuda::pin_register(a_packed[
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
[[tile::kernel]] void attention_step(T::tensor<const T::bf16, 2> Q, T::tensor<const T::bf16, 2> K,
                                     T::tensor<const T::bf16, 2> V, T::tensor<float, 2> O) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 64), T::threads(128));
  T::shared<T::bf16, 64, 128> Qs, Ks, Vs;
  T::fragment<float, 64, 64> s;
  T::fragment<T::bf16, 64, 64> p;
  T::fragment<float, 64, 128> acc;
  T::copy(Q.at(bx * 64, 0), Qs);
  T::copy(K.at(0, 0), Ks);
  T::copy(V.at(0, 0), Vs);
  T::clear(acc);
  T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true});
  T::copy(s, p);
  T::gemm(p, Vs, acc);
  T::copy(acc, O.at(bx * 64, 0));
}

// With 4 stages and the gemm the loop's only work, the copies run 2 iterations ahead
// (not 3), so that the stage a gemm read stays unwritten one iteration more: each
// iteration's wait leaves that gemm in flight (the next one queues behind it on the
// tensor cores), and a wait for all follows the loop.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-gemm=wgmma \
// RUN:   -fplugin-arg-tile-print-after=lower-mma %s 2>&1 | FileCheck %s --check-prefix=LAG
// LAG-LABEL: kernel mm4(
// LAG: shared As: bf16[4, 128, 64]
// LAG: for stage in serial(0, 2) {
// LAG: for it in serial(
// LAG-NEXT: var k: i32 = it
// LAG-NEXT: async_wait(1)
// LAG-NEXT: proxy_fence_async_shared()
// LAG-NEXT: barrier()
// LAG: wgmma_commit()
// LAG-NEXT: }
// LAG-NEXT: if (it + 2 < {{.*}}) {
// LAG-NEXT: async(ahead 2 of 4) {
// LAG: async_commit()
// LAG-NEXT: wgmma_wait(1)
// LAG-NEXT: }
// LAG-NEXT: wgmma_wait(0; acc)
// LAG-NEXT: async_wait(0)
[[tile::kernel]] void mm4(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128), T::threads(256));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(4))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// A fragment operand a that another use sends to shared memory (here a transposed read):
// wgmma_plan held its rows to the instruction's shape, so the gemm reads it there, through
// a descriptor of the same swizzle.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-gemm=wgmma \
// RUN:   -fplugin-arg-tile-remarks %s 2>&1 | FileCheck %s --check-prefix=DEMOTED-REMARKS
// DEMOTED-REMARKS: remark: [cuda:sm_90a] fragment 'p' in shared memory: indexed in a parallel loop by other than the loop's variables in order
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-gemm=wgmma \
// RUN:   -fplugin-arg-tile-print-after=lower-mma %s 2>&1 | FileCheck %s --check-prefix=DEMOTED
// DEMOTED-LABEL: kernel demoted_p(
// DEMOTED: fragment p: bf16[64, 64] rows of 64 swizzled 128
// DEMOTED: wgmma_m64n64k16.bf16(acc[{{.*}}] += desc(p + {{.*}}, k-major, swizzle 128, lbo 16, sbo 1024) * desc(Vs + {{.*}}, mn-major
[[tile::kernel]] void demoted_p(T::tensor<const T::bf16, 2> Q, T::tensor<const T::bf16, 2> K,
                                T::tensor<const T::bf16, 2> V, T::tensor<float, 2> O, T::tensor<T::bf16, 2> P) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 64), T::threads(128));
  T::shared<T::bf16, 64, 64> Qs, Ks, Vs;
  T::fragment<float, 64, 64> s;
  T::fragment<T::bf16, 64, 64> p;
  T::fragment<float, 64, 64> acc;
  T::copy(Q.at(bx * 64, 0), Qs);
  T::copy(K.at(0, 0), Ks);
  T::copy(V.at(0, 0), Vs);
  T::clear(acc);
  T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true});
  T::copy(s, p);
  for (auto [i, j] : T::parallel(64, 64))
    P(bx * 64 + i, j) = p(j, i);
  T::gemm(p, Vs, acc);
  T::copy(acc, O.at(bx * 64, 0));
}
