#include "transforms/LowerFragments.h"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>

#include "ir/Visitor.h"
#include "transforms/BindThreads.h"
#include "transforms/InferLayout.h"
#include "transforms/LowerTileOps.h"

namespace tile::transforms {

using namespace ir;

namespace {

/// A thread's elements of a reduced row up to which they are combined as a tree.
constexpr std::int64_t max_tree_leaves = 64;

/// One loop per slot digit of a layout, outermost (largest stride) first: the values of the
/// digits (indexed like the layout's digits) and the loops to wrap a body in.
struct SlotLoops {
  std::vector<Expr> values;
  std::vector<std::pair<Var, std::int64_t>> loops; // outermost first
  std::vector<ForKind> kinds;

  SlotLoops(const Fragment &f, const std::vector<int> &which) : values(f.digits.size()) {
    for (int i : which) {
      const Digit &g = f.digits[i];
      Var v = make_var(g.name.empty() ? "s" : g.name, ScalarType::I32);
      values[i] = v;
      loops.push_back({v, g.extent});
      // The innermost digit of a dimension, of unit stride: a vector of consecutive elements.
      bool innermost = g.dim >= 0 && g.stride == 1 && g.extent > 1;
      for (int j = i + 1; innermost && j < int(f.digits.size()); ++j)
        innermost = f.digits[j].dim != g.dim;
      kinds.push_back(innermost ? ForKind::Vectorized : ForKind::Unrolled);
    }
    if (!kinds.empty())
      kinds.front() = ForKind::Slots;
  }
  /// `body` inside the loops from `from` on.
  Stmt wrap(Stmt body, size_t from = 0) const {
    for (size_t i = loops.size(); i-- > from;)
      body = for_loop(loops[i].first, int_imm(0), int_imm(loops[i].second), kinds[i], std::move(body));
    return body;
  }
};

/// The slot digits of `f` that `keep` keeps, by decreasing stride.
std::vector<int> slot_digits_where(const Fragment &f, const std::function<bool(const Digit &)> &keep) {
  std::vector<int> out;
  for (int i : f.slot_digits())
    if (keep(f.digits[i]))
      out.push_back(i);
  return out;
}

class Lowerer : public IRMutator {
public:
  /// Shared buffers the lowering made (cross-warp reductions), to be declared.
  std::vector<Buffer> scratch_;
  /// The first internal inconsistency met (infer-layout promised what this cannot lower).
  std::string problem_;

  Lowerer(Kernel &k, const Target &t) : k_(k), warp_(t.warp_size) {
    if (!k_.thread_index)
      k_.thread_index = make_var("tid", ScalarType::I32);
    for (auto &[b, l] : k_.layouts)
      regs_[b] = make_buffer(b->name, Scope::Local, b->dtype, {l.slots()});
  }

  /// The layouts of the local buffers that replace the fragments.
  LayoutMap register_layouts() const {
    LayoutMap m;
    for (auto &[b, r] : regs_)
      m.emplace(r.get(), k_.layouts.at(b));
    return m;
  }

private:
  Kernel &k_;
  const std::int64_t warp_; // lanes that exchange registers by shuffles
  std::map<const BufferNode *, Buffer> regs_;
  /// While rewriting a bound nest: its layout, loop variables (by dimension) and slot
  /// digit values.
  struct Bound {
    const Fragment *layout;
    std::vector<const VarNode *> vars;
    const SlotLoops *slots;
  };
  const Bound *bound_ = nullptr;
  /// Reductions lowered with a cross-warp step, by the statement that replaced them: the
  /// part before the exchange through shared memory (each warp's result left there) and the
  /// part after it (every thread combining them), so that adjacent independent reductions
  /// can share one barrier (mutate_Seq).
  struct CrossWarp {
    Stmt whole, leave, combine; // whole keeps the key alive
    const BufferNode *src, *dst;
  };
  std::map<const StmtNode *, CrossWarp> cross_warp_;
  /// While rewriting a nest bound by a replicated layout (a row or column vector: several
  /// threads hold each element): whether this thread is the first of an element's holders.
  Expr replica_ = nullptr;

