// infer-layout: which fragments live in registers, and how their elements are spread over
// the block's threads (ir/Fragment.h); the others stay in shared memory, where every access
// is legal. Inference never fails: shared memory is the fallback for any fragment whose
// uses a register layout cannot serve.
//
// Requires: the frontend's IR (tile operations not yet lowered); the target's facts (warp
//   size, the tensor-core instruction, register limits) from ir/Target.h.
// Establishes: kernel.layouts lists the register fragments with their layouts,
//   kernel.bindings the layout each parallel nest over them runs by (keyed by the nest's
//   outermost loop variable), kernel.remarks where each fragment went and why, and which
//   instruction each gemm runs on. Layouts come by propagation:
//   - strict: a gemm on tensor cores fixes its accumulator's layout (the instruction's,
//     over the warp grid of its policy) and, when its operand a is a fragment, a's;
//   - common, until nothing changes: a reduction along the last dimension gives its
//     destination the source's layout without that dimension; a copy between fragments
//     gives both one layout; a nest runs by the layout of a fragment it indexes with all
//     its variables in order (an accumulator first), and each other fragment it indexes
//     with some of them in order takes that layout restricted to them;
//   - free, one choice at a time then common again: matrices before vectors, in program
//     order (matrix_fragment, vector_fragment).
//   A fragment stays in shared memory, with the reason recorded, when a use cannot be
//   served from registers: element accesses outside parallel loops or through other
//   indices, regions of it, cumsum, reductions along another dimension, rank 3 or more,
//   copies into locals, nests that fill locals or are deeper than two, vectors written
//   through fewer variables than their nest has, more registers than the target allows,
//   operands of FMA gemms, operand b (and a transposed a) of tensor-core gemms, replicated
//   layouts under atomics, prints or read-back stores, and uses asking for two layouts.
//   Falling back can undo other choices: inference repeats until nothing more falls back.
//   The shared operands of tensor-core gemms get rows padded by 16 bytes where that spreads
//   ldmatrix's rows over all banks (kernel.shared_layouts), unless annotate_layout asked
//   for a layout: row_major (dense) or swizzled(S) (ir/SharedLayout.h), taken for tiles in
//   shared memory; a request not taken as written (col_major; a swizzle the rows cannot
//   take) is a remark.
#pragma once

#include <optional>
#include <vector>

#include "ir/IR.h"
#include "ir/Target.h"

namespace tile::transforms {

/// Choices a test or a user fixes instead of the heuristics.
struct InferLayoutOptions {
  bool tensor_cores = true; // false: every gemm on FMA (-fplugin-arg-tile-gemm=fma)
  /// wgmma where the target has it and the gemm fits it (gemm=auto, the pipeline's
  /// default; gemm=mma turns it off): operands in shared memory (a 16-bit a also in
  /// registers), a K-major and 128 bytes of K a row, b in 128-byte slabs (or K-major; 8-bit
  /// operands K-major only), one m64 instruction a warpgroup along M, N at most 256.
  bool warpgroup_mma = false;
};

ir::Kernel infer_layout(const ir::Kernel &kernel, const ir::Target &target, const InferLayoutOptions &options = {});

/// A nest of parallel loops: the loops (outermost first) and the guards (ifs without else)
/// found between them; `body` is what the innermost loop runs under its guards.
struct ParallelNest {
  std::vector<const ir::ForNode *> loops;
  std::vector<std::vector<ir::Expr>> guards; // guards[d]: inside loop d, around loop d + 1
  ir::Stmt body;
};

/// The nest rooted at `s` when it is a parallel loop of constant extent and unit step.
std::optional<ParallelNest> parallel_nest(const ir::Stmt &s);

} // namespace tile::transforms
