// Shared-memory layouts (ir/SharedLayout.h) as annotate_layout asks for them: swizzled(S)
// stores a tile's 16-byte chunks XOR-swizzled within S-byte spans (the widest its rows
// take, at most S); row_major keeps a tile dense where infer-layout would pad a tensor-core
// operand; col_major is not acted on yet. Requests not taken as written are remarks. The
// copies into the tile, the gemm's ldmatrix addresses (lower-mma) and every other access
// use the one formula; the source compiles for sm_80 and sm_90a.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=infer-layout,codegen %s 2>&1 \
// RUN:   | FileCheck %s
// RUN: %tile-cxx -fsyntax-only -Xclang -verify -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks %s
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-emit-source=%t %s -o %t/layouts.o
// RUN: %nvcc -ptx -std=c++17 -gencode=arch=compute_80,code=sm_80 -I%t %t/shared-layouts.cu -o - | FileCheck %s --check-prefix=PTX
// RUN: %nvcc -ptx -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I%t %t/shared-layouts.cu -o - | FileCheck %s --check-prefix=PTX
// REQUIRES: nvcc

#include <tile/tile.h>
namespace T = tile;

// CHECK-LABEL: IR after infer-layout
// CHECK-LABEL: kernel swizzled(
// CHECK: shared As: bf16[64, 64] rows of 64 swizzled 128
// CHECK-NEXT: shared Bs: bf16[64, 64] rows of 64{{$}}
// CHECK-NEXT: shared Cs: bf16[64, 32] rows of 32 swizzled 64
// CHECK-NEXT: shared Ds: bf16[64, 8]{{$}}
// CHECK-LABEL: source after codegen
// The copy into As: chunk (column / 8) moved by the row modulo 8, whole 16-byte chunks
// by cp.async with no alignment test.
// CHECK: tile_cuda::cp_async<16>(reinterpret_cast<char *>(As + (stage % 2 * 4096 + ((tid / 8 + t_r * 16) * 64 + ((tid % 8 * 8 / 8 ^ (tid / 8 + t_r * 16) % 8) * 8 + tid % 8 * 8 % 8)))) + 0,
// The gemm's operands: As swizzled within 128 bytes, Bs dense (row_major: not padded).
// CHECK: tile_cuda::ldmatrix_x4<false>(a_frag[am * 4], a_frag[am * 4 + 1], a_frag[am * 4 + 2], a_frag[am * 4 + 3], As + (it % 2 * 4096 + ((tid % 64 / 32 * 32 + am * 16 + tid % 32 / 8 % 2 * 8 + tid % 32 % 8) * 64 + (((ks * 16 + tid % 32 / 8 / 2 * 8) / 8 ^ (tid % 64 / 32 * 32 + am * 16 + tid % 32 / 8 % 2 * 8 + tid % 32 % 8) % 8) * 8 + (ks * 16 + tid % 32 / 8 / 2 * 8) % 8))));
// CHECK: tile_cuda::ldmatrix_x4<true>(b_frag[an * 4], b_frag[an * 4 + 1], b_frag[an * 4 + 2], b_frag[an * 4 + 3], Bs + (it % 2 * 4096 + ((ks * 16 + tid % 32 / 8 % 2 * 8 + tid % 32 % 8) * 64 + (tid / 64 * 32 + an * 2 * 8 + tid % 32 / 8 / 2 * 8))));
// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// expected-remark@+1 {{kernel 'swizzled'}}
[[tile::kernel]] void swizzled(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C,
                               T::tensor<T::bf16, 2> D) {
  auto [bx, by] = T::grid(T::ceildiv(C.size(0), 64), T::ceildiv(C.size(1), 64), T::threads(128));
  T::shared<T::bf16, 64, 64> As, Bs;
  T::shared<T::bf16, 64, 32> Cs;
  T::shared<T::bf16, 64, 8> Ds;
  T::annotate_layout(As, T::layouts::swizzled(128));
  T::annotate_layout(Bs, T::layouts::row_major());
  T::annotate_layout(Cs, T::layouts::swizzled(128)); // expected-remark {{[cuda:sm_90a] shared 'Cs': swizzled(128) taken as swizzled(64): rows of 64 bytes}}
  T::annotate_layout(Ds, T::layouts::swizzled(64));  // expected-remark {{[cuda:sm_90a] shared 'Ds': swizzled(64) not taken: rows of 16 bytes take no swizzle (a whole number of 32-byte spans, rank 2 or more)}}
  T::fragment<float, 64, 64> acc; // expected-remark {{fragment 'acc' in registers}}
  T::clear(acc);
  // expected-remark@+1 {{[cuda:sm_90a] pipelined loop: 2 stages, the copies into 'As', 'Bs' run 1 iteration ahead}}
  for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(2))) {
    T::copy(A.at(bx * 64, k * 64), As);
    T::copy(B.at(k * 64, by * 64), Bs);
    T::gemm(As, Bs, acc); // expected-remark {{gemm on tensor cores}}
  }
  T::copy(acc, C.at(bx * 64, by * 64));
  T::copy(A.at(0, 0), Cs);
  T::copy(Cs, D.at(0, 0));
  T::copy(A.at(0, 0), Ds);
  T::copy(Ds, D.at(0, 0));
}

// A fragment kept in registers has no shared layout.
// expected-remark@+1 {{kernel 'column_major'}}
[[tile::kernel]] void column_major(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1, T::threads(128));
  T::shared<float, 32, 32> t;
  T::fragment<float, 32, 32> f; // expected-remark {{fragment 'f' in registers}}
  T::annotate_layout(t, T::layouts::col_major()); // expected-remark {{[cuda:sm_90a] shared 't': col_major is not acted on yet: the tile stays row-major}}
  T::annotate_layout(f, T::layouts::swizzled());  // expected-remark {{[cuda:sm_90a] 'f' is in registers: annotate_layout applies to tiles in shared memory}}
  T::copy(X.at(0, 0), t);
  T::copy(t, f);
  T::copy(f, Y.at(0, 0));
}
