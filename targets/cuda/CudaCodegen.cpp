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
#include "targets/common/CEmitter.h"

namespace tile::cuda {

using namespace ir;
using targets::P_Eq;
using targets::P_LAnd;
using targets::P_Primary;

namespace {

/// Whether `s` reads variable `v`.
bool reads_var(const Stmt &s, const VarNode *v) {
  bool found = false;
  for_each_node(s, [&](const Expr &e) { found |= e->as<VarNode>() == v; }, nullptr);
  return found;
}

class KernelEmitter final : public targets::CEmitter {
public:
  KernelEmitter(const Kernel &k, std::ostringstream &os, std::int64_t shared_alignment)
      : CEmitter(k, os, "tile_cuda",
                 {"tile_cuda", "tile_smem", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "__syncthreads"}),
        shared_alignment_(shared_alignment) {
    wide_indices_ = false; // transforms::IndexWidth::Narrow: the runtime bounds tensor dimensions
  }

  /// Emits the kernel's body to the stream given to the constructor.
  void run() {
    collect_tensor_dims();
    for_each_node(k_.body, nullptr, [&](const Stmt &s) {
      if (auto m = s->as<VectorMoveNode>())
        for (const Buffer &b : {m->dst, m->src})
          if (b->scope == Scope::Local)
            vector_aligned_[b.get()] = std::max(vector_aligned_[b.get()], m->chunk);
    });
    params();
    block_coordinates();
    stmt(k_.body);
  }

  /// Writes the whole kernel, its `body` (what run() emitted) included, to `os`; returns the
  /// dynamic shared memory it needs.
  std::int64_t finish(std::ostringstream &os, const std::string &body) {
    std::ostringstream &os_ = os;
    // With a producer warpgroup, the bound of one block an SM: ptxas may give each thread
    // the SM's registers over the block's threads, which setmaxnreg then moves between the
    // warpgroups (it needs the bound).
    os_ << targets::kernel_comment(k_) << "extern \"C\" __global__ void __launch_bounds__("
        << k_.threads + k_.producer_threads << (k_.producer_threads ? ", 1" : "") << ") " << kernel_symbol(k_) << "(";
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param &p = k_.params[i];
      os_ << (i ? ", " : "");
      if (p.tensor)
        os_ << "const tile_cuda::tensor_arg " << arg_names_[i];
      else
        os_ << (is_float(p.scalar->type) ? "double " : "int64_t ") << arg_names_[i];
    }
    // Tensor maps after the parameters, in the order of Kernel::tensor_maps (the runtime
    // appends them so).
    for (size_t i = 0; i < tensor_map_names_.size(); ++i)
      os_ << (i || !k_.params.empty() ? ", " : "") << "const __grid_constant__ tile_cuda::tensor_map "
          << tensor_map_names_[i];
    os_ << ") {\n";
    if (shared_bytes_ > 0) {
      // The target's alignment, or more where a tile's layout needs it (wgmma's swizzle).
      std::int64_t align = shared_alignment_;
      for (auto &[b, l] : k_.shared_layouts)
        align = std::max<std::int64_t>(align, l.alignment);
      os_ << "  extern __shared__ __align__(" << align << ") unsigned char tile_smem[];\n";
      // A layout whose hardware swizzle counts from an aligned address: an error, not a
      // wrong result, if the block's shared memory does not start there.
      if (align > shared_alignment_)
        os_ << "  if (tile_cuda::detail::smem_address(tile_smem) % " << align << " != 0) {\n"
            << "    tile_cuda::assert_fail(" << targets::c_string(k_.display_name)
            << ", \"shared memory does not start at a multiple of " << align << " bytes\");\n    return;\n  }\n";
    }
    // The vector flags the accesses use (they read only the kernel's arguments).
    for (auto &[flag, test] : flag_tests_)
      os_ << "  const bool " << flag << " = " << test << ";\n";
    os_ << body << "}\n";
    return shared_bytes_;
  }

private:
  std::vector<std::string> arg_names_;
  std::string blk_;
  const std::int64_t shared_bytes_ = std::max<std::int64_t>(k_.shared_bytes, 0);
  const std::int64_t shared_alignment_;
  int threads_depth_ = 0; // > 0 inside a Threads or Slots loop (per-thread work)

  std::vector<std::string> tensor_map_names_;

