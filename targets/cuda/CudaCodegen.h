// The CUDA target's code generator: lowered tile IR -> one CUDA C++ source file.
//
// Requires: the CUDA pipeline's passes up to plan-shared-memory (no tile operation left; all
//   element-wise work in Threads loops; barriers placed; shared buffers placed).
// Emits: `#include "tile_cuda.h"` (targets/cuda/include) and, per kernel,
//
//   extern "C" __global__ void __launch_bounds__(THREADS) SYMBOL(tile_cuda::tensor_arg A, ...,
//                                                               int64_t n, double alpha, ...)
//
// (the ABI of lib/runtime/CudaBackend.cpp: tensors as tensor_arg, integral and bool scalars
// as int64_t, floating scalars as double). Shared and fragment buffers live in the block's
// dynamic shared memory at the offsets plan-shared-memory gave them; local buffers are
// per-thread arrays. Threads loops become thread-strided loops; work outside them that has
// an effect outside the thread (atomics, print, stores to shared memory) is done by thread 0.
// The output is deterministic and indented: lit tests snapshot it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Target.h"
#include "targets/common/GpuEmitter.h"

namespace tile::cuda {

/// The entry's name in the image: "tile_cuda_" + the kernel's key made an identifier + a
/// hash of the key.
std::string kernel_symbol(const ir::Kernel &kernel);

using Source = targets::GpuSource;

/// The CUDA source of one image holding `kernels`.
Source emit_source(const std::vector<ir::Kernel> &kernels, const ir::Target &target);

} // namespace tile::cuda
