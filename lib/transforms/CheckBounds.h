// check-bounds: every element access to a tensor checks its index at run time
// (-fplugin-arg-tile-check-bounds; every target).
//
// A load `X(i, j)` of a tensor becomes `bounds_check(inside, message, i, j, sizes...) ?
// X(i, j) : 0`, a store or an element atomic runs under `if (bounds_check(...))` (an
// atomic's value is then 0). Where the index lies outside the tensor, the access does not
// happen and the launch fails: the runtime throws tile::error naming the kernel, the
// tensor, the index, the tensor's sizes and the line of the access. The check is an
// expression, so an access that runs only under a condition (`i < n && X(i) > 0`, a branch
// of `?:`) is checked only where it runs.
//
// Tile copies are not element accesses: their tiles are clipped to the tensor already.
//
// Requires: the frontend's IR (element accesses as Load, Store and element Atomic nodes
//   of global buffers; statements carrying the user's locations).
// Establishes: every such access under a BoundsCheck of its own index. Off (the default),
//   the kernel is unchanged.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "ir/IR.h"

namespace tile::transforms {

struct CheckBoundsOptions {
  bool on = false;
  /// "file:line" of a statement's location (StmtNode::loc); empty where unknown.
  std::function<std::string(std::uint32_t)> where;
};

ir::Kernel check_bounds(const ir::Kernel &kernel, const CheckBoundsOptions &options);

} // namespace tile::transforms
