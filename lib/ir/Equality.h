// Structural equality of expressions: same kinds, types, operators and children;
// variables and buffers compare by identity.
#pragma once

#include "ir/IR.h"

namespace tile::ir {

bool equal(const Expr &a, const Expr &b);

} // namespace tile::ir