  void params() {
    for (size_t i = 0; i < k_.tensor_maps.size(); ++i)
      tensor_map_names_.push_back(names_.fresh("tensor_map" + std::to_string(i)));
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param &p = k_.params[i];
      const std::string base = p.tensor ? p.tensor->name : p.scalar->name;
      arg_names_.push_back(names_.fresh(base + "_arg"));
      const std::string &arg = arg_names_.back();
      if (!p.tensor) {
        const ScalarType t = p.scalar->type;
        std::string value = t == ScalarType::Bool ? arg + " != 0" : "(" + type_name(t) + ")" + arg;
        line(type_name(t) + " " + var(p.scalar) + " = " + value + ";");
        continue;
      }
      unpack_tensor(int(i), p.tensor, arg, "__restrict__");
    }
  }
  /// (tensor, vector bytes) -> the flag saying such vectors are aligned (vector_flag()).
  std::map<std::pair<const BufferNode *, std::int64_t>, std::string> vec_flags_;
  std::vector<std::pair<std::string, std::string>> flag_tests_; // flag, its test, in order of first use
  /// Local buffers that vector moves read or write, and the alignment they need.
  std::map<const BufferNode *, int> vector_aligned_;

  void block_coordinates() {
    if (k_.thread_index) {
      line("const int32_t " + var(k_.thread_index) + " = (int32_t)threadIdx.x;");
      ranges_[k_.thread_index.get()] = {0, k_.threads + k_.producer_threads - 1};
    }
    blk_ = names_.fresh("blk");
    line("const tile_cuda::block3 " + blk_ + " = tile_cuda::block_index(" + std::to_string(k_.swizzle_panel) + ");");
    static const char *axes[] = {"x", "y", "z"};
    for (int d = 0; d < 3; ++d)
      if (k_.block_index[d])
        line("const " + type_name(k_.block_index[d]->type) + " " + var(k_.block_index[d]) + " = (" +
             type_name(k_.block_index[d]->type) + ")" + blk_ + "." + axes[d] + ";");
  }

  std::string cast(ScalarType to, const Expr &value) override {
    if (is_extended_float(to) || is_extended_float(value->type))
      return "tile_cuda::cvt<" + type_name(to) + ">(" + expr(value) + ")";
    return CEmitter::cast(to, value);
  }

  void emit_decl_buffer(const DeclBufferNode *n) override {
    const Buffer &b = n->buffer;
    const std::string t = type_name(b->dtype);
    if (b->scope == Scope::Local) {
      std::string dims;
      for (int d = 0; d < b->rank(); ++d)
        dims += (d ? " * " : "") + std::to_string(b->extent(d));
      auto aligned = vector_aligned_.find(b.get());
      const std::string align = aligned == vector_aligned_.end() ? "" : "alignas(" + std::to_string(aligned->second) + ") ";
      line(align + t + " " + buffer(b) + "[" + dims + "];");
      return;
    }
    // Shared and fragment buffers: where plan-shared-memory placed them.
    auto it = k_.shared_offsets.find(b.get());
    if (it == k_.shared_offsets.end())
      throw std::logic_error("codegen: shared buffer '" + b->name + "' was not placed (plan-shared-memory)");
    // (Not __restrict__ where another buffer has its bytes in turn.)
    const std::string restrict_ = k_.shared_reused.count(b.get()) ? " *" : " *__restrict__ ";
    line(t + restrict_ + buffer(b) + " = reinterpret_cast<" + t + " *>(tile_smem + " + std::to_string(it->second) + ");");
  }

  /// Work outside Threads loops runs in every thread; what must happen once per block is
  /// given to thread 0.
  void once(const std::function<void()> &emit) {
    if (threads_depth_ > 0)
      return emit();
    line("if (threadIdx.x == 0) {");
    ++indent_;
    emit();
    --indent_;
    line("}");
  }

  void emit_store(const StoreNode *n) override {
    if (n->buffer->scope == Scope::Shared || n->buffer->scope == Scope::Fragment)
      return once([&] { CEmitter::emit_store(n); });
    CEmitter::emit_store(n);
  }

