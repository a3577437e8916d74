#include "targets/cpu/CpuCodegen.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <set>
#include <sstream>

#include "ir/Visitor.h"
#include "targets/common/CEmitter.h"
#include "transforms/LowerGemm.h"

namespace tile::cpu {

using namespace ir;
using targets::P_Primary;

namespace {

/// Collects the variables `s` declares and those it assigns.
struct Effects {
  std::set<const VarNode *> declared, assigned;
  bool loops = false, side_effects = false;
};
Effects effects_of(const Stmt &s) {
  Effects e;
  auto on_expr = [&](const Expr &x) {
    if (auto c = x->as<CallNode>(); c && c->fn == Intrinsic::BoundsCheck)
      e.side_effects = true; // (it may report a failure)
  };
  for_each_node(s, on_expr, [&](const Stmt &n) {
    switch (n->kind) {
    case StmtKind::Declare: e.declared.insert(n->as<DeclareNode>()->var.get()); break;
    case StmtKind::Assign: e.assigned.insert(n->as<AssignNode>()->var.get()); break;
    case StmtKind::For: e.loops = true; break;
    case StmtKind::Print:
    case StmtKind::Assert:
    case StmtKind::Atomic:
    case StmtKind::Gemm:
    case StmtKind::DeclBuffer:
    case StmtKind::Copy:
    case StmtKind::Fill:
    case StmtKind::Reduce:
    case StmtKind::Cumsum: e.side_effects = true; break;
    default: break;
    }
  });
  return e;
}

class KernelEmitter final : public targets::CEmitter {
public:
  KernelEmitter(const Kernel &k, std::ostringstream &os)
      : CEmitter(k, os, "tile_cpu", {"args", "block", "grid", "ctx", "tile_cpu"}) {}

  void run() {
    collect_tensor_dims();
    os_ << targets::kernel_comment(k_) << "extern \"C\" void " << kernel_symbol(k_)
        << "(const tile_cpu::kernel_arg *args, int64_t block, const int64_t *grid, tile_cpu::context *ctx) {\n";
    params();
    block_coordinates();
    stmt(k_.body);
    os_ << "}\n";
  }

private:
  std::string blk_;

  void params() {
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param &p = k_.params[i];
      const std::string arg = "args[" + std::to_string(i) + "]";
      if (!p.tensor) {
        const ScalarType t = p.scalar->type;
        std::string value = is_float(t) ? arg + ".value.f" : arg + ".value.i";
        if (t == ScalarType::Bool)
          value += " != 0";
        else
          value = "(" + type_name(t) + ")" + value;
        line(type_name(t) + " " + var(p.scalar) + " = " + value + ";");
        continue;
      }
      unpack_tensor(int(i), p.tensor, arg, "__restrict");
    }
  }

  void block_coordinates() {
    blk_ = names_.fresh("blk");
    line("const tile_cpu::block3 " + blk_ + " = tile_cpu::block_index(block, grid, " +
         std::to_string(k_.swizzle_panel) + ");");
    static const char *axes[] = {"x", "y", "z"};
    for (int d = 0; d < 3; ++d)
      if (k_.block_index[d])
        line("const " + type_name(k_.block_index[d]->type) + " " + var(k_.block_index[d]) + " = (" +
             type_name(k_.block_index[d]->type) + ")" + blk_ + "." + axes[d] + ";");
  }

  std::string cast(ScalarType to, const Expr &value) override {
    // bf16 rounds to nearest even in software (see tile_cpu.h).
    if (to == ScalarType::BF16)
      return "tile_cpu::detail::to_bf16(" + expr(value) + ")";
    return CEmitter::cast(to, value);
  }

  /// Buffers live on the block's stack until they would take more than this of it (blocks
  /// may run on the launching thread, whose stack is the user's); the rest on the heap.
  static constexpr std::int64_t stack_budget = std::int64_t(1) << 20;
  std::int64_t stack_bytes_ = 0;

  void emit_decl_buffer(const DeclBufferNode *n) override {
    const Buffer &b = n->buffer;
    const std::int64_t count = b->num_elements(), size = count * bytes(b->dtype);
    const std::string t = type_name(b->dtype), name = buffer(b);
    if (stack_bytes_ + size <= stack_budget) {
      stack_bytes_ += size;
      std::string dims;
      for (int d = 0; d < b->rank(); ++d)
        dims += (d ? " * " : "") + std::to_string(b->extent(d));
      line("alignas(64) " + t + " " + name + "[" + dims + "];");
      return;
    }
    const std::string storage = names_.fresh(name + "_heap");
    line("tile_cpu::heap_buffer<" + t + "> " + storage + "(" + std::to_string(count) + ");");
    line("if (!" + storage + ".data) {");
    ++indent_;
    line("ctx->fail(ctx, " + targets::c_string("out of memory for tile buffer '" + b->name + "' (" +
                                               std::to_string(size) + " bytes)") + ");");
    line("return;");
    --indent_;
    line("}");
    line(t + " *__restrict " + name + " = " + storage + ".data;");
  }

