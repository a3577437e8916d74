#include "transforms/LowerVectorAccess.h"

#include <algorithm>
#include <optional>
#include <set>

#include "analysis/Divisibility.h"
#include "analysis/SharedAccess.h"
#include "ir/Equality.h"
#include "ir/Visitor.h"

namespace tile::transforms {

using namespace ir;

namespace {

/// Whether a shared tile keeps only its 16-byte chunks whole (a swizzle, or slabs): wider
/// groups of consecutive elements are not consecutive there.
bool in_chunks(const SharedLayout *sl) { return sl && (sl->swizzle_bytes || sl->slab); }

bool same_indices(const std::vector<Expr> &a, const std::vector<Expr> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!equal(a[i], b[i]))
      return false;
  return true;
}


/// `x - y` when it is a constant that the expressions show: equal parts cancel, integer
/// constants added or subtracted count, integer casts are looked through (index arithmetic
/// does not overflow). Nothing otherwise.
std::optional<std::int64_t> difference(const Expr &x, const Expr &y) {
  if (equal(x, y))
    return 0;
  auto cx = as_const_int(x), cy = as_const_int(y);
  if (cx && cy)
    return *cx - *cy;
  auto castx = x->as<CastNode>(), casty = y->as<CastNode>();
  if (castx && casty && castx->type == casty->type && is_integer(castx->type) && is_integer(castx->value->type) &&
      is_integer(casty->value->type))
    return difference(castx->value, casty->value);
  auto bx = x->as<BinaryNode>(), by = y->as<BinaryNode>();
  auto additive = [](const BinaryNode *b) { return b && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub); };
  // x + c - y = (x - y) + c, and the same for a constant on y's side.
  if (additive(bx))
    if (auto c = as_const_int(bx->b))
      if (auto d = difference(bx->a, y))
        return *d + (bx->op == BinaryOp::Add ? *c : -*c);
  if (additive(by))
    if (auto c = as_const_int(by->b))
      if (auto d = difference(x, by->a))
        return *d - (by->op == BinaryOp::Add ? *c : -*c);
  // (a + b) - (a + b'): b - b'; (a + b) - (a' + b): a - a'.
  if (additive(bx) && additive(by) && bx->op == by->op) {
    if (equal(bx->a, by->a))
      if (auto d = difference(bx->b, by->b))
        return bx->op == BinaryOp::Add ? *d : -*d;
    if (equal(bx->b, by->b))
      return difference(bx->a, by->a);
  }
  return std::nullopt;
}

/// Calls `f` on `e` and every expression below it.
void for_each_expr(const Expr &e, const std::function<void(const Expr &)> &f) {
  class Walker : public IRVisitor {
  public:
    const std::function<void(const Expr &)> &f;
    explicit Walker(const std::function<void(const Expr &)> &g) : f(g) {}
    void visit(const Expr &x) override {
      if (x)
        f(x);
      IRVisitor::visit(x);
    }
  } w(f);
  w.visit(e);
}

