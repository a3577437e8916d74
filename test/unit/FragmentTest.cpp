// The layout algebra (lib/ir/Fragment.h), evaluated by constant folding of the IR formula
// that lower-fragments emits: every layout places each element of its fragment in exactly
// `replicas()` threads, once per thread, every slot in range; rows and columns of a matrix
// are held by the threads that hold them in the matrix; the tensor-core layouts are the PTX
// ISA's tables for mma.m16n8k16; the printed formula has the shape the lit tests read.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "ir/Fragment.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "ir/Target.h"
#include "Folded.h"

namespace tile::ir {
namespace {

/// mma.sync m16n8k16's accumulator table, as the CUDA targets give it.
const AtomLayout &mma_atom() {
  static const AtomLayout atom = [] {
    std::string problem;
    return cuda_target("sm_90a", problem)->mma_atom("mma.sync", ScalarType::BF16, ScalarType::BF16)->accumulator;
  }();
  return atom;
}

using Index = std::vector<std::int64_t>;
using Holder = std::pair<int, std::int64_t>; // (thread, slot)

/// Every thread's every slot-digit value, through the IR formula: element -> holders.
std::map<Index, std::set<Holder>> holders(const Fragment &f) {
  std::map<Index, std::set<Holder>> m;
  for_each_place(f, [&](int t, std::int64_t slot, const Index &idx) {
    bool inside = true;
    for (int d = 0; d < f.rank(); ++d)
      inside &= idx[d] < f.shape[d];
    EXPECT_GE(slot, 0);
    EXPECT_LT(slot, f.slots()) << digits_string(f);
    if (inside)
      EXPECT_TRUE(m[idx].insert({t, slot}).second);
  });
  return m;
}

/// Each element held by exactly replicas() distinct threads, no register holding two.
void expect_well_formed(const Fragment &f) {
  auto m = holders(f);
  std::int64_t elements = 1;
  for (auto e : f.shape)
    elements *= e;
  ASSERT_EQ(std::int64_t(m.size()), elements) << digits_string(f);
  std::set<Holder> used;
  for (auto &[element, who] : m) {
    std::set<int> threads;
    for (auto &h : who) {
      threads.insert(h.first);
      EXPECT_TRUE(used.insert(h).second) << "two elements in one register: " << digits_string(f);
    }
    ASSERT_EQ(std::int64_t(threads.size()), f.replicas()) << digits_string(f);
    // The first replica is one of the holders.
    int firsts = 0;
    for (int t : threads)
      firsts += !f.first_replica(int_imm(t)) || folded(f.first_replica(int_imm(t)));
    EXPECT_EQ(firsts, 1) << digits_string(f);
  }
}

TEST(Fragment, MatrixLayoutsHoldEachElementOnce) {
  for (int threads : {32, 64, 96, 128, 256})
    for (std::int64_t rows : {1, 3, 4, 8, 16, 37})
      for (std::int64_t cols : {1, 5, 8, 16, 24, 100, 256, 1024}) {
        Fragment f = matrix_fragment(rows, cols, threads, 32);
        EXPECT_EQ(f.replicas(), 1);
        // A row's threads share a warp when there are rows enough for every warp.
        std::int64_t tc = f.digits[3].extent;
        if (rows * 32 >= threads)
          EXPECT_LE(tc, 32) << to_string(f);
        expect_well_formed(f);
        expect_well_formed(drop_dim(f, 1));
        expect_well_formed(drop_dim(f, 0));
      }
}

TEST(Fragment, VectorLayoutsLeaveSpareThreadsIdle) {
  for (int threads : {32, 128, 256})
    for (std::int64_t n : {1, 4, 5, 64, 100, 256, 4096}) {
      Fragment f = vector_fragment(n, threads, 32);
      expect_well_formed(f);
    }
}

TEST(Fragment, RowsAndColumnsAreHeldByTheMatrixThreads) {
  const int threads = 128;
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{4, 256}, {8, 16}, {3, 5}, {16, 64}}) {
    Fragment m = matrix_fragment(rows, cols, threads, 32);
    auto matrix = holders(m);
    auto row_vec = holders(drop_dim(m, 1)), col_vec = holders(drop_dim(m, 0));
    ASSERT_EQ(std::int64_t(row_vec.size()), rows);
    ASSERT_EQ(std::int64_t(col_vec.size()), cols);
    // Every thread holding (r, c) of the matrix holds r of the rows and c of the columns:
    // element-wise loops read them in their own registers.
    for (auto &[element, who] : matrix) {
      int t = who.begin()->first;
      bool has_row = false, has_col = false;
      for (auto &h : row_vec[{element[0]}])
        has_row |= h.first == t;
      for (auto &h : col_vec[{element[1]}])
        has_col |= h.first == t;
      EXPECT_TRUE(has_row && has_col) << to_string(m);
    }
    EXPECT_EQ(to_string(drop_dim(m, 1)), "rows of " + to_string(m));
    EXPECT_EQ(to_string(drop_dim(m, 0)), "columns of " + to_string(m));
    // Both dimensions dropped: every thread holds the one element.
    EXPECT_EQ(drop_dim(drop_dim(m, 1), 0).replicas(), threads);
  }
}

