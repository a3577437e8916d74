#include "transforms/InferLayout.h"

#include <algorithm>
#include <functional>
#include <set>

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

/// Registers a fragment may take per thread before it is better off in shared memory (a
/// tensor-core accumulator may take more: the gemm keeps it in registers anyway).
constexpr std::int64_t max_slots = 64, max_mma_slots = 256;

bool is_full(const Region &r) {
  const Buffer &b = r.buffer;
  if (int(r.tile_dims.size()) != b->rank())
    return false;
  for (int d = 0; d < b->rank(); ++d)
    if (!is_const_int(r.begin[d], 0) || r.extent[d] != b->extent(d))
      return false;
  return true;
}

/// Whether `idx` are exactly the variables `vars`, in order.
bool same_vars(const std::vector<Expr> &idx, const std::vector<const VarNode *> &vars) {
  if (idx.size() != vars.size())
    return false;
  for (size_t i = 0; i < idx.size(); ++i)
    if (idx[i].get() != static_cast<const ExprNode *>(vars[i]))
      return false;
  return true;
}

/// One element access of a fragment in a parallel nest.
struct NestAccess {
  const BufferNode *buffer;
  enum Kind { Element, Row, Column, Other } kind;
};

} // namespace

std::optional<Fragment> mma_accumulator_layout(const GemmNode *g, int threads) {
  const Buffer &a = g->a.buffer, &b = g->b.buffer, &c = g->c.buffer;
  const bool sixteen = (a->dtype == ScalarType::BF16 && b->dtype == ScalarType::BF16) ||
                       (a->dtype == ScalarType::F16 && b->dtype == ScalarType::F16);
  if (!sixteen || a->scope != Scope::Shared || b->scope != Scope::Shared || a->rank() != 2 || b->rank() != 2 ||
      !is_full(g->a) || !is_full(g->b) || c->scope != Scope::Fragment || c->rank() != 2 || !is_full(g->c) ||
      c->dtype != ScalarType::F32 || threads % 32 != 0)
    return std::nullopt;
  const std::int64_t M = c->extent(0), N = c->extent(1), K = g->transpose_a ? a->extent(0) : a->extent(1);
  // ldmatrix reads 16-byte rows: row strides and k steps in multiples of 8 elements.
  if (K % 16 != 0 || a->extent(1) % 8 != 0 || b->extent(1) % 8 != 0)
    return std::nullopt;
  const int warps = threads / 32;
  std::optional<MmaShape> best;
  auto consider = [&](int wm) {
    const int wn = warps / wm;
    if (warps % wm != 0 || M % (16 * wm) != 0 || N % (8 * wn) != 0)
      return;
    MmaShape l{MmaShape::C, M, N, wm, wn};
    if (l.atoms_m() * l.atoms_n() * 4 > max_mma_slots)
      return;
    // Square: the warp tile closest to square (fewest operand loads per mma).
    auto skew = [](const MmaShape &x) {
      std::int64_t h = x.rows / x.warps_m, w = x.cols / x.warps_n;
      return h > w ? h - w : w - h;
    };
    if (!best || skew(l) < skew(*best))
      best = l;
  };
  if (g->policy == WarpPolicy::FullRow)
    consider(warps); // warps stacked along the rows, each with all columns
  else if (g->policy == WarpPolicy::FullCol)
    consider(1);
  if (!best)
    for (int wm = 1; wm <= warps; ++wm)
      consider(wm);
  if (!best)
    return std::nullopt;
  return mma_fragment(*best, threads);
}

namespace {

class Inference {
public:
  explicit Inference(const Kernel &k) : k_(k) {}

