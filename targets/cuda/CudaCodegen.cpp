#include "targets/cuda/CudaCodegen.h"

#include <cctype>
#include <cstdio>
#include <functional>
#include <optional>
#include <map>
#include <set>
#include <sstream>

#include "analysis/SharedAccess.h"
#include "ir/Visitor.h"
#include "targets/common/GpuEmitter.h"

namespace tile::cuda {

using namespace ir;
using targets::P_Eq;
using targets::P_LAnd;
using targets::P_Primary;

namespace {

class KernelEmitter final : public targets::GpuEmitter {
public:
  KernelEmitter(const Kernel &k, std::ostringstream &os, std::int64_t shared_alignment)
      : GpuEmitter(k, os, "tile_cuda", kernel_symbol(k), shared_alignment, {"tile_cuda"}) {
    for (size_t i = 0; i < k_.tensor_maps.size(); ++i)
      tensor_map_names_.push_back(names_.fresh("tensor_map" + std::to_string(i)));
    if (k_.maps_missing)
      maps_missing_ = var(k_.maps_missing);
    if (k_.persistent)
      tile_count_ = names_.fresh("tile_count");
  }

private:
  std::vector<std::string> tensor_map_names_;
  std::string tile_count_; // a persistent grid's count of the tiles taken (the runtime zeroes it)
  std::string maps_missing_; // the mask of the optional tensor maps the launch could not encode

  /// With the blocks an SM the kernel is built for (warp-specialize): ptxas gives each
  /// thread the SM's registers over those blocks' threads, which setmaxnreg then moves
  /// between the warpgroups (it needs the bound).
  std::string launch_bounds() const override {
    return "__launch_bounds__(" + std::to_string(k_.launch_threads()) +
           (k_.blocks_per_sm > 0 ? ", " + std::to_string(k_.blocks_per_sm) : "") + ")";
  }
  /// Tensor maps after the parameters, in the order of Kernel::tensor_maps (the runtime
  /// appends them so).
  std::string extra_params() const override {
    std::string s;
    for (const std::string &name : tensor_map_names_)
      s += ", const __grid_constant__ tile_cuda::tensor_map " + name;
    // After the maps, the mask of those missing where some are optional (the variable
    // Kernel::maps_missing itself), then a persistent grid's count.
    if (k_.maps_missing)
      s += ", const int32_t " + maps_missing_;
    if (k_.persistent)
      s += ", unsigned *__restrict__ " + tile_count_;
    return s;
  }
  /// A layout whose hardware swizzle counts from an aligned address: an error, not a wrong
  /// result, if the block's shared memory does not start there.
  void shared_memory_check(std::ostringstream &os, std::int64_t align) const override {
    if (align > shared_alignment_)
      os << "  if (tile_cuda::detail::smem_address(tile_smem) % " << align << " != 0) {\n"
         << "    tile_cuda::assert_fail(" << targets::c_string(k_.display_name)
         << ", \"shared memory does not start at a multiple of " << align << " bytes\");\n    return;\n  }\n";
  }
  void emit_async_move(const VectorMoveNode *n, const std::string &dst, const std::string &src, int i) override {
    const std::string at = std::to_string(i * n->chunk);
    line("tile_cuda::cp_async<" + std::to_string(n->chunk) + ">(reinterpret_cast<char *>(" + dst + ") + " + at +
         ", reinterpret_cast<const char *>(" + src + ") + " + at + ");");
  }

  // Tensor cores (lower-mma) ---------------------------------------------------------------
  void emit_matrix_load(const MatrixLoadNode *n) override {
    std::string args;
    for (auto &r : n->dst_regs)
      args += reg(n->dst, r) + ", ";
    line("tile_cuda::ldmatrix_x" + std::to_string(n->dst_regs.size()) + "<" + (n->transpose ? "true" : "false") +
         ">(" + args + address(n->src, n->src_offset) + ");");
  }

