// Copies and fills between tensors and tile buffers on the CPU target: edge predication
// (reads past an edge and at negative indices give zero, writes past an edge do nothing),
// strided tensors and element type conversion.
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "CpuTestSupport.h"
#include "tile/types.h"

namespace {

using namespace cputest;
using namespace tile::ir;

constexpr std::int64_t rows = 37, cols = 45; // divide no tile size
constexpr std::int64_t pitch = 64;           // of the output allocation: columns past 45 are padding

bool is_poison(float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, 4);
  return u == 0xABABABABu;
}

// copy(A.at(by * 16 + dy, bx * 16 + dx), f); copy(f, B.at(by * 16, bx * 16)) with 16 x 16 tiles
// of a fragment: B(r, c) = A(r + dy, c + dx) inside A, 0 outside A, B's padding untouched.
Kernel shifted_copy(const std::string &name, int dy, int dx, ScalarType frag_type) {
  KernelBuilder kb(name);
  Buffer a = kb.tensor("A", ScalarType::F32, 2, true);
  Buffer b = kb.tensor("B", ScalarType::F32, 2);
  kb.grid(2);
  Buffer f = kb.buffer("f", Scope::Fragment, frag_type, {16, 16});
  Expr r0 = mul(kb.by(), int_imm(16)), c0 = mul(kb.bx(), int_imm(16));
  kb.add(copy(region(a, {add(r0, int_imm(dy)), add(c0, int_imm(dx))}, {16, 16}), full_region(f)));
  kb.add(copy(full_region(f), region(b, {r0, c0}, {16, 16})));
  return kb.finish();
}

void check_shifted(const Image &img, const Kernel &k, int dy, int dx, bool bf16_round) {
  auto a = random_floats(rows * cols, 7);
  std::vector<float> b(rows * pitch);
  std::memset(b.data(), 0xAB, b.size() * 4);
  std::vector<kernel_arg> args = {tensor_arg(a.data(), ScalarType::F32, {rows, cols}),
                                  tensor_arg(b.data(), ScalarType::F32, {rows, cols}, {pitch, 1})};
  launch(img.entry(k), args, (cols + 15) / 16, (rows + 15) / 16);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < pitch; ++c) {
      float got = b[r * pitch + c];
      if (c >= cols) {
        ASSERT_TRUE(is_poison(got)) << "write past the edge at " << r << ", " << c;
        continue;
      }
      std::int64_t sr = r + dy, sc = c + dx;
      float want = sr >= 0 && sr < rows && sc >= 0 && sc < cols ? a[sr * cols + sc] : 0.0f;
      if (bf16_round)
        want = float(tile::bf16(want));
      ASSERT_EQ(got, want) << k.display_name << " at " << r << ", " << c;
    }
}

TEST(CpuCopy, EdgePredicationAndConversion) {
  std::vector<Kernel> ks = {shifted_copy("copy_plain", 0, 0, ScalarType::F32),
                            shifted_copy("copy_negative", -3, -5, ScalarType::F32),
                            shifted_copy("copy_past_end", 2, 7, ScalarType::F32),
                            shifted_copy("copy_bf16", 0, 0, ScalarType::BF16)};
  auto img = Image::build(ks);
  ASSERT_TRUE(img);
  check_shifted(*img, ks[0], 0, 0, false);
  check_shifted(*img, ks[1], -3, -5, false);
  check_shifted(*img, ks[2], 2, 7, false);
  check_shifted(*img, ks[3], 0, 0, true);
}

// Lower-bound checks only where an index can be negative; no checks on tile buffers.
TEST(CpuCopy, PredicatesOnlyWhatCanCross) {
  auto ks = std::vector<Kernel>{shifted_copy("plain", 0, 0, ScalarType::F32), shifted_copy("neg", -3, 0, ScalarType::F32)};
  auto img = Image::build(ks);
  ASSERT_TRUE(img);
  const std::string &src = img->source();
  const std::size_t neg = src.find("// neg");
  ASSERT_NE(neg, std::string::npos) << src;
  const std::string plain_src = src.substr(0, neg), neg_src = src.substr(neg);
  EXPECT_EQ(plain_src.find(">= 0"), std::string::npos) << "no lower-bound check expected in kernel plain\n" << src;
  // Kernel neg: one in the test of whether the tile lies inside, one in the edge path's
  // per-row guard.
  std::size_t count = 0;
  for (std::size_t at = neg_src.find(">= 0"); at != std::string::npos; at = neg_src.find(">= 0", at + 1))
    ++count;
  EXPECT_EQ(count, 2u) << "two lower-bound checks expected in kernel neg (tile test, rows)\n" << src;
}

