#include "transforms/BindThreads.h"

#include "ir/Visitor.h"

namespace tile::transforms {

using namespace ir;

namespace {

/// One loop of a nest and the guards that stood between it and the next loop.
struct Level {
  const ForNode *loop;
  std::vector<Expr> guards;
};

bool is_bindable(const Stmt &s) {
  auto f = s->as<ForNode>();
  return f && f->for_kind == ForKind::Parallel && as_const_int(f->extent) && is_const_int(f->step, 1);
}

/// The statement under `s` once the guards (ifs without else) are peeled off, into `guards`.
Stmt peel_guards(Stmt s, std::vector<Expr> &guards) {
  while (auto i = s->as<IfNode>()) {
    if (i->else_case)
      break;
    guards.push_back(i->cond);
    s = i->then_case;
  }
  return s;
}

/// Parallel loops inside a thread's share of work run in that thread, in order.
class Serialize : public IRMutator {
  Stmt mutate_For(const Stmt &self, const ForNode *n) override {
    Stmt body = mutate(n->body);
    if (n->for_kind != ForKind::Parallel && body == n->body)
      return self;
    ForKind k = n->for_kind == ForKind::Parallel ? ForKind::Serial : n->for_kind;
    return for_loop(n->var, n->begin, n->extent, k, body, n->step, n->stages);
  }
};

class Binder : public IRMutator {
  Stmt mutate_For(const Stmt &self, const ForNode *n) override {
    if (!is_bindable(self))
      return IRMutator::mutate_For(self, n);
    // Collect the nest.
    std::vector<Level> levels;
    Stmt s = self;
    std::vector<Expr> outer_guards;
    while (true) {
      auto f = s->as<ForNode>();
      levels.push_back({f, {}});
      std::vector<Expr> guards;
      Stmt inner = peel_guards(f->body, guards);
      if (!is_bindable(inner)) {
        // The guards stay as they are, around the body.
        s = f->body;
        break;
      }
      levels.back().guards = guards;
      s = inner;
    }
    if (levels.size() == 1)
      return for_loop(n->var, n->begin, n->extent, ForKind::Threads, Serialize().mutate(n->body));
    std::int64_t total = 1;
    for (auto &l : levels)
      total *= *as_const_int(l.loop->extent);
    Var flat = make_var("t", ScalarType::I32);
    std::vector<Stmt> stmts;
    std::int64_t inner_size = total;
    std::vector<Expr> guards;
    for (auto &l : levels) {
      const std::int64_t e = *as_const_int(l.loop->extent);
      inner_size /= e;
      Expr index = div(flat, int_imm(inner_size));
      if (inner_size * e != total)
        index = binary(BinaryOp::Mod, index, int_imm(e));
      stmts.push_back(declare(l.loop->var, cast(l.loop->var->type, add(index, l.loop->begin))));
      for (auto &g : l.guards)
        guards.push_back(g);
    }
    Stmt body = Serialize().mutate(s);
    for (auto it = guards.rbegin(); it != guards.rend(); ++it)
      body = if_then_else(*it, body);
    stmts.push_back(body);
    return for_loop(flat, int_imm(0), int_imm(total), ForKind::Threads, seq(stmts));
  }
};

} // namespace

Stmt serialize_parallel_loops(const Stmt &s) { return Serialize().mutate(s); }

Kernel bind_threads(const Kernel &kernel) {
  Kernel k = kernel;
  k.body = Binder().mutate(kernel.body);
  return k;
}

} // namespace tile::transforms
