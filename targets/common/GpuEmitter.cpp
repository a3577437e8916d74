#include "targets/common/GpuEmitter.h"

#include <algorithm>
#include <stdexcept>

#include "analysis/SharedAccess.h"
#include "ir/Visitor.h"

namespace tile::targets {

using namespace ir;

namespace {

/// Whether `s` reads variable `v`.
bool reads_var(const Stmt &s, const VarNode *v) {
  bool found = false;
  for_each_node(s, [&](const Expr &e) { found |= e->as<VarNode>() == v; }, nullptr);
  return found;
}

std::set<std::string> with_gpu_names(std::set<std::string> reserved, const std::string &lib) {
  for (const char *n : {"tile_gpu", "tile_smem", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "__syncthreads"})
    reserved.insert(n);
  reserved.insert(lib);
  return reserved;
}

} // namespace

GpuEmitter::GpuEmitter(const Kernel &k, std::ostringstream &os, const std::string &lib, const std::string &symbol,
                       std::int64_t shared_alignment, std::set<std::string> reserved)
    : CEmitter(k, os, lib, with_gpu_names(std::move(reserved), lib)), symbol_(symbol),
      shared_bytes_(std::max<std::int64_t>(k.shared_bytes, 0)), shared_alignment_(shared_alignment) {
  wide_indices_ = false; // transforms::IndexWidth::Narrow: the runtime bounds tensor dimensions
}

void GpuEmitter::run() {
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

std::string GpuEmitter::launch_bounds() const {
  return "__launch_bounds__(" + std::to_string(k_.launch_threads()) + ")";
}

std::int64_t GpuEmitter::finish(std::ostringstream &os, const std::string &body) {
  os << kernel_comment(k_) << "extern \"C\" __global__ void " << launch_bounds() << " " << symbol_ << "(";
  for (size_t i = 0; i < k_.params.size(); ++i) {
    const Param &p = k_.params[i];
    os << (i ? ", " : "");
    if (p.tensor)
      os << "const " << lib_ << "::tensor_arg " << arg_names_[i];
    else
      os << (is_float(p.scalar->type) ? "double " : "int64_t ") << arg_names_[i];
  }
  const std::string extra = extra_params();
  os << (k_.params.empty() && extra.size() >= 2 ? extra.substr(2) : extra) << ") {\n";
  if (shared_bytes_ > 0) {
    // The target's alignment, or more where a tile's layout needs it (wgmma's swizzle).
    std::int64_t align = shared_alignment_;
    for (auto &[b, l] : k_.shared_layouts)
      align = std::max<std::int64_t>(align, l.alignment);
    os << "  extern __shared__ __align__(" << align << ") unsigned char tile_smem[];\n";
    shared_memory_check(os, align);
  }
  // The vector flags the accesses use (they read only the kernel's arguments).
  for (auto &[flag, test] : flag_tests_)
    os << "  const bool " << flag << " = " << test << ";\n";
  os << body << "}\n";
  return shared_bytes_;
}

void GpuEmitter::params() {
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

void GpuEmitter::block_coordinates() {
  // A paired kernel (Kernel::pair_dim): the thread's group, and its index in the group.
  if (k_.pair_dim >= 0) {
    if (!k_.thread_index || !k_.pair_group || k_.persistent)
      throw std::logic_error("codegen: paired kernel '" + k_.display_name + "' without its thread and group indices");
    line("const int32_t " + var(k_.pair_group) + " = (int32_t)threadIdx.x / " + std::to_string(k_.threads) + ";");
    ranges_[k_.pair_group.get()] = {0, (k_.launch_threads() - 1) / k_.threads};
    line("const int32_t " + var(k_.thread_index) + " = (int32_t)threadIdx.x % " + std::to_string(k_.threads) + ";");
    ranges_[k_.thread_index.get()] = {0, k_.threads - 1};
  } else if (k_.thread_index) {
    line("const int32_t " + var(k_.thread_index) + " = (int32_t)threadIdx.x;");
    ranges_[k_.thread_index.get()] = {0, k_.launch_threads() - 1};
  }
  // (A persistent kernel declares its block indices for each tile it takes.)
  if (k_.persistent)
    return;
  blk_ = names_.fresh("blk");
  line("const " + lib_ + "::block3 " + blk_ + " = " + lib_ + "::block_index(" + std::to_string(k_.swizzle_panel) + ");");
  static const char *axes[] = {"x", "y", "z"};
  for (int d = 0; d < 3; ++d)
    if (k_.block_index[d])
      line("const " + type_name(k_.block_index[d]->type) + " " + var(k_.block_index[d]) + " = (" +
           type_name(k_.block_index[d]->type) + ")" + block_coordinate(d) + ";");
  if (k_.cluster > 1)
    cluster_coordinates();
}

std::string GpuEmitter::block_coordinate(int d) {
  static const char *axes[] = {"x", "y", "z"};
  const std::string launched = blk_ + "." + axes[d];
  if (d != k_.pair_dim)
    return launched;
  // (The producer, group 2, takes the first block's.)
  return "(2 * " + launched + " + (" + var(k_.pair_group) + " & 1))";
}

std::string GpuEmitter::thread_in_block() {
  return k_.pair_dim >= 0 ? var(k_.thread_index) : "(int32_t)threadIdx.x";
}

void GpuEmitter::cluster_coordinates() {
  throw std::logic_error("codegen: kernel '" + k_.display_name + "' is launched in clusters, which this target lacks");
}

std::string GpuEmitter::cast(ScalarType to, const Expr &value) {
  if (is_extended_float(to) || is_extended_float(value->type))
    return lib_ + "::cvt<" + type_name(to) + ">(" + expr(value) + ")";
  return CEmitter::cast(to, value);
}

void GpuEmitter::emit_decl_buffer(const DeclBufferNode *n) {
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
  // (In a paired kernel, a buffer with a copy per group: its group's.)
  std::string at = std::to_string(it->second);
  if (auto stride = k_.pair_stride.find(b.get()); stride != k_.pair_stride.end())
    at += " + (" + var(k_.pair_group) + " & 1) * " + std::to_string(stride->second);
  line(t + restrict_ + buffer(b) + " = reinterpret_cast<" + t + " *>(tile_smem + " + at + ");");
}

void GpuEmitter::once(const std::function<void()> &emit) {
  if (threads_depth_ > 0)
    return emit();
  line(std::string("if (") + (k_.pair_dim >= 0 ? var(k_.thread_index) : "threadIdx.x") + " == 0) {");
  ++indent_;
  emit();
  --indent_;
  line("}");
}

std::string GpuEmitter::reg(const Buffer &b, const Expr &r) {
  if (b->dtype == ScalarType::U32 || b->dtype == ScalarType::F32)
    return buffer(b) + "[" + expr(r) + "]";
  return lib_ + "::pack2(" + buffer(b) + "[" + expr(r) + "], " + buffer(b) + "[" + expr(add(r, int_imm(1, r->type))) +
         "])";
}

void GpuEmitter::emit_store(const StoreNode *n) {
  if (n->buffer->scope == Scope::Shared || n->buffer->scope == Scope::Fragment)
    return once([&] { CEmitter::emit_store(n); });
  CEmitter::emit_store(n);
}

void GpuEmitter::emit_for(const ForNode *n) {
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
      is_const_int(n->begin, 0) ? thread_in_block() : expr(n->begin, P_Add) + " + " + thread_in_block();
  line("for (" + t + " " + v + " = " + start + "; " + v + " < " + expr(add(n->begin, n->extent), P_Rel + 1) + "; " +
       v + " += " + T + ") {");
  ++threads_depth_;
  block(n->body);
  --threads_depth_;
  line("}");
}

// Vector accesses (lower-vector-access) ---------------------------------------------------

/// The flag's name; its test, from the tensor's argument, goes at the kernel's start
/// (finish()).
std::string GpuEmitter::vector_flag(const VectorFlagNode *n) {
  if (const Buffer &view = n->tensor; view->view_of) {
    // The tensor's test, and the view's first element at a multiple of the vector: tested
    // where the view is used (its first row is the block's).
    const std::int64_t elems = n->bytes / bytes(view->dtype);
    VectorFlagNode base(view->view_of, n->bytes);
    std::string test = vector_flag(&base);
    for (int d = 0; d < view->rank(); ++d)
      if (!is_const_int(view->origin[d], 0))
        test += " && (" + expr(mul(ir::cast(ScalarType::I64, view->origin[d]), view->strides[d])) + ") % " +
                std::to_string(elems) + " == 0";
    return "(" + test + ")";
  }
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

void GpuEmitter::emit_async_move(const VectorMoveNode *, const std::string &, const std::string &, int) {
  unlowered("an asynchronous copy");
}

void GpuEmitter::emit_vector_move(const VectorMoveNode *n) {
  auto emit = [&] {
    const std::string dst = address(n->dst, n->dst_offset), src = address(n->src, n->src_offset);
    const std::string c = std::to_string(n->chunk);
    for (int i = 0; i < n->bytes / n->chunk; ++i) {
      if (n->async) {
        emit_async_move(n, dst, src, i);
        continue;
      }
      line("reinterpret_cast<" + lib_ + "::bytes<" + c + "> *>(" + dst + ")[" + std::to_string(i) + "] = reinterpret_cast<const " +
           lib_ + "::bytes<" + c + "> *>(" + src + ")[" + std::to_string(i) + "];");
    }
  };
  if (analysis::is_block_shared(n->dst.get()))
    return once(emit);
  emit();
}

void GpuEmitter::emit_atomic(const AtomicNode *n) {
  once([&] { CEmitter::emit_atomic(n); });
}

/// lower-mma made every gemm explicit instructions (the others were loops already).
void GpuEmitter::emit_gemm(const GemmNode *) { unlowered("a gemm"); }

void GpuEmitter::emit_assert(const AssertNode *n) {
  line("if (!" + expr(n->cond, P_Primary) + ") {");
  ++indent_;
  line(lib_ + "::assert_fail(" + c_string(k_.display_name) + ", " + c_string(n->message) + ");");
  line("return;");
  --indent_;
  line("}");
}

std::string GpuEmitter::bounds_check(const CallNode *n) {
  // (ok, kernel, message, values...): the values as long long, whatever the target's int64_t.
  std::string s = lib_ + "::bounds_check(" + expr(n->args[0]) + ", " + c_string(k_.display_name) + ", " +
                  expr(n->args[1]);
  for (size_t i = 2; i < n->args.size(); ++i)
    s += ", (long long)" + expr(n->args[i], P_Unary);
  return s + ")";
}

void GpuEmitter::emit_barrier(const BarrierNode *n) {
  if (n->cluster) // (a target with clusters prints its own)
    throw std::logic_error("codegen: kernel '" + k_.display_name + "' has a barrier of its cluster, which this target lacks");
  line("__syncthreads();");
}

std::pair<std::string, std::string> GpuEmitter::print_prefix() {
  return {"[block %lld,%lld,%lld]", "(long long)" + block_coordinate(0) + ", (long long)" + block_coordinate(1) +
                                        ", (long long)" + block_coordinate(2)};
}

void GpuEmitter::emit_print(const PrintNode *n) {
  once([&] { CEmitter::emit_print(n); });
}

} // namespace tile::targets