TEST(Fragment, MmaAccumulatorsHoldEachElementOnce) {
  for (auto [wm, wn] : {std::pair<int, int>{2, 2}, {4, 1}, {1, 4}, {2, 4}})
    for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{64, 64}, {128, 128}, {128, 64}}) {
      if (rows % (16 * wm) || cols % (8 * wn))
        continue;
      const int threads = 32 * wm * wn;
      Fragment c = mma_fragment({MmaShape::C, rows, cols, wm, wn}, threads, mma_atom());
      expect_well_formed(c);
      EXPECT_EQ(c.slots(), rows * cols / threads);
      expect_well_formed(drop_dim(c, 1)); // a row reduction's destination
      if (cols % 16 == 0)
        expect_well_formed(mma_fragment({MmaShape::A, rows, cols, wm, wn}, threads, mma_atom()));
    }
}

// PTX ISA, "Matrix Fragments for mma.m16n8k16" (16-bit A, f32 C/D): with groupID = lane / 4
// and tig = lane % 4, C register i is at row groupID + 8 (i / 2), column 2 tig + i % 2; A
// element a_i is at row groupID + 8 ((i / 2) % 2), column 2 tig + i % 2 + 8 (i / 4).
TEST(Fragment, MmaAtomsAreThePtxFragments) {
  Fragment c = mma_fragment({MmaShape::C, 16, 8, 1, 1}, 32, mma_atom());
  Fragment a = mma_fragment({MmaShape::A, 16, 16, 1, 1}, 32, mma_atom());
  auto hc = holders(c), ha = holders(a);
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, tig = lane % 4;
    for (int i = 0; i < 4; ++i)
      EXPECT_TRUE((hc[Index{g + 8 * (i / 2), 2 * tig + i % 2}].count(Holder{lane, i}))) << lane << " c" << i;
    for (int i = 0; i < 8; ++i)
      EXPECT_TRUE((ha[Index{g + 8 * ((i / 2) % 2), 2 * tig + i % 2 + 8 * (i / 4)}].count(Holder{lane, i})))
          << lane << " a" << i;
  }
}

// FlashAttention-2's P: the accumulator of S = Q K^T on warps stacked along the rows is,
// register for register, the A operand of the next gemm P V over the same warps.
TEST(Fragment, AccumulatorIsTheNextGemmsOperandOnFullRowWarps) {
  for (std::int64_t n : {32, 64, 128}) {
    Fragment c = mma_fragment({MmaShape::C, 64, n, 4, 1}, 128, mma_atom()), a = mma_fragment({MmaShape::A, 64, n, 4, 1}, 128, mma_atom());
    EXPECT_TRUE(c == a) << digits_string(c) << " vs " << digits_string(a);
    auto hc = holders(c), ha = holders(a);
    EXPECT_EQ(hc, ha);
  }
  // Over a 2 x 2 grid the operand is replicated over the N warps: not the accumulator.
  EXPECT_FALSE(mma_fragment({MmaShape::C, 64, 64, 2, 2}, 128, mma_atom()) == mma_fragment({MmaShape::A, 64, 64, 2, 2}, 128, mma_atom()));
}

// The warp size is the target's: on 64-wide wavefronts a row takes up to 64 threads, whose
// reductions then stay inside one wavefront.
TEST(Fragment, RowsTakeAWarpOfTheTargetsWidth) {
  Fragment w64 = matrix_fragment(8, 512, 256, 64), w32 = matrix_fragment(8, 512, 256, 32);
  expect_well_formed(w64);
  expect_well_formed(w32);
  EXPECT_EQ(to_string(w64), "matrix(8x512, vec 8, 4x64 threads)");
  EXPECT_EQ(to_string(w32), "matrix(8x512, vec 8, 8x32 threads)");
}

TEST(Fragment, SelectDimsPermutesAndRestricts) {
  Fragment m = matrix_fragment(16, 64, 128, 32);
  std::vector<int> origin;
  Fragment id = select_dims(m, {0, 1}, &origin);
  EXPECT_TRUE(id == m);
  EXPECT_EQ(origin.size(), m.digits.size());
  Fragment t = select_dims(m, {1, 0});
  auto hm = holders(m), ht = holders(t);
  for (auto &[element, who] : hm) {
    std::set<int> a, b;
    for (auto &h : who)
      a.insert(h.first);
    for (auto &h : ht[{element[1], element[0]}])
      b.insert(h.first);
    EXPECT_EQ(a, b);
  }
  EXPECT_TRUE(select_dims(m, {0}) == drop_dim(m, 1));
  EXPECT_FALSE(drop_dim(m, 0) == drop_dim(m, 1));
}

// The shapes lower-fragments prints (test/lit/transforms/lower-fragments.cpp reads them).
TEST(Fragment, FormulaReadsAsWritten) {
  Fragment m = matrix_fragment(4, 256, 128, 32);
  Var tid = make_var("tid", ScalarType::I32);
  std::vector<Expr> values(m.digits.size());
  for (int i : m.slot_digits())
    values[i] = make_var(m.digits[i].name, ScalarType::I32);
  EXPECT_EQ(to_string(m.index(0, tid, values)), "rs * 4 + tid / 32");
  EXPECT_EQ(to_string(m.index(1, tid, values)), "cs * 256 + tid % 32 * 8 + v");
  EXPECT_EQ(to_string(m.slot(values)), "(rs + cs) * 8 + v");
  EXPECT_EQ(to_string(drop_dim(m, 1).first_replica(tid)), "tid % 32 == 0");
  EXPECT_EQ(to_string(drop_dim(m, 0).first_replica(tid)), "tid < 32");
  EXPECT_EQ(to_string(m), "matrix(4x256, vec 8, 4x32 threads)");
  EXPECT_EQ(to_string(mma_fragment({MmaShape::C, 64, 64, 2, 2}, 128, mma_atom())), "mma(64x64, 2x2 warps of 2x4 m16n8 atoms)");
}

} // namespace
} // namespace tile::ir
