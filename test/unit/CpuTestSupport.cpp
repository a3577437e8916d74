#include "CpuTestSupport.h"

#include <atomic>
#include <cstdlib>
#include <cmath>
#include <dlfcn.h>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <gtest/gtest.h>

#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "targets/cpu/CpuCodegen.h"
#include "targets/cpu/CpuCompiler.h"
#include "transforms/LowerTileOps.h"

namespace cputest {

using namespace tile::ir;

KernelBuilder::KernelBuilder(const std::string &name) {
  kernel_.key = "_Z" + std::to_string(name.size()) + name + "v";
  kernel_.display_name = name;
  kernel_.location = "CpuTest.cpp:1";
  for (auto &g : kernel_.grid)
    g = int_imm(1);
}

Buffer KernelBuilder::tensor(const std::string &name, ScalarType t, int rank, bool read_only) {
  Param p;
  p.name = name;
  p.tensor = make_tensor_buffer(name, int(kernel_.params.size()), t, rank, read_only);
  kernel_.params.push_back(p);
  return p.tensor;
}

Var KernelBuilder::scalar(const std::string &name, ScalarType t) {
  Param p;
  p.name = name;
  p.scalar = make_var(name, t);
  kernel_.params.push_back(p);
  return p.scalar;
}

void KernelBuilder::grid(int rank) {
  static const char *names[] = {"bx", "by", "bz"};
  kernel_.grid_rank = rank;
  for (int d = 0; d < rank; ++d)
    kernel_.block_index[d] = make_var(names[d], ScalarType::I32);
}

Buffer KernelBuilder::buffer(const std::string &name, Scope scope, ScalarType t, const std::vector<std::int64_t> &shape) {
  Buffer b = make_buffer(name, scope, t, shape);
  body_.push_back(decl_buffer(b));
  return b;
}

Kernel KernelBuilder::finish() {
  kernel_.body = seq(body_);
  return kernel_;
}

Region region(const Buffer &b, std::vector<Expr> begin, const std::vector<std::int64_t> &tile, std::vector<int> tile_dims) {
  Region r;
  r.buffer = b;
  r.begin = std::move(begin);
  if (tile_dims.empty())
    for (int d = b->rank() - int(tile.size()); d < b->rank(); ++d)
      tile_dims.push_back(d);
  r.tile_dims = tile_dims;
  r.extent.assign(b->rank(), 1);
  for (size_t i = 0; i < tile.size(); ++i)
    r.extent[tile_dims[i]] = tile[i];
  return r;
}

Stmt copy(const Region &src, const Region &dst) { return std::make_shared<CopyNode>(src, dst); }
Stmt fill(const Region &dst, Expr value) { return std::make_shared<FillNode>(dst, cast(dst.buffer->dtype, value)); }

Image::~Image() {
  if (handle_)
    dlclose(handle_);
  if (!path_.empty())
    unlink(path_.c_str());
}

Entry Image::entry(const Kernel &k) const {
  void *f = dlsym(handle_, tile::cpu::kernel_symbol(k).c_str());
  EXPECT_NE(f, nullptr) << "no entry for " << k.display_name;
  return reinterpret_cast<Entry>(f);
}

std::unique_ptr<Image> Image::build(const std::vector<Kernel> &kernels) {
  std::vector<Kernel> lowered;
  for (auto &k : kernels) {
    auto before = verify(k);
    EXPECT_TRUE(before.empty()) << before[0] << "\n" << to_string(k);
    if (!before.empty())
      return nullptr;
    Kernel l = tile::transforms::lower_tile_ops(k);
    auto problems = verify(l);
    EXPECT_TRUE(problems.empty()) << problems[0] << "\n" << to_string(l);
    if (!problems.empty())
      return nullptr;
    lowered.push_back(l);
  }
  std::unique_ptr<Image> image(new Image);
  image->source_ = tile::cpu::emit_source(lowered);
  tile::cpu::CompileOptions opts;
#ifdef TILE_CPU_TEST_CACHE
  opts.cache_dir = TILE_CPU_TEST_CACHE;
#endif
#ifdef TILE_SANITIZE_FLAGS
  std::istringstream sanitize_flags(TILE_SANITIZE_FLAGS);
  for (std::string f; sanitize_flags >> f;)
    opts.extra_flags.push_back(f);
#endif
  if (const char *dir = std::getenv("TILE_CPU_TEST_EMIT_SOURCE"))
    opts.emit_source_dir = dir; // to look at what the tests compile
  auto r = tile::cpu::compile_cpu_image(image->source_, "cpu_test.cpp", opts);
  EXPECT_TRUE(r.ok) << r.log << "\n" << image->source_;
  if (!r.ok)
    return nullptr;
  char path[] = "/tmp/tile-cpu-test-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  if (fd < 0)
    return nullptr;
  EXPECT_EQ(write(fd, r.image.data(), r.image.size()), ssize_t(r.image.size()));
  close(fd);
  image->path_ = path;
  image->handle_ = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(image->handle_, nullptr) << dlerror();
  if (!image->handle_)
    return nullptr;
  return image;
}

void launch(Entry entry, const std::vector<kernel_arg> &args, std::int64_t gx, std::int64_t gy, std::int64_t gz,
            int threads, Context *ctx) {
  Context local;
  if (!ctx)
    ctx = &local;
  const std::int64_t grid[3] = {gx, gy, gz};
  const std::int64_t blocks = gx * gy * gz;
  if (threads <= 1) {
    for (std::int64_t b = 0; b < blocks; ++b)
      entry(args.data(), b, grid, &ctx->abi);
    return;
  }
  std::atomic<std::int64_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (std::int64_t b; (b = next.fetch_add(1)) < blocks;)
        entry(args.data(), b, grid, &ctx->abi);
    });
  for (auto &t : pool)
    t.join();
}

kernel_arg tensor_arg(void *data, ScalarType t, const std::vector<std::int64_t> &sizes, std::vector<std::int64_t> strides) {
  kernel_arg a{};
  a.kind = kernel_arg::tensor_arg;
  a.rank = int(sizes.size());
  a.dtype = dtype_code(t);
  a.data = data;
  if (strides.empty()) {
    strides.assign(sizes.size(), 1);
    for (int d = int(sizes.size()) - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * sizes[d + 1];
  }
  for (size_t d = 0; d < sizes.size(); ++d) {
    a.sizes[d] = sizes[d];
    a.strides[d] = strides[d];
  }
  return a;
}

kernel_arg int_arg(std::int64_t v, ScalarType t) {
  kernel_arg a{};
  a.kind = kernel_arg::scalar_arg;
  a.dtype = dtype_code(t);
  a.value.i = v;
  return a;
}

kernel_arg float_arg(double v, ScalarType t) {
  kernel_arg a{};
  a.kind = kernel_arg::scalar_arg;
  a.dtype = dtype_code(t);
  a.value.f = v;
  return a;
}

std::vector<float> random_floats(std::size_t n, std::uint64_t seed, float lo, float hi) {
  std::vector<float> v(n);
  std::uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (auto &x : v) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    x = lo + (hi - lo) * float(double(s >> 11) * 0x1p-53);
  }
  return v;
}

double rel_error(const std::vector<double> &ref, const std::vector<double> &got) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

} // namespace cputest
