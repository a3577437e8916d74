// What the two passes that pipeline loops share (inject-pipeline with cp.async, warp-
// specialize with bulk copies and a producer warpgroup; not a pass itself): a `pipelined`
// loop's body with its leading constant declarations substituted, the buffers that may be
// multi-buffered, and the rewrite of a buffer's accesses into one stage of its copies.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "ir/IR.h"
#include "ir/Visitor.h"

namespace tile::transforms {

/// Whether `e` loads from any buffer.
bool reads_memory(const ir::Expr &e);
/// Whether every load of `e` reads a read-only tensor (`tensor<const T>`), whose elements no
/// statement of the kernel changes: its value depends on its variables alone. With `views`,
/// also a view of one (made before any pipelined loop, the same in every iteration; but
/// declared where the kernel makes it, which a warp-specialized producer does not run).
bool reads_only_constant_tensors(const ir::Expr &e, bool views = false);

/// The statements of pipelined loop `n`'s body (a Seq; empty if it is not one), with the
/// scalars it declares first and never assigns (`const int k0 = kb * BN;` for the copies'
/// offsets, `const int kb = Index(i);` for a block a list names) replaced by their values,
/// so that the copies after them lead the body. A value must be the same wherever it is
/// used: the variable is never assigned, and its initializer reads no variable the body
/// assigns and no memory but read-only tensors and views of them.
std::vector<ir::Stmt> pipelined_body(const ir::ForNode *n);

/// A pipelined loop's body that is one `if` without `else` after its leading constant
/// declarations (TileLang's block-sparse form: `if (Mask(qb, kb)) { copies; gemms }`): the
/// condition (`guard`) and the statements under it, both with pipelined_body's
/// substitutions (the if's own leading declarations too). `guard` is null where the body
/// is not of that form or the condition reads a variable the body assigns.
struct GuardedBody {
  ir::Expr guard;
  std::uint32_t loc = 0; // the if's

  std::vector<ir::Stmt> stmts;
};
GuardedBody guarded_body(const ir::ForNode *n);

/// Shared buffers that no pipelined loop may multi-buffer: those used outside pipelined
/// loops, and those used by more than one (each loop would stage them on its own).
/// `stages` > 0: every pipelined loop's stage count instead of its own (stages=).
std::set<const ir::BufferNode *> unstageable_buffers(const ir::Stmt &body, int stages = 0);

/// `b` with `stages` copies: B[R, C] becomes B[stages, R, C], its shared layout (`k`'s) too.
ir::Buffer staged_buffer(ir::Kernel &k, const ir::BufferNode *b, int stages);

/// Replaces variables by expressions (Substituter's `vars`) and each staged buffer's
/// accesses, regions included, by those of stage `stage` of its copies.
class StageRewrite : public ir::Substituter {
public:
  std::map<const ir::BufferNode *, ir::Buffer> staged; // B -> B[stages, ...]
  ir::Expr stage;
  /// Staged buffers with a set of stages per consumer group (warp-specialize's paired
  /// blocks): their stage is `group_stage` + `stage`.
  std::set<const ir::BufferNode *> grouped;
  ir::Expr group_stage;

  ir::Expr mutate_Load(const ir::Expr &self, const ir::LoadNode *n) override;
  ir::Stmt mutate_Store(const ir::Stmt &self, const ir::StoreNode *n) override;
  ir::Stmt mutate_Gemm(const ir::Stmt &, const ir::GemmNode *n) override;
  ir::Stmt mutate_Copy(const ir::Stmt &, const ir::CopyNode *n) override;
  ir::Region mutate_region(const ir::Region &r);

private:
  std::vector<ir::Expr> staged_indices(const ir::BufferNode *b, const std::vector<ir::Expr> &indices);
  ir::Expr stage_of(const ir::BufferNode *b) const;
};

} // namespace tile::transforms
