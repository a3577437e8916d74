#include "ir/Visitor.h"

namespace tile::ir {

// ---------------------------------------------------------------------------------------
// IRVisitor
// ---------------------------------------------------------------------------------------

void IRVisitor::visit(const Expr &e) {
  if (!e)
    return;
  switch (e->kind) {
#define X(N)                                                                                       \
  case ExprKind::N:                                                                                \
    return visit_##N(static_cast<const N##Node *>(e.get()));
    TILE_IR_EXPR_NODES(X)
#undef X
  }
}

void IRVisitor::visit(const Stmt &s) {
  if (!s)
    return;
  switch (s->kind) {
#define X(N)                                                                                       \
  case StmtKind::N:                                                                                \
    return visit_##N(static_cast<const N##Node *>(s.get()));
    TILE_IR_STMT_NODES(X)
#undef X
  }
}

void IRVisitor::visit(const Region &r) {
  for (auto &b : r.begin)
    visit(b);
}

void IRVisitor::visit_IntImm(const IntImmNode *) {}
void IRVisitor::visit_FloatImm(const FloatImmNode *) {}
void IRVisitor::visit_StringImm(const StringImmNode *) {}
void IRVisitor::visit_Var(const VarNode *) {}
void IRVisitor::visit_Cast(const CastNode *n) { visit(n->value); }
void IRVisitor::visit_Binary(const BinaryNode *n) {
  visit(n->a);
  visit(n->b);
}
void IRVisitor::visit_Unary(const UnaryNode *n) { visit(n->a); }
void IRVisitor::visit_Select(const SelectNode *n) {
  visit(n->cond);
  visit(n->t);
  visit(n->f);
}
void IRVisitor::visit_Call(const CallNode *n) {
  for (auto &a : n->args)
    visit(a);
}
void IRVisitor::visit_Load(const LoadNode *n) {
  for (auto &i : n->indices)
    visit(i);
}
void IRVisitor::visit_TensorDim(const TensorDimNode *) {}
void IRVisitor::visit_VectorFlag(const VectorFlagNode *) {}
void IRVisitor::visit_Aligned(const AlignedNode *n) { visit(n->offset); }

void IRVisitor::visit_Seq(const SeqNode *n) {
  for (auto &s : n->stmts)
    visit(s);
}
void IRVisitor::visit_Declare(const DeclareNode *n) { visit(n->init); }
void IRVisitor::visit_Assign(const AssignNode *n) { visit(n->value); }
void IRVisitor::visit_Store(const StoreNode *n) {
  for (auto &i : n->indices)
    visit(i);
  visit(n->value);
}
void IRVisitor::visit_For(const ForNode *n) {
  visit(n->begin);
  visit(n->extent);
  visit(n->step);
  visit(n->body);
}
void IRVisitor::visit_If(const IfNode *n) {
  visit(n->cond);
  visit(n->then_case);
  visit(n->else_case);
}
void IRVisitor::visit_DeclBuffer(const DeclBufferNode *) {}
void IRVisitor::visit_Copy(const CopyNode *n) {
  visit(n->src);
  visit(n->dst);
}
void IRVisitor::visit_Gemm(const GemmNode *n) {
  visit(n->a);
  visit(n->b);
  visit(n->c);
}
void IRVisitor::visit_Fill(const FillNode *n) {
  visit(n->dst);
  visit(n->value);
}
void IRVisitor::visit_Reduce(const ReduceNode *) {}
void IRVisitor::visit_Cumsum(const CumsumNode *) {}
void IRVisitor::visit_Atomic(const AtomicNode *n) {
  visit(n->dst);
  visit(n->value);
  if (n->src)
    visit(*n->src);
  if (n->compare)
    visit(n->compare);
}
void IRVisitor::visit_Print(const PrintNode *n) {
  for (auto &a : n->args)
    visit(a);
}
void IRVisitor::visit_Assert(const AssertNode *n) { visit(n->cond); }
void IRVisitor::visit_AnnotateLayout(const AnnotateLayoutNode *) {}
void IRVisitor::visit_Barrier(const BarrierNode *) {}
void IRVisitor::visit_Async(const AsyncNode *n) { visit(n->body); }
void IRVisitor::visit_AsyncCommit(const AsyncCommitNode *) {}
void IRVisitor::visit_AsyncWait(const AsyncWaitNode *) {}
void IRVisitor::visit_VectorMove(const VectorMoveNode *n) {
  visit(n->dst_offset);
  visit(n->src_offset);
}
void IRVisitor::visit_MatrixLoad(const MatrixLoadNode *n) {
  for (auto &r : n->dst_regs)
    visit(r);
  visit(n->src_offset);
}
void IRVisitor::visit_Wgmma(const WgmmaNode *n) {
  visit(n->a.offset);
  visit(n->b.offset);
  for (auto &r : n->a_regs)
    visit(r);
  for (auto &r : n->c_regs)
    visit(r);
  visit(n->accumulate);
}
void IRVisitor::visit_WarpgroupSync(const WarpgroupSyncNode *) {}
void IRVisitor::visit_ProxyFence(const ProxyFenceNode *) {}
void IRVisitor::visit_Mbarrier(const MbarrierNode *n) {
  visit(n->index);
  if (n->value)
    visit(n->value);
}
void IRVisitor::visit_BulkCopy(const BulkCopyNode *n) {
  for (auto &c : n->coords)
    visit(c);
  visit(n->dst_offset);
  visit(n->barrier_index);
  if (n->multicast)
    visit(n->multicast);
}
void IRVisitor::visit_BulkStore(const BulkStoreNode *n) {
  for (auto &c : n->coords)
    visit(c);
  visit(n->src_offset);
}
void IRVisitor::visit_BulkStoreSync(const BulkStoreSyncNode *) {}
void IRVisitor::visit_RegisterBudget(const RegisterBudgetNode *) {}
void IRVisitor::visit_While(const WhileNode *n) {
  visit(n->cond);
  visit(n->body);
}
void IRVisitor::visit_TileFetch(const TileFetchNode *) {}
void IRVisitor::visit_IterationSlot(const IterationSlotNode *n) {
  visit(n->index);
  if (n->value)
    visit(n->value);
}
void IRVisitor::visit_NamedBarrier(const NamedBarrierNode *n) { visit(n->id); }
void IRVisitor::visit_Mma(const MmaNode *n) {
  for (auto *regs : {&n->a_regs, &n->b_regs, &n->c_regs})
    for (auto &r : *regs)
      visit(r);
}

// ---------------------------------------------------------------------------------------
// IRMutator
// ---------------------------------------------------------------------------------------

Expr IRMutator::mutate(const Expr &e) {
  if (!e)
    return e;
  switch (e->kind) {
#define X(N)                                                                                       \
  case ExprKind::N:                                                                                \
    return mutate_##N(e, static_cast<const N##Node *>(e.get()));
    TILE_IR_EXPR_NODES(X)
#undef X
  }
  return e;
}

Stmt IRMutator::mutate(const Stmt &s) {
  if (!s)
    return s;
  Stmt r = s;
  switch (s->kind) {
#define X(N)                                                                                       \
  case StmtKind::N:                                                                                \
    r = mutate_##N(s, static_cast<const N##Node *>(s.get()));                                      \
    break;
    TILE_IR_STMT_NODES(X)
#undef X
  }
  if (r && r != s && !r->loc)
    r->loc = s->loc;
  return r;
}

std::vector<Expr> IRMutator::mutate(const std::vector<Expr> &v, bool &changed) {
  std::vector<Expr> out;
  out.reserve(v.size());
  for (auto &e : v) {
    out.push_back(mutate(e));
    changed |= out.back() != e;
  }
  return out;
}

Region IRMutator::mutate(const Region &r) {
  bool changed = false;
  auto begin = mutate(r.begin, changed);
  if (!changed)
    return r;
  Region out = r;
  out.begin = std::move(begin);
  return out;
}

static bool same(const Region &a, const Region &b) { return a.begin == b.begin && a.buffer == b.buffer; }

Expr IRMutator::mutate_IntImm(const Expr &self, const IntImmNode *) { return self; }
Expr IRMutator::mutate_FloatImm(const Expr &self, const FloatImmNode *) { return self; }
Expr IRMutator::mutate_StringImm(const Expr &self, const StringImmNode *) { return self; }
Expr IRMutator::mutate_Var(const Expr &self, const VarNode *) { return self; }

Expr Substituter::mutate_Var(const Expr &self, const VarNode *n) {
  auto it = vars.find(n);
  return it == vars.end() ? self : it->second;
}
Expr IRMutator::mutate_TensorDim(const Expr &self, const TensorDimNode *) { return self; }
Expr IRMutator::mutate_VectorFlag(const Expr &self, const VectorFlagNode *) { return self; }
Expr IRMutator::mutate_Aligned(const Expr &self, const AlignedNode *n) {
  Expr o = mutate(n->offset);
  return o == n->offset ? self : std::make_shared<AlignedNode>(n->buffer, o, n->bytes);
}
Expr IRMutator::mutate_Cast(const Expr &self, const CastNode *n) {
  auto v = mutate(n->value);
  return v == n->value ? self : cast(n->type, v);
}
Expr IRMutator::mutate_Binary(const Expr &self, const BinaryNode *n) {
  auto a = mutate(n->a), b = mutate(n->b);
  return a == n->a && b == n->b ? self : binary(n->op, a, b);
}
Expr IRMutator::mutate_Unary(const Expr &self, const UnaryNode *n) {
  auto a = mutate(n->a);
  return a == n->a ? self : unary(n->op, a);
}
Expr IRMutator::mutate_Select(const Expr &self, const SelectNode *n) {
  auto c = mutate(n->cond), t = mutate(n->t), f = mutate(n->f);
  return c == n->cond && t == n->t && f == n->f ? self : select(c, t, f);
}
Expr IRMutator::mutate_Call(const Expr &self, const CallNode *n) {
  bool changed = false;
  auto args = mutate(n->args, changed);
  return changed ? std::make_shared<CallNode>(n->type, n->fn, std::move(args)) : self;
}
Expr IRMutator::mutate_Load(const Expr &self, const LoadNode *n) {
  bool changed = false;
  auto idx = mutate(n->indices, changed);
  return changed ? load(n->buffer, std::move(idx)) : self;
}

Stmt IRMutator::mutate_Seq(const Stmt &self, const SeqNode *n) {
  std::vector<Stmt> out;
  bool changed = false;
  for (auto &s : n->stmts) {
    out.push_back(mutate(s));
    changed |= out.back() != s;
  }
  return changed ? seq(std::move(out)) : self;
}
Stmt IRMutator::mutate_Declare(const Stmt &self, const DeclareNode *n) {
  auto i = mutate(n->init);
  return i == n->init ? self : declare(n->var, i);
}
Stmt IRMutator::mutate_Assign(const Stmt &self, const AssignNode *n) {
  auto v = mutate(n->value);
  return v == n->value ? self : assign(n->var, v);
}
Stmt IRMutator::mutate_Store(const Stmt &self, const StoreNode *n) {
  bool changed = false;
  auto idx = mutate(n->indices, changed);
  auto v = mutate(n->value);
  return !changed && v == n->value ? self : store(n->buffer, std::move(idx), v);
}
Stmt IRMutator::mutate_For(const Stmt &self, const ForNode *n) {
  auto b = mutate(n->begin), e = mutate(n->extent), st = mutate(n->step);
  auto body = mutate(n->body);
  if (b == n->begin && e == n->extent && st == n->step && body == n->body)
    return self;
  return for_loop(n->var, b, e, n->for_kind, body, st, n->stages);
}
Stmt IRMutator::mutate_If(const Stmt &self, const IfNode *n) {
  auto c = mutate(n->cond);
  auto t = mutate(n->then_case), e = mutate(n->else_case);
  return c == n->cond && t == n->then_case && e == n->else_case ? self : if_then_else(c, t, e, n->rare_else);
}
Stmt IRMutator::mutate_DeclBuffer(const Stmt &self, const DeclBufferNode *) { return self; }
Stmt IRMutator::mutate_Copy(const Stmt &self, const CopyNode *n) {
  auto s = mutate(n->src), d = mutate(n->dst);
  return same(s, n->src) && same(d, n->dst) ? self : std::make_shared<CopyNode>(s, d);
}
Stmt IRMutator::mutate_Gemm(const Stmt &self, const GemmNode *n) {
  auto a = mutate(n->a), b = mutate(n->b), c = mutate(n->c);
  if (same(a, n->a) && same(b, n->b) && same(c, n->c))
    return self;
  return n->with(a, b, c);
}
Stmt IRMutator::mutate_Fill(const Stmt &self, const FillNode *n) {
  auto d = mutate(n->dst);
  auto v = mutate(n->value);
  return same(d, n->dst) && v == n->value ? self : std::make_shared<FillNode>(d, v);
}
Stmt IRMutator::mutate_Reduce(const Stmt &self, const ReduceNode *) { return self; }
Stmt IRMutator::mutate_Cumsum(const Stmt &self, const CumsumNode *) { return self; }
Stmt IRMutator::mutate_Atomic(const Stmt &self, const AtomicNode *n) {
  auto d = mutate(n->dst);
  auto v = mutate(n->value);
  std::optional<Region> s;
  if (n->src)
    s = mutate(*n->src);
  auto c = n->compare ? mutate(n->compare) : nullptr;
  if (same(d, n->dst) && v == n->value && (!s || same(*s, *n->src)) && c == n->compare)
    return self;
  return std::make_shared<AtomicNode>(n->atomic_kind, d, v, s, c, n->result);
}
Stmt IRMutator::mutate_Print(const Stmt &self, const PrintNode *n) {
  bool changed = false;
  auto args = mutate(n->args, changed);
  return changed ? std::make_shared<PrintNode>(std::move(args)) : self;
}
Stmt IRMutator::mutate_Assert(const Stmt &self, const AssertNode *n) {
  auto c = mutate(n->cond);
  return c == n->cond ? self : std::make_shared<AssertNode>(c, n->message);
}
Stmt IRMutator::mutate_AnnotateLayout(const Stmt &self, const AnnotateLayoutNode *) { return self; }
Stmt IRMutator::mutate_Barrier(const Stmt &self, const BarrierNode *) { return self; }
Stmt IRMutator::mutate_Async(const Stmt &self, const AsyncNode *n) {
  Stmt b = mutate(n->body);
  return b == n->body ? self : std::make_shared<AsyncNode>(b, n->ahead, n->stages);
}
Stmt IRMutator::mutate_AsyncCommit(const Stmt &self, const AsyncCommitNode *) { return self; }
Stmt IRMutator::mutate_AsyncWait(const Stmt &self, const AsyncWaitNode *) { return self; }
Stmt IRMutator::mutate_VectorMove(const Stmt &self, const VectorMoveNode *n) {
  Expr d = mutate(n->dst_offset), s = mutate(n->src_offset);
  if (d == n->dst_offset && s == n->src_offset)
    return self;
  return std::make_shared<VectorMoveNode>(n->dst, d, n->src, s, n->bytes, n->chunk, n->async);
}
Stmt IRMutator::mutate_MatrixLoad(const Stmt &self, const MatrixLoadNode *n) {
  bool changed = false;
  auto regs = mutate(n->dst_regs, changed);
  Expr off = mutate(n->src_offset);
  if (!changed && off == n->src_offset)
    return self;
  return std::make_shared<MatrixLoadNode>(n->dst, std::move(regs), n->src, off, n->transpose);
}
Stmt IRMutator::mutate_Wgmma(const Stmt &self, const WgmmaNode *n) {
  bool changed = false;
  auto regs = mutate(n->c_regs, changed);
  auto a_regs = mutate(n->a_regs, changed);
  DescriptorOperand a = n->a, b = n->b;
  a.offset = mutate(n->a.offset);
  b.offset = mutate(n->b.offset);
  Expr acc = mutate(n->accumulate);
  if (!changed && a.offset == n->a.offset && b.offset == n->b.offset && acc == n->accumulate)
    return self;
  auto m = std::make_shared<WgmmaNode>(*n); // (every other field kept)
  m->c_regs = std::move(regs);
  m->a_regs = std::move(a_regs);
  m->a = a;
  m->b = b;
  m->accumulate = acc;
  return m;
}
Stmt IRMutator::mutate_WarpgroupSync(const Stmt &self, const WarpgroupSyncNode *) { return self; }
Stmt IRMutator::mutate_ProxyFence(const Stmt &self, const ProxyFenceNode *) { return self; }
Stmt IRMutator::mutate_Mbarrier(const Stmt &self, const MbarrierNode *n) {
  Expr i = mutate(n->index), v = n->value ? mutate(n->value) : nullptr;
  if (i == n->index && v == n->value)
    return self;
  return std::make_shared<MbarrierNode>(n->op, n->barriers, i, v);
}
Stmt IRMutator::mutate_BulkCopy(const Stmt &self, const BulkCopyNode *n) {
  bool changed = false;
  auto coords = mutate(n->coords, changed);
  Expr d = mutate(n->dst_offset), b = mutate(n->barrier_index), m = n->multicast ? mutate(n->multicast) : nullptr;
  if (!changed && d == n->dst_offset && b == n->barrier_index && m == n->multicast)
    return self;
  return std::make_shared<BulkCopyNode>(n->map, std::move(coords), n->dst, d, n->barriers, b, m);
}
Stmt IRMutator::mutate_BulkStore(const Stmt &self, const BulkStoreNode *n) {
  bool changed = false;
  auto coords = mutate(n->coords, changed);
  Expr o = mutate(n->src_offset);
  if (!changed && o == n->src_offset)
    return self;
  auto m = std::make_shared<BulkStoreNode>(n->map, std::move(coords), n->src, o);
  m->loc = n->loc;
  return m;
}
Stmt IRMutator::mutate_BulkStoreSync(const Stmt &self, const BulkStoreSyncNode *) { return self; }
Stmt IRMutator::mutate_RegisterBudget(const Stmt &self, const RegisterBudgetNode *) { return self; }
Stmt IRMutator::mutate_While(const Stmt &self, const WhileNode *n) {
  auto c = mutate(n->cond);
  auto body = mutate(n->body);
  return c == n->cond && body == n->body ? self : while_loop(c, body);
}
Stmt IRMutator::mutate_TileFetch(const Stmt &self, const TileFetchNode *) { return self; }
Stmt IRMutator::mutate_IterationSlot(const Stmt &self, const IterationSlotNode *n) {
  Expr i = mutate(n->index), v = n->value ? mutate(n->value) : nullptr;
  if (i == n->index && v == n->value)
    return self;
  auto m = std::make_shared<IterationSlotNode>(n->op, n->slots, i, v, n->var);
  m->loc = n->loc;
  return m;
}
Stmt IRMutator::mutate_NamedBarrier(const Stmt &self, const NamedBarrierNode *n) {
  auto i = mutate(n->id);
  return i == n->id ? self : std::make_shared<NamedBarrierNode>(i, n->threads, n->arrive);
}
Stmt IRMutator::mutate_Mma(const Stmt &self, const MmaNode *n) {
  bool changed = false;
  auto a = mutate(n->a_regs, changed), b = mutate(n->b_regs, changed), c = mutate(n->c_regs, changed);
  if (!changed)
    return self;
  auto m = std::make_shared<MmaNode>(*n); // (every other field kept)
  m->a_regs = std::move(a);
  m->b_regs = std::move(b);
  m->c_regs = std::move(c);
  return m;
}

// ---------------------------------------------------------------------------------------

const VarNode *assigned_var(const StmtNode *s) {
  if (auto a = s->as<AssignNode>())
    return a->var.get();
  if (auto f = s->as<TileFetchNode>())
    return f->tile.get();
  if (auto g = s->as<IterationSlotNode>(); g && g->op == IterationSlotOp::Get)
    return g->var.get();
  return nullptr;
}

bool reads_any(const Expr &e, const std::set<const VarNode *> &vars) {
  class Finder : public IRVisitor {
  public:
    const std::set<const VarNode *> &vars;
    bool found = false;
    explicit Finder(const std::set<const VarNode *> &v) : vars(v) {}
    void visit_Var(const VarNode *n) override { found |= vars.count(n) > 0; }
  } finder(vars);
  finder.visit(e);
  return finder.found;
}

void for_each_node(const Stmt &s, const std::function<void(const Expr &)> &on_expr,
                   const std::function<void(const Stmt &)> &on_stmt) {
  class Walker : public IRVisitor {
  public:
    const std::function<void(const Expr &)> &on_expr;
    const std::function<void(const Stmt &)> &on_stmt;
    Walker(const std::function<void(const Expr &)> &e, const std::function<void(const Stmt &)> &st)
        : on_expr(e), on_stmt(st) {}
    void visit(const Expr &e) override {
      if (e && on_expr)
        on_expr(e);
      IRVisitor::visit(e);
    }
    void visit(const Stmt &st) override {
      if (st && on_stmt)
        on_stmt(st);
      IRVisitor::visit(st);
    }
  };
  Walker w(on_expr, on_stmt);
  w.visit(s);
}

} // namespace tile::ir
