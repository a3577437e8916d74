// The device compiler driver (lib/Pipeline/DeviceCompiler.h) and the CPU compile through
// it: the content-addressed cache (a second compile of the same input runs no compiler),
// what changes the key, entries that check themselves (a damaged one is compiled again and
// replaced), compiling without an unusable cache and saying why, failures that keep the
// generated source, the time limit (the compiler and what it started are stopped), an
// interrupted build (nothing left behind), the same input compiling to the same bytes, and
// emit-source.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
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
         // HANG: a compiler that never finishes, with a child of its own; their pids in `hung`.
         "if grep -q HANG \"$src\"; then echo 'hanging' >&2; sleep 300 & echo \"$$ $!\" > " << dir_
      << "/hung.tmp; mv " << dir_ << "/hung.tmp " << dir_ << "/hung; wait; fi\n"
         // STAMP: an image that records where the source was, its time and the compiler's TMPDIR.
         "if grep -q STAMP \"$src\"; then { echo \"$src\"; stat -c %Y \"$src\"; echo \"$TMPDIR\"; } > \"$out\"; exit 0; fi\n"
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
  j = base;
  j.key_extras = {"host-cpu znver4"};
  EXPECT_NE(tile::pipeline::device_cache_key(j, v), k);
  DeviceCompileJob other_cpu = j;
  other_cpu.key_extras = {"host-cpu sapphirerapids"};
  EXPECT_NE(tile::pipeline::device_cache_key(other_cpu, v), tile::pipeline::device_cache_key(j, v));
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
    // Said, for `verbose`: which directory, and why.
    ASSERT_EQ(r.notes.size(), 1u);
    EXPECT_NE(r.notes[0].find("cannot use the image cache " + dir_ + "/not-a-dir/test: "), std::string::npos)
        << r.notes[0];
  }
  j.use_cache = false;
  j.cache_dir = dir_ + "/cache";
  ASSERT_TRUE(compile_device_image(j).ok);
  EXPECT_FALSE(exists(dir_ + "/cache"));
}

