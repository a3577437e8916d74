// lower-fragments: register fragments (kernel.layouts, from infer-layout) become per-thread
// arrays, and the work on them is bound to threads by their layouts (ir/Fragment.h).
//
// Requires: infer-layout, lower-tile-ops and lower-gemm (copies and fills are parallel
//   nests; reductions of register fragments are still Reduce nodes).
// Establishes: no register fragment remains: each is a local buffer of layout.slots()
//   elements. Every parallel nest that touches one is replaced by unrolled loops over the
//   thread's rows (rs), column vectors (cs) and vector lanes (v), which recover the nest's
//   indices from kernel.thread_index (made here) and run the body with the fragment
//   accesses rewritten to slots; rows past the fragment's end are skipped. A row reduction
//   becomes, per row, a loop over the thread's slots then a butterfly of warp shuffles over
//   the row's threads, which all end with the result. Nests over a tensor-core accumulator
//   run over its atoms as the instruction lays them out; the gemm itself keeps its node,
//   with the registers as destination (for the codegen). kernel.layouts then lists the
//   layouts of the registers. Other nests are left for bind-threads.
#pragma once

#include "ir/IR.h"
#include "ir/Target.h"

namespace tile::transforms {

ir::Kernel lower_fragments(const ir::Kernel &kernel, const ir::Target &target);

} // namespace tile::transforms
