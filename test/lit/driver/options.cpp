// Bad plugin options are errors that say what is accepted.
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-bogus=1 %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: tile plugin: unknown option 'bogus'; the options are targets=, print-after=
// UNKNOWN-SAME: overlap-gemms=, pingpong=, bulk-store=, multicast=, pair-blocks=, stages=
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=gpu %s 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: tile plugin: unknown target 'gpu' in targets=
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-print-after=nonsense %s 2>&1 | FileCheck %s --check-prefix=PASS
// PASS: error: tile plugin: unknown pass 'nonsense' in print-after=; the passes are: (cpu) frontend check-bounds lower-tile-ops codegen (cuda, hip) frontend check-bounds infer-layout warp-specialize lower-tile-ops lower-gemm lower-fragments bind-threads inject-pipeline insert-sync plan-shared-memory lower-thread-loops lower-vector-access roll-fallback-loops lower-mma codegen
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm80 %s 2>&1 | FileCheck %s --check-prefix=ARCH
// ARCH: error: tile plugin: unknown CUDA architecture 'sm80'; write it as sm_NN or sm_NNa (sm_90a, sm_80)
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cpu,hip:gfx90 %s 2>&1 | FileCheck %s --check-prefix=HIP
// HIP: error: tile plugin: unknown AMD GPU architecture 'gfx90'; write it as gfxNNN (gfx90a, gfx942)
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=hip:gfx803 %s 2>&1 | FileCheck %s --check-prefix=HIPOLD
// HIPOLD: error: tile plugin: AMD GPU architecture 'gfx803' is not one tile builds for; write gfx9NN, gfx10NN, gfx11NN or gfx12NN
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-cache %s 2>&1 | FileCheck %s --check-prefix=VALUE
// VALUE: error: tile plugin: option 'cache' needs a value: -fplugin-arg-tile-cache=VALUE
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-gemm=tensor %s 2>&1 | FileCheck %s --check-prefix=GEMM
// GEMM: error: tile plugin: gemm=tensor: expected gemm=auto (the default: tensor cores where the gemm fits them, on sm_90a Hopper's wgmma where it takes the gemm), gemm=mma (tensor cores through mma.sync only) or gemm=fma (every gemm on FMA)
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-overlap-gemms=yes %s 2>&1 | FileCheck %s --check-prefix=OVERLAP
// OVERLAP: error: tile plugin: overlap-gemms=yes: expected overlap-gemms=on (a warp-specialized loop's last gemm runs on into the next iteration) or overlap-gemms=off (the default)
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-pingpong=yes %s 2>&1 | FileCheck %s --check-prefix=PINGPONG
// PINGPONG: error: tile plugin: pingpong=yes: expected pingpong=on (a warp-specialized loop's two consumer warpgroups take turns at the tensor cores; the default) or pingpong=off
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-bulk-store=tma %s 2>&1 | FileCheck %s --check-prefix=BULK-STORE
// BULK-STORE: error: tile plugin: bulk-store=tma: expected bulk-store=on (a warp-specialized kernel's epilogue copies into tensors go by bulk tensor stores; the default) or bulk-store=off
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-multicast=2 %s 2>&1 | FileCheck %s --check-prefix=MULTICAST
// MULTICAST: error: tile plugin: multicast=2: expected multicast=on (a warp-specialized loop's tiles that neighbouring blocks share are loaded once for both, in clusters of two) or multicast=off (the default)
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-pair-blocks=yes %s 2>&1 | FileCheck %s --check-prefix=PAIR-BLOCKS
// PAIR-BLOCKS: error: tile plugin: pair-blocks=yes: expected pair-blocks=auto (the default: a warp-specialized loop of one gemm has two of the grid's blocks run by a launched block, a consumer warpgroup each, that load the tiles they share once, where the grid fills the SMs), pair-blocks=on (every loop that can, at every launch) or pair-blocks=off
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-stages=0 %s 2>&1 | FileCheck %s --check-prefix=STAGES
// STAGES: error: tile plugin: stages=0: expected a stage count from 1 to 16 for every pipelined loop
// RUN: not %tile-cxx -fsyntax-only -fplugin-arg-tile-check-bounds=all %s 2>&1 | FileCheck %s --check-prefix=CHECK-BOUNDS
// CHECK-BOUNDS: error: tile plugin: check-bounds=all: expected check-bounds (every element access to a tensor checks its index at run time) or check-bounds=0
#include <tile/tile.h>
