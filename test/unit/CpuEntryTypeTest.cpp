// A generated entry has exactly the function type the runtime calls it through
// (tile_cpu_entry of lib/runtime/CpuAbi.h): a call through another function type is
// undefined, however alike the parameters' layouts. This file and the image are compiled
// with -fsanitize=function, trapping (cpu_tests.cmake), which stops such a call.
#include <cstdio>
#include <dlfcn.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "ir/IR.h"
#include "runtime/CpuAbi.h"
#include "targets/cpu/CpuCodegen.h"
#include "targets/cpu/CpuCompiler.h"

namespace {

/// Compiles `source` with -fsanitize=function into a shared object and loads it.
void *load(const std::string &source) {
  tile::cpu::CompileOptions opts;
  opts.use_cache = false;
  opts.extra_flags = {"-fsanitize=function", "-fsanitize-trap=function"};
  auto r = tile::cpu::compile_cpu_image(source, "entry_type.cpp", opts);
  EXPECT_TRUE(r.ok) << r.log;
  char path[] = "/tmp/tile-entry-type-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, r.image.data(), r.image.size()), ssize_t(r.image.size()));
  close(fd);
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  unlink(path);
  EXPECT_NE(handle, nullptr) << dlerror();
  return handle;
}

void fail(tile_cpu_context *, const char *) {}

TEST(CpuEntryType, RuntimeCallsTheEntryThroughItsOwnType) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  tile::ir::Kernel k;
  k.key = "_Z5emptyv";
  k.display_name = "empty";
  for (auto &g : k.grid)
    g = tile::ir::int_imm(1);
  k.block_index[0] = tile::ir::make_var("bx", tile::ir::ScalarType::I32);
  k.body = tile::ir::seq({});
  // A function called through a type not its own, to show that the check is on.
  const std::string source = tile::cpu::emit_source({k}) + "extern \"C\" void tile_probe(long) {}\n";
  void *image = load(source);
  ASSERT_NE(image, nullptr);
  auto entry = reinterpret_cast<tile_cpu_entry>(dlsym(image, tile::cpu::kernel_symbol(k).c_str()));
  auto probe = reinterpret_cast<void (*)(int)>(dlsym(image, "tile_probe"));
  ASSERT_TRUE(entry && probe);
  EXPECT_DEATH(probe(1), "");
  const std::int64_t grid[3] = {1, 1, 1};
  tile_cpu_context ctx{nullptr, &fail};
  EXPECT_EXIT((entry(nullptr, 0, grid, &ctx), std::exit(0)), testing::ExitedWithCode(0), "");
  dlclose(image);
}

} // namespace