// A compiler whose `--version` fails cannot be told from another in the key: its images
// are compiled each time, not cached, and `verbose` says why.
TEST_F(DeviceCompilerTest, CompilerWithoutVersionIsNotCached) {
  const std::string cc = dir_ + "/noversion";
  {
    std::ofstream s(cc);
    s << "#!/bin/sh\nif [ \"$1\" = --version ]; then exit 1; fi\nexec " << compiler_ << " \"$@\"\n";
  }
  chmod(cc.c_str(), 0755);
  DeviceCompileJob j = job("int unversioned;\n");
  j.compiler = cc;
  for (int i = 1; i <= 2; ++i) {
    DeviceCompileResult r = compile_device_image(j);
    ASSERT_TRUE(r.ok) << r.log;
    EXPECT_FALSE(r.cached);
    EXPECT_EQ(r.image, "int unversioned;\n");
    EXPECT_EQ(runs(), i);
    ASSERT_EQ(r.notes.size(), 1u);
    EXPECT_NE(r.notes[0].find("cannot tell the version of " + cc), std::string::npos) << r.notes[0];
  }
  EXPECT_FALSE(exists(dir_ + "/cache/test"));
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

// Truncated, overwritten, emptied, from before entries had headers, or another key's: each
// is a miss (and said so), compiled again and replaced by a whole entry.
TEST_F(DeviceCompilerTest, DamagedEntriesAreCompiledAgainAndReplaced) {
  const std::string src = "int damaged;\n";
  ASSERT_TRUE(compile_device_image(job(src)).ok);
  const std::string key = tile::pipeline::device_cache_key(job(src), "fakecc 1.0\n");
  const std::string entry = dir_ + "/cache/test/" + key + ".img";
  const std::string good = read(entry);
  ASSERT_GT(good.size(), src.size());
  EXPECT_EQ(good.substr(good.size() - src.size()), src);
  const std::pair<const char *, std::string> damages[] = {
      {"truncated", good.substr(0, good.size() - 3)},
      {"overwritten", good.substr(0, good.size() - 7) + "garbage"},
      {"emptied", ""},
      {"a bare image", src},
      {"another key's", tile::pipeline::encode_cache_entry(std::string(64, '0'), src)},
  };
  int expected_runs = 1;
  for (const auto &[what, bytes] : damages) {
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << bytes;
    DeviceCompileResult r = compile_device_image(job(src));
    ASSERT_TRUE(r.ok) << what << ": " << r.log;
    EXPECT_FALSE(r.cached) << what;
    EXPECT_EQ(r.image, src) << what;
    EXPECT_EQ(runs(), ++expected_runs) << what;
    ASSERT_EQ(r.notes.size(), 1u) << what;
    EXPECT_NE(r.notes[0].find("the cached image " + entry + " is damaged"), std::string::npos) << r.notes[0];
    EXPECT_EQ(read(entry), good) << what;
    EXPECT_TRUE(compile_device_image(job(src)).cached) << what;
  }
}

TEST(DeviceCompilerCache, EntriesCheckThemselves) {
  using tile::pipeline::decode_cache_entry;
  using tile::pipeline::encode_cache_entry;
  const std::string key(64, 'a'), image("\x7f" "ELF\0\n\nbytes", 12);
  const std::string entry = encode_cache_entry(key, image);
  std::string problem;
  auto image_of = [&](const std::string &bytes) -> std::optional<std::string> {
    auto e = decode_cache_entry(bytes, key, problem);
    return e ? std::optional<std::string>(e->image) : std::nullopt;
  };
  EXPECT_EQ(image_of(entry), image);
  EXPECT_EQ(image_of(encode_cache_entry(key, "")), "");
  // The compiler's log comes back with the image, and is checked with it.
  const std::string logged = encode_cache_entry(key, image, "ptxas info    : Used 40 registers\n");
  auto both = decode_cache_entry(logged, key, problem);
  ASSERT_TRUE(both.has_value()) << problem;
  EXPECT_EQ(both->image, image);
  EXPECT_EQ(both->log, "ptxas info    : Used 40 registers\n");
  auto why = [&](const std::string &bytes, const std::string &k) {
    problem.clear();
    EXPECT_FALSE(decode_cache_entry(bytes, k, problem).has_value());
    return problem;
  };
  EXPECT_EQ(why("", key), "it is empty");
  EXPECT_EQ(why(image, key), "it is not a tile cache entry");
  EXPECT_EQ(why(entry, std::string(64, 'b')), "it holds the image of another key");
  EXPECT_EQ(why(entry.substr(0, entry.size() - 1), key), "it holds 11 bytes of an image of 12");
  EXPECT_EQ(why(entry + "x", key), "it holds 13 bytes of an image of 12");
  std::string flipped = entry;
  flipped.back() ^= 1;
  EXPECT_EQ(why(flipped, key), "its image does not match its SHA-256");
  EXPECT_EQ(why(entry.substr(0, 40), key), "its header is damaged");
  EXPECT_EQ(why(logged.substr(0, logged.size() - 1), key), "it holds 45 bytes of an image of 12 and a log of 34");
  std::string log_flipped = logged;
  log_flipped.back() ^= 1;
  EXPECT_EQ(why(log_flipped, key), "its image does not match its SHA-256");
}

// A cache that cannot be written (here: a directory where the entry goes) is said, with
// the directory and why; the image is still made, and no temporary file is left.
TEST_F(DeviceCompilerTest, CacheThatCannotBeWrittenIsSaid) {
  DeviceCompileJob j = job("int unwritable;\n");
  const std::string sub = dir_ + "/cache/test";
  ASSERT_EQ(std::system(("mkdir -p " + sub + "/" + tile::pipeline::device_cache_key(j, "fakecc 1.0\n") + ".img").c_str()), 0);
  DeviceCompileResult r = compile_device_image(j);
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_FALSE(r.cached);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("cannot write to the image cache " + sub + ": "), std::string::npos) << r.notes[0];
  EXPECT_EQ(std::system(("test -z \"$(ls " + sub + " | grep -v '\\.img$')\"").c_str()), 0);
}

/// Whether process `pid` exists and is not a zombie (killed processes whose parent is gone
/// may stay zombies where nothing reaps them).
bool alive(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(f, stat))
    return false;
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

