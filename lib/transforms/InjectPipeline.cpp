#include "transforms/InjectPipeline.h"

#include <map>
#include <set>

#include "ir/Visitor.h"
#include "transforms/PipelineStages.h"

namespace tile::transforms {

using namespace ir;

namespace {

/// The shared buffer a producer fills, or null when `s` is not a producer: a Threads loop
/// whose stores all go to one shared buffer and whose loads all read global memory.
const BufferNode *produced_buffer(const Stmt &s) {
  // A copy with a fast path for tiles inside the tensor (lower-tile-ops): both branches
  // fill the same buffer, and the condition reads no memory but read-only tensors and views
  // of them (a tile whose row a list names) and tensors' sizes.
  if (auto i = s->as<IfNode>()) {
    if (!i->else_case)
      return nullptr;
    const BufferNode *a = produced_buffer(i->then_case), *b = produced_buffer(i->else_case);
    return reads_only_constant_tensors(i->cond, /*views=*/true) && a == b ? a : nullptr;
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
    // A body under one condition that reads only read-only tensors and values the loop does
    // not change (TileLang's block-sparse `if (Mask(qb, kb)) { ... }`): each iteration's
    // copies are made ahead where its condition holds, its statements run where it holds.
    // (Any other body of one statement says why it is not pipelined.)
    GuardedBody guarded = guarded_body(n);
    if (guarded.guard && !reads_only_constant_tensors(guarded.guard, /*views=*/true))
      guarded = {};
    const std::vector<Stmt> stmts = guarded.guard            ? guarded.stmts
                                    : n->body->as<SeqNode>() ? pipelined_body(n)
                                                             : std::vector<Stmt>{n->body};
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
    StageRewrite base;
    for (auto *b : filled) {
      Buffer staged = staged_buffer(k_, b, S);
      base.staged[b] = staged;
      staged_all[b] = staged;
    }
    const Expr extent = n->extent, begin = n->begin, step = n->step;
    auto iteration = [&](const Expr &i) { return add(begin, mul(i, step)); };
    auto produce = [&](const Expr &i, int ahead, int stages) {
      StageRewrite r = base;
      r.vars[n->var.get()] = cast(n->var->type, iteration(i));
      r.stage = binary(BinaryOp::Mod, i, int_imm(S, i->type));
      std::vector<Stmt> out;
      for (auto &p : producers)
        out.push_back(r.mutate(p));
      Stmt async = std::make_shared<AsyncNode>(seq(out), ahead, stages);
      return guarded.guard ? if_then_else(r.mutate(guarded.guard), async) : async;
    };
    // A first consumer that is an asynchronous gemm (wgmma: the target runs it while the
    // thread goes on) goes before the copies, so that they are issued while it runs
    // (lower-mma waits for it after them). Where it is the only consumer and there are 4
    // stages or more, the copies run one iteration less ahead, so that the stage a gemm
    // read stays unwritten for one iteration more: lower-mma then lets each gemm run
    // into the next iteration (its wait keeps one in flight).
    size_t first = 0;
    if (!consumers.empty() && !guarded.guard)
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
                                        (first ? std::string(", issued while the first gemm runs (wgmma)") : "") +
                                        (guarded.guard ? std::string(", for the iterations whose condition holds") : "")});
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
    StageRewrite work = base;
    work.stage = binary(BinaryOp::Mod, Expr(it), int_imm(S, extent->type));
    std::vector<Stmt> body = {declare(n->var, cast(n->var->type, iteration(it)))};
    body.push_back(std::make_shared<AsyncWaitNode>(D - 1));
    body.push_back(barrier());
    for (size_t i = 0; i < first; ++i)
      body.push_back(work.mutate(mutate(consumers[i])));
    Expr ahead = add(it, int_imm(D, extent->type));
    body.push_back(if_then_else(lt(ahead, extent), produce(ahead, D, S)));
    body.push_back(std::make_shared<AsyncCommitNode>());
    std::vector<Stmt> work_of_it;
    for (size_t i = first; i < consumers.size(); ++i)
      work_of_it.push_back(work.mutate(mutate(consumers[i])));
    if (guarded.guard)
      body.push_back(if_then_else(guarded.guard, seq(work_of_it)));
    else
      body.insert(body.end(), work_of_it.begin(), work_of_it.end());
    Stmt loop = for_loop(it, int_imm(0, extent->type), extent, ForKind::Serial, seq(body));
    return seq({prologue, loop, std::make_shared<AsyncWaitNode>(0)});
  }

public:
  /// Buffers used outside the pipelined loops that would fill them (found first).
  std::set<const BufferNode *> uses_outside_;
};

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
  injector.uses_outside_ = unstageable_buffers(original.body);
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
