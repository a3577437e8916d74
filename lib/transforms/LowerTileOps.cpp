#include "transforms/LowerTileOps.h"

#include <cmath>
#include <limits>
#include <set>

#include "ir/Visitor.h"

namespace tile::transforms {

using namespace ir;

namespace {

Expr zero(ScalarType t) {
  if (t == ScalarType::Bool)
    return bool_imm(false);
  return is_float(t) ? float_imm(0.0, t) : int_imm(0, t);
}

/// The largest (`top`) or smallest value of t; infinities for floats.
Expr extreme(ScalarType t, bool top) {
  if (t == ScalarType::Bool)
    return bool_imm(top);
  if (is_float(t))
    return float_imm(top ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity(), t);
  int n = bits(t);
  if (!is_signed(t))
    return int_imm(top ? -1 : 0, t); // -1 wraps to the all-ones maximum
  if (n >= 64)
    return int_imm(top ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min(), t);
  std::int64_t max = (std::int64_t(1) << (n - 1)) - 1;
  return int_imm(top ? max : -max - 1, t);
}

Expr conjunction(const std::vector<Expr> &conds) {
  Expr c;
  for (auto &e : conds)
    c = c ? logical_and(c, e) : e;
  return c;
}

/// Whether `e` reads variable `v`.
bool uses(const Expr &e, const VarNode *v) {
  bool found = false;
  class Finder : public IRVisitor {
  public:
    const VarNode *v;
    bool &found;
    Finder(const VarNode *var, bool &f) : v(var), found(f) {}
    void visit_Var(const VarNode *n) override { found |= n == v; }
  } finder(v, found);
  finder.visit(e);
  return found;
}

/// The loops of one tile operation: vars[d] runs over [0, extents[d]).
struct TileLoops {
  std::vector<Var> vars;
  std::vector<std::int64_t> extents;
};

TileLoops make_tile_loops(const std::vector<std::int64_t> &shape) {
  static const char *names[] = {"i", "j", "k", "l"};
  TileLoops l;
  for (size_t d = 0; d < shape.size(); ++d) {
    l.vars.push_back(make_var(d < 4 ? names[d] : "i" + std::to_string(d), ScalarType::I32));
    l.extents.push_back(shape[d]);
  }
  return l;
}

/// Wraps `body` in the parallel loops of `l`. Each guard becomes an If just inside the
/// innermost loop whose variable it reads (outside all loops when it reads none), so a
/// row that lies past a tensor's edge is skipped whole.
Stmt build_loops(const TileLoops &l, const std::vector<Expr> &guards, Stmt body) {
  const int rank = int(l.vars.size());
  std::vector<std::vector<Expr>> at(rank + 1);
  for (auto &g : guards) {
    int level = 0;
    for (int d = 0; d < rank; ++d)
      if (uses(g, l.vars[d].get()))
        level = d + 1;
    at[level].push_back(g);
  }
  Stmt s = std::move(body);
  for (int d = rank; d >= 0; --d) {
    if (!at[d].empty())
      s = if_then_else(conjunction(at[d]), s);
    if (d > 0)
      s = for_loop(l.vars[d - 1], int_imm(0), int_imm(l.extents[d - 1]), ForKind::Parallel, s);
  }
  return s;
}

class Lowerer : public IRMutator {
public:
  Lowerer(const Kernel &k, IndexWidth width) : layouts_(k.layouts), width_(width) {
    for (auto &b : k.block_index)
      if (b)
        nonneg_.insert(b.get());
    for_each_node(
        k.body, nullptr, [&](const Stmt &s) {
          if (const VarNode *v = assigned_var(s.get()))
            assigned_.insert(v);
        });
  }

protected:
  // Knowledge of signs, for dropping lower-bound checks --------------------------------

  /// True when `e` is provably >= 0 (overflow aside: it is undefined in the IR as in C++).
  bool nonneg(const Expr &e) const {
    if (e->type == ScalarType::Bool || (is_integer(e->type) && !is_signed(e->type)))
      return true;
    if (!is_integer(e->type))
      return false;
    switch (e->kind) {
    case ExprKind::IntImm:
      return e->as<IntImmNode>()->value >= 0;
    case ExprKind::Var:
      return nonneg_.count(e->as<VarNode>()) > 0;
    case ExprKind::TensorDim:
      return true;
    case ExprKind::Cast: {
      auto c = e->as<CastNode>();
      ScalarType from = c->value->type;
      if (from == ScalarType::Bool)
        return true;
      if (!is_integer(from))
        return false;
      // A narrowing cast may wrap; an unsigned value needs a wider signed type.
      return is_signed(from) ? bits(e->type) >= bits(from) && nonneg(c->value) : bits(e->type) > bits(from);
    }
    case ExprKind::Binary: {
      auto b = e->as<BinaryNode>();
      switch (b->op) {
      case BinaryOp::Add:
      case BinaryOp::Mul:
      case BinaryOp::Div:
      case BinaryOp::Mod:
      case BinaryOp::Min:
      case BinaryOp::BitOr:
      case BinaryOp::BitXor:
        return nonneg(b->a) && nonneg(b->b);
      case BinaryOp::Max:
      case BinaryOp::BitAnd:
        return nonneg(b->a) || nonneg(b->b);
      case BinaryOp::Shr:
        return nonneg(b->a);
      default:
        return false;
      }
    }
    case ExprKind::Select: {
      auto s = e->as<SelectNode>();
      return nonneg(s->t) && nonneg(s->f);
    }
    default:
      return false;
    }
  }

