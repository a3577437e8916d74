// known_divisor (lib/analysis/Divisibility.h): what an index expression is always a multiple
// of, checked against every value of its variables over a range.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "analysis/Divisibility.h"
#include "ir/IR.h"

using namespace tile::ir;
using tile::analysis::known_divisor;

namespace {

/// Evaluates integer expressions of +, -, *, /, % (C semantics), casts and constants.
std::int64_t eval(const Expr &e, const std::map<const VarNode *, std::int64_t> &env) {
  if (auto c = e->as<IntImmNode>())
    return c->value;
  if (auto v = e->as<VarNode>())
    return env.at(v);
  if (auto c = e->as<CastNode>())
    return eval(c->value, env);
  auto b = e->as<BinaryNode>();
  const std::int64_t x = eval(b->a, env), y = eval(b->b, env);
  switch (b->op) {
  case BinaryOp::Add: return x + y;
  case BinaryOp::Sub: return x - y;
  case BinaryOp::Mul: return x * y;
  case BinaryOp::Div: return x / y;
  case BinaryOp::Mod: return x % y;
  case BinaryOp::Shl: return x << y;
  default: ADD_FAILURE() << "unexpected operator"; return 0;
  }
}

} // namespace

TEST(Divisibility, HoldsForEveryValue) {
  Var t = make_var("t", ScalarType::I32), s = make_var("s", ScalarType::I32);
  struct Case {
    Expr e;
    std::int64_t expected;
  };
  const std::vector<Case> cases = {
      // A cp.async destination: stage * 9216 + row * 72 + (t % 8) * 8 elements.
      {add(mul(binary(BinaryOp::Mod, s, int_imm(3)), int_imm(9216)),
           add(mul(div(t, int_imm(8)), int_imm(72)), mul(binary(BinaryOp::Mod, t, int_imm(8)), int_imm(8)))),
       8},
      {mul(t, int_imm(6)), 6},
      {add(mul(t, int_imm(6)), int_imm(4)), 2},
      {sub(mul(t, int_imm(12)), mul(s, int_imm(8))), 4},
      {binary(BinaryOp::Mod, mul(t, int_imm(12)), int_imm(8)), 4}, // a multiple of 12, mod 8
      {binary(BinaryOp::Mod, mul(t, int_imm(12)), s), 1},          // modulus not constant
      {div(mul(t, int_imm(8)), int_imm(2)), 1},                      // division: nothing known
      {binary(BinaryOp::Shl, t, int_imm(4)), 16},
      {cast(ScalarType::I64, mul(t, int_imm(16))), 16},
      {int_imm(0), std::int64_t(1) << 30},
      {t, 1},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::int64_t g = known_divisor(cases[i].e);
    EXPECT_EQ(g, cases[i].expected) << "case " << i;
    for (std::int64_t tv = -40; tv <= 40; ++tv)
      for (std::int64_t sv : {1, 2, 3, 5, 7, 11}) {
        const std::int64_t v = eval(cases[i].e, {{t.get(), tv}, {s.get(), sv}});
        ASSERT_EQ(v % g, 0) << "case " << i << " at t = " << tv << ", s = " << sv;
      }
  }
}