  /// A warp's instruction as the target spells it: the accumulators (read and written),
  /// then a's and b's 32-bit registers.
  void emit_mma(const MmaNode *n) override {
    const int c = int(n->c_regs.size()), a = int(n->a_regs.size()), b = int(n->b_regs.size());
    auto operands = [](int from, int count) {
      std::string s;
      for (int i = 0; i < count; ++i)
        s += (i ? ", %" : "%") + std::to_string(from + i);
      return "{" + s + "}";
    };
    std::string outs, ins;
    for (auto &r : n->c_regs)
      outs += (outs.empty() ? "\"+f\"(" : ", \"+f\"(") + reg(n->c, r) + ")";
    for (auto [buf, regs] : {std::pair{&n->a, &n->a_regs}, std::pair{&n->b, &n->b_regs}})
      for (auto &r : *regs)
        ins += (ins.empty() ? "\"r\"(" : ", \"r\"(") + reg(*buf, r) + ")";
    line("asm volatile(\"" + n->instruction + " " + operands(0, c) + ", " + operands(c, a) + ", " +
         operands(c + a, b) + ", " + operands(0, c) + ";\\n\" : " + outs + " : " + ins + ");");
  }

  /// wgmma: its descriptors (tile_cuda::gmma_desc), then the instruction itself, whose
  /// operand list (N / 2 accumulators, then a: a descriptor or four registers) is written
  /// out here.
  void emit_wgmma(const WgmmaNode *n) override {
    auto desc = [&](const DescriptorOperand &d) {
      return "tile_cuda::gmma_desc(" + address(d.buffer, d.offset) + ", " + std::to_string(d.lbo) + ", " +
             std::to_string(d.sbo) + ", " + std::to_string(d.swizzle_code) + ")";
    };
    const int regs = int(n->c_regs.size());
    auto operands = [](int from, int count) {
      std::string s;
      for (int i = 0; i < count; ++i)
        s += (i ? ", %" : "%") + std::to_string(from + i);
      return s;
    };
    const bool rs = bool(n->a_reg_buffer);
    // Inputs after the accumulators: a (four registers or a descriptor), b, accumulate.
    const int a_count = rs ? 4 : 1, b_at = regs + a_count, acc_at = b_at + 1;
    const std::string a_operand = rs ? "{" + operands(regs, 4) + "}" : "%" + std::to_string(regs);
    // The RS form has no transpose flag for a (registers are K-major).
    // 8-bit operands are K-major only, and the instruction takes no transpose flags for them.
    const bool eight = bytes(n->operand_type) == 1;
    const std::string flags = eight ? std::string("p, 1, 1")
                              : rs  ? std::string("p, 1, 1, ") + (n->b.mn_major ? "1" : "0")
                                    : std::string("p, 1, 1, ") + (n->a.mn_major ? "1" : "0") + ", " +
                                         (n->b.mn_major ? "1" : "0");
    line("{");
    ++indent_;
    line(rs ? "const uint64_t desc_b = " + desc(n->b) + ";"
            : "const uint64_t desc_a = " + desc(n->a) + ", desc_b = " + desc(n->b) + ";");
    line("asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" + std::to_string(acc_at) +
         ", 0;\\n" + n->instruction + " {" + operands(0, regs) + "}, " + a_operand + ", %" + std::to_string(b_at) +
         ", " + flags + ";\\n}\\n\"");
    ++indent_;
    std::string outs;
    for (int i = 0; i < regs; ++i)
      outs += (i ? ", \"+f\"(" : "\"+f\"(") + buffer(n->c) + "[" + expr(n->c_regs[i]) + "])";
    line(": " + outs);
    std::string ins;
    if (rs)
      for (auto &r : n->a_regs)
        ins += "\"r\"(" + reg(n->a_reg_buffer, r) + "), ";
    else
      ins += "\"l\"(desc_a), ";
    line(": " + ins + "\"l\"(desc_b), \"r\"(" + expr(n->accumulate) + "));");
    indent_ -= 2;
    line("}");
  }

