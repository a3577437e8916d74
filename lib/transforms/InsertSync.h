// insert-sync: block barriers where threads could race on block-shared memory, and only
// there (GPU targets).
//
// Requires: bind-threads (all work split across threads is in Threads loops; everything
//   outside them runs the same way in every thread, so barriers may go anywhere there).
// Establishes: between any two accesses of one block-shared buffer (analysis/SharedAccess.h)
//   where one is a write, on every path between them, including around a loop's back edge,
//   there is a Barrier. Placement: just before the first statement of the later access
//   whose accesses conflict with those since the last barrier; statements that touch no
//   shared memory never get one. Threads and Slots loops (per-thread work) are never split:
//   no barrier goes inside one.
#pragma once

#include "ir/IR.h"

namespace tile::transforms {

ir::Kernel insert_sync(const ir::Kernel &kernel);

} // namespace tile::transforms
