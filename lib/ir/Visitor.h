// IRVisitor walks an IR tree read-only; IRMutator rebuilds it, returning the same node
// wherever nothing below it changed. Both dispatch on the node kind lists of IR.h.
#pragma once

#include <functional>
#include <set>
#include <map>

#include "ir/IR.h"

namespace tile::ir {

class IRVisitor {
public:
  virtual ~IRVisitor() = default;
  /// Virtual so that a visitor can see every child before its dispatch.
  virtual void visit(const Expr &e);
  virtual void visit(const Stmt &s);
  void visit(const Region &r);

protected:
#define X(N) virtual void visit_##N(const N##Node *n);
  TILE_IR_EXPR_NODES(X)
  TILE_IR_STMT_NODES(X)
#undef X
};

class IRMutator {
public:
  virtual ~IRMutator() = default;
  Expr mutate(const Expr &e);
  /// Virtual so that a mutator can see every statement before its dispatch.
  virtual Stmt mutate(const Stmt &s);
  Region mutate(const Region &r);

protected:
  /// Each returns `self` unless a child changed.
#define X(N) virtual Expr mutate_##N(const Expr &self, const N##Node *n);
  TILE_IR_EXPR_NODES(X)
#undef X
#define X(N) virtual Stmt mutate_##N(const Stmt &self, const N##Node *n);
  TILE_IR_STMT_NODES(X)
#undef X
  std::vector<Expr> mutate(const std::vector<Expr> &v, bool &changed);
};

/// Replaces the variables in `vars` by their expressions (and leaves the rest).
class Substituter : public IRMutator {
public:
  std::map<const VarNode *, Expr> vars;

protected:
  Expr mutate_Var(const Expr &self, const VarNode *n) override;
};

/// The variable statement `s` itself sets, other than by declaring it: an assignment's, a
/// persistent grid's tile fetch's, an iteration slot's read; null for every other statement.
const VarNode *assigned_var(const StmtNode *s);

/// Whether `e` reads any of `vars`.
bool reads_any(const Expr &e, const std::set<const VarNode *> &vars);

/// Calls `f` on every expression and statement node, parents before children.
void for_each_node(const Stmt &s, const std::function<void(const Expr &)> &on_expr,
                   const std::function<void(const Stmt &)> &on_stmt);

} // namespace tile::ir
