// Architectures whose targets differ in what the passes read (here: sm_75 has no mma.sync
// m16n8k16 for bf16; sm_80 and sm_86 have) each get their own pipeline, generated source
// and image; those of one class share them. Printouts and remarks name the class, and
// each image's manifest names its architectures, which the runtime matches against the
// device's (lib/runtime/Manifest.h, arch_fit).
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_75+sm_80+sm_86 -fplugin-arg-tile-remarks %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARKS
// REMARKS: remark: [cuda:sm_75] gemm on FMA: cuda:sm_75 has no tensor-core gemm tile uses
// REMARKS: remark: [cuda:sm_80] gemm on tensor cores (mma.sync.m16n8k16.bf16
// REMARKS: remark: [cuda:sm_86] gemm on tensor cores (mma.sync.m16n8k16.bf16
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_75+sm_80+sm_86 -fplugin-arg-tile-print-after=codegen \
// RUN:   %s 2>&1 | FileCheck %s
// CHECK: source after codegen [cuda:sm_75]
// CHECK-NOT: mma.sync
// CHECK: source after codegen [cuda:sm_80+sm_86]
// CHECK: asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};
// The default sm_90a and sm_80 differ in the gemm only (wgmma on sm_90a): a unit with a
// gemm gets two sources, one without (here the same kernel without its gemm) or with
// gemm=mma one source, tagged as one class.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=codegen %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TWO
// TWO: source after codegen [cuda:sm_90a]
// TWO: wgmma
// TWO: source after codegen [cuda:sm_80]
// TWO-NOT: wgmma
// TWO: asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -DNO_GEMM -fplugin-arg-tile-print-after=codegen %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ONE
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-gemm=mma \
// RUN:   -fplugin-arg-tile-print-after=codegen %s 2>&1 | FileCheck %s --check-prefix=ONE
// ONE: source after codegen [cuda]
// ONE-NOT: source after codegen
// REQUIRES: nvcc
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda:sm_75+sm_80+sm_86 -fplugin-arg-tile-verbose \
// RUN:   -fplugin-arg-tile-cache=%t/cache -fplugin-arg-tile-emit-source=%t %s -o %t/classes.o 2>&1 \
// RUN:   | FileCheck %s --check-prefix=IMAGES
// IMAGES-DAG: tile: cuda image for sm_75 compute_75 of {{.*}}arch-classes.cpp (1 kernel)
// IMAGES-DAG: tile: cuda image for sm_80 sm_86 compute_80 of {{.*}}arch-classes.cpp (1 kernel)
// RUN: ls %t | FileCheck %s --check-prefix=FILES
// FILES: arch-classes.sm_75.cu
// FILES: arch-classes.sm_80.cu
// By default, sm_90a and sm_80 get an image each where wgmma takes the gemm, and share
// one where it does not (M tiles of 32, less than its 64 rows: the same source for both).
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-verbose -fplugin-arg-tile-cache=%t/cache \
// RUN:   %s -o %t/wgmma.o 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT-DAG: tile: cuda image for sm_90a of {{.*}}arch-classes.cpp (1 kernel)
// SPLIT-DAG: tile: cuda image for sm_80 compute_80 of {{.*}}arch-classes.cpp (1 kernel)
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda -DMT=32 -fplugin-arg-tile-verbose -fplugin-arg-tile-cache=%t/cache \
// RUN:   %s -o %t/shared.o 2>&1 | FileCheck %s --check-prefix=SHARED
// SHARED: tile: cuda image of {{.*}}arch-classes.cpp (1 kernel)
// SHARED-NOT: cuda image

#include <tile/tile.h>
namespace T = tile;

#ifndef MT
#define MT 64 // M tile: wgmma takes 64 rows a warpgroup, not 32
#endif
constexpr int KT = 64;

[[tile::kernel]] void mm(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 64), T::ceildiv(C.size(0), MT));
  T::shared<T::bf16, MT, KT> As;
  T::shared<T::bf16, KT, 64> Bs;
  T::fragment<float, MT, 64> acc;
  T::clear(acc);
  for (int k : T::serial(T::ceildiv(A.size(1), KT))) {
    T::copy(A.at(by * MT, k * KT), As);
    T::copy(B.at(k * KT, bx * 64), Bs);
#ifndef NO_GEMM
    T::gemm(As, Bs, acc);
#endif
  }
  T::copy(acc, C.at(by * MT, bx * 64));
}