  Expr tid() const { return k_.thread_index; }
  bool in_registers(const BufferNode *b) const { return regs_.count(b) > 0; }

  void fail(const std::string &what) {
    if (problem_.empty())
      problem_ = what;
  }

  /// The slot of this thread's element of `b` at `indices` (the nest's variables) in the
  /// nest being rewritten: `b`'s layout is the nest's restricted to the variables it uses,
  /// and its slot digits take the values of the nest's digits they are.
  Expr slot(const BufferNode *b, const std::vector<Expr> &indices) {
    const Fragment &f = k_.layouts.at(b);
    if (!bound_) {
      fail("register fragment '" + b->name + "' accessed outside a bound nest");
      return int_imm(0);
    }
    std::vector<int> dims;
    for (auto &e : indices) {
      auto it = std::find(bound_->vars.begin(), bound_->vars.end(), static_cast<const VarNode *>(e.get()));
      if (it == bound_->vars.end() || e->kind != ExprKind::Var) {
        fail("register fragment '" + b->name + "' indexed by other than the nest's variables");
        return int_imm(0);
      }
      dims.push_back(int(it - bound_->vars.begin()));
    }
    std::vector<int> origin;
    Fragment sel = select_dims(*bound_->layout, dims, &origin);
    if (!(sel == f)) {
      fail("register fragment '" + b->name + "' (" + to_string(f) + ") in a nest bound by " +
           to_string(*bound_->layout));
      return int_imm(0);
    }
    std::vector<Expr> values(f.digits.size());
    bool alike = f.digits.size() == sel.digits.size();
    for (size_t i = 0; alike && i < f.digits.size(); ++i)
      alike = f.digits[i].dim == sel.digits[i].dim && f.digits[i].extent == sel.digits[i].extent &&
              f.digits[i].thread == sel.digits[i].thread;
    if (alike) { // digit for digit
      for (int i : f.slot_digits())
        values[i] = bound_->slots->values[origin[i]];
      return f.slot(values);
    }
    // Else the digits of extent > 1 correspond in order, dimension by dimension.
    for (int i : f.slot_digits()) {
      const Digit &g = f.digits[i];
      values[i] = int_imm(0);
      if (g.extent == 1)
        continue;
      int nth = 0;
      for (int j = 0; j < i; ++j)
        nth += f.digits[j].dim == g.dim && !f.digits[j].thread && f.digits[j].extent > 1;
      for (int j = 0; j < int(sel.digits.size()); ++j)
        if (sel.digits[j].dim == g.dim && !sel.digits[j].thread && sel.digits[j].extent > 1 && nth-- == 0) {
          values[i] = bound_->slots->values[origin[j]];
          break;
        }
    }
    return f.slot(values);
  }

  Stmt mutate_DeclBuffer(const Stmt &self, const DeclBufferNode *n) override {
    auto it = regs_.find(n->buffer.get());
    return it == regs_.end() ? self : decl_buffer(it->second);
  }

  Expr mutate_Load(const Expr &self, const LoadNode *n) override {
    if (!in_registers(n->buffer.get()))
      return IRMutator::mutate_Load(self, n);
    return load(regs_.at(n->buffer.get()), {slot(n->buffer.get(), n->indices)});
  }

  Stmt mutate_Store(const Stmt &self, const StoreNode *n) override {
    if (!in_registers(n->buffer.get())) {
      Stmt s = IRMutator::mutate_Store(self, n);
      return n->buffer->scope == Scope::Local ? s : first_holder(s); // (infer-layout keeps locals out)
    }
    return store(regs_.at(n->buffer.get()), {slot(n->buffer.get(), n->indices)}, mutate(n->value));
  }

