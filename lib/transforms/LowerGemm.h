// lower-gemm: gemm as loops of multiply-adds (the FMA path of GPU targets).
//
// Requires: a verified kernel.
// Establishes: no Gemm remains but those whose destination infer-layout gave a tensor-core
//   accumulator layout (kernel.layouts). Each other `c (+)= op(a) op(b)` becomes parallel loops over
//   c's rows and columns around a serial loop over k that accumulates in c's arithmetic
//   type (from zero with clear_accum, else from c). Correct for every type, transpose and
//   operand scope; tensor-core lowering replaces it where the types allow.
#pragma once

#include "ir/IR.h"

namespace tile::transforms {

ir::Kernel lower_gemm(const ir::Kernel &kernel);

/// The loops that one gemm becomes (also the CPU codegen's fallback for operand shapes its
/// micro-kernel cannot take).
ir::Stmt gemm_as_loops(const ir::GemmNode *n);

} // namespace tile::transforms
