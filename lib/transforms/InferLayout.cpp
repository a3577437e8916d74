#include "transforms/InferLayout.h"

#include <algorithm>
#include <functional>
#include <set>

#include "analysis/MmaPlan.h"
#include "analysis/SharedAccess.h"
#include "ir/Visitor.h"

namespace tile::transforms {

using namespace ir;

namespace {

bool is_nest_loop(const Stmt &s) {
  auto f = s ? s->as<ForNode>() : nullptr;
  return f && f->for_kind == ForKind::Parallel && as_const_int(f->extent) && is_const_int(f->begin, 0) &&
         is_const_int(f->step, 1);
}

} // namespace

std::optional<ParallelNest> parallel_nest(const Stmt &s) {
  if (!is_nest_loop(s))
    return std::nullopt;
  ParallelNest nest;
  Stmt cur = s;
  while (true) {
    auto f = cur->as<ForNode>();
    nest.loops.push_back(f);
    std::vector<Expr> guards;
    Stmt inner = f->body;
    while (auto i = inner->as<IfNode>()) {
      if (i->else_case)
        break;
      guards.push_back(i->cond);
      inner = i->then_case;
    }
    if (!is_nest_loop(inner)) {
      nest.guards.push_back({});
      nest.body = f->body;
      return nest;
    }
    nest.guards.push_back(guards);
    cur = inner;
  }
}

namespace {

/// One access of a fragment in a parallel nest: the nest dimensions its indices are, in
/// order, or none (`other`: any other index).
struct Access {
  const BufferNode *buffer;
  std::vector<int> dims;
  bool other = false;
  bool store = false;
};

/// The uses of fragments that ask something of their layouts.
struct NestSite {
  const VarNode *var; // the outermost loop's variable: the key of the binding
  std::uint32_t loc;
  std::vector<std::int64_t> extents;
  std::vector<Access> accesses;
  bool effects = false;                        // atomics or prints: once per holder
  std::vector<const BufferNode *> read_back;   // non-local buffers stored, then loaded
};
struct ReduceSite {
  const ReduceNode *n;
  std::uint32_t loc;
};
struct CopySite {
  const BufferNode *src, *dst;
  std::uint32_t loc;
};
struct GemmSite {
  const GemmNode *g;
  std::uint32_t loc;
  MmaAtomRef atom;             // the matrix instruction it runs on,
  std::optional<MmaShape> mma; // on this warp grid
  /// Why not the atoms before it (or any), by family ("": no atom takes the operands).
  std::vector<std::pair<std::string, std::string>> why_not;
  /// "gemm on FMA: <the last reason>; not <family>: <its reason>..." or, on an atom, the
  /// families before it: "; not wgmma: ...".
  std::string refusals(bool fma) const {
    std::string out;
    for (size_t i = 0; i < why_not.size(); ++i) {
      if (fma && i + 1 == why_not.size())
        out = why_not[i].second + out;
      else
        out += "; not " + why_not[i].first + ": " + why_not[i].second;
    }
    return out;
  }
};

std::string quoted(const BufferNode *b) { return "'" + b->name + "'"; }

class Inference {
public:
  Inference(const Kernel &k, const Target &t, const InferLayoutOptions &o) : k_(k), target_(t), options_(o) {
    for_each_node(k.body, nullptr, [&](const Stmt &s) {
      if (auto a = s->as<AnnotateLayoutNode>())
        annotated_.insert(a->buffer.get());
    });
  }

  void run() {
    collect(k_.body);
    align_chained_gemms();
    // Falling back to shared memory can undo what other fragments' layouts were derived
    // from: solve again until nothing more falls back.
    for (;;) {
      const size_t before = shared_.size();
      solve();
      check();
      if (shared_.size() == before)
        break;
    }
  }

  LayoutMap layouts() const {
    LayoutMap out;
    for (auto &[b, l] : layout_)
      if (!shared_.count(b))
        out.emplace(b, l);
    return out;
  }
  /// The atom of each gemm that runs on one (its accumulator in registers).
  std::map<const GemmNode *, MmaAtomRef> atoms() const {
    std::map<const GemmNode *, MmaAtomRef> out;
    for (auto &g : gemms_)
      if (g.mma && in_registers(g.g->c.buffer.get()))
        out.emplace(g.g, g.atom);
    return out;
  }
  std::map<const VarNode *, Fragment> bindings() const {
    std::map<const VarNode *, Fragment> out;
    for (auto &n : nests_) {
      bool touches = false;
      for (auto &a : n.accesses)
        touches |= !a.other && in_registers(a.buffer);
      if (auto b = binding(n); b && touches)
        out.emplace(n.var, *b);
    }
    return out;
  }