  /// In a nest bound by a replicated layout, `s` (a store outside the registers) done by one
  /// of the holders: done by all, `s(i) = s(i) + r(i)` raced with itself. (Atomics and prints
  /// never get here: infer-layout keeps the fragments of such nests in shared memory.)
  Stmt first_holder(Stmt s) const { return replica_ ? if_then_else(replica_, std::move(s)) : s; }

  /// The layout a nest is bound by: infer-layout's for the nests it saw; for those made
  /// since (copies and fills of a fragment), the layout of the register fragment it
  /// accesses with all its variables.
  std::optional<Fragment> nest_layout(const ParallelNest &nest) const {
    if (auto it = k_.bindings.find(nest.loops[0]->var.get()); it != k_.bindings.end())
      return it->second;
    const Fragment *first = nullptr;
    auto seen = [&](const BufferNode *b) {
      if (!first && in_registers(b) && b->rank() == int(nest.loops.size()))
        first = &k_.layouts.at(b);
    };
    for_each_node(
        seq({nest.body}),
        [&](const Expr &e) {
          if (auto l = e->as<LoadNode>())
            seen(l->buffer.get());
        },
        [&](const Stmt &s) {
          if (auto st = s->as<StoreNode>())
            seen(st->buffer.get());
        });
    if (first)
      return *first;
    return std::nullopt; // no register fragment (or only in guards): bind-threads binds it
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

  /// The nest as the threads of layout `l` run it: a loop per slot digit, the nest's
  /// variables recovered from the thread index and the digits, places past the ends skipped.
  Stmt bind(const ParallelNest &nest, const Fragment &l) {
    if (int(nest.loops.size()) != l.rank()) {
      fail("a " + std::to_string(nest.loops.size()) + "-deep nest bound by " + to_string(l));
      return serialize_parallel_loops(nest.loops[0]->body);
    }
    SlotLoops sl(l, l.slot_digits());
    std::vector<Stmt> head;
    std::vector<Expr> guards;
    if (Expr h = l.holds(tid()))
      guards.push_back(h);
    Bound bound{&l, {}, &sl};
    for (int d = 0; d < l.rank(); ++d) {
      const ForNode *f = nest.loops[d];
      bound.vars.push_back(f->var.get());
      head.push_back(declare(f->var, cast(f->var->type, l.index(d, tid(), sl.values))));
      if (l.padded(d))
        guards.push_back(lt(f->var, int_imm(l.shape[d])));
    }
    for (int d = 0; d < l.rank(); ++d)
      for (auto &g : nest.guards[d])
        guards.push_back(g);
    const Bound *outer = bound_;
    const Expr outer_replica = replica_;
    bound_ = &bound;
    for (auto &g : guards)
      g = mutate(g);
    replica_ = l.first_replica(tid());
    Stmt body = mutate(serialize_parallel_loops(nest.body));
    replica_ = outer_replica;
    bound_ = outer;
    for (auto it = guards.rbegin(); it != guards.rend(); ++it)
      body = if_then_else(*it, body);
    head.push_back(body);
    return sl.wrap(seq(head));
  }

  /// The waits warp-specialize placed for its deferred gemms name the fragments they
  /// complete: now their registers.
  Stmt mutate_WarpgroupSync(const Stmt &self, const WarpgroupSyncNode *n) override {
    std::vector<Buffer> regs = n->registers;
    bool changed = false;
    for (Buffer &b : regs)
      if (auto it = regs_.find(b.get()); it != regs_.end()) {
        b = it->second;
        changed = true;
      }
    return changed ? std::make_shared<WarpgroupSyncNode>(n->sync_kind, n->pending, regs) : self;
  }

  /// A tensor-core gemm keeps its node, with the accumulator's registers as destination
  /// (and the first operand's, where it is in registers).
  Stmt mutate_Gemm(const Stmt &self, const GemmNode *n) override {
    auto it = regs_.find(n->c.buffer.get());
    if (it == regs_.end())
      return self;
    auto a = regs_.find(n->a.buffer.get());
    return n->with(a == regs_.end() ? n->a : full_region(a->second), n->b, full_region(it->second));
  }

  /// A run of adjacent reductions with cross-warp steps, none reading or writing another's
  /// destination, becomes their first parts, then their combining parts: insert-sync then
  /// puts one barrier where each would have had its own (LayerNorm's mean and sum of
  /// squares).
  Stmt mutate_Seq(const Stmt &self, const SeqNode *n) override {
    std::vector<Stmt> in;
    bool changed = false;
    for (auto &s : n->stmts) {
      in.push_back(mutate(s));
      changed |= in.back() != s;
    }
    std::vector<Stmt> out;
    for (size_t i = 0; i < in.size();) {
      auto it = cross_warp_.find(in[i].get());
      size_t j = i + 1;
      if (it != cross_warp_.end()) {
        std::vector<const CrossWarp *> run = {&it->second};
        for (; j < in.size(); ++j) {
          auto next = cross_warp_.find(in[j].get());
          if (next == cross_warp_.end())
            break;
          const CrossWarp &c = next->second;
          bool independent = true;
          for (const CrossWarp *r : run)
            independent = independent && c.src != r->dst && c.dst != r->dst && c.dst != r->src;
          if (!independent)
            break;
          run.push_back(&c);
        }
        if (run.size() > 1) {
          for (const CrossWarp *r : run)
            out.push_back(r->leave);
          for (const CrossWarp *r : run)
            out.push_back(r->combine);
          changed = true;
          i = j;
          continue;
        }
        j = i + 1;
      }
      out.push_back(in[i]);
      i = j;
    }
    return changed ? seq(std::move(out)) : self;
  }

  /// A reduction along dimension r of a register fragment: per element of the destination
  /// (the source's other slot digits), the thread's slots along r, then a butterfly of warp
  /// shuffles over the lanes that split r, then, where warps split r, a combination of the
  /// warps' results through shared memory.
  Stmt mutate_Reduce(const Stmt &self, const ReduceNode *n) override {
    if (!in_registers(n->src.get()))
      return self;
    const Fragment &l = k_.layouts.at(n->src.get());
    const int r = n->dim;
    std::vector<int> origin;
    std::vector<int> kept_dims;
    for (int d = 0; d < l.rank(); ++d)
      if (d != r)
        kept_dims.push_back(d);
    const Fragment dst_layout = select_dims(l, kept_dims, &origin);
    // The destination in registers takes the source's layout without r; in shared memory,
    // the first of the threads holding each result stores it.
    const bool dst_in_registers = in_registers(n->dst.get());
    if (dst_in_registers && !(k_.layouts.at(n->dst.get()) == dst_layout)) {
      fail("reduction of '" + n->src->name + "' into '" + n->dst->name + "' whose layout is not the source's without dimension " +
           std::to_string(r));
      return self;
    }
    SlotLoops outer_loops(l, slot_digits_where(l, [&](const Digit &g) { return g.dim != r; }));
    SlotLoops inner_loops(l, slot_digits_where(l, [&](const Digit &g) { return g.dim == r; }));
    std::vector<Expr> values = outer_loops.values;
    for (size_t i = 0; i < values.size(); ++i)
      if (inner_loops.values[i])
        values[i] = inner_loops.values[i];
    std::vector<Expr> dst_values(dst_layout.digits.size());
    for (size_t j = 0; j < dst_values.size(); ++j)
      dst_values[j] = values[origin[j]];
    const Expr dst_slot = dst_layout.slot(dst_values);

    const ScalarType at = reduce_accum_type(n->reduce_kind, n->src->dtype, n->dst->dtype);
    Var acc = make_var("red", at);
    const Buffer &src = regs_.at(n->src.get()), &dst = dst_in_registers ? regs_.at(n->dst.get()) : n->dst;
    // The result of the destination's slot digits at `slot_values` into its register, or by
    // its first holder into shared memory (where the element lies inside the destination).
    auto result = [&](const std::vector<Expr> &slot_values, const Expr &value) -> Stmt {
      std::vector<Expr> idx;
      std::vector<Expr> guards;
      if (dst_in_registers) {
        idx = {dst_layout.slot(slot_values)};
      } else {
        for (int d = 0; d < dst_layout.rank(); ++d) {
          idx.push_back(dst_layout.index(d, tid(), slot_values));
          if (dst_layout.padded(d))
            guards.push_back(lt(idx.back(), int_imm(dst_layout.shape[d], idx.back()->type)));
        }
        for (const Expr &g : {dst_layout.holds(tid()), dst_layout.first_replica(tid())})
          if (g)
            guards.push_back(g);
      }
      Expr out = n->clear ? value : reduce_combine(n->reduce_kind, reduce_convert(load(dst, idx), at), value);
      Stmt st = store(dst, idx, cast(n->dst->dtype, out));
      for (auto it = guards.rbegin(); it != guards.rend(); ++it)
        st = if_then_else(*it, st);
      return st;
    };
    std::vector<Stmt> row;
    std::int64_t count = 1;
    for (auto &[v, extent] : inner_loops.loops)
      count *= extent;
    if (count <= max_tree_leaves) {
      // The thread's elements of the row combined pairwise, as a tree: a chain of dependent
      // operations as long as the row stalls the warp (most of attention's softmax).
      std::vector<Expr> level;
      const std::vector<int> inner = slot_digits_where(l, [&](const Digit &g) { return g.dim == r; });
      for (std::int64_t c = 0; c < count; ++c) {
        std::vector<Expr> at_c = values;
        std::int64_t rest = c;
        for (auto it = inner.rbegin(); it != inner.rend(); ++it) {
          at_c[*it] = int_imm(rest % l.digits[*it].extent);
          rest /= l.digits[*it].extent;
        }
        level.push_back(reduce_leaf(n->reduce_kind, load(src, {l.slot(at_c)}), at));
      }
      while (level.size() > 1) {
        std::vector<Expr> next;
        for (size_t i = 0; i + 1 < level.size(); i += 2)
          next.push_back(reduce_combine(n->reduce_kind, level[i], level[i + 1]));
        if (level.size() % 2)
          next.push_back(level.back());
        level = std::move(next);
      }
      row.push_back(declare(acc, level[0]));
    } else {
      row.push_back(declare(acc, reduce_identity(n->reduce_kind, at)));
      Stmt step = assign(acc, reduce_step(n->reduce_kind, acc, load(src, {l.slot(values)})));
      for (auto &k : inner_loops.kinds)
        k = ForKind::Unrolled;
      row.push_back(inner_loops.wrap(step));
    }
    // The threads that split r: lanes of a warp (shuffles) and warps (shared memory).
    struct Part {
      std::int64_t stride, extent;
    };
    std::vector<Part> lanes, warps;
    for (const Digit &g : l.digits) {
      if (!g.thread || g.dim != r || g.extent == 1)
        continue;
      if (g.stride >= warp_) {
        warps.push_back({g.stride, g.extent});
      } else if (g.stride * g.extent <= warp_) {
        lanes.push_back({g.stride, g.extent});
      } else {
        lanes.push_back({g.stride, warp_ / g.stride});
        warps.push_back({warp_, g.stride * g.extent / warp_});
      }
    }
    std::sort(lanes.begin(), lanes.end(), [](const Part &a, const Part &b) { return a.stride > b.stride; });
    for (const Part &p : lanes)
      for (std::int64_t offset = p.stride * p.extent / 2; offset >= p.stride; offset /= 2)
        row.push_back(assign(acc, reduce_combine(n->reduce_kind, acc, shuffle_xor(acc, int(offset)))));
    if (warps.empty()) {
      row.push_back(result(dst_values, acc));
      return outer_loops.wrap(seq(row));
    }
    if (warps.size() > 1) {
      fail("reduction of '" + n->src->name + "' over more than one warp digit");
      return self;
    }
    // Each warp's first lane of the row leaves its result in shared memory, at [slot, the
    // thread's other digits, warp of the row]; then every thread combines its row's (the
    // barrier between is insert-sync's).
    auto part_value = [&](const Part &p) { return thread_digit(tid(), p.stride, p.extent, k_.threads); };
    auto part_zero = [&](const Part &p) { return thread_digit_is_zero(tid(), p.stride, p.extent, k_.threads); };
    Expr key = nullptr;
    std::int64_t groups = 1;
    std::vector<int> others;
    for (int i = 0; i < int(l.digits.size()); ++i)
      if (l.digits[i].thread && l.digits[i].dim != r)
        others.push_back(i);
    std::sort(others.begin(), others.end(), [&](int a, int b) {
      return l.digits[a].stride != l.digits[b].stride ? l.digits[a].stride > l.digits[b].stride : a < b;
    });
    for (int i : others) {
      Expr v = l.digit_value(i, tid());
      key = key ? add(mul(key, int_imm(l.digits[i].extent)), v) : v;
      groups *= l.digits[i].extent;
    }
    if (!key)
      key = int_imm(0);
    const Part w = warps[0];
    Buffer partial = make_buffer("red_warps", Scope::Shared, at, {dst_layout.slots(), groups, w.extent});
    scratch_.push_back(partial);
    Expr first_lane = nullptr;
    for (const Part &p : lanes)
      first_lane = first_lane ? logical_and(first_lane, part_zero(p)) : part_zero(p);
    Stmt leave = store(partial, {dst_slot, key, part_value(w)}, acc);
    row.push_back(first_lane ? if_then_else(first_lane, leave) : leave);
    Stmt first = outer_loops.wrap(seq(row));

    SlotLoops again(l, slot_digits_where(l, [&](const Digit &g) { return g.dim != r; }));
    std::vector<Expr> again_values(dst_layout.digits.size());
    for (size_t j = 0; j < again_values.size(); ++j)
      again_values[j] = again.values[origin[j]];
    const Expr again_slot = dst_layout.slot(again_values);
    Var all = make_var("red", at);
    std::vector<Stmt> combine = {declare(all, load(partial, {again_slot, key, int_imm(0)}))};
    for (std::int64_t x = 1; x < w.extent; ++x)
      combine.push_back(assign(all, reduce_combine(n->reduce_kind, all, load(partial, {again_slot, key, int_imm(x)}))));
    combine.push_back(result(again_values, all));
    Stmt combined = again.wrap(seq(combine));
    Stmt lowered = seq({first, combined});
    cross_warp_[lowered.get()] = {lowered, first, combined, n->src.get(), n->dst.get()};
    return lowered;
  }
};

} // namespace

Kernel lower_fragments(const Kernel &kernel, const Target &target) {
  if (kernel.layouts.empty())
    return kernel;
  Kernel k = kernel;
  Lowerer lowerer(k, target);
  k.body = lowerer.mutate(kernel.body);
  if (!lowerer.problem_.empty())
    throw std::logic_error("lower-fragments: " + lowerer.problem_);
  if (!lowerer.scratch_.empty()) {
    std::vector<Stmt> body;
    for (auto &b : lowerer.scratch_)
      body.push_back(decl_buffer(b));
    body.push_back(k.body);
    k.body = seq(body);
  }
  k.layouts = lowerer.register_layouts(); // no fragment is left: the registers keep the layouts
  k.bindings.clear();                     // every bound nest is lowered
  return k;
}

} // namespace tile::transforms
