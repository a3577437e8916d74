// The IR verifier (lib/ir/Verifier.h) on the statements of Hopper's copy engine: a bulk
// copy's or bulk store's shared tile must be in dense rows or in a swizzle (its map's, 0 for
// dense rows) from a multiple of 8 of its spans, its tensor map one of the kernel's, of a tensor parameter, with a coordinate
// per dimension, a bulk copy's map not an optional one (which a launch may not have), and
// the mask of missing maps declared exactly where a map is optional; a bulk store's commit
// or wait names a shared tile. A well-formed kernel passes; each defect is reported.
#include <gtest/gtest.h>

#include "ir/IR.h"
#include "ir/Verifier.h"

namespace tile::ir {
namespace {

/// A kernel of one tensor parameter C [M, N] (bf16) and a shared tile T [128, 128] in the
/// 128-byte swizzle in slabs of 64 columns, declared around `body(C, T)`; tensor map 0 is C
/// in boxes of 128 x 64.
Kernel with_tile(const std::function<std::vector<Stmt>(const Buffer &, const Buffer &)> &body,
                 SharedLayout layout = SharedLayout{64, 128, 64, 1024}, Scope scope = Scope::Shared) {
  Kernel k;
  k.key = k.display_name = "bulk";
  Buffer c = make_tensor_buffer("C", 0, ScalarType::BF16, 2, false);
  k.params.push_back({"C", c, nullptr});
  Buffer t = make_buffer("T", scope, ScalarType::BF16, {128, 128});
  k.shared_layouts[t.get()] = layout;
  k.tensor_maps.push_back({0, {128, 64}, 128});
  k.thread_index = make_var("tid", ScalarType::I32);
  std::vector<Stmt> stmts = {decl_buffer(t)};
  for (const Stmt &s : body(c, t))
    stmts.push_back(s);
  k.body = seq(stmts);
  return k;
}

Stmt store_of(const Buffer &t, int map, std::vector<Expr> coords) {
  return std::make_shared<BulkStoreNode>(map, std::move(coords), t, int_imm(0));
}

std::string first_problem(const Kernel &k) {
  auto p = verify(k);
  return p.empty() ? "" : p[0];
}

TEST(Verifier, WellFormedBulkStoreAndCopy) {
  Kernel k = with_tile([](const Buffer &, const Buffer &t) {
    Buffer bars = make_buffer("bars", Scope::Shared, ScalarType::U64, {1});
    return std::vector<Stmt>{
        decl_buffer(bars),
        std::make_shared<BulkCopyNode>(0, std::vector<Expr>{int_imm(0), int_imm(0)}, t, int_imm(0), bars, int_imm(0)),
        store_of(t, 0, {int_imm(0), int_imm(64)}),
        std::make_shared<BulkStoreSyncNode>(BulkStoreSyncOp::Commit, t),
        std::make_shared<BulkStoreSyncNode>(BulkStoreSyncOp::Wait, t)};
  });
  EXPECT_EQ(first_problem(k), "");
}

TEST(Verifier, BulkStoreThroughAMapTheKernelHasNot) {
  Kernel k = with_tile([](const Buffer &, const Buffer &t) {
    return std::vector<Stmt>{store_of(t, 1, {int_imm(0), int_imm(0)})};
  });
  EXPECT_NE(first_problem(k).find("bulk_store through tensor map 1 of 1"), std::string::npos) << first_problem(k);
}

TEST(Verifier, BulkStoreWithACoordinateMissing) {
  Kernel k = with_tile([](const Buffer &, const Buffer &t) { return std::vector<Stmt>{store_of(t, 0, {int_imm(0)})}; });
  EXPECT_NE(first_problem(k).find("bulk_store with 1 coordinates"), std::string::npos) << first_problem(k);
}

TEST(Verifier, BulkStoreFromATileNotInTheSwizzle) {
  // Padded rows, and the swizzles without the boundary of 8 of their spans.
  for (SharedLayout l : {SharedLayout{136, 0, 0, 0}, SharedLayout{64, 128, 64, 16}, SharedLayout{32, 64, 32, 256}}) {
    Kernel k = with_tile([](const Buffer &, const Buffer &t) {
      return std::vector<Stmt>{store_of(t, 0, {int_imm(0), int_imm(0)})};
    }, l);
    EXPECT_NE(first_problem(k).find("not a shared tile in dense rows or in a swizzle from a multiple of 8 of its spans"),
              std::string::npos)
        << first_problem(k);
  }
}

TEST(Verifier, BulkCopyIntoDenseRows) {
  // A tile in dense rows (no layout, or rows of its own width) through a map in no swizzle;
  // through the 128-byte one it is a defect.
  for (bool laid_out : {false, true})
    for (int map_swizzle : {0, 128}) {
      Kernel k = with_tile([](const Buffer &, const Buffer &t) {
        Buffer bars = make_buffer("bars", Scope::Shared, ScalarType::U64, {1});
        return std::vector<Stmt>{decl_buffer(bars),
                                 std::make_shared<BulkCopyNode>(0, std::vector<Expr>{int_imm(0), int_imm(0)}, t,
                                                                int_imm(0), bars, int_imm(0))};
      });
      const BufferNode *t = k.shared_layouts.begin()->first;
      if (laid_out)
        k.shared_layouts[t] = SharedLayout{128, 0, 0, 0};
      else
        k.shared_layouts.clear();
      k.tensor_maps[0] = {0, {128, 128}, map_swizzle};
      if (map_swizzle == 0)
        EXPECT_EQ(first_problem(k), "");
      else
        EXPECT_NE(first_problem(k).find("in the 0-byte swizzle through tensor map 0 of the 128-byte one"),
                  std::string::npos)
            << first_problem(k);
    }
}

TEST(Verifier, ClusterStatementsNeedAClusterLaunch) {
  // A multicast copy and an arrival on another block's barrier: well formed in a kernel
  // launched in clusters (with its rank, block count and partner's indices), a defect in
  // one that is not.
  for (bool clustered : {true, false}) {
    Kernel k = with_tile([](const Buffer &, const Buffer &t) {
      Buffer bars = make_buffer("bars", Scope::Shared, ScalarType::U64, {1});
      return std::vector<Stmt>{decl_buffer(bars),
                               std::make_shared<BulkCopyNode>(0, std::vector<Expr>{int_imm(0), int_imm(0)}, t,
                                                              int_imm(0), bars, int_imm(0), int_imm(3)),
                               std::make_shared<MbarrierNode>(MbarrierOp::ArriveCluster, bars, int_imm(0), int_imm(1))};
    });
    if (clustered) {
      k.cluster = 2;
      k.cluster_rank = make_var("cluster_rank", ScalarType::I32);
      k.cluster_blocks = make_var("cluster_blocks", ScalarType::I32);
      for (int d = 0; d < k.grid_rank; ++d)
        k.partner_index[d] = make_var("partner", ScalarType::I32);
      EXPECT_EQ(first_problem(k), "");
    } else {
      const auto problems = verify(k);
      ASSERT_EQ(problems.size(), 2u);
      EXPECT_NE(problems[0].find("bulk_copy multicast in a kernel not launched in clusters"), std::string::npos)
          << problems[0];
      EXPECT_NE(problems[1].find("another block's barrier in a kernel not launched in clusters"), std::string::npos)
          << problems[1];
    }
  }
  // A cluster launch without the variables the codegen declares for it.
  Kernel k = with_tile([](const Buffer &, const Buffer &) { return std::vector<Stmt>{}; });
  k.cluster = 2;
  EXPECT_NE(first_problem(k).find("a cluster launch without its rank and block count"), std::string::npos)
      << first_problem(k);
}

TEST(Verifier, BulkStoreInAnotherSwizzleThanItsMap) {
  // The tile in the 64-byte swizzle, its map in the 128-byte one.
  Kernel k = with_tile([](const Buffer &, const Buffer &t) {
    return std::vector<Stmt>{store_of(t, 0, {int_imm(0), int_imm(0)})};
  }, SharedLayout{32, 64, 32, 512});
  EXPECT_NE(first_problem(k).find("in the 64-byte swizzle through tensor map 0 of the 128-byte one"), std::string::npos)
      << first_problem(k);
}

TEST(Verifier, BulkStoreFromAFragment) {
  Kernel k = with_tile([](const Buffer &, const Buffer &t) {
    return std::vector<Stmt>{store_of(t, 0, {int_imm(0), int_imm(0)})};
  }, SharedLayout{64, 128, 64, 1024}, Scope::Fragment);
  EXPECT_NE(first_problem(k).find("which is not a shared tile in dense rows or in a swizzle"), std::string::npos) << first_problem(k);
}

TEST(Verifier, TensorMapOfAScalarParameter) {
  Kernel k = with_tile([](const Buffer &, const Buffer &t) {
    return std::vector<Stmt>{store_of(t, 0, {int_imm(0), int_imm(0)})};
  });
  k.params.insert(k.params.begin(), Param{"n", nullptr, make_var("n", ScalarType::I32)});
  EXPECT_NE(first_problem(k).find("of parameter 0, which is not a tensor"), std::string::npos) << first_problem(k);
}

TEST(Verifier, OptionalMapsGoWithTheMaskOfMissingOnes) {
  auto store = [](const Buffer &, const Buffer &t) { return std::vector<Stmt>{store_of(t, 0, {int_imm(0), int_imm(0)})}; };
  Kernel k = with_tile(store);
  k.tensor_maps[0].optional = true;
  EXPECT_NE(first_problem(k).find("optional tensor maps without a mask of missing maps"), std::string::npos)
      << first_problem(k);
  k.maps_missing = make_var("maps_missing", ScalarType::I32);
  EXPECT_EQ(first_problem(k), "");
  k.tensor_maps[0].optional = false;
  EXPECT_NE(first_problem(k).find("a mask of missing maps without optional tensor maps"), std::string::npos)
      << first_problem(k);
  // A bulk copy (the producer's loads) may not go through an optional map.
  Kernel c = with_tile([](const Buffer &, const Buffer &t) {
    Buffer bars = make_buffer("bars", Scope::Shared, ScalarType::U64, {1});
    return std::vector<Stmt>{decl_buffer(bars), std::make_shared<BulkCopyNode>(0, std::vector<Expr>{int_imm(0), int_imm(0)},
                                                                                t, int_imm(0), bars, int_imm(0))};
  });
  c.tensor_maps[0].optional = true;
  c.maps_missing = make_var("maps_missing", ScalarType::I32);
  EXPECT_NE(first_problem(c).find("bulk_copy through optional tensor map 0"), std::string::npos) << first_problem(c);
}

TEST(Verifier, BulkStoreWaitOutsideTheTilesScope) {
  Kernel k = with_tile([](const Buffer &, const Buffer &) { return std::vector<Stmt>{}; });
  Buffer other = make_buffer("U", Scope::Shared, ScalarType::BF16, {128, 64});
  k.body = seq({k.body, std::make_shared<BulkStoreSyncNode>(BulkStoreSyncOp::Wait, other)});
  EXPECT_NE(first_problem(k).find("bulk_store_sync of buffer 'U' outside its scope"), std::string::npos)
      << first_problem(k);
}

} // namespace
} // namespace tile::ir
