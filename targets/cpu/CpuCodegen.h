// The CPU target's code generator: lowered tile IR -> one C++ source file.
//
// Requires: kernels lowered by lower-tile-ops (no Copy, Fill, Reduce, Cumsum or region
//   Atomic left; Gemm, element Atomic, Print and Assert are emitted here).
// Emits: `#include "tile_cpu.h"` (targets/cpu/include) and, per kernel, an entry
//
//   extern "C" void SYMBOL(const tile_cpu::kernel_arg *args, int64_t block,
//                          const int64_t *grid, tile_cpu::context *ctx);
//
// that runs the one block whose linear index is `block` (the ABI of lib/runtime/CpuAbi.h):
// parallel loops are plain loops (innermost ones under `#pragma omp simd`), tile buffers are
// 64-byte-aligned arrays on the stack, gemm calls the header's register-blocked kernel.
// The output is deterministic and indented, one statement per line: lit tests snapshot it.
#pragma once

#include <string>
#include <vector>

#include "ir/IR.h"

namespace tile::cpu {

/// The entry's name in the image: "tile_cpu_" + the kernel's key with every character
/// outside [A-Za-z0-9_] replaced by '_', + "_" + 8 hex digits of a hash of the key (keys
/// that differ only in replaced characters stay apart).
std::string kernel_symbol(const ir::Kernel &kernel);

/// The C++ source of one CPU image holding `kernels`.
std::string emit_source(const std::vector<ir::Kernel> &kernels);

} // namespace tile::cpu
