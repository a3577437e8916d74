#include "analysis/Divisibility.h"

#include <numeric>

namespace tile::analysis {

using namespace ir;

std::int64_t known_divisor(const Expr &e, std::int64_t cap) {
  auto capped = [&](std::int64_t v) { return v <= 0 || v > cap ? cap : v; };
  if (!e || !is_integer(e->type))
    return 1;
  if (auto c = e->as<IntImmNode>())
    return c->value == 0 ? cap : capped(c->value < 0 ? -c->value : c->value);
  if (auto c = e->as<CastNode>())
    // A widening integer cast keeps the value; a narrowing one may wrap.
    return is_integer(c->value->type) && bits(c->type) >= bits(c->value->type) ? known_divisor(c->value, cap) : 1;
  auto b = e->as<BinaryNode>();
  if (!b)
    return 1;
  const std::int64_t x = known_divisor(b->a, cap), y = known_divisor(b->b, cap);
  switch (b->op) {
  case BinaryOp::Mul:
    return capped(x > cap / y ? cap : x * y);
  case BinaryOp::Add:
  case BinaryOp::Sub:
    return std::gcd(x, y);
  case BinaryOp::Mod:
    // a = q * c + r with c constant: r = a - q * c.
    return b->b->as<IntImmNode>() ? std::gcd(x, y) : 1;
  case BinaryOp::Shl:
    if (auto s = as_const_int(b->b); s && *s >= 0 && *s < 31)
      return capped(x > (cap >> *s) ? cap : x << *s);
    return 1;
  default:
    return 1;
  }
}

} // namespace tile::analysis
