// lower-vector-access: turns the element loops of copies into vector accesses (GPU
// targets), so that the codegens print moves instead of recognizing loops.
//
// A Vectorized loop (lower-fragments, bind-threads) whose lanes copy consecutive elements of
// a tensor's last dimension into registers or shared memory, or from registers into a
// tensor, becomes, where the target's widest access allows:
//
//   if (vector_ok(T, chunk) && <bounds at the first and last lane>)   // or, without a
//     <one VectorMove of the lanes' bytes, through a local lane array> //  flag: stride and
//   else                                                               //  address tests
//     <the element loop as it was>
//
// and inside an Async statement (inject-pipeline) a copy into shared memory whose lanes are
// consecutive there too moves without registers (async VectorMove: cp.async). A Threads or
// Slots loop whose vector accesses all depend on tensors' flags alone (no bounds) is
// unswitched on them: the test once, outside, and each side without it. A Vectorized loop
// that reads a block-shared buffer at consecutive, aligned elements (unconditionally, and
// without writing it) reads them first as one VectorMove into a local lane array.
//
// Requires: lower-fragments and bind-threads (element loops bound to threads),
//   inject-pipeline (Async statements), plan-shared-memory (the pass runs last: the
//   analyses before it read the element loops, which say the same accesses); the tensor
//   indices of the CUDA target (IndexWidth::Narrow: offsets in i64 of narrow indices).
// Establishes: VectorFlag, Aligned and VectorMove nodes; the Vectorized loops it could not
//   lower are left as they are (a codegen prints them as unrolled loops).
#pragma once

#include "ir/IR.h"
#include "ir/Target.h"

namespace tile::transforms {

ir::Kernel lower_vector_access(const ir::Kernel &kernel, const ir::Target &target);

} // namespace tile::transforms