  Stmt mutate_For(const Stmt &self, const ForNode *n) override {
    if (nonneg(n->begin) && nonneg(n->step))
      nonneg_.insert(n->var.get());
    return IRMutator::mutate_For(self, n);
  }
  Stmt mutate_Declare(const Stmt &self, const DeclareNode *n) override {
    // A variable that is never assigned keeps its initial value.
    if (n->init && !assigned_.count(n->var.get()) && nonneg(n->init))
      nonneg_.insert(n->var.get());
    return IRMutator::mutate_Declare(self, n);
  }

  // Predication ------------------------------------------------------------------------

  /// The conditions under which index `idx` of `b` lies inside it, one per bound that can
  /// be crossed; empty for non-global buffers, whose tiles lie inside them by construction.
  std::vector<Expr> bounds(const Buffer &b, const std::vector<Expr> &idx) const {
    std::vector<Expr> conds;
    if (b->scope != Scope::Global)
      return conds;
    for (int d = 0; d < b->rank(); ++d) {
      // In 64 bits: an index past 2^31 is outside, not wrapped around to a negative one.
      const Expr i = checked_index(idx[d]);
      if (!nonneg(idx[d]))
        conds.push_back(binary(BinaryOp::GE, i, int_imm(0, ScalarType::I64)));
      conds.push_back(lt(i, b->shape[d]));
    }
    return conds;
  }

  /// The element `idx` of `b` as type t; zero where it lies outside a tensor.
  Expr read(const Buffer &b, const std::vector<Expr> &idx, ScalarType t) const {
    Expr v = cast(t, load(b, idx));
    auto conds = bounds(b, idx);
    return conds.empty() ? v : select(conjunction(conds), v, zero(t));
  }

  // Tile operations --------------------------------------------------------------------

  /// The loops of a tile operation; their variables count from 0.
  TileLoops tile_loops(const std::vector<std::int64_t> &shape) {
    TileLoops l = make_tile_loops(shape);
    for (auto &v : l.vars)
      nonneg_.insert(v.get());
    return l;
  }

  /// The conditions under which all of region `r` lies inside its buffer; empty for
  /// non-global buffers. `narrow`: in 32 bits where the target computes indices so.
  std::vector<Expr> inside(const Region &r, bool narrow = false) const {
    std::vector<Expr> conds;
    if (r.buffer->scope != Scope::Global)
      return conds;
    for (int d = 0; d < r.buffer->rank(); ++d) {
      if (narrow && width_ == IndexWidth::Narrow && !as_const_int(r.begin[d]) && is_signed(r.begin[d]->type) &&
          bits(r.begin[d]->type) <= 32 && r.extent[d] < narrow_extent_margin) {
        // A tile's corner that varies: in 32 bits, its end as the size less the extent (the
        // same in every thread); the runtime keeps sizes at most 2^31 -
        // narrow_extent_margin, so neither side wraps. (nvcc then keeps fewer 64-bit values
        // live across attention's loop.) A constant corner folds into one comparison as it is.
        const Expr begin = cast(ScalarType::I32, r.begin[d]);
        if (!nonneg(r.begin[d]))
          conds.push_back(binary(BinaryOp::GE, begin, int_imm(0)));
        conds.push_back(binary(BinaryOp::LE, begin,
                               sub(cast(ScalarType::I32, r.buffer->shape[d]), int_imm(r.extent[d]))));
        continue;
      }
      const Expr begin = checked_index(r.begin[d]);
      if (!nonneg(r.begin[d]))
        conds.push_back(binary(BinaryOp::GE, begin, int_imm(0, ScalarType::I64)));
      Expr end = add(begin, int_imm(r.extent[d], ScalarType::I64));
      conds.push_back(binary(BinaryOp::LE, end, cast(ScalarType::I64, r.buffer->shape[d])));
    }
    return conds;
  }