  /// Remarks: where each fragment lives and why, which instruction each gemm runs on.
  std::vector<Kernel::Remark> remarks() const {
    std::vector<Kernel::Remark> out;
    for (const BufferNode *b : fragments_) {
      if (auto it = shared_.find(b); it != shared_.end())
        out.push_back({b->loc, "fragment " + quoted(b) + " in shared memory: " + it->second});
      else if (auto l = layout_.find(b); l != layout_.end())
        out.push_back({b->loc, "fragment " + quoted(b) + " in registers: " + to_string(l->second)});
    }
    for (auto &g : gemms_) {
      const ScalarType at = g.g->a.buffer->dtype, bt = g.g->b.buffer->dtype;
      if (!g.mma || !in_registers(g.g->c.buffer.get())) {
        out.push_back({g.loc, "gemm on FMA: " + (g.mma ? "its accumulator " + quoted(g.g->c.buffer.get()) +
                                                             " is in shared memory"
                                                       : g.refusals(true))});
        continue;
      }
      const MmaShape &m = *g.mma;
      const MmaAtom &atom = *g.atom;
      const bool a_regs = in_registers(g.g->a.buffer.get());
      // A policy the grid does not follow (its tiles or the registers do not allow it).
      std::string policy;
      if (g.g->policy == WarpPolicy::FullCol && m.warps_m != atom.warps)
        policy = "full_col (warps side by side along N)";
      else if (g.g->policy == WarpPolicy::FullRow && m.warps_n != 1)
        policy = "full_row (warps stacked along M)";
      if (!policy.empty())
        policy = "; not " + policy + ": no such grid of " + std::to_string(k_.threads / target_.warp_size) +
                 " warps tiles " + std::to_string(m.rows) + "x" + std::to_string(m.cols) + " with its atoms";
      if (atom.warps > 1) {
        const int groups = m.warps_m * m.warps_n / atom.warps;
        out.push_back({g.loc, "gemm on " + atom.units + " (" + atom.remark_name(at, bt, int(m.cols / m.warps_n)) + ", " +
                                  std::to_string(groups) + (groups == 1 ? " warpgroup, " : " warpgroups, ") +
                                  (a_regs ? "a from registers, b from shared memory)" : "a and b from shared memory)") +
                                  policy + g.refusals(false)});
      } else {
        out.push_back({g.loc, "gemm on " + atom.units + " (" + atom.remark_name(at, bt, atom.n) + ", " +
                                  std::to_string(m.warps_m) + "x" + std::to_string(m.warps_n) + " warps, a from " +
                                  (a_regs ? "registers" : "shared memory via " + atom.operand_load) + ")" +
                                  policy + g.refusals(false)});
      }
    }
    return out;
  }

private:
  const Kernel &k_;
  const Target &target_;
  const InferLayoutOptions options_;
  std::set<const BufferNode *> annotated_; // buffers annotate_layout names: laid out as asked
  std::vector<const BufferNode *> fragments_; // in declaration order
  std::set<const BufferNode *> is_fragment_;
  std::map<const BufferNode *, std::string> shared_; // and why
  std::map<const BufferNode *, Fragment> layout_;
  std::vector<NestSite> nests_;
  std::vector<ReduceSite> reduces_;
  std::vector<CopySite> copies_;
  std::vector<GemmSite> gemms_;
  std::vector<const BufferNode *> atomic_sources_;
  /// Nests over vectors alone, bound by a free choice.
  std::map<const NestSite *, Fragment> chosen_;
  bool progress_ = false;

  bool is_fragment(const Buffer &b) const { return is_fragment_.count(b.get()) > 0; }
  bool in_registers(const BufferNode *b) const { return is_fragment_.count(b) && !shared_.count(b); }

  void to_shared(const BufferNode *b, const std::string &why) {
    if (is_fragment_.count(b) && !shared_.count(b))
      shared_[b] = why;
  }

  /// Gives `b` layout `l` if it has none; whether it has `l` now. A fragment in shared
  /// memory takes any.
  bool assign(const BufferNode *b, const Fragment &l) {
    if (!in_registers(b))
      return true;
    auto it = layout_.find(b);
    if (it == layout_.end()) {
      layout_.emplace(b, l);
      progress_ = true;
      return true;
    }
    return it->second == l;
  }

