#include "transforms/LowerFragments.h"

#include <map>

#include "ir/Visitor.h"
#include "transforms/BindThreads.h"
#include "transforms/InferLayout.h"
#include "transforms/LowerTileOps.h"

namespace tile::transforms {

using namespace ir;

namespace {

/// The loop variables of one thread's share of a layout's elements.
struct SlotVars {
  Var rs, cs, v;
  Expr v_value = nullptr; // v's value where v is split into loops (tensor-core accumulators)
};

class Lowerer : public IRMutator {
public:
  /// Shared buffers the lowering made (cross-warp reductions), to be declared.
  std::vector<Buffer> scratch_;

  explicit Lowerer(Kernel &k) : k_(k) {
    if (!k_.thread_index)
      k_.thread_index = make_var("tid", ScalarType::I32);
    for (auto &[b, l] : k_.layouts)
      regs_[b] = make_buffer(b->name, Scope::Local, b->dtype, {l.slots()});
  }

  /// The layouts of the local buffers that replace the fragments.
  LayoutMap register_layouts() const {
    LayoutMap m;
    for (auto &[b, r] : regs_)
      m[r.get()] = k_.layouts.at(b);
    return m;
  }

private:
  Kernel &k_;
  std::map<const BufferNode *, Buffer> regs_;
  /// While rewriting a bound nest: its slot variables.
  const SlotVars *slots_ = nullptr;
  /// While rewriting a nest bound by a replicated layout: whether this thread is the first
  /// of an element's holders.
  Expr replica_ = nullptr;

  Expr tid() const { return k_.thread_index; }
  bool in_registers(const BufferNode *b) const { return regs_.count(b) > 0; }

  /// The slot of this thread's element of `b` at the current (rs, cs, v).
  Expr slot(const BufferNode *b) const {
    const FragmentLayout &l = k_.layouts.at(b);
    switch (l.kind) {
    case FragmentLayout::Matrix:
      return add(mul(add(mul(slots_->rs, int_imm(l.col_steps())), slots_->cs), int_imm(l.vec)), slots_->v);
    case FragmentLayout::RowVector:
      return slots_->rs;
    case FragmentLayout::ColumnVector:
      return add(mul(slots_->cs, int_imm(l.vec)), slots_->v);
    case FragmentLayout::MmaAccumulator:
      return add(mul(add(mul(slots_->rs, int_imm(l.atoms_n())), slots_->cs), int_imm(4)),
                 slots_->v_value ? slots_->v_value : Expr(slots_->v));
    }
    return nullptr;
  }

  Stmt mutate_DeclBuffer(const Stmt &self, const DeclBufferNode *n) override {
    auto it = regs_.find(n->buffer.get());
    return it == regs_.end() ? self : decl_buffer(it->second);
  }

  Expr mutate_Load(const Expr &self, const LoadNode *n) override {
    if (!in_registers(n->buffer.get()))
      return IRMutator::mutate_Load(self, n);
    return load(regs_.at(n->buffer.get()), {slot(n->buffer.get())});
  }

  Stmt mutate_Store(const Stmt &self, const StoreNode *n) override {
    if (!in_registers(n->buffer.get())) {
      Stmt s = IRMutator::mutate_Store(self, n);
      return n->buffer->scope == Scope::Local ? s : first_holder(s); // (infer-layout keeps locals out)
    }
    return store(regs_.at(n->buffer.get()), {slot(n->buffer.get())}, mutate(n->value));
  }

  /// In a nest bound by a replicated layout (a row or column vector: several threads hold
  /// each element), `s` (a store outside the registers) done by one of them: done by all,
  /// `s(i) = s(i) + r(i)` raced with itself. (Atomics and prints never get here: infer-layout
  /// keeps the fragments of such nests in shared memory.)
  Stmt first_holder(Stmt s) const { return replica_ ? if_then_else(replica_, std::move(s)) : s; }

