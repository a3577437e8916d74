// inject-pipeline: software pipelining of `pipelined` loops (GPU targets): the copies that
// fill shared buffers from global memory run `stages - 1` iterations ahead of the work
// that reads them, as asynchronous copies into that many more copies of the buffers.
//
// Requires: bind-threads (copies are Threads loops); runs before insert-sync.
// Establishes: a Pipelined loop whose body starts with producers (Threads loops that store
//   only into one shared buffer each, declared outside the loop and written nowhere else,
//   from global memory and scalars) followed by consumers becomes
//
//     for s in serial(0, D) { if (s < n) async { producers(iteration s) } async_commit() }
//     for it in serial(0, n) {
//       var k = begin + it * step
//       async_wait(D - 1)          // this thread's copies of iteration `it` are done
//       barrier()                  // and everyone's; and everyone is done with iteration it - 1
//       if (it + D < n) async(ahead D of stages) { producers(iteration it + D) }
//       async_commit()
//       consumers
//     }
//
//   with D = stages - 1 (D = stages - 2 for a lone asynchronous gemm, below)
//     async_wait(0)
//
//   with each such buffer B[R, C] replaced by B[stages, R, C], iteration i using B[i % stages]
//   (row padding kept). The one barrier per iteration serves both hazards: the copies of
//   iteration it + stages - 1 refill stage (it - 1) % stages, which only iteration it - 1
//   read. insert-sync sees that the producers and consumers of one iteration touch
//   different stages (analysis/SharedAccess.h: slots) and adds nothing between them.
//   Where the first consumer is a gemm the target runs asynchronously (a warpgroup
//   accumulator: wgmma), it comes before the copies, which are issued while it runs;
//   the copies are marked as filling the stages of iteration it + stages - 1 (AsyncNode::
//   ahead), so that lower-mma may wait for the gemm after them.
//   Loops that do not have that shape stay serial loops, as do all loops with fewer than
//   2 stages and loops whose shared buffers another pipelined loop uses too.
#pragma once

#include "ir/IR.h"

namespace tile::transforms {

/// `stages` > 0: every pipelined loop takes that many stages instead of its own (the
/// option stages=, for tests and comparisons).
ir::Kernel inject_pipeline(const ir::Kernel &kernel, int stages = 0);

} // namespace tile::transforms