/// A Vectorized loop that copies between a global tensor and registers or shared memory:
/// the parts the lowering needs.
struct Access {
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

/// Substitutions giving a lane's indices and guards, the loop's declarations inlined.
Substituter at_lane(const ForNode *n, const std::vector<const DeclareNode *> &decls, std::int64_t lane) {
  Substituter s;
  s.vars[n->var.get()] = int_imm(lane, n->var->type);
  for (auto *d : decls)
    s.vars[d->var.get()] = s.mutate(d->init);
  return s;
}

/// Whether `e` takes the values e0 + k v at lanes v = 0 .. V - 1 of `n` for one constant k
/// (k = `step` where given): then a comparison of two such expressions is monotone across
/// the lanes, and true at the first and last lanes means true at all.
bool affine_in_lane(const ForNode *n, const std::vector<const DeclareNode *> &decls, std::int64_t V, const Expr &e,
                    std::optional<std::int64_t> step = std::nullopt) {
  const Expr first = at_lane(n, decls, 0).mutate(e);
  std::optional<std::int64_t> k = step;
  for (std::int64_t v = 1; v < V; ++v) {
    auto d = difference(at_lane(n, decls, v).mutate(e), first);
    if (!d)
      return false;
    if (!k)
      k = *d;
    if (*d != *k * v)
      return false;
  }
  return true;
}

/// Whether `c` is a conjunction of comparisons of expressions affine in the lane (the bounds
/// checks of lower-tile-ops): true at the first and last lanes means true at all.
bool is_bounds_check(const ForNode *n, const std::vector<const DeclareNode *> &decls, std::int64_t V, const Expr &c) {
  auto b = c->as<BinaryNode>();
  if (!b)
    return false;
  if (b->op == BinaryOp::And)
    return is_bounds_check(n, decls, V, b->a) && is_bounds_check(n, decls, V, b->b);
  return (b->op == BinaryOp::LT || b->op == BinaryOp::GE) && affine_in_lane(n, decls, V, b->a) &&
         affine_in_lane(n, decls, V, b->b);
}

/// Whether lane v of `n` indexes element v past lane 0's in the last dimension and the same
/// index as lane 0 in the others.
bool consecutive(const ForNode *n, const std::vector<const DeclareNode *> &decls, std::int64_t V,
                 const std::vector<Expr> &idx) {
  for (size_t d = 0; d + 1 < idx.size(); ++d)
    if (!affine_in_lane(n, decls, V, idx[d], 0))
      return false;
  return !idx.empty() && affine_in_lane(n, decls, V, idx.back(), 1);
}

/// The lanes of a Vectorized loop: its constant count (2 or more) from 0 by 1, or nothing.
std::optional<std::int64_t> lane_count(const ForNode *n) {
  const auto V = as_const_int(n->extent);
  if (!V || *V < 2 || !is_const_int(n->begin, 0) || !is_const_int(n->step, 1))
    return std::nullopt;
  return *V;
}

/// The body's leading declarations (with initial values) and its last statement, or false.
bool split_body(const ForNode *n, std::vector<const DeclareNode *> &decls, Stmt &last) {
  if (auto q = n->body->as<SeqNode>()) {
    for (size_t i = 0; i < q->stmts.size(); ++i) {
      if (auto d = q->stmts[i]->as<DeclareNode>(); d && d->init && i + 1 < q->stmts.size())
        decls.push_back(d);
      else if (i + 1 == q->stmts.size())
        last = q->stmts[i];
      else
        return false;
    }
    return true;
  }
  last = n->body;
  return true;
}

class Lowering : public IRMutator {
public:
  Lowering(const Kernel &k, const Target &t) : k_(k), t_(t) {}

private:
  const Kernel &k_;
  const Target &t_;
  int async_depth_ = 0;
  /// Tensors whose flag a loop around was unswitched on (decided_), on its true side
  /// (assumed_) or its false side (refuted_).
  std::set<const BufferNode *> decided_, assumed_, refuted_;

  static Expr conj(const Expr &a, const Expr &b) { return a ? logical_and(a, b) : b; }

  const SharedLayout *shared_layout(const Buffer &b) const {
    auto it = k_.shared_layouts.find(b.get());
    return it == k_.shared_layouts.end() ? nullptr : &it->second;
  }
  /// The vector a move of `total` bytes of a shared tile laid out as `sl` goes in: as wide as
  /// the target moves, at most a 16-byte unit where the tile keeps only those whole; nothing
  /// where that is under 4 bytes or does not divide the move.
  std::optional<std::int64_t> shared_chunk(std::int64_t total, const SharedLayout *sl) const {
    std::int64_t chunk = std::min<std::int64_t>(total, t_.max_vector_bytes);
    if (in_chunks(sl))
      chunk = std::min<std::int64_t>(chunk, 16);
    if (chunk < 4 || (chunk & (chunk - 1)) != 0 || total % chunk != 0)
      return std::nullopt;
    return chunk;
  }