  void emit_for(const ForNode *n) override {
    if (n->for_kind == ForKind::Rolled) { // per-thread work, as a loop
      ++threads_depth_;
      CEmitter::emit_for(n);
      --threads_depth_;
      return;
    }
    if (n->for_kind == ForKind::Slots) { // per-thread work, unrolled
      ++threads_depth_;
      if (is_const_int(n->extent, 1)) { // one trip: a block
        line("{");
        ++indent_;
        if (reads_var(n->body, n->var.get()))
          line("const " + type_name(n->var->type) + " " + var(n->var) + " = " + expr(n->begin) + ";");
        --indent_;
        block(n->body);
        line("}");
      } else {
        CEmitter::emit_for(n);
      }
      --threads_depth_;
      return;
    }
    if (n->for_kind != ForKind::Threads)
      return CEmitter::emit_for(n);
    // A thread's iterations with the threads' stride (lower-thread-loops made the loops of
    // constant extent and few trips a thread into Slots loops).
    const std::string v = var(n->var), t = type_name(n->var->type);
    const std::string T = std::to_string(k_.threads);
    const std::string start =
        is_const_int(n->begin, 0) ? "(int32_t)threadIdx.x" : expr(n->begin, targets::P_Add) + " + (int32_t)threadIdx.x";
    line("for (" + t + " " + v + " = " + start + "; " + v +
         " < " + expr(add(n->begin, n->extent), targets::P_Rel + 1) + "; " + v + " += " + T + ") {");
    ++threads_depth_;
    block(n->body);
    --threads_depth_;
    line("}");
  }

  // Vector accesses (lower-vector-access) -------------------------------------------------

  /// The flag's name; its test, from the tensor's argument, goes at the kernel's start
  /// (finish()).
  std::string vector_flag(const VectorFlagNode *n) override {
    auto key = std::make_pair(n->tensor.get(), n->bytes);
    auto it = vec_flags_.find(key);
    if (it != vec_flags_.end())
      return it->second;
    int index = -1;
    for (size_t i = 0; i < k_.params.size(); ++i)
      if (k_.params[i].tensor == n->tensor)
        index = int(i);
    if (index < 0) {
      unlowered("a vector flag of a buffer that is no parameter");
      return "false";
    }
    const Buffer &b = n->tensor;
    const std::string &arg = arg_names_[index];
    const std::string flag = names_.fresh(buffer(b) + "_vec" + std::to_string(n->bytes));
    std::string test = "reinterpret_cast<uintptr_t>(" + arg + ".data) % " + std::to_string(n->bytes) + " == 0 && " + arg +
                       ".strides[" + std::to_string(b->rank() - 1) + "] == 1";
    for (int d = 0; d + 1 < b->rank(); ++d)
      test += " && " + arg + ".strides[" + std::to_string(d) + "] % " + std::to_string(n->bytes / bytes(b->dtype)) +
              " == 0";
    flag_tests_.push_back({flag, test});
    vec_flags_[key] = flag;
    return flag;
  }

  void emit_vector_move(const VectorMoveNode *n) override {
    auto emit = [&] {
      const std::string dst = address(n->dst, n->dst_offset), src = address(n->src, n->src_offset);
      const std::string c = std::to_string(n->chunk);
      for (int i = 0; i < n->bytes / n->chunk; ++i) {
        const std::string at = std::to_string(i * n->chunk);
        if (n->async)
          line("tile_cuda::cp_async<" + c + ">(reinterpret_cast<char *>(" + dst + ") + " + at +
               ", reinterpret_cast<const char *>(" + src + ") + " + at + ");");
        else
          line("reinterpret_cast<tile_cuda::bytes<" + c + "> *>(" + dst + ")[" + std::to_string(i) +
               "] = reinterpret_cast<const tile_cuda::bytes<" + c + "> *>(" + src + ")[" + std::to_string(i) + "];");
      }
    };
    if (analysis::is_block_shared(n->dst.get()))
      return once(emit);
    emit();
  }

  void emit_atomic(const AtomicNode *n) override {
    once([&] { CEmitter::emit_atomic(n); });
  }

  /// lower-mma made every gemm explicit instructions (the others were loops already).
  void emit_gemm(const GemmNode *) override { unlowered("a gemm"); }

  // Tensor cores (lower-mma) ---------------------------------------------------------------

  /// Register `r` of a buffer of registers: a u32 element, or two 16-bit elements packed.
  std::string reg(const Buffer &b, const Expr &r) {
    if (b->dtype == ScalarType::U32 || b->dtype == ScalarType::F32)
      return buffer(b) + "[" + expr(r) + "]";
    return "tile_cuda::pack2(" + buffer(b) + "[" + expr(r) + "], " + buffer(b) + "[" + expr(add(r, int_imm(1, r->type))) +
           "])";
  }

  void emit_matrix_load(const MatrixLoadNode *n) override {
    std::string args;
    for (auto &r : n->dst_regs)
      args += reg(n->dst, r) + ", ";
    line("tile_cuda::ldmatrix_x" + std::to_string(n->dst_regs.size()) + "<" + (n->transpose ? "true" : "false") +
         ">(" + args + address(n->src, n->src_offset) + ");");
  }

