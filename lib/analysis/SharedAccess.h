// Which block-shared buffers a statement reads and writes: the facts barrier insertion
// needs. A buffer is block-shared when its scope is shared, or fragment while fragments
// are stored in shared memory (the GPU targets' layout until layout inference places them
// in registers).
//
// An access may also name its slot: when its first index is `(v + c) % S` with v a
// variable of `uniform` (the same in every thread and unchanged between the accesses
// compared, as an enclosing serial loop's variable is), it touches only the elements whose
// first index is that value. Two accesses of one buffer at slots (v + c1) % S and
// (v + c2) % S with c1 - c2 not a multiple of S touch different elements: the stages of a
// multi-buffered tile (inject-pipeline) do not conflict with each other.
#pragma once

#include <cstdint>
#include <set>
#include <tuple>

#include "ir/IR.h"

namespace tile::analysis {

/// Elements of a buffer: all of them (var null), or those whose first index is
/// (var + offset) % modulus, with 0 <= offset < modulus.
struct Slot {
  const ir::VarNode *var = nullptr;
  std::int64_t offset = 0, modulus = 0;
  bool whole() const { return var == nullptr; }
  /// Whether the two are different elements whatever the variable's value.
  bool disjoint_from(const Slot &o) const;
};

struct BufferUse {
  const ir::BufferNode *buffer;
  Slot slot;
  bool operator<(const BufferUse &o) const {
    return std::tie(buffer, slot.var, slot.offset, slot.modulus) < std::tie(o.buffer, o.slot.var, o.slot.offset, o.slot.modulus);
  }
  bool operator==(const BufferUse &o) const { return !(*this < o) && !(o < *this); }
};

struct SharedAccess {
  std::set<BufferUse> reads, writes;
  bool empty() const { return reads.empty() && writes.empty(); }
  void merge(const SharedAccess &o);
  /// Whether running `later` after `this` with no barrier between them could race: one
  /// writes elements of a buffer that the other reads or writes (RAW, WAR, WAW).
  bool conflicts_with(const SharedAccess &later) const;
  /// The same accesses as seen from the next iteration of the loop over `var` (the
  /// variable then `step` larger): their slots' offsets shift by -step. With a step that
  /// is not a constant, slots of `var` become whole buffers.
  SharedAccess shifted(const ir::VarNode *var, const ir::Expr &step) const;
  bool operator==(const SharedAccess &o) const { return reads == o.reads && writes == o.writes; }
};

/// True for buffers that every thread of a block can see.
bool is_block_shared(const ir::BufferNode *b);

/// Every access of a block-shared buffer in `s`, nested statements included; slots are
/// recognized for the variables in `uniform`.
SharedAccess shared_access(const ir::Stmt &s, const std::set<const ir::VarNode *> &uniform = {});

} // namespace tile::analysis
