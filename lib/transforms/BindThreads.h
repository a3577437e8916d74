// bind-threads: element-wise parallel loops onto the block's threads (GPU targets).
//
// Requires: lowered tile ops (lower-tile-ops, lower-gemm): parallel loops of constant
//   extent and step 1.
// Establishes: every outermost nest of parallel loops is one ForKind::Threads loop over the
//   product of its extents, thread t running iterations t, t + threads, ...; each original
//   loop variable is declared inside from the flat index (row-major, the innermost loop
//   fastest, so consecutive threads touch consecutive elements). A nest is a parallel loop
//   whose body is another parallel loop, possibly under guards (`if` without `else`, as
//   lower-tile-ops places at tensor edges); the guards move inside, in their order.
//   Where the body reads or writes a tensor, each thread takes vectors of consecutive
//   elements of the innermost loop (the target's widest access, 16 bytes on CUDA, of the widest tensor element, at most 8,
//   dividing its extent): a Vectorized loop over the lanes inside the Threads loop, which a
//   target may run as one vector access. Parallel loops left inside a Threads loop (under
//   other statements) become serial: one thread runs them whole.
#pragma once

#include "ir/IR.h"
#include "ir/Target.h"

namespace tile::transforms {

ir::Kernel bind_threads(const ir::Kernel &kernel, const ir::Target &target);

/// `s` with its parallel loops made serial (for work that one thread runs whole).
ir::Stmt serialize_parallel_loops(const ir::Stmt &s);

} // namespace tile::transforms
