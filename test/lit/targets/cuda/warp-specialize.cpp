// warp-specialize on sm_90a: a pipelined loop whose copies feed a wgmma gemm gets a producer
// warpgroup (threads 256-383) that moves the tiles by bulk tensor copies into 128-byte
// swizzled stages, full and empty mbarriers per stage, and setmaxnreg's register split
// (40 for the producer, 232 for the 256 consumers); the kernel takes its tensor maps after
// its parameters, and a fallback entry (the cp.async pipeline) is built beside it. Loops it
// cannot take say why. nvcc's PTX has the bulk tensor copies, the mbarriers and setmaxnreg (multicast=off, pair-blocks=off).
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fplugin-arg-tile-bulk-store=off -fplugin-arg-tile-multicast=off -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a+sm_80 -fplugin-arg-tile-remarks \
// RUN:   -fplugin-arg-tile-overlap-gemms=on %s 2>&1 | FileCheck %s --check-prefix=REMARKS
// REMARKS-DAG: warp-specialize.cpp:209:3: remark: [cuda:sm_90a] pipelined loop: 3 stages, the copies into 'As', 'Bs' are bulk tensor copies (TMA, 128-byte swizzle) by a producer warpgroup of 128 threads (40 registers each); the 256 consumer threads take 232 registers each and hand stages back through mbarriers
// REMARKS-DAG: remark: [cuda:sm_80] pipelined loop: 3 stages, the copies into 'As', 'Bs' run 2 iterations ahead
// REMARKS-DAG: remark: [cuda:sm_90a] pipelined loop not warp-specialized: the kernel has a device_assert, which ends a thread early
// REMARKS-DAG: remark: [cuda:sm_90a] pipelined loop not warp-specialized: it is inside another statement (only a loop at the top of the kernel's body is)
// REMARKS-DAG: remark: [cuda:sm_90a] pipelined loop not warp-specialized: the copy into 'As' converts its elements
// REMARKS-DAG: remark: [cuda:sm_90a] pipelined loop not warp-specialized: the copies' offsets or the loop's bounds read 'tiles', which the kernel assigns, or which is not a parameter, a block index or a constant declared before the loop
// REMARKS-DAG: remark: [cuda:sm_90a] pipelined loop not warp-specialized: 'As', which it copies into, is used outside the loop
// REMARKS-DAG: remark: [cuda:sm_90a] pipelined loop not warp-specialized: the copy into 'Bs' reads 'B', which is not a tensor of const
// REMARKS-DAG: remark: [cuda:sm_90a] pipelined loop: 2 stages, the copies into 'As', 'Bs' are bulk tensor copies
// REMARKS-DAG: warp-specialize.cpp:320:3: remark: [cuda:sm_90a] pipelined loop: 3 stages, the copies into 'As', 'Bs' are bulk tensor copies (TMA, 128-byte swizzle) by a producer warpgroup of 128 threads (40 registers each); the 128 consumer threads take 88 registers each and hand stages back through mbarriers
// REMARKS-DAG: warp-specialize.cpp:320:3: remark: [cuda:sm_90a] 4 blocks an SM expected: 64 registers a thread at launch, the consumers' 88 for about 72 a consumer needs
// REMARKS-DAG: warp-specialize.cpp:209:3: remark: [cuda:sm_90a] 1 block an SM expected (2 would need 334424 bytes of shared memory at most, of the SM's 233472): 168 registers a thread at launch, the consumers' 232 for about 104 a consumer needs
// REMARKS-DAG: warp-specialize.cpp:406:5: remark: [cuda:sm_90a] gemm overlapped with the next iteration: issued after that iteration's first gemm, it runs while 1 of the 3 statements between them do, and is waited for before those that touch 'acc', 'p'
// REMARKS-DAG: warp-specialize.cpp:486:5: remark: [cuda:sm_90a] gemm not overlapped with the next iteration: 2 stages, and it would hold a stage the producer fills next (3 or more overlap it: write stages(3))
// REMARKS-DAG: warp-specialize.cpp:406:5: remark: [cuda:sm_90a] gemm not overlapped with the next iteration: every statement between the gemms touches what the last one reads or writes
// REMARKS-DAG: remark: [cuda:sm_90a] gemm not overlapped with the next iteration: the last gemm uses 'p', which the loop's body declares
// REMARKS-DAG: remark: [cuda:sm_90a] pipelined loop not warp-specialized: 'As', which it copies into, is read by a reduction, a prefix sum or an atomic in the loop (a producer's stages are read by gemms, copies and element accesses)
// The overlap is asked for (overlap-gemms=on): without it the remark says so.
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fplugin-arg-tile-bulk-store=off -fplugin-arg-tile-multicast=off -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-OVERLAP
// NO-OVERLAP: warp-specialize.cpp:406:5: remark: [cuda:sm_90a] gemm not overlapped with the next iteration: -fplugin-arg-tile-overlap-gemms=on asks for it
// NO-OVERLAP-NOT: gemm overlapped with
// stages=N fixes every loop's stages here too.
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fplugin-arg-tile-bulk-store=off -fplugin-arg-tile-multicast=off -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-stages=4 \
// RUN:   -fplugin-arg-tile-remarks %s 2>&1 | FileCheck %s --check-prefix=STAGES4
// STAGES4: warp-specialize.cpp:209:3: remark: [cuda:sm_90a] pipelined loop: 4 stages, the copies into 'As', 'Bs' are bulk tensor copies
//
// The pass's IR: the prelude both sides run, the staged buffers and barriers, the roles.
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fplugin-arg-tile-bulk-store=off -fplugin-arg-tile-multicast=off -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a \
// RUN:   -fplugin-arg-tile-print-before=warp-specialize -fplugin-arg-tile-print-after=warp-specialize %s 2>&1 \
// RUN:   | FileCheck %s
// CHECK-LABEL: IR before warp-specialize
// CHECK: kernel gemm<128, 128, 3>(
// CHECK: for k in pipelined(0, (K + 64 - 1) / 64, stages=3) {
// CHECK-NEXT: copy(A[by * 128 +: 128, k * 64 +: 64], As)
// CHECK-LABEL: IR after warp-specialize
// CHECK: kernel gemm<128, 128, 3>(
// CHECK-NEXT: threads(256) producer_threads(128)
// CHECK-SAME: tensor_map0(A, box 128x64, swizzle 128) tensor_map1(B, box 64x64, swizzle 128)
// CHECK: shared As: bf16[3, 128, 64] rows of 64 swizzled 128
// CHECK: shared Bs: bf16[3, 64, 128] rows of 64 swizzled 128 in slabs of 64 columns
// CHECK: shared barriers: u64[6]
// CHECK: if (tid == 0) {
// CHECK-NEXT: for s in serial(0, 3) {
// CHECK-NEXT: mbarrier_init(barriers[s], count 1)
// CHECK-NEXT: mbarrier_init(barriers[s + 3], count 256)
// CHECK: barrier(whole block)
// CHECK-NEXT: if (tid >= 256) {
// CHECK-NEXT: registers_down_to(40)
// CHECK-NEXT: if (tid == 256) {
// CHECK-NEXT: for it in serial(0, (K + 64 - 1) / 64) {
// CHECK-NEXT: if (it >= 3) {
// CHECK-NEXT: mbarrier_wait(barriers[it % 3 + 3], parity (it / 3 + 1) % 2)
// CHECK: mbarrier_arrive_expect_tx(barriers[it % 3], bytes 32768)
// CHECK-NEXT: bulk_copy(As + it % 3 * 8192 <- tensor_map0[by * 128, it * 64], barriers[it % 3])
// CHECK-NEXT: bulk_copy(Bs + it % 3 * 8192 <- tensor_map1[it * 64, bx * 128], barriers[it % 3])
// CHECK-NEXT: bulk_copy(Bs + it % 3 * 8192 + 4096 <- tensor_map1[it * 64, bx * 128 + 64], barriers[it % 3])
// CHECK: } else {
// CHECK-NEXT: registers_up_to(232)
// CHECK: fill(acc, 0.0f)
// CHECK-NEXT: for it.1 in serial(0, (K + 64 - 1) / 64) {
// CHECK-NEXT: var k: i32 = it.1
// CHECK-NEXT: mbarrier_wait(barriers[it.1 % 3], parity it.1 / 3 % 2)
// CHECK-NEXT: gemm(As[it.1 % 3, 0 +: 128, 0 +: 64], Bs[it.1 % 3, 0 +: 64, 0 +: 128], acc)
// CHECK-NEXT: mbarrier_arrive(barriers[it.1 % 3 + 3])
//
// The overlapped loop: K and V get barriers of their own (K's stage goes back at the end of
// its iteration, V's after the next iteration's wait for the gemm that reads it); iteration
// 0 peeled, then each iteration issues its first gemm, waits for V of the iteration before
// and issues its last gemm, waits for the first, runs the free statement, waits for the
// last and hands V's stage back, runs the rest and hands K's stage back; the last gemm
// after the loop.
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fplugin-arg-tile-bulk-store=off -fplugin-arg-tile-multicast=off -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-overlap-gemms=on -fplugin-arg-tile-pingpong=off \
// RUN:   -fplugin-arg-tile-print-after=warp-specialize %s 2>&1 | FileCheck %s --check-prefix=OVERLAP
// OVERLAP-LABEL: kernel two_gemms<3, true>(
// OVERLAP: shared barriers: u64[12]
// OVERLAP: for s in serial(0, 6) {
// OVERLAP-NEXT: mbarrier_init(barriers[s], count 1)
// OVERLAP-NEXT: mbarrier_init(barriers[s + 6], count 256)
// OVERLAP: if (it >= 3) {
// OVERLAP-NEXT: mbarrier_wait(barriers[it % 3 + 6], parity (it / 3 + 1) % 2)
// OVERLAP-NEXT: }
// OVERLAP-NEXT: mbarrier_arrive_expect_tx(barriers[it % 3], bytes 8192)
// OVERLAP-NEXT: bulk_copy(Ks + it % 3 * 4096 <- tensor_map0[it * 64, 0], barriers[it % 3])
// OVERLAP-NEXT: if (it >= 3) {
// OVERLAP-NEXT: mbarrier_wait(barriers[it % 3 + 9], parity (it / 3 + 1) % 2)
// OVERLAP-NEXT: }
// OVERLAP-NEXT: mbarrier_arrive_expect_tx(barriers[it % 3 + 3], bytes 8192)
// OVERLAP-NEXT: bulk_copy(Vs + it % 3 * 4096 <- tensor_map1[it * 64, 0], barriers[it % 3 + 3])
// OVERLAP: copy(Q[bx * 128 +: 128, 0 +: 64], Qs)
// OVERLAP-NEXT: fill(acc, 0.0f)
// OVERLAP-NEXT: if (blocks > 0) {
// OVERLAP-NEXT: var kb: i32 = 0
// OVERLAP-NEXT: mbarrier_wait(barriers[0], parity 0)
// OVERLAP-NEXT: gemm(Qs, Ks[0, 0 +: 64, 0 +: 64], sc, transpose_b, clear_accum, deferred_wait, policy=full_row)
// OVERLAP-NEXT: wgmma_wait(0; sc)
// OVERLAP: sc[i, j] = sc[i, j] * 0.25f
// OVERLAP: acc[i_1, j_1] = acc[i_1, j_1] * 0.5f
// OVERLAP: copy(sc, p)
// OVERLAP-NEXT: mbarrier_arrive(barriers[6])
// OVERLAP-NEXT: }
// OVERLAP-NEXT: for it.1 in serial(1, blocks - 1) {
// OVERLAP-NEXT: var kb: i32 = it.1
// OVERLAP-NEXT: mbarrier_wait(barriers[it.1 % 3], parity it.1 / 3 % 2)
// OVERLAP-NEXT: gemm(Qs, Ks[it.1 % 3, 0 +: 64, 0 +: 64], sc, transpose_b, clear_accum, deferred_wait, policy=full_row)
// OVERLAP-NEXT: mbarrier_wait(barriers[(it.1 - 1) % 3 + 3], parity (it.1 - 1) / 3 % 2)
// OVERLAP-NEXT: gemm(p, Vs[(it.1 - 1) % 3, 0 +: 64, 0 +: 64], acc, deferred_wait, policy=full_row)
// OVERLAP-NEXT: wgmma_wait(1; sc)
// OVERLAP: sc[i, j] = sc[i, j] * 0.25f
// OVERLAP: wgmma_wait(0; acc)
// OVERLAP-NEXT: mbarrier_arrive(barriers[(it.1 - 1) % 3 + 9])
// OVERLAP: acc[i_1, j_1] = acc[i_1, j_1] * 0.5f
// OVERLAP: copy(sc, p)
// OVERLAP-NEXT: mbarrier_arrive(barriers[it.1 % 3 + 6])
// OVERLAP-NEXT: }
// OVERLAP-NEXT: if (blocks > 0) {
// OVERLAP-NEXT: mbarrier_wait(barriers[(blocks - 1) % 3 + 3], parity (blocks - 1) / 3 % 2)
// OVERLAP-NEXT: gemm(p, Vs[(blocks - 1) % 3, 0 +: 64, 0 +: 64], acc, deferred_wait, policy=full_row)
// OVERLAP-NEXT: wgmma_wait(0; acc)
// The last iteration's V stage goes back too: on a persistent grid the producer refills it
// for the next tile (without it, a block's second tile waited for it forever).
// OVERLAP-NEXT: mbarrier_arrive(barriers[(blocks - 1) % 3 + 9])
// OVERLAP-NEXT: }
// OVERLAP-NEXT: copy(acc, O[bx * 128 +: 128, 0 +: 64])
// With 2 stages too (K and V go back separately).
// OVERLAP-LABEL: kernel two_gemms<2, true>(
// OVERLAP: shared barriers: u64[8]
// OVERLAP: gemm(p, Vs[(it.1 - 1) % 2, 0 +: 64, 0 +: 64], acc, deferred_wait, policy=full_row)
// OVERLAP-LABEL: kernel two_gemms<3, false>(
// OVERLAP-NOT: deferred_wait
// V alone, read by both gemms: one set of barriers, V waited for at the top, its stage
// handed back an iteration later.
// OVERLAP-LABEL: kernel v_twice<3>(
// OVERLAP: shared barriers: u64[6]
// OVERLAP: for it.1 in serial(1, blocks - 1) {
// OVERLAP-NEXT: var kb: i32 = it.1
// OVERLAP-NEXT: mbarrier_wait(barriers[it.1 % 3], parity it.1 / 3 % 2)
// OVERLAP-NEXT: gemm(Qs, Vs[it.1 % 3, 0 +: 64, 0 +: 64], sc, transpose_b, clear_accum, deferred_wait, policy=full_row)
// OVERLAP-NEXT: gemm(p, Vs[(it.1 - 1) % 3, 0 +: 64, 0 +: 64], acc, deferred_wait, policy=full_row)
// OVERLAP-NEXT: wgmma_wait(1; sc)
// OVERLAP: wgmma_wait(0; acc)
// OVERLAP-NEXT: mbarrier_arrive(barriers[(it.1 - 1) % 3 + 3])
// OVERLAP-LABEL: kernel v_twice<2>(
// OVERLAP-NOT: deferred_wait
//
// warp-specialize=off, and tile::warp_specialize(false) in a kernel, keep the cp.async pipeline.
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fplugin-arg-tile-bulk-store=off -fplugin-arg-tile-multicast=off -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-warp-specialize=off \
// RUN:   -fplugin-arg-tile-remarks %s 2>&1 | FileCheck %s --check-prefix=OFF
// OFF: warp-specialize.cpp:209:3: remark: [cuda:sm_90a] pipelined loop: 3 stages, the copies into 'As', 'Bs' run 2 iterations ahead, issued while the first gemm runs (wgmma)
// OFF-NOT: bulk tensor copies
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fplugin-arg-tile-bulk-store=off -fplugin-arg-tile-multicast=off -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=KERNEL-OFF
// KERNEL-OFF: warp-specialize.cpp:{{[0-9]+}}:3: remark: [cuda:sm_90a] pipelined loop: 4 stages, the copies into 'As', 'Bs' run 2 iterations ahead, issued while the first gemm runs (wgmma)
//
// The generated CUDA: tensor maps after the parameters, a named barrier for the consumers,
// the fallback entry; the manifest lists the maps and the fallback; PTX through nvcc.
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fplugin-arg-tile-bulk-store=off -fplugin-arg-tile-multicast=off -c -fplugin-arg-tile-targets=cuda:sm_90a \
// RUN:   -fplugin-arg-tile-overlap-gemms=on -fplugin-arg-tile-remarks -fplugin-arg-tile-emit-source=%t %s -o %t/ws.o \
// RUN:   2> %t/remarks.txt
// RUN: FileCheck %s --check-prefix=SRC < %t/warp-specialize.cu
// SRC: __launch_bounds__(384, 1) tile_cuda_{{.*}}gemm{{.*}}(const tile_cuda::tensor_arg A_arg, const tile_cuda::tensor_arg B_arg, const tile_cuda::tensor_arg C_arg, const __grid_constant__ tile_cuda::tensor_map tensor_map0, const __grid_constant__ tile_cuda::tensor_map tensor_map1)
// SRC: tile_cuda::setmaxnreg_dec<40>();
// SRC: tile_cuda::bulk_tensor_load<2>(As + it % 3 * 8192, &tensor_map0, barriers + it % 3, {it * 64, by * 128});
// SRC: tile_cuda::setmaxnreg_inc<232>();
// SRC: __launch_bounds__(256) tile_cuda_{{.*}}gemm{{.*}}_fallback(const tile_cuda::tensor_arg A_arg, const tile_cuda::tensor_arg B_arg, const tile_cuda::tensor_arg C_arg)
// SRC: tile_cuda::cp_async<16>
// RUN: strings %t/ws.o | FileCheck %s --check-prefix=MANIFEST
// MANIFEST: kernel _Z4gemmILi128ELi128ELi3EEvN4tile6tensorIKNS0_4bf16ELi2EEES4_NS1_IfLi2EEE tile_cuda_{{[^ ]*}} 384 {{[0-9]+}} t{{[0-9]+}}x2,t{{[0-9]+}}x2,t{{[0-9]+}}x2 gemm<128, 128, 3>
// MANIFEST-NEXT: tmap 0 128 128x64
// MANIFEST-NEXT: tmap 1 128 64x64
// MANIFEST-NEXT: fallback tile_cuda_{{[^ ]*}}_fallback 256 {{[0-9]+}}
// RUN: %nvcc -ptx -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I%t %t/warp-specialize.cu -o - \
// RUN:   | FileCheck %s --check-prefix=PTX
// PTX-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// PTX-DAG: mbarrier.try_wait.parity.shared::cta.b64
// PTX-DAG: mbarrier.arrive.expect_tx.shared::cta.b64
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 40
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 232
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-DAG: bar.sync 1, 256
// ptxas keeps the overlapped gemms asynchronous (no "wgmma.mma_async instructions are
// serialized", C7510-C7520) and spills nothing.
// (ptxas's report is in the remarks of the build above.)
// RUN: FileCheck %s --check-prefix=PTXAS --implicit-check-not='ptxas: (' < %t/remarks.txt
// PTXAS-DAG: remark: [cuda:sm_90a] kernel 'two_gemms<{{.*}}>': {{[0-9]+}} registers a thread (ptxas), no stack, no spills
// PTXAS-DAG: remark: [cuda:sm_90a] kernel 'two_gemms<{{.*}}>' (its fallback without tensor maps): {{[0-9]+}} registers a thread (ptxas), no stack, no spills

