#include "transforms/InsertSync.h"

#include "analysis/SharedAccess.h"
#include "ir/Visitor.h"

namespace tile::transforms {

using namespace ir;
using analysis::SharedAccess;

namespace {

class Syncer {
public:
  explicit Syncer(const Kernel &k) {
    // Variables the kernel assigns to are not trusted to keep their value between two
    // accesses, even loop variables.
    for_each_node(k.body, nullptr, [&](const Stmt &s) {
      if (const VarNode *v = assigned_var(s.get()))
        assigned_.insert(v);
    });
  }

  /// Rewrites `s` given the accesses since the last barrier (`pending`), which it updates
  /// to those at the end of `s`.
  Stmt sync(const Stmt &s, SharedAccess &pending) {
    if (auto q = s->as<SeqNode>()) {
      std::vector<Stmt> out;
      bool changed = false;
      for (auto &c : q->stmts) {
        Stmt r = sync(c, pending);
        changed |= r != c;
        out.push_back(r);
      }
      return changed ? seq(out) : s;
    }
    // Threads and Slots loops run per thread, possibly diverging: never split by a barrier.
    if (auto f = s->as<ForNode>(); f && f->for_kind != ForKind::Threads && f->for_kind != ForKind::Slots &&
                                            f->for_kind != ForKind::Rolled)
      return sync_loop(s, f, pending);
    if (auto w = s->as<WhileNode>())
      return sync_while(s, w, pending);
    if (auto i = s->as<IfNode>()) {
      SharedAccess then_pending = pending, else_pending = pending;
      Stmt t = sync(i->then_case, then_pending);
      Stmt e = i->else_case ? sync(i->else_case, else_pending) : nullptr;
      pending = then_pending;
      pending.merge(else_pending);
      if (t == i->then_case && e == i->else_case)
        return s;
      // Both branches start with a barrier (a copy's two paths, say): one before the if.
      Stmt t_rest = e ? after_leading_barrier(t) : nullptr, e_rest = e ? after_leading_barrier(e) : nullptr;
      if (t_rest && e_rest)
        return seq({barrier(), if_then_else(i->cond, t_rest, e_rest, i->rare_else)});
      return if_then_else(i->cond, t, e, i->rare_else);
    }
    return sync_leaf(s, pending);
  }

private:
  std::set<const VarNode *> assigned_;

  /// The accesses of `body` before its first top-level barrier (all of them without one): what
  /// a loop's first iteration does before it synchronizes by itself (a pipelined loop waits
  /// for its stage and then syncs).
  SharedAccess leading_access(const Stmt &body) const {
    auto q = body->as<SeqNode>();
    if (!q)
      return body->as<BarrierNode>() ? SharedAccess() : analysis::shared_access(body, uniform_);
    SharedAccess acc;
    for (auto &c : q->stmts) {
      if (c->as<BarrierNode>())
        break;
      acc.merge(analysis::shared_access(c, uniform_));
    }
    return acc;
  }

  /// `s` without the barrier it starts with, or null when it does not start with one.
  static Stmt after_leading_barrier(const Stmt &s) {
    if (s->as<BarrierNode>())
      return seq({});
    auto q = s->as<SeqNode>();
    if (!q || q->stmts.empty())
      return nullptr;
    Stmt rest = after_leading_barrier(q->stmts[0]);
    if (!rest)
      return nullptr;
    std::vector<Stmt> out = {rest};
    out.insert(out.end(), q->stmts.begin() + 1, q->stmts.end());
    return seq(out);
  }
  std::set<const VarNode *> uniform_; // variables of the loops around the statement

  /// A statement no barrier goes into: one before it if it conflicts with what is pending.
  Stmt sync_leaf(const Stmt &s, SharedAccess &pending) {
    if (s->as<BarrierNode>()) { // one placed by an earlier pass
      pending = SharedAccess();
      return s;
    }
    SharedAccess acc = analysis::shared_access(s, uniform_);
    if (acc.empty())
      return s;
    if (pending.conflicts_with(acc)) {
      pending = acc;
      return seq({barrier(), s});
    }
    pending.merge(acc);
    return s;
  }

  /// A while loop (a persistent block's tiles) as a loop of unknown count without a
  /// variable: what its body leaves pending reaches its next iteration unshifted.
  Stmt sync_while(const Stmt &s, const WhileNode *w, SharedAccess &pending) {
    bool before = false;
    if (!pending.empty() && pending.conflicts_with(leading_access(w->body))) {
      pending = SharedAccess();
      before = true;
    }
    const SharedAccess entry = pending;
    SharedAccess carried = entry;
    for (;;) {
      SharedAccess end = carried;
      sync(w->body, end);
      SharedAccess next = entry;
      next.merge(end);
      next.merge(carried);
      if (next == carried)
        break;
      carried = next;
    }
    Stmt body = sync(w->body, carried);
    pending = entry; // (it may run no iteration)
    pending.merge(carried);
    Stmt loop = body == w->body ? s : while_loop(w->cond, body);
    return before ? seq({barrier(), loop}) : loop;
  }

  Stmt sync_loop(const Stmt &s, const ForNode *f, SharedAccess &pending) {
    // What an iteration does before its own first barrier conflicts with what came before
    // the loop: one barrier before the loop, not one in every iteration (a serial loop
    // reading what the threads just wrote).
    bool before = false;
    if (!pending.empty()) {
      if (pending.conflicts_with(leading_access(f->body))) {
        pending = SharedAccess();
        before = true;
      }
    }
    // What is pending at the start of an iteration: what was before the loop, and what
    // the body leaves at its end, seen from the next iteration (slots of the loop variable
    // shift by the step), from every earlier iteration since the last barrier. Iterate to
    // a fixed point; slot offsets are taken modulo their stage counts, so there are
    // finitely many, but give up on slots past a bound.
    const bool uniform = !assigned_.count(f->var.get());
    if (uniform)
      uniform_.insert(f->var.get());
    // A loop of T iterations (a constant count) carries accesses at most T - 1 back.
    const SharedAccess entry = pending;
    SharedAccess carried = entry;
    auto trips = f->extent->as<IntImmNode>();
    for (int round = 0; !trips || round < trips->value - 1; ++round) {
      SharedAccess end = carried;
      sync(f->body, end);
      SharedAccess next = entry;
      next.merge(end.shifted(f->var.get(), round < 16 ? f->step : nullptr));
      next.merge(carried); // monotone: a fixed point exists
      if (next == carried)
        break;
      carried = next;
    }
    Stmt body = sync(f->body, carried);
    if (uniform)
      uniform_.erase(f->var.get());
    pending = entry; // the loop may run no iteration
    pending.merge(carried);
    Stmt loop = body == f->body ? s : for_loop(f->var, f->begin, f->extent, f->for_kind, body, f->step, f->stages);
    return before ? seq({barrier(), loop}) : loop;
  }
};

} // namespace

Kernel insert_sync(const Kernel &kernel) {
  Kernel k = kernel;
  SharedAccess pending;
  k.body = Syncer(kernel).sync(kernel.body, pending);
  return k;
}

} // namespace tile::transforms
