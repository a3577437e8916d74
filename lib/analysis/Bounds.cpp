#include "analysis/Bounds.h"

#include <algorithm>
#include <initializer_list>

namespace tile::analysis {

namespace {

using ir::BinaryOp;
using ir::Expr;

/// The interval spanned by `values`, or nullopt when one overflowed (__int128 holds every
/// product and sum of two 64-bit values).
std::optional<Interval> hull(std::initializer_list<__int128> values) {
  __int128 lo = *std::min_element(values.begin(), values.end());
  __int128 hi = *std::max_element(values.begin(), values.end());
  if (lo < INT64_MIN || hi > INT64_MAX)
    return std::nullopt;
  return Interval{std::int64_t(lo), std::int64_t(hi)};
}

/// Whether every value of `i` fits in integer type `t`.
bool fits(const Interval &i, ir::ScalarType t) {
  if (!ir::is_integer(t) || t == ir::ScalarType::Bool)
    return false;
  const int n = ir::bits(t);
  if (n >= 64)
    return ir::is_signed(t) || i.lo >= 0;
  const __int128 lo = ir::is_signed(t) ? -(__int128(1) << (n - 1)) : 0;
  const __int128 hi = ir::is_signed(t) ? (__int128(1) << (n - 1)) - 1 : (__int128(1) << n) - 1;
  return i.lo >= lo && i.hi <= hi;
}

std::optional<Interval> binary(const ir::BinaryNode *n, const VarRanges &ranges) {
  auto a = bounds_of(n->a, ranges);
  auto b = a ? bounds_of(n->b, ranges) : std::nullopt;
  if (!b)
    return std::nullopt;
  std::optional<Interval> r;
  switch (n->op) {
  case BinaryOp::Add: r = hull({__int128(a->lo) + b->lo, __int128(a->hi) + b->hi}); break;
  case BinaryOp::Sub: r = hull({__int128(a->lo) - b->hi, __int128(a->hi) - b->lo}); break;
  case BinaryOp::Mul:
    r = hull({__int128(a->lo) * b->lo, __int128(a->lo) * b->hi, __int128(a->hi) * b->lo, __int128(a->hi) * b->hi});
    break;
  case BinaryOp::Div:
    // C++ division truncates toward zero; by a positive divisor it is monotonic in a.
    if (b->lo <= 0)
      return std::nullopt;
    r = hull({__int128(a->lo) / b->lo, __int128(a->lo) / b->hi, __int128(a->hi) / b->lo, __int128(a->hi) / b->hi});
    break;
  case BinaryOp::Mod:
    // a % b (b > 0) lies in [0, b - 1] for a >= 0, in [-(b - 1), b - 1] otherwise, and is a
    // itself when |a| < b.
    if (b->lo <= 0)
      return std::nullopt;
    if (a->lo >= 0 && a->hi < b->lo)
      r = a;
    else
      r = Interval{a->lo >= 0 ? 0 : -(b->hi - 1), a->hi <= 0 ? 0 : b->hi - 1};
    break;
  case BinaryOp::Min: r = Interval{std::min(a->lo, b->lo), std::min(a->hi, b->hi)}; break;
  case BinaryOp::Max: r = Interval{std::max(a->lo, b->lo), std::max(a->hi, b->hi)}; break;
  case BinaryOp::Shl:
    if (b->lo < 0 || b->hi > 62)
      return std::nullopt;
    r = hull({__int128(a->lo) << b->lo, __int128(a->lo) << b->hi, __int128(a->hi) << b->lo,
              __int128(a->hi) << b->hi});
    break;
  case BinaryOp::Shr:
    if (b->lo < 0 || b->hi > 63)
      return std::nullopt;
    r = hull({__int128(a->lo) >> b->lo, __int128(a->lo) >> b->hi, __int128(a->hi) >> b->lo,
              __int128(a->hi) >> b->hi});
    break;
  case BinaryOp::BitAnd:
    // With a non-negative operand the result lies between 0 and that operand.
    if (a->lo >= 0 && b->lo >= 0)
      r = Interval{0, std::min(a->hi, b->hi)};
    else if (a->lo >= 0)
      r = Interval{0, a->hi};
    else if (b->lo >= 0)
      r = Interval{0, b->hi};
    else
      return std::nullopt;
    break;
  default:
    return std::nullopt; // comparisons and logic are not indices
  }
  // The operation happens in the node's type: a result that does not fit wraps.
  if (!r || !fits(*r, n->type))
    return std::nullopt;
  return r;
}

} // namespace

std::optional<Interval> bounds_of(const Expr &e, const VarRanges &ranges) {
  if (!e || !ir::is_integer(e->type) || e->type == ir::ScalarType::Bool)
    return std::nullopt;
  switch (e->kind) {
  case ir::ExprKind::IntImm: {
    std::int64_t v = e->as<ir::IntImmNode>()->value;
    if (!ir::is_signed(e->type) && v < 0)
      return std::nullopt; // a u64 beyond INT64_MAX
    return Interval{v, v};
  }
  case ir::ExprKind::Var: {
    auto it = ranges.find(e->as<ir::VarNode>());
    if (it == ranges.end())
      return std::nullopt;
    return it->second;
  }
  case ir::ExprKind::Cast: {
    auto r = bounds_of(e->as<ir::CastNode>()->value, ranges);
    if (!r || !fits(*r, e->type))
      return std::nullopt; // a conversion that may wrap
    return r;
  }
  case ir::ExprKind::Binary:
    return binary(e->as<ir::BinaryNode>(), ranges);
  case ir::ExprKind::Select: {
    auto n = e->as<ir::SelectNode>();
    auto t = bounds_of(n->t, ranges);
    auto f = t ? bounds_of(n->f, ranges) : std::nullopt;
    if (!f)
      return std::nullopt;
    return Interval{std::min(t->lo, f->lo), std::max(t->hi, f->hi)};
  }
  case ir::ExprKind::Unary: {
    auto n = e->as<ir::UnaryNode>();
    if (n->op != ir::UnaryOp::Neg)
      return std::nullopt;
    auto a = bounds_of(n->a, ranges);
    if (!a)
      return std::nullopt;
    auto r = hull({-__int128(a->hi), -__int128(a->lo)});
    if (!r || !fits(*r, e->type))
      return std::nullopt;
    return r;
  }
  default:
    return std::nullopt;
  }
}

} // namespace tile::analysis