  /// The layout a nest is bound by: of its R x C extents, or of its rank-1 register fragment.
  std::optional<FragmentLayout> nest_layout(const ParallelNest &nest) const {
    bool touches = false;
    const FragmentLayout *first = nullptr;
    for_each_node(
        seq({nest.body}),
        [&](const Expr &e) {
          if (auto l = e->as<LoadNode>(); l && in_registers(l->buffer.get())) {
            touches = true;
            if (!first)
              first = &k_.layouts.at(l->buffer.get());
          }
        },
        [&](const Stmt &s) {
          if (auto st = s->as<StoreNode>(); st && in_registers(st->buffer.get())) {
            touches = true;
            if (!first)
              first = &k_.layouts.at(st->buffer.get());
          }
        });
    if (!touches)
      return std::nullopt;
    if (nest.loops.size() == 2)
      return first && first->kind == FragmentLayout::MmaAccumulator
                 ? *first
                 : matrix_layout(*as_const_int(nest.loops[0]->extent), *as_const_int(nest.loops[1]->extent), k_.threads);
    if (first)
      return *first;
    return std::nullopt; // only guards read registers: not a nest infer-layout binds
  }

  Stmt mutate_For(const Stmt &self, const ForNode *n) override {
    auto nest = parallel_nest(self);
    if (!nest)
      return IRMutator::mutate_For(self, n);
    auto layout = nest_layout(*nest);
    if (!layout)
      return self; // no register fragment: bind-threads binds it
    return bind(*nest, *layout);
  }

  Stmt bind(const ParallelNest &nest, const FragmentLayout &l) {
    if (l.kind == FragmentLayout::MmaAccumulator)
      return bind_mma(nest, l);
    SlotVars sv{make_var("rs", ScalarType::I32), make_var("cs", ScalarType::I32), make_var("v", ScalarType::I32)};
    const Expr tc = int_imm(l.threads_per_row), tr = int_imm(l.row_threads);
    Expr row = add(mul(sv.rs, tr), div(tid(), tc));
    Expr col = add(mul(add(mul(sv.cs, tc), binary(BinaryOp::Mod, tid(), tc)), int_imm(l.vec)), sv.v);
    std::vector<Stmt> head;
    std::vector<Expr> guards;
    // Rows past the matrix's end (the last row step, or threads beyond a short matrix),
    // tested on the nest's row variable where it has one.
    if (l.kind != FragmentLayout::ColumnVector && l.row_steps() * l.row_threads != l.rows) {
      const bool has_row_var = nest.loops.size() == 2 || l.kind == FragmentLayout::RowVector;
      guards.push_back(lt(has_row_var ? Expr(nest.loops[0]->var) : row, int_imm(l.rows)));
    }
    auto index_of = [&](size_t d) {
      if (nest.loops.size() == 2)
        return d == 0 ? row : col;
      return l.kind == FragmentLayout::RowVector ? row : col;
    };
    for (size_t d = 0; d < nest.loops.size(); ++d) {
      const ForNode *f = nest.loops[d];
      head.push_back(declare(f->var, cast(f->var->type, index_of(d))));
      for (auto &g : nest.guards[d])
        guards.push_back(g);
    }
    const SlotVars *outer = slots_;
    slots_ = &sv;
    std::vector<Expr> new_guards;
    for (auto &g : guards)
      new_guards.push_back(mutate(g));
    // A row is held by the TC threads of a row group, a column by the TR row groups.
    const Expr outer_replica = replica_;
    if (l.kind == FragmentLayout::RowVector && l.threads_per_row > 1)
      replica_ = binary(BinaryOp::EQ, binary(BinaryOp::Mod, tid(), tc), int_imm(0));
    else if (l.kind == FragmentLayout::ColumnVector && l.row_threads > 1)
      replica_ = lt(tid(), tc);
    Stmt body = mutate(serialize_parallel_loops(nest.body));
    replica_ = outer_replica;
    slots_ = outer;
    for (auto it = new_guards.rbegin(); it != new_guards.rend(); ++it)
      body = if_then_else(*it, body);
    head.push_back(body);
    Stmt s = seq(head);
    const bool rows = l.kind != FragmentLayout::ColumnVector, cols = l.kind != FragmentLayout::RowVector;
    auto loop = [&](const Var &v, std::int64_t extent, Stmt b) {
      return for_loop(v, int_imm(0), int_imm(extent), ForKind::Unrolled, std::move(b));
    };
    s = for_loop(sv.v, int_imm(0), int_imm(cols ? l.vec : 1), cols && l.vec > 1 ? ForKind::Vectorized : ForKind::Unrolled, s);
    s = loop(sv.cs, cols ? l.col_steps() : 1, s);
    return for_loop(sv.rs, int_imm(0), int_imm(rows ? l.row_steps() : 1), ForKind::Slots, s);
  }

