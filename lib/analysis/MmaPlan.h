// Which MMA atom can run a gemm, and on which grid of warps: the rules of each atom
// (ir/MmaAtom.h) applied to a gemm's operands, read-only. infer-layout asks it for each of
// the target's atoms in turn and records the first that takes the gemm; the reasons of
// those that do not are its remarks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Target.h"

namespace tile::analysis {

/// The accumulator's shape on `atom` (its warp grid, of the atom's m x n accumulator tiles)
/// for gemm `g` on a block of `threads`, or nothing and why not. The grid follows the
/// gemm's policy (square: the warp tile closest to square).
std::optional<ir::MmaShape> plan_mma(const ir::GemmNode &g, int threads, const ir::Target &target,
                                     const ir::MmaAtom &atom, std::string &why_not);

/// The swizzle (bytes) of a shared tile that `atom` reads through descriptors: the widest
/// of its swizzles that divides the tile's rows (its last dimension) and, for an MN-major
/// operand (`mn_bytes` > 0), the bytes one instruction reads along M or N (whole slabs); 0
/// where none does. A narrower swizzle divides whatever a wider one does: a tile that
/// several gemms read takes the narrowest of theirs.
int descriptor_swizzle(const ir::MmaAtom &atom, const ir::BufferNode &tile, std::int64_t mn_bytes = 0);
/// The swizzles of gemm `g`'s operands a and b on `atom` with accumulator `shape`.
std::pair<int, int> descriptor_swizzles(const ir::GemmNode &g, const ir::MmaShape &shape, const ir::MmaAtom &atom);
/// A tile's layout in `swizzle`: its rows in slabs of one swizzle span (rows of one span
/// where they are that wide), from a multiple of 8 spans (where the swizzle counts from).
ir::SharedLayout descriptor_layout(const ir::BufferNode &tile, int swizzle);

/// The atom gemm `g` runs on, of `atoms` in order (the first that takes it), with its shape;
/// nothing where none does. `why_not` receives, for the atoms before the chosen one (or all
/// when none is), the reason of each family that takes the gemm's operand types ("wgmma":
/// "..."); where no atom takes those types, one entry of an empty family says so.
struct MmaChoice {
  ir::MmaAtomRef atom;
  ir::MmaShape shape;
};
std::optional<MmaChoice> choose_mma(const ir::GemmNode &g, int threads, const ir::Target &target,
                                    const std::vector<ir::MmaAtomRef> &atoms,
                                    std::vector<std::pair<std::string, std::string>> &why_not);

} // namespace tile::analysis
