// insert-sync: block barriers where threads could race on block-shared memory, and only
// there (GPU targets).
//
// Requires: bind-threads (all work split across threads is in Threads loops; everything
//   outside them runs the same way in every thread, so barriers may go anywhere there).
// Establishes: between any two accesses of one block-shared buffer (analysis/SharedAccess.h)
//   where one is a write, on every path between them, including around a loop's back edge,
//   there is a Barrier. Placement: just before the first statement of the later access
//   whose accesses conflict with those since the last barrier (before an if whose two
//   branches would both start with one); statements that touch no shared memory never get
//   one. Threads and Slots loops (per-thread work) are never split: no barrier goes inside
//   one. Accesses of different stages of a buffer (first index (k + c) % S, k a serial
//   loop's variable: analysis/SharedAccess.h) do not conflict; around a back edge their
//   stages shift by the loop's step, as far back as the loop has iterations.
#pragma once

#include "ir/IR.h"

namespace tile::transforms {

ir::Kernel insert_sync(const ir::Kernel &kernel);

} // namespace tile::transforms
