// What the C-family targets (CPU C++, CUDA C++, HIP C++) share when they print lowered tile
// IR as source: identifiers, literals, expressions with minimal parentheses, statements,
// loops, buffer indexing and print. A target derives from CEmitter and supplies what differs:
// how parameters and block indices arrive, where buffers live, gemm, atomics, asserts and
// barriers. Types of the device library are spelled `<lib>::bf16` and so on, so that each
// target's header library defines them as it likes.
#pragma once

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "analysis/Bounds.h"
#include "ir/IR.h"

namespace tile::targets {

/// The name of a kernel's entry in an image: `prefix` + the kernel's key with every character
/// outside [A-Za-z0-9_] replaced by '_' + "_" + 8 hex digits of a hash of the key (keys that
/// differ only in replaced characters stay apart).
std::string entry_symbol(const std::string &prefix, const std::string &key);

/// C++ operator precedence, higher binds tighter.
enum Prec { P_None = 0, P_Ternary = 2, P_LOr, P_LAnd, P_BOr, P_BXor, P_BAnd, P_Eq, P_Rel, P_Shift = 11, P_Add, P_Mul, P_Unary = 15, P_Primary };

/// A C++ string literal holding `s` (any bytes: control characters are escaped, and so is
/// '?', which could otherwise start a trigraph where a preprocessor still reads them).
std::string c_string(const std::string &s);

/// `s` made safe for the inside of a one-line `//` comment: bytes outside printable ASCII,
/// '\\' and '?' become \xNN, so that nothing in `s` (a file name, say) can end the comment
/// or splice the next line onto it.
std::string comment_text(const std::string &s);

/// The comment line that heads a kernel's code: its name and where it was written.
std::string kernel_comment(const ir::Kernel &k);

/// Identifiers of generated code: every IR variable and buffer gets one that no other one,
/// no keyword and no name the target reserves has; duplicates get "_1", "_2", ...
class Names {
public:
  explicit Names(const std::set<std::string> &reserved_by_target);
  /// The name of `key` (a variable or buffer), made on first use from `base`.
  std::string of(const void *key, const std::string &base);
  /// A name of its own, made from `base`.
  std::string fresh(const std::string &base);

private:
  std::map<const void *, std::string> names_;
  std::set<std::string> used_;
};

class CEmitter {
public:
  /// `lib`: the namespace of the target's device library ("tile_cpu", "tile_cuda").
  CEmitter(const ir::Kernel &k, std::ostringstream &os, std::string lib, const std::set<std::string> &reserved);
  virtual ~CEmitter() = default;

protected:
  const ir::Kernel &k_;
  std::ostringstream &os_;
  const std::string lib_;
  int indent_ = 1;
  Names names_;
  /// (parameter, dimension) -> the local holding that size / stride, for those declared.
  std::map<std::pair<int, int>, std::string> sizes_, strides_;
  /// The sizes and strides the body reads (filled by collect_tensor_dims).
  std::set<std::pair<int, int>> used_sizes_, used_strides_;
  /// The ranges of the variables of the loops being emitted (those with constant bounds),
  /// and of the thread index: what shows an index's per-thread part fits in 32 bits.
  analysis::VarRanges ranges_;
  /// Whether tensor indices are computed in 64 bits (ir::index64) or, as the CUDA target
  /// does, in their own type (see transforms::IndexWidth).
  bool wide_indices_ = true;

  void line(const std::string &s);
  void block(const ir::Stmt &s);
  std::string var(const ir::Var &v) { return names_.of(v.get(), v->name); }
  std::string var(const ir::VarNode *v) { return names_.of(v, v->name); }
  std::string buffer(const ir::Buffer &b) { return names_.of(b.get(), b->name); }
  std::string type_name(ir::ScalarType t) const;
  std::string int_literal(std::int64_t v, ir::ScalarType t) const;

