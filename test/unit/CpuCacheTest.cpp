// The device compiler driver (lib/Pipeline/DeviceCompiler.h) and the CPU compile through
// it: the content-addressed cache (a second compile of the same input runs no compiler),
// what changes the key, compiling without an unusable cache, failures that keep the
// generated source, and emit-source.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "Pipeline/DeviceCompiler.h"
#include "targets/cpu/CpuCompiler.h"

namespace {

using tile::pipeline::DeviceCompileJob;
using tile::pipeline::DeviceCompileResult;

std::string read(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

bool exists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

/// A scratch directory with a fake compiler: `--version` prints a version; otherwise it
/// appends a line to `runs` and copies the source (the last argument) to the -o file,
/// or fails with a message when the source contains FAIL.
class DeviceCompilerTest : public testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tile-cache-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    compiler_ = dir_ + "/fakecc";
    std::ofstream s(compiler_);
    s << "#!/bin/sh\n"
         "if [ \"$1\" = --version ]; then echo 'fakecc 1.0'; exit 0; fi\n"
         "echo run >> " << dir_ << "/runs\n"
         "out=''; prev=''; for a in \"$@\"; do [ \"$prev\" = -o ] && out=\"$a\"; prev=\"$a\"; src=\"$a\"; done\n"
         "if grep -q FAIL \"$src\"; then echo \"$src:1:1: error: FAIL found\" >&2; exit 1; fi\n"
         "cp \"$src\" \"$out\"\n";
    s.close();
    chmod(compiler_.c_str(), 0755);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  DeviceCompileJob job(const std::string &source) const {
    DeviceCompileJob j;
    j.target = "test";
    j.compiler = compiler_;
    j.flags = {"-O2"};
    j.name = "unit.cpp";
    j.source_suffix = ".test.cpp";
    j.image_suffix = ".img";
    j.source = source;
    j.headers = {{"dev.h", "// device header\n"}};
    j.cache_dir = dir_ + "/cache";
    return j;
  }
  int runs() const {
    std::string r = read(dir_ + "/runs");
    int n = 0;
    for (char c : r)
      n += c == '\n';
    return n;
  }

  std::string dir_, compiler_;
};

TEST_F(DeviceCompilerTest, SecondCompileIsCachedAndRunsNoCompiler) {
  DeviceCompileResult a = compile_device_image(job("int x;\n"));
  ASSERT_TRUE(a.ok) << a.log;
  EXPECT_FALSE(a.cached);
  EXPECT_EQ(a.image, "int x;\n");
  EXPECT_EQ(runs(), 1);
  DeviceCompileResult b = compile_device_image(job("int x;\n"));
  ASSERT_TRUE(b.ok) << b.log;
  EXPECT_TRUE(b.cached);
  EXPECT_EQ(b.image, a.image);
  EXPECT_EQ(runs(), 1);
  // Entries live under the target's folder, named by their key; no temporary file is left.
  std::string key = tile::pipeline::device_cache_key(job("int x;\n"), "fakecc 1.0\n");
  EXPECT_TRUE(exists(dir_ + "/cache/test/" + key + ".img"));
  EXPECT_EQ(std::system(("test -z \"$(ls " + dir_ + "/cache/test | grep -v '\\.img$')\"").c_str()), 0);
}

TEST_F(DeviceCompilerTest, KeyCoversSourceHeadersFlagsTargetAndVersion) {
  DeviceCompileJob base = job("int x;\n");
  const std::string v = "fakecc 1.0\n";
  const std::string k = tile::pipeline::device_cache_key(base, v);
  EXPECT_EQ(k.size(), 64u);
  EXPECT_EQ(k, tile::pipeline::device_cache_key(job("int x;\n"), v));
  DeviceCompileJob j = base;
  j.source = "int y;\n";
  EXPECT_NE(tile::pipeline::device_cache_key(j, v), k);
  j = base;
  j.headers[0].text = "// changed\n";
  EXPECT_NE(tile::pipeline::device_cache_key(j, v), k);
  j = base;
  j.flags.push_back("-g");
  EXPECT_NE(tile::pipeline::device_cache_key(j, v), k);
  j = base;
  j.target = "cpu";
  EXPECT_NE(tile::pipeline::device_cache_key(j, v), k);
  EXPECT_NE(tile::pipeline::device_cache_key(base, "fakecc 2.0\n"), k);
  // Field boundaries matter: moving text from one field to the next changes the key.
  DeviceCompileJob x = base, y = base;
  x.flags = {"-O2", "-g"};
  y.flags = {"-O2-g"};
  EXPECT_NE(tile::pipeline::device_cache_key(x, v), tile::pipeline::device_cache_key(y, v));
  // A changed source compiles again.
  ASSERT_TRUE(compile_device_image(base).ok);
  DeviceCompileJob z = base;
  z.source = "int z;\n";
  ASSERT_TRUE(compile_device_image(z).ok);
  EXPECT_EQ(runs(), 2);
}

TEST_F(DeviceCompilerTest, UnusableCacheCompilesWithoutIt) {
  DeviceCompileJob j = job("int x;\n");
  j.cache_dir = dir_ + "/not-a-dir";
  std::ofstream(j.cache_dir) << "a file where the cache should be";
  for (int i = 1; i <= 2; ++i) {
    DeviceCompileResult r = compile_device_image(j);
    ASSERT_TRUE(r.ok) << r.log;
    EXPECT_FALSE(r.cached);
    EXPECT_EQ(runs(), i);
  }
  j.use_cache = false;
  j.cache_dir = dir_ + "/cache";
  ASSERT_TRUE(compile_device_image(j).ok);
  EXPECT_FALSE(exists(dir_ + "/cache"));
}

TEST_F(DeviceCompilerTest, FailureKeepsTheSource) {
  DeviceCompileResult r = compile_device_image(job("FAIL here\n"));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.image.empty());
  EXPECT_NE(r.log.find("error: FAIL found"), std::string::npos) << r.log;
  ASSERT_FALSE(r.source_path.empty());
  EXPECT_EQ(r.source_path.substr(r.source_path.size() - std::string("unit.test.cpp").size()), "unit.test.cpp");
  EXPECT_EQ(read(r.source_path), "FAIL here\n");
  std::string dir = r.source_path.substr(0, r.source_path.rfind('/'));
  EXPECT_EQ(read(dir + "/dev.h"), "// device header\n");
  std::system(("rm -rf " + dir).c_str());
  // Nothing was cached.
  EXPECT_FALSE(compile_device_image(job("FAIL here\n")).cached);
}

