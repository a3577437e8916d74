#include "transforms/InsertSync.h"

#include "analysis/SharedAccess.h"

namespace tile::transforms {

using namespace ir;
using analysis::SharedAccess;

namespace {

/// A statement no barrier goes into: one before it if it conflicts with what is pending.
Stmt sync_leaf(const Stmt &s, SharedAccess &pending) {
  if (s->as<BarrierNode>()) { // one placed by an earlier pass
    pending = SharedAccess();
    return s;
  }
  SharedAccess acc = analysis::shared_access(s);
  if (acc.empty())
    return s;
  if (pending.conflicts_with(acc)) {
    pending = acc;
    return seq({barrier(), s});
  }
  pending.merge(acc);
  return s;
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
  if (auto f = s->as<ForNode>(); f && f->for_kind != ForKind::Threads && f->for_kind != ForKind::Slots) {
    // The first pass finds what the body leaves pending at its end; the second starts
    // from that too, as the next iteration does.
    const SharedAccess entry = pending;
    SharedAccess end = entry;
    sync(f->body, end);
    SharedAccess carried = entry;
    carried.merge(end);
    Stmt body = sync(f->body, carried);
    pending = entry; // the loop may run no iteration
    pending.merge(carried);
    return body == f->body ? s : for_loop(f->var, f->begin, f->extent, f->for_kind, body, f->step, f->stages);
  }
  if (auto i = s->as<IfNode>()) {
    SharedAccess then_pending = pending, else_pending = pending;
    Stmt t = sync(i->then_case, then_pending);
    Stmt e = i->else_case ? sync(i->else_case, else_pending) : nullptr;
    pending = then_pending;
    pending.merge(else_pending);
    return t == i->then_case && e == i->else_case ? s : if_then_else(i->cond, t, e);
  }
  return sync_leaf(s, pending);
}

} // namespace

Kernel insert_sync(const Kernel &kernel) {
  Kernel k = kernel;
  SharedAccess pending;
  k.body = sync(kernel.body, pending);
  return k;
}

} // namespace tile::transforms