  void collect_tensor_dims();
  /// Declares the pointer of tensor parameter `index` (`buffer`), read from `data`, and the
  /// sizes and strides the body reads, from `arg` + ".sizes[d]" / ".strides[d]".
  /// `restrict_kw`: the target's spelling of restrict.
  void unpack_tensor(int index, const ir::Buffer &b, const std::string &arg, const std::string &restrict_kw);
  /// A C++ expression for `e`, parenthesized if its precedence is below `min_prec`.
  std::string expr(const ir::Expr &e, int min_prec = 0);
  /// The offset of element `idx` of `b`: stride-based (int64) for tensors, row-major else.
  ir::Expr offset(const ir::Buffer &b, const std::vector<ir::Expr> &idx);
  /// Index `e` of a tensor as int64 (ir::index64), in 32 bits where every value of a part
  /// of it fits (from ranges_).
  ir::Expr index64(const ir::Expr &e) const;
  std::string element(const ir::Buffer &b, const std::vector<ir::Expr> &idx);
  /// The address of element `offset` of `b`'s storage (`b + offset`).
  std::string address(const ir::Buffer &b, const ir::Expr &offset);
  /// A tile buffer's shared layout (ir/SharedLayout.h; null: dense row-major).
  const ir::SharedLayout *shared_layout(const ir::Buffer &b) const;
  /// Elements a tile buffer occupies, padding included.
  std::int64_t storage_elements(const ir::Buffer &b) const;
  void stmt(const ir::Stmt &s);

  // What targets supply or may change.
  /// A conversion of `value` to `to`, at unary precedence.
  virtual std::string cast(ir::ScalarType to, const ir::Expr &value);
  /// A line before a loop (`#pragma ...`), or empty. `stable`: begin, extent and step are
  /// not assigned in the body.
  virtual std::string loop_pragma(const ir::ForNode *n, bool stable);
  virtual void emit_for(const ir::ForNode *n);
  virtual void emit_decl_buffer(const ir::DeclBufferNode *n) = 0;
  /// A view of a tensor (BufferNode::view_of): its pointer.
  void emit_view(const ir::Buffer &b);
  virtual void emit_gemm(const ir::GemmNode *n) = 0;
  virtual void emit_atomic(const ir::AtomicNode *n);
  virtual void emit_assert(const ir::AssertNode *n) = 0;
  /// An Intrinsic::BoundsCheck call: the target reports a failure to its runtime.
  virtual std::string bounds_check(const ir::CallNode *n) = 0;
  virtual void emit_barrier(const ir::BarrierNode *n) = 0;
  /// Asynchronous copies (inject-pipeline): by default the body runs synchronously and the
  /// commits and waits are nothing.
  virtual void emit_async(const ir::AsyncNode *n) { stmt(n->body); }
  virtual void emit_async_sync(const ir::StmtNode *) {}
  /// printf's format and arguments that start every print line (the block's indices).
  virtual std::pair<std::string, std::string> print_prefix() = 0;
  virtual void emit_print(const ir::PrintNode *n);
  virtual void emit_store(const ir::StoreNode *n);
  /// Vector accesses (lower-vector-access, on targets that run it): by default an #error.
  virtual std::string vector_flag(const ir::VectorFlagNode *n);
  virtual void emit_vector_move(const ir::VectorMoveNode *n);
  virtual void emit_matrix_load(const ir::MatrixLoadNode *n);
  virtual void emit_mma(const ir::MmaNode *n);
  virtual void emit_wgmma(const ir::WgmmaNode *n);
  virtual void emit_warpgroup_sync(const ir::WarpgroupSyncNode *n);
  virtual void emit_proxy_fence();
  virtual void emit_mbarrier(const ir::MbarrierNode *n);
  virtual void emit_bulk_copy(const ir::BulkCopyNode *n);
  virtual void emit_bulk_store(const ir::BulkStoreNode *n);
  virtual void emit_bulk_store_sync(const ir::BulkStoreSyncNode *n);
  virtual void emit_register_budget(const ir::RegisterBudgetNode *n);
  virtual void emit_tile_fetch(const ir::TileFetchNode *n);
  virtual void emit_iteration_slot(const ir::IterationSlotNode *n);
  virtual void emit_named_barrier(const ir::NamedBarrierNode *n);
  /// An #error line for IR the target cannot take (a pass is missing from its pipeline).
  void unlowered(const std::string &what);
};

} // namespace tile::targets
