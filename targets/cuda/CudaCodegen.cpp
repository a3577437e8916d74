#include "targets/cuda/CudaCodegen.h"

#include <cctype>
#include <cstdio>
#include <functional>
#include <optional>
#include <map>
#include <set>
#include <sstream>

#include "analysis/Divisibility.h"
#include "ir/Equality.h"
#include "ir/Visitor.h"
#include "targets/common/CEmitter.h"

namespace tile::cuda {

using namespace ir;
using targets::P_Eq;
using targets::P_LAnd;
using targets::P_Primary;

namespace {

/// Threads loops of at most this many iterations per thread are unrolled.
constexpr std::int64_t max_unrolled_thread_trips = 8;

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
    params();
    block_coordinates();
    stmt(k_.body);
  }

  /// Writes the whole kernel, its `body` (what run() emitted) included, to `os`; returns the
  /// dynamic shared memory it needs.
  std::int64_t finish(std::ostringstream &os, const std::string &body) {
    std::ostringstream &os_ = os;
    os_ << targets::kernel_comment(k_) << "extern \"C\" __global__ void __launch_bounds__(" << k_.threads << ") " << kernel_symbol(k_) << "(";
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param &p = k_.params[i];
      os_ << (i ? ", " : "");
      if (p.tensor)
        os_ << "const tile_cuda::tensor_arg " << arg_names_[i];
      else
        os_ << (is_float(p.scalar->type) ? "double " : "int64_t ") << arg_names_[i];
    }
    os_ << ") {\n";
    if (shared_bytes_ > 0)
      os_ << "  extern __shared__ __align__(" << shared_alignment_ << ") unsigned char tile_smem[];\n";
    // The vector flags the accesses use (they read only the kernel's arguments).
    for (auto &[flag, test] : flag_tests_)
      if (used_flags_.count(flag))
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
  std::vector<Buffer> made_; // buffers the codegen made for itself
  int async_depth_ = 0;      // > 0 inside an Async statement: copies into shared memory may use cp.async