  /// A gemm whose accumulator is copied into the next gemm's operand a in registers
  /// (attention's S -> P), both on a warp's instruction and neither asking for a policy:
  /// both take the grid of warps stacked along M (full_row), where it fits, so that the
  /// accumulator's layout is a's and a stays in registers. (Warpgroup instructions stack
  /// their warps along M already.)
  void align_chained_gemms() {
    auto stacked = [&](GemmSite &site) -> std::optional<MmaShape> {
      auto g = std::make_shared<GemmNode>(*site.g);
      g->policy = WarpPolicy::FullRow;
      std::string why;
      auto shape = analysis::plan_mma(*g, k_.threads, target_, *site.atom, why);
      return shape && shape->warps_n == 1 ? shape : std::nullopt;
    };
    auto on_warp_atom = [](const GemmSite &site) {
      return site.mma && site.atom && site.atom->warps == 1 && site.g->policy == WarpPolicy::Square;
    };
    for (auto &second : gemms_) {
      const BufferNode *a = second.g->a.buffer.get();
      if (!on_warp_atom(second) || !second.atom->a_from_accumulator || !is_fragment_.count(a))
        continue;
      for (auto &c : copies_) {
        if (c.dst != a)
          continue;
        for (auto &first : gemms_) {
          if (&first == &second || first.g->c.buffer.get() != c.src || !on_warp_atom(first) ||
              (first.mma->warps_n == 1 && second.mma->warps_n == 1))
            continue;
          auto s1 = stacked(first), s2 = stacked(second);
          if (s1 && s2) {
            first.mma = s1;
            second.mma = s2;
          }
        }
      }
    }
  }

  // Solving -------------------------------------------------------------------------------

  void solve() {
    layout_.clear();
    chosen_.clear();
    strict();
    do
      common();
    while (free_step());
  }

  /// Tensor-core gemms fix their accumulators' layouts, and their first operands' where
  /// these are fragments (then read from registers).
  void strict() {
    for (auto &g : gemms_) {
      const BufferNode *a = g.g->a.buffer.get(), *c = g.g->c.buffer.get();
      if (!g.mma || !in_registers(c))
        continue;
      const MmaAtom &atom = *g.atom;
      if (!assign(c, mma_fragment(*g.mma, k_.threads, atom.accumulator)))
        to_shared(c, "the accumulator of two gemms that lay it out differently");
      if (in_registers(a) && !atom.a_from_accumulator) {
        to_shared(a, "operand a of a gemm on " + atom.remark_name(a->dtype, g.g->b.buffer->dtype, atom.n) +
                         ", whose registers of a are not laid out as any fragment's");
      } else if (in_registers(a)) {
        MmaShape op{MmaShape::A, g.mma->rows, a->extent(1), g.mma->warps_m, g.mma->warps_n};
        op.group_warps = g.mma->group_warps;
        if (!assign(a, mma_fragment(op, k_.threads, atom.accumulator)))
          to_shared(a, "operand a of gemms that need it laid out differently");
      }
    }
  }

  /// The layout a nest runs by: of a fragment it accesses with all its variables in order
  /// (a tensor-core layout first), else the one a free choice gave it.
  std::optional<Fragment> binding(const NestSite &n) const {
    std::optional<Fragment> found = full_rank_binding(n);
    if (!found)
      if (auto it = chosen_.find(&n); it != chosen_.end())
        found = it->second;
    return found;
  }
  std::optional<Fragment> full_rank_binding(const NestSite &n) const {
    std::optional<Fragment> found;
    for (auto &a : n.accesses) {
      if (a.other || !in_registers(a.buffer))
        continue;
      auto it = layout_.find(a.buffer);
      if (it == layout_.end() || int(a.dims.size()) != int(n.extents.size()))
        continue;
      bool in_order = true;
      for (size_t d = 0; d < a.dims.size(); ++d)
        in_order &= a.dims[d] == int(d);
      if (!in_order)
        continue;
      // A tensor-core accumulator first (its gemm fixed it), then a gemm's operand a.
      auto rank = [](const Fragment &f) { return !f.mma ? 0 : f.mma->operand == MmaShape::C ? 2 : 1; };
      if (!found || rank(it->second) > rank(*found))
        found = it->second;
    }
    return found;
  }

