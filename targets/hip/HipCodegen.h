// The HIP target's code generator: lowered tile IR -> one HIP C++ source file.
//
// Requires: the GPU pipeline's passes up to plan-shared-memory, as the CUDA target's do,
//   lowered for a Target of kind "hip" (64-wide wavefronts on gfx9, MFMA where it has it).
// Emits: `#include "tile_hip.h"` (targets/hip/include) and, per kernel,
//
//   extern "C" __global__ void __launch_bounds__(THREADS) SYMBOL(tile_hip::tensor_arg A, ...,
//                                                               int64_t n, double alpha, ...)
//
// (the ABI of lib/runtime/HipBackend.cpp, the same as CUDA's). What the two GPU targets
// print alike is targets/common/GpuEmitter; this one adds the matrix-core instruction:
// an Mma node becomes TILE_HIP_MFMA_F32X4 of the atom's builtin. The output is deterministic and indented:
// lit tests snapshot it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Target.h"
#include "targets/common/GpuEmitter.h"

namespace tile::hip {

/// The entry's name in the image: "tile_hip_" + the kernel's key made an identifier + a
/// hash of the key.
std::string kernel_symbol(const ir::Kernel &kernel);

using Source = targets::GpuSource;

/// The HIP source of one image holding `kernels`.
Source emit_source(const std::vector<ir::Kernel> &kernels, const ir::Target &target);

} // namespace tile::hip
