// The layout algebra of register fragments: which thread of a block holds which element of a
// fragment, and in which of its register slots. One formula, used by layout inference, by
// lower-fragments (which builds the per-thread loops and indices from it), by the codegen and
// by the unit tests (which evaluate it by constant folding).
//
// A layout writes each dimension of the tile index in mixed radix: a list of digits, outer to
// inner, each taking `extent` values. A digit lives either in the thread index or in the
// register slot index, at a stride there:
//
//   index[d] = Horner over d's digits:  ((g0 * e1 + g1) * e2 + g2) ...
//   thread   = sum of thread digits g * stride     slot = sum of slot digits g * stride
//
// Digits of no dimension say what else the threads do: a Replica digit runs over threads
// that hold the same elements (the row vector of a matrix is held by all the threads of the
// row); an Idle digit runs over threads that hold nothing unless it is 0 (a 64-element vector
// on 128 threads). A dimension whose digits cover more than its extent is padded: the places
// past the end hold nothing (a guard tests the index).
//
// Examples (R x C, vectors of V, TR x TC threads; CS = C / (V TC)):
//   matrix:    dim 0 = [rs: slot, stride CS V][tr: thread, stride TC]
//              dim 1 = [cs: slot, stride V][tc: thread, stride 1][v: slot, stride 1]
//   its rows:  dim 0 = [rs: slot, stride 1][tr: thread, stride TC], replica [tc: thread, stride 1]
//   mma.sync m16n8k16 accumulator on WM x WN warps of AM x AN atoms (its atom's table,
//   from the target: [vh: slot 2][q: thread 4] x [r: thread 1][vl: slot 1]):
//              dim 0 = [wm: thread 32][am: slot 4 AN][vh: slot 2][q: thread 4]     (8 rows q)
//              dim 1 = [wn: thread 32 WM][an: slot 4][r: thread 1][vl: slot 1]   (4 lanes r)
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tile::ir {

struct ExprNode;
struct BufferNode;
using Expr = std::shared_ptr<const ExprNode>;

/// One digit of a fragment layout.
struct Digit {
  static constexpr int Replica = -1; // no dimension: threads holding the same elements
  static constexpr int Idle = -2;    // no dimension: threads holding nothing unless it is 0
  int dim = 0;                       // the tile dimension, or Replica / Idle
  std::int64_t extent = 1;
  bool thread = false;     // in the thread index (else in the slot index)
  std::int64_t stride = 1; // in the thread or the slot index
  std::string name;        // a slot digit's loop variable ("rs", "cs", "v", ...)
};

/// One tensor-core instruction's accumulator tile (its atom) as a warp holds it: which lane
/// holds which element of the atom's rows x cols, in which of the atom's registers. It is
/// the instruction's own table, given by the target (ir/Target.h, MmaAtom): digits of
/// dimensions 0 and 1, outer to inner, whose thread digits count lanes and whose slot
/// digits count the atom's registers. The first operand of K columns is laid out as K /
/// cols such atoms side by side (mma.sync m16n8k16: A's 16 x 16 registers are two 16 x 8
/// accumulator atoms).
struct AtomLayout {
  std::int64_t rows = 0, cols = 0;
  int lanes = 0;
  std::vector<Digit> digits;
  /// Registers a lane holds of one atom.
  std::int64_t registers() const;
};

/// The tensor-core layout of a fragment: an operand of the instruction whose atoms are
/// atom_rows x atom_cols, on a warp grid.
struct MmaShape {
  enum Operand { A, C } operand = C;
  std::int64_t rows = 0, cols = 0; // of the fragment
  int warps_m = 1, warps_n = 1;
  std::int64_t atom_rows = 0, atom_cols = 0; // set by mma_fragment from the instruction's atom
  /// > 1: the gemm runs on a warpgroup instruction of this many warps (wgmma: 4), each
  /// group's warps stacked along M; a group's atoms along M (its m64 tiles) lie between the
  /// groups and its warps: rows = [group][atom row][warp][the atom's rows], so that each
  /// instruction's rows are a warp's 16 rows each (warps_m counts warps, warps_n groups'
  /// columns: warps_n groups side by side along N).
  int group_warps = 0;
  bool warpgroup() const { return group_warps > 1; }
  std::int64_t atoms_m() const { return rows / (atom_rows * warps_m); }
  std::int64_t atoms_n() const { return cols / (atom_cols * warps_n); }
  friend bool operator==(const MmaShape &, const MmaShape &) = default;
};

class Fragment {
public:
  std::vector<std::int64_t> shape;
  std::vector<Digit> digits;
  int threads = 0;         // the block's threads
  std::string description; // "matrix(4x256, vec 8, 4x32 threads)", "rows of ..."
  std::optional<MmaShape> mma;

  int rank() const { return int(shape.size()); }
  /// Registers each thread holds (one past the largest slot).
  std::int64_t slots() const;
  /// Threads that hold each element.
  std::int64_t replicas() const;
  bool replicated() const { return replicas() > 1; }
  /// Positions in `digits` of the slot digits, by decreasing stride (outermost loop first).
  std::vector<int> slot_digits() const;
  /// Whether dimension d's digits cover more than its extent.
  bool padded(int d) const;

  // As IR (the one formula) ----------------------------------------------------------------
  /// The value of thread digit `digits[i]` for thread `tid`.
  Expr digit_value(int i, const Expr &tid) const;
  /// Index `d` of the element that thread `tid` holds when each slot digit i takes
  /// `slot_values[i]` (entries of thread digits are ignored).
  Expr index(int d, const Expr &tid, const std::vector<Expr> &slot_values) const;
  /// The slot of the element at those slot digit values.
  Expr slot(const std::vector<Expr> &slot_values) const;
  /// Whether thread `tid` holds anything (its Idle digits are 0); null when all do.
  Expr holds(const Expr &tid) const;
  /// Whether thread `tid` is the first holder of its elements (its Replica digits are 0);
  /// null when the layout is not replicated.
  Expr first_replica(const Expr &tid) const;

  /// Equal as functions (digits, shape, threads), whatever the names and descriptions.
  friend bool operator==(const Fragment &a, const Fragment &b);
};

/// The value of a thread-index digit of `stride` and `extent` on a block of `threads`
/// (`tid % (stride * extent) / stride`, the modulo left out for the top digit), and whether
/// it is 0 (`tid < stride` for the top digit): the one formula of thread digits.
Expr thread_digit(const Expr &tid, std::int64_t stride, std::int64_t extent, int threads);
Expr thread_digit_is_zero(const Expr &tid, std::int64_t stride, std::int64_t extent, int threads);

/// The register layout tile gives an R x C fragment on `threads` threads: the widest vector
/// of up to 8 elements that divides C (narrower while that leaves threads without a vector),
/// then as many threads per row as divide the vectors of a row (at most a warp of `warp`
/// threads when there are several rows, so that a row's threads are lanes of one warp).
Fragment matrix_fragment(std::int64_t rows, std::int64_t cols, int threads, int warp);
/// A rank-1 fragment of n elements laid out as the 1 x n matrix.
Fragment vector_fragment(std::int64_t n, int threads, int warp);
/// The layout of a tensor-core instruction's accumulator (operand C) or first operand (A,
/// the same places with K as columns) over a warp grid, `atom` the instruction's table: the
/// warps' tiles, each of atoms_m x atoms_n atoms; A is replicated over the N warps.
Fragment mma_fragment(MmaShape shape, int threads, const AtomLayout &atom);

/// Dimension `dim` reduced away: its thread digits become replicas (the threads that held
/// different elements along it now hold the same one), its slot digits go.
Fragment drop_dim(const Fragment &f, int dim);
/// The layout of a fragment indexed, in a nest bound by `f`, by the nest's variables
/// `dims` (a subset of f's dimensions, in any order): the others dropped. `origin`, when
/// given, receives for each digit of the result the position of the digit of `f` it is.
Fragment select_dims(const Fragment &f, const std::vector<int> &dims, std::vector<int> *origin = nullptr);

/// "matrix(4x256, vec 8, 4x32 threads)", "rows of ...", "mma(64x64, 2x2 warps of 2x4 m16n8 atoms)".
std::string to_string(const Fragment &f);
/// Every digit, for tests and remarks: "[rs:s4 tr:t32 | cs:s1 tc:t1 v:s1 | rep t1x8]".
std::string digits_string(const Fragment &f);

/// The layouts of a kernel's register fragments (those not listed live in shared memory).
using LayoutMap = std::map<const BufferNode *, Fragment>;

} // namespace tile::ir
