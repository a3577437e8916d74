#include "transforms/InjectPipeline.h"

#include <map>
#include <set>

#include "ir/Visitor.h"

namespace tile::transforms {

using namespace ir;

namespace {

/// Whether `e` loads from any buffer.
bool reads_memory(const Expr &e) {
  class Reads : public IRVisitor {
  public:
    bool any = false;
    void visit_Load(const LoadNode *) override { any = true; }
  } reads;
  reads.visit(e);
  return reads.any;
}

/// The shared buffer a producer fills, or null when `s` is not a producer: a Threads loop
/// whose stores all go to one shared buffer and whose loads all read global memory.
const BufferNode *produced_buffer(const Stmt &s) {
  // A copy with a fast path for tiles inside the tensor (lower-tile-ops): both branches
  // fill the same buffer, and the condition reads no memory but tensors' sizes.
  if (auto i = s->as<IfNode>()) {
    if (!i->else_case)
      return nullptr;
    const BufferNode *a = produced_buffer(i->then_case), *b = produced_buffer(i->else_case);
    return !reads_memory(i->cond) && a == b ? a : nullptr;
  }
  auto f = s->as<ForNode>();
  if (!f || f->for_kind != ForKind::Threads)
    return nullptr;
  const BufferNode *target = nullptr;
  bool ok = true;
  for_each_node(
      f->body,
      [&](const Expr &e) {
        if (auto l = e->as<LoadNode>(); l && l->buffer->scope != Scope::Global)
          ok = false;
      },
      [&](const Stmt &x) {
        if (auto st = x->as<StoreNode>()) {
          if (st->buffer->scope != Scope::Shared || (target && target != st->buffer.get()))
            ok = false;
          target = st->buffer.get();
        } else if (x->as<AtomicNode>() || x->as<PrintNode>() || x->as<AssertNode>() || x->as<AsyncNode>()) {
          ok = false;
        }
      });
  return ok ? target : nullptr;
}

/// Replaces variables by expressions and a buffer's accesses by a stage of its copies.
class Rewrite : public Substituter {
public:
  std::map<const BufferNode *, Buffer> staged; // B -> B[stages, ...]
  Expr stage;

  /// The indices of an access of a staged buffer: the stage, then its own.
  std::vector<Expr> staged_indices(const std::vector<Expr> &indices) {
    std::vector<Expr> idx = {stage};
    for (auto &i : indices)
      idx.push_back(mutate(i));
    return idx;
  }
  Expr mutate_Load(const Expr &self, const LoadNode *n) override {
    auto it = staged.find(n->buffer.get());
    return it == staged.end() ? IRMutator::mutate_Load(self, n) : load(it->second, staged_indices(n->indices));
  }
  Stmt mutate_Store(const Stmt &self, const StoreNode *n) override {
    auto it = staged.find(n->buffer.get());
    return it == staged.end() ? IRMutator::mutate_Store(self, n)
                              : store(it->second, staged_indices(n->indices), mutate(n->value));
  }
  Region mutate_region(const Region &r) {
    auto it = staged.find(r.buffer.get());
    if (it == staged.end())
      return mutate(r);
    Region out;
    out.buffer = it->second;
    out.begin = {stage};
    out.extent = {1};
    for (auto &b : r.begin)
      out.begin.push_back(mutate(b));
    for (auto e : r.extent)
      out.extent.push_back(e);
    for (int d : r.tile_dims)
      out.tile_dims.push_back(d + 1);
    return out;
  }
  Stmt mutate_Gemm(const Stmt &, const GemmNode *n) override {
    return std::make_shared<GemmNode>(mutate_region(n->a), mutate_region(n->b), mutate_region(n->c), n->transpose_a,
                                      n->transpose_b, n->clear_accum, n->policy);
  }
  Stmt mutate_Copy(const Stmt &, const CopyNode *n) override {
    return std::make_shared<CopyNode>(mutate_region(n->src), mutate_region(n->dst));
  }
};

/// Whether `s` mentions buffer `b` anywhere (accesses, regions, declaration).
bool mentions(const Stmt &s, const BufferNode *b) {
  bool found = false;
  class Finder : public IRVisitor {
  public:
    const BufferNode *b;
    bool &found;
    Finder(const BufferNode *x, bool &f) : b(x), found(f) {}
    void visit_Load(const LoadNode *n) override {
      found |= n->buffer.get() == b;
      IRVisitor::visit_Load(n);
    }
    void visit_Store(const StoreNode *n) override {
      found |= n->buffer.get() == b;
      IRVisitor::visit_Store(n);
    }
    void visit(const Stmt &s) override {
      if (auto g = s->as<GemmNode>())
        found |= g->a.buffer.get() == b || g->b.buffer.get() == b || g->c.buffer.get() == b;
      else if (auto c = s->as<CopyNode>())
        found |= c->src.buffer.get() == b || c->dst.buffer.get() == b;
      IRVisitor::visit(s);
    }
  } finder(b, found);
  finder.visit(s);
  return found;
}

class Injector : public IRMutator {
public:
  explicit Injector(Kernel &k) : k_(k) {}
  std::map<const BufferNode *, Buffer> staged_all; // for the declarations

private:
  Kernel &k_;