#include <tile/tile.h>
namespace T = tile;

template <int BM, int BN, int S>
[[tile::kernel]] void gemm(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM), T::threads(256));
  T::shared<T::bf16, BM, 64> As;
  T::shared<T::bf16, 64, BN> Bs;
  T::shared<float, BM, BN> Cs; // the epilogue through shared memory: a consumers' barrier
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(S))) {
    T::copy(A.at(by * BM, k * 64), As);
    T::copy(B.at(k * 64, bx * BN), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, Cs);
  T::copy(Cs, C.at(by * BM, bx * BN));
}
template void gemm<128, 128, 3>(T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>, T::tensor<float, 2>);

// Not taken: a device_assert (a consumer that stops early would leave the producer waiting).
[[tile::kernel]] void with_assert(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  const int K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128), T::threads(256));
  T::device_assert(K > 0, "K");
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// Not taken: the loop is inside another (a batch loop).
[[tile::kernel]] void nested(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  const int K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128), T::threads(256));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int r : T::serial(2)) {
    for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
      T::copy(A.at(by * 128, k * 64), As);
      T::copy(B.at(k * 64, bx * 128), Bs);
      T::gemm(As, Bs, acc);
    }
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// Not taken: the copy converts float to bf16.
[[tile::kernel]] void converting(T::tensor<const float, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  const int K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128), T::threads(256));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// Turned off for this kernel.
[[tile::kernel]] void kernel_off(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  const int K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128), T::threads(256));
  T::warp_specialize(false);
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(4))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// Work besides the gemms in the loop: taken too (by default, and where the kernel asks).
template <bool Ask>
[[tile::kernel]] void scaled(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  const int K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128), T::threads(256));
  if constexpr (Ask)
    T::warp_specialize(true);
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(2))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
    for (auto [i, j] : T::parallel(128, 128))
      acc(i, j) = acc(i, j) * 0.5f;
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}
template void scaled<false>(T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>, T::tensor<float, 2>);
template void scaled<true>(T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>, T::tensor<float, 2>);

