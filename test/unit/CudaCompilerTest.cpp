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
