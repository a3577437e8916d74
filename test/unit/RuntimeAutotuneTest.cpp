// The autotuner (tile/autotune.h) on the CPU device, with plain functions as candidates
// whose running times are known (they sleep), so that which one is fastest is certain.
#include <gtest/gtest.h>

#include <tile/autotune.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace {

namespace fs = std::filesystem;
using Tensor = tile::tensor<const float, 2>;

std::atomic<int> calls[4];

template <int I, int Ms> void sleeper(Tensor, int) {
  ++calls[I];
  std::this_thread::sleep_for(std::chrono::microseconds(Ms * 1000));
}
template <int I> void failing(Tensor, int) {
  ++calls[I];
  throw tile::error("candidate " + std::to_string(I) + " does not fit this device");
}

std::string read(const fs::path &p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class Autotune : public ::testing::Test {
protected:
  void SetUp() override {
    tile::set_device(tile::backend::cpu);
    dir_ = fs::temp_directory_path() /
           ("tile-autotune-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    cache_ = dir_ / "cache" / "tuning.tsv";
    ::setenv("TILE_TUNING_CACHE", cache_.c_str(), 1);
    ::unsetenv("TILE_TUNE");
    ::unsetenv("TILE_TUNING_FILE");
    tile::tuning::reset();
    for (auto &c : calls)
      c = 0;
  }
  void TearDown() override {
    ::unsetenv("TILE_TUNING_CACHE");
    ::unsetenv("TILE_TUNE");
    ::unsetenv("TILE_TUNING_FILE");
    tile::tuning::reset();
    fs::remove_all(dir_);
  }
  static auto three(const std::string &name) {
    // Candidate 1 is the fastest, 0 the slowest.
    return tile::autotune(name, tile::candidate("slow", &sleeper<0, 6>), tile::candidate("fast", &sleeper<1, 1>),
                          tile::candidate("middle", &sleeper<2, 3>));
  }
  fs::path dir_, cache_;
};

Tensor shaped(std::int64_t rows, std::int64_t cols) { return Tensor(nullptr, {rows, cols}); }

/// What `f` throws as tile::error, or "nothing thrown".
template <class F> std::string message(F &&f) {
  try {
    f();
  } catch (const tile::error &e) {
    return std::string(e.what());
  }
  return std::string("nothing thrown");
}

TEST_F(Autotune, TimesEveryCandidateAndKeepsTheFastest) {
  auto t = three("k-fastest");
  EXPECT_EQ(t.choice(shaped(2000, 3000), 7), "fast");
  for (int i = 0; i < 3; ++i)
    EXPECT_GE(calls[i].load(), 7) << i; // a load, a warm-up and 5 samples each
  EXPECT_NE(t.explanation().find("'fast', timed fastest at"), std::string::npos) << t.explanation();
  EXPECT_NE(t.explanation().find("'slow' "), std::string::npos) << t.explanation();
  EXPECT_NE(t.explanation().find("shape class [2048x4096 7]"), std::string::npos) << t.explanation();
  EXPECT_NE(t.explanation().find("on cpu (cpu"), std::string::npos) << t.explanation();

  // A launch runs the chosen candidate once; the same class is not timed again.
  const int before[3] = {calls[0], calls[1], calls[2]};
  t(shaped(1500, 2100), 7); // the same buckets: 2048 x 4096
  EXPECT_EQ(calls[0], before[0]);
  EXPECT_EQ(calls[1], before[1] + 1);
  EXPECT_EQ(calls[2], before[2]);
  // Another class (another integer scalar) is timed.
  t(shaped(1500, 2100), 8);
  EXPECT_GT(calls[0], before[0]);
}

TEST_F(Autotune, RemembersChoicesInTheCache) {
  {
    auto t = three("k-cache");
    EXPECT_EQ(t.choice(shaped(10, 10), 1), "fast");
  }
  const std::string text = read(cache_);
  EXPECT_NE(text.find("# tile tuning file"), std::string::npos) << text;
  EXPECT_NE(text.find("\tk-cache\t"), std::string::npos) << text;
  EXPECT_NE(text.find("\t16x16 1\tfast\t"), std::string::npos) << text;

  // Another process (the tables forgotten) reads the choice instead of timing.
  tile::tuning::reset();
  for (auto &c : calls)
    c = 0;
  auto t = three("k-cache");
  t(shaped(10, 10), 1);
  EXPECT_EQ(calls[0], 0);
  EXPECT_EQ(calls[1], 1);
  EXPECT_EQ(calls[2], 0);
  EXPECT_NE(t.explanation().find("'fast' from the tuning cache " + cache_.string()), std::string::npos)
      << t.explanation();

  // Another candidate set (a candidate added) does not take that choice: it is timed again.
  tile::tuning::reset();
  auto more = tile::autotune("k-cache", tile::candidate("slow", &sleeper<0, 6>),
                             tile::candidate("fast", &sleeper<1, 1>), tile::candidate("middle", &sleeper<2, 3>),
                             tile::candidate("faster", &sleeper<3, 0>));
  EXPECT_EQ(more.choice(shaped(10, 10), 1), "faster");
  EXPECT_GT(calls[0], 0);
}

TEST_F(Autotune, DamagedCacheLinesAreTunedAgain) {
  fs::create_directories(cache_.parent_path());
  std::ofstream(cache_) << "garbage\nnot\ta\tline\n";
  auto t = three("k-damaged");
  EXPECT_EQ(t.choice(shaped(5, 5), 0), "fast");
  EXPECT_GT(calls[0], 0);
}

TEST_F(Autotune, SkipsCandidatesThatFail) {
  auto t = tile::autotune("k-fail", tile::candidate("too big", &failing<0>), tile::candidate("fits", &sleeper<1, 1>));
  EXPECT_EQ(t.choice(shaped(5, 5), 0), "fits");
  EXPECT_NE(t.explanation().find("'too big' failed: candidate 0 does not fit this device"), std::string::npos)
      << t.explanation();

  auto none = tile::autotune("k-none", tile::candidate("a", &failing<0>), tile::candidate("b", &failing<1>));
  try {
    none(shaped(5, 5), 0);
    FAIL() << "every candidate failed, and nothing was thrown";
  } catch (const tile::error &e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("tile::autotune 'k-none' on cpu: every candidate failed:"), std::string::npos) << m;
    EXPECT_NE(m.find("a: candidate 0 does not fit"), std::string::npos) << m;
    EXPECT_NE(m.find("b: candidate 1 does not fit"), std::string::npos) << m;
  }
}

TEST_F(Autotune, RecordsToATuningFileAndReadsItBackWithoutTiming) {
  const fs::path file = dir_ / "gemm.tuning";
  ::setenv("TILE_TUNE", "record", 1);
  ::setenv("TILE_TUNING_FILE", file.c_str(), 1);
  {
    auto t = three("k-record");
    EXPECT_EQ(t.choice(shaped(100, 100), 2), "fast");
    EXPECT_NE(t.explanation().find("recorded in " + file.string()), std::string::npos) << t.explanation();
  }
  // Record times again even where the cache knows the class.
  tile::tuning::reset();
  for (auto &c : calls)
    c = 0;
  {
    auto t = three("k-record");
    t(shaped(100, 100), 2);
    EXPECT_GT(calls[0], 0);
  }
  const std::string text = read(file);
  EXPECT_NE(text.find("\tk-record\t"), std::string::npos) << text;

  // Deployed: TILE_TUNE=off and the file; no timing, and the file's choice.
  ::setenv("TILE_TUNE", "off", 1);
  fs::remove(cache_);
  tile::tuning::reset();
  for (auto &c : calls)
    c = 0;
  auto t = three("k-record");
  t(shaped(100, 100), 2);
  EXPECT_EQ(calls[0], 0);
  EXPECT_EQ(calls[1], 1);
  EXPECT_NE(t.explanation().find("'fast' from the tuning file " + file.string()), std::string::npos)
      << t.explanation();
  // A class the file does not have: the first candidate, untimed, and said so.
  t(shaped(100, 100), 3);
  EXPECT_EQ(calls[0], 1);
  EXPECT_NE(t.explanation().find("'slow', the first candidate: no tuning entry"), std::string::npos)
      << t.explanation();
}

TEST_F(Autotune, LoadsEmbeddedTablesAndSavesChoices) {
  auto t = three("k-embedded");
  // Time one class, save the process's choices, and read them as a table (what #embed of a
  // committed file gives a program).
  EXPECT_EQ(t.choice(shaped(64, 64), 0), "fast");
  const fs::path saved = dir_ / "saved.tuning";
  tile::tuning::save(saved.string());
  std::string table = read(saved);
  ASSERT_NE(table.find("\tfast\t"), std::string::npos) << table;
  // Make the table say "middle" and load it: loaded tables come before the cache.
  table.replace(table.find("\tfast\t"), 6, "\tmiddle\t");
  tile::tuning::reset();
  tile::tuning::load(table, "table.inc");
  ::setenv("TILE_TUNE", "off", 1);
  auto u = three("k-embedded");
  EXPECT_EQ(u.choice(shaped(64, 64), 0), "middle");
  EXPECT_NE(u.explanation().find("from the tuning file table.inc"), std::string::npos) << u.explanation();
  // load_file reads the same.
  tile::tuning::reset();
  tile::tuning::load_file(saved.string());
  auto w = three("k-embedded");
  EXPECT_EQ(w.choice(shaped(64, 64), 0), "fast");
}

TEST_F(Autotune, RefusesWhatItCannotUse) {
  EXPECT_EQ(message([] { tile::tuning::load("cuda sm_90\tk\tnot-a-hash\t1\tx\t1\n", "bad.tuning"); }),
            "tile: bad.tuning:1: not a tuning entry (DEVICE, KERNEL, CANDIDATE-SET, SHAPE-CLASS, CHOICE and "
            "MILLISECONDS, separated by tabs)");
  EXPECT_NE(message([] { tile::tuning::load_file("/nonexistent/dir/x.tuning"); }).find("cannot be read"),
            std::string::npos);
  EXPECT_EQ(message([] { tile::autotune("k", tile::candidate("a", &sleeper<0, 0>), tile::candidate("a", &sleeper<1, 0>)); }),
            "tile::autotune 'k': candidates 0 and 1 are both labelled 'a'");
  EXPECT_NE(message([] { tile::autotune("k", tile::candidate("a\tb", &sleeper<0, 0>)); }).find("holds a tab"),
            std::string::npos);
  ::setenv("TILE_TUNE", "sometimes", 1);
  EXPECT_EQ(message([] { three("k-mode").choice(shaped(1, 1), 0); }), "TILE_TUNE=sometimes: write on, off or record");
  ::setenv("TILE_TUNE", "record", 1);
  EXPECT_NE(message([] { three("k-mode").choice(shaped(1, 1), 0); }).find("TILE_TUNING_FILE, which is not set"),
            std::string::npos);
  ::setenv("TILE_TUNE", "on", 1);
  ::setenv("TILE_TUNING_FILE", "/nonexistent/dir/x.tuning", 1);
  tile::tuning::reset();
  EXPECT_NE(message([] { three("k-mode").choice(shaped(1, 1), 0); }).find("TILE_TUNING_FILE=/nonexistent"),
            std::string::npos);
}

// A tuning file or cache that is not a regular file: a directory named by TILE_TUNING_FILE
// is an error saying so (it was silently read as empty); a cache that is a device
// (/dev/zero, endless) or a directory is as no cache: the kernel is tuned, nothing hangs.
TEST_F(Autotune, TuningFilesThatAreNotRegularFiles) {
  ::setenv("TILE_TUNING_FILE", dir_.c_str(), 1);
  tile::tuning::reset();
  const std::string why = message([] { three("k-dir").choice(shaped(1, 1), 0); });
  EXPECT_NE(why.find("TILE_TUNING_FILE=" + dir_.string() + " cannot be read: it is a directory"), std::string::npos)
      << why;
  EXPECT_NE(message([&] { tile::tuning::load_file(dir_.string()); }).find("cannot be read: it is a directory"),
            std::string::npos);
  ::unsetenv("TILE_TUNING_FILE");
  for (const char *cache : {"/dev/zero", "DIR"}) {
    const std::string path = std::string(cache) == "DIR" ? dir_.string() : cache;
    ::setenv("TILE_TUNING_CACHE", path.c_str(), 1);
    tile::tuning::reset();
    for (auto &c : calls)
      c = 0;
    EXPECT_EQ(three("k-odd-cache").choice(shaped(3, 3), 0), "fast") << path;
    EXPECT_GT(calls[0] + calls[1] + calls[2], 0) << path; // timed, not read from the cache
  }
}

template <int I> void other_signature(tile::tensor<const double, 2>, int) { ++calls[I]; }

TEST_F(Autotune, ChoicesAreKeptApartByTheKernelsParameters) {
  auto t = three("k-signature");
  EXPECT_EQ(t.choice(shaped(8, 8), 0), "fast");
  // The same name and labels over kernels of other parameters (another element type, say)
  // do not take that choice: they are timed.
  tile::tuning::reset();
  auto d = tile::autotune("k-signature", tile::candidate("slow", &other_signature<0>),
                          tile::candidate("fast", &other_signature<1>), tile::candidate("middle", &other_signature<2>));
  const int before = calls[0];
  d(tile::tensor<const double, 2>(nullptr, {8, 8}), 0);
  EXPECT_GT(calls[0], before + 1);
  EXPECT_NE(d.explanation().find("timed fastest"), std::string::npos) << d.explanation();
}

std::atomic<bool> fast_fails{false};
void fast_unless(Tensor, int) {
  ++calls[1];
  if (fast_fails)
    throw tile::error("too much shared memory here");
}

TEST_F(Autotune, ARecalledChoiceThatFailsIsChosenAgain) {
  auto make = [] {
    return tile::autotune("k-recall", tile::candidate("slow", &sleeper<0, 6>), tile::candidate("fast", &fast_unless),
                          tile::candidate("middle", &sleeper<2, 3>));
  };
  fast_fails = false;
  EXPECT_EQ(make().choice(shaped(8, 8), 0), "fast");
  // Another process, where "fast" does not launch (another device behind the same key,
  // say): the cached choice fails, and the class is timed again without it.
  tile::tuning::reset();
  fast_fails = true;
  auto t = make();
  t(shaped(8, 8), 0);
  EXPECT_NE(t.explanation().find("'fast', recalled, failed to launch here; 'middle', timed fastest"),
            std::string::npos)
      << t.explanation();
  EXPECT_EQ(t.choice(shaped(8, 8), 0), "middle");
  // And the new choice is what the cache says now.
  tile::tuning::reset();
  EXPECT_NE(make().choice(shaped(8, 8), 0), "fast");

  // TILE_TUNE=off: the first candidate, and when it fails the first other that launches.
  fast_fails = true;
  ::setenv("TILE_TUNE", "off", 1);
  fs::remove(cache_);
  tile::tuning::reset();
  auto u = tile::autotune("k-recall-off", tile::candidate("fast", &fast_unless), tile::candidate("middle", &sleeper<2, 3>));
  u(shaped(8, 8), 0);
  EXPECT_NE(u.explanation().find("'middle', the first that launches (TILE_TUNE=off times nothing)"), std::string::npos)
      << u.explanation();
  fast_fails = false;
}

TEST_F(Autotune, ExplainsTheDecisionOfEachLaunch) {
  auto t = three("k-explain");
  t(shaped(8, 8), 1);
  const std::string first = t.explanation();
  t(shaped(8, 8), 2);
  EXPECT_NE(t.explanation(), first);
  t(shaped(8, 8), 1); // recalled in this process: its own explanation again
  EXPECT_EQ(t.explanation(), first);
}

TEST_F(Autotune, ShapeClasses) {
  auto t = three("k-class");
  EXPECT_EQ(t.shape_class_of(shaped(2000, 3000), 5), "2048x4096 5");
  EXPECT_EQ(t.shape_class_of(shaped(4096, 1), 0), "4096x1 0");
  EXPECT_EQ(t.shape_class_of(shaped(0, 3), -2), "0x4 -2");
  t.shape_class([](const Tensor &x, int) { return x.size(0) > 1000 ? std::string("big") : std::string("small"); });
  EXPECT_EQ(t.shape_class_of(shaped(2000, 3000), 5), "big");
  EXPECT_EQ(t.choice(shaped(2000, 3), 1), "fast");
  const int before = calls[0];
  t(shaped(5000, 7), 9); // "big" again: no timing
  EXPECT_EQ(calls[0], before);
  // A class that a tuning file could not hold.
  t.shape_class([](const Tensor &, int) { return std::string("two\nlines"); });
  try {
    t(shaped(1, 1), 0);
    FAIL() << "a shape class with a line break was taken";
  } catch (const tile::error &e) {
    EXPECT_NE(std::string(e.what()).find("holds a tab or a line break"), std::string::npos) << e.what();
  }
}

} // namespace