// A transposed view (strides [1, rows]) read through a tile and written back contiguous, with
// an f32 -> f16 -> f64 round trip.
TEST(CpuCopy, StridedTensorsAndTypes) {
  KernelBuilder kb("copy_strided");
  Buffer a = kb.tensor("A", ScalarType::F32, 2, true);
  Buffer b = kb.tensor("B", ScalarType::F64, 2);
  kb.grid(2);
  Buffer s = kb.buffer("s", Scope::Shared, ScalarType::F16, {8, 24});
  Expr r0 = mul(kb.by(), int_imm(8)), c0 = mul(kb.bx(), int_imm(24));
  kb.add(copy(region(a, {r0, c0}, {8, 24}), full_region(s)));
  kb.add(copy(full_region(s), region(b, {r0, c0}, {8, 24})));
  Kernel k = kb.finish();
  auto img = Image::build({k});
  ASSERT_TRUE(img);
  // A is the transpose of a [cols, rows] array: A(r, c) = at[c * rows + r].
  auto at = random_floats(rows * cols, 3, -100, 100);
  std::vector<double> out(rows * cols, std::nan(""));
  launch(img->entry(k),
         {tensor_arg(at.data(), ScalarType::F32, {rows, cols}, {1, rows}),
          tensor_arg(out.data(), ScalarType::F64, {rows, cols})},
         (cols + 23) / 24, (rows + 7) / 8);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      ASSERT_EQ(out[r * cols + c], double(float(tile::f16(at[c * rows + r])))) << r << ", " << c;
}

// fill of a global region is predicated like a copy; fill of a fragment from a scalar.
TEST(CpuFill, GlobalRegionAndFragment) {
  KernelBuilder kb("fills");
  Buffer b = kb.tensor("B", ScalarType::F32, 2);
  Buffer c = kb.tensor("C", ScalarType::I32, 1);
  Var v = kb.scalar("v", ScalarType::F32);
  kb.grid(2);
  Expr r0 = mul(kb.by(), int_imm(16)), c0 = mul(kb.bx(), int_imm(16));
  kb.add(fill(region(b, {r0, c0}, {16, 16}), v));
  Buffer l = kb.buffer("l", Scope::Local, ScalarType::I32, {16});
  kb.add(fill(full_region(l), add(cast(ScalarType::I32, v), kb.bx())));
  kb.add(copy(full_region(l), region(c, {add(c0, mul(kb.by(), int_imm(16 * 3)))}, {16})));
  Kernel k = kb.finish();
  auto img = Image::build({k});
  ASSERT_TRUE(img);
  std::vector<float> out(rows * pitch);
  std::memset(out.data(), 0xAB, out.size() * 4);
  std::vector<std::int32_t> cv(16 * 3 * 3 + 5, -1);
  launch(img->entry(k),
         {tensor_arg(out.data(), ScalarType::F32, {rows, cols}, {pitch, 1}),
          tensor_arg(cv.data(), ScalarType::I32, {16 * 3 * 3}), float_arg(3.5)},
         3, 3);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t col = 0; col < pitch; ++col) {
      if (col < cols)
        ASSERT_EQ(out[r * pitch + col], 3.5f);
      else
        ASSERT_TRUE(is_poison(out[r * pitch + col]));
    }
  for (int i = 0; i < 16 * 3 * 3; ++i)
    ASSERT_EQ(cv[i], 3 + i / 16 % 3) << i;
  for (int i = 16 * 3 * 3; i < int(cv.size()); ++i)
    ASSERT_EQ(cv[i], -1);
}

} // namespace
