// How many registers a kernel's register fragments take at once: the estimate behind the
// blocks an SM a warp-specialized kernel is built for (warp-specialize's occupancy).
#pragma once

#include <cstdint>

#include "ir/Fragment.h"
#include "ir/IR.h"

namespace tile::analysis {

/// The most 32-bit words of the fragments in `layouts` that a thread holds at once between
/// two statements of `body` (a sequence; each top-level loop's body counted statement by
/// statement). A fragment lives from the statement that first writes it to the last that
/// reads it; one used in a loop and outside it, or whose first use in the loop's body may
/// read it (a gemm that accumulates, a store in a parallel loop, a partial copy), lives
/// through the whole loop. A statement that reads one fragment for the last time and
/// writes another (P from S) holds the larger, as an element-wise conversion does.
std::int64_t fragment_words_live(const ir::Stmt &body, const ir::LayoutMap &layouts);

} // namespace tile::analysis