// One consumer warpgroup of small tiles: four blocks an SM, each launched with 64 registers
// a thread (as many as ptxas takes for its m64n64 instruction) and its consumers raised to
// 88 by the producer's.
[[tile::kernel]] void one_group(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  const int K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 64), T::ceildiv(C.size(0), 64), T::threads(128));
  T::shared<T::bf16, 64, 64> As;
  T::shared<T::bf16, 64, 64> Bs;
  T::fragment<float, 64, 64> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 64, k * 64), As);
    T::copy(B.at(k * 64, bx * 64), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 64, bx * 64));
}

// Not taken: the loop's bound is a parameter the kernel assigns before the loop (the
// producer would count from another value than the consumers).
[[tile::kernel]] void assigned_bound(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C,
                                    int tiles) {
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128), T::threads(256));
  tiles = tiles / 2;
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(tiles, T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// Not taken: an operand tile used after the loop.
[[tile::kernel]] void used_after(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C,
                                 T::tensor<T::bf16, 2> Last) {
  const int K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128), T::threads(256));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
  T::copy(As, Last.at(by * 128, 0));
}

// Not taken: B is a tensor the kernel may write (not const).
[[tile::kernel]] void writable(T::tensor<const T::bf16, 2> A, T::tensor<T::bf16, 2> B, T::tensor<float, 2> C) {
  const int K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128), T::threads(256));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// Attention's loop: the second gemm runs on into the next iteration (3 stages), waited for