  /// A copy is an element loop guarded at the tensor's edges; where the tensor side is a
  /// tile that can lie wholly inside the tensor, an unguarded loop for when it does comes
  /// first (one test per tile instead of one per element: targets then emit plain vector
  /// accesses).
  Stmt mutate_Copy(const Stmt &, const CopyNode *n) override {
    Region src = mutate(n->src), dst = mutate(n->dst);
    auto lower = [&](bool guarded) {
      TileLoops l = tile_loops(dst.tile_shape());
      std::vector<Expr> iv(l.vars.begin(), l.vars.end());
      auto didx = dst.index_of(iv), sidx = src.index_of(iv);
      Expr value = guarded ? read(src.buffer, sidx, dst.buffer->dtype) : cast(dst.buffer->dtype, load(src.buffer, sidx));
      return build_loops(l, guarded ? bounds(dst.buffer, didx) : std::vector<Expr>{}, store(dst.buffer, didx, value));
    };
    // Tiles loaded into shared memory (the operands of gemm loops, where registers are
    // scarcest) test their corners in 32 bits where they can.
    const bool narrow = dst.buffer->scope == Scope::Shared;
    std::vector<Expr> conds = inside(src, narrow), more = inside(dst);
    conds.insert(conds.end(), more.begin(), more.end());
    if (conds.empty())
      return lower(true);
    return if_then_else(conjunction(conds), lower(false), lower(true), /*rare_else=*/true);
  }

  Stmt mutate_Fill(const Stmt &, const FillNode *n) override {
    Region dst = mutate(n->dst);
    Expr value = cast(dst.buffer->dtype, mutate(n->value));
    // Evaluated once, before the first store: the value may read the buffer being filled.
    Stmt hoisted;
    if (!value->as<IntImmNode>() && !value->as<FloatImmNode>() && !value->as<VarNode>()) {
      Var v = make_var("fill_value", value->type);
      hoisted = declare(v, value);
      value = v;
    }
    TileLoops l = tile_loops(dst.tile_shape());
    auto didx = dst.index_of(std::vector<Expr>(l.vars.begin(), l.vars.end()));
    return seq({hoisted, build_loops(l, bounds(dst.buffer, didx), store(dst.buffer, didx, value))});
  }

  Stmt mutate_Atomic(const Stmt &self, const AtomicNode *n) override {
    if (!n->src)
      return IRMutator::mutate_Atomic(self, n);
    Region src = mutate(*n->src), dst = mutate(n->dst);
    TileLoops l = tile_loops(dst.tile_shape());
    std::vector<Expr> iv(l.vars.begin(), l.vars.end());
    Region element;
    element.buffer = dst.buffer;
    element.begin = dst.index_of(iv);
    element.extent.assign(dst.buffer->rank(), 1);
    Expr value = read(src.buffer, src.index_of(iv), arith_type(dst.buffer->dtype));
    Stmt body = std::make_shared<AtomicNode>(n->atomic_kind, element, value, std::nullopt);
    return build_loops(l, bounds(dst.buffer, element.begin), body);
  }

  Stmt mutate_Reduce(const Stmt &self, const ReduceNode *n) override {
    if (layouts_.count(n->src.get()))
      return self; // lowered with the register layout (lower-fragments)
    const Buffer &src = n->src, &dst = n->dst;
    std::vector<std::int64_t> kept;
    for (int d = 0; d < src->rank(); ++d)
      if (d != n->dim)
        kept.push_back(src->extent(d));
    // A 1-D source reduces into a [1] buffer: one iteration of a parallel loop, so that
    // one thread computes it, not every thread into the same shared element.
    if (kept.empty())
      kept.push_back(1);
    TileLoops l = tile_loops(kept);
    std::vector<Expr> didx(l.vars.begin(), l.vars.end());

    ScalarType at = reduce_accum_type(n->reduce_kind, src->dtype, dst->dtype);
    Var acc = make_var("red", at);
    Var r = make_var("r", ScalarType::I32);
    std::vector<Expr> sidx;
    for (int d = 0, k = 0; d < src->rank(); ++d)
      sidx.push_back(d == n->dim ? Expr(r) : Expr(l.vars[k++]));
    Expr next = reduce_step(n->reduce_kind, acc, load(src, sidx));
    Expr init = n->clear ? reduce_identity(n->reduce_kind, at) : reduce_convert(load(dst, didx), at);
    Stmt body = seq({declare(acc, init),
                     for_loop(r, int_imm(0), int_imm(src->extent(n->dim)), ForKind::Serial, assign(acc, next)),
                     store(dst, didx, cast(dst->dtype, acc))});
    return build_loops(l, {}, body);
  }

