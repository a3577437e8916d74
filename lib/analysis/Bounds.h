// The range of values an integer expression can take, from the ranges of its variables:
// what lets the frontend prove a constant or loop-indexed access outside a tile buffer
// (an error at the user's line instead of a silent out-of-bounds access).
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "ir/IR.h"

namespace tile::analysis {

/// A closed interval [lo, hi] of integers.
struct Interval {
  std::int64_t lo, hi;
};

/// Known ranges of variables (loop indices with constant bounds, say).
using VarRanges = std::map<const ir::VarNode *, Interval>;

/// Every value `e` can take lies in the result, whatever values its variables take within
/// `ranges`; nullopt when that is not known (a variable without a range, an operation the
/// analysis does not model, a value that may overflow 64 bits). Integer expressions only.
std::optional<Interval> bounds_of(const ir::Expr &e, const VarRanges &ranges);

} // namespace tile::analysis
