// analysis/FragmentPressure.h: the most words of register fragments live at once, on the
// shapes of attention's loop (S and P not live together, the row vectors of one iteration
// apart from the next's) and of a loop whose fragment is read before it is written.
#include <gtest/gtest.h>

#include "analysis/FragmentPressure.h"
#include "ir/Fragment.h"
#include "ir/IR.h"

namespace tile::ir {
namespace {

struct Kernel64 {
  // 128 threads: a 64 x 64 f32 fragment is 32 words a thread, bf16 16, a 64-row vector 1
  // (matrix layouts: every thread holds 32 of a 64 x 64 tile's 4096 elements).
  Buffer acc = make_buffer("acc", Scope::Fragment, ScalarType::F32, {64, 64});
  Buffer s = make_buffer("s", Scope::Fragment, ScalarType::F32, {64, 64});
  Buffer p = make_buffer("p", Scope::Fragment, ScalarType::BF16, {64, 64});
  Buffer m = make_buffer("m", Scope::Fragment, ScalarType::F32, {64});
  Buffer ks = make_buffer("Ks", Scope::Shared, ScalarType::BF16, {64, 64});
  LayoutMap layouts;
  Kernel64() {
    for (const Buffer &b : {acc, s, p})
      layouts[b.get()] = matrix_fragment(64, 64, 128, 32);
    layouts[m.get()] = vector_fragment(64, 128, 32);
  }
  Stmt gemm(const Buffer &a, const Buffer &b, const Buffer &c, bool clear) const {
    return std::make_shared<GemmNode>(full_region(a), full_region(b), full_region(c), false, true, clear,
                                      WarpPolicy::Square);
  }
  Stmt loop(std::vector<Stmt> body) const {
    return std::make_shared<ForNode>(make_var("k", ScalarType::I32), int_imm(0), int_imm(8), int_imm(1),
                                     ForKind::Pipelined, 2, std::make_shared<SeqNode>(std::move(body)));
  }
  std::int64_t words(const Buffer &b) const {
    return (layouts.at(b.get()).slots() * bytes(b->dtype) + 3) / 4;
  }
};

TEST(FragmentPressure, AttentionsScoresAndProbabilitiesAreNotLiveTogether) {
  Kernel64 k;
  // clear(acc); fill(m); for k { s = Q K^T (cleared); m = max(m, rows of s); p = s; acc += p V }
  Stmt body = std::make_shared<SeqNode>(std::vector<Stmt>{
      std::make_shared<FillNode>(full_region(k.acc), float_imm(0.0, ScalarType::F32)),
      std::make_shared<FillNode>(full_region(k.m), float_imm(0.0, ScalarType::F32)),
      k.loop({k.gemm(k.ks, k.ks, k.s, true), std::make_shared<ReduceNode>(ReduceKind::Max, k.s, k.m, 1, false),
              std::make_shared<CopyNode>(full_region(k.s), full_region(k.p)), k.gemm(k.p, k.ks, k.acc, false)})});
  // acc and m through the loop; s, then p, never both (the copy frees s as it fills p).
  EXPECT_EQ(k.words(k.acc), 32);
  EXPECT_EQ(k.words(k.p), 16);
  EXPECT_EQ(analysis::fragment_words_live(body, k.layouts), k.words(k.acc) + k.words(k.m) + k.words(k.s));
}

TEST(FragmentPressure, AFragmentTheLoopReadsFirstLivesThroughIt) {
  Kernel64 k;
  // for k { acc += s (read before the loop's body writes it); s = Q K^T } : s is carried.
  Stmt body = std::make_shared<SeqNode>(std::vector<Stmt>{
      std::make_shared<FillNode>(full_region(k.acc), float_imm(0.0, ScalarType::F32)),
      k.loop({k.gemm(k.p, k.ks, k.acc, false), k.gemm(k.ks, k.ks, k.s, true),
              std::make_shared<CopyNode>(full_region(k.s), full_region(k.p))})});
  // p is read first in the body (the last iteration's), so it lives through the loop; s
  // lives from its gemm to the copy; at the copy, acc + p + the larger of s and p.
  EXPECT_EQ(analysis::fragment_words_live(body, k.layouts), k.words(k.acc) + k.words(k.p) + k.words(k.s));
}

TEST(FragmentPressure, AStoreIntoATensorEndsTheFragment) {
  Kernel64 k;
  // clear(acc); acc += p K^T; copy(acc, C[0:64, 0:64]): the tensor's shape is a run-time one.
  Buffer c = make_tensor_buffer("C", 0, ScalarType::F32, 2, false);
  Region out{c, {int_imm(0), int_imm(0)}, {64, 64}, {0, 1}};
  Stmt body = std::make_shared<SeqNode>(std::vector<Stmt>{
      std::make_shared<FillNode>(full_region(k.acc), float_imm(0.0, ScalarType::F32)),
      std::make_shared<FillNode>(full_region(k.p), float_imm(0.0, ScalarType::BF16)),
      k.gemm(k.p, k.ks, k.acc, false), std::make_shared<CopyNode>(full_region(k.acc), out)});
  EXPECT_EQ(analysis::fragment_words_live(body, k.layouts), k.words(k.acc) + k.words(k.p));
}

TEST(FragmentPressure, AGemmHoldsItsOperandAndItsResultTogether) {
  Kernel64 k;
  // p = ...; s = p K^T: p's last use and s's first, both live in the gemm.
  Stmt body = std::make_shared<SeqNode>(std::vector<Stmt>{
      std::make_shared<FillNode>(full_region(k.p), float_imm(0.0, ScalarType::BF16)),
      k.gemm(k.p, k.ks, k.s, true), std::make_shared<CopyNode>(full_region(k.s), full_region(k.acc))});
  EXPECT_EQ(analysis::fragment_words_live(body, k.layouts), k.words(k.p) + k.words(k.s));
}

} // namespace
} // namespace tile::ir
