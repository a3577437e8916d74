#include "transforms/LowerThreadLoops.h"

#include "analysis/Bounds.h"
#include "ir/Visitor.h"

namespace tile::transforms {

using namespace ir;

namespace {

/// The operands of a chain of additions.
void add_terms(const Expr &e, std::vector<Expr> &out) {
  if (auto b = e->as<BinaryNode>(); b && b->op == BinaryOp::Add) {
    add_terms(b->a, out);
    add_terms(b->b, out);
    return;
  }
  out.push_back(e);
}

/// Whether `s` assigns variable `v` (its range is then not the loop's).
bool assigns(const Stmt &s, const VarNode *v) {
  bool found = false;
  for_each_node(s, nullptr, [&](const Stmt &x) {
    found |= assigned_var(x.get()) == v;
  });
  return found;
}

/// Splits divisions and remainders by positive constants where the dividend is a sum of
/// non-negative multiples of the divisor and a non-negative rest (see the header).
class SplitDivisions : public IRMutator {
public:
  analysis::VarRanges ranges;

protected:
  bool non_negative(const Expr &e) const {
    auto r = analysis::bounds_of(e, ranges);
    return r && r->lo >= 0;
  }

  /// `term` / c where `term` is a non-negative multiple of c; nullptr when it is not one.
  Expr quotient(const Expr &term, std::int64_t c) const {
    if (auto k = as_const_int(term))
      return *k >= 0 && *k % c == 0 ? int_imm(*k / c, term->type) : nullptr;
    auto b = term->as<BinaryNode>();
    if (!b || b->op != BinaryOp::Mul)
      return nullptr;
    for (auto [k, x] : {std::pair{b->b, b->a}, std::pair{b->a, b->b}}) {
      auto kc = as_const_int(k);
      if (kc && *kc > 0 && *kc % c == 0 && non_negative(x))
        return mul(x, int_imm(*kc / c, term->type));
    }
    return nullptr;
  }

  Expr mutate_Binary(const Expr &self, const BinaryNode *) override {
    Expr e = IRMutator::mutate_Binary(self, self->as<BinaryNode>());
    auto b = e->as<BinaryNode>();
    if (!b || (b->op != BinaryOp::Div && b->op != BinaryOp::Mod) || !is_integer(b->type))
      return e;
    auto c = as_const_int(b->b);
    if (!c || *c <= 0)
      return e;
    std::vector<Expr> terms;
    add_terms(b->a, terms);
    Expr rest, quotients;
    for (auto &t : terms) {
      if (Expr q = quotient(t, *c))
        quotients = quotients ? add(quotients, q) : q;
      else
        rest = rest ? add(rest, t) : t;
    }
    if (!quotients)
      return e;
    if (!rest)
      rest = int_imm(0, b->type);
    if (!non_negative(rest) || !non_negative(b->a))
      return e;
    return b->op == BinaryOp::Div ? add(div(rest, b->b), quotients) : binary(BinaryOp::Mod, rest, b->b);
  }

  Stmt mutate_For(const Stmt &self, const ForNode *n) override {
    auto begin = as_const_int(n->begin), extent = as_const_int(n->extent), step = as_const_int(n->step);
    if (!begin || !extent || !step || *extent <= 0 || *step <= 0 || assigns(n->body, n->var.get()))
      return IRMutator::mutate_For(self, n);
    ranges[n->var.get()] = {*begin, *begin + (*extent - 1) * *step};
    Stmt s = IRMutator::mutate_For(self, n);
    ranges.erase(n->var.get());
    return s;
  }
};

class Lowering : public IRMutator {
public:
  explicit Lowering(Kernel &k) : k_(k) {}

protected:
  Kernel &k_;

  Stmt mutate_For(const Stmt &self, const ForNode *n) override {
    if (n->for_kind != ForKind::Threads)
      return IRMutator::mutate_For(self, n);
    auto extent = as_const_int(n->extent);
    if (!extent || *extent <= 0 || !is_const_int(n->begin, 0) || !is_const_int(n->step, 1))
      return IRMutator::mutate_For(self, n);
    const std::int64_t threads = k_.threads, trips = (*extent + threads - 1) / threads;
    if (trips > max_thread_loop_trips)
      return IRMutator::mutate_For(self, n);
    if (!k_.thread_index)
      k_.thread_index = make_var("tid", ScalarType::I32);
    const ScalarType t = n->var->type;
    Var r = make_var(n->var->name + "_r", ScalarType::I32);
    Expr index = cast(t, k_.thread_index);
    if (trips > 1)
      index = add(index, cast(t, mul(r, int_imm(threads))));
    Substituter sub;
    sub.vars[n->var.get()] = index;
    Stmt body = sub.mutate(mutate(n->body));
    if (*extent % threads != 0)
      body = if_then_else(lt(index, int_imm(*extent, t)), body, nullptr);
    SplitDivisions split;
    split.ranges[k_.thread_index.get()] = {0, threads - 1};
    split.ranges[r.get()] = {0, trips - 1};
    body = split.mutate(body);
    return for_loop(r, int_imm(0), int_imm(trips), ForKind::Slots, body);
  }
};

} // namespace

Kernel lower_thread_loops(const Kernel &kernel) {
  Kernel k = kernel;
  Lowering l(k);
  k.body = l.mutate(kernel.body);
  return k;
}

} // namespace tile::transforms