  /// A nest over a tensor-core accumulator: the thread's atoms (rs, cs) and their four
  /// elements (v), at the places the instruction gives them (ir/Layout.h).
  Stmt bind_mma(const ParallelNest &nest, const FragmentLayout &l) {
    // The four elements of an atom are two rows (vh) of two adjacent columns (vl): the
    // inner loop over vl is a vector of two.
    Var vh = make_var("vh", ScalarType::I32), vl = make_var("vl", ScalarType::I32);
    SlotVars sv{make_var("rs", ScalarType::I32), make_var("cs", ScalarType::I32), nullptr,
                add(mul(vh, int_imm(2)), vl)};
    Expr warp = div(tid(), int_imm(32)), lane = binary(BinaryOp::Mod, tid(), int_imm(32));
    Expr wm = binary(BinaryOp::Mod, warp, int_imm(l.warps_m)), wn = div(warp, int_imm(l.warps_m));
    Expr row = add(add(mul(wm, int_imm(l.rows / l.warps_m)), mul(sv.rs, int_imm(16))),
                   add(div(lane, int_imm(4)), mul(vh, int_imm(8))));
    Expr col = add(add(mul(wn, int_imm(l.cols / l.warps_n)), mul(sv.cs, int_imm(8))),
                   add(mul(binary(BinaryOp::Mod, lane, int_imm(4)), int_imm(2)), vl));
    std::vector<Stmt> head = {declare(nest.loops[0]->var, cast(nest.loops[0]->var->type, row)),
                              declare(nest.loops[1]->var, cast(nest.loops[1]->var->type, col))};
    std::vector<Expr> guards;
    for (auto &g : nest.guards)
      for (auto &c : g)
        guards.push_back(c);
    const SlotVars *outer = slots_;
    slots_ = &sv;
    for (auto &g : guards)
      g = mutate(g);
    Stmt body = mutate(serialize_parallel_loops(nest.body));
    slots_ = outer;
    for (auto it = guards.rbegin(); it != guards.rend(); ++it)
      body = if_then_else(*it, body);
    head.push_back(body);
    Stmt s = for_loop(vl, int_imm(0), int_imm(2), ForKind::Vectorized, seq(head));
    s = for_loop(vh, int_imm(0), int_imm(2), ForKind::Unrolled, s);
    s = for_loop(sv.cs, int_imm(0), int_imm(l.atoms_n()), ForKind::Unrolled, s);
    return for_loop(sv.rs, int_imm(0), int_imm(l.atoms_m()), ForKind::Slots, s);
  }

  /// A tensor-core gemm keeps its node, with the accumulator's registers as destination.
  Stmt mutate_Gemm(const Stmt &self, const GemmNode *n) override {
    auto it = regs_.find(n->c.buffer.get());
    if (it == regs_.end())
      return self;
    return std::make_shared<GemmNode>(n->a, n->b, full_region(it->second), n->transpose_a, n->transpose_b,
                                      n->clear_accum, n->policy);
  }

