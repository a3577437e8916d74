// reduce_* and cumsum on the CPU target: every kind along every dimension of tiles whose
// extents are not powers of two, clearing and accumulating, against float64 references.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "CpuTestSupport.h"

namespace {

using namespace cputest;
using namespace tile::ir;

const char *kind_name(ReduceKind k) { return name(k); }

/// X (the source, shape `shape`) -> fragment; D -> dst when accumulating; reduce; dst -> O.
Kernel reduce_kernel(ReduceKind kind, const std::vector<std::int64_t> &shape, int dim, bool clear, ScalarType t) {
  std::string nm = std::string("reduce_") + kind_name(kind) + "_r" + std::to_string(shape.size()) + "_d" +
                   std::to_string(dim) + (clear ? "" : "_acc") + "_" + name(t);
  KernelBuilder kb(nm);
  const int rank = int(shape.size());
  std::vector<std::int64_t> kept;
  for (int d = 0; d < rank; ++d)
    if (d != dim)
      kept.push_back(shape[d]);
  if (kept.empty())
    kept.push_back(1);
  Buffer x = kb.tensor("X", t, rank, true), dd = kb.tensor("D", t, int(kept.size()), true);
  Buffer o = kb.tensor("O", t, int(kept.size()));
  kb.grid(1);
  Buffer src = kb.buffer("src", Scope::Fragment, t, shape);
  Buffer dst = kb.buffer("dst", Scope::Fragment, t, kept);
  std::vector<Expr> zeros(rank, int_imm(0)), kzeros(kept.size(), int_imm(0));
  kb.add(copy(region(x, zeros, shape), full_region(src)));
  if (!clear)
    kb.add(copy(region(dd, kzeros, kept), full_region(dst)));
  kb.add(std::make_shared<ReduceNode>(kind, src, dst, dim, clear));
  kb.add(copy(full_region(dst), region(o, kzeros, kept)));
  return kb.finish();
}

double combine(ReduceKind k, double acc, double x) {
  switch (k) {
  case ReduceKind::Sum: return acc + x;
  case ReduceKind::AbsSum: return acc + std::fabs(x);
  case ReduceKind::Max: return std::max(acc, x);
  case ReduceKind::Min: return std::min(acc, x);
  case ReduceKind::AbsMax: return std::max(acc, std::fabs(x));
  }
  return 0;
}

struct Case {
  ReduceKind kind;
  std::vector<std::int64_t> shape;
  int dim;
  bool clear;
  ScalarType type;
};

template <class T> void run_case(const Image &img, const Kernel &k, const Case &c, std::uint64_t seed) {
  const int rank = int(c.shape.size());
  std::int64_t n = 1;
  for (auto e : c.shape)
    n *= e;
  std::vector<std::int64_t> kept;
  for (int d = 0; d < rank; ++d)
    if (d != c.dim)
      kept.push_back(c.shape[d]);
  if (kept.empty())
    kept.push_back(1);
  std::int64_t m = 1;
  for (auto e : kept)
    m *= e;
  auto xf = random_floats(n, seed, -4, 4), df = random_floats(m, seed + 99, -4, 4);
  std::vector<T> x(xf.begin(), xf.end()), d(df.begin(), df.end()), o(m, T(-12345));
  if constexpr (std::is_floating_point_v<T>)
    std::fill(o.begin(), o.end(), std::nan(""));
  launch(img.entry(k),
         {tensor_arg(x.data(), c.type, c.shape), tensor_arg(d.data(), c.type, kept), tensor_arg(o.data(), c.type, kept)},
         1);
  // Reference: walk the source in row-major order, mapping each element to its output.
  std::vector<double> ref(m);
  std::vector<bool> started(m, false);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t rest = i, out = 0, out_stride = 1;
    std::vector<std::int64_t> idx(rank);
    for (int dd = rank - 1; dd >= 0; --dd) {
      idx[dd] = rest % c.shape[dd];
      rest /= c.shape[dd];
    }
    for (int dd = rank - 1; dd >= 0; --dd)
      if (dd != c.dim) {
        out += idx[dd] * out_stride;
        out_stride *= c.shape[dd];
      }
    double v = double(x[i]);
    if (!started[out]) {
      started[out] = true;
      ref[out] = c.clear ? combine(c.kind, c.kind == ReduceKind::Max || c.kind == ReduceKind::Min ? v : 0.0, v)
                         : combine(c.kind, double(d[out]), v);
    } else {
      ref[out] = combine(c.kind, ref[out], v);
    }
  }
  for (std::int64_t i = 0; i < m; ++i)
    ASSERT_NEAR(double(o[i]), ref[i], 1e-5 * (1 + std::fabs(ref[i]))) << k.display_name << " element " << i;
}

