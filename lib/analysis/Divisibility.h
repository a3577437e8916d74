// What an integer expression is always a multiple of: the facts that let a target prove
// an address aligned at compile time (a shared-memory offset of a vector access, say)
// instead of testing it at run time.
#pragma once

#include <cstdint>

#include "ir/IR.h"

namespace tile::analysis {

/// A positive g such that `e` is a multiple of g whatever its variables' values
/// (1 when nothing is known). Constants give their own value (0 gives `cap`), products
/// multiply, sums take the gcd, `a % c` gives gcd(known_divisor(a), c). Capped at `cap`.
std::int64_t known_divisor(const ir::Expr &e, std::int64_t cap = std::int64_t(1) << 30);

} // namespace tile::analysis
