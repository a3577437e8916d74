// The attention example's kernels on sm_90a as the H200 runs them, warp-specialized with
// each P V gemm overlapped with the next block's softmax (overlap-gemms=on), with 2 stages
// (the example's shape) and 3, at head_dim 64 and 128, causal and not. ptxas
// keeps every wgmma asynchronous (no "wgmma.mma_async instructions are serialized") and
// spills nothing, in the warp-specialized entries and their fallbacks.
// REQUIRES: nvcc
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -c -std=c++20 -I%S/../../../../examples -fplugin-arg-tile-targets=cuda:sm_90a \
// RUN:   -fplugin-arg-tile-overlap-gemms=on -fplugin-arg-tile-remarks \
// RUN:   -fplugin-arg-tile-emit-source=%t %s -o %t/a.o 2>&1 | FileCheck %s --check-prefix=REMARKS
// REMARKS-COUNT-8: remark: [cuda:sm_90a] gemm overlapped with the next iteration: issued after that iteration's first gemm, it runs while 7 of the 9 statements between them do, and is waited for before those that touch 'acc', 'p'
// RUN: %nvcc -c -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I%t %t/attention-ptxas.cu -o %t/dev.o \
// RUN:   -Xptxas -v 2>&1 | FileCheck %s --implicit-check-not=serialized --implicit-check-not=spill
// CHECK-COUNT-16: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// The same kernels with their consumer warpgroups taking turns (pingpong=on, no overlap),
// each also on a persistent grid: the same of ptxas.
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -c -std=c++20 -I%S/../../../../examples -fplugin-arg-tile-targets=cuda:sm_90a -DATTENTION_PERSISTENT=true \
// RUN:   -fplugin-arg-tile-pingpong=on -fplugin-arg-tile-remarks \
// RUN:   -fplugin-arg-tile-emit-source=%t %s -o %t/a.o 2>&1 | FileCheck %s --check-prefix=PINGPONG
// PINGPONG-COUNT-8: remark: [cuda:sm_90a] persistent grid: at most one block an SM
// RUN: %nvcc -c -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I%t %t/attention-ptxas.cu -o %t/dev.o \
// RUN:   -Xptxas -v 2>&1 | FileCheck %s --implicit-check-not=serialized --implicit-check-not=spill --check-prefix=PTXAS
// PTXAS-COUNT-16: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// And with the output stored by TMA through a shared tile (bulk-store=on): O's tile fits
// beside 2 stages, and at head_dim 64 beside 3; at head_dim 128 3 stages leave no room.
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -c -std=c++20 -I%S/../../../../examples -fplugin-arg-tile-targets=cuda:sm_90a -DATTENTION_PERSISTENT=true \
// RUN:   -fplugin-arg-tile-pingpong=on -fplugin-arg-tile-bulk-store=on -fplugin-arg-tile-remarks \
// RUN:   -fplugin-arg-tile-emit-source=%t %s -o %t/a.o 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BULK-STORE
// BULK-STORE-COUNT-6: remark: [cuda:sm_90a] copy into 'O' by bulk tensor stores (TMA, {{[12]}} box{{(es)?}} of 128x64) from shared 'O_tile'
// BULK-STORE-COUNT-2: remark: [cuda:sm_90a] copy into 'O' not a bulk tensor store: its shared tile of 32768 bytes does not fit
// BULK-STORE-NOT: copy into 'O'
// RUN: %nvcc -c -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I%t %t/attention-ptxas.cu -o %t/dev.o \
// RUN:   -Xptxas -v 2>&1 | FileCheck %s --implicit-check-not=serialized --implicit-check-not=spill --check-prefix=PTXAS

#include "flash_attention.h"

namespace T = tile;
using T4 = T::tensor<const T::bf16, 4>;
using O4 = T::tensor<T::bf16, 4>;

#ifndef ATTENTION_PERSISTENT
#define ATTENTION_PERSISTENT false
#endif

void run(T4 q, T4 k, T4 v, O4 o) {
  constexpr bool P = ATTENTION_PERSISTENT;
  flash::flash_attention<64, false, 128, 128, 256, 2, true, true, P>(q, k, v, o, 0.125f);
  flash::flash_attention<64, true, 128, 128, 256, 2, true, true, P>(q, k, v, o, 0.125f);
  flash::flash_attention<128, false, 128, 128, 256, 2, true, true, P>(q, k, v, o, 0.125f);
  flash::flash_attention<128, true, 128, 128, 256, 2, true, true, P>(q, k, v, o, 0.125f);
  flash::flash_attention<64, false, 128, 128, 256, 3, true, true, P>(q, k, v, o, 0.125f);
  flash::flash_attention<64, true, 128, 128, 256, 3, true, true, P>(q, k, v, o, 0.125f);
  flash::flash_attention<128, false, 128, 128, 256, 3, true, true, P>(q, k, v, o, 0.125f);
  flash::flash_attention<128, true, 128, 128, 256, 3, true, true, P>(q, k, v, o, 0.125f);
}