// before the statements that touch 'acc' and 'p'; with 2 stages it is not, nor where every
// statement between the gemms touches its operands.
template <int S, bool Scale>
[[tile::kernel]] void two_gemms(T::tensor<const T::bf16, 2> Q, T::tensor<const T::bf16, 2> K,
                                T::tensor<const T::bf16, 2> V, T::tensor<float, 2> O) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 128), T::threads(256));
  T::shared<T::bf16, 128, 64> Qs;
  T::shared<T::bf16, 64, 64> Ks, Vs;
  T::fragment<float, 128, 64> sc;
  T::fragment<T::bf16, 128, 64> p;
  T::fragment<float, 128, 64> acc;
  T::copy(Q.at(bx * 128, 0), Qs);
  T::clear(acc);
  const int blocks = T::ceildiv(K.size(0), 64);
  for (int kb : T::pipelined(blocks, T::stages(S))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(Qs, Ks, sc, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    if constexpr (Scale) {
      for (auto [i, j] : T::parallel(128, 64))
        sc(i, j) = sc(i, j) * 0.25f;
      for (auto [i, j] : T::parallel(128, 64))
        acc(i, j) = acc(i, j) * 0.5f;
    }
    T::copy(sc, p);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(bx * 128, 0));
}
template void two_gemms<3, true>(T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>,
                                 T::tensor<float, 2>);
