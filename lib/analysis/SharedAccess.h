// Which block-shared buffers a statement reads and writes: the facts barrier insertion
// needs. A buffer is block-shared when its scope is shared, or fragment while fragments
// are stored in shared memory (the GPU targets' layout until layout inference places them
// in registers).
#pragma once

#include <set>

#include "ir/IR.h"

namespace tile::analysis {

struct SharedAccess {
  std::set<const ir::BufferNode *> reads, writes;
  bool empty() const { return reads.empty() && writes.empty(); }
  void merge(const SharedAccess &o);
  /// Whether running `later` after `this` with no barrier between them could race: one
  /// writes a buffer that the other reads or writes (RAW, WAR, WAW).
  bool conflicts_with(const SharedAccess &later) const;
};

/// True for buffers that every thread of a block can see.
bool is_block_shared(const ir::BufferNode *b);

/// Every access of a block-shared buffer in `s`, nested statements included.
SharedAccess shared_access(const ir::Stmt &s);

} // namespace tile::analysis
