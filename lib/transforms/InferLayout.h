// infer-layout: which fragments live in registers, and how their elements are spread over
// the block's threads (ir/Fragment.h); the others stay in shared memory, where every access
// is legal. Inference never fails: shared memory is the fallback for any fragment whose
// uses a register layout cannot serve.
//
// Requires: the frontend's IR (tile operations not yet lowered).
// Establishes: kernel.layouts lists the register fragments. A fragment of rank 1 or 2 gets
//   a register layout when every use of it is one of
//   - a copy, fill or region atomic of the whole fragment;
//   - an element access inside a nest of parallel loops whose indices are the nest's
//     variables (the loops of an R x C nest are bound to threads by matrix_layout(R, C)), or,
//     for a rank-1 fragment in a two-level nest, its row or column variable alone (the
//     fragment is then a row or column vector of that matrix, one copy per thread that
//     holds the row or column);
//   - a reduction along the last dimension of a rank-2 fragment into a rank-1 one (the
//     source a matrix, the destination its row vector);
//   - the destination of a gemm that runs on tensor cores (mma_accumulator_layout), which
//     then lays it out as the instruction does (and the nests over it with it);
//   and the layouts these uses ask of it agree. A fragment read or written outside parallel
//   loops, through other indices, by gemm or cumsum, or needing more than 64 registers per
//   thread, stays in shared memory, and so do fragments whose uses would then disagree.
//   The shared operands of tensor-core gemms get rows padded by 16 bytes where that spreads
//   ldmatrix's rows over all banks (kernel.row_pitch).
#pragma once

#include <optional>
#include <vector>

#include "ir/IR.h"
#include "ir/Target.h"

namespace tile::transforms {

ir::Kernel infer_layout(const ir::Kernel &kernel, const ir::Target &target);

/// The tensor-core accumulator layout of gemm `g`'s destination on `threads` threads, when
/// the gemm can run on tensor cores (bf16 or f16 operands in whole rank-2 shared buffers with
/// rows of a multiple of 8 elements, an f32 rank-2 fragment destination, K a multiple of 16,
/// a warp grid that tiles M by 16 and N by 8 with at most 256 accumulators per thread),
/// the warp grid chosen by its policy (square: the warp tile closest to square).
/// The warp grid of gemm `g` on tensor cores, or nothing and why not.
std::optional<ir::MmaShape> mma_plan(const ir::GemmNode *g, int threads, const ir::Target &target,
                                     std::string &why_not);

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
