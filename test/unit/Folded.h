// The value of an IR expression that constant folding reduced to an integer (the unit tests
// of formulas written as IR: layouts, shared layouts); a test failure naming the expression
// otherwise.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "ir/IR.h"
#include "ir/Printer.h"

namespace tile::ir {

inline std::int64_t folded(const Expr &e) {
  auto v = as_const_int(e);
  EXPECT_TRUE(v.has_value()) << to_string(e);
  return v ? *v : -1;
}

/// Calls `f(thread, slot, index)` for every thread of `fr` that holds anything and every
/// value of its slot digits, through the layout's IR formula, folded.
inline void for_each_place(const Fragment &fr,
                           const std::function<void(int, std::int64_t, const std::vector<std::int64_t> &)> &f) {
  std::vector<int> sd = fr.slot_digits();
  std::int64_t combos = 1;
  for (int i : sd)
    combos *= fr.digits[i].extent;
  for (int t = 0; t < fr.threads; ++t) {
    Expr tid = int_imm(t);
    if (Expr h = fr.holds(tid); h && !folded(h))
      continue;
    for (std::int64_t c = 0; c < combos; ++c) {
      std::vector<Expr> values(fr.digits.size());
      std::int64_t rest = c;
      for (auto it = sd.rbegin(); it != sd.rend(); ++it) {
        values[*it] = int_imm(rest % fr.digits[*it].extent);
        rest /= fr.digits[*it].extent;
      }
      std::vector<std::int64_t> idx;
      for (int d = 0; d < fr.rank(); ++d)
        idx.push_back(folded(fr.index(d, tid, values)));
      f(t, folded(fr.slot(values)), idx);
    }
  }
}

} // namespace tile::ir
