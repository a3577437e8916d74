// Shared-memory layouts (lib/ir/SharedLayout.h): the IR formula the codegens print, folded
// to constants, equals the integer one; every layout maps a tile's elements one to one into
// its storage; a swizzle moves whole aligned 16-byte chunks within their span of the row
// (so copies of 16 bytes and ldmatrix's row segments stay whole), and spreads the same chunk
// of eight consecutive rows (ldmatrix's row segments) over distinct 16-byte bank groups (the
// bank conflicts it exists to avoid); for rows of one span it is the hardware's swizzle.
#include <gtest/gtest.h>

#include <set>

#include "ir/IR.h"
#include "ir/Printer.h"
#include "Folded.h"
#include "ir/SharedLayout.h"

namespace tile::ir {
namespace {

struct Case {
  ScalarType type;
  std::vector<std::int64_t> shape;
  std::int64_t pitch;
  int swizzle;
};

TEST(SharedLayout, OneToOneAndChunksWhole) {
  const std::vector<Case> cases = {
      {ScalarType::BF16, {64, 64}, 64, 128}, {ScalarType::BF16, {64, 64}, 72, 0},  {ScalarType::F16, {16, 32}, 32, 64},
      {ScalarType::F16, {32, 16}, 16, 32},   {ScalarType::F32, {32, 32}, 32, 128}, {ScalarType::F32, {2, 16, 64}, 64, 64},
      {ScalarType::F8E4M3, {16, 128}, 128, 128}, {ScalarType::F64, {8, 16}, 16, 128},
  };
  for (const Case &c : cases) {
    Buffer b = make_buffer("t", Scope::Shared, c.type, c.shape);
    const SharedLayout l{c.pitch, c.swizzle};
    ASSERT_EQ(fit_swizzle(*b, c.pitch, c.swizzle), c.swizzle) << to_string(l);
    const std::int64_t rows = c.shape[c.shape.size() - 2], cols = c.shape.back();
    const std::int64_t outer = c.shape.size() == 3 ? c.shape[0] : 1, v = swizzle_chunk_elements(*b);
    std::set<std::int64_t> seen;
    for (std::int64_t s = 0; s < outer; ++s)
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t col = 0; col < cols; ++col) {
          std::vector<std::int64_t> idx = c.shape.size() == 3 ? std::vector<std::int64_t>{s, r, col}
                                                               : std::vector<std::int64_t>{r, col};
          std::vector<Expr> e;
          for (auto i : idx)
            e.push_back(int_imm(i));
          const std::int64_t off = shared_offset(*b, &l, idx);
          ASSERT_EQ(folded(shared_offset(*b, &l, e)), off) << to_string(l);
          ASSERT_TRUE(seen.insert(off).second) << "two elements at " << off << " in " << to_string(l);
          ASSERT_LT(off, shared_storage_elements(*b, &l));
          // In its row, within the row's span of swizzle bytes.
          const std::int64_t row_start = (s * rows + r) * c.pitch;
          ASSERT_GE(off, row_start);
          ASSERT_LT(off, row_start + c.pitch);
          if (c.swizzle) {
            const std::int64_t span = c.swizzle / bytes(c.type);
            ASSERT_EQ((off - row_start) / span, col / span);
            // Lanes of one 16-byte chunk stay consecutive, the chunk aligned.
            ASSERT_EQ((off - row_start) % v, col % v);
          }
        }
    if (c.swizzle && bytes(c.type) == 2 && c.shape.size() == 2) {
      // Chunk 0 of rows 0..7 (ldmatrix's eight row segments) lands in distinct 16-byte bank
      // groups (of the 8 a 128-byte line has) where the rows and the swizzle allow that many:
      // the swizzle's S / 16 phases times the 128 / row bytes rows a line holds.
      const std::int64_t row_bytes = c.pitch * bytes(c.type);
      const std::int64_t want =
          std::min<std::int64_t>({8, rows, c.swizzle / 16 * std::max<std::int64_t>(1, 128 / row_bytes)});
      std::set<std::int64_t> groups;
      for (std::int64_t r = 0; r < 8 && r < rows; ++r)
        groups.insert(shared_offset(*b, &l, std::vector<std::int64_t>{r, 0}) * bytes(c.type) % 128 / 16);
      EXPECT_EQ(std::int64_t(groups.size()), want) << to_string(l);
    }
  }
}

// Slabs: a tile wider than a swizzle span stored as column slabs, each a whole rows x slab
// tile. With slab rows of one S-byte span and the S-byte swizzle (S = 32, 64, 128) this is,
// byte for byte, what Hopper's bulk tensor copy writes (and wgmma reads) from a multiple of
// 8 S bytes: the byte at address a of a dense box of S-byte rows lands at a ^ (((a >> 7) &
// (S / 16 - 1)) << 4).
TEST(SharedLayout, SlabsAreTheHardwareSwizzle) {
  for (int S : {128, 64, 32})
    for (ScalarType t : {ScalarType::BF16, ScalarType::F32, ScalarType::F8E4M3}) {
      const std::int64_t e = bytes(t), W = S / e, R = 24, C = 4 * W, stages = 2;
      Buffer b = make_buffer("t", Scope::Shared, t, {stages, R, C});
      const SharedLayout l{W, S, W};
      EXPECT_EQ(shared_storage_elements(*b, &l), stages * R * C);
      std::set<std::int64_t> seen;
      for (std::int64_t st = 0; st < stages; ++st)
        for (std::int64_t r = 0; r < R; ++r)
          for (std::int64_t c = 0; c < C; ++c) {
            const std::int64_t off = shared_offset(*b, &l, std::vector<std::int64_t>{st, r, c});
            ASSERT_TRUE(seen.insert(off).second) << "two elements at " << off;
            // The box of slab c / W: rows of S bytes, from a multiple of 8 S bytes (R * S
            // bytes a slab, R a multiple of 8).
            const std::int64_t box = (st * C / W + c / W) * R * S, dense = box + r * S + (c % W) * e;
            const std::int64_t hardware = dense ^ (((dense >> 7) & (S / 16 - 1)) << 4);
            ASSERT_EQ(off * e, hardware) << S << " " << name(t) << " (" << st << ", " << r << ", " << c << ")";
          }
      // A tile whose rows are one span: the same without slabs.
      Buffer one = make_buffer("o", Scope::Shared, t, {R, W});
      const SharedLayout rows{W, S};
      for (std::int64_t r = 0; r < R; ++r)
        for (std::int64_t c = 0; c < W; ++c) {
          const std::int64_t dense = r * S + c * e, hardware = dense ^ (((dense >> 7) & (S / 16 - 1)) << 4);
          ASSERT_EQ(shared_offset(*one, &rows, std::vector<std::int64_t>{r, c}) * e, hardware);
        }
    }
  EXPECT_EQ(to_string(SharedLayout{64, 128, 64}), "rows of 64 swizzled 128 in slabs of 64 columns");
}

TEST(SharedLayout, FitSwizzle) {
  Buffer b = make_buffer("t", Scope::Shared, ScalarType::BF16, {64, 32}); // 64-byte rows
  EXPECT_EQ(fit_swizzle(*b, 32, 128), 64);
  EXPECT_EQ(fit_swizzle(*b, 32, 32), 32);
  Buffer narrow = make_buffer("n", Scope::Shared, ScalarType::BF16, {64, 8}); // 16-byte rows
  EXPECT_EQ(fit_swizzle(*narrow, 8, 128), 0);
  Buffer vec = make_buffer("v", Scope::Shared, ScalarType::F32, {64});
  EXPECT_EQ(fit_swizzle(*vec, 64, 128), 0);
  EXPECT_EQ(to_string(SharedLayout{72, 0}), "rows of 72");
  EXPECT_EQ(to_string(SharedLayout{64, 128}), "rows of 64 swizzled 128");
}

} // namespace
} // namespace tile::ir
