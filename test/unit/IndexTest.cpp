// ir::index64 (lib/ir/IR.h): a tensor index as int64, its signed 32-bit arithmetic done in
// 64 bits, so that a tile corner past 2^31 (b * 256 + i for b >= 2^23) does not wrap around
// to a negative index (division only by positive constants); and kept in 32 bits where a
// predicate says a part's values fit.
#include <gtest/gtest.h>

#include <cstdint>

#include "ir/IR.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"

using namespace tile::ir;

namespace {

TEST(Index64, WidensSignedArithmeticAtItsLeaves) {
  Var b = make_var("b", ScalarType::I32), i = make_var("i", ScalarType::I32);
  Expr corner = add(mul(b, int_imm(256)), i);
  Expr wide = index64(corner);
  EXPECT_EQ(wide->type, ScalarType::I64);
  EXPECT_EQ(to_string(wide), "i64(b) * i64(256) + i64(i)");
  // Its value for b = 2^23 + 1, i = 5 is past 2^31, and positive.
  Substituter at;
  at.vars[b.get()] = int_imm((1 << 23) + 1);
  at.vars[i.get()] = int_imm(5);
  Expr value = at.mutate(wide);
  ASSERT_TRUE(as_const_int(value)) << to_string(value);
  EXPECT_EQ(*as_const_int(value), ((1ll << 23) + 1) * 256 + 5);
  // As it was, in 32 bits, it wrapped around to a negative index.
  Expr narrow = at.mutate(cast(ScalarType::I64, corner));
  ASSERT_TRUE(as_const_int(narrow));
  EXPECT_LT(*as_const_int(narrow), 0);
  // Subtraction, division, remainder, min, max, negation and selects too.
  Expr mixed = select(lt(i, int_imm(0)), unary(UnaryOp::Neg, sub(b, i)), binary(BinaryOp::Max, div(b, int_imm(2)), i));
  EXPECT_EQ(to_string(index64(mixed)), "select(i < 0, -(i64(b) - i64(i)), max(i64(b) / i64(2), i64(i)))");
  // Division by what may be 0 or -1 keeps its 32-bit meaning (x / 0 = 0, MIN / -1 = MIN).
  EXPECT_EQ(to_string(index64(add(div(b, i), int_imm(1)))), "i64(b / i) + i64(1)");
  EXPECT_EQ(to_string(index64(div(b, int_imm(-1)))), "i64(b / -1)");
  // 64-bit values stay as they are.
  Var n = make_var("n", ScalarType::I64);
  EXPECT_EQ(index64(n), Expr(n));
}

TEST(Index64, ConvertsWhatWrapsByDefinitionWhole) {
  // Unsigned arithmetic and shifts wrap by definition: their value is converted as it is.
  Var u = make_var("u", ScalarType::U32), b = make_var("b", ScalarType::I32);
  EXPECT_EQ(to_string(index64(add(u, cast(ScalarType::U32, int_imm(1))))), "i64(u + u32(1))");
  EXPECT_EQ(to_string(index64(binary(BinaryOp::Shl, b, int_imm(4)))), "i64(b << 4)");
  // A narrowing conversion is kept.
  Var w = make_var("w", ScalarType::I64);
  EXPECT_EQ(to_string(index64(add(cast(ScalarType::I32, w), b))), "i64(i32(w)) + i64(b)");
}

TEST(Index64, KeepsPartsThatFitIn32Bits) {
  Var b = make_var("b", ScalarType::I32), t = make_var("t", ScalarType::I32);
  Expr index = add(mul(b, int_imm(128)), add(div(t, int_imm(32)), int_imm(8)));
  auto per_thread = [&](const Expr &e) { return e->as<BinaryNode>() && to_string(e).find('b') == std::string::npos; };
  EXPECT_EQ(to_string(index64(index, per_thread)), "i64(b) * i64(128) + i64(t / 32 + 8)");
}

} // namespace
