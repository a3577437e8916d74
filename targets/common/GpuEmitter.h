// What the GPU targets (CUDA C++, HIP C++) share when they print a lowered kernel: the
// kernel's signature and launch ABI (tensors as tensor_arg, integral and bool scalars as
// int64_t, floating scalars as double), the block's dynamic shared memory and where each
// buffer lives in it, thread-strided loops, work given to thread 0 of the block, vector
// accesses and their alignment flags, atomics, asserts, barriers and print. A target derives
// from GpuEmitter and adds its own instructions (CUDA: ldmatrix, mma.sync, wgmma, TMA; HIP:
// MFMA); its device library (tile_cuda.h, tile_hip.h over tile_gpu.h) is `lib`.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "targets/common/CEmitter.h"

namespace tile::targets {

/// The generated source of a GPU image and each kernel's dynamic shared memory, in order.
struct GpuSource {
  std::string text;
  std::vector<std::int64_t> shared_bytes;
};

class GpuEmitter : public CEmitter {
public:
  /// `symbol`: the kernel's entry name; `shared_alignment`: the target's alignment of the
  /// block's shared memory.
  GpuEmitter(const ir::Kernel &k, std::ostringstream &os, const std::string &lib, const std::string &symbol,
             std::int64_t shared_alignment, std::set<std::string> reserved);

  /// Emits the kernel's body to the stream given to the constructor.
  void run();

  /// Writes the whole kernel, its `body` (what run() emitted) included, to `os`; returns the
  /// dynamic shared memory it needs.
  std::int64_t finish(std::ostringstream &os, const std::string &body);

protected:
  const std::string symbol_;
  std::vector<std::string> arg_names_;
  std::string blk_;
  const std::int64_t shared_bytes_;
  const std::int64_t shared_alignment_;
  int threads_depth_ = 0; // > 0 inside a Threads or Slots loop (per-thread work)

  // What a target adds to the kernel.
  /// `__launch_bounds__(...)` and anything else between `__global__ void` and the name.
  virtual std::string launch_bounds() const;
  /// Parameters after the kernel's own (CUDA: tensor maps), each ", TYPE NAME".
  virtual std::string extra_params() const { return ""; }
  /// Lines at the kernel's start after the shared memory's declaration, given its alignment.
  virtual void shared_memory_check(std::ostringstream &, std::int64_t /*align*/) const {}
  /// A cluster launch's rank, block count and partner's indices (Kernel::cluster), after the
  /// block's own: by default an error (a target without clusters).
  virtual void cluster_coordinates();
  /// An asynchronous vector move (global to shared without registers): by default an error.
  virtual void emit_async_move(const ir::VectorMoveNode *n, const std::string &dst, const std::string &src, int i);

  /// The block's index along dimension d as the kernel's code sees it: the launch's, or in a
  /// paired kernel (Kernel::pair_dim) along that dimension the group's block of the pair.
  std::string block_coordinate(int d);
  /// The thread's index in its block: the launch's, or in a paired kernel its group's.
  std::string thread_in_block();

  /// Work outside Threads loops runs in every thread; what must happen once per block is
  /// given to thread 0 (a paired kernel: of each group).
  void once(const std::function<void()> &emit);
  /// Register `r` of a buffer of registers: a u32 or f32 element, or two 16-bit elements
  /// packed (the first in the low half).
  std::string reg(const ir::Buffer &b, const ir::Expr &r);

  std::string cast(ir::ScalarType to, const ir::Expr &value) override;
  void emit_decl_buffer(const ir::DeclBufferNode *n) override;
  void emit_store(const ir::StoreNode *n) override;
  void emit_for(const ir::ForNode *n) override;
  std::string vector_flag(const ir::VectorFlagNode *n) override;
  void emit_vector_move(const ir::VectorMoveNode *n) override;
  void emit_atomic(const ir::AtomicNode *n) override;
  void emit_gemm(const ir::GemmNode *) override;
  void emit_assert(const ir::AssertNode *n) override;
  std::string bounds_check(const ir::CallNode *n) override;
  void emit_barrier(const ir::BarrierNode *n) override;
  std::pair<std::string, std::string> print_prefix() override;
  void emit_print(const ir::PrintNode *n) override;

private:
  void params();
  void block_coordinates();
  /// (tensor, vector bytes) -> the flag saying such vectors are aligned (vector_flag()).
  std::map<std::pair<const ir::BufferNode *, std::int64_t>, std::string> vec_flags_;
  std::vector<std::pair<std::string, std::string>> flag_tests_; // flag, its test, in order of first use
  /// Local buffers that vector moves read or write, and the alignment they need.
  std::map<const ir::BufferNode *, int> vector_aligned_;
};

/// The source of one image: `preamble` (a comment and the device library's include), then
/// each kernel as `Emitter` (a GpuEmitter made from the kernel, a stream and the shared
/// alignment) prints it.
template <class Emitter>
GpuSource emit_gpu_source(const std::vector<ir::Kernel> &kernels, const std::string &preamble,
                          std::int64_t shared_alignment) {
  GpuSource src;
  std::ostringstream os;
  os << preamble;
  for (const ir::Kernel &k : kernels) {
    os << "\n";
    std::ostringstream body;
    Emitter e(k, body, shared_alignment);
    e.run();
    src.shared_bytes.push_back(e.finish(os, body.str()));
  }
  src.text = os.str();
  return src;
}

} // namespace tile::targets
