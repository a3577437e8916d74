// Fragment layouts: which thread of a block holds which element of a fragment, and where in
// that thread's registers.
//
// A register layout views a fragment as a matrix of R rows (the product of all dimensions
// but the last) and C columns (the last dimension). Threads form a grid of TR x TC threads
// (TR * TC = the block's threads, TC a power of two of at most 32 so that a row's threads
// are lanes of one warp); each thread holds vectors of V consecutive columns:
//
//   element (r, c) -> thread (r % TR) * TC + (c / V) % TC,
//                     slot ((r / TR) * CV + c / (V * TC)) * V + c % V,   CV = C / (V * TC)
//
// A fragment laid out as a row vector (one value per row of a matrix of layout L, as a row
// reduction makes) is held by the TC threads of that row, each with a copy: element r ->
// threads with thread / TC == r % TR, slot r / TR. A column vector (one value per column)
// is held likewise by the TR threads of each column: element c -> threads with thread % TC
// == (c / V) % TC, slot (c / (V * TC)) * V + c % V.
//
// The accumulator of a tensor-core gemm (mma.sync m16n8k16) has the layout the instruction
// gives it: warps tile the R x C matrix as WARPS_M x WARPS_N (warp w at (w % WARPS_M,
// w / WARPS_M)), each warp's WM x WN tile is AM x AN atoms of 16 x 8, and lane l holds of
// each atom the elements (l / 4 + 8 h, 2 (l % 4) + e), h, e in {0, 1}, in slot
// ((am * AN + an) * 2 + h) * 2 + e.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace tile::ir {

struct BufferNode;

struct FragmentLayout {
  enum Kind { Matrix, RowVector, ColumnVector, MmaAccumulator };
  Kind kind = Matrix;
  /// The matrix view (of the fragment itself, or of the matrix whose rows or columns a
  /// vector belongs to).
  std::int64_t rows = 1, cols = 1;
  int vec = 1;             // V
  int threads_per_row = 1; // TC
  int row_threads = 1;     // TR
  int warps_m = 1, warps_n = 1; // MmaAccumulator: the warp grid

  /// MmaAccumulator: atoms per warp along rows (AM) and columns (AN).
  std::int64_t atoms_m() const { return rows / (16 * warps_m); }
  std::int64_t atoms_n() const { return cols / (8 * warps_n); }

  /// Row groups each thread holds: ceil(R / TR).
  std::int64_t row_steps() const { return (rows + row_threads - 1) / row_threads; }
  /// Column vectors each thread holds per row: C / (V * TC).
  std::int64_t col_steps() const { return cols / (std::int64_t(vec) * threads_per_row); }
  /// Registers each thread holds.
  std::int64_t slots() const;
  /// Whether every element is held by exactly one thread.
  bool replicated() const { return kind == RowVector || kind == ColumnVector; }
  /// The same view, for the rows (RowVector) or the columns (ColumnVector) of this matrix.
  FragmentLayout as(Kind k) const {
    FragmentLayout l = *this;
    l.kind = k;
    return l;
  }
  friend bool operator==(const FragmentLayout &, const FragmentLayout &) = default;
};

/// The element that thread `thread` holds at (rs, cs, v) — its row step, column step (atom
/// column for MmaAccumulator) and lane — as (row, column) of the matrix view, and its
/// slot; row may be past the end (such slots hold nothing). The integer form of what
/// lower-fragments builds as IR.
struct ElementPlace {
  std::int64_t row, col, slot;
};
ElementPlace element_at(const FragmentLayout &l, int thread, std::int64_t rs, std::int64_t cs, std::int64_t v);

/// The matrix layout tile gives an R x C fragment on `threads` threads: the widest vector of
/// up to 8 elements that divides C (narrower while that leaves threads without a vector),
/// then as many threads per row as divide the vectors of a row (at most 32 when there are
/// several rows, so that a row's threads are lanes of one warp).
FragmentLayout matrix_layout(std::int64_t rows, std::int64_t cols, int threads);

/// "matrix(4x256, vec 8, 4x32 threads)", "rows of matrix(...)".
std::string to_string(const FragmentLayout &l);

/// The layouts of a kernel's register fragments (those not listed live in shared memory).
using LayoutMap = std::map<const BufferNode *, FragmentLayout>;

} // namespace tile::ir