  LayoutMap run() {
    for_each_node(k_.body, nullptr, [&](const Stmt &s) {
      if (auto d = s->as<DeclBufferNode>(); d && d->buffer->scope == Scope::Fragment) {
        const BufferNode *b = d->buffer.get();
        fragments_.insert(b);
        if (b->rank() > 2)
          shared_.insert(b);
      }
    });
    collect(k_.body);
    // Rank-1 fragments take the layout their uses ask for, or their own.
    for (const BufferNode *b : fragments_) {
      if (shared_.count(b))
        continue;
      if (b->rank() == 2) {
        auto &asked = mma_[b];
        if (asked.size() > 1)
          shared_.insert(b); // gemms that would lay it out differently
        else
          layout_[b] = asked.empty() ? matrix_fragment(b->extent(0), b->extent(1), k_.threads) : asked[0];
        continue;
      }
      auto &asked = demands_[b];
      if (asked.empty())
        layout_[b] = vector_fragment(b->extent(0), k_.threads);
      else if (asked.size() == 1)
        layout_[b] = *asked.begin();
      else
        shared_.insert(b);
    }
    // Falling back to shared memory can invalidate other fragments' uses: repeat to a
    // fixed point (only ever more fragments fall back).
    for (bool changed = true; changed;) {
      size_t before = shared_.size();
      for (auto &c : checks_)
        c();
      for (auto &[b, l] : layout_)
        if (l.slots() > (l.mma ? max_mma_slots : max_slots))
          shared_.insert(b);
      changed = shared_.size() != before;
    }
    LayoutMap out;
    for (auto &[b, l] : layout_)
      if (!shared_.count(b))
        out[b] = l;
    return out;
  }

private:
  const Kernel &k_;
  std::set<const BufferNode *> fragments_, shared_;
  std::map<const BufferNode *, Fragment> layout_;
  /// Per fragment, the distinct layouts its uses ask for.
  std::map<const BufferNode *, std::vector<Fragment>> demands_;
  /// Per rank-2 fragment, the tensor-core accumulator layouts its gemms ask for.
  std::map<const BufferNode *, std::vector<Fragment>> mma_;
  /// Re-checked until nothing more falls back.
  std::vector<std::function<void()>> checks_;

  bool is_fragment(const Buffer &b) const { return fragments_.count(b.get()) > 0; }
  bool in_registers(const BufferNode *b) const { return fragments_.count(b) && !shared_.count(b); }

  void demand(const BufferNode *b, const Fragment &l) {
    auto &d = demands_[b];
    for (auto &x : d)
      if (x == l)
        return;
    d.push_back(l);
  }

