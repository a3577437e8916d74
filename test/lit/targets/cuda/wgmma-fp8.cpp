// 8-bit floats on Hopper's wgmma: K-major operands from shared memory (a [M, K], b [N, K]
// with transpose_b), rows of 128 bytes (128 elements) in the 128-byte swizzle, K = 32 an
// instruction, either 8-bit kind for each operand; sm_80 has no 8-bit matrix instruction and
// runs FMA. The lowering is the 16-bit one's with 32 bytes of K a step.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a+sm_80 -fplugin-arg-tile-remarks %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARKS
// REMARKS-DAG: remark: [cuda:sm_90a] gemm on tensor cores (wgmma.m64n128k32.f8e4m3.f8e5m2, 2 warpgroups, a and b from shared memory)
// REMARKS-DAG: remark: [cuda:sm_80] gemm on FMA: operands are f8e4m3 and f8e5m2; tensor cores take two bf16 or two f16 operands
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-print-after=lower-mma %s 2>&1 \
// RUN:   | FileCheck %s
// CHECK: for ks in slots(0, 4) {
// Element offsets are byte offsets here: 32 of K a step is two 16-byte chunks, swizzled.
// CHECK: wgmma_m64n128k32.f8e4m3.f8e5m2(acc[{{.*}}] += desc(As + {{.*}}((ks * 32 / 16 ^ {{.*}}) * 16 + ks * 32 % 16)), k-major, swizzle 128, lbo 16, sbo 1024) * desc(Bs + {{.*}}((ks * 32 / 16 ^ 0) * 16 + ks * 32 % 16), k-major, swizzle 128, lbo 16, sbo 1024), accumulate 1)
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda:sm_90a \
// RUN:   -fplugin-arg-tile-emit-source=%t %s -o %t/fp8.o
// RUN: %nvcc -ptx -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I%t %t/wgmma-fp8.cu -o - | FileCheck %s --check-prefix=PTX
// PTX: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e5m2
// A b not transposed (N-major), which neither 8-bit wgmma nor 8-bit mma.sync (whose ldmatrix
// transposes 16-bit elements only) can read: FMA, and the remark says why for each.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks -DN_MAJOR %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NMAJOR
// NMAJOR: remark: [cuda:sm_90a] gemm on FMA: ldmatrix transposes 16-bit elements only: 8-bit operands must be K-major (a not transposed, b as [N, K] with transpose_b); not wgmma: wgmma takes 8-bit floats K-major from shared memory only: a shared tile a, and b as [N, K] with transpose_b

#include <tile/tile.h>
namespace T = tile;

[[tile::kernel]] void mm8(T::tensor<const T::f8e4m3, 2> A, T::tensor<const T::f8e5m2, 2> B, T::tensor<float, 2> C) {
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128), T::threads(256));
  T::shared<T::f8e4m3, 128, 128> As;
#ifdef N_MAJOR
  T::shared<T::f8e5m2, 128, 128> Bs; // [K, N]
#else
  T::shared<T::f8e5m2, 128, 128> Bs; // [N, K]
#endif
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(A.size(1), 128), T::stages(2))) {
    T::copy(A.at(by * 128, k * 128), As);
#ifdef N_MAJOR
    T::copy(B.at(k * 128, bx * 128), Bs);
    T::gemm(As, Bs, acc);
#else
    T::copy(B.at(bx * 128, k * 128), Bs);
    T::gemm(As, Bs, acc, {.transpose_b = true});
#endif
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}
