// The layout algebra (lib/ir/Layout.h): every matrix and accumulator layout places each
// element of its fragment in exactly one thread's registers, every slot of a thread in
// range; row and column vectors give each row (column) to exactly the threads that hold
// that row (column) of the matrix. Exhaustively, over shapes that divide no thread count.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>

#include "ir/Layout.h"

namespace tile::ir {
namespace {

/// (row, col) -> the (thread, slot) pairs holding it, over every thread's every slot.
std::map<std::pair<std::int64_t, std::int64_t>, std::set<std::pair<int, std::int64_t>>>
holders(const FragmentLayout &l, int threads) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::set<std::pair<int, std::int64_t>>> m;
  const bool mma = l.kind == FragmentLayout::MmaAccumulator;
  const std::int64_t rows = mma ? l.atoms_m() : l.kind == FragmentLayout::ColumnVector ? 1 : l.row_steps();
  const std::int64_t cols = mma ? l.atoms_n() : l.kind == FragmentLayout::RowVector ? 1 : l.col_steps();
  const std::int64_t lanes = mma ? 4 : l.kind == FragmentLayout::RowVector ? 1 : l.vec;
  for (int t = 0; t < threads; ++t)
    for (std::int64_t rs = 0; rs < rows; ++rs)
      for (std::int64_t cs = 0; cs < cols; ++cs)
        for (std::int64_t v = 0; v < lanes; ++v) {
          ElementPlace p = element_at(l, t, rs, cs, v);
          EXPECT_GE(p.slot, 0);
          EXPECT_LT(p.slot, l.slots()) << to_string(l);
          if (p.row < l.rows)
            m[{p.row, p.col}].insert({t, p.slot});
        }
  return m;
}

TEST(Layout, MatrixLayoutsHoldEachElementOnce) {
  for (int threads : {32, 64, 96, 128, 256})
    for (std::int64_t rows : {1, 3, 4, 8, 16, 37})
      for (std::int64_t cols : {1, 5, 8, 16, 24, 100, 256, 1024}) {
        FragmentLayout l = matrix_layout(rows, cols, threads);
        EXPECT_EQ(l.row_threads * l.threads_per_row, threads) << to_string(l);
        EXPECT_EQ(cols % (l.vec * l.threads_per_row), 0) << to_string(l);
        // A row's threads share a warp when there are rows enough for every warp; a row
        // over several warps spans whole warps and no more threads than spread the rows.
        if (rows * 32 >= threads)
          EXPECT_LE(l.threads_per_row, 32) << to_string(l);
        else if (l.threads_per_row > 32)
          EXPECT_TRUE(l.threads_per_row % 32 == 0 && l.threads_per_row * rows <= threads) << to_string(l);
        auto m = holders(l, threads);
        ASSERT_EQ(std::int64_t(m.size()), rows * cols) << to_string(l);
        std::set<std::pair<int, std::int64_t>> used;
        for (auto &[element, who] : m) {
          ASSERT_EQ(who.size(), 1u) << to_string(l);
          EXPECT_TRUE(used.insert(*who.begin()).second) << "two elements in one register: " << to_string(l);
        }
      }
}

TEST(Layout, VectorsAreHeldByTheirRowsAndColumnsThreads) {
  const int threads = 128;
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{4, 256}, {8, 16}, {3, 5}, {16, 64}}) {
    FragmentLayout m = matrix_layout(rows, cols, threads);
    auto matrix = holders(m, threads);
    auto row_vec = holders(m.as(FragmentLayout::RowVector), threads);
    auto col_vec = holders(m.as(FragmentLayout::ColumnVector), threads);
    ASSERT_EQ(std::int64_t(row_vec.size()), rows);
    ASSERT_EQ(std::int64_t(col_vec.size()), cols);
    // Every thread holding an element (r, c) of the matrix holds r of the row vector and c
    // of the column vector: element-wise loops read them in their own registers.
    for (auto &[element, who] : matrix) {
      int t = who.begin()->first;
      bool has_row = false, has_col = false;
      for (auto &h : row_vec[{element.first, 0}])
        has_row |= h.first == t;
      for (auto &h : col_vec[{0, element.second}])
        has_col |= h.first == t;
      EXPECT_TRUE(has_row && has_col) << to_string(m);
    }
  }
}

TEST(Layout, MmaAccumulatorsHoldEachElementOnce) {
  for (auto [wm, wn] : {std::pair<int, int>{2, 2}, {4, 1}, {1, 4}, {2, 4}})
    for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{64, 64}, {128, 128}, {128, 64}}) {
      FragmentLayout l;
      l.kind = FragmentLayout::MmaAccumulator;
      l.rows = rows;
      l.cols = cols;
      l.warps_m = wm;
      l.warps_n = wn;
      if (rows % (16 * wm) || cols % (8 * wn))
        continue;
      auto m = holders(l, 32 * wm * wn);
      ASSERT_EQ(std::int64_t(m.size()), rows * cols) << to_string(l);
      for (auto &[element, who] : m)
        ASSERT_EQ(who.size(), 1u) << to_string(l);
    }
}

} // namespace
} // namespace tile::ir