TEST_F(DeviceCompilerTest, MissingCompiler) {
  DeviceCompileJob j = job("int x;\n");
  j.compiler = "tile-no-such-compiler";
  DeviceCompileResult r = compile_device_image(j);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("tile-no-such-compiler"), std::string::npos) << r.log;
}

TEST_F(DeviceCompilerTest, EmitSource) {
  DeviceCompileJob j = job("int x;\n");
  j.emit_source_dir = dir_ + "/emitted/sub";
  ASSERT_TRUE(compile_device_image(j).ok);
  EXPECT_EQ(read(dir_ + "/emitted/sub/unit.test.cpp"), "int x;\n");
  EXPECT_EQ(read(dir_ + "/emitted/sub/dev.h"), "// device header\n");
  // Also when the image comes from the cache.
  std::system(("rm -rf " + dir_ + "/emitted").c_str());
  DeviceCompileResult r = compile_device_image(j);
  EXPECT_TRUE(r.cached);
  EXPECT_EQ(read(dir_ + "/emitted/sub/unit.test.cpp"), "int x;\n");
}

TEST(DeviceCompilerDefaults, CacheDirectoryFromEnvironment) {
  std::string xdg = std::getenv("XDG_CACHE_HOME") ? std::getenv("XDG_CACHE_HOME") : "";
  std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  EXPECT_EQ(tile::pipeline::default_cache_dir(), "/x/cache/tile");
  setenv("XDG_CACHE_HOME", "", 1);
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(tile::pipeline::default_cache_dir(), "/home/u/.cache/tile");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  EXPECT_EQ(tile::pipeline::default_cache_dir(), "");
  if (!xdg.empty())
    setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
  if (!home.empty())
    setenv("HOME", home.c_str(), 1);
}

// The real CPU compile: a shared object; the second time from the cache.
TEST(CpuCompiler, CompilesAndCaches) {
  char tmpl[] = "/tmp/tile-cpu-cache-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  tile::cpu::CompileOptions o;
  o.cache_dir = std::string(tmpl) + "/cache";
  const std::string src = "#include \"tile_cpu.h\"\nextern \"C\" int tile_probe() { return 42; }\n";
  auto a = tile::cpu::compile_cpu_image(src, "probe.cpp", o);
  ASSERT_TRUE(a.ok) << a.log;
  EXPECT_FALSE(a.cached);
  EXPECT_EQ(a.image.substr(0, 4), "\x7f" "ELF");
  auto b = tile::cpu::compile_cpu_image(src, "probe.cpp", o);
  ASSERT_TRUE(b.ok);
  EXPECT_TRUE(b.cached);
  EXPECT_EQ(a.image, b.image);
  // A compile error names the kept file.
  auto c = tile::cpu::compile_cpu_image(src + "this is not C++;\n", "probe.cpp", o);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.log.find("probe.cpu.cpp"), std::string::npos) << c.log;
  EXPECT_NE(c.log.find("error"), std::string::npos) << c.log;
  EXPECT_TRUE(exists(c.source_path));
  EXPECT_TRUE(exists(c.source_path.substr(0, c.source_path.rfind('/')) + "/tile_cpu.h"));
  EXPECT_TRUE(exists(c.source_path.substr(0, c.source_path.rfind('/')) + "/tile_scalar.h"));
  std::system(("rm -rf " + c.source_path.substr(0, c.source_path.rfind('/')) + " " + tmpl).c_str());
  ASSERT_EQ(tile::cpu::cpu_headers().size(), 2u);
  EXPECT_EQ(tile::cpu::cpu_headers()[0].name, "tile_cpu.h");
  EXPECT_EQ(tile::cpu::cpu_headers()[1].name, "tile_scalar.h"); // shared with the host API
}

} // namespace