  void emit_warpgroup_sync(const WarpgroupSyncNode *n) override {
    if (n->sync_kind == WarpgroupSyncKind::Fence)
      line("tile_cuda::wgmma_fence();");
    else if (n->sync_kind == WarpgroupSyncKind::Commit)
      line("tile_cuda::wgmma_commit();");
    else {
      line("tile_cuda::wgmma_wait<" + std::to_string(n->pending) + ">();");
      // The registers the waited-for instructions write, pinned after the wait.
      for (const Buffer &b : n->registers) {
        const std::string i = names_.fresh("r");
        line("#pragma unroll");
        line("for (int " + i + " = 0; " + i + " < " + std::to_string(b->extent(0)) + "; ++" + i +
             ") tile_cuda::pin_register(" + buffer(b) + "[" + i + "]);");
      }
    }
  }

  void emit_proxy_fence() override { line("tile_cuda::fence_proxy_async_shared();"); }

  /// With a producer warpgroup, a barrier of the kernel's own threads is a named one (1;
  /// in a paired kernel 4 + the group, past the turns' 2 and 3): the producer's threads
  /// never reach it.
  void emit_barrier(const BarrierNode *n) override {
    if (n->cluster)
      line("tile_cuda::cluster_sync();");
    else if (k_.producer_threads && !n->whole_block && k_.pair_dim >= 0) // (each group its own)
      line("tile_cuda::named_barrier_sync<" + std::to_string(k_.threads) + ">(4 + " + var(k_.pair_group) + ");");
    else if (k_.producer_threads && !n->whole_block)
      line("tile_cuda::named_barrier<1, " + std::to_string(k_.threads) + ">();");
    else
      GpuEmitter::emit_barrier(n);
  }
  /// The block's place in its cluster (tile_cuda::cluster_place_of): its rank, the cluster's
  /// blocks and the other block's tile indices, computed as the block's own.
  void cluster_coordinates() override {
    const std::string place = names_.fresh("cluster");
    line("const tile_cuda::cluster_place " + place + " = tile_cuda::cluster_place_of(" +
         std::to_string(k_.swizzle_panel) + ");");
    line("const int32_t " + var(k_.cluster_rank) + " = " + place + ".rank;");
    line("const int32_t " + var(k_.cluster_blocks) + " = " + place + ".blocks;");
    static const char *axes[] = {"x", "y", "z"};
    for (int d = 0; d < 3; ++d)
      if (k_.partner_index[d])
        line("const " + type_name(k_.partner_index[d]->type) + " " + var(k_.partner_index[d]) + " = (" +
             type_name(k_.partner_index[d]->type) + ")" + place + ".partner." + axes[d] + ";");
  }
  void emit_mbarrier(const MbarrierNode *n) override {
    const std::string bar = address(n->barriers, n->index);
    switch (n->op) {
    case MbarrierOp::Init:
      line("tile_cuda::mbarrier_init(" + bar + ", " + expr(n->value) + ");");
      break;
    case MbarrierOp::ArriveExpectTx:
      line("tile_cuda::mbarrier_arrive_expect_tx(" + bar + ", " + expr(n->value) + ");");
      break;
    case MbarrierOp::Arrive:
      line("tile_cuda::mbarrier_arrive(" + bar + ");");
      break;
    case MbarrierOp::Wait:
      line("tile_cuda::mbarrier_wait(" + bar + ", " + expr(n->value) + ");");
      break;
    case MbarrierOp::ArriveCluster:
      line("tile_cuda::mbarrier_arrive_cluster_warp(" + bar + ", " + expr(n->value) + ");");
      break;
    }
  }
  /// The helper takes the coordinates innermost first, as the instruction does.
  void emit_bulk_copy(const BulkCopyNode *n) override {
    std::string coords;
    for (size_t i = n->coords.size(); i-- > 0;)
      coords += expr(n->coords[i]) + (i ? ", " : "");
    line(std::string("tile_cuda::bulk_tensor_load") + (n->multicast ? "_multicast<" : "<") +
         std::to_string(n->coords.size()) + ">(" + address(n->dst, n->dst_offset) + ", &" +
         tensor_map_names_.at(size_t(n->map)) + ", " + address(n->barriers, n->barrier_index) + ", {" + coords + "}" +
         (n->multicast ? ", " + expr(n->multicast) : "") + ");");
  }
  void emit_bulk_store(const BulkStoreNode *n) override {
    std::string coords;
    for (size_t i = n->coords.size(); i-- > 0;)
      coords += expr(n->coords[i]) + (i ? ", " : "");
    line("tile_cuda::bulk_tensor_store<" + std::to_string(n->coords.size()) + ">(&" +
         tensor_map_names_.at(size_t(n->map)) + ", " + address(n->src, n->src_offset) + ", {" + coords + "});");
  }
  void emit_bulk_store_sync(const BulkStoreSyncNode *n) override {
    line(n->op == BulkStoreSyncOp::Commit ? "tile_cuda::bulk_store_commit();" : "tile_cuda::bulk_store_wait();");
  }
  void emit_tile_fetch(const TileFetchNode *n) override {
    const std::string t = var(n->tile);
    switch (n->op) {
    case TileFetchOp::First:
      line(t + " = (" + type_name(n->tile->type) + ")blockIdx.x;");
      break;
    case TileFetchOp::Publish:
      line(t + " = tile_cuda::next_tile(" + tile_count_ + ", " + buffer(n->slot) + ");");
      break;
    case TileFetchOp::Receive:
      line(t + " = tile_cuda::received_tile(" + buffer(n->slot) + ");");
      break;
    }
  }
  void emit_iteration_slot(const IterationSlotNode *n) override {
    const std::string slot = buffer(n->slots) + "[" + expr(n->index) + "]";
    line(n->op == IterationSlotOp::Put ? slot + " = " + expr(n->value) + ";" : var(n->var) + " = " + slot + ";");
  }
  void emit_named_barrier(const NamedBarrierNode *n) override {
    line(std::string("tile_cuda::named_barrier_") + (n->arrive ? "arrive" : "sync") + "<" +
         std::to_string(n->threads) + ">(" + expr(n->id) + ");");
  }
  void emit_register_budget(const RegisterBudgetNode *n) override {
    line(std::string("tile_cuda::setmaxnreg_") + (n->increase ? "inc" : "dec") + "<" + std::to_string(n->registers) +
         ">();");
  }

  // (An Async statement's copies into shared memory are async VectorMoves where they can
  // be, lower-vector-access; its other stores run as they are.)
  void emit_async_sync(const StmtNode *s) override {
    if (s->kind == StmtKind::AsyncCommit)
      line("tile_cuda::cp_async_commit();");
    else if (auto w = s->as<AsyncWaitNode>())
      line("tile_cuda::cp_async_wait<" + std::to_string(w->pending) + ">();");
  }
};

} // namespace

std::string kernel_symbol(const Kernel &kernel) {
  // A fallback (Kernel::fallback_of) or an entry without pairs (unpaired_of) is a second
  // entry of the same kernel.
  return targets::entry_symbol("tile_cuda_", kernel.key) + (!kernel.fallback_of.empty()   ? "_fallback"
                                                         : !kernel.unpaired_of.empty() ? "_unpaired"
                                                                                       : "");
}

Source emit_source(const std::vector<Kernel> &kernels, const ir::Target &target) {
  return targets::emit_gpu_source<KernelEmitter>(
      kernels, "// Generated by tile's CUDA target (targets/cuda/CudaCodegen.cpp); do not edit.\n#include \"tile_cuda.h\"\n",
      target.shared_alignment);
}

} // namespace tile::cuda