template void two_gemms<2, true>(T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>,
                                 T::tensor<float, 2>);
template void two_gemms<3, false>(T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>,
                                  T::tensor<float, 2>);

// Not overlapped: the loop's body declares 'p', which the last gemm would read an iteration
// later (out of its scope there).
[[tile::kernel]] void p_in_loop(T::tensor<const T::bf16, 2> Q, T::tensor<const T::bf16, 2> K,
                                T::tensor<const T::bf16, 2> V, T::tensor<float, 2> O) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 128), T::threads(256));
  T::shared<T::bf16, 128, 64> Qs;
  T::shared<T::bf16, 64, 64> Ks, Vs;
  T::fragment<float, 128, 64> sc;
  T::fragment<float, 128, 64> acc;
  T::copy(Q.at(bx * 128, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(T::ceildiv(K.size(0), 64), T::stages(3))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(Qs, Ks, sc, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    for (auto [i, j] : T::parallel(128, 64))
      sc(i, j) = sc(i, j) * 0.25f;
    T::fragment<T::bf16, 128, 64> p;
    T::copy(sc, p);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row}); // P-IN-LOOP-GEMM
  }
  T::copy(acc, O.at(bx * 128, 0));
}

// Not taken: a reduction reads the copied tile whole (its stages are reached only through
// element accesses, copies and gemms).
[[tile::kernel]] void reduced_tile(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C,
                                   T::tensor<float, 1> RowMax) {
  const int K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128), T::threads(256));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::fragment<float, 128> row_max, tile_max;
  T::clear(acc);
  T::fill(row_max, -T::infinity<float>());
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
    T::reduce_max(As, tile_max, 1);
    for (int i : T::parallel(128))
      row_max(i) = T::max(row_max(i), tile_max(i));
  }
  T::copy(acc, C.at(by * 128, bx * 128));
  T::copy(row_max, RowMax.at(by * 128));
}

