// The attention example's kernels on sm_90a as the H200 runs them, warp-specialized with
// each P V gemm overlapped with the next block's softmax (overlap-gemms=on), with 2 stages
// (the example's shape) and 3, at head_dim 64 and 128, causal and not. ptxas
// keeps every wgmma asynchronous (no "wgmma.mma_async instructions are serialized") and
// spills nothing, in the warp-specialized entries and their fallbacks (ptxas's report, which
// the remarks give).
// REQUIRES: nvcc
// (ptxas's report of each entry comes back as a remark, from the compile or the image cache.)
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -c -std=c++20 -I%S/../../../../examples -fplugin-arg-tile-targets=cuda:sm_90a \
// RUN:   -fplugin-arg-tile-overlap-gemms=on -fplugin-arg-tile-remarks %s -o %t/a.o 2> %t/overlap.txt
// RUN: FileCheck %s --check-prefix=REMARKS < %t/overlap.txt
// RUN: FileCheck %s --check-prefix=PTXAS --implicit-check-not='ptxas: (' --implicit-check-not=spills: \
// RUN:   --implicit-check-not='bytes of stack' < %t/overlap.txt
// REMARKS-COUNT-8: remark: [cuda:sm_90a] gemm overlapped with the next iteration: issued after that iteration's first gemm, it runs while 7 of the 9 statements between them do, and is waited for before those that touch 'acc', 'p'
// PTXAS-COUNT-16: registers a thread (ptxas), no stack, no spills
// PTXAS-NOT: registers a thread (ptxas)
// The same kernels with their consumer warpgroups taking turns (pingpong=on, no overlap),
// each also on a persistent grid: the same of ptxas.
// RUN: %tile-cxx -c -std=c++20 -I%S/../../../../examples -fplugin-arg-tile-targets=cuda:sm_90a -DATTENTION_PERSISTENT=true \
// RUN:   -fplugin-arg-tile-pingpong=on -fplugin-arg-tile-remarks %s -o %t/a.o 2> %t/pingpong.txt
// RUN: FileCheck %s --check-prefix=PINGPONG < %t/pingpong.txt
// RUN: FileCheck %s --check-prefix=PTXAS --implicit-check-not='ptxas: (' --implicit-check-not=spills: \
// RUN:   --implicit-check-not='bytes of stack' < %t/pingpong.txt
// PINGPONG-COUNT-8: remark: [cuda:sm_90a] persistent grid: at most one block an SM
// And with the output stored by TMA through a shared tile (bulk-store=on): O's tile fits
// beside 2 stages, and at head_dim 64 beside 3; at head_dim 128 3 stages leave no room.
// RUN: %tile-cxx -c -std=c++20 -I%S/../../../../examples -fplugin-arg-tile-targets=cuda:sm_90a -DATTENTION_PERSISTENT=true \
// RUN:   -fplugin-arg-tile-pingpong=on -fplugin-arg-tile-bulk-store=on -fplugin-arg-tile-remarks %s -o %t/a.o \
// RUN:   2> %t/bulk-store.txt
// RUN: FileCheck %s --check-prefix=BULK-STORE < %t/bulk-store.txt
// RUN: FileCheck %s --check-prefix=PTXAS --implicit-check-not='ptxas: (' --implicit-check-not=spills: \
// RUN:   --implicit-check-not='bytes of stack' < %t/bulk-store.txt
// BULK-STORE-COUNT-6: remark: [cuda:sm_90a] copy into 'O' by bulk tensor stores (TMA, {{[12]}} box{{(es)?}} of 128x64) from shared 'O_tile'
// BULK-STORE-COUNT-2: remark: [cuda:sm_90a] copy into 'O' not a bulk tensor store: its shared tile of 32768 bytes does not fit
// BULK-STORE-NOT: copy into 'O'

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
