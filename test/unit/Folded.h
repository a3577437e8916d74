// The value of an IR expression that constant folding reduced to an integer (the unit tests
// of formulas written as IR: layouts, shared layouts); a test failure naming the expression
// otherwise.
#pragma once

#include <gtest/gtest.h>

#include "ir/IR.h"
#include "ir/Printer.h"

namespace tile::ir {

inline std::int64_t folded(const Expr &e) {
  auto v = as_const_int(e);
  EXPECT_TRUE(v.has_value()) << to_string(e);
  return v ? *v : -1;
}

} // namespace tile::ir
