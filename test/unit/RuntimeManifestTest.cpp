#include <gtest/gtest.h>

#include "runtime/Manifest.h"
#include "tile/host.h"

namespace tile::runtime {
namespace {

TEST(RuntimeManifest, ParsesKernelsAndSignatures) {
  Manifest m =
      parse_manifest("tile-image 1\n"
                     "target cpu\n"
                     "kernel _Z3addv tile_add 128 t0x2,t12x1,s6 add<128>(tile::tensor<float, 2>)\n"
                     "kernel _Z4noopv tile_noop 32 - noop\n");
  EXPECT_EQ(m.target, "cpu");
  ASSERT_EQ(m.kernels.size(), 2u);
  const KernelInfo &add = m.kernels[0];
  EXPECT_EQ(add.key, "_Z3addv");
  EXPECT_EQ(add.symbol, "tile_add");
  EXPECT_EQ(add.threads, 128);
  EXPECT_EQ(add.display_name, "add<128>(tile::tensor<float, 2>)");
  ASSERT_EQ(add.params.size(), 3u);
  EXPECT_EQ(add.params[0], (ParamSignature{true, 0, 2}));
  EXPECT_EQ(add.params[1], (ParamSignature{true, 12, 1}));
  EXPECT_EQ(add.params[2], (ParamSignature{false, 6, 0}));
  EXPECT_TRUE(m.kernels[1].params.empty());
  EXPECT_EQ(m.kernels[1].display_name, "noop");
}

TEST(RuntimeManifest, Version2HasSharedMemorySizes) {
  Manifest m = parse_manifest("tile-image 2\n"
                              "target cuda\n"
                              "kernel _Z3addv tile_add 128 81920 t0x2,s6 add\n"
                              "kernel _Z4noopv tile_noop 32 0 - noop\n");
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.kernels[0].threads, 128);
  EXPECT_EQ(m.kernels[0].shared_bytes, 81920);
  EXPECT_EQ(m.kernels[0].params.size(), 2u);
  EXPECT_EQ(m.kernels[0].display_name, "add");
  EXPECT_EQ(m.kernels[1].shared_bytes, 0);
  // Version 1 records have no such field.
  EXPECT_EQ(parse_manifest("tile-image 1\ntarget cpu\nkernel k s 1 - k\n").kernels[0].shared_bytes, 0);
}

TEST(RuntimeManifest, ArchitecturesFollowTheTarget) {
  Manifest m = parse_manifest("tile-image 2\ntarget cuda\narchs sm_80 compute_80\nkernel _Z1kv k 128 0 - k\n");
  EXPECT_EQ(m.archs, (std::vector<std::string>{"sm_80", "compute_80"}));
  EXPECT_TRUE(parse_manifest("tile-image 2\ntarget cuda\n").archs.empty());
  EXPECT_THROW(parse_manifest("tile-image 2\narchs sm_80\ntarget cuda\n"), tile::error);
  EXPECT_THROW(parse_manifest("tile-image 2\ntarget cuda\narchs\n"), tile::error);
  EXPECT_THROW(parse_manifest("tile-image 2\ntarget cuda\narchs sm_80\narchs sm_90a\n"), tile::error);
  EXPECT_THROW(parse_manifest("tile-image 2\ntarget cuda\nkernel _Z1kv k 128 0 - k\narchs sm_80\n"), tile::error);
  EXPECT_THROW(parse_manifest("tile-image 2\ntarget cuda\narchs sm-80\n"), tile::error);
}

TEST(RuntimeManifest, TensorMapsAndFallbackFollowTheirKernel) {
  Manifest m = parse_manifest("tile-image 2\ntarget cuda\n"
                              "kernel _Z1kv k 384 147504 t9x2,t9x2,t0x2 k\n"
                              "tmap 0 128 128x64\n"
                              "tmap 1 128 64x64\n"
                              "fallback k_fallback 256 147456\n"
                              "kernel _Z1jv j 128 0 - j\n");
  ASSERT_EQ(m.kernels.size(), 2u);
  const KernelInfo &k = m.kernels[0];
  ASSERT_EQ(k.tensor_maps.size(), 2u);
  EXPECT_EQ(k.tensor_maps[0], (TensorMapSpec{0, {128, 64}, 128}));
  EXPECT_EQ(k.tensor_maps[1], (TensorMapSpec{1, {64, 64}, 128}));
  ASSERT_TRUE(k.fallback.has_value());
  EXPECT_EQ(k.fallback->symbol, "k_fallback");
  EXPECT_EQ(k.fallback->threads, 256);
  EXPECT_EQ(k.fallback->shared_bytes, 147456);
  EXPECT_TRUE(m.kernels[1].tensor_maps.empty());
  EXPECT_FALSE(m.kernels[1].fallback.has_value());
  // The round trip of a spec's manifest spelling.
  EXPECT_EQ(to_string(k.tensor_maps[0]), "0 128 128x64");
  // A map the entry can run without (a bulk store's output).
  Manifest o = parse_manifest("tile-image 2\ntarget cuda\n"
                              "kernel _Z1kv k 384 147504 t9x2,t9x2,t9x2 k\n"
                              "tmap 0 128 128x64\n"
                              "tmap 2 128 128x64 optional\n"
                              "fallback k_fallback 256 147456\n");
  ASSERT_EQ(o.kernels[0].tensor_maps.size(), 2u);
  EXPECT_FALSE(o.kernels[0].tensor_maps[0].optional);
  EXPECT_EQ(o.kernels[0].tensor_maps[1], (TensorMapSpec{2, {128, 64}, 128, true}));
  EXPECT_EQ(to_string(o.kernels[0].tensor_maps[1]), "2 128 128x64 optional");

  const std::string head = "tile-image 2\ntarget cuda\nkernel _Z1kv k 384 0 t9x2,s6 k\n";
  for (const char *bad : {
           "tmap 0 128 128x64\n",                         // no fallback
           "tmap 0 128 128x64\nkernel _Z1jv j 1 0 - j\n", // none before the next kernel
           "fallback k_f 256 0\n",                        // a fallback without maps
           "tmap 1 128 128x64\nfallback k_f 256 0\n",     // a scalar parameter
           "tmap 2 128 128x64\nfallback k_f 256 0\n",     // no such parameter
           "tmap 0 48 128x64\nfallback k_f 256 0\n",      // no such swizzle
           "tmap 0 128 128\nfallback k_f 256 0\n",        // one extent for a rank-2 tensor
           "tmap 0 128 512x64\nfallback k_f 256 0\n",     // an extent past 256
           "tmap 0 128 128x0\nfallback k_f 256 0\n",      // an empty box
           "tmap 0 128 128x64x\nfallback k_f 256 0\n",    // a trailing x
           "tmap 0 128 128x64\nfallback k_f 0 0\n",       // no threads
           "tmap 0 128 128x64\nfallback k_f 256\n",       // no shared size
           "tmap 0 128 128x64\nfallback k_f 256 0\nfallback k_g 256 0\n",
           "tmap 0 128 128x64\nfallback k_f 256 0\ntmap 0 128 64x64\n",
           "tmap 0 128 128x64 required\nfallback k_f 256 0\n",   // no such flag
           "tmap 0 128 128x64 optional x\nfallback k_f 256 0\n"}) { // more after it
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_manifest(head + bad), tile::error);
  }
  EXPECT_THROW(parse_manifest("tile-image 2\ntarget cuda\ntmap 0 128 128x64\n"), tile::error);
}