  /// The terms of a sum or difference of narrow signed indices, each with its sign (an
  /// unsigned sum stays whole: it wraps, and its terms widened apart would not).
  static void signed_terms(const Expr &e, bool negative, std::vector<std::pair<Expr, bool>> &out) {
    if (auto b = e->as<BinaryNode>();
        b && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub) && is_signed(b->type) && bits(b->type) <= 32) {
      signed_terms(b->a, negative, out);
      signed_terms(b->b, b->op == BinaryOp::Sub ? !negative : negative, out);
      return;
    }
    out.push_back({e, negative});
  }
  /// The offset of a tensor's element: stride-based, in i64 of narrow indices, each index's
  /// terms multiplied by the stride apart (a narrow index does not overflow, so neither do
  /// its terms), so that the device compiler sees the parts that are the same in every
  /// thread, or in every iteration of a loop, as parts of their own (attention's K and V
  /// copies: a pointer advanced by a uniform stride instead of each address computed
  /// afresh); with `unit_last`, the last stride taken as 1 (where a test has shown it is).
  static Expr tensor_offset(const Buffer &g, const std::vector<Expr> &idx, bool unit_last) {
    const int r = g->rank();
    Expr off;
    for (int d = 0; d < r; ++d) {
      std::vector<std::pair<Expr, bool>> terms;
      signed_terms(idx[d], false, terms);
      for (auto &[x, negative] : terms) {
        Expr term = cast(ScalarType::I64, x);
        if (!(unit_last && d == r - 1))
          term = mul(term, g->strides[d]);
        off = !off ? (negative ? unary(UnaryOp::Neg, term) : term)
                   : binary(negative ? BinaryOp::Sub : BinaryOp::Add, off, term);
      }
    }
    return off ? off : int_imm(0, ScalarType::I64);
  }

