// The environment of device compilers (lib/Pipeline/ChildEnvironment.h): a sanitizer runtime
// preloaded into clang is not passed on to them; everything else is, unchanged.
#include <cstdlib>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "Pipeline/ChildEnvironment.h"
#include "Pipeline/DeviceCompiler.h"

namespace {

using tile::pipeline::device_compiler_environment;
using tile::pipeline::is_sanitizer_runtime;
using Env = std::vector<std::string>;

TEST(ChildEnvironment, SanitizerRuntimes) {
  EXPECT_TRUE(is_sanitizer_runtime("/usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.asan-x86_64.so"));
  EXPECT_TRUE(is_sanitizer_runtime("libclang_rt.ubsan_standalone-x86_64.so"));
  EXPECT_TRUE(is_sanitizer_runtime("/usr/lib/x86_64-linux-gnu/libasan.so.8"));
  EXPECT_TRUE(is_sanitizer_runtime("libtsan.so.2"));
  EXPECT_FALSE(is_sanitizer_runtime("/usr/lib/libclang_rt.builtins-x86_64.so"));
  EXPECT_FALSE(is_sanitizer_runtime("/opt/asan/libjemalloc.so"));
  EXPECT_FALSE(is_sanitizer_runtime("libfakeasan.so"));
}

TEST(ChildEnvironment, UnchangedWithoutSanitizerRuntime) {
  const char *none[] = {"PATH=/usr/bin", "HOME=/root", nullptr};
  EXPECT_EQ(device_compiler_environment(none), (Env{"PATH=/usr/bin", "HOME=/root"}));
  const char *other[] = {"PATH=/usr/bin", "LD_PRELOAD=/opt/liba.so /opt/libb.so", "ASAN_OPTIONS=x=1", nullptr};
  EXPECT_EQ(device_compiler_environment(other), (Env{"PATH=/usr/bin", "LD_PRELOAD=/opt/liba.so /opt/libb.so", "ASAN_OPTIONS=x=1"}));
}

TEST(ChildEnvironment, DropsSanitizerRuntimeKeepsTheRest) {
  const char *only[] = {"A=1", "LD_PRELOAD=/rt/libclang_rt.asan-x86_64.so", "B=2", nullptr};
  EXPECT_EQ(device_compiler_environment(only), (Env{"A=1", "B=2"}));
  const char *mixed[] = {"LD_PRELOAD=/rt/libclang_rt.asan-x86_64.so:/opt/liba.so /opt/libb.so", "PATH=/bin", nullptr};
  EXPECT_EQ(device_compiler_environment(mixed), (Env{"LD_PRELOAD=/opt/liba.so:/opt/libb.so", "PATH=/bin"}));
}

/// A device compile started from a process with a sanitizer runtime in LD_PRELOAD: the
/// compiler (a script that writes its LD_PRELOAD into the image) sees only the rest.
TEST(ChildEnvironment, DeviceCompilerDoesNotInheritSanitizerRuntime) {
  char tmpl[] = "/tmp/tile-env-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl, compiler = dir + "/fakecc";
  {
    std::ofstream s(compiler);
    s << "#!/bin/sh\n"
         "if [ \"$1\" = --version ]; then echo 'fakecc 1.0'; exit 0; fi\n"
         "out=''; prev=''; for a in \"$@\"; do [ \"$prev\" = -o ] && out=\"$a\"; prev=\"$a\"; done\n"
         "printf '[%s]' \"${LD_PRELOAD-unset}\" > \"$out\"\n";
  }
  chmod(compiler.c_str(), 0755);
  // Libraries that do not exist: ld.so says so on stderr (the log) and runs the script.
  const char *old = std::getenv("LD_PRELOAD");
  std::string saved = old ? old : "";
  setenv("LD_PRELOAD", (dir + "/libclang_rt.asan-x86_64.so:" + dir + "/libkeep.so").c_str(), 1);
  tile::pipeline::DeviceCompileJob job;
  job.target = "test";
  job.compiler = compiler;
  job.name = "env.cpp";
  job.source_suffix = ".test.cpp";
  job.image_suffix = ".img";
  job.source = "int x;\n";
  job.use_cache = false;
  auto r = tile::pipeline::compile_device_image(job);
  if (old)
    setenv("LD_PRELOAD", saved.c_str(), 1);
  else
    unsetenv("LD_PRELOAD");
  EXPECT_TRUE(r.ok) << r.log;
  EXPECT_EQ(r.image, "[" + dir + "/libkeep.so]");
  std::system(("rm -rf " + dir).c_str());
}

} // namespace
