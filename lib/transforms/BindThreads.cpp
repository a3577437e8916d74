#include "transforms/BindThreads.h"

#include <algorithm>

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

/// The lanes of a vector access for a nest of `total` iterations whose innermost loop has
/// `extent` and whose body is `body`: the target's widest access (`vector_bytes`) of its
/// widest global tensor element, at most 8, dividing the extent, narrower while that would
/// leave some of the `threads` without a vector; 1 when it touches no tensor.
std::int64_t vector_width(const Stmt &body, std::int64_t extent, std::int64_t total, int threads, int vector_bytes) {
  int widest = 0;
  for_each_node(
      body,
      [&](const Expr &e) {
        if (auto l = e->as<LoadNode>(); l && l->buffer->scope == Scope::Global)
          widest = std::max(widest, bytes(l->buffer->dtype));
      },
      [&](const Stmt &st) {
        if (auto x = st->as<StoreNode>(); x && x->buffer->scope == Scope::Global)
          widest = std::max(widest, bytes(x->buffer->dtype));
      });
  if (widest == 0)
    return 1;
  std::int64_t vec = std::max(1, std::min(8, vector_bytes / widest));
  while (vec > 1 && (extent % vec != 0 || total / vec < threads))
    vec /= 2;
  return std::max<std::int64_t>(vec, 1);
}

/// True when `s` stores into a local buffer: a thread's own storage, which every thread
/// must compute in full (a reduction or copy into a `local`, a parallel loop filling one).
bool writes_local(const Stmt &s) {
  bool found = false;
  for_each_node(
      s, [](const Expr &) {},
      [&](const Stmt &st) {
        if (auto x = st->as<StoreNode>(); x && x->buffer->scope == Scope::Local)
          found = true;
      });
  return found;
}

class Binder : public IRMutator {
public:
  Binder(int threads, int vector_bytes) : threads_(threads), vector_bytes_(vector_bytes) {}

private:
  const int threads_, vector_bytes_;
  Stmt mutate_For(const Stmt &self, const ForNode *n) override {
    if (!is_bindable(self))
      return IRMutator::mutate_For(self, n);
    // Split over the threads, each would hold only its share of a local buffer.
    if (writes_local(self))
      return Serialize().mutate(self);
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
    std::int64_t total = 1;
    for (auto &l : levels)
      total *= *as_const_int(l.loop->extent);
    const std::int64_t vec = vector_width(s, *as_const_int(levels.back().loop->extent), total, threads_, vector_bytes_);
    if (levels.size() == 1 && vec == 1)
      return for_loop(n->var, n->begin, n->extent, ForKind::Threads, Serialize().mutate(n->body));
    // Thread t runs vectors t, t + threads, ... of `vec` consecutive elements of the
    // innermost loop; lane v of a vector is its element v.
    Var flat = make_var("t", ScalarType::I32), lane = make_var("v", ScalarType::I32);
    std::vector<Stmt> stmts;
    std::int64_t inner_size = total;
    std::vector<Expr> guards;
    for (size_t d = 0; d < levels.size(); ++d) {
      const Level &l = levels[d];
      const std::int64_t e = *as_const_int(l.loop->extent);
      inner_size /= e;
      Expr index;
      if (d + 1 < levels.size()) {
        index = div(flat, int_imm(inner_size / vec));
        if (inner_size * e != total)
          index = binary(BinaryOp::Mod, index, int_imm(e));
      } else {
        Expr vector = levels.size() == 1 ? Expr(flat) : binary(BinaryOp::Mod, flat, int_imm(e / vec));
        index = vec == 1 ? vector : add(mul(vector, int_imm(vec)), lane);
      }
      stmts.push_back(declare(l.loop->var, cast(l.loop->var->type, add(index, l.loop->begin))));
      for (auto &g : l.guards)
        guards.push_back(g);
    }
    Stmt body = Serialize().mutate(s);
    for (auto it = guards.rbegin(); it != guards.rend(); ++it)
      body = if_then_else(*it, body);
    stmts.push_back(body);
    Stmt per_thread = seq(stmts);
    if (vec > 1)
      per_thread = for_loop(lane, int_imm(0), int_imm(vec), ForKind::Vectorized, per_thread);
    return for_loop(flat, int_imm(0), int_imm(total / vec), ForKind::Threads, per_thread);
  }
};

} // namespace

Stmt serialize_parallel_loops(const Stmt &s) { return Serialize().mutate(s); }

Kernel bind_threads(const Kernel &kernel, const Target &target) {
  Kernel k = kernel;
  k.body = Binder(kernel.threads, target.max_vector_bytes).mutate(kernel.body);
  return k;
}

} // namespace tile::transforms