/// Waits up to 5 s for `pid` to be gone; whether it is.
bool gone(pid_t pid) {
  for (int i = 0; i < 500 && alive(pid); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return !alive(pid);
}

/// The compiler's pid and its child's from `hung`, once it exists (up to 10 s).
std::pair<pid_t, pid_t> hung_pids(const std::string &dir) {
  for (int i = 0; i < 1000; ++i) {
    std::ifstream f(dir + "/hung");
    pid_t compiler = 0, child = 0;
    if (f >> compiler >> child)
      return {compiler, child};
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return {0, 0};
}

// A compiler that runs past the time limit is stopped with what it started; the result
// says so and keeps the generated source (and only that).
TEST_F(DeviceCompilerTest, TimeLimitStopsTheCompilerAndItsChildren) {
  DeviceCompileJob j = job("HANG\n");
  j.timeout_seconds = 1;
  const auto start = std::chrono::steady_clock::now();
  DeviceCompileResult r = compile_device_image(j);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(r.image.empty());
  EXPECT_EQ(r.program, compiler_);
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_NE(r.log.find("hanging"), std::string::npos) << r.log;
  auto [compiler, child] = hung_pids(dir_);
  ASSERT_NE(compiler, 0);
  EXPECT_TRUE(gone(compiler));
  EXPECT_TRUE(gone(child)) << "the compiler's own child " << child << " still runs";
  ASSERT_FALSE(r.source_path.empty());
  EXPECT_EQ(read(r.source_path), "HANG\n");
  const std::string kept = r.source_path.substr(0, r.source_path.rfind('/'));
  EXPECT_EQ(std::system(("test \"$(ls " + kept + " | tr '\\n' ' ')\" = 'dev.h unit.test.cpp '").c_str()), 0);
  std::system(("rm -rf " + kept).c_str());
  // Nothing was cached.
  EXPECT_FALSE(std::ifstream(dir_ + "/cache/test/" + tile::pipeline::device_cache_key(j, "fakecc 1.0\n") + ".img"));
}

// SIGTERM (or Ctrl-C) of the process running a compiler stops the compiler and what it
// started, leaves no temporary directory, and then ends the process as the signal would.
TEST_F(DeviceCompilerTest, InterruptedBuildLeavesNothingBehind) {
  const std::string tmp = dir_ + "/tmp";
  ASSERT_EQ(mkdir(tmp.c_str(), 0700), 0);
  for (int sig : {SIGTERM, SIGINT}) {
    std::remove((dir_ + "/hung").c_str());
    const pid_t build = fork();
    ASSERT_GE(build, 0);
    if (build == 0) {
      setenv("TMPDIR", tmp.c_str(), 1);
      DeviceCompileJob j = job("HANG\n");
      j.use_cache = false;
      compile_device_image(j);
      _exit(0);
    }
    auto [compiler, child] = hung_pids(dir_);
    ASSERT_NE(compiler, 0);
    kill(build, sig);
    int status = 0;
    ASSERT_EQ(waitpid(build, &status, 0), build);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "status " << status;
    EXPECT_TRUE(gone(compiler));
    EXPECT_TRUE(gone(child)) << "the compiler's own child " << child << " still runs";
    EXPECT_EQ(std::system(("test -z \"$(ls -A " + tmp + ")\"").c_str()), 0) << "left in " << tmp;
  }
}

// The same input compiles at the same path, with sources of the same time, so that a
// compiler that records them (nvcc's line info) makes the same bytes; the compiler's TMPDIR
// is that directory, which goes with it.
TEST_F(DeviceCompilerTest, SameInputCompilesAtTheSamePathAndTime) {
  DeviceCompileJob j = job("STAMP\n");
  j.use_cache = false;
  DeviceCompileResult a = compile_device_image(j);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  DeviceCompileResult b = compile_device_image(j);
  ASSERT_TRUE(a.ok && b.ok) << a.log << b.log;
  EXPECT_EQ(a.image, b.image);
  std::istringstream lines(a.image);
  std::string source, time, tmpdir;
  std::getline(lines, source);
  std::getline(lines, time);
  std::getline(lines, tmpdir);
  EXPECT_EQ(source, tmpdir + "/unit.test.cpp");
  EXPECT_FALSE(exists(tmpdir)) << "the compiler's directory is removed after it";
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

// Images are built with -march=native: the host CPU (name and features) is part of the key,
// so a cache shared between machines does not hand one the image built for another.
TEST(CpuCompiler, KeyCoversTheHostCpu) {
  const std::string host = tile::cpu::host_cpu_identity();
  EXPECT_EQ(host.rfind("host-cpu ", 0), 0u) << host;
  EXPECT_NE(host.find(" features "), std::string::npos) << host;
#if defined(__x86_64__)
  EXPECT_NE(host.find("sse2"), std::string::npos) << host;
#endif
  EXPECT_EQ(host, tile::cpu::host_cpu_identity());
  tile::pipeline::DeviceCompileJob job = tile::cpu::cpu_compile_job("int x;\n", "k.cpp", {});
  ASSERT_EQ(job.key_extras, std::vector<std::string>{host});
  tile::pipeline::DeviceCompileJob elsewhere = job;
  elsewhere.key_extras = {"host-cpu other features +sse2"};
  EXPECT_NE(tile::pipeline::device_cache_key(job, "v"), tile::pipeline::device_cache_key(elsewhere, "v"));
}

} // namespace