  Stmt mutate_Cumsum(const Stmt &, const CumsumNode *n) override {
    const Buffer &src = n->src, &dst = n->dst;
    std::vector<std::int64_t> kept;
    for (int d = 0; d < src->rank(); ++d)
      if (d != n->dim)
        kept.push_back(src->extent(d));
    if (kept.empty()) // a 1-D scan: one thread's, not every thread's in place at once
      kept.push_back(1);
    TileLoops l = tile_loops(kept);
    const std::int64_t extent = src->extent(n->dim);
    ScalarType at = arith_type(dst->dtype);
    Var acc = make_var("scan", at);
    Var t = make_var("s", ScalarType::I32);
    Expr pos = n->reverse ? sub(int_imm(extent - 1), t) : Expr(t);
    std::vector<Expr> idx;
    for (int d = 0, k = 0; d < src->rank(); ++d)
      idx.push_back(d == n->dim ? pos : Expr(l.vars[k++]));
    // Each element is read before it is written, so src and dst may be one buffer.
    Stmt step = seq({assign(acc, add(acc, cast(at, load(src, idx)))), store(dst, idx, acc)});
    Stmt body = seq({declare(acc, zero(at)), for_loop(t, int_imm(0), int_imm(extent), ForKind::Serial, step)});
    return build_loops(l, {}, body);
  }

  Stmt mutate_AnnotateLayout(const Stmt &, const AnnotateLayoutNode *) override { return seq({}); }

private:
  const LayoutMap &layouts_;
  std::set<const VarNode *> nonneg_;
  const IndexWidth width_;
  /// A tensor index for a bounds check: in 64 bits where the target indexes that wide.
  Expr checked_index(const Expr &e) const { return width_ == IndexWidth::Wide ? index64(e) : cast(ScalarType::I64, e); }
  std::set<const VarNode *> assigned_;
};

} // namespace

Expr reduce_identity(ReduceKind k, ScalarType t) {
  switch (k) {
  case ReduceKind::Max: return extreme(t, false);
  case ReduceKind::Min: return extreme(t, true);
  default: return zero(t); // sums, and absmax: |x| >= 0
  }
}

Expr reduce_combine(ReduceKind k, Expr a, Expr b) {
  switch (k) {
  case ReduceKind::Max:
  case ReduceKind::AbsMax: return binary(BinaryOp::Max, std::move(a), std::move(b));
  case ReduceKind::Min: return binary(BinaryOp::Min, std::move(a), std::move(b));
  default: return add(std::move(a), std::move(b));
  }
}

namespace {
/// Every value of integer type `b` is one of integer type `a`.
bool holds(ScalarType a, ScalarType b) {
  if (is_signed(a) == is_signed(b))
    return bits(a) >= bits(b);
  return is_signed(a) && bits(a) > bits(b);
}
} // namespace

ScalarType reduce_accum_type(ReduceKind k, ScalarType src, ScalarType dst) {
  const ScalarType at = arith_type(dst);
  if (k == ReduceKind::Sum || k == ReduceKind::AbsSum || !is_integer(at) || !is_integer(src))
    return at; // sums wrap as the destination's type does; conversions to and from floats are monotone
  // |x| of a signed element is taken in its own type (or int): a value up to 2^(bits-1).
  if (holds(at, src))
    return at;
  for (ScalarType t : {ScalarType::I32, ScalarType::I64})
    if (holds(t, src) && holds(t, at))
      return t;
  return ScalarType::U64; // u64 with a signed type: reduce_convert counts negative values as 0
}

Expr reduce_convert(Expr v, ScalarType at) {
  if (at == ScalarType::U64 && is_signed(v->type) && is_integer(v->type))
    v = binary(BinaryOp::Max, v, zero(v->type));
  return cast(at, std::move(v));
}

Expr reduce_step(ReduceKind k, Expr acc, Expr x) {
  ScalarType at = acc->type;
  return reduce_combine(k, std::move(acc), reduce_leaf(k, std::move(x), at));
}

Expr reduce_leaf(ReduceKind k, Expr x, ScalarType at) {
  if (k == ReduceKind::AbsMax || k == ReduceKind::AbsSum) {
    // |x| in x's own arithmetic type (small integers as int, as C++ promotes them), then the
    // conversion: converted first, a negative element of a signed type would become a large
    // one of an unsigned accumulator (-3 as uint8 is 253).
    ScalarType t = arith_type(x->type);
    if (t == ScalarType::Bool || (is_integer(t) && bits(t) < 32))
      t = ScalarType::I32;
    x = call(Intrinsic::Abs, {cast(t, std::move(x))});
  }
  return reduce_convert(std::move(x), at);
}

Kernel lower_tile_ops(const Kernel &kernel, IndexWidth width) {
  Lowerer lowerer(kernel, width);
  Kernel out = kernel;
  out.body = lowerer.mutate(kernel.body);
  return out;
}

} // namespace tile::transforms