  /// Propagates layouts through reductions, copies and nests until nothing changes.
  void common() {
    do {
      progress_ = false;
      for (auto &r : reduces_) {
        const BufferNode *src = r.n->src.get(), *dst = r.n->dst.get();
        if (!in_registers(src) || !layout_.count(src))
          continue;
        if (!assign(dst, drop_dim(layout_.at(src), r.n->dim)))
          to_shared(dst, "reduced from " + quoted(src) + " into a layout its other uses do not share");
      }
      for (auto &c : copies_) {
        const bool has_src = layout_.count(c.src), has_dst = layout_.count(c.dst);
        if (has_src && in_registers(c.dst) && !assign(c.dst, layout_.at(c.src)))
          to_shared(c.dst, "copied from " + quoted(c.src) + " (" + to_string(layout_.at(c.src)) +
                               "), which its other uses lay out differently (" + to_string(layout_.at(c.dst)) + ")");
        else if (!has_src && has_dst && in_registers(c.src))
          assign(c.src, layout_.at(c.dst));
      }
      for (auto &n : nests_) {
        auto b = binding(n);
        if (b)
          bind(n, *b);
      }
    } while (progress_);
  }

  void bind(const NestSite &n, const Fragment &b) {
    for (auto &a : n.accesses) {
      if (a.other || !in_registers(a.buffer))
        continue;
      Fragment want = select_dims(b, a.dims);
      if (!assign(a.buffer, want))
        to_shared(a.buffer, "a parallel loop bound by " + to_string(b) + " reads it as " + to_string(want) +
                                ", but it is laid out as " + to_string(layout_.at(a.buffer)));
    }
  }

  /// Where propagation leaves a choice: one choice, then propagation again. Matrices before
  /// vectors (a vector's layout is mostly a matrix's row or column vector), each in program
  /// order: a 2-D nest over a matrix without a layout runs by the matrix layout of its
  /// extents; a matrix no nest touches gets its matrix layout; a 2-D nest over vectors alone
  /// runs by its matrix; a 1-D nest by the vector layout of its extent; a vector alone gets
  /// that too.
  bool free_step() {
    auto open_nest = [&](std::size_t depth, bool need_matrix) -> const NestSite * {
      for (auto &n : nests_) {
        if (n.extents.size() != depth || binding(n))
          continue;
        // A nest over a matrix without a layout; or any nest over vectors (laid out or
        // not) that nothing binds yet: it needs a layout to run by.
        for (auto &a : n.accesses)
          if (!a.other && in_registers(a.buffer) &&
              (need_matrix ? !layout_.count(a.buffer) && a.dims.size() == 2 : true))
            return &n;
      }
      return nullptr;
    };
    auto lone = [&](int rank) -> const BufferNode * {
      for (const BufferNode *b : fragments_)
        if (in_registers(b) && !layout_.count(b) && b->rank() == rank)
          return b;
      return nullptr;
    };
    if (auto n = open_nest(2, true)) {
      bind(*n, matrix_fragment(n->extents[0], n->extents[1], k_.threads, target_.warp_size));
    } else if (auto b = lone(2)) {
      assign(b, matrix_fragment(b->extent(0), b->extent(1), k_.threads, target_.warp_size));
    } else if (auto n2 = open_nest(2, false)) {
      chosen_.emplace(n2, matrix_fragment(n2->extents[0], n2->extents[1], k_.threads, target_.warp_size));
      bind(*n2, chosen_.at(n2));
    } else if (auto n1 = open_nest(1, false)) {
      chosen_.emplace(n1, vector_fragment(n1->extents[0], k_.threads, target_.warp_size));
      bind(*n1, chosen_.at(n1));
    } else if (auto v = lone(1)) {
      assign(v, vector_fragment(v->extent(0), k_.threads, target_.warp_size));
    } else {
      return false;
    }
    return true;
  }