TEST(RuntimeManifest, PersistentFollowsTheTensorMapsOnce) {
  Manifest m = parse_manifest("tile-image 2\ntarget cuda\n"
                              "kernel _Z1kv k 384 0 t9x2,t9x2,t0x2 k\n"
                              "tmap 0 128 128x64\n"
                              "persistent\n"
                              "fallback k_fallback 256 0\n"
                              "kernel _Z1jv j 384 0 t9x2 j\n"
                              "tmap 0 128 128x64\n"
                              "fallback j_fallback 256 0\n");
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_TRUE(m.kernels[0].persistent);
  EXPECT_FALSE(m.kernels[1].persistent);
  const std::string head = "tile-image 2\ntarget cuda\nkernel _Z1kv k 384 0 t9x2 k\n";
  for (const char *bad : {
           "persistent\n",                                               // no tensor maps
           "tmap 0 128 128x64\npersistent\npersistent\nfallback k_f 256 0\n", // twice
           "tmap 0 128 128x64\nfallback k_f 256 0\npersistent\n",         // after the fallback
           "tmap 0 128 128x64\npersistent 1\nfallback k_f 256 0\n"}) {    // an argument
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_manifest(head + bad), tile::error);
  }
}

TEST(RuntimeManifest, ReadsClusters) {
  Manifest m = parse_manifest("tile-image 2\ntarget cuda\n"
                              "kernel _Z1kv k 256 0 t9x2,t9x2,t0x2 k\n"
                              "tmap 0 64 128x32\n"
                              "tmap 0 64 64x32\n"
                              "cluster 2\n"
                              "fallback k_fallback 128 0\n"
                              "kernel _Z1jv j 384 0 t9x2 j\n"
                              "tmap 0 128 128x64\n"
                              "fallback j_fallback 256 0\n");
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.kernels[0].cluster, 2);
  EXPECT_EQ(m.kernels[1].cluster, 0);
  const std::string head = "tile-image 2\ntarget cuda\nkernel _Z1kv k 384 0 t9x2 k\n";
  for (const char *bad : {
           "cluster 2\n",                                                // no tensor maps
           "tmap 0 128 128x64\ncluster 2\ncluster 2\nfallback k_f 256 0\n", // twice
           "tmap 0 128 128x64\nfallback k_f 256 0\ncluster 2\n",         // after the fallback
           "tmap 0 128 128x64\ncluster 1\nfallback k_f 256 0\n",         // one block
           "tmap 0 128 128x64\ncluster 16\nfallback k_f 256 0\n",        // more than 8
           "tmap 0 128 128x64\ncluster\nfallback k_f 256 0\n",           // no size
           "tmap 0 128 128x64\ncluster 2 x\nfallback k_f 256 0\n",       // more
           "tmap 0 128 128x64\npersistent\ncluster 2\nfallback k_f 256 0\n"}) { // and persistent
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_manifest(head + bad), tile::error);
  }
}

