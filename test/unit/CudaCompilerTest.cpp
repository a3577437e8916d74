// Where the CUDA target looks for nvcc (targets/cuda/CudaCompiler.h): the directories of
// PATH in order, then $CUDA_HOME/bin, then the toolkit's usual place; nothing when no
// executable nvcc is in any of them (the compile then fails with "no nvcc was found").
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/stat.h>

#include "targets/cuda/CudaCompiler.h"

namespace {

class FindNvcc : public testing::Test {
protected:
  std::string root_;
  void SetUp() override {
    char tmpl[] = "/tmp/tile-find-nvcc-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf " + root_).c_str()); }
  /// root/dir/nvcc, executable or not.
  std::string make(const std::string &dir, bool executable = true) {
    std::system(("mkdir -p " + root_ + "/" + dir).c_str());
    const std::string file = root_ + "/" + dir + "/nvcc";
    std::ofstream(file) << "#!/bin/sh\n";
    chmod(file.c_str(), executable ? 0755 : 0644);
    return file;
  }
};

TEST_F(FindNvcc, SearchOrder) {
  const std::string in_path = make("b"), in_home = make("home/bin"), fallback = make("fallback");
  make("a", false); // not executable: skipped
  const std::string path = root_ + "/none:" + root_ + "/a:" + root_ + "/b";
  EXPECT_EQ(tile::cuda::find_nvcc(path.c_str(), (root_ + "/home").c_str(), root_ + "/fallback"), in_path);
  EXPECT_EQ(tile::cuda::find_nvcc((root_ + "/a").c_str(), (root_ + "/home").c_str(), root_ + "/fallback"), in_home);
  EXPECT_EQ(tile::cuda::find_nvcc(nullptr, nullptr, root_ + "/fallback"), fallback);
  EXPECT_EQ(tile::cuda::find_nvcc("", "", root_ + "/fallback"), fallback);
}

TEST_F(FindNvcc, NoneFound) {
  make("a", false);
  EXPECT_EQ(tile::cuda::find_nvcc((root_ + "/a:" + root_ + "/missing").c_str(), (root_ + "/home").c_str(),
                                  root_ + "/fallback"),
            "");
  EXPECT_EQ(tile::cuda::find_nvcc(nullptr, nullptr, ""), "");
}

} // namespace

namespace {

// ptxas's report in nvcc's log (-Xptxas -v): one entry per function and architecture, with
// its registers, stack and spills, and the performance messages that name it, wherever
// they come in the log.
TEST(PtxasReport, EntriesRegistersSpillsAndMessages) {
  const std::string log = "ptxas info    : 400 bytes gmem\n"
                          "ptxas info    : Compiling entry function 'k_fallback' for 'sm_90a'\n"
                          "ptxas info    : Function properties for k_fallback\n"
                          "    24 bytes stack frame, 16 bytes spill stores, 8 bytes spill loads\n"
                          "ptxas info    : Used 255 registers, used 1 barriers\n"
                          "ptxas info    : Compile time = 555.499 ms\n"
                          "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
                          "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are "
                          "serialized due to the presence of Extern calls in the function 'k'\n"
                          "ptxas info    : Function properties for k\n"
                          "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                          "ptxas info    : Used 128 registers, used 2 barriers, 1024 bytes smem\n"
                          "ptxas info    : Function properties for helper\n"
                          "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
                          "ptxas info    : Used 7 registers\n"
                          "ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
                          "ptxas info    : Function properties for k\n"
                          "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                          "ptxas info    : Used 96 registers\n"
                          "ptxas warning : (C7508) 'setmaxnreg' ignored in the function 'unknown'\n";
  const auto r = tile::cuda::parse_ptxas_report(log);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].symbol, "k_fallback");
  EXPECT_EQ(r[0].arch, "sm_90a");
  EXPECT_EQ(r[0].registers, 255);
  EXPECT_EQ(r[0].stack_bytes, 24);
  EXPECT_EQ(r[0].spill_store_bytes, 16);
  EXPECT_EQ(r[0].spill_load_bytes, 8);
  EXPECT_TRUE(r[0].messages.empty());
  EXPECT_EQ(r[1].symbol, "k");
  EXPECT_EQ(r[1].registers, 128);
  EXPECT_EQ(r[1].stack_bytes + r[1].spill_store_bytes + r[1].spill_load_bytes, 0);
  ASSERT_EQ(r[1].messages.size(), 1u);
  EXPECT_EQ(r[1].messages[0].rfind("(C7515) Potential Performance Loss: wgmma.mma_async", 0), 0u);
  EXPECT_EQ(r[2].arch, "sm_80");
  EXPECT_EQ(r[2].registers, 96);
  EXPECT_TRUE(r[2].messages.empty()); // (the message after it names another function)
  EXPECT_TRUE(tile::cuda::parse_ptxas_report("nvcc: no output\n").empty());
  // What the image cache keeps of the log: the report without the compile times (which
  // differ from compile to compile) and without nvcc's own warnings, read the same.
  const std::string kept = tile::cuda::parse_ptxas_report("x.cu(44): warning #177-D: unused\n" + log).size() == 3
                               ? tile::cuda::ptxas_report_lines("x.cu(44): warning #177-D: unused\n" + log)
                               : "";
  EXPECT_EQ(kept.find("Compile time"), std::string::npos);
  EXPECT_EQ(kept.find("#177-D"), std::string::npos);
  const auto again = tile::cuda::parse_ptxas_report(kept);
  ASSERT_EQ(again.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(again[i].symbol, r[i].symbol);
    EXPECT_EQ(again[i].registers, r[i].registers);
    EXPECT_EQ(again[i].spill_store_bytes, r[i].spill_store_bytes);
    EXPECT_EQ(again[i].messages, r[i].messages);
  }
}

} // namespace
