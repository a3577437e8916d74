// lower-fragments: register fragments (kernel.layouts, from infer-layout) become per-thread
// arrays, and the work on them is bound to threads by their layouts (ir/Fragment.h).
//
// Requires: infer-layout, lower-tile-ops and lower-gemm (copies and fills are parallel
//   nests; reductions of register fragments are still Reduce nodes); the target's warp size.
// Establishes: no register fragment remains: each is a local buffer of layout.slots()
//   elements. Every parallel nest that touches one is replaced by unrolled loops, one per
//   slot digit of the layout it runs by (kernel.bindings, else the layout of the register
//   fragment it indexes fully), which recover the nest's indices from kernel.thread_index
//   (made here) and run the body with the fragment accesses rewritten to slots; places past
//   the ends and idle threads are skipped, and under a replicated layout stores outside the
//   registers are done by the first holder only. A reduction becomes, per destination
//   element, the thread's elements combined as a tree, a butterfly of warp shuffles over the
//   lanes that split the reduced dimension, and where warps split it a combination through
//   shared memory. A tensor-core gemm keeps its node with the registers as destination (and
//   operand a where it is in registers), for the codegen. kernel.layouts then lists the
//   layouts of the registers; kernel.bindings is empty. Other nests are left for
//   bind-threads.
#pragma once

#include "ir/IR.h"
#include "ir/Target.h"

namespace tile::transforms {

ir::Kernel lower_fragments(const ir::Kernel &kernel, const ir::Target &target);

} // namespace tile::transforms