TEST(RuntimeManifest, ReadsPairedBlocks) {
  Manifest m = parse_manifest("tile-image 2\ntarget cuda\n"
                              "kernel _Z1kv k 384 0 t9x2,t9x2,t0x2 k\n"
                              "tmap 0 64 128x32\n"
                              "pair 1\n"
                              "fallback k_fallback 128 0\n"
                              "kernel _Z1jv j 256 0 t9x2 j\n"
                              "tmap 0 128 128x64\n"
                              "fallback j_fallback 128 0\n");
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.kernels[0].pair_dim, 1);
  EXPECT_EQ(m.kernels[1].pair_dim, -1);
  const std::string head = "tile-image 2\ntarget cuda\nkernel _Z1kv k 384 0 t9x2 k\n";
  for (const char *bad : {
           "pair 0\n",                                                  // no tensor maps
           "tmap 0 128 128x64\npair 0\npair 0\nfallback k_f 256 0\n",   // twice
           "tmap 0 128 128x64\nfallback k_f 256 0\npair 0\n",           // after the fallback
           "tmap 0 128 128x64\npair 3\nfallback k_f 256 0\n",           // no such dimension
           "tmap 0 128 128x64\npair -1\nfallback k_f 256 0\n",          // negative
           "tmap 0 128 128x64\npair\nfallback k_f 256 0\n",             // no dimension
           "tmap 0 128 128x64\npair 0 x\nfallback k_f 256 0\n",         // more
           "tmap 0 128 128x64\npersistent\npair 0\nfallback k_f 256 0\n", // and persistent
           "tmap 0 128 128x64\ncluster 2\npair 0\nfallback k_f 256 0\n"}) { // and clusters
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_manifest(head + bad), tile::error);
  }
}

TEST(RuntimeManifest, ReadsTheEntryWithoutPairs) {
  Manifest m = parse_manifest("tile-image 2\ntarget cuda\n"
                              "kernel _Z1kv k 384 2048 t9x2,t9x2,t0x2 k\n"
                              "tmap 0 64 128x32\n"
                              "pair 0\n"
                              "unpaired k_unpaired 256 1024 2\n"
                              "fallback k_fallback 128 0\n"
                              "kernel _Z1jv j 384 0 t9x2 j\n"
                              "tmap 0 128 128x64\n"
                              "pair 1\n"
                              "fallback j_fallback 128 0\n");
  ASSERT_EQ(m.kernels.size(), 2u);
  const KernelInfo &k = m.kernels[0];
  ASSERT_TRUE(k.unpaired.has_value());
  EXPECT_EQ(k.unpaired->symbol, "k_unpaired");
  EXPECT_EQ(k.unpaired->threads, 256);
  EXPECT_EQ(k.unpaired->shared_bytes, 1024);
  EXPECT_EQ(k.unpaired->blocks_per_sm, 2);
  EXPECT_EQ(k.fallback->symbol, "k_fallback");
  EXPECT_FALSE(m.kernels[1].unpaired.has_value());
  // Paired only past the blocks the SMs hold alone at once: 2 an SM on 132 SMs is 264.
  EXPECT_FALSE(k.launches_paired(1, 132));
  EXPECT_FALSE(k.launches_paired(264, 132));
  EXPECT_TRUE(k.launches_paired(265, 132));
  EXPECT_TRUE(k.launches_paired(3, 1));
  EXPECT_FALSE(k.launches_paired(2, 0)); // (a device that says no SMs counts as one)
  // Without the entry, always paired; an unpaired kernel never.
  EXPECT_TRUE(m.kernels[1].launches_paired(1, 132));
  m.kernels[1].pair_dim = -1;
  EXPECT_FALSE(m.kernels[1].launches_paired(1000000, 132));
  const std::string head = "tile-image 2\ntarget cuda\nkernel _Z1kv k 384 0 t9x2 k\ntmap 0 128 128x64\n";
  for (const char *bad : {
           "unpaired k_u 256 0 2\nfallback k_f 128 0\n",                  // no pair
           "pair 0\nfallback k_f 128 0\nunpaired k_u 256 0 2\n",         // after the fallback
           "pair 0\nunpaired k_u 256 0 2\nunpaired k_u 256 0 2\nfallback k_f 128 0\n", // twice
           "pair 0\nunpaired k_u 256 0\nfallback k_f 128 0\n",           // no blocks an SM
           "pair 0\nunpaired k_u 256 0 0\nfallback k_f 128 0\n",         // none
           "pair 0\nunpaired k_u 0 0 2\nfallback k_f 128 0\n",           // no threads
           "pair 0\nunpaired k_u 256 -1 2\nfallback k_f 128 0\n",        // negative bytes
           "pair 0\nunpaired k_u 256 0 2 x\nfallback k_f 128 0\n"}) {    // more
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_manifest(head + bad), tile::error);
  }
}