  /// What the layouts found cannot serve (only ever sends more fragments to shared memory).
  void check() {
    for (auto &[b, l] : layout_) {
      const std::int64_t limit = l.mma ? target_.max_accumulator_registers : target_.max_fragment_registers;
      if (in_registers(b) && l.slots() > limit)
        to_shared(b, "needs " + std::to_string(l.slots()) + " registers per thread, more than the " +
                         std::to_string(limit) + " a fragment may take");
    }
    // (A source in registers reduces into a destination in shared memory: the first thread
    // holding each result stores it, lower-fragments.)
    for (auto &r : reduces_) {
      const BufferNode *src = r.n->src.get(), *dst = r.n->dst.get();
      if (!in_registers(src) && in_registers(dst))
        to_shared(dst, "reduced from " + quoted(src) + ", which is in shared memory");
    }
    for (auto *b : atomic_sources_)
      if (in_registers(b) && layout_.count(b) && layout_.at(b).replicated())
        to_shared(b, "the source of a region atomic, which would add each element once per thread holding it");
    for (auto &n : nests_) {
      auto b = binding(n);
      if (!b || !b->replicated())
        continue;
      // A replicated layout runs the body once per holder: atomics and prints must not, and
      // stores outside the registers are one holder's (lower-fragments), so the others must
      // not read them back.
      bool effects = n.effects;
      for (auto *x : n.read_back)
        effects |= !in_registers(x);
      if (!effects)
        continue;
      for (auto &a : n.accesses)
        if (in_registers(a.buffer) && layout_.count(a.buffer) && layout_.at(a.buffer).replicated())
          to_shared(a.buffer, std::string("held by several threads each, in a parallel loop that ") +
                                  (n.effects ? "has atomics or prints" : "reads back what it stores"));
    }
    for (auto &g : gemms_) {
      const BufferNode *a = g.g->a.buffer.get(), *b = g.g->b.buffer.get(), *c = g.g->c.buffer.get();
      const bool tensor_cores = g.mma && in_registers(c);
      const std::string why = tensor_cores                 ? ""
                              : g.mma                      ? "its accumulator is in shared memory"
                              : g.why_not.empty()          ? ""
                                                           : g.why_not.back().second;
      if (!tensor_cores) {
        to_shared(a, "operand a of a gemm on FMA (" + why + ")");
        to_shared(b, "operand b of a gemm on FMA (" + why + ")");
        to_shared(c, "the accumulator of a gemm on FMA (" + why + ")");
      } else {
        to_shared(b, "operand b of a tensor-core gemm, which " + g.atom->operand_load + " reads from shared memory");
      }
    }
  }

  // Collecting ----------------------------------------------------------------------------

  /// Every fragment accessed element-wise in `e` is used outside a parallel nest.
  void accessed_outside(const Expr &e) {
    if (!e)
      return;
    for_each_expr(e, [&](const Expr &x) {
      if (auto l = x->as<LoadNode>(); l && is_fragment(l->buffer))
        to_shared(l->buffer.get(), "read outside a parallel loop");
    });
  }
  static void for_each_expr(const Expr &e, const std::function<void(const Expr &)> &f) {
    class V : public IRVisitor {
    public:
      const std::function<void(const Expr &)> &f;
      explicit V(const std::function<void(const Expr &)> &fn) : f(fn) {}
      void visit(const Expr &e) override {
        f(e);
        IRVisitor::visit(e);
      }
    } v(f);
    v.visit(e);
  }

  void region_use(const Region &r) {
    if (is_fragment(r.buffer) && !r.whole())
      to_shared(r.buffer.get(), "used through a part of it");
    for (auto &b : r.begin)
      accessed_outside(b);
  }

