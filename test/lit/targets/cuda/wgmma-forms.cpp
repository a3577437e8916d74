// The forms of Hopper's wgmma that gemms take (sm_90a): K tiles of 16, 32 and 64 bf16 in the
// 32-, 64- and 128-byte swizzles; a transposed a read MN-major from shared memory (the dQ =
// dS^T K of attention's backward, linear attention's K^T V); several m64 tiles a warpgroup;
// a 64-row accumulator over two warpgroups side by side along N (MLA's full_col); N from 8
// up. Each remark names the instruction, the descriptors carry the tile's swizzle and major,
// and nvcc takes the source with every wgmma asynchronous and nothing spilled.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARKS
// REMARKS-DAG: wgmma-forms.cpp:55:3: remark: [cuda:sm_90a] gemm on tensor cores (wgmma.m64n64k16.bf16, 1 warpgroup, a and b from shared memory)
// REMARKS-DAG: wgmma-forms.cpp:68:3: remark: [cuda:sm_90a] gemm on tensor cores (wgmma.m64n128k16.bf16, 1 warpgroup, a and b from shared memory)
// REMARKS-DAG: wgmma-forms.cpp:80:3: remark: [cuda:sm_90a] gemm on tensor cores (wgmma.m64n256k16.bf16, 2 warpgroups, a from registers, b from shared memory)
// REMARKS-DAG: wgmma-forms.cpp:92:3: remark: [cuda:sm_90a] gemm on tensor cores (wgmma.m64n8k16.f16, 1 warpgroup, a and b from shared memory)
// A tile whose layout annotate_layout fixes is read by mma.sync, and the remark says why not
// wgmma:
// REMARKS-DAG: wgmma-forms.cpp:104:3: remark: [cuda:sm_90a] gemm on tensor cores (mma.sync.m16n8k16.bf16, 2x2 warps, a from shared memory via ldmatrix); not wgmma: annotate_layout fixes the layout of 'Bs', which it reads in its own
// REMARKS-NOT: gemm on FMA
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-print-after=lower-mma %s 2>&1 \
// RUN:   | FileCheck %s
// K tiles of 16 (32-byte rows), b K-major: the 32-byte swizzle, one instruction a gemm.
// CHECK-LABEL: kernel narrow_k(
// CHECK: wgmma_m64n64k16.bf16({{.*}} += desc(As + {{.*}}, k-major, swizzle 32, lbo 16, sbo 256) * desc(Bs + {{.*}}, k-major, swizzle 32, lbo 16, sbo 256), accumulate i32(ks != 0))
// a transposed ([K, M]: MN-major in 128-byte rows), b N-major in 64-byte rows (K tiles of 32).
// CHECK-LABEL: kernel transposed_a(
// CHECK: wgmma_m64n128k16.bf16({{.*}} += desc(Ks + {{.*}}, mn-major, swizzle 128, lbo 4096, sbo 1024) * desc(Vs + {{.*}}, mn-major, swizzle 128, lbo 4096, sbo 1024), accumulate 1)
// Two warpgroups along N, each an m64n256 of its half of b's columns (its first column in
// the descriptor's offset), p in registers.
// CHECK-LABEL: kernel split_columns(
// CHECK: wgmma_m64n256k16.bf16(
// A narrow N (8), f16, K tiles of 64.
// CHECK-LABEL: kernel narrow_n(
// CHECK: wgmma_m64n8k16.f16(
// REQUIRES: nvcc
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda:sm_90a \
// RUN:   -fplugin-arg-tile-remarks -fplugin-arg-tile-emit-source=%t %s -o %t/forms.o 2> %t/remarks.txt
// RUN: FileCheck %s --check-prefix=PTXAS --implicit-check-not='ptxas: (' --implicit-check-not=spills: \
// RUN:   --implicit-check-not='bytes of stack' < %t/remarks.txt
// PTXAS-COUNT-5: registers a thread (ptxas), no stack, no spills
// PTXAS-NOT: registers a thread (ptxas)
// RUN: %nvcc -ptx -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I%t %t/wgmma-forms.cu -o - | FileCheck %s --check-prefix=PTX
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16

#include <tile/tile.h>
namespace T = tile;

[[tile::kernel]] void narrow_k(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  auto [bx] = T::grid(1, T::threads(128));
  T::shared<T::bf16, 64, 16> As, Bs;
  T::fragment<float, 64, 64> acc;
  T::copy(A.at(0, 0), As);
  T::copy(B.at(0, 0), Bs);
  T::gemm(As, Bs, acc, {.transpose_b = true, .clear_accum = true});
  T::copy(acc, C.at(0, 0));
}

// dQ = dS^T K's shape: a = dS stored [keys, queries].
[[tile::kernel]] void transposed_a(T::tensor<const T::bf16, 2> K, T::tensor<const T::bf16, 2> V, T::tensor<float, 2> O) {
  auto [bx] = T::grid(1, T::threads(128));
  T::shared<T::bf16, 32, 64> Ks;  // [K, M]
  T::shared<T::bf16, 32, 128> Vs; // [K, N]
  T::fragment<float, 64, 128> acc;
  T::clear(acc);
  T::copy(K.at(0, 0), Ks);
  T::copy(V.at(0, 0), Vs);
  T::gemm(Ks, Vs, acc, {.transpose_a = true});
  T::copy(acc, O.at(0, 0));
}

// MLA's shape: 64 heads a block, a 512-wide latent over two warpgroups.
[[tile::kernel]] void split_columns(T::tensor<const T::bf16, 2> P, T::tensor<const T::bf16, 2> V, T::tensor<float, 2> O) {
  auto [bx] = T::grid(1, T::threads(256));
  T::fragment<T::bf16, 64, 64> p;
  T::shared<T::bf16, 64, 512> Vs;
  T::fragment<float, 64, 512> acc;
  T::copy(P.at(0, 0), p);
  T::copy(V.at(0, 0), Vs);
  T::gemm(p, Vs, acc, {.clear_accum = true, .policy = T::warp_policy::full_col});
  T::copy(acc, O.at(0, 0));
}

[[tile::kernel]] void narrow_n(T::tensor<const T::f16, 2> A, T::tensor<const T::f16, 2> B, T::tensor<float, 2> C) {
  auto [bx] = T::grid(1, T::threads(128));
  T::shared<T::f16, 64, 64> As;
  T::shared<T::f16, 8, 64> Bs; // [N, K]
  T::fragment<float, 64, 8> acc;
  T::clear(acc);
  T::copy(A.at(0, 0), As);
  T::copy(B.at(0, 0), Bs);
  T::gemm(As, Bs, acc, {.transpose_b = true});
  T::copy(acc, C.at(0, 0));
}

[[tile::kernel]] void annotated(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  auto [bx] = T::grid(1, T::threads(128));
  T::shared<T::bf16, 64, 64> As, Bs;
  T::annotate_layout(Bs, T::layouts::row_major());
  T::fragment<float, 64, 64> acc;
  T::clear(acc);
  T::copy(A.at(0, 0), As);
  T::copy(B.at(0, 0), Bs);
  T::gemm(As, Bs, acc, {.transpose_b = true});
  T::copy(acc, C.at(0, 0));
}
