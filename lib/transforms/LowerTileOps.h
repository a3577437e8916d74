// lower-tile-ops: tile operations -> element-level loops (the CPU pipeline).
//
// Requires: a verified kernel (as the frontend makes it).
// Establishes: no Copy, Fill, Reduce, Cumsum, region Atomic or AnnotateLayout remains.
//   - copy / fill / region atomics become one ForKind::Parallel loop per tile dimension
//     (innermost = last) of Load / Store / element Atomic, converting element types;
//     accesses of a global tensor are predicated at its edges: reads past an edge (or at a
//     negative index) give zero through a select, writes past an edge are skipped by an If
//     placed around the innermost loop that the condition depends on. Only the bounds that
//     can be crossed are checked: none for shared / fragment / local buffers, and no
//     lower bound where the index is provably non-negative. Where the tensor side can lie
//     wholly inside the tensor, one test per tile chooses an unguarded loop (with
//     IndexWidth::Narrow, a copy into shared memory tests a varying corner in 32 bits:
//     begin <= size - extent).
//   - reduce_* becomes parallel loops over the kept dimensions around a serial loop over
//     the reduced one that combines into a scalar accumulator (Declare / Assign), starting
//     from the identity (clear) or from the destination's value (accumulate). Reductions of
//     a fragment that infer-layout keeps in registers (kernel.layouts) stay, for
//     lower-fragments.
//   - cumsum becomes the same shape of loops, storing the running sum at every step.
//   - annotate_layout is dropped: the CPU target keeps buffers row-major.
//   Gemm, element Atomic, Print and Assert stay for the codegen.
#pragma once

#include "ir/IR.h"

namespace tile::transforms {

inline constexpr const char lower_tile_ops_pass_name[] = "lower-tile-ops";

/// How a target computes the per-dimension indices of tensors (a fact of the target).
/// Wide: in 64 bits, so a tile's corner past 2^31 (b * 256 of ints) is exact. Narrow: in the
/// index expression's own type, as C++ would; the target's runtime refuses tensors with a
/// dimension large enough for an index to wrap (CUDA: 64-bit index arithmetic costs the
/// memory-bound kernels about half their speed, through registers).
/// Narrow also tests whether a tile lies inside a tensor in 32 bits (begin <= size -
/// extent), for tiles of fewer than `narrow_extent_margin` elements a dimension: the
/// margin between 2^31 and the runtime's largest dimension.
enum class IndexWidth { Wide, Narrow };
inline constexpr std::int64_t narrow_extent_margin = std::int64_t(1) << 24;

ir::Kernel lower_tile_ops(const ir::Kernel &kernel, IndexWidth width = IndexWidth::Wide);

/// What a reduction starts from in type `t` (its identity; 0 for absmax, as |x| >= 0).
ir::Expr reduce_identity(ir::ReduceKind k, ir::ScalarType t);
/// One step of a reduction: `acc` combined with the source element `x` converted to acc's
/// type (|x| for the abs kinds, taken before the conversion).
/// An element as a reduction of kind `k` accumulating in `at` takes it (|x| for the abs
/// kinds, converted): reduce_step(k, acc, x) is reduce_combine(k, acc, reduce_leaf(k, x, at)).
ir::Expr reduce_leaf(ir::ReduceKind k, ir::Expr x, ir::ScalarType at);
ir::Expr reduce_step(ir::ReduceKind k, ir::Expr acc, ir::Expr x);
/// The type a reduction of `src` elements into a `dst` buffer accumulates in: dst's
/// arithmetic type, except for an integer max, min or absmax whose elements need not fit the
/// destination (int8 into uint8, int into int8): there the smallest integer type holding
/// the values of both, so that max(-3, 5) into uint8 is 5; the result is converted at the end.
ir::ScalarType reduce_accum_type(ir::ReduceKind k, ir::ScalarType src, ir::ScalarType dst);
/// `v` converted to a reduction's accumulator type `at` (a negative value to u64 as 0).
ir::Expr reduce_convert(ir::Expr v, ir::ScalarType at);
/// Two partial results combined (sum, max or min).
ir::Expr reduce_combine(ir::ReduceKind k, ir::Expr a, ir::Expr b);

} // namespace tile::transforms