  void emit_mma(const MmaNode *n) override {
    std::string args;
    for (auto [b, regs] : {std::pair{&n->c, &n->c_regs}, std::pair{&n->a, &n->a_regs}, std::pair{&n->b, &n->b_regs}})
      for (auto &r : *regs)
        args += (args.empty() ? "" : ", ") + reg(*b, r);
    line("tile_cuda::mma_m" + std::to_string(n->m) + "n" + std::to_string(n->n) + "k" + std::to_string(n->k) + "<" +
         type_name(n->operand_type) + ">(" + args + ");");
  }

  /// wgmma: its descriptors (tile_cuda::gmma_desc), then the instruction itself, whose
  /// operand list (N / 2 accumulators, then a: a descriptor or four registers) is written
  /// out here.
  void emit_wgmma(const WgmmaNode *n) override {
    auto desc = [&](const DescriptorOperand &d) {
      return "tile_cuda::gmma_desc(" + address(d.buffer, d.offset) + ", " + std::to_string(d.lbo) + ", " +
             std::to_string(d.sbo) + ")";
    };
    const int regs = int(n->c_regs.size());
    auto operands = [](int from, int count) {
      std::string s;
      for (int i = 0; i < count; ++i)
        s += (i ? ", %" : "%") + std::to_string(from + i);
      return s;
    };
    auto ptx_type = [](ScalarType t) {
      return t == ScalarType::BF16     ? "bf16"
             : t == ScalarType::F16    ? "f16"
             : t == ScalarType::F8E4M3 ? "e4m3"
                                       : "e5m2";
    };
    const bool rs = bool(n->a_reg_buffer);
    const std::string types = std::string(ptx_type(rs ? n->operand_type : n->a.buffer->dtype)) + "." +
                              ptx_type(n->operand_type);
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
         ", 0;\\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n->n) + "k" + std::to_string(n->k) + ".f32." +
         types + " {" +
         operands(0, regs) + "}, " + a_operand + ", %" + std::to_string(b_at) + ", " + flags + ";\\n}\\n\"");
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

  void emit_assert(const AssertNode *n) override {
    line("if (!" + expr(n->cond, P_Primary) + ") {");
    ++indent_;
    line("tile_cuda::assert_fail(" + targets::c_string(k_.display_name) + ", " + targets::c_string(n->message) + ");");
    line("return;");
    --indent_;
    line("}");
  }

  /// With a producer warpgroup, a barrier of the kernel's own threads is a named one (1):
  /// the producer's threads never reach it.
  void emit_barrier(const BarrierNode *n) override {
    if (k_.producer_threads && !n->whole_block)
      line("tile_cuda::named_barrier<1, " + std::to_string(k_.threads) + ">();");
    else
      line("__syncthreads();");
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
    }
  }
  /// The helper takes the coordinates innermost first, as the instruction does.
  void emit_bulk_copy(const BulkCopyNode *n) override {
    std::string coords;
    for (size_t i = n->coords.size(); i-- > 0;)
      coords += expr(n->coords[i]) + (i ? ", " : "");
    line("tile_cuda::bulk_tensor_load<" + std::to_string(n->coords.size()) + ">(" + address(n->dst, n->dst_offset) +
         ", &" + tensor_map_names_.at(size_t(n->map)) + ", " + address(n->barriers, n->barrier_index) + ", {" + coords +
         "});");
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

  std::pair<std::string, std::string> print_prefix() override {
    return {"[block %lld,%lld,%lld]",
            "(long long)" + blk_ + ".x, (long long)" + blk_ + ".y, (long long)" + blk_ + ".z"};
  }

  void emit_print(const PrintNode *n) override {
    once([&] { CEmitter::emit_print(n); });
  }
};

} // namespace

std::string kernel_symbol(const Kernel &kernel) {
  // A fallback (Kernel::fallback_of) is a second entry of the same kernel.
  return targets::entry_symbol("tile_cuda_", kernel.key) + (kernel.fallback_of.empty() ? "" : "_fallback");
}

Source emit_source(const std::vector<Kernel> &kernels, const ir::Target &target) {
  Source src;
  std::ostringstream os;
  os << "// Generated by tile's CUDA target (targets/cuda/CudaCodegen.cpp); do not edit.\n"
        "#include \"tile_cuda.h\"\n";
  for (auto &k : kernels) {
    os << "\n";
    std::ostringstream body;
    KernelEmitter e(k, body, target.shared_alignment);
    e.run();
    src.shared_bytes.push_back(e.finish(os, body.str()));
  }
  src.text = os.str();
  return src;
}

} // namespace tile::cuda
