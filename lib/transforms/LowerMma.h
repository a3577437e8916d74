// lower-mma: a tensor-core gemm as the target's instructions, explicit in the IR (CUDA:
// ldmatrix and mma.sync m16n8k16), so that the codegen prints nodes instead of calling a
// gemm routine of its device library.
//
// A Gemm whose accumulator infer-layout gave a tensor-core layout (lower-fragments made it
// the thread's registers) becomes, for each k step of the atom's K:
//
//   matrix_load(a_regs[...], A + offset)       the A atoms of the warp's rows (A in shared)
//   matrix_load(b_regs[...], B + offset)       the B atoms of the warp's columns, two a load
//   mma(acc[...] += a_regs[...] * b_regs[...]) every atom of the warp's tile
//
// Where the first operand is in registers (laid out as the instruction's A; a gemm's
// accumulator converted, FlashAttention-2's P) its registers are the mma's directly, and
// the B atoms of the next k step are loaded before this step's mma (two sets of
// registers), so that the loads' latency overlaps the tensor cores. Which element each
// register holds is read from the layouts (ir/Fragment.h: the accumulator's slots, the
// warp's tile origin) and where a shared element lives from its shared layout
// (ir/SharedLayout.h: padding and swizzle): the formulas exist once. What is the
// instruction's own (lane l of ldmatrix gives row l % 8 of matrix l / 8; the order of the
// four 8 x 8 matrices of an A atom and the two of a B atom) is this pass's.
//
// A gemm on wgmma (a warpgroup accumulator) becomes a fence, one instruction a k step of
// 16 reading both operands through shared-memory descriptors, and a commit; its wait
// (for the tensor cores to finish) comes right after, or, where inject-pipeline put
// copies of later stages after the gemm (AsyncNode::ahead: they never write what it
// reads), after those, so that they are issued while it runs.
//
// Requires: lower-fragments (registers as local buffers, kernel.layouts keyed by them);
//   the target's MmaAtom is m16n8k16 with 16-bit operands read by matrix loads.
// Establishes: no Gemm remains; MatrixLoad and Mma nodes, in loops of kind Slots.
#pragma once

#include "ir/IR.h"
#include "ir/Target.h"

namespace tile::transforms {

ir::Kernel lower_mma(const ir::Kernel &kernel, const ir::Target &target);

} // namespace tile::transforms