  std::optional<Access> parse(const ForNode *n) const {
    Access a;
    const auto V = lane_count(n);
    if (!V)
      return std::nullopt;
    a.V = *V;
    // The body: declarations, then one store, possibly under guards (ifs without else).
    Stmt last;
    if (!split_body(n, a.decls, last))
      return std::nullopt;
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
    const Scope scope = a.st->buffer->scope;
    a.is_load = scope == Scope::Local || scope == Scope::Shared || scope == Scope::Fragment;
    if (a.is_load) {
      if (!a.conds.empty())
        return std::nullopt;
      Expr v = a.st->value;
      if (auto s = v->as<SelectNode>()) {
        if (!(s->f->as<FloatImmNode>() || s->f->as<IntImmNode>()))
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
      if (!is_bounds_check(n, a.decls, a.V, c))
        return std::nullopt;
    a.g = a.is_load ? a.global_load->buffer : a.st->buffer;
    const std::vector<Expr> &gidx = a.is_load ? a.global_load->indices : a.st->indices;
    a.elem = bytes(a.g->dtype);
    a.rank = a.g->rank();
    a.total = a.V * a.elem;
    a.chunk = std::min<std::int64_t>(a.total, t_.max_vector_bytes);
    if (a.elem > 8 || a.total % a.chunk != 0 || (a.chunk & (a.chunk - 1)) != 0)
      return std::nullopt;
    // Lane v is element v past lane 0's in the last dimension, in the same place in the others.
    Substituter first = at_lane(n, a.decls, 0);
    if (!consecutive(n, a.decls, a.V, gidx))
      return std::nullopt;
    for (auto &i : gidx)
      a.first_idx.push_back(first.mutate(i));
    return a;
  }

  /// Chunks starting at a last index known to be a multiple of the chunk are aligned
  /// wherever the tensor's flag for that chunk holds.
  static bool flagged(const Access &a) {
    return a.chunk >= 4 && a.elem < a.chunk &&
           analysis::known_divisor(a.first_idx[a.rank - 1]) * a.elem % a.chunk == 0;
  }

  /// The lanes of `n` through a local array, moved as one vector at `off` of the tensor.
  Stmt through_lanes(const ForNode *n, const Access &a, const Expr &off) const {
    Buffer lanes = make_buffer("vec_lanes", Scope::Local, a.g->dtype, {a.V});
    const Expr zero = int_imm(0);
    Stmt lane_body;
    if (a.is_load) {
      // The lane's store as it was, the tensor's element read from the lanes.
      class Replace : public IRMutator {
      public:
        const LoadNode *target = nullptr;
        Expr with;
        Expr mutate_Load(const Expr &self, const LoadNode *l) override {
          return l == target ? with : IRMutator::mutate_Load(self, l);
        }
      };
      Replace r;
      r.target = a.global_load;
      r.with = load(lanes, {n->var});
      Expr value = a.st->value;
      if (auto s = value->as<SelectNode>())
        value = s->t;
      lane_body = store(a.st->buffer, a.st->indices, r.mutate(value));
    } else {
      lane_body = store(lanes, {n->var}, a.st->value);
    }
    std::vector<Stmt> body;
    for (auto *d : a.decls)
      body.push_back(declare(d->var, d->init));
    body.push_back(lane_body);
    Stmt lanes_loop = for_loop(n->var, n->begin, n->extent, ForKind::Unrolled, seq(body), n->step);
    // (Lanes that a shared tile gives: read from it as one vector too.)
    if (Stmt s = shared_reads(lanes_loop->as<ForNode>()))
      lanes_loop = s;
    auto move = [&](const Buffer &dst, const Expr &doff, const Buffer &src, const Expr &soff) {
      return std::make_shared<VectorMoveNode>(dst, doff, src, soff, int(a.total), int(a.chunk), false);
    };
    if (a.is_load)
      return seq({decl_buffer(lanes), move(lanes, zero, a.g, off), lanes_loop});
    return seq({decl_buffer(lanes), lanes_loop, move(a.g, off, lanes, zero)});
  }

  /// The vector access of `n` (parsed as `a`) at `off` of the tensor: into shared memory
  /// without registers where it can, else through the lanes.
  Stmt vector_access(const ForNode *n, const Access &a, const Expr &off) const {
    if (!a.is_load || a.converts || async_depth_ == 0 || !t_.async_copy || a.st->buffer->scope != Scope::Shared ||
        a.chunk < 4)
      return through_lanes(n, a, off);
    // Consecutive in the shared tile too (a swizzled tile keeps only its 16-byte chunks
    // whole: wider groups of lanes are not consecutive there).
    const Buffer &sb = a.st->buffer;
    const SharedLayout *sl = shared_layout(sb);
    Substituter first = at_lane(n, a.decls, 0);
    if (!consecutive(n, a.decls, a.V, a.st->indices) || (in_chunks(sl) && a.total > 16))
      return through_lanes(n, a, off);
    std::vector<Expr> dst_first;
    for (auto &i : a.st->indices)
      dst_first.push_back(first.mutate(i));
    const Expr dst_off = shared_offset(*sb, sl, dst_first);
    Stmt move = std::make_shared<VectorMoveNode>(sb, dst_off, a.g, off, int(a.total), int(a.chunk), true);
    // Shared buffers start aligned (Target::shared_alignment): an offset known to be a
    // multiple of the chunk needs no test.
    if (analysis::known_divisor(dst_off) * bytes(sb->dtype) % a.chunk == 0)
      return move;
    return if_then_else(std::make_shared<AlignedNode>(sb, dst_off, int(a.chunk)), move, through_lanes(n, a, off),
                        /*rare_else=*/true);
  }

  /// The loop as one vector access under the test that allows it, the loop itself else.
  Stmt lower(const Stmt &self, const ForNode *n, const Access &a) {
    const bool is_flagged = flagged(a);
    if (is_flagged && refuted_.count(a.g.get())) // the false side of an unswitched loop
      return self;
    Substituter first = at_lane(n, a.decls, 0), end = at_lane(n, a.decls, a.V - 1);
    // Inside a loop unswitched on the flag, its true side: no test at all.
    if (is_flagged && a.conds.empty() && assumed_.count(a.g.get()))
      return vector_access(n, a, tensor_offset(a.g, a.first_idx, true));
    Expr test;
    if (is_flagged) {
      test = std::make_shared<VectorFlagNode>(a.g, int(a.chunk));
    } else {
      test = binary(BinaryOp::EQ, a.g->strides[a.rank - 1], int_imm(1, ScalarType::I64));
    }
    for (auto &c : a.conds)
      test = conj(conj(test, first.mutate(c)), end.mutate(c));
    Expr off = tensor_offset(a.g, a.first_idx, is_flagged);
    if (!is_flagged)
      test = conj(test, std::make_shared<AlignedNode>(a.g, off, int(a.chunk)));
    return if_then_else(test, vector_access(n, a, off), self, /*rare_else=*/true);
  }

  /// A Vectorized loop reading block-shared buffers at consecutive, aligned elements: each
  /// such read first, as one vector into lanes. Null where there is none.
  Stmt shared_reads(const ForNode *n) const {
    const auto V = lane_count(n);
    if (!V)
      return nullptr;
    std::vector<const DeclareNode *> decls;
    Stmt last;
    if (!split_body(n, decls, last))
      decls.clear();
    // The reads that always happen (outside selects and ifs) and the buffers written.
    std::vector<const LoadNode *> reads;
    std::set<const BufferNode *> written;
    class Finder : public IRVisitor {
    public:
      std::vector<const LoadNode *> &reads;
      std::set<const BufferNode *> &written;
      int conditional = 0;
      Finder(std::vector<const LoadNode *> &r, std::set<const BufferNode *> &w) : reads(r), written(w) {}
      void visit_Load(const LoadNode *l) override {
        if (conditional == 0 && analysis::is_block_shared(l->buffer.get()))
          reads.push_back(l);
        IRVisitor::visit_Load(l);
      }
      void visit_Binary(const BinaryNode *b) override {
        if (b->op != BinaryOp::And && b->op != BinaryOp::Or)
          return IRVisitor::visit_Binary(b);
        visit(b->a);
        ++conditional; // (evaluated only as the left side decides)
        visit(b->b);
        --conditional;
      }
      void visit_Select(const SelectNode *s) override {
        visit(s->cond);
        ++conditional;
        visit(s->t);
        visit(s->f);
        --conditional;
      }
      void visit_If(const IfNode *i) override {
        visit(i->cond);
        ++conditional;
        visit(i->then_case);
        visit(i->else_case);
        --conditional;
      }
      void visit_For(const ForNode *f) override {
        ++conditional; // (its extent may be 0)
        IRVisitor::visit_For(f);
        --conditional;
      }
      void visit_Store(const StoreNode *s) override {
        written.insert(s->buffer.get());
        IRVisitor::visit_Store(s);
      }
      void visit_VectorMove(const VectorMoveNode *m) override {
        written.insert(m->dst.get());
        IRVisitor::visit_VectorMove(m);
      }
      void visit_Atomic(const AtomicNode *a) override {
        written.insert(a->dst.buffer.get());
        IRVisitor::visit_Atomic(a);
      }
    } finder(reads, written);
    finder.visit(n->body);
    // Variables the body declares: a read hoisted before the loop may not use them.
    std::set<const VarNode *> inner;
    for_each_node(n->body, nullptr, [&](const Stmt &x) {
      if (auto d = x->as<DeclareNode>())
        inner.insert(d->var.get());
      else if (auto f = x->as<ForNode>())
        inner.insert(f->var.get());
    });
    auto uses_inner = [&](const std::vector<Expr> &idx) {
      bool uses = false;
      for (auto &i : idx)
        for_each_expr(i, [&](const Expr &e) {
          if (auto v = e->as<VarNode>(); v && (inner.count(v) || v == n->var.get()))
            uses = true;
          else if (e->as<LoadNode>()) // (a buffer the loop may write)
            uses = true;
        });
      return uses;
    };
    std::vector<Stmt> before;
    std::vector<std::pair<const LoadNode *, Expr>> replaced;
    for (const LoadNode *l : reads) {
      const Buffer &b = l->buffer;
      if (written.count(b.get()))
        continue;
      bool done = false;
      for (auto &[prev, with] : replaced)
        done |= prev->buffer == b && same_indices(prev->indices, l->indices);
      if (done)
        continue;
      const int elem = bytes(b->dtype);
      const std::int64_t total = *V * elem;
      const SharedLayout *sl = shared_layout(b);
      const std::optional<std::int64_t> vector = shared_chunk(total, sl);
      if (!vector)
        continue;
      const std::int64_t chunk = *vector;
      // Lane v reads element v past lane 0's, in one row.
      Substituter first = at_lane(n, decls, 0);
      std::vector<Expr> first_idx;
      for (auto &i : l->indices)
        first_idx.push_back(first.mutate(i));
      if (!consecutive(n, decls, *V, l->indices) || uses_inner(first_idx))
        continue;
      const Expr off = shared_offset(*b, sl, first_idx);
      // Chunks aligned (the buffer starts aligned: Target::shared_alignment), and with a
      // swizzle, each chunk one of its 16-byte units.
      if (analysis::known_divisor(off) * elem % chunk != 0 ||
          (in_chunks(sl) && analysis::known_divisor(first_idx.back()) * elem % 16 != 0))
        continue;
      Buffer lanes = make_buffer(b->name + "_lanes", Scope::Local, b->dtype, {*V});
      before.push_back(decl_buffer(lanes));
      if (in_chunks(sl)) {
        // Each 16-byte unit where the swizzle put it: one move a unit.
        const std::int64_t unit = chunk / elem;
        for (std::int64_t c = 0; c < *V / unit; ++c) {
          std::vector<Expr> idx = first_idx;
          idx.back() = add(idx.back(), int_imm(c * unit, idx.back()->type));
          before.push_back(std::make_shared<VectorMoveNode>(lanes, int_imm(c * unit), b, shared_offset(*b, sl, idx),
                                                            int(chunk), int(chunk), false));
        }
      } else {
        before.push_back(std::make_shared<VectorMoveNode>(lanes, int_imm(0), b, off, int(total), int(chunk), false));
      }
      replaced.push_back({l, load(lanes, {n->var})});
    }
    if (replaced.empty())
      return nullptr;
    class Replace : public IRMutator {
    public:
      const std::vector<std::pair<const LoadNode *, Expr>> &with;
      explicit Replace(const std::vector<std::pair<const LoadNode *, Expr>> &w) : with(w) {}
      Expr mutate_Load(const Expr &self, const LoadNode *l) override {
        for (auto &[prev, e] : with)
          if (prev->buffer == l->buffer && same_indices(prev->indices, l->indices))
            return e;
        return IRMutator::mutate_Load(self, l);
      }
    } replace(replaced);
    before.push_back(for_loop(n->var, n->begin, n->extent, n->for_kind, replace.mutate(n->body), n->step));
    return seq(before);
  }

  /// A Vectorized loop whose one statement stores into a block-shared buffer at
  /// consecutive, aligned elements (a fragment's lanes into a shared tile): the values
  /// through lanes, stored as one vector (one a 16-byte unit where the tile keeps only its
  /// units whole). Null where it is not one.
  Stmt shared_writes(const ForNode *n) const {
    const auto V = lane_count(n);
    if (!V)
      return nullptr;
    std::vector<const DeclareNode *> decls;
    Stmt last;
    if (!split_body(n, decls, last))
      return nullptr;
    auto st = last ? last->as<StoreNode>() : nullptr;
    if (!st || !analysis::is_block_shared(st->buffer.get()))
      return nullptr;
    const Buffer &b = st->buffer;
    // (Lanes computed before any is stored: the values may not read the tile.)
    bool reads_tile = false;
    for_each_expr(st->value, [&](const Expr &e) {
      if (auto l = e->as<LoadNode>())
        reads_tile |= l->buffer == b;
    });
    for (auto *d : decls)
      for_each_expr(d->init, [&](const Expr &e) {
        if (auto l = e->as<LoadNode>())
          reads_tile |= l->buffer == b;
      });
    if (reads_tile || !consecutive(n, decls, *V, st->indices))
      return nullptr;
    const int elem = bytes(b->dtype);
    const std::int64_t total = *V * elem;
    const SharedLayout *sl = shared_layout(b);
    const std::optional<std::int64_t> vector = shared_chunk(total, sl);
    if (elem > 8 || !vector)
      return nullptr;
    const std::int64_t chunk = *vector;
    Substituter first = at_lane(n, decls, 0);
    std::vector<Expr> first_idx;
    for (auto &i : st->indices)
      first_idx.push_back(first.mutate(i));
    bool loads = false;
    for (auto &i : first_idx)
      for_each_expr(i, [&](const Expr &e) { loads |= e->as<LoadNode>() != nullptr; });
    if (loads)
      return nullptr;
    // Chunks aligned: the buffer starts aligned (Target::shared_alignment); a tile kept in
    // 16-byte units (whose rows and slabs are whole units) places an element's bytes within
    // its unit by the last index alone.
    const Expr off = shared_offset(*b, sl, first_idx);
    const std::int64_t last_divisor = analysis::known_divisor(first_idx.back()) * elem;
    if (in_chunks(sl) ? last_divisor % chunk != 0 : analysis::known_divisor(off) * elem % chunk != 0)
      return nullptr;
    Buffer lanes = make_buffer(b->name + "_lanes", Scope::Local, b->dtype, {*V});
    std::vector<Stmt> body;
    for (auto *d : decls)
      body.push_back(declare(d->var, d->init));
    body.push_back(store(lanes, {n->var}, st->value));
    std::vector<Stmt> out = {decl_buffer(lanes),
                             for_loop(n->var, n->begin, n->extent, ForKind::Unrolled, seq(body), n->step)};
    const std::int64_t unit = chunk / elem;
    for (std::int64_t c = 0; c < *V / unit; ++c) {
      std::vector<Expr> idx = first_idx;
      idx.back() = add(idx.back(), int_imm(c * unit, idx.back()->type));
      out.push_back(std::make_shared<VectorMoveNode>(b, c == 0 ? off : shared_offset(*b, sl, idx), lanes,
                                                     int_imm(c * unit), int(chunk), int(chunk), false));
    }
    return seq(out);
  }

  Stmt mutate_Async(const Stmt &self, const AsyncNode *n) override {
    ++async_depth_;
    Stmt s = IRMutator::mutate_Async(self, n);
    --async_depth_;
    return s;
  }

  Stmt mutate_For(const Stmt &self, const ForNode *n) override {
    if (n->for_kind == ForKind::Vectorized) {
      if (auto a = parse(n))
        return lower(self, n, *a);
      if (Stmt s = shared_reads(n)) {
        // (The loop it rebuilt may store into a shared tile too.)
        auto q = s->as<SeqNode>();
        if (auto f = q && !q->stmts.empty() ? q->stmts.back()->as<ForNode>() : nullptr)
          if (Stmt w = shared_writes(f)) {
            std::vector<Stmt> out = q->stmts;
            out.back() = w;
            return seq(out);
          }
        return s;
      }
      if (Stmt s = shared_writes(n))
        return s;
      return IRMutator::mutate_For(self, n);
    }
    // A thread's share of copies whose vector accesses all depend on one uniform test (a
    // tensor's vector flag, no bounds): the loop twice, the test once, outside.
    if (n->for_kind == ForKind::Threads || n->for_kind == ForKind::Slots) {
      std::vector<const BufferNode *> tensors;
      std::vector<std::pair<Buffer, int>> flags;
      for_each_node(n->body, nullptr, [&](const Stmt &x) {
        auto f = x->as<ForNode>();
        if (!f || f->for_kind != ForKind::Vectorized)
          return;
        auto a = parse(f);
        if (!a || !a->conds.empty() || !flagged(*a) || decided_.count(a->g.get()))
          return;
        bool known = false;
        for (auto &[g, c] : flags)
          known |= g == a->g && c == a->chunk;
        if (!known)
          flags.push_back({a->g, int(a->chunk)});
        if (std::find(tensors.begin(), tensors.end(), a->g.get()) == tensors.end())
          tensors.push_back(a->g.get());
      });
      if (!tensors.empty()) {
        Expr test;
        for (auto &[g, c] : flags)
          test = conj(test, std::make_shared<VectorFlagNode>(g, c));
        // The loop once with `tensors` on `side`.
        auto lower_side = [&](std::set<const BufferNode *> &side) {
          side.insert(tensors.begin(), tensors.end());
          Stmt s = mutate_For(self, n);
          for (auto *g : tensors)
            side.erase(g);
          return s;
        };
        decided_.insert(tensors.begin(), tensors.end());
        Stmt then_case = lower_side(assumed_);
        Stmt else_case = lower_side(refuted_);
        for (auto *g : tensors)
          decided_.erase(g);
        return if_then_else(test, then_case, else_case, /*rare_else=*/true);
      }
    }
    return IRMutator::mutate_For(self, n);
  }
};

} // namespace

Kernel lower_vector_access(const Kernel &kernel, const Target &target) {
  Kernel k = kernel;
  Lowering l(kernel, target);
  k.body = l.mutate(kernel.body);
  return k;
}

} // namespace tile::transforms