  void emit_assert(const AssertNode *n) override {
    line("if (!" + expr(n->cond, P_Primary) + ") {");
    ++indent_;
    line("ctx->fail(ctx, " + targets::c_string(n->message) + ");");
    line("return;");
    --indent_;
    line("}");
  }

  std::string bounds_check(const CallNode *n) override {
    std::string s = "tile_cpu::bounds_check(ctx, " + expr(n->args[0]) + ", " + expr(n->args[1]);
    for (size_t i = 2; i < n->args.size(); ++i)
      s += ", (long long)" + expr(n->args[i], targets::P_Unary);
    return s + ")";
  }

  void emit_barrier(const ir::BarrierNode *) override {} // a block is one thread on the CPU

  std::pair<std::string, std::string> print_prefix() override {
    return {"[block %lld,%lld,%lld]",
            "(long long)" + blk_ + ".x, (long long)" + blk_ + ".y, (long long)" + blk_ + ".z"};
  }

  /// Innermost parallel loops that only compute elements get `#pragma omp simd`: it tells
  /// the vectorizer that iterations are independent, which it cannot prove through the
  /// stride-based indexing of tensors.
  std::string loop_pragma(const ForNode *n, bool stable) override {
    if (n->for_kind == ForKind::Unrolled)
      return "#pragma unroll";
    if (n->for_kind != ForKind::Parallel || !as_const_int(n->extent) || !stable || !is_const_int(n->step, 1))
      return "";
    Effects e = effects_of(n->body);
    if (e.loops || e.side_effects)
      return "";
    for (auto *v : e.assigned)
      if (!e.declared.count(v))
        return ""; // a value carried from one iteration to the next
    return "#pragma omp simd";
  }

  /// The pointer to a gemm operand's first element and its row stride, when the tile is the
  /// trailing two dimensions of a tile buffer (rows contiguous, row stride static).
  bool gemm_operand(const Region &r, std::string &ptr, std::string &ld) {
    const Buffer &b = r.buffer;
    const int rank = b->rank();
    if (b->scope == Scope::Global || rank < 2 || r.tile_dims.size() != 2 || r.tile_dims[0] != rank - 2 ||
        r.tile_dims[1] != rank - 1)
      return false;
    ld = std::to_string(b->extent(rank - 1));
    Expr off = offset(b, r.begin);
    ptr = is_const_int(off, 0) ? buffer(b) : "&" + buffer(b) + "[" + expr(off) + "]";
    return true;
  }

  void emit_gemm(const GemmNode *n) override {
    auto a = n->a.tile_shape(), c = n->c.tile_shape();
    const std::int64_t M = c[0], N = c[1], K = n->transpose_a ? a[0] : a[1];
    std::string pa, lda, pb, ldb, pc, ldc;
    if (gemm_operand(n->a, pa, lda) && gemm_operand(n->b, pb, ldb) && gemm_operand(n->c, pc, ldc)) {
      line(std::string("tile_cpu::") + (n->clear_accum ? "gemm_clear<" : "gemm<") + std::to_string(M) + ", " +
           std::to_string(N) + ", " + std::to_string(K) + ", " + (n->transpose_a ? "true" : "false") + ", " +
           (n->transpose_b ? "true" : "false") + ">(" + pa + ", " + lda + ", " + pb + ", " + ldb + ", " + pc + ", " +
           ldc + ");");
      return;
    }
    stmt(transforms::gemm_as_loops(n)); // any other operand shape: the definition
  }
};

} // namespace

std::string kernel_symbol(const Kernel &kernel) { return targets::entry_symbol("tile_cpu_", kernel.key); }

std::string emit_source(const std::vector<Kernel> &kernels) {
  std::ostringstream os;
  os << "// Generated by tile's CPU target (targets/cpu/CpuCodegen.cpp); do not edit.\n"
        "#include \"tile_cpu.h\"\n";
  for (auto &k : kernels) {
    os << "\n";
    KernelEmitter(k, os).run();
  }
  return os.str();
}

} // namespace tile::cpu
