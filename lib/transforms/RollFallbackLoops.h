// roll-fallback-loops: a thread's loops on rare fallback paths stay loops (GPU targets),
// so that code nobody runs in the common case does not raise the register count of the
// code everybody runs.
//
// lower-tile-ops tests whether a copy's tile lies inside the tensor and lower-vector-access
// whether a tensor allows vector accesses; the else side of each (IfNode::rare_else) is a
// fallback: element by element, with bounds tests. Unrolled, its element loads are all
// scheduled ahead of their stores, and a kernel's registers are its most demanding
// point's: the fallback of a GEMM's tile copies (8 chunks of 8 elements) next to a
// 128-register accumulator made ptxas spill in the main loop that never takes it.
//
// A Slots loop of constant extent above one, on the else side of a rare_else If, becomes
// a Rolled loop (the codegens print `#pragma unroll 1`) when nothing in its body indexes
// registers by its variable: no load or store of a Fragment or Local buffer at an index
// that reads the variable, a scalar declared from it or an inner loop's variable whose
// bounds read it; no assignment (a value carried between iterations); no instruction on
// register operands (ldmatrix, mma, wgmma). The outermost such loop rolls; loops inside it stay as
// they were (a vector's lanes stay unrolled).
//
// Requires: lower-thread-loops and lower-vector-access (the Slots loops and the fallback
//   sides they leave).
// Establishes: Rolled loops, each on a rare else side and indexing no registers by its
//   variable.
#pragma once

#include "ir/IR.h"

namespace tile::transforms {

ir::Kernel roll_fallback_loops(const ir::Kernel &kernel);

} // namespace tile::transforms
