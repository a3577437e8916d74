#include "transforms/PipelineStages.h"

namespace tile::transforms {

using namespace ir;

bool reads_memory(const Expr &e) {
  class Reads : public IRVisitor {
  public:
    bool any = false;
    void visit_Load(const LoadNode *) override { any = true; }
  } reads;
  reads.visit(e);
  return reads.any;
}

bool reads_only_constant_tensors(const Expr &e, bool views) {
  class Reads : public IRVisitor {
  public:
    bool views = false, other = false;
    void visit_Load(const LoadNode *l) override {
      other |= l->buffer->scope != Scope::Global || !l->buffer->read_only || (l->buffer->view_of && !views);
      IRVisitor::visit_Load(l);
    }
  } reads;
  reads.views = views;
  reads.visit(e);
  return !reads.other;
}

namespace {

/// The variables `body` assigns.
std::set<const VarNode *> assigned_in(const Stmt &body) {
  std::set<const VarNode *> assigned;
  for_each_node(body, nullptr, [&](const Stmt &x) {
    if (const VarNode *v = assigned_var(x.get()))
      assigned.insert(v);
  });
  return assigned;
}

/// `stmts` with their leading constant declarations (as pipelined_body says) taken out and
/// substituted, into `values`.
std::vector<Stmt> substitute_leading(std::vector<Stmt> stmts, const std::set<const VarNode *> &assigned,
                                     Substituter &values) {
  size_t lead = 0;
  for (; lead < stmts.size(); ++lead) {
    auto d = stmts[lead]->as<DeclareNode>();
    if (!d || !d->init || assigned.count(d->var.get()) || reads_any(d->init, assigned) ||
        !reads_only_constant_tensors(d->init, /*views=*/true))
      break;
    values.vars[d->var.get()] = values.mutate(d->init);
  }
  stmts.erase(stmts.begin(), stmts.begin() + long(lead));
  if (!values.vars.empty())
    for (auto &x : stmts)
      x = values.mutate(x);
  return stmts;
}

std::vector<Stmt> stmts_of(const Stmt &s) {
  if (auto q = s->as<SeqNode>())
    return q->stmts;
  return {s};
}

} // namespace

std::vector<Stmt> pipelined_body(const ForNode *n) {
  auto q = n->body->as<SeqNode>();
  if (!q)
    return {};
  Substituter values;
  return substitute_leading(q->stmts, assigned_in(n->body), values);
}

GuardedBody guarded_body(const ForNode *n) {
  const std::set<const VarNode *> assigned = assigned_in(n->body);
  Substituter values;
  std::vector<Stmt> stmts = substitute_leading(stmts_of(n->body), assigned, values);
  GuardedBody g;
  auto i = stmts.size() == 1 ? stmts[0]->as<IfNode>() : nullptr;
  if (!i || i->else_case || reads_any(i->cond, assigned))
    return g;
  g.guard = i->cond;
  g.loc = stmts[0]->loc;
  g.stmts = substitute_leading(stmts_of(i->then_case), assigned, values);
  return g;
}

namespace {

/// Shared buffers mentioned outside pipelined loops (they cannot be multi-buffered).
void find_outside_uses(const Stmt &s, std::set<const BufferNode *> &out, int stages) {
  if (!s)
    return;
  if (auto f = s->as<ForNode>(); f && f->for_kind == ForKind::Pipelined && (stages > 0 ? stages : f->stages) >= 2)
    return;
  if (auto q = s->as<SeqNode>()) {
    for (auto &c : q->stmts)
      find_outside_uses(c, out, stages);
    return;
  }
  if (auto f = s->as<ForNode>())
    return find_outside_uses(f->body, out, stages);
  if (auto i = s->as<IfNode>()) {
    find_outside_uses(i->then_case, out, stages);
    find_outside_uses(i->else_case, out, stages);
    return;
  }
  if (s->as<DeclBufferNode>())
    return;
  for_each_node(
      s,
      [&](const Expr &e) {
        if (auto l = e->as<LoadNode>())
          out.insert(l->buffer.get());
      },
      [&](const Stmt &x) {
        if (auto st = x->as<StoreNode>())
          out.insert(st->buffer.get());
        else if (auto g = x->as<GemmNode>()) {
          out.insert(g->a.buffer.get());
          out.insert(g->b.buffer.get());
        } else if (auto c = x->as<CopyNode>()) {
          out.insert(c->src.buffer.get());
          out.insert(c->dst.buffer.get());
        }
      });
}

} // namespace

std::set<const BufferNode *> unstageable_buffers(const Stmt &body, int stages) {
  std::set<const BufferNode *> out;
  find_outside_uses(body, out, stages);
  std::map<const BufferNode *, int> loops;
  for_each_node(body, nullptr, [&](const Stmt &s) {
    auto f = s->as<ForNode>();
    if (!f || f->for_kind != ForKind::Pipelined || (stages > 0 ? stages : f->stages) < 2)
      return;
    std::set<const BufferNode *> used;
    find_outside_uses(f->body, used, stages);
    for (const BufferNode *b : used)
      ++loops[b];
  });
  for (auto &[b, n] : loops)
    if (n > 1)
      out.insert(b);
  return out;
}

Buffer staged_buffer(Kernel &k, const BufferNode *b, int stages) {
  std::vector<std::int64_t> shape = {stages};
  for (int d = 0; d < b->rank(); ++d)
    shape.push_back(b->extent(d));
  Buffer staged = make_buffer(b->name, Scope::Shared, b->dtype, shape);
  staged->loc = b->loc;
  if (auto it = k.shared_layouts.find(b); it != k.shared_layouts.end())
    k.shared_layouts[staged.get()] = it->second;
  return staged;
}

Expr StageRewrite::stage_of(const BufferNode *b) const {
  return group_stage && grouped.count(b) ? add(group_stage, stage) : stage;
}
std::vector<Expr> StageRewrite::staged_indices(const BufferNode *b, const std::vector<Expr> &indices) {
  std::vector<Expr> idx = {stage_of(b)};
  for (auto &i : indices)
    idx.push_back(mutate(i));
  return idx;
}
Expr StageRewrite::mutate_Load(const Expr &self, const LoadNode *n) {
  auto it = staged.find(n->buffer.get());
  return it == staged.end() ? IRMutator::mutate_Load(self, n) : load(it->second, staged_indices(n->buffer.get(), n->indices));
}
Stmt StageRewrite::mutate_Store(const Stmt &self, const StoreNode *n) {
  auto it = staged.find(n->buffer.get());
  return it == staged.end() ? IRMutator::mutate_Store(self, n)
                            : store(it->second, staged_indices(n->buffer.get(), n->indices), mutate(n->value));
}
Region StageRewrite::mutate_region(const Region &r) {
  auto it = staged.find(r.buffer.get());
  if (it == staged.end())
    return mutate(r);
  Region out;
  out.buffer = it->second;
  out.begin = {stage_of(r.buffer.get())};
  out.extent = {1};
  for (auto &b : r.begin)
    out.begin.push_back(mutate(b));
  for (auto e : r.extent)
    out.extent.push_back(e);
  for (int d : r.tile_dims)
    out.tile_dims.push_back(d + 1);
  return out;
}
Stmt StageRewrite::mutate_Gemm(const Stmt &, const GemmNode *n) {
  return n->with(mutate_region(n->a), mutate_region(n->b), mutate_region(n->c));
}
Stmt StageRewrite::mutate_Copy(const Stmt &, const CopyNode *n) {
  return std::make_shared<CopyNode>(mutate_region(n->src), mutate_region(n->dst));
}

} // namespace tile::transforms