  void collect(const Stmt &s) {
    if (!s)
      return;
    if (auto nest = parallel_nest(s)) {
      collect_nest(s, *nest);
      return;
    }
    switch (s->kind) {
    case StmtKind::Seq:
      for (auto &c : s->as<SeqNode>()->stmts)
        collect(c);
      return;
    case StmtKind::DeclBuffer: {
      const BufferNode *b = s->as<DeclBufferNode>()->buffer.get();
      if (b->scope != Scope::Fragment)
        return;
      fragments_.push_back(b);
      is_fragment_.insert(b);
      if (b->rank() > 2)
        to_shared(b, "fragments of rank " + std::to_string(b->rank()) + " live in shared memory");
      return;
    }
    case StmtKind::For: {
      auto f = s->as<ForNode>();
      accessed_outside(f->begin);
      accessed_outside(f->extent);
      accessed_outside(f->step);
      collect(f->body);
      return;
    }
    case StmtKind::If: {
      auto i = s->as<IfNode>();
      accessed_outside(i->cond);
      collect(i->then_case);
      collect(i->else_case);
      return;
    }
    case StmtKind::Copy: {
      auto c = s->as<CopyNode>();
      region_use(c->src);
      region_use(c->dst);
      // Every thread holds all of a local buffer, and takes all of the source into it.
      if (is_fragment(c->src.buffer) && c->dst.buffer->scope == Scope::Local)
        to_shared(c->src.buffer.get(), "copied into a local buffer, which every thread holds whole");
      if (is_fragment(c->src.buffer) && is_fragment(c->dst.buffer))
        copies_.push_back({c->src.buffer.get(), c->dst.buffer.get(), s->loc});
      return;
    }
    case StmtKind::Fill: {
      auto f = s->as<FillNode>();
      region_use(f->dst);
      accessed_outside(f->value);
      return;
    }
    case StmtKind::Atomic: {
      auto a = s->as<AtomicNode>();
      region_use(a->dst);
      accessed_outside(a->value);
      if (a->src) {
        region_use(*a->src);
        if (is_fragment(a->src->buffer))
          atomic_sources_.push_back(a->src->buffer.get());
      }
      return;
    }
    case StmtKind::Reduce: {
      auto r = s->as<ReduceNode>();
      const BufferNode *src = r->src.get(), *dst = r->dst.get();
      if (!is_fragment(r->src) || !is_fragment(r->dst) || src->rank() != 2 || r->dim != 1 || dst->rank() != 1) {
        const std::string why = src->rank() != 2 || dst->rank() != 1
                                    ? "reduced from rank " + std::to_string(src->rank()) + " to rank " +
                                          std::to_string(dst->rank()) + ", which registers do not serve"
                                : r->dim != 1 ? "reduced along its first dimension, which registers do not serve"
                                              : "reduced between shared memory and a fragment";
        to_shared(src, why);
        to_shared(dst, why);
        return;
      }
      reduces_.push_back({r, s->loc});
      return;
    }
    case StmtKind::Gemm: {
      auto g = s->as<GemmNode>();
      GemmSite site{g, s->loc, nullptr, std::nullopt, {}};
      // The atoms it may take: the warpgroup ones where asked for, and those that read
      // shared tiles through descriptors only where no annotate_layout fixed the tiles'.
      std::vector<MmaAtomRef> atoms;
      const BufferNode *annotated = annotated_.count(g->a.buffer.get())   ? g->a.buffer.get()
                                    : annotated_.count(g->b.buffer.get()) ? g->b.buffer.get()
                                                                          : nullptr;
      std::vector<std::pair<std::string, std::string>> left_out;
      for (const MmaAtomRef &a : target_.gemm_atoms(options_.warpgroup_mma)) {
        if (a->read != OperandRead::Descriptor || !annotated)
          atoms.push_back(a);
        else if (a->takes(g->a.buffer->dtype, g->b.buffer->dtype) &&
                 std::none_of(left_out.begin(), left_out.end(), [&](auto &w) { return w.first == a->family; }))
          left_out.emplace_back(a->family, "annotate_layout fixes the layout of " + quoted(annotated) +
                                               ", which it reads in its own");
      }
      if (!options_.tensor_cores) {
        site.why_not = {{"", "-fplugin-arg-tile-gemm=fma asks for FMA"}};
      } else if (auto choice = analysis::choose_mma(*g, k_.threads, target_, atoms, site.why_not)) {
        site.atom = choice->atom;
        site.mma = choice->shape;
      }
      if (options_.tensor_cores)
        site.why_not.insert(site.why_not.begin(), left_out.begin(), left_out.end());
      if (site.mma && g->transpose_a)
        to_shared(g->a.buffer.get(), "operand a of a tensor-core gemm with transpose_a, which " +
                                         site.atom->operand_load + " reads from shared memory");
      gemms_.push_back(site);
      return;
    }
    case StmtKind::Cumsum: {
      auto c = s->as<CumsumNode>();
      for (const Buffer *b : {&c->src, &c->dst})
        to_shared(b->get(), "an operand of cumsum, which scans in shared memory");
      return;
    }
    case StmtKind::Declare:
      accessed_outside(s->as<DeclareNode>()->init);
      return;
    case StmtKind::Assign:
      accessed_outside(s->as<AssignNode>()->value);
      return;
    case StmtKind::Store: {
      auto st = s->as<StoreNode>();
      to_shared(st->buffer.get(), "written outside a parallel loop");
      for (auto &i : st->indices)
        accessed_outside(i);
      accessed_outside(st->value);
      return;
    }
    case StmtKind::Print:
      for (auto &a : s->as<PrintNode>()->args)
        accessed_outside(a);
      return;
    case StmtKind::Assert:
      accessed_outside(s->as<AssertNode>()->cond);
      return;
    default:
      return;
    }
  }