  Stmt mutate_Reduce(const Stmt &self, const ReduceNode *n) override {
    if (!in_registers(n->src.get()))
      return self;
    const FragmentLayout &l = k_.layouts.at(n->src.get());
    SlotVars sv{make_var("rs", ScalarType::I32), make_var("cs", ScalarType::I32), make_var("v", ScalarType::I32)};
    const SlotVars *outer = slots_;
    slots_ = &sv;
    const ScalarType at = reduce_accum_type(n->reduce_kind, n->src->dtype, n->dst->dtype);
    Var acc = make_var("red", at);
    const Buffer &src = regs_.at(n->src.get()), &dst = regs_.at(n->dst.get());
    std::vector<Stmt> row = {declare(acc, reduce_identity(n->reduce_kind, at))};
    Stmt step = assign(acc, reduce_step(n->reduce_kind, acc, load(src, {slot(n->src.get())})));
    row.push_back(for_loop(sv.cs, int_imm(0), int_imm(l.col_steps()), ForKind::Unrolled,
                           for_loop(sv.v, int_imm(0), int_imm(l.vec), ForKind::Unrolled, step)));
    // The row's threads are lanes tid % TC of a warp, or of TC / 32 warps: a butterfly
    // over a warp's lanes leaves the warp's result in all of them.
    const int tc = l.threads_per_row, lanes = tc < 32 ? tc : 32;
    for (int offset = lanes / 2; offset >= 1; offset /= 2)
      row.push_back(assign(acc, reduce_combine(n->reduce_kind, acc, shuffle_xor(acc, offset))));
    auto finish = [&](const Var &rs, const Expr &value) {
      Expr out = n->clear ? value : reduce_combine(n->reduce_kind, reduce_convert(load(dst, {rs}), at), value);
      return store(dst, {rs}, cast(n->dst->dtype, out));
    };
    if (tc <= 32) {
      row.push_back(finish(sv.rs, acc));
      slots_ = outer;
      return for_loop(sv.rs, int_imm(0), int_imm(l.row_steps()), ForKind::Slots, seq(row));
    }
    // A row over several warps: each warp's first lane leaves its result in shared memory,
    // slot [rs, row thread, warp of the row]; then every thread combines its row's (the
    // barrier between is insert-sync's).
    const std::int64_t warps = tc / 32;
    Buffer partial = make_buffer("red_warps", Scope::Shared, at, {l.row_steps(), l.row_threads, warps});
    scratch_.push_back(partial);
    const Expr group = div(tid(), int_imm(tc)), warp = div(binary(BinaryOp::Mod, tid(), int_imm(tc)), int_imm(32));
    row.push_back(if_then_else(binary(BinaryOp::EQ, binary(BinaryOp::Mod, tid(), int_imm(32)), int_imm(0)),
                               store(partial, {sv.rs, group, warp}, acc)));
    Stmt leave = for_loop(sv.rs, int_imm(0), int_imm(l.row_steps()), ForKind::Slots, seq(row));
    SlotVars sv2{make_var("rs", ScalarType::I32), nullptr, nullptr};
    Var all = make_var("red", at);
    std::vector<Stmt> combine = {declare(all, load(partial, {sv2.rs, group, int_imm(0)}))};
    for (std::int64_t w = 1; w < warps; ++w)
      combine.push_back(assign(all, reduce_combine(n->reduce_kind, all, load(partial, {sv2.rs, group, int_imm(w)}))));
    combine.push_back(finish(sv2.rs, all));
    slots_ = outer;
    return seq({leave, for_loop(sv2.rs, int_imm(0), int_imm(l.row_steps()), ForKind::Slots, seq(combine))});
  }
};

} // namespace

Kernel lower_fragments(const Kernel &kernel) {
  if (kernel.layouts.empty())
    return kernel;
  Kernel k = kernel;
  Lowerer lowerer(k);
  k.body = lowerer.mutate(kernel.body);
  if (!lowerer.scratch_.empty()) {
    std::vector<Stmt> body;
    for (auto &b : lowerer.scratch_)
      body.push_back(decl_buffer(b));
    body.push_back(k.body);
    k.body = seq(body);
  }
  k.layouts = lowerer.register_layouts(); // no fragment is left: the registers keep the layouts
  return k;
}

} // namespace tile::transforms