  Stmt mutate_For(const Stmt &self, const ForNode *n) override {
    if (n->for_kind != ForKind::Pipelined || n->stages < 2)
      return IRMutator::mutate_For(self, n);
    const int S = n->stages;
    auto q = n->body->as<SeqNode>();
    if (!q)
      return IRMutator::mutate_For(self, n);
    // Scalars the body declares first and never assigns (`const int k0 = kb * BN;` for the
    // copies' offsets) are their values: substituted, so that the copies after them lead the
    // body and each stage computes them for its own iteration.
    // The value must be the same wherever it is used: the variable is never assigned, and
    // its initializer reads no memory and no variable the body assigns.
    std::vector<Stmt> stmts = q->stmts;
    std::set<const VarNode *> assigned;
    for_each_node(n->body, nullptr, [&](const Stmt &x) {
      if (auto a = x->as<AssignNode>())
        assigned.insert(a->var.get());
    });
    Substituter values;
    size_t lead = 0;
    for (; lead < stmts.size(); ++lead) {
      auto d = stmts[lead]->as<DeclareNode>();
      if (!d || !d->init || assigned.count(d->var.get()) || reads_any(d->init, assigned) || reads_memory(d->init))
        break;
      values.vars[d->var.get()] = values.mutate(d->init);
    }
    if (lead > 0) {
      stmts.erase(stmts.begin(), stmts.begin() + lead);
      for (auto &x : stmts)
        x = values.mutate(x);
    }
    std::vector<Stmt> producers, consumers;
    std::set<const BufferNode *> filled;
    for (auto &s : stmts) {
      const BufferNode *b = consumers.empty() ? produced_buffer(s) : nullptr;
      if (b && !filled.count(b)) {
        producers.push_back(s);
        filled.insert(b);
      } else {
        consumers.push_back(s);
      }
    }
    // A loop left as it is says why (a remark at the loop).
    auto unpipelined = [&](const std::string &why) {
      k_.remarks.push_back({n->loc, "pipelined loop runs without prefetching: " + why});
      return IRMutator::mutate_For(self, n);
    };
    if (producers.empty())
      return unpipelined("its body does not start with copies from global into shared memory");
    // The buffers must be written only by their producers and used only in this loop.
    for (auto *b : filled) {
      for (auto &c : consumers) {
        bool writes = false;
        for_each_node(c, nullptr, [&](const Stmt &x) {
          if (auto st = x->as<StoreNode>(); st && st->buffer.get() == b)
            writes = true;
        });
        if (writes)
          return unpipelined("'" + b->name + "', which it copies into, is written in the loop too");
      }
      if (uses_outside_.count(b))
        return unpipelined("'" + b->name + "', which it copies into, is used outside the loop or by another "
                           "pipelined loop");
    }
    Rewrite base;
    for (auto *b : filled) {
      std::vector<std::int64_t> shape = {S};
      for (int d = 0; d < b->rank(); ++d)
        shape.push_back(b->extent(d));
      Buffer staged = make_buffer(b->name, Scope::Shared, b->dtype, shape);
      staged->loc = b->loc;
      if (auto it = k_.shared_layouts.find(b); it != k_.shared_layouts.end())
        k_.shared_layouts[staged.get()] = it->second;
      base.staged[b] = staged;
      staged_all[b] = staged;
    }
    const Expr extent = n->extent, begin = n->begin, step = n->step;
    auto iteration = [&](const Expr &i) { return add(begin, mul(i, step)); };
    auto produce = [&](const Expr &i, int ahead, int stages) {
      Rewrite r = base;
      r.vars[n->var.get()] = cast(n->var->type, iteration(i));
      r.stage = binary(BinaryOp::Mod, i, int_imm(S, i->type));
      std::vector<Stmt> out;
      for (auto &p : producers)
        out.push_back(r.mutate(p));
      return std::make_shared<AsyncNode>(seq(out), ahead, stages);
    };
    // A first consumer that is an asynchronous gemm (wgmma: the target runs it while the
    // thread goes on) goes before the copies, so that they are issued while it runs
    // (lower-mma waits for it after them). Where it is the only consumer and there are 4
    // stages or more, the copies run one iteration less ahead, so that the stage a gemm
    // read stays unwritten for one iteration more: lower-mma then lets each gemm run
    // into the next iteration (its wait keeps one in flight).
    size_t first = 0;
    if (!consumers.empty())
      if (auto g = consumers.front()->as<GemmNode>(); g && k_.warpgroup_gemm(*g))
        first = 1;
    const int D = first == 1 && consumers.size() == 1 && S >= 4 ? S - 2 : S - 1; // iterations ahead
    {
      std::string names;
      for (auto &p : producers)
        names += (names.empty() ? "'" : ", '") + produced_buffer(p)->name + "'";
      k_.remarks.push_back({n->loc, "pipelined loop: " + std::to_string(S) + " stages, the copies into " + names +
                                        " run " + std::to_string(D) + (D == 1 ? " iteration" : " iterations") +
                                        " ahead" +
                                        (first ? std::string(", issued while the first gemm runs (wgmma)") : "")});
    }
    // Prologue: the first D iterations' copies.
    Var s = make_var("stage", extent->type);
    Stmt prologue = for_loop(s, int_imm(0, extent->type), int_imm(D, extent->type), ForKind::Serial,
                             seq({if_then_else(lt(s, extent), produce(s, 0, S)), std::make_shared<AsyncCommitNode>()}));
    // The loop: wait for iteration it's copies (D groups were committed before the loop and
    // one per iteration since: all but the newest D - 1 are complete), one barrier (every
    // thread's copies are visible, and every thread is done with iteration it - 1, so
    // stage (it - 1) % S may be refilled), the copies of iteration it + D into stage
    // (it + D) % S, then the work of iteration it.
    Var it = make_var("it", extent->type);
    Rewrite work = base;
    work.stage = binary(BinaryOp::Mod, Expr(it), int_imm(S, extent->type));
    std::vector<Stmt> body = {declare(n->var, cast(n->var->type, iteration(it)))};
    body.push_back(std::make_shared<AsyncWaitNode>(D - 1));
    body.push_back(barrier());
    for (size_t i = 0; i < first; ++i)
      body.push_back(work.mutate(mutate(consumers[i])));
    Expr ahead = add(it, int_imm(D, extent->type));
    body.push_back(if_then_else(lt(ahead, extent), produce(ahead, D, S)));
    body.push_back(std::make_shared<AsyncCommitNode>());
    for (size_t i = first; i < consumers.size(); ++i)
      body.push_back(work.mutate(mutate(consumers[i])));
    Stmt loop = for_loop(it, int_imm(0, extent->type), extent, ForKind::Serial, seq(body));
    return seq({prologue, loop, std::make_shared<AsyncWaitNode>(0)});
  }

public:
  /// Buffers used outside the pipelined loops that would fill them (found first).
  std::set<const BufferNode *> uses_outside_;
};

/// Shared buffers mentioned outside pipelined loops (they cannot be multi-buffered).
void find_outside_uses(const Stmt &s, std::set<const BufferNode *> &out) {
  if (!s)
    return;
  if (auto f = s->as<ForNode>(); f && f->for_kind == ForKind::Pipelined && f->stages >= 2)
    return;
  if (auto q = s->as<SeqNode>()) {
    for (auto &c : q->stmts)
      find_outside_uses(c, out);
    return;
  }
  if (auto f = s->as<ForNode>())
    return find_outside_uses(f->body, out);
  if (auto i = s->as<IfNode>()) {
    find_outside_uses(i->then_case, out);
    find_outside_uses(i->else_case, out);
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

/// Shared buffers used by more than one pipelined loop: each loop would multi-buffer them
/// on its own (and a loop left serial would still use the buffer it replaced), so they are
/// treated as used outside.
void find_shared_between_loops(const Stmt &body, std::set<const BufferNode *> &out) {
  std::map<const BufferNode *, int> loops;
  for_each_node(body, nullptr, [&](const Stmt &s) {
    auto f = s->as<ForNode>();
    if (!f || f->for_kind != ForKind::Pipelined || f->stages < 2)
      return;
    std::set<const BufferNode *> used;
    find_outside_uses(f->body, used);
    for (const BufferNode *b : used)
      ++loops[b];
  });
  for (auto &[b, n] : loops)
    if (n > 1)
      out.insert(b);
}

/// Declarations of the multi-buffered buffers.
class Redeclare : public IRMutator {
public:
  const std::map<const BufferNode *, Buffer> &staged;
  explicit Redeclare(const std::map<const BufferNode *, Buffer> &s) : staged(s) {}
  Stmt mutate_DeclBuffer(const Stmt &self, const DeclBufferNode *n) override {
    auto it = staged.find(n->buffer.get());
    return it == staged.end() ? self : decl_buffer(it->second);
  }
};

} // namespace

Kernel inject_pipeline(const Kernel &kernel, int stages) {
  Kernel k = kernel;
  if (stages > 0) { // every pipelined loop's stage count fixed from outside
    class SetStages : public IRMutator {
    public:
      int stages;
      Stmt mutate_For(const Stmt &self, const ForNode *n) override {
        Stmt body = mutate(n->body);
        if (n->for_kind != ForKind::Pipelined)
          return body == n->body ? self : for_loop(n->var, n->begin, n->extent, n->for_kind, body, n->step, n->stages);
        return for_loop(n->var, n->begin, n->extent, n->for_kind, body, n->step, stages);
      }
    } set;
    set.stages = stages;
    k.body = set.mutate(k.body);
  }
  const Kernel original = k;
  Injector injector(k);
  find_outside_uses(original.body, injector.uses_outside_);
  find_shared_between_loops(original.body, injector.uses_outside_);
  Stmt body = injector.mutate(original.body);
  if (injector.staged_all.empty()) {
    Kernel unchanged = original;
    unchanged.remarks = k.remarks; // why loops stayed as they were
    return unchanged;
  }
  k.body = Redeclare(injector.staged_all).mutate(body);
  // The layouts of buffers the staged ones replaced go with them (their addresses may be
  // reused by buffers made later).
  std::set<const BufferNode *> declared;
  for_each_node(k.body, nullptr, [&](const Stmt &s) {
    if (auto d = s->as<DeclBufferNode>())
      declared.insert(d->buffer.get());
  });
  for (auto it = k.shared_layouts.begin(); it != k.shared_layouts.end();)
    it = declared.count(it->first) ? std::next(it) : k.shared_layouts.erase(it);
  return k;
}

} // namespace tile::transforms