  /// Every fragment accessed element-wise in `e` or `s` is used outside a parallel nest.
  void accessed_outside(const Expr &e) {
    if (!e)
      return;
    for_each_expr(e, [&](const Expr &x) {
      if (auto l = x->as<LoadNode>(); l && is_fragment(l->buffer))
        shared_.insert(l->buffer.get());
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
    if (is_fragment(r.buffer) && !is_full(r))
      shared_.insert(r.buffer.get());
    for (auto &b : r.begin)
      accessed_outside(b);
  }

  /// Walks uniform code (outside parallel nests).
  void collect(const Stmt &s) {
    if (!s)
      return;
    if (auto nest = parallel_nest(s)) {
      collect_nest(*nest);
      return;
    }
    switch (s->kind) {
    case StmtKind::Seq:
      for (auto &c : s->as<SeqNode>()->stmts)
        collect(c);
      return;
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
        shared_.insert(c->src.buffer.get());
      if (is_fragment(c->src.buffer) && is_fragment(c->dst.buffer)) {
        const BufferNode *a = c->src.buffer.get(), *b = c->dst.buffer.get();
        if (a->rank() != 2 || b->rank() != 2) {
          shared_.insert(a); // rank-1 pairs would have to agree: not worth it
          shared_.insert(b);
        }
        checks_.push_back([this, a, b] { // element by element in one thread: the same layout
          if (in_registers(a) != in_registers(b) || (in_registers(a) && !(layout_[a] == layout_[b]))) {
            shared_.insert(a);
            shared_.insert(b);
          }
        });
      }
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
        if (is_fragment(a->src->buffer)) {
          const BufferNode *b = a->src->buffer.get();
          checks_.push_back([this, b] {
            if (in_registers(b) && layout_.count(b) && layout_[b].replicated())
              shared_.insert(b); // each element once, not once per copy
          });
        }
      }
      return;
    }
    case StmtKind::Reduce: {
      auto r = s->as<ReduceNode>();
      const BufferNode *src = r->src.get(), *dst = r->dst.get();
      if (!is_fragment(r->src) || !is_fragment(r->dst) || src->rank() != 2 || r->dim != 1 || dst->rank() != 1) {
        if (is_fragment(r->src))
          shared_.insert(src);
        if (is_fragment(r->dst))
          shared_.insert(dst);
        return;
      }
      Fragment rows = drop_dim(matrix_fragment(src->extent(0), src->extent(1), k_.threads), 1);
      demand(dst, rows);
      checks_.push_back([this, src, dst, rows] {
        if (!in_registers(src) || !in_registers(dst) || !(layout_[dst] == rows)) {
          shared_.insert(src);
          shared_.insert(dst);
        }
      });
      return;
    }
    case StmtKind::Gemm: {
      // Tensor cores when the operands allow, the accumulator then in their layout; else
      // the FMA path, on fragments in shared memory.
      auto g = s->as<GemmNode>();
      auto mma = mma_accumulator_layout(g, k_.threads);
      for (const Region *r : {&g->a, &g->b, &g->c})
        if (is_fragment(r->buffer) && !(mma && r == &g->c))
          shared_.insert(r->buffer.get());
      if (mma) {
        auto &asked = mma_[g->c.buffer.get()];
        if (std::find(asked.begin(), asked.end(), *mma) == asked.end())
          asked.push_back(*mma);
      }
      return;
    }
    case StmtKind::Cumsum: {
      auto c = s->as<CumsumNode>();
      for (const Buffer *b : {&c->src, &c->dst})
        if (is_fragment(*b))
          shared_.insert(b->get());
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
      if (is_fragment(st->buffer))
        shared_.insert(st->buffer.get());
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

  void collect_nest(const ParallelNest &nest) {
    std::vector<const VarNode *> vars;
    std::vector<std::int64_t> extents;
    for (auto *l : nest.loops) {
      vars.push_back(l->var.get());
      extents.push_back(*as_const_int(l->extent));
    }
    // Every fragment access in the nest (guards included), classified.
    std::vector<NestAccess> accesses;
    bool replicating_effects = false, writes_local = false;
    std::set<const BufferNode *> stored, loaded;
    auto classify = [&](const Buffer &b, const std::vector<Expr> &idx) {
      if (!is_fragment(b))
        return;
      NestAccess a{b.get(), NestAccess::Other};
      bool shape_matches = b->rank() == int(extents.size());
      for (int d = 0; shape_matches && d < b->rank(); ++d)
        shape_matches = b->extent(d) == extents[d];
      if (shape_matches && same_vars(idx, vars))
        a.kind = NestAccess::Element;
      else if (vars.size() == 2 && b->rank() == 1 && idx.size() == 1 && idx[0].get() == (const ExprNode *)vars[0] &&
               b->extent(0) == extents[0])
        a.kind = NestAccess::Row;
      else if (vars.size() == 2 && b->rank() == 1 && idx.size() == 1 && idx[0].get() == (const ExprNode *)vars[1] &&
               b->extent(0) == extents[1])
        a.kind = NestAccess::Column;
      accesses.push_back(a);
    };
    auto visit_stmt = [&](const Stmt &st) {
      for_each_node(
          st,
          [&](const Expr &e) {
            if (auto l = e->as<LoadNode>()) {
              classify(l->buffer, l->indices);
              loaded.insert(l->buffer.get());
            }
          },
          [&](const Stmt &x) {
            if (auto store = x->as<StoreNode>()) {
              classify(store->buffer, store->indices);
              writes_local |= store->buffer->scope == Scope::Local;
              stored.insert(store->buffer.get());
            }
            else if (x->as<AtomicNode>() || x->as<PrintNode>())
              replicating_effects = true;
            else if (auto c = x->as<CopyNode>()) { // tile ops inside a nest: not element-wise
              for (const Region *r : {&c->src, &c->dst})
                if (is_fragment(r->buffer))
                  shared_.insert(r->buffer.get());
            }
          });
    };
    for (auto &g : nest.guards)
      for (auto &c : g)
        for_each_expr(c, [&](const Expr &e) {
          if (auto l = e->as<LoadNode>())
            classify(l->buffer, l->indices);
        });
    visit_stmt(nest.body);

    for (auto &a : accesses)
      if (a.kind == NestAccess::Other)
        shared_.insert(a.buffer);
    // A nest that fills a local buffer runs whole in every thread (each holds all of it),
    // so the fragments it touches cannot be split over the threads as registers.
    if (vars.size() > 2 || writes_local) {
      for (auto &a : accesses)
        shared_.insert(a.buffer);
      return;
    }
    if (vars.size() == 2) {
      Fragment m = matrix_fragment(extents[0], extents[1], k_.threads);
      const Fragment row_vector = drop_dim(m, 1), column_vector = drop_dim(m, 0);
      for (auto &a : accesses) {
        if (a.kind == NestAccess::Row)
          demand(a.buffer, row_vector);
        else if (a.kind == NestAccess::Column)
          demand(a.buffer, column_vector);
      }
      checks_.push_back([this, accesses, m, row_vector, column_vector] {
        // The nest runs as a tensor-core accumulator it touches is laid out, if any, else
        // as the matrix layout of its extents.
        Fragment binding = m;
        for (auto &a : accesses)
          if (a.kind == NestAccess::Element && in_registers(a.buffer) &&
              layout_[a.buffer].mma)
            binding = layout_[a.buffer];
        for (auto &a : accesses) {
          if (!in_registers(a.buffer))
            continue;
          const Fragment &l = layout_[a.buffer];
          bool ok = a.kind == NestAccess::Element ? l == binding
                                        : binding.mma                            ? false
                                        : a.kind == NestAccess::Row              ? l == row_vector
                                                             : l == column_vector;
          if (!ok)
            shared_.insert(a.buffer);
        }
      });
      return;
    }
    // A 1-D nest runs as its register fragments are laid out: they must agree, and a
    // replicated layout runs the body once per copy, which atomics and prints must not.
    // Stores outside the registers are then done by one of the copies (lower-fragments),
    // so the others must not read them back.
    std::vector<const BufferNode *> read_back;
    for (auto *b : stored)
      if (b->scope != Scope::Local && loaded.count(b))
        read_back.push_back(b);
    checks_.push_back([this, accesses, replicating_effects, read_back] {
      bool effects = replicating_effects;
      for (auto *b : read_back)
        effects |= !in_registers(b);
      const Fragment *first = nullptr;
      for (auto &a : accesses) {
        if (!in_registers(a.buffer))
          continue;
        const Fragment &l = layout_[a.buffer];
        if ((first && !(l == *first)) || (effects && l.replicated()))
          shared_.insert(a.buffer);
        else if (!first)
          first = &l;
      }
    });
  }
};

} // namespace

Kernel infer_layout(const Kernel &kernel) {
  Kernel k = kernel;
  k.layouts = Inference(kernel).run();
  // ldmatrix reads 16 bytes from each of 8 rows at once: rows an even number of 16-byte
  // units apart share banks. One more unit per row spreads them over all banks.
  for_each_node(k.body, nullptr, [&](const Stmt &s) {
    auto g = s->as<GemmNode>();
    if (!g)
      return;
    auto it = k.layouts.find(g->c.buffer.get());
    if (it == k.layouts.end() || !it->second.mma)
      return;
    for (const Buffer *b : {&g->a.buffer, &g->b.buffer}) {
      const std::int64_t row = (*b)->extent(1), units = row * bytes((*b)->dtype) / 16;
      if (units % 2 == 0)
        k.row_pitch[b->get()] = row + 16 / bytes((*b)->dtype);
    }
  });
  return k;
}

} // namespace tile::transforms
