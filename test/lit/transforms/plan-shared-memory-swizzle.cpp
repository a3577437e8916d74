// plan-shared-memory: rows that infer-layout padded against bank conflicts (ldmatrix's
// operands) are swizzled instead where the padding alone makes the block need more shared
// memory than the target gives, and the remark says so. Attention's step with head_dim 128
// and key blocks of 128, two stages: 174080 bytes padded, 163840 swizzled; sm_80 gives a
// block 166912 (mma.sync, padded rows of 136), sm_90a 232448 (the padded rows fit there).
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_80 -fplugin-arg-tile-print-before=plan-shared-memory \
// RUN:   -fplugin-arg-tile-print-after=plan-shared-memory -fplugin-arg-tile-stop-after=plan-shared-memory %s 2>&1 \
// RUN:   | FileCheck %s
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_80 -fplugin-arg-tile-remarks %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// REMARK-DAG: plan-shared-memory-swizzle.cpp:{{[0-9]+}}:{{[0-9]+}}: remark: [cuda:sm_80] shared 'q': rows of 128 swizzled 128 instead of rows of 136, so that the block's 163840 bytes fit the 166912 it may have (padded: 174080)
// REMARK-DAG: remark: [cuda:sm_80] shared 'k': rows of 128 swizzled 128 instead of rows of 136
// REMARK-DAG: remark: [cuda:sm_80] shared 'v': rows of 128 swizzled 128 instead of rows of 136
// REMARK-DAG: remark: [cuda:sm_80] kernel 'step': 163840 bytes of shared memory
// REMARK-NOT: warning
// Where the padded rows fit (a single stage), they stay.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_80 -DSTAGES=1 -fplugin-arg-tile-print-after=plan-shared-memory \
// RUN:   -fplugin-arg-tile-stop-after=plan-shared-memory %s 2>&1 | FileCheck %s --check-prefix=ONE
// CHECK-LABEL: before plan-shared-memory
// CHECK: shared q: bf16[128, 128] rows of 136
// CHECK: shared k{{.*}}: bf16[2, 128, 128] rows of 136
// CHECK: shared v{{.*}}: bf16[2, 128, 128] rows of 136
// CHECK-LABEL: after plan-shared-memory
// CHECK-LABEL: kernel step(
// CHECK-NEXT: grid(bx < 1) threads(128) shared_bytes(163840) {
// CHECK: shared q: bf16[128, 128] rows of 128 swizzled 128 at byte 0
// CHECK: shared k{{.*}}: bf16[2, 128, 128] rows of 128 swizzled 128 at byte 32768
// CHECK: shared v{{.*}}: bf16[2, 128, 128] rows of 128 swizzled 128 at byte 98304
// ONE-LABEL: after plan-shared-memory
// ONE-LABEL: kernel step(
// ONE-NEXT: grid(bx < 1) threads(128) shared_bytes(104448) {
// ONE: shared q: bf16[128, 128] rows of 136 at byte 0

#include <tile/tile.h>
namespace T = tile;

#ifndef STAGES
#define STAGES 2
#endif

[[tile::kernel]] void step(T::tensor<const T::bf16, 2> Q, T::tensor<const T::bf16, 2> K,
                           T::tensor<const T::bf16, 2> V, T::tensor<float, 2> O) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 128, 128> q;
  T::shared<T::bf16, 128, 128> k, v;
  T::fragment<float, 128, 128> s, acc;
  T::fragment<T::bf16, 128, 128> p;
  T::copy(Q.at(0, 0), q);
  T::clear(acc);
  for (int j : T::pipelined(T::ceildiv(K.size(0), 128), T::stages(STAGES))) {
    T::copy(K.at(j * 128, 0), k);
    T::copy(V.at(j * 128, 0), v);
    T::gemm(q, k, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    T::copy(s, p);
    T::gemm(p, v, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(0, 0));
}
