// What the CPU target's unit tests share: building small kernels by hand, compiling them
// through lower-tile-ops, the codegen and clang++, loading the image and running every
// block of a launch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "tile_cpu.h" // the entry's types, as the images are compiled with them

namespace cputest {

using tile_cpu::kernel_arg;
namespace ir = tile::ir;

/// The context the runtime passes to blocks (lib/runtime/CpuAbi.h); records failures.
struct Context {
  Context() = default;
  Context(const Context &) = delete; // abi.self points here
  tile_cpu::context abi{this, &Context::record};
  std::vector<std::string> failures;
  static void record(tile_cpu::context *ctx, const char *message) {
    static_cast<Context *>(ctx->self)->failures.push_back(message);
  }
};
/// The entries' own function type: calls through another one are undefined.
using Entry = void (*)(const kernel_arg *args, std::int64_t block, const std::int64_t *grid, tile_cpu::context *ctx);

/// A kernel under construction: parameters, grid and body.
class KernelBuilder {
public:
  explicit KernelBuilder(const std::string &name);
  ir::Buffer tensor(const std::string &name, ir::ScalarType t, int rank, bool read_only = false);
  ir::Var scalar(const std::string &name, ir::ScalarType t);
  /// Sets the grid's rank (1 to 3); the block indices are bx, by, bz.
  void grid(int rank);
  ir::Expr bx() const { return kernel_.block_index[0]; }
  ir::Expr by() const { return kernel_.block_index[1]; }
  ir::Expr bz() const { return kernel_.block_index[2]; }
  void swizzle(int panel) { kernel_.swizzle_panel = panel; }
  /// Declares a tile buffer at the current point of the body.
  ir::Buffer buffer(const std::string &name, ir::Scope scope, ir::ScalarType t, const std::vector<std::int64_t> &shape);
  void add(ir::Stmt s) { body_.push_back(std::move(s)); }
  ir::Kernel finish();

private:
  ir::Kernel kernel_;
  std::vector<ir::Stmt> body_;
};

/// The region of `b` starting at `begin` with extents `tile` on `tile_dims` (default: the
/// trailing dimensions) and 1 elsewhere.
ir::Region region(const ir::Buffer &b, std::vector<ir::Expr> begin, const std::vector<std::int64_t> &tile,
                  std::vector<int> tile_dims = {});
ir::Stmt copy(const ir::Region &src, const ir::Region &dst);
ir::Stmt fill(const ir::Region &dst, ir::Expr value);

/// A compiled and loaded CPU image.
class Image {
public:
  ~Image();
  Entry entry(const ir::Kernel &k) const;
  const std::string &source() const { return source_; }

  /// Lowers (lower-tile-ops, checked by the verifier), emits and compiles `kernels`;
  /// reports gtest failures and returns null when anything goes wrong.
  static std::unique_ptr<Image> build(const std::vector<ir::Kernel> &kernels);

private:
  Image() = default;
  void *handle_ = nullptr;
  std::string path_, source_;
};

/// Runs every block of `grid` (x fastest), on `threads` threads when more than 1.
void launch(Entry entry, const std::vector<kernel_arg> &args, std::int64_t gx, std::int64_t gy = 1,
            std::int64_t gz = 1, int threads = 1, Context *ctx = nullptr);

kernel_arg tensor_arg(void *data, ir::ScalarType t, const std::vector<std::int64_t> &sizes,
                      std::vector<std::int64_t> strides = {});
kernel_arg int_arg(std::int64_t v, ir::ScalarType t = ir::ScalarType::I32);
kernel_arg float_arg(double v, ir::ScalarType t = ir::ScalarType::F32);

/// Deterministic values in [lo, hi).
std::vector<float> random_floats(std::size_t n, std::uint64_t seed, float lo = -1, float hi = 1);

/// Relative Frobenius-norm error of `got` against `ref`.
double rel_error(const std::vector<double> &ref, const std::vector<double> &got);

} // namespace cputest
