#include "transforms/RollFallbackLoops.h"

#include <set>

#include "ir/Visitor.h"

namespace tile::transforms {

using namespace ir;

namespace {

bool registers(const Buffer &b) { return b->scope == Scope::Fragment || b->scope == Scope::Local; }

/// Whether nothing in `body` indexes registers by `v` (or by a scalar computed from it).
bool indexes_no_registers(const VarNode *v, const Stmt &body) {
  std::set<const VarNode *> derived{v};
  auto reads_derived = [&](const Expr &e) { return reads_any(e, derived); };
  bool ok = true;
  for_each_node(
      body,
      [&](const Expr &x) {
        if (auto l = x->as<LoadNode>(); l && registers(l->buffer))
          for (auto &i : l->indices)
            ok &= !reads_derived(i);
      },
      [&](const Stmt &s) {
        switch (s->kind) {
        case StmtKind::Declare: {
          auto d = s->as<DeclareNode>();
          if (d->init && reads_derived(d->init))
            derived.insert(d->var.get());
          break;
        }
        case StmtKind::Assign: // a value carried across iterations, or set under a condition
          ok = false;
          break;
        case StmtKind::For: { // an inner loop's variable follows its bounds
          auto f = s->as<ForNode>();
          if (reads_derived(f->begin) || reads_derived(f->extent) || reads_derived(f->step))
            derived.insert(f->var.get());
          break;
        }
        case StmtKind::Store: {
          auto st = s->as<StoreNode>();
          if (registers(st->buffer))
            for (auto &i : st->indices)
              ok &= !reads_derived(i);
          break;
        }
        case StmtKind::VectorMove: {
          auto m = s->as<VectorMoveNode>();
          if ((registers(m->dst) && reads_derived(m->dst_offset)) || (registers(m->src) && reads_derived(m->src_offset)))
            ok = false;
          break;
        }
        case StmtKind::MatrixLoad:
        case StmtKind::Mma:
        case StmtKind::Wgmma:
        case StmtKind::WarpgroupSync:
        case StmtKind::Gemm:
        case StmtKind::Copy:
        case StmtKind::Fill:
        case StmtKind::Reduce:
        case StmtKind::Cumsum:
          ok = false;
          break;
        default:
          break;
        }
      });
  return ok;
}

class Rolling : public IRMutator {
protected:
  int rare_ = 0;  // inside this many rare else sides
  int loops_ = 0; // inside this many loops that each thread runs in order (not per-thread work)

  Stmt mutate_If(const Stmt &self, const IfNode *n) override {
    if (!n->rare_else)
      return IRMutator::mutate_If(self, n);
    Stmt t = mutate(n->then_case);
    ++rare_;
    Stmt e = mutate(n->else_case);
    --rare_;
    return t == n->then_case && e == n->else_case ? self : if_then_else(n->cond, t, e, true);
  }

  Stmt mutate_For(const Stmt &self, const ForNode *n) override {
    if (rare_ > 0 && loops_ > 0 && n->for_kind == ForKind::Slots) {
      auto extent = as_const_int(n->extent);
      if (extent && *extent > 1 && indexes_no_registers(n->var.get(), n->body))
        return for_loop(n->var, n->begin, n->extent, ForKind::Rolled, n->body, n->step);
    }
    const bool in_order = n->for_kind == ForKind::Serial || n->for_kind == ForKind::Pipelined;
    loops_ += in_order;
    Stmt s = IRMutator::mutate_For(self, n);
    loops_ -= in_order;
    return s;
  }
};

} // namespace

Kernel roll_fallback_loops(const Kernel &kernel) {
  Kernel k = kernel;
  Rolling r;
  k.body = r.mutate(kernel.body);
  return k;
}

} // namespace tile::transforms
