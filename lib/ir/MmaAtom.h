// MMA atoms: the matrix instructions a target has, each described by what the passes need
// to choose it and lower a gemm to it (CuTe's idea of an MMA atom). The Target lists its
// atoms in the order it prefers them; infer-layout records the one it chose on each gemm
// (GemmNode::atom), lower-mma lowers by the atom's facts, and the codegens print its
// spelling. A new instruction is a new entry here, not a new code path: no pass names one.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/Fragment.h"
#include "ir/Type.h"

namespace tile::ir {

/// How an atom's operands in shared memory reach the instruction.
enum class OperandRead {
  /// A warp loads them into registers as matrices of 8 rows of 16 bytes, four at a time,
  /// each lane receiving 4 bytes of a row (ldmatrix); it can transpose 16-bit elements on
  /// the way. Registers in the order of the m16 x n8 atoms' PTX tables.
  MatrixLoad,
  /// Each lane loads its own elements of the operands into registers (MFMA).
  LaneLoad,
  /// The instruction reads the tiles itself, through matrix descriptors, in one of the
  /// hardware's swizzles (wgmma).
  Descriptor,
};

struct MmaAtom {
  /// The family's name as remarks give it ("mma.sync", "wgmma", "MFMA"): "not wgmma: ...".
  std::string family;
  /// Warps that issue one instruction together (4: a warpgroup).
  int warps = 1;
  /// Rows of one instruction; its columns: a fixed n, or any multiple of n_step up to max_n
  /// (n = 0).
  int m = 0, n = 0, n_step = 0, max_n = 0;
  /// K of one instruction in bytes of an operand's row (32: k16 of 16-bit elements, k32 of
  /// 8-bit ones).
  int k_bytes = 0;
  /// The operand types (a, b) it takes, with f32 accumulators.
  std::vector<std::pair<ScalarType, ScalarType>> operand_types;
  /// The warp's m x n accumulator table (rows x cols of `accumulator`: for warpgroup atoms
  /// each warp's 16 rows of a column atom), from which every accumulator layout is built.
  AtomLayout accumulator;
  OperandRead read = OperandRead::MatrixLoad;
  /// MatrixLoad and LaneLoad: operand rows are read in units of this many bytes (operand rows
  /// a whole number of them; padded by one where rows an even number apart share banks).
  int operand_row_bytes = 0;
  /// Whether a may be a fragment in registers: laid out as accumulator atoms side by side
  /// (mma.sync m16n8k16's 16 x 16 A is two 16 x 8 accumulator atoms), so that an
  /// accumulator converted in registers can be the next gemm's a.
  bool a_from_accumulator = false;
  /// Whether operands of `bytes`-byte elements may have M or N as their contiguous
  /// dimension (a transposed, b not transposed): ldmatrix and wgmma transpose 16-bit
  /// elements only.
  int transposable_bytes = 0;
  /// Descriptor: the swizzles (bytes, widest first) its descriptors take, each with the
  /// descriptor's code for it; a swizzled tile starts on a multiple of 8 of its spans.
  std::vector<std::pair<int, int>> swizzles;
  /// Whether it runs asynchronously (wgmma: issued, then waited for).
  bool asynchronous = false;
  /// How remarks call the units that run it and how they read shared operands.
  std::string units = "tensor cores", operand_load;
  /// The instruction's spelling, with {n} {k} {a} {b} standing for its N, its K in elements
  /// and its operand types' names (`type_names`, else the IR's), and {types} for the IR's
  /// names of a, and of b where it differs ("bf16", "f8e4m3.f8e5m2"); `remark` is its name
  /// in remarks and printed IR, in the same terms.
  std::string spelling, remark;
  std::vector<std::pair<ScalarType, std::string>> type_names;

  /// K of one instruction for operands of type `t`.
  int k_for(ScalarType t) const { return k_bytes / bytes(t); }
  /// Whether it takes operands of types a and b.
  bool takes(ScalarType a, ScalarType b) const;
  /// The instruction for operands of types a and b and N columns, as the codegen prints it.
  std::string instruction(ScalarType a, ScalarType b, int cols) const;
  /// Its name in remarks: "mma.sync.m16n8k16.bf16", "wgmma.m64n128k16.bf16".
  std::string remark_name(ScalarType a, ScalarType b, int cols) const;
  /// Its name in the printed IR for operands of types a and b: the remark's, N left as "N"
  /// where the instruction's is chosen by the gemm ("wgmma.m64nNk16.bf16").
  std::string ir_name(ScalarType a, ScalarType b) const;
  /// Descriptor: the descriptor's code of a `swizzle`-byte swizzle (0: none it takes).
  int swizzle_code(int swizzle) const;
  /// Threads that issue one instruction together.
  int threads(int warp_size) const { return warps * warp_size; }
};

using MmaAtomRef = std::shared_ptr<const MmaAtom>;

} // namespace tile::ir