  void collect_nest(const Stmt &root, const ParallelNest &nest) {
    NestSite site;
    site.var = nest.loops[0]->var.get();
    site.loc = root->loc;
    std::vector<const VarNode *> vars;
    for (auto *l : nest.loops) {
      vars.push_back(l->var.get());
      site.extents.push_back(*as_const_int(l->extent));
    }
    bool writes_local = false;
    std::set<const BufferNode *> stored, loaded;
    auto classify = [&](const Buffer &b, const std::vector<Expr> &idx, bool store) {
      if (!is_fragment(b))
        return;
      Access a{b.get(), {}, false, store};
      for (size_t i = 0; i < idx.size() && !a.other; ++i) {
        auto it = std::find(vars.begin(), vars.end(), static_cast<const VarNode *>(idx[i].get()));
        if (idx[i]->kind != ExprKind::Var || it == vars.end() || b->extent(int(i)) != site.extents[it - vars.begin()])
          a.other = true;
        else
          a.dims.push_back(int(it - vars.begin()));
      }
      // The nest's variables in order (all of them, or one for a rank-1 fragment): others
      // (a transpose) would need the data moved between threads.
      for (size_t i = 1; i < a.dims.size(); ++i)
        a.other |= a.dims[i] <= a.dims[i - 1];
      if (int(idx.size()) != b->rank())
        a.other = true;
      site.accesses.push_back(a);
    };
    auto visit_stmt = [&](const Stmt &st) {
      for_each_node(
          st,
          [&](const Expr &e) {
            if (auto l = e->as<LoadNode>()) {
              classify(l->buffer, l->indices, false);
              loaded.insert(l->buffer.get());
            }
          },
          [&](const Stmt &x) {
            if (auto store = x->as<StoreNode>()) {
              classify(store->buffer, store->indices, true);
              writes_local |= store->buffer->scope == Scope::Local;
              stored.insert(store->buffer.get());
            } else if (x->as<AtomicNode>() || x->as<PrintNode>()) {
              site.effects = true;
            } else if (auto c = x->as<CopyNode>()) { // tile ops inside a nest: not element-wise
              for (const Region *r : {&c->src, &c->dst})
                to_shared(r->buffer.get(), "used by a copy inside a parallel loop");
            }
          });
    };
    for (auto &g : nest.guards)
      for (auto &c : g)
        for_each_expr(c, [&](const Expr &e) {
          if (auto l = e->as<LoadNode>())
            classify(l->buffer, l->indices, false);
        });
    visit_stmt(nest.body);
    for (auto *b : stored)
      if (b->scope != Scope::Local && loaded.count(b))
        site.read_back.push_back(b);

    for (auto &a : site.accesses) {
      if (a.other)
        to_shared(a.buffer, "indexed in a parallel loop by other than the loop's variables in order");
      // Written through fewer of the nest's variables than it has: each of the threads that
      // hold a copy of the element would update only its own (`if (j == 0) v(i) = ...`).
      else if (a.store && a.dims.size() < site.extents.size())
        to_shared(a.buffer, "written in a parallel loop over more dimensions than it has (each thread holding a "
                            "copy would update only its own)");
    }
    // A nest that fills a local buffer runs whole in every thread (each holds all of it),
    // so the fragments it touches cannot be split over the threads as registers.
    if (vars.size() > 2 || writes_local) {
      for (auto &a : site.accesses)
        to_shared(a.buffer, vars.size() > 2 ? "accessed in a parallel loop of more than two dimensions"
                                            : "accessed in a parallel loop that fills a local buffer");
      return;
    }
    nests_.push_back(std::move(site));
  }
};

} // namespace

namespace {

/// Each gemm on a matrix instruction gets its atom (GemmNode::atom).
class RecordAtoms : public IRMutator {
public:
  explicit RecordAtoms(std::map<const GemmNode *, MmaAtomRef> atoms) : atoms_(std::move(atoms)) {}

private:
  std::map<const GemmNode *, MmaAtomRef> atoms_;
  Stmt mutate_Gemm(const Stmt &self, const GemmNode *n) override {
    auto it = atoms_.find(n);
    if (it == atoms_.end())
      return self;
    auto g = n->with(n->a, n->b, n->c);
    g->atom = it->second;
    return g;
  }
};

} // namespace

Kernel infer_layout(const Kernel &kernel, const Target &target, const InferLayoutOptions &options) {
  Kernel k = kernel;
  Inference inference(kernel, target, options);
  inference.run();
  k.layouts = inference.layouts();
  k.bindings = inference.bindings();
  k.body = RecordAtoms(inference.atoms()).mutate(k.body);
  for (auto &r : inference.remarks())
    k.remarks.push_back(r);
  // annotate_layout on a tile in shared memory: row_major keeps it dense (no padding),
  // swizzled(S) swizzles its 16-byte chunks within S-byte spans (the widest span its rows
  // take, at most S); col_major is not acted on yet. Each request not taken as written is
  // a remark.
  for_each_node(k.body, nullptr, [&](const Stmt &s) {
    auto a = s->as<AnnotateLayoutNode>();
    if (!a)
      return;
    if (k.layouts.count(a->buffer.get()) || !analysis::is_block_shared(a->buffer.get())) {
      k.remarks.push_back({a->loc, "'" + a->buffer->name + "' is " +
                                       (k.layouts.count(a->buffer.get()) ? "in registers" : "a local buffer") +
                                       ": annotate_layout applies to tiles in shared memory"});
      return;
    }
    const BufferNode &b = *a->buffer;
    const std::int64_t cols = b.extent(b.rank() - 1);
    const std::string what = "shared '" + b.name + "': ";
    if (a->layout == LayoutKind::RowMajor) {
      k.shared_layouts[&b] = SharedLayout{cols, 0};
    } else if (a->layout == LayoutKind::Swizzled) {
      const int s = fit_swizzle(b, cols, a->swizzle_bytes);
      if (s == 0) {
        k.remarks.push_back({a->loc, what + "swizzled(" + std::to_string(a->swizzle_bytes) + ") not taken: rows of " +
                                         std::to_string(cols * bytes(b.dtype)) +
                                         " bytes take no swizzle (a whole number of 32-byte spans, rank 2 or more)"});
        return;
      }
      if (s != a->swizzle_bytes)
        k.remarks.push_back({a->loc, what + "swizzled(" + std::to_string(a->swizzle_bytes) + ") taken as swizzled(" +
                                         std::to_string(s) + "): rows of " + std::to_string(cols * bytes(b.dtype)) +
                                         " bytes"});
      k.shared_layouts[&b] = SharedLayout{cols, s};
    } else {
      k.remarks.push_back({a->loc, what + "col_major is not acted on yet: the tile stays row-major"});
    }
  });
  // Atoms that read their operands through descriptors (wgmma) read them in a hardware
  // swizzle: each tile's rows in slabs of one swizzle span (the narrowest of those its gemms
  // take, analysis::descriptor_swizzle), each slab on the boundary the swizzle counts from
  // (ir/SharedLayout.h).
  std::map<const BufferNode *, int> swizzle;
  auto take = [&](const BufferNode *b, int s) {
    auto [it, fresh] = swizzle.emplace(b, s);
    if (!fresh)
      it->second = std::min(it->second, s);
  };
  for_each_node(k.body, nullptr, [&](const Stmt &s) {
    auto g = s->as<GemmNode>();
    if (!g || !g->atom || g->atom->read != OperandRead::Descriptor)
      return;
    auto [sa, sb] = analysis::descriptor_swizzles(*g, *k.layouts.at(g->c.buffer.get()).mma, *g->atom);
    // a in shared memory: a shared tile, or a fragment that is not in registers (sent to
    // shared memory after the plan took it in registers; any K takes a swizzle).
    if (!k.layouts.count(g->a.buffer.get()))
      take(g->a.buffer.get(), sa);
    take(g->b.buffer.get(), sb);
  });
  for (auto &[b, s] : swizzle)
    k.shared_layouts[b] = analysis::descriptor_layout(*b, s);
  // ldmatrix reads 16 bytes (the target's operand_row_bytes) from each of 8 rows at once:
  // rows an even number of such units apart share banks. One more unit per row spreads
  // them over all banks.
  for_each_node(k.body, nullptr, [&](const Stmt &s) {
    auto g = s->as<GemmNode>();
    if (!g || !g->atom || g->atom->read == OperandRead::Descriptor)
      return;
    for (const Buffer *b : {&g->a.buffer, &g->b.buffer}) {
      if (k.layouts.count(b->get()) || k.shared_layouts.count(b->get()))
        continue; // in registers, or laid out as annotate_layout asked
      const int unit = g->atom->operand_row_bytes;
      const std::int64_t row = (*b)->extent(1), units = row * bytes((*b)->dtype) / unit;
      if (units % 2 == 0)
        k.shared_layouts[b->get()] = SharedLayout{row + unit / bytes((*b)->dtype), 0};
    }
  });
  return k;
}

} // namespace tile::transforms