// V alone, read by both gemms: with 3 stages overlapped (V waited for at the top, handed back
// an iteration later); with 2 not (a stage would stay in use for two iterations).
template <int S>
[[tile::kernel]] void v_twice(T::tensor<const T::bf16, 2> Q, T::tensor<const T::bf16, 2> V, T::tensor<float, 2> O) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 128), T::threads(256));
  T::shared<T::bf16, 128, 64> Qs;
  T::shared<T::bf16, 64, 64> Vs;
  T::fragment<float, 128, 64> sc;
  T::fragment<T::bf16, 128, 64> p;
  T::fragment<float, 128, 64> acc;
  T::copy(Q.at(bx * 128, 0), Qs);
  T::clear(acc);
  const int blocks = T::ceildiv(V.size(0), 64);
  for (int kb : T::pipelined(blocks, T::stages(S))) {
    T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(Qs, Vs, sc, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    for (auto [i, j] : T::parallel(128, 64))
      sc(i, j) = sc(i, j) * 0.25f;
    for (auto [i, j] : T::parallel(128, 64))
      acc(i, j) = acc(i, j) * 0.5f;
    T::copy(sc, p);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row}); // V-TWICE-GEMM
  }
  T::copy(acc, O.at(bx * 128, 0));
}
template void v_twice<3>(T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>, T::tensor<float, 2>);
template void v_twice<2>(T::tensor<const T::bf16, 2>, T::tensor<const T::bf16, 2>, T::tensor<float, 2>);
// (Epilogues in this file are stored by the consumer threads, bulk-store=off in the RUN lines;
// bulk-store.cpp tests bulk stores.)
