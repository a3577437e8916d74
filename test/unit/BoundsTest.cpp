// bounds_of (lib/analysis/Bounds.h): the range of an index expression from the ranges of
// its variables. Every value the expression takes, over every value of its variables, must
// lie in the range it gives (checked exhaustively on random expressions), and simple cases
// give the exact range.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "analysis/Bounds.h"
#include "ir/IR.h"

using namespace tile::ir;
using tile::analysis::bounds_of;
using tile::analysis::Interval;
using tile::analysis::VarRanges;

namespace {

/// C semantics in 64 bits (the analysis only answers when nothing overflows 32 bits).
std::int64_t eval(const Expr &e, const std::map<const VarNode *, std::int64_t> &env) {
  if (auto c = e->as<IntImmNode>())
    return c->value;
  if (auto v = e->as<VarNode>())
    return env.at(v);
  if (auto c = e->as<CastNode>())
    return eval(c->value, env);
  if (auto u = e->as<UnaryNode>())
    return -eval(u->a, env);
  if (auto s = e->as<SelectNode>()) {
    auto c = s->cond->as<BinaryNode>();
    return eval(c->a, env) < eval(c->b, env) ? eval(s->t, env) : eval(s->f, env);
  }
  auto b = e->as<BinaryNode>();
  const std::int64_t x = eval(b->a, env), y = eval(b->b, env);
  switch (b->op) {
  case BinaryOp::Add: return x + y;
  case BinaryOp::Sub: return x - y;
  case BinaryOp::Mul: return x * y;
  case BinaryOp::Div: return x / y;
  case BinaryOp::Mod: return x % y;
  case BinaryOp::Min: return std::min(x, y);
  case BinaryOp::Max: return std::max(x, y);
  case BinaryOp::Shl: return x << y;
  case BinaryOp::Shr: return x >> y;
  case BinaryOp::BitAnd: return x & y;
  default: ADD_FAILURE() << "unexpected operator"; return 0;
  }
}

Expr random_expr(std::mt19937 &rng, const std::vector<Var> &vars, int depth) {
  auto pick = [&](int n) { return int(rng() % unsigned(n)); };
  if (depth == 0 || pick(4) == 0)
    return pick(2) ? Expr(vars[pick(int(vars.size()))]) : int_imm(pick(41) - 20);
  Expr a = random_expr(rng, vars, depth - 1), b = random_expr(rng, vars, depth - 1);
  switch (pick(11)) {
  case 0: return add(a, b);
  case 1: return sub(a, b);
  case 2: return mul(a, b);
  case 3: return div(a, int_imm(pick(9) + 1));
  case 4: return binary(BinaryOp::Mod, a, int_imm(pick(9) + 1));
  case 5: return binary(BinaryOp::Min, a, b);
  case 6: return binary(BinaryOp::Max, a, b);
  case 7: return binary(BinaryOp::Shl, a, int_imm(pick(4)));
  case 8: return binary(BinaryOp::Shr, a, int_imm(pick(4)));
  case 9: return binary(BinaryOp::BitAnd, a, b);
  default: return select(lt(a, b), a, unary(UnaryOp::Neg, b));
  }
}

} // namespace

TEST(Bounds, ExactOnSimpleIndices) {
  Var i = make_var("i", ScalarType::I32), j = make_var("j", ScalarType::I32), n = make_var("n", ScalarType::I32);
  VarRanges r{{i.get(), {0, 63}}, {j.get(), {4, 11}}};
  auto check = [&](const Expr &e, std::int64_t lo, std::int64_t hi) {
    auto b = bounds_of(e, r);
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->lo, lo);
    EXPECT_EQ(b->hi, hi);
  };
  check(add(i, int_imm(100000)), 100000, 100063);
  check(add(i, int_imm(1)), 1, 64);
  check(div(j, int_imm(2)), 2, 5);
  check(add(mul(j, int_imm(16)), i), 64, 239);
  check(binary(BinaryOp::Mod, i, int_imm(8)), 0, 7);
  check(binary(BinaryOp::Mod, j, int_imm(16)), 4, 11); // smaller than the modulus: itself
  check(sub(int_imm(63), i), 0, 63);
  // Unknown: a variable without a range, a divisor that may be zero, an overflow of i32.
  EXPECT_FALSE(bounds_of(add(i, n), r));
  EXPECT_FALSE(bounds_of(div(i, sub(j, int_imm(4))), r));
  EXPECT_FALSE(bounds_of(mul(add(i, int_imm(1 << 30)), int_imm(4)), r));
}

TEST(Bounds, HoldsForEveryValueOfRandomExpressions) {
  std::mt19937 rng(7);
  Var x = make_var("x", ScalarType::I32), y = make_var("y", ScalarType::I32);
  int known = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const std::int64_t xlo = int(rng() % 21) - 10, ylo = int(rng() % 21) - 10;
    const Interval xr{xlo, xlo + int(rng() % 12)}, yr{ylo, ylo + int(rng() % 12)};
    Expr e = random_expr(rng, {x, y}, 3);
    auto b = bounds_of(e, {{x.get(), xr}, {y.get(), yr}});
    if (!b)
      continue;
    ++known;
    for (std::int64_t xv = xr.lo; xv <= xr.hi; ++xv)
      for (std::int64_t yv = yr.lo; yv <= yr.hi; ++yv) {
        const std::int64_t v = eval(e, {{x.get(), xv}, {y.get(), yv}});
        ASSERT_TRUE(v >= b->lo && v <= b->hi) << "trial " << trial << ": " << v << " outside [" << b->lo << ", "
                                              << b->hi << "] at x = " << xv << ", y = " << yv;
      }
  }
  EXPECT_GT(known, 1000); // the analysis answers for most of them
}