TEST(CpuReduce, EveryKindDimensionAndMode) {
  std::vector<Case> cases;
  for (auto kind : {ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min, ReduceKind::AbsMax, ReduceKind::AbsSum})
    for (int dim : {0, 1})
      for (bool clear : {true, false})
        cases.push_back({kind, {5, 13}, dim, clear, ScalarType::F32});
  cases.push_back({ReduceKind::Sum, {13}, 0, true, ScalarType::F32});
  cases.push_back({ReduceKind::Max, {3, 5, 7}, 1, true, ScalarType::F32});
  cases.push_back({ReduceKind::AbsSum, {3, 5, 7}, 2, false, ScalarType::F64});
  cases.push_back({ReduceKind::Min, {3, 5, 7}, 0, true, ScalarType::F64});
  // Integers: the identities of max and min are the type's extremes.
  cases.push_back({ReduceKind::Max, {5, 13}, 1, true, ScalarType::I32});
  cases.push_back({ReduceKind::Min, {5, 13}, 0, true, ScalarType::I32});
  cases.push_back({ReduceKind::Sum, {5, 13}, 1, false, ScalarType::I32});
  cases.push_back({ReduceKind::AbsMax, {5, 13}, 1, true, ScalarType::I32});
  std::vector<Kernel> ks;
  for (auto &c : cases)
    ks.push_back(reduce_kernel(c.kind, c.shape, c.dim, c.clear, c.type));
  auto img = Image::build(ks);
  ASSERT_TRUE(img);
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(ks[i].display_name);
    if (cases[i].type == ScalarType::F32)
      run_case<float>(*img, ks[i], cases[i], i + 1);
    else if (cases[i].type == ScalarType::F64)
      run_case<double>(*img, ks[i], cases[i], i + 1);
    else
      run_case<std::int32_t>(*img, ks[i], cases[i], i + 1);
  }
}

// A max over negative numbers must not come out as 0 (the identity is -inf), a min over
// positive ones not as 0 (+inf), and absmax starts at 0.
TEST(CpuReduce, Identities) {
  std::vector<Kernel> ks = {reduce_kernel(ReduceKind::Max, {4, 7}, 1, true, ScalarType::F32),
                            reduce_kernel(ReduceKind::Min, {4, 7}, 1, true, ScalarType::F32),
                            reduce_kernel(ReduceKind::AbsMax, {4, 7}, 1, true, ScalarType::F32)};
  auto img = Image::build(ks);
  ASSERT_TRUE(img);
  std::vector<float> x(28), d(4), o(4);
  for (int i = 0; i < 28; ++i)
    x[i] = -1000.0f - float(i);
  auto run = [&](int which) {
    launch(img->entry(ks[which]),
           {tensor_arg(x.data(), ScalarType::F32, {4, 7}), tensor_arg(d.data(), ScalarType::F32, {4}),
            tensor_arg(o.data(), ScalarType::F32, {4})},
           1);
  };
  run(0);
  EXPECT_EQ(o[0], -1000.0f);
  run(2);
  EXPECT_EQ(o[1], 1013.0f);
  for (auto &v : x)
    v = -v;
  run(1);
  EXPECT_EQ(o[3], 1021.0f);
}

/// cumsum(src, dst or src itself, dim, reverse) on a [6, 11] tile.
Kernel cumsum_kernel(int dim, bool reverse, bool in_place) {
  KernelBuilder kb(std::string("cumsum_d") + std::to_string(dim) + (reverse ? "_rev" : "") + (in_place ? "_inplace" : ""));
  Buffer x = kb.tensor("X", ScalarType::F32, 2, true), o = kb.tensor("O", ScalarType::F32, 2);
  kb.grid(1);
  Buffer src = kb.buffer("src", Scope::Fragment, ScalarType::F32, {6, 11});
  Buffer dst = in_place ? src : kb.buffer("dst", Scope::Shared, ScalarType::F32, {6, 11});
  kb.add(copy(region(x, {int_imm(0), int_imm(0)}, {6, 11}), full_region(src)));
  kb.add(std::make_shared<CumsumNode>(src, dst, dim, reverse));
  kb.add(copy(full_region(dst), region(o, {int_imm(0), int_imm(0)}, {6, 11})));
  return kb.finish();
}

TEST(CpuCumsum, BothDirectionsAndInPlace) {
  std::vector<Kernel> ks;
  std::vector<std::tuple<int, bool, bool>> cases;
  for (int dim : {0, 1})
    for (bool rev : {false, true})
      for (bool in_place : {false, true}) {
        ks.push_back(cumsum_kernel(dim, rev, in_place));
        cases.push_back({dim, rev, in_place});
      }
  auto img = Image::build(ks);
  ASSERT_TRUE(img);
  for (size_t c = 0; c < ks.size(); ++c) {
    auto [dim, rev, in_place] = cases[c];
    auto x = random_floats(66, c + 5);
    std::vector<float> o(66, std::nanf(""));
    launch(img->entry(ks[c]), {tensor_arg(x.data(), ScalarType::F32, {6, 11}), tensor_arg(o.data(), ScalarType::F32, {6, 11})},
           1);
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 11; ++j) {
        double ref = 0;
        const int n = dim == 0 ? 6 : 11, at = dim == 0 ? i : j;
        for (int t = 0; t < n; ++t) {
          bool included = rev ? t >= at : t <= at;
          if (included)
            ref += dim == 0 ? x[t * 11 + j] : x[i * 11 + t];
        }
        ASSERT_NEAR(o[i * 11 + j], ref, 1e-5) << ks[c].display_name << " at " << i << ", " << j;
      }
  }
}

} // namespace