  void params() {
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
      // Whether vectors of 4, 8 or 16 bytes at multiples of that many bytes of the last index
      // are aligned: an aligned start, unit last stride, and the other strides multiples of
      // the vector. Tested once at the kernel's start (finish(), for the flags used) instead
      // of at each vector access (emit_vector_access).
      const Buffer &b = p.tensor;
      const int elem = bytes(b->dtype);
      for (int chunk : {4, 8, 16}) {
        if (elem >= chunk)
          continue;
        std::string flag = names_.fresh(buffer(b) + "_vec" + std::to_string(chunk));
        std::string test = "reinterpret_cast<uintptr_t>(" + arg + ".data) % " + std::to_string(chunk) + " == 0 && " + arg +
                           ".strides[" + std::to_string(b->rank() - 1) + "] == 1";
        for (int d = 0; d + 1 < b->rank(); ++d)
          test += " && " + arg + ".strides[" + std::to_string(d) + "] % " + std::to_string(chunk / elem) + " == 0";
        flag_tests_.push_back({flag, test});
        vec_flags_[{b.get(), chunk}] = flag;
      }
    }
  }
  /// (tensor, vector bytes) -> the flag saying such vectors are aligned (params()).
  std::map<std::pair<const BufferNode *, std::int64_t>, std::string> vec_flags_;
  std::vector<std::pair<std::string, std::string>> flag_tests_; // flag, its test, in params order
  std::set<std::string> used_flags_;
  /// Tensors whose flag a loop around is unswitched on (decided_), on its true side
  /// (assumed_) or its false side (refuted_).
  std::set<const BufferNode *> decided_, assumed_, refuted_;

  void block_coordinates() {
    if (k_.thread_index) {
      line("const int32_t " + var(k_.thread_index) + " = (int32_t)threadIdx.x;");
      ranges_[k_.thread_index.get()] = {0, k_.threads - 1};
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
      line(t + " " + buffer(b) + "[" + dims + "];");
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
    if (n->for_kind == ForKind::Vectorized && emit_vector_access(n))
      return;
    // A thread's share of copies whose vector accesses all depend on one uniform test (a
    // tensor's vector flag, no bounds): the loop twice, the test once, outside.
    if (n->for_kind == ForKind::Threads || n->for_kind == ForKind::Slots) {
      std::set<const BufferNode *> tensors;
      std::set<std::string> flags;
      for_each_node(n->body, nullptr, [&](const Stmt &x) {
        auto f = x->as<ForNode>();
        if (!f || f->for_kind != ForKind::Vectorized)
          return;
        if (auto a = parse_vector_access(f); a && a->conds.empty() && flagged(*a) && !decided_.count(a->g.get())) {
          tensors.insert(a->g.get());
          flags.insert(*flag(*a));
        }
      });
      if (!tensors.empty()) {
        std::string test;
        for (auto &f : flags)
          test += (test.empty() ? "" : " && ") + f;
        used_flags_.insert(flags.begin(), flags.end());
        // The loop once with `tensors` in `side`, inside the branch just opened.
        auto emit_side = [&](std::set<const BufferNode *> &side) {
          ++indent_;
          side.insert(tensors.begin(), tensors.end());
          emit_for(n);
          for (auto *g : tensors)
            side.erase(g);
          --indent_;
        };
        decided_.insert(tensors.begin(), tensors.end());
        line("if (" + test + ") {");
        emit_side(assumed_);
        line("} else {");
        emit_side(refuted_);
        line("}");
        for (auto *g : tensors)
          decided_.erase(g);
        return;
      }
    }
    if (n->for_kind == ForKind::Slots) { // per-thread work, unrolled
      ++threads_depth_;
      CEmitter::emit_for(n);
      --threads_depth_;
      return;
    }
    if (n->for_kind != ForKind::Threads)
      return CEmitter::emit_for(n);
    const std::string v = var(n->var), t = type_name(n->var->type);
    const std::string T = std::to_string(k_.threads);
    // A constant extent: each thread's iterations counted at compile time and unrolled
    // (few of them), so that their addresses are affine in one counter.
    if (auto e = as_const_int(n->extent); e && is_const_int(n->begin, 0) && *e > 0) {
      const std::int64_t trips = (*e + k_.threads - 1) / k_.threads;
      if (trips <= max_unrolled_thread_trips) {
        const std::string r = trips > 1 ? names_.fresh(v + "_r") : "";
        if (trips > 1) {
          line("#pragma unroll");
          line("for (int32_t " + r + " = 0; " + r + " < " + std::to_string(trips) + "; ++" + r + ") {");
        } else {
          line("{");
        }
        const bool ragged = *e % k_.threads != 0;
        ++indent_;
        line("const " + t + " " + v + " = (" + t + ")threadIdx.x" + (trips > 1 ? " + " + r + " * " + T : "") + ";");
        if (ragged)
          line("if (" + v + " < " + std::to_string(*e) + ") {");
        indent_ += ragged ? 0 : -1; // block() indents the body one level more
        ++threads_depth_;
        block(n->body);
        --threads_depth_;
        if (ragged) {
          line("}");
          --indent_;
        }
        line("}");
        return;
      }
    }
    const std::string start =
        is_const_int(n->begin, 0) ? "(int32_t)threadIdx.x" : expr(n->begin, targets::P_Add) + " + (int32_t)threadIdx.x";
    line("for (" + t + " " + v + " = " + start + "; " + v +
         " < " + expr(add(n->begin, n->extent), targets::P_Rel + 1) + "; " + v + " += " + T + ") {");
    ++threads_depth_;
    block(n->body);
    --threads_depth_;
    line("}");
  }

  // Vector accesses ------------------------------------------------------------------------

  /// Whether `c` is a conjunction of comparisons (the bounds checks of lower-tile-ops, whose
  /// left sides grow with the lane): true at the first and last lanes means true at all.
  static bool is_bounds_check(const Expr &c) {
    auto b = c->as<BinaryNode>();
    if (!b)
      return false;
    if (b->op == BinaryOp::And)
      return is_bounds_check(b->a) && is_bounds_check(b->b);
    return b->op == BinaryOp::LT || b->op == BinaryOp::GE;
  }

  /// What emit_vector_access needs of a Vectorized loop it can emit, or nothing.
  struct VectorAccess {
    std::int64_t V = 0;
    std::vector<const DeclareNode *> decls;
    std::vector<Expr> conds;
    const StoreNode *st = nullptr;
    const LoadNode *global_load = nullptr;
    bool is_load = false;
    bool converts = false; // a load whose lanes change type on the way (bf16 into f32)
    Buffer g;
    int elem = 0, rank = 0;
    std::int64_t total = 0, chunk = 0;
    std::vector<Expr> first_idx;
  };
  std::optional<VectorAccess> parse_vector_access(const ForNode *n) const {
    VectorAccess a;
    const auto V = as_const_int(n->extent);
    if (!V || *V < 2 || !is_const_int(n->begin, 0) || !is_const_int(n->step, 1))
      return std::nullopt;
    a.V = *V;
    // The body: declarations, then one store, possibly under guards (ifs without else).
    Stmt last;
    if (auto q = n->body->as<SeqNode>()) {
      for (size_t i = 0; i < q->stmts.size(); ++i) {
        if (auto d = q->stmts[i]->as<DeclareNode>(); d && d->init && i + 1 < q->stmts.size())
          a.decls.push_back(d);
        else if (i + 1 == q->stmts.size())
          last = q->stmts[i];
        else
          return std::nullopt;
      }
    } else {
      last = n->body;
    }
    while (auto i = last->as<IfNode>()) {
      if (i->else_case)
        return std::nullopt;
      a.conds.push_back(i->cond);
      last = i->then_case;
    }
    a.st = last->as<StoreNode>();
    if (!a.st)
      return std::nullopt;
    // Load: registers[slot] = select(bounds, cast(G[...]), 0) or cast(G[...]);
    // store: if (bounds) G[...] = value.
    // A load fills registers or shared memory from a tensor; a store writes a tensor.
    const Scope scope = a.st->buffer->scope;
    a.is_load = scope == Scope::Local || scope == Scope::Shared || scope == Scope::Fragment;
    if (a.is_load) {
      if (!a.conds.empty())
        return std::nullopt;
      Expr v = a.st->value;
      if (auto s = v->as<SelectNode>()) {
        if (!is_bounds_check(s->cond) || !(s->f->as<FloatImmNode>() || s->f->as<IntImmNode>()))
          return std::nullopt;
        a.conds.push_back(s->cond);
        v = s->t;
      }
      const CastNode *c = v->as<CastNode>();
      a.global_load = (c ? c->value : v)->as<LoadNode>();
      if (!a.global_load || a.global_load->buffer->scope != Scope::Global)
        return std::nullopt;
      a.converts = c != nullptr || a.global_load->buffer->dtype != a.st->buffer->dtype;
    } else if (scope != Scope::Global) {
      return std::nullopt;
    }
    for (auto &c : a.conds)
      if (!is_bounds_check(c))
        return std::nullopt;
    a.g = a.is_load ? a.global_load->buffer : a.st->buffer;
    const std::vector<Expr> &gidx = a.is_load ? a.global_load->indices : a.st->indices;
    a.elem = bytes(a.g->dtype);
    a.rank = a.g->rank();
    a.total = a.V * a.elem;
    a.chunk = a.total >= 16 ? 16 : a.total;
    if (a.elem > 8 || a.total % a.chunk != 0 || (a.chunk & (a.chunk - 1)) != 0)
      return std::nullopt;
    // Consecutive lanes are consecutive elements of the last dimension only.
    Substituter first = at_lane(n, a, 0), second = at_lane(n, a, 1);
    for (int d = 0; d + 1 < a.rank; ++d)
      if (!equal(first.mutate(gidx[d]), second.mutate(gidx[d])))
        return std::nullopt;
    if (equal(first.mutate(gidx[a.rank - 1]), second.mutate(gidx[a.rank - 1])))
      return std::nullopt;
    for (auto &i : gidx)
      a.first_idx.push_back(first.mutate(i));
    return a;
  }

  /// Substitutions giving an access's indices and guards at a lane, declarations inlined.
  static Substituter at_lane(const ForNode *n, const VectorAccess &a, std::int64_t lane) {
    Substituter s;
    s.vars[n->var.get()] = int_imm(lane, n->var->type);
    for (auto *d : a.decls)
      s.vars[d->var.get()] = s.mutate(d->init);
    return s;
  }

  /// Chunks starting at a last index known to be a multiple of the chunk: aligned whenever
  /// the tensor's flag for that chunk says so (params()), and the last stride is then 1.
  const std::string *flag(const VectorAccess &a) const {
    auto it = vec_flags_.find({a.g.get(), a.chunk});
    if (it == vec_flags_.end() ||
        analysis::known_divisor(a.first_idx[a.rank - 1]) * a.elem % a.chunk != 0)
      return nullptr;
    return &it->second;
  }
  bool flagged(const VectorAccess &a) const { return flag(a) != nullptr; }

  /// A Vectorized loop whose body copies between a global tensor and registers or shared
  /// memory (the copies of lower-tile-ops, bound by lower-fragments or bind-threads) as one
  /// access of V consecutive elements where they are contiguous, aligned and inside the
  /// tensor (cp.async into shared memory inside an Async statement); the scalar loop
  /// otherwise. False (nothing emitted) for any other body.
  bool emit_vector_access(const ForNode *n) {
    auto parsed = parse_vector_access(n);
    if (!parsed)
      return false;
    const VectorAccess &a = *parsed;
    const std::int64_t V = a.V;
    const auto &decls = a.decls;
    const auto &conds = a.conds;
    const StoreNode *st = a.st;
    const LoadNode *global_load = a.global_load;
    const bool is_load = a.is_load;
    const Buffer &g = a.g;
    const int elem = a.elem, rank = a.rank;
    const std::int64_t total = a.total, chunk = a.chunk;
    const std::vector<Expr> &first_idx = a.first_idx;
    Substituter first = at_lane(n, a, 0), second = at_lane(n, a, 1), end = at_lane(n, a, V - 1);
    const Expr last_stride = g->strides[rank - 1];
    Buffer lane_buffer = make_buffer("vec_lanes", Scope::Local, g->dtype, {V});
    made_.push_back(lane_buffer); // alive while names_ knows it by its address
    const std::string base = names_.fresh("vec_base"), lanes = buffer(lane_buffer);
    const std::string type = type_name(g->dtype), chunk_type = "tile_cuda::bytes<" + std::to_string(chunk) + ">";
    std::string fast = expr(last_stride, P_Eq + 1) + " == 1";
    for (auto &c : conds)
      fast += " && " + expr(first.mutate(c), P_LAnd + 1) + " && " + expr(end.mutate(c), P_LAnd + 1);
    const bool is_flagged = flagged(a);
    if (is_flagged && refuted_.count(g.get())) { // the false side of an unswitched loop
      CEmitter::emit_for(n);
      return true;
    }
    // Inside a loop unswitched on the flag (emit_for), its true side: no test at all.
    const bool assumed = is_flagged && conds.empty() && assumed_.count(g.get());
    line("{");
    ++indent_;
    if (assumed) {
      Expr off = index64(first_idx[rank - 1]);
      for (int d = rank - 2; d >= 0; --d)
        off = add(mul(index64(first_idx[d]), g->strides[d]), off);
      line(std::string(is_load ? "const " : "") + type + " *" + base + " = " + buffer(g) + " + " + expr(off, targets::P_Add + 1) +
           ";");
      line("{");
    } else if (is_flagged) {
      Expr off = index64(first_idx[rank - 1]);
      for (int d = rank - 2; d >= 0; --d)
        off = add(mul(index64(first_idx[d]), g->strides[d]), off);
      line(std::string(is_load ? "const " : "") + type + " *" + base + " = " + buffer(g) + " + " + expr(off, targets::P_Add + 1) +
           ";");
      std::string test = *flag(a);
      used_flags_.insert(test);
      for (auto &c : conds)
        test += " && " + expr(first.mutate(c), P_LAnd + 1) + " && " + expr(end.mutate(c), P_LAnd + 1);
      line("if (" + test + ") {");
    } else {
      line(std::string(is_load ? "const " : "") + type + " *" + base + " = &" + element(g, first_idx) + ";");
      line("if (" + fast + " && reinterpret_cast<uintptr_t>(" + base + ") % " + std::to_string(chunk) + " == 0) {");
    }
    ++indent_;
    auto copy_chunks = [&](const std::string &to, const std::string &from) {
      for (std::int64_t c = 0; c < total / chunk; ++c)
        line("reinterpret_cast<" + chunk_type + " *>(" + to + ")[" + std::to_string(c) + "] = reinterpret_cast<const " +
             chunk_type + " *>(" + from + ")[" + std::to_string(c) + "];");
    };
    // The lanes, as the scalar loop would run them, with the global element replaced.
    auto emit_lanes = [&] {
      class Replace : public IRMutator {
      public:
        const LoadNode *target;
        Expr with;
        Expr mutate_Load(const Expr &self, const LoadNode *l) override {
          return l == target ? with : IRMutator::mutate_Load(self, l);
        }
      };
      Stmt lane_body;
      if (is_load) {
        Replace r;
        r.target = global_load;
        r.with = load(lane_buffer, {n->var});
        Expr value = st->value;
        if (auto s = value->as<SelectNode>())
          value = s->t;
        lane_body = store(st->buffer, st->indices, r.mutate(value));
      } else {
        lane_body = store(lane_buffer, {n->var}, st->value);
      }
      std::vector<Stmt> body;
      for (auto *d : decls)
        body.push_back(declare(d->var, d->init));
      body.push_back(lane_body);
      CEmitter::emit_for(std::make_shared<ForNode>(n->var, n->begin, n->extent, n->step, ForKind::Unrolled, 0, seq(body))
                             .get());
    };
    // Inside an Async statement a copy into shared memory whose lanes are consecutive there
    // too is one cp.async per chunk where the shared side is aligned as well; the loaded
    // lanes are stored one by one otherwise.
    bool async_copy = false, always_aligned = false;
    // (Bytes as they are: not a copy that converts its elements.)
    if (is_load && !a.converts && async_depth_ > 0 && st->buffer->scope == Scope::Shared && chunk >= 4) {
      const Buffer &sb = st->buffer;
      // (A swizzled tile keeps only its 16-byte chunks whole: wider groups of lanes are not
      // consecutive there.)
      const ir::SharedLayout *sl = shared_layout(sb);
      bool contiguous = !equal(first.mutate(st->indices.back()), second.mutate(st->indices.back())) &&
                        !(sl && sl->swizzle_bytes && total > 16);
      for (int d = 0; d + 1 < sb->rank(); ++d)
        contiguous &= equal(first.mutate(st->indices[d]), second.mutate(st->indices[d]));
      if (contiguous) {
        async_copy = true;
        std::vector<Expr> dst_first;
        for (auto &i : st->indices)
          dst_first.push_back(first.mutate(i));
        const std::string dst = "&" + element(sb, dst_first);
        // Shared buffers start at least 16-byte aligned (Target::shared_alignment): an offset
        // known to be a multiple of the
        // chunk needs no test.
        always_aligned = analysis::known_divisor(offset(sb, dst_first)) * bytes(sb->dtype) % chunk == 0;
        if (!always_aligned) {
          line("if (reinterpret_cast<uintptr_t>(" + dst + ") % " + std::to_string(chunk) + " == 0) {");
          ++indent_;
        }
        for (std::int64_t c = 0; c < total / chunk; ++c)
          line("tile_cuda::cp_async<" + std::to_string(chunk) + ">(reinterpret_cast<char *>(" + dst + ") + " +
               std::to_string(c * chunk) + ", reinterpret_cast<const char *>(" + base + ") + " + std::to_string(c * chunk) +
               ");");
        if (!always_aligned) {
          --indent_;
          line("} else {");
          ++indent_;
        }
      }
    }
    if (!async_copy || !always_aligned) {
      line("alignas(16) " + type + " " + lanes + "[" + std::to_string(V) + "];");
      if (is_load)
        copy_chunks(lanes, base);
      emit_lanes();
      if (!is_load)
        copy_chunks(base, lanes);
    }
    if (async_copy && !always_aligned) {
      --indent_;
      line("}");
    }
    --indent_;
    if (assumed) {
      line("}");
    } else {
      line("} else {");
      ++indent_;
      CEmitter::emit_for(n);
      --indent_;
      line("}");
    }
    --indent_;
    line("}");
    return true;
  }

  void emit_atomic(const AtomicNode *n) override {
    once([&] { CEmitter::emit_atomic(n); });
  }

  /// A tensor-core gemm (the others were lowered to loops): the warp-level mma.sync routine
  /// of tile_cuda.h on the shared operands, into the accumulator's registers.
  void emit_gemm(const GemmNode *n) override {
    auto it = k_.layouts.find(n->c.buffer.get());
    if (it == k_.layouts.end() || !it->second.mma || it->second.mma->operand != MmaShape::C)
      return unlowered("a gemm without a tensor-core accumulator");
    const MmaShape &l = *it->second.mma;
    // The operands: whole rank-2 buffers, or a stage of a multi-buffered one.
    auto operand = [&](const Region &r) {
      Expr off = offset(r.buffer, r.begin);
      return is_const_int(off, 0) ? buffer(r.buffer) : "&" + buffer(r.buffer) + "[" + expr(off) + "]";
    };
    const Region &a = n->a, &b = n->b;
    const std::string shape = std::to_string(l.rows) + ", " + std::to_string(l.cols) + ", ";
    // The operands' swizzles as template arguments, where either has one.
    auto swizzle = [&](const Region &r) {
      const ir::SharedLayout *sl = shared_layout(r.buffer);
      return sl ? sl->swizzle_bytes : 0;
    };
    if (auto ra = k_.layouts.find(a.buffer.get()); ra != k_.layouts.end() && ra->second.mma) {
      // The first operand in registers, laid out as mma's A (lower-fragments).
      line("tile_cuda::mma_gemm_rs<" + shape + std::to_string(ra->second.mma->cols) + ", " +
           std::to_string(l.warps_m) + ", " + std::to_string(l.warps_n) + ", " + (n->transpose_b ? "true" : "false") +
           ", " + (n->clear_accum ? "true" : "false") + (swizzle(b) ? ", " + std::to_string(swizzle(b)) : "") + ">(" +
           buffer(a.buffer) + ", " + operand(b) + ", " +
           std::to_string(row_pitch(b.buffer)) + ", " + buffer(n->c.buffer) + ");");
      return;
    }
    const std::int64_t K = n->transpose_a ? a.extent[a.tile_dims[0]] : a.extent[a.tile_dims[1]];
    line("tile_cuda::mma_gemm<" + std::to_string(l.rows) + ", " + std::to_string(l.cols) + ", " + std::to_string(K) +
         ", " + std::to_string(l.warps_m) + ", " + std::to_string(l.warps_n) + ", " +
         (n->transpose_a ? "true" : "false") + ", " + (n->transpose_b ? "true" : "false") + ", " +
         (n->clear_accum ? "true" : "false") +
         (swizzle(a) || swizzle(b) ? ", " + std::to_string(swizzle(a)) + ", " + std::to_string(swizzle(b)) : "") + ">(" + operand(a) +
         ", " + std::to_string(row_pitch(a.buffer)) + ", " +
         operand(b) + ", " + std::to_string(row_pitch(b.buffer)) + ", " + buffer(n->c.buffer) + ");");
  }

  void emit_assert(const AssertNode *n) override {
    line("if (!" + expr(n->cond, P_Primary) + ") {");
    ++indent_;
    line("tile_cuda::assert_fail(" + targets::c_string(k_.display_name) + ", " + targets::c_string(n->message) + ");");
    line("return;");
    --indent_;
    line("}");
  }

  void emit_barrier() override { line("__syncthreads();"); }

  void emit_async(const AsyncNode *n) override {
    ++async_depth_;
    stmt(n->body);
    --async_depth_;
  }
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

std::string kernel_symbol(const Kernel &kernel) { return targets::entry_symbol("tile_cuda_", kernel.key); }

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