TEST(RuntimeManifest, AcceptsAMissingFinalNewlineAndNoKernels) {
  EXPECT_EQ(parse_manifest("tile-image 1\ntarget cuda").target, "cuda");
  EXPECT_TRUE(parse_manifest("tile-image 1\ntarget hip\n").kernels.empty());
}

TEST(RuntimeManifest, DescribesSignatures) {
  EXPECT_EQ(to_string(ParamSignature{true, 0, 2}), "t0x2");
  EXPECT_EQ(to_string(ParamSignature{false, 6, 0}), "s6");
  EXPECT_EQ(describe(ParamSignature{true, 12, 3}), "tensor<tile::bf16, 3>");
  EXPECT_EQ(describe(ParamSignature{false, 6, 0}), "int32_t");
  EXPECT_EQ(dtype_name(99), "dtype 99");
}

/// The error message for `text`, or "" when it parses.
std::string parse_error(const std::string &text) {
  try {
    parse_manifest(text);
  } catch (const tile::error &e) {
    return e.what();
  }
  return "";
}

TEST(RuntimeManifest, RejectsMalformedManifests) {
  const std::string head = "tile-image 1\ntarget cpu\n";
  struct Case {
    std::string text;
    std::string expected; // a part of the message
  } cases[] = {
      {"", "empty"},
      {"tile-image\ntarget cpu\n", "line 1"},
      {"tile-image 3\ntarget cpu\n", "unsupported manifest version 3"},
      {"tile-image 2\ntarget cpu\nkernel k s 1 -5 - k\n", "shared memory size '-5'"},
      {"tile-image 2\ntarget cpu\nkernel k s 1 x - k\n", "shared memory size 'x'"},
      {"tile-img 1\ntarget cpu\n", "line 1"},
      {"tile-image 1\n", "no 'target' record"},
      {"tile-image 1\nkernel k s 1 - k\n", "before the 'target' record"},
      {head + "target cpu\n", "second 'target'"},
      {"tile-image 1\ntarget\n", "expected 'target <name>'"},
      {"tile-image 1\ntarget c p u\n", "expected 'target <name>'"},
      {head + "kernels k s 1 - k\n", "unknown record 'kernels'"},
      {head + "kernel k s 1 -\n", "display name"},
      {head + "kernel k s 1\n", "without parameters"},
      {head + "kernel k\n", "without symbol"},
      {head + "kernel  k s 1 - k\n", "without key"},
      {head + "kernel k s zero - k\n", "threads 'zero'"},
      {head + "kernel k s 0 - k\n", "threads '0'"},
      {head + "kernel k s -4 - k\n", "threads '-4'"},
      {head + "kernel k s 1 t0 k\n", "t<dtype>x<rank>"},
      {head + "kernel k s 1 t0x5 k\n", "rank must be 1 to 4"},
      {head + "kernel k s 1 t0x0 k\n", "rank must be 1 to 4"},
      {head + "kernel k s 1 t99x1 k\n", "unknown dtype code 99"},
      {head + "kernel k s 1 s k\n", "s<dtype>"},
      {head + "kernel k s 1 s1x1 k\n", "s<dtype>"},
      {head + "kernel k s 1 t0x1, k\n", "empty signature"},
      {head + "kernel k s 1 f0 k\n", "parameter 'f0'"},
      {head + "kernel k s 1 - k\nkernel k t 1 - k\n", "listed twice"},
  };
  for (const Case &c : cases) {
    std::string message = parse_error(c.text);
    EXPECT_NE(message.find("malformed tile image manifest"), std::string::npos) << c.text;
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.text << "\ngave: " << message;
  }
  EXPECT_NE(parse_error(head + "kernel k s 1 - k\nbogus\n").find("line 4"), std::string::npos);
}

} // namespace
} // namespace tile::runtime
