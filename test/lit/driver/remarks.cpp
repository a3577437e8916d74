// -fplugin-arg-tile-remarks: what the compiler chose, as remarks at the user's lines, each
// naming its target: where each fragment lives (registers and the layout, or shared memory
// and why), which instruction each gemm runs on (or why FMA), and per kernel its shared
// memory and estimated registers. Once per CUDA architecture; none without the option.
// RUN: %tile-cxx -fsyntax-only -Xclang -verify -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks %s
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a+sm_80 -fplugin-arg-tile-remarks %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BOTH
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a %s 2>&1 | FileCheck %s --check-prefix=NONE --allow-empty
// NONE-NOT: remark
// A target without tensor-core instructions says so, and its smaller shared memory is an
// error at the kernel (the Target, lib/ir/Target.h). Without tensor cores attention_step's
// fragments live in shared memory: 65792 bytes placed one after another, 49152 as
// plan-shared-memory places them (acc and m reuse the bytes of q and k, dead by then).
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_75 -fplugin-arg-tile-remarks %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OLD
// OLD: remark: [cuda:sm_75] gemm on FMA: cuda:sm_75 has no tensor-core gemm tile uses
// OLD: remark: [cuda:sm_75] kernel 'attention_step': 49152 bytes of shared memory
// OLD-NOT: error: tile kernel 'attention_step'
// OLD: error: tile kernel 'fallbacks' needs 77824 bytes of shared memory per block; sm_75 gives a block at most 65536
// gemm=fma fixes the instruction from the command line (tests, comparisons): every gemm on
// FMA, whatever its operands, and the remark says why.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks \
// RUN:   -fplugin-arg-tile-gemm=fma %s 2>&1 | FileCheck %s --check-prefix=FORCED
// FORCED: remark: [cuda:sm_90a] fragment 's' in shared memory: the accumulator of a gemm on FMA (-fplugin-arg-tile-gemm=fma asks for FMA)
// FORCED: remark: [cuda:sm_90a] gemm on FMA: -fplugin-arg-tile-gemm=fma asks for FMA
// FORCED-NOT: remark: [cuda:sm_90a] gemm on tensor cores

#include <tile/tile.h>
namespace T = tile;

// Attention's inner step: everything in registers, both gemms on tensor cores (the operands'
// rows padded against bank conflicts: 3 x 64 x 72 bf16).
// On sm_90a both gemms run on wgmma (the default), on sm_80 on mma.sync (BOTH below); the
// fragments' layouts are the same on both.
// expected-remark@+1 {{[cuda:sm_90a] kernel 'attention_step': 24576 bytes of shared memory, about}}
[[tile::kernel]] void attention_step(T::tensor<const T::bf16, 2> Q, T::tensor<T::bf16, 2> O) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 64, 64> q, k, v;
  T::fragment<float, 64, 64> s;     // expected-remark {{[cuda:sm_90a] fragment 's' in registers: mma(64x64, 4x1 warps of 1x8 m16n8 atoms)}}
  T::fragment<float, 64, 64> acc;   // expected-remark {{[cuda:sm_90a] fragment 'acc' in registers: mma(64x64, 4x1 warps of 1x8 m16n8 atoms)}}
  T::fragment<T::bf16, 64, 64> p;   // expected-remark {{[cuda:sm_90a] fragment 'p' in registers: mma operand a(64x64, 4x1 warps of 1x8 m16n8 atoms)}}
  T::fragment<float, 64> m;         // expected-remark {{[cuda:sm_90a] fragment 'm' in registers: rows of mma(64x64, 4x1 warps of 1x8 m16n8 atoms)}}
  T::copy(Q.at(0, 0), q);
  T::copy(Q.at(0, 0), k);
  T::copy(Q.at(0, 0), v);
  T::gemm(q, k, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row}); // expected-remark {{[cuda:sm_90a] gemm on tensor cores (wgmma.m64n64k16.bf16, 1 warpgroup, a and b from shared memory)}}
  T::reduce_max(s, m, 1);
  for (auto [i, j] : T::parallel(64, 64))
    s(i, j) = T::exp2(s(i, j) - m(i));
  T::copy(s, p);
  T::clear(acc);
  T::gemm(p, v, acc, {.policy = T::warp_policy::full_row}); // expected-remark {{[cuda:sm_90a] gemm on tensor cores (wgmma.m64n64k16.bf16, 1 warpgroup, a from registers, b from shared memory)}}
  T::copy(acc, O.at(0, 0));
}

// Fallbacks say why.
// expected-remark@+1 {{[cuda:sm_90a] kernel 'fallbacks': }}
[[tile::kernel]] void fallbacks(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<float, 32, 32> a, b;
  T::fragment<float, 32, 32> c;      // expected-remark {{[cuda:sm_90a] fragment 'c' in shared memory: the accumulator of a gemm on FMA (operands are f32 and f32; tensor cores take two bf16, two f16 or two 8-bit float operands)}}
  T::fragment<float, 32, 4> t;       // expected-remark {{[cuda:sm_90a] fragment 't' in shared memory: indexed in a parallel loop by other than the loop's variables in order}}
  T::fragment<float, 4, 32> u;       // expected-remark {{[cuda:sm_90a] fragment 'u' in registers: matrix(4x32, vec 1, 4x32 threads)}}
  T::fragment<float, 128, 128> huge; // expected-remark {{[cuda:sm_90a] fragment 'huge' in shared memory: needs 128 registers per thread, more than the 64 a fragment may take}}
  T::gemm(a, b, c); // expected-remark {{[cuda:sm_90a] gemm on FMA: operands are f32 and f32; tensor cores take two bf16, two f16 or two 8-bit float operands}}
  for (auto [i, j] : T::parallel(4, 32))
    u(i, j) = t(j, i);
  T::clear(huge);
  T::copy(c, Y.at(0, 0));
  T::copy(u, Y.at(0, 0));
  T::copy(huge, Y.at(0, 0));
}

// BOTH-DAG: remarks.cpp:{{[0-9]+}}:{{[0-9]+}}: remark: [cuda:sm_90a] fragment 's' in registers
// BOTH-DAG: remarks.cpp:{{[0-9]+}}:{{[0-9]+}}: remark: [cuda:sm_80] fragment 's' in registers
// BOTH-DAG: remarks.cpp:{{[0-9]+}}:{{[0-9]+}}: remark: [cuda:sm_80] gemm on tensor cores (mma.sync.m16n8k16.bf16, 4x1 warps, a from shared memory via ldmatrix)
// BOTH-DAG: remarks.cpp:{{[0-9]+}}:{{[0-9]+}}: remark: [cuda:sm_80] gemm on tensor cores (mma.sync.m16n8k16.bf16, 4x1 warps, a from registers)
// BOTH-DAG: remarks.cpp:{{[0-9]+}}:{{[0-9]+}}: remark: [cuda:sm_80] kernel 'attention_step': 27648 bytes of shared memory
// gemm=mma keeps sm_90a on mma.sync too.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks \
// RUN:   -fplugin-arg-tile-gemm=mma %s 2>&1 | FileCheck %s --check-prefix=MMA
// MMA: remarks.cpp:{{[0-9]+}}:{{[0-9]+}}: remark: [cuda:sm_90a] gemm on tensor cores (mma.sync.m16n8k16.bf16, 4x1 warps, a from shared memory via ldmatrix)
// MMA: remarks.cpp:{{[0-9]+}}:{{[0-9]+}}: remark: [cuda:sm_90a] gemm on tensor cores (mma.sync.m16n8k16.bf16, 4x1 warps, a from registers)
