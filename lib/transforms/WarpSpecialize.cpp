#include "transforms/WarpSpecialize.h"

#include <algorithm>
#include <array>
#include <set>

#include "analysis/Divisibility.h"
#include "analysis/FragmentPressure.h"
#include "analysis/SharedAccess.h"
#include "ir/SharedLayout.h"
#include "ir/Visitor.h"
#include "transforms/LowerTileOps.h"
#include "transforms/PipelineStages.h"

namespace tile::transforms {

using namespace ir;

namespace {

constexpr int kConsumerBaseRegisters = 40;
constexpr int kProducerRegisters = 40;

/// The variables `e` reads.
void free_vars(const Expr &e, std::set<const VarNode *> &out) {
  class Vars : public IRVisitor {
  public:
    std::set<const VarNode *> &out;
    explicit Vars(std::set<const VarNode *> &o) : out(o) {}
    void visit_Var(const VarNode *v) override { out.insert(v); }
  } vars(out);
  vars.visit(e);
}

/// What a statement of a loop's body reads and writes: whole buffers and scalar variables.
/// `opaque`: a statement whose order with others this pass does not reason about.
struct Effects {
  std::set<const void *> reads, writes;
  bool opaque = false;
  std::set<const VarNode *> set_vars;        // declared or assigned (loop variables included)
  std::set<const BufferNode *> declared_bufs; // declared
};

Effects effects_of(const Stmt &s) {
  Effects e;
  for_each_node(
      s,
      [&](const Expr &x) {
        if (auto v = x->as<VarNode>())
          e.reads.insert(v);
        else if (auto l = x->as<LoadNode>())
          e.reads.insert(l->buffer.get());
      },
      [&](const Stmt &x) {
        switch (x->kind) {
        case StmtKind::Seq:
        case StmtKind::If:
          break;
        case StmtKind::Print: { // (prints keep their order: all write one stream)
          static const int output = 0;
          e.writes.insert(&output);
          break;
        }
        case StmtKind::Store:
          e.writes.insert(x->as<StoreNode>()->buffer.get());
          break;
        case StmtKind::Declare:
          e.writes.insert(x->as<DeclareNode>()->var.get());
          e.set_vars.insert(x->as<DeclareNode>()->var.get());
          break;
        case StmtKind::Assign:
          e.writes.insert(x->as<AssignNode>()->var.get());
          e.set_vars.insert(x->as<AssignNode>()->var.get());
          break;
        case StmtKind::For:
          e.writes.insert(x->as<ForNode>()->var.get());
          e.set_vars.insert(x->as<ForNode>()->var.get());
          break;
        case StmtKind::DeclBuffer:
          e.writes.insert(x->as<DeclBufferNode>()->buffer.get());
          e.declared_bufs.insert(x->as<DeclBufferNode>()->buffer.get());
          break;
        case StmtKind::Copy:
          e.reads.insert(x->as<CopyNode>()->src.buffer.get());
          e.writes.insert(x->as<CopyNode>()->dst.buffer.get());
          break;
        case StmtKind::Gemm: {
          auto g = x->as<GemmNode>();
          e.reads.insert({g->a.buffer.get(), g->b.buffer.get(), g->c.buffer.get()});
          e.writes.insert(g->c.buffer.get());
          break;
        }
        case StmtKind::Fill:
          e.writes.insert(x->as<FillNode>()->dst.buffer.get());
          break;
        case StmtKind::Reduce:
          e.reads.insert({x->as<ReduceNode>()->src.get(), x->as<ReduceNode>()->dst.get()});
          e.writes.insert(x->as<ReduceNode>()->dst.get());
          break;
        case StmtKind::Cumsum:
          e.reads.insert(x->as<CumsumNode>()->src.get());
          e.writes.insert(x->as<CumsumNode>()->dst.get());
          break;
        default: // atomics, barriers, lowered operations: not reordered
          e.opaque = true;
        }
      });
  return e;
}

/// Whether two statements must keep their order: one writes what the other reads or writes.
bool conflict(const Effects &a, const Effects &b) {
  if (a.opaque || b.opaque)
    return true;
  auto meets = [](const std::set<const void *> &x, const std::set<const void *> &y) {
    return std::any_of(x.begin(), x.end(), [&](const void *v) { return y.count(v) > 0; });
  };
  return meets(a.writes, b.reads) || meets(a.writes, b.writes) || meets(b.writes, a.reads);
}

/// How a loop body's last gemm overlaps the next iteration (see Specializer::plan_overlap):
/// body = [before..., first gemm, between...] with the last gemm deferred after the first
/// gemm of the next iteration; `free` (indices into the body) run while it does, `dep`
/// after the wait for it, each in the program's order.
struct OverlapPlan {
  size_t first = 0, last = 0;
  std::vector<size_t> free, dep;
  /// The copied tiles the last gemm reads ("late": handed back an iteration later than the
  /// others, through barriers of their own where there are others), and whether other
  /// statements read them too (then waited for at the top of the iteration, else just
  /// before the last gemm).
  std::set<const BufferNode *> late;
  bool late_read_early = false;
  std::string touched; // the last gemm's operands that `dep` touches, quoted, for the remark
};

/// A copy from a view of rows that the producer makes from the view's tensor (`copy`, at the
/// view's origin): its tile, `rows` rows from the view's row `row0` (1: a tile of one row),
/// gets the tensor's rows past the view's ends too, which the consumers zero in the stage
/// (rows outside 0 .. count) before they read it.
struct ViewZero {
  Stmt copy;
  Buffer dst;
  Expr row0, count;
  std::int64_t rows = 1;
};

/// One copy the producer runs: its tensor map and boxes.
struct BulkCopyPlan {
  const CopyNode *copy;
  int param = -1;
  std::int64_t rows = 0, box_cols = 0, boxes = 0; // boxes of rows x box_cols, side by side
  std::int64_t bytes = 0;                         // of the whole tile
  int swizzle = 0;                                // the tile's (bytes: each box's row)
  /// 0, or the elements from one stage of a one-dimensional tile to the next: the tile
  /// padded to the boundary bulk copies write to.
  std::int64_t stage_pitch = 0;
};

/// A loop's copy that the two blocks of a cluster load half each, for both (multicast):
/// where `shares` (a bool the kernel computes) holds, the block of rank r loads half r of
/// the tile, its boxes (`by_rows` false) or its rows (through tensor map `half_map`, of half
/// the rows), into both blocks' stages; elsewhere the whole tile, for itself.
struct MulticastPlan {
  Var shares;
  bool by_rows = false;
  int half_map = -1;
};

/// One epilogue copy that bulk stores take (bulk_store): the fragment goes into shared
/// `tile`, which leaves in boxes of rows x box_cols through tensor map `map`.
struct BulkStorePlan {
  const CopyNode *copy;
  int param = -1;
  std::int64_t rows = 0, box_cols = 0, boxes = 0;
  Buffer tile;
  int map = -1;
  /// The copy is from a shared tile of the kernel's own (`tile`, then): no tile is made,
  /// and on a persistent grid the wait for the last tile's stores goes before `first_use`,
  /// the first statement after the loop that touches it.
  bool own = false;
  const StmtNode *first_use = nullptr;
  /// Into a view of rows: the view's first row in its tensor (added to the tile's first row)
  /// and the run-time test that the whole tile lies in the view (else the consumer threads
  /// store it as written). Null for a tensor parameter.
  Expr row_shift, in_view;
  /// The statement at the top of the kernel's body that holds the copy: the copy, or an `if`
  /// without `else` whose body it is (then stored where the condition holds).
  const StmtNode *stmt = nullptr;
  const IfNode *under = nullptr;
};

/// The roles of one warp-specialized loop, built from its plans (Specializer::specialize):
/// the stage barriers and the expressions both sides take from them, the producer's bulk
/// copies for one tile, the consumers' work for one tile (with the overlap or the turns),
/// the epilogue's bulk stores, and a persistent grid's loops over tiles.
struct Roles {
  Kernel &k_;
  const Target &t_;
  const std::vector<Stmt> &top;
  size_t at = 0;
  const ForNode *loop = nullptr;
  int S = 0, NT = 0;
  int G = 1, E = 0, L = -1; // barrier groups; the early and late groups, if any (-1: none)
  std::vector<BulkCopyPlan> copies, prologue;
  std::vector<int> map_of, prologue_map;
  /// Per copy, how the blocks of a cluster share it (multicast; none: each loads its own),
  /// and whether any does at this launch (`pair_shares`: then the stages go back to both).
  std::vector<std::optional<MulticastPlan>> multicast;
  Var pair_shares;
  std::vector<Stmt> consumers, before, tile_prelude;
  std::set<const BufferNode *> prologue_bufs, own_decls, late;
  std::vector<BulkStorePlan> stores;
  std::optional<OverlapPlan> overlap;
  std::optional<std::pair<size_t, size_t>> turns;
  StageRewrite base;
  std::vector<std::int64_t> tx_bytes;
  std::int64_t prologue_bytes = 0, q_full = 0, q_empty = 0, slot_full = 0, slot_empty = 0;
  Buffer bars, slot;
  Expr tid, warpgroup, own_turn, other_turn;
  Var tiles; // a persistent grid's count of tiles
  ScalarType it_type = ScalarType::I32;
  bool overlap_remarked = false;
  /// Paired blocks (Kernel::pair_dim): per copy whether both groups' blocks copy the same
  /// tile (loaded once into stages both read) or each its own (into stages of its own: the
  /// staged buffer has 2 S, group w's from w S); the prelude's declarations that read the
  /// paired block index (each group computes them for itself); the bytes of the shared
  /// copies, and of one group's own.
  std::vector<bool> pair_shared;
  std::vector<Stmt> pair_prelude;
  std::int64_t shared_tx = 0, own_tx = 0;
  /// A loop whose body is under a condition (LoopPlan::guard): the producer tests it, for
  /// `kGuardBatch` iterations at a time, and puts each iteration it runs into its stage's
  /// slot of `iterations` (shared, one an S), then after the last one an end (-1) into the
  /// next stage, whose full barrier it arrives on without bytes; the consumers take the
  /// iterations from the slots until the end. Both sides count the stages so taken, the
  /// end's included (`taken`: the last tile's, which a persistent grid adds to `done`).
  Expr guard;
  std::uint32_t guard_loc = 0;
  /// The copies from views of rows (LoopPlan::view_zeros).
  std::vector<ViewZero> view_zeros;
  Buffer iterations;
  Expr taken;
  static constexpr int kGuardBatch = 8;

  Expr imm(std::int64_t v) const { return int_imm(v, it_type); }
  Expr iteration(const Expr &i) const { return cast(loop->var->type, add(loop->begin, mul(i, loop->step))); }
  Stmt mbar(MbarrierOp op, Expr index, Expr value) const {
    return std::make_shared<MbarrierNode>(op, bars, cast(ScalarType::I32, std::move(index)),
                                          value ? cast(ScalarType::I32, std::move(value)) : nullptr);
  }
  // Group g's full[s] = barriers[g S + s], its empty[s] = barriers[G S + g S + s].
  Expr full(int g, const Expr &stage) const { return g == 0 ? stage : add(stage, imm(std::int64_t(g) * S)); }
  Expr empty(int g, const Expr &stage) const { return add(stage, imm(std::int64_t(G + g) * S)); }
  static Expr parity(const Expr &n) { return binary(BinaryOp::Mod, n, int_imm(2)); }
  /// A copy's barrier group: 1 for the late tiles where there are early ones too.
  int group_of(const BulkCopyPlan &p) const { return G == 2 && late.count(p.copy->dst.buffer.get()) ? 1 : 0; }

  // Bulk copies of `p`'s boxes into `dst` (its first element at `stage`, or at 0 where
  // null), completing on barrier `bar`, with the loop's variable as `r` substitutes it.
  // A part of the tile (multicast): `boxes` boxes from box `box0`, from row `row0` (null:
  // 0), each to the blocks of mask `to` (null: this one).
  void bulk_copies(const BulkCopyPlan &p, int map, const Buffer &dst, const Expr &stage, const Expr &bar,
                   StageRewrite &r, std::vector<Stmt> &out, const Expr &row0 = nullptr, const Expr &box0 = nullptr,
                   std::int64_t boxes = -1, const Expr &to = nullptr) {
    auto laid = k_.shared_layouts.find(dst.get());
    const SharedLayout *layout = laid == k_.shared_layouts.end() ? nullptr : &laid->second; // (null: dense rows)
    const int rank = p.copy->dst.buffer->rank();
    for (std::int64_t jj = 0; jj < (boxes < 0 ? p.boxes : boxes); ++jj) {
      const Expr j = box0 ? add(box0, int_imm(jj)) : int_imm(jj);
      std::vector<Expr> coords;
      for (size_t d = 0; d < p.copy->src.begin.size(); ++d) {
        Expr c0 = r.mutate(p.copy->src.begin[d]);
        if (int(d) == p.copy->src.tile_dims.back())
          c0 = add(c0, cast(c0->type, mul(j, int_imm(p.box_cols))));
        else if (row0 && rank == 2 && int(d) == p.copy->src.tile_dims[0])
          c0 = add(c0, cast(c0->type, row0));
        coords.push_back(cast(ScalarType::I32, c0));
      }
      // The box's first element: row row0 (of a two-dimensional tile), column j * box_cols.
      std::vector<Expr> at(size_t(rank - 1), row0 ? cast(ScalarType::I32, row0) : int_imm(0));
      at.push_back(cast(ScalarType::I32, mul(j, int_imm(p.box_cols))));
      if (stage)
        at.insert(at.begin(), cast(ScalarType::I32, stage));
      auto bulk = std::make_shared<BulkCopyNode>(map, std::move(coords), dst, shared_offset(*dst, layout, at), bars,
                                                 cast(ScalarType::I32, bar), to);
      bulk->loc = p.copy->loc;
      out.push_back(bulk);
    }
  }
  // A loop's copy `c` into stage `stage` on barrier `bar`: where its blocks share it (its
  // multicast plan), this block's half for both, else all of it.
  void loop_copies(size_t c, const Expr &stage, const Expr &bar, StageRewrite &r, std::vector<Stmt> &out) {
    const BulkCopyPlan &p = copies[c];
    const Buffer &dst = base.staged.at(p.copy->dst.buffer.get());
    if (!multicast[c]) {
      bulk_copies(p, map_of[c], dst, stage, bar, r, out);
      return;
    }
    const MulticastPlan &m = *multicast[c];
    const Expr both = int_imm(3), rank = k_.cluster_rank;
    std::vector<Stmt> half, whole;
    if (m.by_rows)
      bulk_copies(p, m.half_map, dst, stage, bar, r, half, mul(rank, int_imm(p.rows / 2)), nullptr, -1, both);
    else
      bulk_copies(p, map_of[c], dst, stage, bar, r, half, nullptr, mul(rank, int_imm(p.boxes / 2)), p.boxes / 2, both);
    bulk_copies(p, map_of[c], dst, stage, bar, r, whole);
    auto pick = if_then_else(m.shares, seq(half), seq(whole));
    pick->loc = p.copy->loc;
    out.push_back(pick);
  }

  // Paired blocks: the first block of the pair (2i: the group's block index less its group).
  Expr pair_base() const {
    const Var &index = k_.block_index[k_.pair_dim];
    return sub(Expr(index), cast(index->type, binary(BinaryOp::BitAnd, Expr(k_.pair_group), int_imm(1))));
  }
  // Group w's view of the kernel: the paired block index as 2i + w, and the prelude's
  // declarations that read it declared again for w (into `out`), both substituted by `r`.
  void group_view(int w, StageRewrite &r, std::vector<Stmt> &out) const {
    const Var &index = k_.block_index[k_.pair_dim];
    r.vars[index.get()] = add(pair_base(), int_imm(w, index->type));
    for (const Stmt &x : pair_prelude) {
      auto d = x->as<DeclareNode>();
      Var v = make_var(d->var->name + "_" + std::to_string(w), d->var->type);
      out.push_back(declare(v, r.mutate(d->init)));
      r.vars[d->var.get()] = v;
    }
  }
  // The iterations each group runs (none where its block is past the grid's end) and the
  // most of the two, declared into `out`; `views` get the groups' views.
  std::array<Expr, 3> pair_counts(std::vector<Stmt> &out, StageRewrite (&views)[2]) const {
    std::array<Expr, 3> n;
    const Expr extent = cast(ScalarType::I32, k_.grid[k_.pair_dim]);
    for (int w = 0; w < 2; ++w) {
      group_view(w, views[w], out);
      const Expr valid = lt(cast(ScalarType::I32, add(pair_base(), int_imm(w, pair_base()->type))), extent);
      Var c = make_var("iterations_" + std::to_string(w), it_type);
      out.push_back(declare(c, select(valid, binary(BinaryOp::Max, views[w].mutate(loop->extent), imm(0)), imm(0))));
      n[size_t(w)] = c;
    }
    Var most = make_var("iterations", it_type);
    out.push_back(declare(most, binary(BinaryOp::Max, n[0], n[1])));
    n[2] = most;
    return n;
  }
  // The producer of a pair: each iteration's shared tiles once, and each group's own where
  // the group runs that iteration, all completing on the stage's one full barrier.
  std::vector<Stmt> paired_producer() {
    std::vector<Stmt> out;
    StageRewrite views[2] = {base, base};
    const std::array<Expr, 3> n = pair_counts(out, views);
    Var it = make_var("it", it_type);
    const Expr stage = binary(BinaryOp::Mod, Expr(it), imm(S)), round = div(Expr(it), imm(S));
    std::vector<Stmt> body;
    body.push_back(if_then_else(binary(BinaryOp::GE, Expr(it), imm(S)),
                                mbar(MbarrierOp::Wait, empty(0, stage), binary(BinaryOp::Mod, add(round, imm(1)), imm(2)))));
    Expr tx = int_imm(shared_tx);
    for (int w = 0; w < 2; ++w)
      tx = add(tx, select(lt(Expr(it), n[size_t(w)]), int_imm(own_tx), int_imm(0)));
    body.push_back(mbar(MbarrierOp::ArriveExpectTx, full(0, stage), tx));
    StageRewrite r = base;
    r.vars[loop->var.get()] = iteration(it);
    for (size_t c = 0; c < copies.size(); ++c)
      if (pair_shared[c])
        loop_copies(c, stage, full(0, stage), r, body);
    for (int w = 0; w < 2; ++w) {
      StageRewrite rw = views[w];
      rw.vars[loop->var.get()] = iteration(it);
      std::vector<Stmt> own;
      for (size_t c = 0; c < copies.size(); ++c)
        if (!pair_shared[c])
          bulk_copies(copies[c], map_of[c], base.staged.at(copies[c].copy->dst.buffer.get()),
                      add(imm(std::int64_t(w) * S), stage), full(0, stage), rw, own);
      body.push_back(if_then_else(lt(Expr(it), n[size_t(w)]), seq(own)));
    }
    out.push_back(for_loop(it, imm(0), n[2], ForKind::Serial, seq(body)));
    return out;
  }
  // The consumers of a pair: a group whose block is in the grid runs it, handing back unread
  // the stages of the iterations the other group runs past its own right after its loop (with
  // the turns, taking them as it would: each barrier sees both groups' iterations alike); a
  // group whose block is past the grid's end only does that.
  std::array<Expr, 3> pair_n;
  std::vector<Stmt> unread(const Expr &from) {
    Var it = make_var("it", it_type);
    std::vector<Stmt> body = {wait_full(nullptr, 0, it)};
    if (turns) {
      body.push_back(if_then_else(binary(BinaryOp::EQ, Expr(it), imm(0)), turn(false, own_turn)));
      body.push_back(turn(true, other_turn));
      body.push_back(turn(false, own_turn));
    }
    body.push_back(hand_back(nullptr, 0, it));
    Stmt rest = for_loop(it, from, sub(pair_n[2], from), ForKind::Serial, seq(body));
    rest->loc = loop->loc;
    return {rest};
  }
  Stmt last_turn(const Expr &iterations) {
    return if_then_else(binary(BinaryOp::GT, iterations, imm(0)), turn(true, other_turn));
  }
  std::vector<Stmt> paired_consumers() {
    std::vector<Stmt> out;
    StageRewrite views[2] = {base, base};
    pair_n = pair_counts(out, views);
    const Expr valid = lt(cast(ScalarType::I32, Expr(k_.block_index[k_.pair_dim])),
                          cast(ScalarType::I32, k_.grid[k_.pair_dim]));
    std::vector<Stmt> idle = unread(imm(0));
    if (turns)
      idle.push_back(last_turn(pair_n[2]));
    out.push_back(if_then_else(valid, seq(consumer_tile(nullptr, nullptr)), seq(idle)));
    return out;
  }

  // The producer's work for one tile: `done` loop iterations of earlier tiles (null: none)
  // and `n` tiles before it (null: none).
  std::vector<Stmt> producer_tile(const Expr &done, const Expr &n) {
    std::vector<Stmt> out;
    if (!prologue.empty()) {
      if (n)
        out.push_back(if_then_else(binary(BinaryOp::GT, n, int_imm(0)),
                                   mbar(MbarrierOp::Wait, int_imm(q_empty), parity(add(n, int_imm(1))))));
      out.push_back(mbar(MbarrierOp::ArriveExpectTx, int_imm(q_full), int_imm(prologue_bytes)));
      StageRewrite r = base;
      for (size_t c = 0; c < prologue.size(); ++c) {
        const BufferNode *d = prologue[c].copy->dst.buffer.get();
        bulk_copies(prologue[c], prologue_map[c], prologue[c].copy->dst.buffer, nullptr, int_imm(q_full), r, out);
        (void)d;
      }
    }
    if (guard)
      return guarded_producer(done, out);
    Var it = make_var("it", it_type);
    const Expr g_it = done ? add(done, Expr(it)) : Expr(it);
    const Expr stage = binary(BinaryOp::Mod, g_it, imm(S)), round = div(g_it, imm(S));
    StageRewrite r = base;
    r.vars[loop->var.get()] = iteration(it);
    std::vector<Stmt> body;
    for (int g = 0; g < G; ++g) {
      body.push_back(wait_empty(g, g_it));
      body.push_back(mbar(MbarrierOp::ArriveExpectTx, full(g, stage), int_imm(tx_bytes[size_t(g)])));
      for (size_t c = 0; c < copies.size(); ++c)
        if (group_of(copies[c]) == g)
          loop_copies(c, stage, full(g, stage), r, body);
    }
    out.push_back(for_loop(it, imm(0), loop->extent, ForKind::Serial, seq(body)));
    taken = binary(BinaryOp::Max, loop->extent, imm(0));
    return out;
  }
  // The producer's wait for group g's stage of its q-th stage filled (past the first S).
  Stmt wait_empty(int g, const Expr &q) const {
    return if_then_else(binary(BinaryOp::GE, q, imm(S)),
                        mbar(MbarrierOp::Wait, empty(g, binary(BinaryOp::Mod, q, imm(S))),
                             binary(BinaryOp::Mod, add(div(q, imm(S)), imm(1)), imm(2))));
  }
  // The producer of a guarded loop (one barrier group: no overlap): the conditions of
  // kGuardBatch iterations read at once (their loads in flight together), then each
  // iteration whose condition holds into the next stage with its index, then the end.
  std::vector<Stmt> guarded_producer(const Expr &done, std::vector<Stmt> &out) {
    Var n = make_var("taken", it_type), chunk = make_var("chunk", it_type);
    out.push_back(declare(n, imm(0)));
    const Expr q = done ? add(done, Expr(n)) : Expr(n);
    const Expr stage = binary(BinaryOp::Mod, q, imm(S));
    std::vector<Stmt> batch;
    std::vector<Var> holds;
    for (int j = 0; j < kGuardBatch; ++j) {
      const Expr i = add(mul(Expr(chunk), imm(kGuardBatch)), imm(j));
      StageRewrite r = base;
      r.vars[loop->var.get()] = iteration(i);
      Var h = make_var("holds", ScalarType::Bool);
      batch.push_back(declare(h, logical_and(lt(i, loop->extent), r.mutate(guard))));
      holds.push_back(h);
    }
    for (int j = 0; j < kGuardBatch; ++j) {
      const Expr i = add(mul(Expr(chunk), imm(kGuardBatch)), imm(j));
      StageRewrite r = base;
      r.vars[loop->var.get()] = iteration(i);
      std::vector<Stmt> body = {wait_empty(0, q),
                                std::make_shared<IterationSlotNode>(IterationSlotOp::Put, iterations,
                                                                    cast(ScalarType::I32, stage),
                                                                    cast(ScalarType::I32, i), nullptr),
                                mbar(MbarrierOp::ArriveExpectTx, full(0, stage), int_imm(tx_bytes[0]))};
      for (size_t c = 0; c < copies.size(); ++c)
        loop_copies(c, stage, full(0, stage), r, body);
      body.push_back(assign(n, add(Expr(n), imm(1))));
      batch.push_back(if_then_else(holds[size_t(j)], seq(body)));
    }
    const Expr chunks = div(add(binary(BinaryOp::Max, loop->extent, imm(0)), imm(kGuardBatch - 1)), imm(kGuardBatch));
    out.push_back(for_loop(chunk, imm(0), chunks, ForKind::Serial, seq(batch)));
    out.push_back(wait_empty(0, q));
    out.push_back(std::make_shared<IterationSlotNode>(IterationSlotOp::Put, iterations, cast(ScalarType::I32, stage),
                                                      int_imm(-1), nullptr));
    out.push_back(mbar(MbarrierOp::Arrive, full(0, stage), nullptr));
    taken = add(Expr(n), imm(1));
    return out;
  }


  // A wgmma gemm whose wait is placed apart, and that wait.
  static Stmt deferred_gemm(const Stmt &g) {
    auto n = g->as<GemmNode>();
    auto d = n->with(n->a, n->b, n->c);
    d->deferred_wait = true;
    return Stmt(d);
  }
  static Stmt gemm_wait(int pending, const Stmt &g) {
    return std::make_shared<WarpgroupSyncNode>(WarpgroupSyncKind::Wait, pending,
                                               std::vector<Buffer>{g->as<GemmNode>()->c.buffer});
  }
  // Ping-pong's turns: warpgroup w's is hardware barrier 2 + w, of both warpgroups' threads.
  Stmt turn(bool arrive, const Expr &id) {
    return std::make_shared<NamedBarrierNode>(id, 2 * t_.warpgroup_threads(), arrive);
  }


  // An epilogue's copy by bulk stores (into the plan's tile where it is not the kernel's
  // own, then one thread's stores), and on a persistent grid the wait before a tile is
  // written again (`store_wait`: the last tile's stores have read it).
  Stmt first_thread(std::vector<Stmt> body) {
    return if_then_else(binary(BinaryOp::EQ, tid, int_imm(0)), seq(std::move(body)));
  }
  std::vector<Stmt> store_wait(const BulkStorePlan &p) {
    std::vector<Stmt> out = {first_thread({std::make_shared<BulkStoreSyncNode>(BulkStoreSyncOp::Wait, p.tile)}),
                             barrier()};
    for (const Stmt &x : out)
      x->loc = p.copy->loc;
    return out;
  }
  std::vector<Stmt> bulk_store(const BulkStorePlan &p) {
    std::vector<Stmt> out;
    const Region &dst = p.copy->dst;
    if (!p.own) {
      auto into_tile = std::make_shared<CopyNode>(p.copy->src, full_region(p.tile));
      into_tile->loc = p.copy->loc;
      out.push_back(into_tile);
    }
    // (The writes fenced for the copy engine, which reads the tile after the barrier.)
    out.push_back(std::make_shared<ProxyFenceNode>());
    out.push_back(barrier());
    std::vector<Stmt> issue;
    const SharedLayout &layout = k_.shared_layouts.at(p.tile.get());
    for (std::int64_t j = 0; j < p.boxes; ++j) {
      std::vector<Expr> coords;
      for (size_t d = 0; d < dst.begin.size(); ++d) {
        Expr c0 = dst.begin[d];
        if (d == 0 && p.row_shift)
          c0 = add(cast(ScalarType::I64, c0), cast(ScalarType::I64, p.row_shift));
        if (int(d) == dst.tile_dims[1])
          c0 = add(c0, int_imm(j * p.box_cols, c0->type));
        coords.push_back(cast(ScalarType::I32, c0));
      }
      auto store = std::make_shared<BulkStoreNode>(
          p.map, std::move(coords), p.tile, shared_offset(*p.tile, &layout, {int_imm(0), int_imm(j * p.box_cols)}));
      store->loc = p.copy->loc;
      issue.push_back(store);
    }
    issue.push_back(std::make_shared<BulkStoreSyncNode>(BulkStoreSyncOp::Commit, p.tile));
    out.push_back(first_thread(std::move(issue)));
    for (const Stmt &x : out)
      if (x->loc == 0)
        x->loc = p.copy->loc;
    return out;
  }


  // Iteration `i` of the loop counted from the block's first tile (`done` iterations of
  // earlier tiles; null: none).
  static Expr g_of(const Expr &done, const Expr &i) { return done ? add(done, i) : i; }
  // Waits for group g's stage of iteration i.
  Stmt wait_full(const Expr &done, int g, const Expr &i) const {
    return mbar(MbarrierOp::Wait, full(g, binary(BinaryOp::Mod, g_of(done, i), imm(S))),
                binary(BinaryOp::Mod, div(g_of(done, i), imm(S)), imm(2)));
  }
  // Hands group g's stage of iteration i back; in a cluster whose blocks share a tile, to
  // the other block's producer too, which waits for the stages of the iterations up to the
  // last S.
  Stmt hand_back(const Expr &done, int g, const Expr &i) const {
    const Expr bar = empty(g, binary(BinaryOp::Mod, g_of(done, i), imm(S)));
    Stmt own = mbar(MbarrierOp::Arrive, bar, nullptr);
    if (!pair_shares)
      return own;
    const Expr awaited = logical_and(pair_shares, lt(add(g_of(done, i), imm(S)), loop->extent));
    return seq({own, if_then_else(awaited, mbar(MbarrierOp::ArriveCluster, bar, sub(int_imm(1), k_.cluster_rank)))});
  }

  // The consumers' loop body without the overlap: wait for the stage, the statements (with
  // the turns around the gemms where the warpgroups take them), hand the stage back.
  void plain_body(const Expr &done, const Expr &it, StageRewrite &work, std::vector<Stmt> &body) {
    if (!guard) // (a guarded loop's consumers waited to read the iteration)
      body.push_back(wait_full(done, 0, it));
    zero_outside_views(work, body);
    if (turns) {
      const Stmt &first = consumers[turns->first];
      for (size_t i = 0; i < turns->first; ++i)
        body.push_back(work.mutate(consumers[i]));
      // (The first turn just before the first gemm: a barrier that the compiler places
      // before the loop must not fall inside it.)
      body.push_back(if_then_else(binary(BinaryOp::EQ, it, imm(0)), turn(false, own_turn)));
      body.push_back(work.mutate(deferred_gemm(first)));
      body.push_back(turn(true, other_turn));
      body.push_back(gemm_wait(0, first));
      for (size_t i = turns->first + 1; i < consumers.size(); ++i) {
        if (i == turns->second)
          body.push_back(turn(false, own_turn));
        body.push_back(work.mutate(consumers[i]));
      }
    } else {
      for (auto &c : consumers)
        body.push_back(work.mutate(c));
    }
    // (Handing each stage back an iteration late, after waiting until only the latest
    // gemm runs, cost the GEMM example 6% at 8192^3 on an H100: a stage less of
    // prefetch; bench/NOTES.md session 29.)
    body.push_back(hand_back(done, 0, it));
  }

  // The rows of each tile copied from a view that lie outside it (the tensor's rows before or
  // after the view's), zeroed in the stage where there are any, then fenced for the tensor
  // cores and a barrier of the consumers. (The stage's rows the copy engine wrote are visible
  // after the wait for its full barrier.)
  void zero_outside_views(StageRewrite &work, std::vector<Stmt> &body) const {
    for (const ViewZero &z : view_zeros) {
      const BufferNode *d = z.dst.get();
      const Expr row0 = cast(ScalarType::I64, z.row0), count = cast(ScalarType::I64, z.count),
                 zero = int_imm(0, ScalarType::I64);
      const Expr any = binary(BinaryOp::Or, lt(row0, zero),
                              binary(BinaryOp::GT, add(row0, int_imm(z.rows, ScalarType::I64)), count));
      std::vector<Var> idx;
      std::vector<Expr> at;
      for (int r = 0; r < d->rank(); ++r) {
        idx.push_back(make_var(r == 0 ? "zi" : "zj", ScalarType::I32));
        at.push_back(idx.back());
      }
      Stmt st = store(z.dst, at, cast(d->dtype, int_imm(0)));
      if (z.rows > 1) {
        const Expr row = add(row0, cast(ScalarType::I64, Expr(idx[0])));
        st = if_then_else(binary(BinaryOp::Or, lt(row, zero), binary(BinaryOp::GE, row, count)), st);
      }
      for (int r = d->rank() - 1; r >= 0; --r)
        st = for_loop(idx[size_t(r)], int_imm(0), int_imm(d->extent(r)), ForKind::Parallel, st);
      Stmt zeroed = if_then_else(any, seq({st, std::make_shared<ProxyFenceNode>(), barrier()}));
      zeroed->loc = loop->loc;
      body.push_back(work.mutate(zeroed));
    }
  }

  // The consumers' loop with the overlap: iteration 0 first (`peeled`): [before, first gemm,
  // its wait, the statements between]. Then iterations 1 on (`body`): [before, first gemm
  // (issued), the last gemm of the iteration before (issued), the wait for the first, the
  // free statements, the wait for the last (its tiles handed back), the others (the early
  // tiles handed back)]. Then the last gemm of the last iteration (`drain`). (No gemm under
  // a branch inside the loop: ptxas serializes wgmma that one path waits for differently
  // than another, C7518.)
  void overlapped_body(const Expr &done, const Var &it, StageRewrite &work, std::vector<Stmt> &body,
                       Stmt &peeled, Stmt &drain) {
    auto &deferred = deferred_gemm;
    auto &wait = gemm_wait;
    const Stmt &first = consumers[overlap->first], &last = consumers[overlap->last];
    const bool late_at_top = L >= 0 && overlap->late_read_early;
    // The last gemm of iteration i (its stage and loop variable), after the wait for its
    // late tiles where the top of the iteration did not wait.
    auto last_of = [&](const Expr &i) {
      StageRewrite r = base;
      r.stage = binary(BinaryOp::Mod, g_of(done, i), imm(S));
      r.vars[loop->var.get()] = iteration(i);
      std::vector<Stmt> out;
      if (L >= 0 && !late_at_top)
        out.push_back(wait_full(done, L, i));
      out.push_back(r.mutate(deferred(last)));
      return out;
    };
    auto top_of = [&](const Expr &i, std::vector<Stmt> &out) {
      if (E >= 0)
        out.push_back(wait_full(done, E, i));
      if (late_at_top)
        out.push_back(wait_full(done, L, i));
    };
    StageRewrite at0 = base;
    at0.stage = binary(BinaryOp::Mod, g_of(done, imm(0)), imm(S));
    std::vector<Stmt> first_it = {declare(loop->var, iteration(imm(0)))};
    top_of(imm(0), first_it);
    top_of(it, body);
    for (size_t i = 0; i < overlap->first; ++i) {
      first_it.push_back(at0.mutate(consumers[i]));
      body.push_back(work.mutate(consumers[i]));
    }
    first_it.push_back(at0.mutate(deferred(first)));
    first_it.push_back(wait(0, first));
    body.push_back(work.mutate(deferred(first)));
    const Expr prev = sub(Expr(it), imm(1));
    for (const Stmt &x : last_of(prev))
      body.push_back(x);
    body.push_back(wait(1, first));
    for (size_t i : overlap->free) {
      first_it.push_back(at0.mutate(consumers[i]));
      body.push_back(work.mutate(consumers[i]));
    }
    body.push_back(wait(0, last));
    if (L >= 0)
      body.push_back(hand_back(done, L, prev));
    for (size_t i : overlap->dep) {
      first_it.push_back(at0.mutate(consumers[i]));
      body.push_back(work.mutate(consumers[i]));
    }
    if (E >= 0) {
      first_it.push_back(hand_back(done, E, imm(0)));
      body.push_back(hand_back(done, E, it));
    }
    const Expr any = binary(BinaryOp::GT, loop->extent, imm(0));
    peeled = if_then_else(any, seq(first_it));
    std::vector<Stmt> tail = last_of(sub(loop->extent, imm(1)));
    tail.push_back(wait(0, last));
    // (Its late tiles handed back too: on a persistent grid the producer refills that
    // stage for a later tile, and waits for it.)
    if (L >= 0)
      tail.push_back(hand_back(done, L, sub(loop->extent, imm(1))));
    drain = if_then_else(any, seq(tail));
    if (!overlap_remarked)
      k_.remarks.push_back(
          {last->loc, "gemm overlapped with the next iteration: issued after that iteration's first gemm, it runs "
                      "while " + std::to_string(overlap->free.size()) + " of the " +
                          std::to_string(overlap->free.size() + overlap->dep.size()) +
                          " statements between them do, and is waited for before those that touch " +
                          overlap->touched});
    overlap_remarked = true;
  }

  // The statements after the loop, for the `n`-th tile (null: the only one): the
  // prologue's tiles handed back once nothing reads them (after the loop, or after the
  // statements that read them), and the epilogue's copies by bulk stores where planned.
  void after_loop(const Expr &n, std::vector<Stmt> &out) {
    bool read_after = false;
    for (auto t = top.begin() + long(at) + 1; t != top.end(); ++t)
      for (const BufferNode *b : prologue_bufs)
        read_after |= effects_of(*t).reads.count(b) > 0;
    const Stmt give_back = n && !prologue.empty() ? mbar(MbarrierOp::Arrive, int_imm(q_empty), nullptr) : nullptr;
    if (give_back && !read_after)
      out.push_back(give_back);
    for (auto t = top.begin() + long(at) + 1; t != top.end(); ++t) {
      // On a persistent grid, the last tile's stores have read a tile before it is written.
      for (const BulkStorePlan &p : stores)
        if (n && p.first_use == t->get())
          for (const Stmt &x : store_wait(p))
            out.push_back(x);
      auto st = std::find_if(stores.begin(), stores.end(), [&](const BulkStorePlan &p) { return p.stmt == t->get(); });
      if (st == stores.end()) {
        out.push_back(*t);
        continue;
      }
      // (Where the launch could not encode the output's map, or the tile reaches past the
      // view it is stored into: the copy as it was.)
      Expr have_map = binary(BinaryOp::EQ,
                             binary(BinaryOp::BitAnd, Expr(k_.maps_missing), int_imm(std::int64_t(1) << st->map)),
                             int_imm(0));
      if (st->in_view)
        have_map = logical_and(have_map, st->in_view);
      const Stmt copy = st->under ? st->under->then_case : *t;
      Stmt stored = if_then_else(have_map, seq(bulk_store(*st)), copy);
      if (st->under) {
        stored = if_then_else(st->under->cond, stored);
        stored->loc = (*t)->loc;
      }
      out.push_back(stored);
    }
    if (give_back && read_after)
      out.push_back(give_back);
  }

  // The consumers' work for one tile, the same way.
  std::vector<Stmt> consumer_tile(const Expr &done, const Expr &n) {
    std::vector<Stmt> out;
    for (const Stmt &x : before) {
      auto c = x->as<CopyNode>();
      if (c && prologue_bufs.count(c->dst.buffer.get())) {
        if (c == prologue.front().copy) // (one barrier for all: waited for at the first)
          out.push_back(mbar(MbarrierOp::Wait, int_imm(q_full), n ? parity(n) : int_imm(0)));
      } else if (auto db = x->as<DeclBufferNode>();
                 !db || (!prologue_bufs.count(db->buffer.get()) && !own_decls.count(db->buffer.get()))) {
        out.push_back(x);
      }
    }
    Var it = make_var("it", it_type);
    if (guard)
      return guarded_consumers(done, n, it, out);
    StageRewrite work = base;
    work.stage = binary(BinaryOp::Mod, g_of(done, it), imm(S));
    Stmt peeled, drain; // (the overlap's first iteration and last gemm)
    std::vector<Stmt> body = {declare(loop->var, iteration(it))};
    if (overlap)
      overlapped_body(done, it, work, body, peeled, drain);
    else
      plain_body(done, it, work, body);
    // (A for loop's bounds are its first value and its count.)
    Stmt consumer = peeled ? for_loop(it, imm(1), sub(loop->extent, imm(1)), ForKind::Serial, seq(body))
                           : for_loop(it, imm(0), loop->extent, ForKind::Serial, seq(body));
    consumer->loc = loop->loc;
    if (peeled)
      out.push_back(peeled);
    out.push_back(consumer);
    if (drain)
      out.push_back(drain);
    // (A pair's group: the other's iterations past its own.)
    if (k_.pair_dim >= 0)
      for (const Stmt &x : unread(binary(BinaryOp::Max, loop->extent, imm(0))))
        out.push_back(x);
    if (turns) // (the last turn handed on, where the loop took one)
      out.push_back(last_turn(k_.pair_dim >= 0 ? pair_n[2] : loop->extent));
    after_loop(n, out);
    taken = binary(BinaryOp::Max, loop->extent, imm(0));
    return out;
  }
  // The consumers of a guarded loop: the iterations the producer put into the stages, in
  // turn, until the end (whose stage they hand back too).
  std::vector<Stmt> guarded_consumers(const Expr &done, const Expr &n, const Var &it, std::vector<Stmt> &out) {
    Var q = make_var("taken", it_type);
    auto take = [&]() -> std::vector<Stmt> {
      return {wait_full(done, 0, q),
              std::make_shared<IterationSlotNode>(IterationSlotOp::Get, iterations,
                                                  cast(ScalarType::I32, binary(BinaryOp::Mod, g_of(done, q), imm(S))),
                                                  nullptr, it)};
    };
    out.push_back(declare(q, imm(0)));
    out.push_back(declare(it, imm(0)));
    for (const Stmt &x : take())
      out.push_back(x);
    StageRewrite work = base;
    work.stage = binary(BinaryOp::Mod, g_of(done, q), imm(S));
    std::vector<Stmt> body = {declare(loop->var, iteration(it))};
    plain_body(done, q, work, body);
    body.push_back(assign(q, add(Expr(q), imm(1))));
    for (const Stmt &x : take())
      body.push_back(x);
    Stmt consumer = while_loop(binary(BinaryOp::GE, Expr(it), imm(0)), seq(body));
    consumer->loc = loop->loc;
    out.push_back(consumer);
    out.push_back(hand_back(done, 0, q)); // (the end's stage)
    if (turns)
      out.push_back(last_turn(q));
    after_loop(n, out);
    taken = add(Expr(q), imm(1));
    return out;
  }

  /// One side's loop over a persistent grid's tiles (`tiles` of them): the producer's,
  /// which publishes the next tile it takes, or the consumers'.
  Stmt side(bool producer) {
    // The grid's tiles in the launch's order, blocks of a panel of `use_swizzle` rows side
    // by side as the launch rasterizes them (tile_gpu.h's block_index).
    const Expr gx = cast(ScalarType::I32, k_.grid[0]), gy = cast(ScalarType::I32, k_.grid[1]);
    Var tile = make_var("tile", ScalarType::I32), n = make_var("n", ScalarType::I32),
        done = make_var("done", it_type);
    std::vector<Stmt> per = {};
    auto named = [&](const std::string &name, const Expr &value) {
      Var v = make_var(name, ScalarType::I32);
      per.push_back(declare(v, value));
      return Expr(v);
    };
    const Expr xy = named("tile_xy", binary(BinaryOp::Mod, Expr(tile), mul(gx, gy)));
    const Expr z = div(Expr(tile), mul(gx, gy));
    Expr x, y;
    if (const std::int64_t P = k_.swizzle_panel; P > 1) {
      const Expr pb = mul(int_imm(P), gx);
      const Expr p = named("panel", div(xy, pb)), off = named("panel_offset", binary(BinaryOp::Mod, xy, pb));
      const Expr rows = named("panel_rows", binary(BinaryOp::Min, int_imm(P), sub(gy, mul(p, int_imm(P)))));
      const Expr col = named("panel_column", div(off, rows));
      x = select(binary(BinaryOp::EQ, binary(BinaryOp::Mod, p, int_imm(2)), int_imm(1)),
                 sub(sub(gx, int_imm(1)), col), col);
      y = add(mul(p, int_imm(P)), binary(BinaryOp::Mod, off, rows));
    } else {
      x = binary(BinaryOp::Mod, xy, gx);
      y = div(xy, gx);
    }
    const Expr index[3] = {x, y, z};
    for (int d = 0; d < 3; ++d)
      if (k_.block_index[d])
        per.push_back(declare(k_.block_index[d], cast(k_.block_index[d]->type, index[d])));
    per.insert(per.end(), tile_prelude.begin(), tile_prelude.end());
    for (const Stmt &x : producer ? producer_tile(done, n) : consumer_tile(done, n))
      per.push_back(x);
    per.push_back(assign(done, add(Expr(done), taken)));
    if (producer) {
      // The next tile, once the consumers have read the last one published.
      per.push_back(if_then_else(binary(BinaryOp::GT, n, int_imm(0)),
                                 mbar(MbarrierOp::Wait, int_imm(slot_empty), parity(add(n, int_imm(1))))));
      per.push_back(std::make_shared<TileFetchNode>(TileFetchOp::Publish, tile, slot));
      per.push_back(mbar(MbarrierOp::Arrive, int_imm(slot_full), nullptr));
    } else {
      per.push_back(mbar(MbarrierOp::Wait, int_imm(slot_full), parity(n)));
      per.push_back(std::make_shared<TileFetchNode>(TileFetchOp::Receive, tile, slot));
      per.push_back(mbar(MbarrierOp::Arrive, int_imm(slot_empty), nullptr));
    }
    per.push_back(assign(n, add(Expr(n), int_imm(1))));
    Stmt loop_over_tiles = while_loop(binary(BinaryOp::LT, Expr(tile), Expr(tiles)), seq(per));
    loop_over_tiles->loc = loop->loc;
    return seq({declare(tile, int_imm(0)), std::make_shared<TileFetchNode>(TileFetchOp::First, tile, nullptr),
                declare(n, int_imm(0)), declare(done, imm(0)), loop_over_tiles});
  }
};

class Specializer {
public:
  Specializer(Kernel &k, const Target &t, const WarpSpecializeOptions &o)
      : k_(k), t_(t), stages_(o.stages), overlap_(o.overlap_gemms), pingpong_(o.pingpong), bulk_store_(o.bulk_store),
        multicast_(o.multicast), pair_blocks_(o.pair_blocks) {}

  /// Specializes the first top-level pipelined loop with a warpgroup gemm; false (with a
  /// remark where one was found) when it cannot.
  bool run() {
    auto q = k_.body->as<SeqNode>();
    std::vector<Stmt> top = q ? q->stmts : std::vector<Stmt>{k_.body};
    for (size_t i = 0; i < top.size(); ++i) {
      auto f = top[i]->as<ForNode>();
      if (f && f->for_kind == ForKind::Pipelined && stages_of(f) >= 2 && has_warpgroup_gemm(f->body))
        return specialize(top, i);
    }
    // A loop at the top of an `if` at the top (`if (by * BM < Ae.size(0)) { ...; loop; ... }`:
    // blocks with nothing to do), brought to the top where its condition is one the producer
    // computes: the loop's count becomes 0 where it does not hold.
    const Stmt body = k_.body;
    for (size_t i = 0; i < top.size(); ++i) {
      std::vector<Stmt> lifted;
      size_t at = 0;
      if (lift_from_if(top, i, lifted, at)) {
        k_.body = seq(lifted);
        if (specialize(lifted, at))
          return true;
        k_.body = body;
        return false;
      }
    }
    // A loop with a warpgroup gemm nested deeper stays as it is.
    for_each_node(k_.body, nullptr, [&](const Stmt &s) {
      auto f = s->as<ForNode>();
      if (f && f->for_kind == ForKind::Pipelined && stages_of(f) >= 2 && has_warpgroup_gemm(f->body))
        not_specialized(f, "it is inside another statement (only a loop at the top of the kernel's body is)");
    });
    return false;
  }

private:
  Kernel &k_;
  const Target &t_;
  const int stages_; // > 0: instead of each loop's own
  const bool overlap_; // overlap-gemms=on
  const bool pingpong_; // pingpong (on unless pingpong=off)
  const bool bulk_store_; // bulk-store (on unless bulk-store=off)
  const bool multicast_;  // multicast (on unless multicast=off)
  const PairBlocks pair_blocks_; // pair-blocks=
  int groups_ = 1;         // consumer groups a launched block: 2 where blocks are paired
  bool remarked_ = false;

  int stages_of(const ForNode *f) const { return stages_ > 0 ? stages_ : f->stages; }

  /// Whether top[i] is an `if` without `else` at the top of whose body is a pipelined loop
  /// with a warpgroup gemm, whose condition reads only what the producer may read (then
  /// `lifted` is `top` with that `if (c) { before; loop; after }` as `declarations; if (c)
  /// { before }; loop with count c ? n : 0; if (c) { after }`, the loop at lifted[at]): the
  /// buffers and the declarations that read no memory declared before the loop in the `if`
  /// are declared before it instead. Where the `if` holds such a loop but cannot be lifted,
  /// a remark says why.
  bool lift_from_if(const std::vector<Stmt> &top, size_t i, std::vector<Stmt> &lifted, size_t &at) {
    auto n = top[i]->as<IfNode>();
    if (!n || n->else_case)
      return false;
    auto q = n->then_case->as<SeqNode>();
    const std::vector<Stmt> inner = q ? q->stmts : std::vector<Stmt>{n->then_case};
    size_t l = 0;
    for (; l < inner.size(); ++l)
      if (auto f = inner[l]->as<ForNode>();
          f && f->for_kind == ForKind::Pipelined && stages_of(f) >= 2 && has_warpgroup_gemm(f->body))
        break;
    if (l == inner.size())
      return false;
    const ForNode *loop = inner[l]->as<ForNode>();
    std::set<const VarNode *> known;
    std::vector<Stmt> prelude;
    producer_reads(top, i, known, prelude);
    std::set<const VarNode *> reads;
    free_vars(n->cond, reads);
    for (const VarNode *v : reads)
      if (!known.count(v)) {
        not_specialized(loop, "it is inside an `if` whose condition reads '" + v->name +
                                  "', which the kernel assigns, or which is not a parameter, a block index or a "
                                  "constant declared before it (the producer computes the loop's count)");
        return false;
      }
    if (!reads_only_constant_tensors(n->cond)) {
      not_specialized(loop, "it is inside an `if` whose condition reads memory other than read-only tensor "
                            "parameters (the producer computes the loop's count)");
      return false;
    }
    // (A declaration moved before the `if` must have the value it had there: it reads no
    // memory and no variable the kernel assigns.)
    std::set<const VarNode *> assigned;
    for_each_node(k_.body, nullptr, [&](const Stmt &x) {
      if (const VarNode *v = assigned_var(x.get()))
        assigned.insert(v);
    });
    std::vector<Stmt> hoisted, before;
    for (size_t j = 0; j < l; ++j) {
      auto d = inner[j]->as<DeclareNode>();
      if (inner[j]->as<DeclBufferNode>() || (d && d->init && !reads_memory(d->init) && !reads_any(d->init, assigned) &&
                                             !assigned.count(d->var.get())))
        hoisted.push_back(inner[j]);
      else if (d) {
        not_specialized(loop, "it is inside an `if` that declares '" + d->var->name +
                                  "' before it from memory or from a variable the kernel assigns (declare it before "
                                  "the `if`)");
        return false;
      } else
        before.push_back(inner[j]);
    }
    lifted.assign(top.begin(), top.begin() + long(i));
    lifted.insert(lifted.end(), hoisted.begin(), hoisted.end());
    auto guarded = [&](std::vector<Stmt> stmts) {
      Stmt g = if_then_else(n->cond, seq(std::move(stmts)));
      g->loc = top[i]->loc;
      lifted.push_back(g);
    };
    if (!before.empty())
      guarded(before);
    Stmt f = for_loop(loop->var, loop->begin, select(n->cond, loop->extent, int_imm(0, loop->extent->type)),
                      loop->for_kind, loop->body, loop->step, loop->stages);
    f->loc = loop->loc;
    at = lifted.size();
    lifted.push_back(f);
    // (Each statement after the loop under its own `if`, where none declares anything: an
    // epilogue's copy alone there may be stored by bulk stores.)
    const std::vector<Stmt> after(inner.begin() + long(l) + 1, inner.end());
    const bool declares = std::any_of(after.begin(), after.end(), [](const Stmt &x) {
      return x->as<DeclareNode>() != nullptr || x->as<DeclBufferNode>() != nullptr;
    });
    if (declares)
      guarded(after);
    else
      for (const Stmt &x : after)
        guarded({x});
    lifted.insert(lifted.end(), top.begin() + long(i) + 1, top.end());
    return true;
  }

  bool has_warpgroup_gemm(const Stmt &s) const {
    bool found = false;
    for_each_node(s, nullptr, [&](const Stmt &x) {
      if (auto g = x->as<GemmNode>(); g && k_.warpgroup_gemm(*g))
        found = true;
    });
    return found;
  }
  bool not_specialized(const StmtNode *loop, const std::string &why) {
    if (!remarked_)
      k_.remarks.push_back({loop->loc, "pipelined loop not warp-specialized: " + why});
    remarked_ = true;
    return false;
  }
  /// Whether the consumers' last statement, a wgmma gemm, can run on into the next
  /// iteration (FlashAttention-3's overlap of the softmax with the second gemm): issued
  /// there after the first wgmma gemm, waited for before the first statement that touches
  /// what it reads or writes (attention: `acc *= rescale`, then `p = s`), so that the
  /// statements between (the softmax) run while the tensor cores do it. The tiles it reads
  /// go back to the producer an iteration later: where it reads every copied tile, that
  /// takes 3 stages or more. nullopt with `why` where the body has that shape but cannot;
  /// nullopt with `why` empty where it has not.
  std::optional<OverlapPlan> plan_overlap(const std::vector<Stmt> &body, const std::set<const BufferNode *> &filled,
                                          int S, std::string &why) const {
    why.clear();
    std::vector<size_t> gemms;
    for (size_t i = 0; i < body.size(); ++i)
      if (auto g = body[i]->as<GemmNode>(); g && k_.warpgroup_gemm(*g))
        gemms.push_back(i);
    if (gemms.size() < 2 || gemms.back() + 1 != body.size())
      return std::nullopt;
    OverlapPlan p;
    p.first = gemms.front();
    p.last = gemms.back();
    std::vector<Effects> effects;
    for (const Stmt &x : body)
      effects.push_back(effects_of(x));
    const Effects &last = effects[p.last];
    // Issued an iteration later, it must name nothing the body declares or assigns: a
    // declaration would be out of scope there, an assignment would have changed the value.
    for (size_t i = 0; i < p.last; ++i) {
      const Effects &e = effects[i];
      for (const VarNode *v : e.set_vars)
        if (last.reads.count(v))
          return why = "the last gemm reads '" + v->name + "', which the loop's body sets", std::nullopt;
      for (const BufferNode *b : e.declared_bufs)
        if (last.reads.count(b))
          return why = "the last gemm uses '" + b->name + "', which the loop's body declares", std::nullopt;
    }
    for (size_t i = 0; i <= p.first; ++i)
      if (conflict(effects[i], last))
        return why = "the statements up to the first gemm touch what the last one reads or writes", std::nullopt;
    for (size_t i = p.first + 1; i < p.last; ++i) {
      bool gemm = false; // (nested too: its own wait would end the overlap on its path)
      for_each_node(body[i], nullptr, [&](const Stmt &x) { gemm |= x->as<GemmNode>() != nullptr; });
      if (gemm)
        return why = "a gemm between the first and the last", std::nullopt;
      bool waits = conflict(effects[i], last);
      for (size_t d : p.dep)
        waits = waits || conflict(effects[i], effects[d]);
      if (waits) {
        p.dep.push_back(i);
      } else {
        p.free.push_back(i);
      }
    }
    if (p.free.empty())
      return why = "every statement between the gemms touches what the last one reads or writes", std::nullopt;
    for (const BufferNode *b : filled)
      if (last.reads.count(b))
        p.late.insert(b);
    for (size_t i = 0; i < p.last; ++i)
      for (const BufferNode *b : p.late)
        p.late_read_early |= effects[i].reads.count(b) > 0;
    auto g = body[p.last]->as<GemmNode>();
    for (const Buffer &b : {g->c.buffer, g->a.buffer, g->b.buffer}) {
      const std::string name = "'" + b->name + "'";
      for (size_t i : p.dep)
        if ((effects[i].writes.count(b.get()) || effects[i].reads.count(b.get())) &&
            p.touched.find(name) == std::string::npos)
          p.touched += (p.touched.empty() ? "" : ", ") + name;
    }
    // Where every copied tile is late, one set of barriers hands them back: a stage stays
    // in use for two iterations.
    if (S < 3 && p.late.size() == filled.size())
      return why = std::to_string(S) + " stages, and it would hold a stage the producer fills next (3 or more "
                                       "overlap it: write stages(3))",
             std::nullopt;
    if (!overlap_)
      return why = "-fplugin-arg-tile-overlap-gemms=on asks for it", std::nullopt;
    return p;
  }

  int param_of(const BufferNode *b) const {
    for (size_t i = 0; i < k_.params.size(); ++i)
      if (k_.params[i].tensor.get() == b)
        return int(i);
    return -1;
  }

  /// A copy from a view of rows of a tensor parameter, as a copy from the tensor at the
  /// view's origin, and what the consumers zero of the tile it fills (the rows outside the
  /// view: the tensor's own rows there); nullopt with `why` where it is not of that kind.
  std::optional<ViewZero> view_zero(const CopyNode *c, std::string &why) const {
    const BufferNode *v = c->src.buffer.get();
    const BufferNode *d = c->dst.buffer.get();
    const std::string name = "'" + d->name + "'";
    if (v->view_of->view_of || param_of(v->view_of.get()) < 0)
      return why = "the copy into " + name + " is from '" + v->name + "', a view of a view", std::nullopt;
    for (size_t i = 1; i < v->origin.size(); ++i)
      if (!is_const_int(v->origin[i], 0))
        return why = "the copy into " + name + " is from '" + v->name + "', a view of other than rows", std::nullopt;
    // Its rows: the tile's first dimension (a two-dimensional tile), or none (a tile of one row).
    const auto &dims = c->src.tile_dims;
    const bool rows = !dims.empty() && dims[0] == 0;
    if ((rows && d->rank() != 2) || (!rows && d->rank() > 2))
      return why = "the copy into " + name + " is from '" + v->name +
                   "', a view of rows, into a tile whose rows are not the view's",
             std::nullopt;
    ViewZero z;
    Region src = c->src;
    src.buffer = v->view_of;
    for (size_t i = 0; i < src.begin.size(); ++i)
      if (i == 0)
        src.begin[i] = add(cast(ScalarType::I64, src.begin[i]), cast(ScalarType::I64, v->origin[0]));
    auto copy = std::make_shared<CopyNode>(src, c->dst);
    copy->loc = c->loc;
    z.copy = copy;
    z.dst = c->dst.buffer;
    z.row0 = c->src.begin[0];
    z.rows = rows ? c->src.extent[0] : 1;
    z.count = v->shape[0];
    return z;
  }

  /// Whether copy `c` can be bulk tensor copies; `why` says why not. `staged`: its tile
  /// gets pipeline stages, whose pitch a one-dimensional tile may pad.
  std::optional<BulkCopyPlan> plan_copy(const CopyNode *c, std::string &why, bool staged) const {
    const Region &src = c->src, &dst = c->dst;
    const BufferNode *d = dst.buffer.get();
    const std::string name = "'" + d->name + "'";
    BulkCopyPlan p{c};
    p.param = param_of(src.buffer.get());
    if (src.buffer->view_of && d->scope == Scope::Shared)
      return why = "the copy into " + name + " is from '" + src.buffer->name +
                   "', rows of a tensor chosen at run time, which a tensor map (made at launch) does not describe",
             std::nullopt;
    if (p.param < 0 || d->scope != Scope::Shared)
      return why = "the copy into " + name + " is not from a tensor parameter into shared memory", std::nullopt;
    // (A tensor the kernel also writes would need its writes fenced for the copy engine.)
    if (!src.buffer->read_only)
      return why = "the copy into " + name + " reads '" + src.buffer->name + "', which is not a tensor of const",
             std::nullopt;
    if (src.buffer->rank() > 4)
      return why = "the copy into " + name + " reads a tensor of more than 4 dimensions", std::nullopt;
    if (src.buffer->dtype != d->dtype)
      return why = "the copy into " + name + " converts its elements", std::nullopt;
    const int elem = bytes(d->dtype), rank = d->rank();
    // A one-dimensional tile is a box of one row.
    if (rank > 2 || src.tile_dims.size() != size_t(rank) || dst.tile_shape() != src.tile_shape() ||
        dst.num_elements() != d->num_elements())
      return why = "the copy into " + name + " does not fill the whole one- or two-dimensional tile", std::nullopt;
    if (src.tile_dims.back() != src.buffer->rank() - 1 || (rank == 2 && src.tile_dims[0] >= src.tile_dims[1]))
      return why = "the copy into " + name + " transposes, or its rows are not along the tensor's last dimension",
             std::nullopt;
    // (A box whose row starts off a 16-byte boundary of the tensor's row faults on the GPU.)
    if (analysis::known_divisor(src.begin[size_t(src.tile_dims.back())]) * elem % t_.bulk_copy_row_bytes != 0)
      return why = "the copy into " + name + " starts at a column not known to be a multiple of " +
                   std::to_string(t_.bulk_copy_row_bytes) + " bytes into the tensor's rows (a bulk copy's box starts on one)",
             std::nullopt;
    auto sl = k_.shared_layouts.find(d);
    const int swizzle = sl == k_.shared_layouts.end() ? 0 : sl->second.swizzle_bytes;
    const std::int64_t rows = rank == 2 ? d->extent(0) : 1, cols = d->extent(rank - 1);
    if (rows > t_.bulk_copy_box)
      return why = "the tile " + name + " has more than " + std::to_string(t_.bulk_copy_box) +
                   " rows (a bulk copy's box)",
             std::nullopt;
    p.rows = rows;
    p.bytes = rows * cols * elem;
    p.swizzle = swizzle;
    if (swizzle == 0) {
      // Dense rows: one box of the whole tile, each stage on the copy engine's boundary.
      if (sl != k_.shared_layouts.end() && (sl->second.pitch != cols || sl->second.slab != 0))
        return why = "the tile " + name + " is stored with padded rows, which the copy engine does not write",
               std::nullopt;
      if (staged && rank == 1 && cols * elem % t_.bulk_copy_row_bytes == 0 && cols <= t_.bulk_copy_box &&
          p.bytes % t_.bulk_copy_alignment != 0 && t_.bulk_copy_alignment % elem == 0 &&
          t_.shared_alignment % t_.bulk_copy_alignment == 0) {
        // A one-dimensional tile's stages, each padded to start on the boundary bulk copies
        // write to.
        const std::int64_t line = t_.bulk_copy_alignment / elem;
        p.box_cols = cols;
        p.boxes = 1;
        p.stage_pitch = (cols + line - 1) / line * line;
        return p;
      }
      if (cols * elem % t_.bulk_copy_row_bytes != 0 || cols > t_.bulk_copy_box)
        return why = "the rows of the tile " + name + " are " + std::to_string(cols * elem) +
                     " bytes (a bulk copy's box takes rows of a multiple of " +
                     std::to_string(t_.bulk_copy_row_bytes) + " bytes, at most " +
                     std::to_string(t_.bulk_copy_box) + " elements)",
               std::nullopt;
      if (p.bytes % t_.bulk_copy_alignment != 0 || t_.shared_alignment % t_.bulk_copy_alignment != 0)
        return why = "the tile " + name + " is " + std::to_string(p.bytes) +
                     " bytes: its stages would not start on the " + std::to_string(t_.bulk_copy_alignment) +
                     "-byte boundaries bulk copies write to",
               std::nullopt;
      p.box_cols = cols;
      p.boxes = 1;
      return p;
    }
    // The copy engine swizzles by address bits (7 on), the layout by the row's 128-byte line
    // from the tile's start: the same where tiles start on multiples of 8 spans and hold
    // whole 8-row groups, their rows (or slabs) one span.
    const std::int64_t span = swizzle / elem;
    const bool takes = std::find(t_.bulk_copy_swizzles.begin(), t_.bulk_copy_swizzles.end(), swizzle) !=
                       t_.bulk_copy_swizzles.end();
    const bool swizzled = takes && sl->second.alignment >= 8 * swizzle && rows % 8 == 0 &&
                          ((sl->second.slab == span && sl->second.pitch == span) ||
                           (sl->second.slab == 0 && sl->second.pitch == cols && cols == span));
    if (!swizzled || cols % span != 0)
      return why = "the tile " + name + " is not stored in rows or slabs of one span of a swizzle the copy engine "
                                        "writes",
             std::nullopt;
    p.box_cols = span;
    p.boxes = cols / span;
    return p;
  }

  /// Whether the epilogue's copy `c` (of a fragment into a tensor) can leave by bulk tensor
  /// stores; `why` says why not.
  std::optional<BulkStorePlan> plan_store(const CopyNode *c, std::string &why) const {
    const Region &src = c->src, &dst = c->dst;
    const BufferNode *t = dst.buffer.get();
    BulkStorePlan p{c};
    if (t->view_of) { // (a view of rows: the tensor's rows from the view's first)
      if (t->view_of->view_of)
        return why = "it writes a view of a view", std::nullopt;
      for (size_t i = 1; i < t->origin.size(); ++i)
        if (!is_const_int(t->origin[i], 0))
          return why = "it writes a view of other than rows", std::nullopt;
      if (dst.tile_dims.empty() || dst.tile_dims[0] != 0)
        return why = "it writes a view of rows, along which its tile does not run", std::nullopt;
      const Expr row0 = cast(ScalarType::I64, dst.begin[0]), zero = int_imm(0, ScalarType::I64);
      p.row_shift = t->origin[0];
      p.in_view = logical_and(binary(BinaryOp::GE, row0, zero),
                              binary(BinaryOp::LE, add(row0, int_imm(dst.extent[0], ScalarType::I64)),
                                     cast(ScalarType::I64, t->shape[0])));
      t = t->view_of.get();
    }
    p.param = param_of(t);
    p.own = src.buffer->scope == Scope::Shared;
    if (p.param < 0 || (!p.own && !k_.layouts.count(src.buffer.get())))
      return why = "it is not from a fragment in registers or a shared tile into a tensor parameter", std::nullopt;
    if (t->rank() > 4)
      return why = "it writes a tensor of more than 4 dimensions", std::nullopt;
    if (src.buffer->rank() != 2 || src.num_elements() != src.buffer->num_elements() || dst.tile_dims.size() != 2 ||
        dst.tile_shape() != src.tile_shape())
      return why = std::string("it does not store a whole two-dimensional ") + (p.own ? "tile" : "fragment"),
             std::nullopt;
    if (dst.tile_dims[0] >= dst.tile_dims[1] || dst.tile_dims[1] != t->rank() - 1)
      return why = "it transposes, or its rows are not along the tensor's last dimension", std::nullopt;
    const int elem = bytes(t->dtype);
    if (analysis::known_divisor(dst.begin[size_t(dst.tile_dims[1])]) * elem % t_.bulk_copy_row_bytes != 0)
      return why = "it starts at a column not known to be a multiple of " + std::to_string(t_.bulk_copy_row_bytes) +
                   " bytes into the tensor's rows (a bulk store's box starts on one)",
             std::nullopt;
    const std::int64_t rows = src.buffer->extent(0), cols = src.buffer->extent(1), span = 128 / elem;
    if (cols % span != 0)
      return why = "the tile's rows are " + std::to_string(cols * elem) +
                   " bytes (a bulk store's tile takes rows of a multiple of 128 bytes)",
             std::nullopt;
    if (rows % 8 != 0)
      return why = "the tile has " + std::to_string(rows) + " rows (a bulk store's tile takes a multiple of 8)",
             std::nullopt;
    if (rows > 256)
      return why = "the tile has more than 256 rows (a bulk store's box)", std::nullopt;
    // (Its asynchronous writes would need waiting for before any other access of the tensor,
    // a view of its rows included.)
    auto is_t = [&](const Buffer &b) {
      const BufferNode *r = b.get();
      while (r->view_of)
        r = r->view_of.get();
      return r == t;
    };
    bool elsewhere = false;
    for_each_node(
        k_.body,
        [&](const Expr &x) {
          if (auto l = x->as<LoadNode>())
            elsewhere |= is_t(l->buffer);
        },
        [&](const Stmt &x) {
          if (x.get() == c)
            return;
          if (auto st = x->as<StoreNode>())
            elsewhere |= is_t(st->buffer);
          else if (auto cp = x->as<CopyNode>())
            elsewhere |= is_t(cp->src.buffer) || is_t(cp->dst.buffer);
          else if (auto a = x->as<AtomicNode>())
            elsewhere |= is_t(a->dst.buffer) || (a->src && is_t(a->src->buffer));
          else if (auto f = x->as<FillNode>())
            elsewhere |= is_t(f->dst.buffer);
        });
    if (elsewhere)
      return why = "the kernel reads or writes '" + t->name + "' elsewhere too", std::nullopt;
    p.rows = rows;
    p.box_cols = span;
    p.boxes = cols / span;
    return p;
  }

  /// The layout the copy engine reads a bulk store's tile in (as plan_copy's tiles): rows,
  /// or slabs, of 128 bytes in the 128-byte swizzle from the swizzle's boundary.
  SharedLayout store_layout(const BulkStorePlan &p) const {
    return SharedLayout{p.box_cols, 128, p.boxes > 1 ? p.box_cols : 0,
                        std::max(8 * 128, int(t_.shared_alignment))};
  }

  /// Whether the epilogue's copy at `copy` (of `top`, after the loop at `at`) from a shared
  /// tile of the kernel's own can store from that tile: declared at the top of the kernel's
  /// body before the loop, of the tensor's element type, touched only by the statements
  /// after the loop up to this copy, and laid out densely (then given the bulk store's
  /// layout, where `apply`) or in it already. Sets the plan's tile and first use; `why` says
  /// why not.
  bool own_tile(const std::vector<Stmt> &top, size_t at, std::vector<Stmt>::const_iterator copy, BulkStorePlan &p,
                std::string &why, bool apply) {
    const Buffer &b = p.copy->src.buffer;
    const std::string name = "'" + b->name + "'";
    auto touches = [&](const Stmt &s) {
      bool found = false;
      for_each_node(
          s,
          [&](const Expr &x) {
            if (auto l = x->as<LoadNode>())
              found |= l->buffer == b;
          },
          [&](const Stmt &x) {
            if (x->as<DeclBufferNode>())
              return;
            const analysis::SharedAccess a = analysis::shared_access(x);
            for (auto *uses : {&a.reads, &a.writes})
              for (auto &u : *uses)
                found |= u.buffer == b.get();
          });
      return found;
    };
    bool declared = false, annotated = false;
    for_each_node(k_.body, nullptr, [&](const Stmt &x) {
      if (auto a = x->as<AnnotateLayoutNode>())
        annotated |= a->buffer == b;
    });
    if (annotated)
      return why = "the tile " + name + " has a layout annotated (annotate_layout)", false;
    for (size_t i = 0; i < at; ++i) {
      if (auto d = top[i]->as<DeclBufferNode>(); d && d->buffer == b)
        declared = true;
      else if (touches(top[i]))
        return why = "the tile " + name + " is used before the loop", false;
    }
    if (!declared)
      return why = "the tile " + name + " is not declared at the top of the kernel's body", false;
    if (b->dtype != p.copy->dst.buffer->dtype)
      return why = "it converts the elements of " + name, false;
    if (touches(top[at]))
      return why = "the tile " + name + " is used in the loop", false;
    for (auto t = copy + 1; t != top.end(); ++t)
      if (touches(*t))
        return why = "the tile " + name + " is used after the copy", false;
    for (auto t = top.begin() + long(at) + 1; t != copy && !p.first_use; ++t)
      if (touches(*t))
        p.first_use = t->get();
    if (!p.first_use)
      p.first_use = p.copy;
    const SharedLayout want = store_layout(p);
    auto sl = k_.shared_layouts.find(b.get());
    if (sl != k_.shared_layouts.end() && !(sl->second == want))
      return why = "the tile " + name + " is laid out otherwise (" + to_string(sl->second) + ")", false;
    if (apply)
      k_.shared_layouts[b.get()] = want;
    p.tile = b;
    return true;
  }

  /// At least the shared memory the buffers `stmts` declare take, laid out one after the
  /// other in any order (as plan-shared-memory places buffers whose lives overlap): each
  /// with its bytes and the most padding its alignment may need. Fragments in registers
  /// aside.
  std::int64_t shared_bytes(const std::vector<Stmt> &stmts) const {
    std::set<const BufferNode *> seen;
    std::int64_t total = 0;
    const std::int64_t base = std::max<std::int64_t>(t_.shared_alignment, 1);
    for (const Stmt &s : stmts)
      for_each_node(s, nullptr, [&](const Stmt &x) {
        auto d = x->as<DeclBufferNode>();
        if (!d)
          return;
        const BufferNode *b = d->buffer.get();
        if ((b->scope != Scope::Shared && (b->scope != Scope::Fragment || k_.layouts.count(b))) || !seen.insert(b).second)
          return;
        std::int64_t align = base;
        if (auto sl = k_.shared_layouts.find(b); sl != k_.shared_layouts.end())
          align = std::max<std::int64_t>(align, sl->second.alignment);
        std::int64_t one = k_.storage_elements(b) * bytes(b->dtype);
        if (groups_ > 1 && !k_.pair_common.count(b)) // (a copy per group: plan-shared-memory)
          one = groups_ * ((one + align - 1) / align * align);
        total += align - 1 + one;
      });
    // And the scratch that lower-fragments declares later for reductions across warps: per
    // element of the destination, one partial result (in the reduction's type) a warp of the
    // reduced dimension.
    for (const Stmt &s : stmts)
      for_each_node(s, nullptr, [&](const Stmt &x) {
        auto r = x->as<ReduceNode>();
        auto l = r ? k_.layouts.find(r->src.get()) : k_.layouts.end();
        if (l == k_.layouts.end())
          return;
        std::int64_t warps = 1;
        for (const Digit &g : l->second.digits)
          if (g.thread && g.dim == r->dim && g.extent > 1)
            warps *= g.stride >= t_.warp_size ? g.extent : std::max<std::int64_t>(1, g.stride * g.extent / t_.warp_size);
        if (warps > 1)
          total += base - 1 + groups_ * r->dst->num_elements() * warps *
                                  bytes(reduce_accum_type(r->reduce_kind, r->src->dtype, r->dst->dtype));
      });
    return total;
  }

  /// The blocks an SM a warp-specialized kernel is built for, and its register split.
  struct Occupancy {
    int blocks = 1;
    int launch_registers = 0;   // a thread's at launch (the file over the blocks' threads)
    int consumer_registers = 0; // a consumer's after the split
    bool split = false;         // whether setmaxnreg moves registers from producer to consumers
    std::int64_t need = 0;      // the consumers' registers as estimated
    std::string why;            // what keeps one block more from an SM
  };

  /// Registers a consumer thread needs, roughly: the most its register fragments take at
  /// once (analysis/FragmentPressure.h) and 40 for addresses, indices, descriptors and
  /// temporaries (more than ptxas took for the kernels of lit targets/cuda/occupancy.cpp,
  /// whose ptxas report the remarks give there).
  std::int64_t consumer_registers_needed() const {
    return kConsumerBaseRegisters + analysis::fragment_words_live(k_.body, k_.layouts);
  }

  /// The registers a thread must have at launch for ptxas to compile the kernel's largest
  /// warpgroup gemm instruction (it checks each instruction against the launch's count,
  /// whatever setmaxnreg gives the consumers later): the accumulators of one instruction
  /// (m x n of a warpgroup's columns) and 32 more (ptxas refused an m64n128 instruction's
  /// 64 accumulators at 80, asking for 90).
  std::int64_t instruction_registers_needed() const {
    std::int64_t most = 0;
    for_each_node(k_.body, nullptr, [&](const Stmt &x) {
      auto g = x->as<GemmNode>();
      auto l = g && k_.warpgroup_gemm(*g) ? k_.layouts.find(g->c.buffer.get()) : k_.layouts.end();
      if (l == k_.layouts.end() || !l->second.mma)
        return;
      const MmaShape &m = *l->second.mma;
      const std::int64_t n = g->atom->max_n > 0 ? std::min<std::int64_t>(m.cols / m.warps_n, g->atom->max_n)
                                                : m.cols / m.warps_n;
      const std::int64_t words = g->atom->m * n * bytes(g->c.buffer->dtype) / (4 * t_.warpgroup_threads());
      most = std::max<std::int64_t>(most, words + 32);
    });
    return most;
  }

  /// The most blocks an SM (up to 4; `only` > 0: just that many) whose shared memory
  /// (`shared` bytes a block, with the 1 KiB the hardware reserves for each) and whose
  /// consumers' registers fit: the register file divided evenly over the blocks' threads
  /// at launch (multiples of 8, at most the target's 255), the producer's given back down
  /// to kProducerRegisters and shared among the consumers (setmaxnreg's split, taken where
  /// it gives them more). One block where none fits.
  Occupancy occupancy(int only, std::int64_t shared, int groups = 0) const {
    const int consumers = (groups > 0 ? groups : groups_) * k_.threads;
    const int total = consumers + t_.warpgroup_threads();
    const std::int64_t need = consumer_registers_needed(), instruction = instruction_registers_needed();
    std::string why = only > 0 ? "a persistent grid takes one block an SM" : "";
    for (int b = only > 0 ? only : 4; b >= 1; --b) {
      Occupancy o;
      o.blocks = b;
      o.need = need;
      o.launch_registers = std::min(t_.max_registers_per_thread, t_.register_file / (b * total)) / 8 * 8;
      const int raised = o.launch_registers +
                         t_.warpgroup_threads() * (o.launch_registers - kProducerRegisters) / consumers / 8 * 8;
      o.split = o.launch_registers > kProducerRegisters && raised > o.launch_registers &&
                raised <= t_.max_registers_per_thread;
      o.consumer_registers = o.split ? raised : o.launch_registers;
      const std::int64_t shared_needed = b * (shared + t_.block_reserved_shared_bytes);
      const bool fits_shared = t_.multiprocessor_shared_bytes <= 0 || shared_needed <= t_.multiprocessor_shared_bytes;
      const bool fits_instruction = o.launch_registers >= instruction;
      if (b == 1 || (fits_shared && fits_instruction && o.consumer_registers >= o.need)) {
        o.why = why;
        return o;
      }
      // The reason of the fewest blocks that do not fit.
      why = !fits_shared ? std::to_string(b) + " would need " + std::to_string(shared_needed) +
                               " bytes of shared memory at most, of the SM's " +
                               std::to_string(t_.multiprocessor_shared_bytes)
            : !fits_instruction
                ? std::to_string(b) + " would leave " + std::to_string(o.launch_registers) +
                      " registers a thread at launch, of the " + std::to_string(instruction) +
                      " its largest gemm instruction takes"
                : std::to_string(b) + " would leave the consumers " + std::to_string(o.consumer_registers) +
                      " registers a thread, of about " + std::to_string(need) + " they need";
    }
    return Occupancy{};
  }

  /// Where the user left the blocks' order to the compiler (no tile::use_swizzle) and the
  /// loop's copies read a tile along one grid dimension and another along the other (a
  /// GEMM's A by the block's row, B by its column): blocks in panels of 8 rows of the grid,
  /// so that the blocks running together share their tiles in L2.
  /// The variables expressions read, directly or through the declarations before the loop
  /// (top[0..at)): `reads(e)` holds the block indices that `e`'s value depends on.
  struct Reads {
    std::map<const VarNode *, std::set<const VarNode *>> through;
    std::set<const VarNode *> operator()(const Expr &e) const {
      std::set<const VarNode *> vars, out;
      free_vars(e, vars);
      for (const VarNode *v : vars) {
        out.insert(v);
        if (auto it = through.find(v); it != through.end())
          out.insert(it->second.begin(), it->second.end());
      }
      return out;
    }
  };
  static Reads reads_before(const std::vector<Stmt> &top, size_t at) {
    Reads r;
    for (size_t i = 0; i < at; ++i)
      if (auto d = top[i]->as<DeclareNode>(); d && d->init)
        r.through[d->var.get()] = r(d->init);
    return r;
  }

  void choose_panels(const std::vector<Stmt> &top, size_t at, const std::vector<BulkCopyPlan> &copies) {
    if (k_.swizzle_panel != 0 || k_.grid_rank < 2)
      return;
    const Reads closure = reads_before(top, at);
    const VarNode *bx = k_.block_index[0].get(), *by = k_.block_index[1].get();
    bool by_row = false, by_column = false;
    std::string names;
    for (const BulkCopyPlan &p : copies) {
      std::set<const VarNode *> vars;
      for (const Expr &b : p.copy->src.begin)
        for (const VarNode *v : closure(b))
          vars.insert(v);
      const bool x = vars.count(bx) > 0, y = vars.count(by) > 0;
      by_row |= y && !x;
      by_column |= x && !y;
      if (x != y)
        names += (names.empty() ? "'" : ", '") + p.copy->src.buffer->name + "'";
    }
    if (!by_row || !by_column)
      return;
    k_.swizzle_panel = 8;
    k_.remarks.push_back({top[at]->loc, "blocks in panels of 8 rows of the grid, which share their tiles of " + names +
                                            " in L2 (T::use_swizzle(1) keeps the launch's order)"});
  }

  /// Multicast (multicast=on, a target with clusters of two, not a persistent grid): the
  /// blocks are launched in clusters of two neighbours along x, and a copy of the loop that
  /// both make alike is loaded half by each, for both. Alike: its coordinates and the loop's
  /// bounds read only block indices that the two blocks agree on, which the kernel tests at
  /// run time (`shares_T`; without panels the two differ in the grid's x, with panels mostly
  /// in its y), so that both run the same iterations. The halves: the tile's boxes where
  /// they are even in number, else its rows where each half holds whole 8-row groups (the
  /// swizzles' period) and starts on the copy engine's boundary (a tensor map of half the
  /// rows). `decls` gets the tests; `names` the tiles, for the remark. Empty where no copy
  /// qualifies (the kernel then launches its blocks one by one).
  std::vector<std::optional<MulticastPlan>> plan_multicast(const std::vector<Stmt> &top, size_t at, const ForNode *loop,
                                                           const std::vector<BulkCopyPlan> &copies,
                                                           std::vector<Stmt> &decls, std::string &names) {
    std::vector<std::optional<MulticastPlan>> out(copies.size());
    if (!multicast_ || t_.cluster_blocks < 2 || k_.grid_rank < 1)
      return {};
    const Reads reads = reads_before(top, at);
    std::set<const VarNode *> bounds;
    for (const Expr &e : {loop->begin, loop->extent, loop->step})
      if (e)
        for (const VarNode *v : reads(e))
          bounds.insert(v);
    bool any = false;
    for (size_t c = 0; c < copies.size(); ++c) {
      const BulkCopyPlan &p = copies[c];
      std::set<const VarNode *> vars = bounds;
      for (const Expr &b : p.copy->src.begin)
        for (const VarNode *v : reads(b))
          vars.insert(v);
      std::vector<int> dims; // the block indices the two blocks must agree on
      for (int d = 0; d < k_.grid_rank; ++d)
        if (vars.count(k_.block_index[d].get()))
          dims.push_back(d);
      // (Two blocks never agree on every block index; without panels they differ in x.)
      const bool panels = k_.swizzle_panel > 1 && k_.grid_rank > 1;
      if (int(dims.size()) == k_.grid_rank || (!panels && !dims.empty() && dims.front() == 0))
        continue;
      MulticastPlan m;
      const std::int64_t elem = bytes(p.copy->dst.buffer->dtype), half_rows = p.rows / 2;
      if (p.boxes % 2 == 0) {
        m.by_rows = false;
      } else if (p.copy->dst.buffer->rank() == 2 && p.rows % 16 == 0 &&
                 half_rows * p.box_cols * elem % t_.bulk_copy_alignment == 0) {
        m.by_rows = true;
      } else {
        continue;
      }
      if (!any) {
        k_.cluster = 2;
        k_.cluster_rank = make_var("cluster_rank", ScalarType::I32);
        k_.cluster_blocks = make_var("cluster_blocks", ScalarType::I32);
        for (int d = 0; d < k_.grid_rank; ++d)
          k_.partner_index[d] = make_var(k_.block_index[d]->name + "_partner", k_.block_index[d]->type);
        any = true;
      }
      if (m.by_rows)
        m.half_map = map_of_box(p.param, p.copy->src, half_rows, p.box_cols, p.swizzle);
      Expr test = binary(BinaryOp::EQ, Expr(k_.cluster_blocks), int_imm(2));
      for (int d : dims)
        test = logical_and(test, binary(BinaryOp::EQ, Expr(k_.partner_index[d]), Expr(k_.block_index[d])));
      m.shares = make_var("shares_" + p.copy->dst.buffer->name, ScalarType::Bool);
      decls.push_back(declare(m.shares, test));
      names += (names.empty() ? "'" : ", '") + p.copy->dst.buffer->name + "'";
      out[c] = m;
    }
    if (!any)
      return {};
    return out;
  }

  /// The roles' multicast plans (plan_multicast; none on a persistent grid) and the test
  /// whether the block shares any tile at this launch (Roles::pair_shares), declared into
  /// `decls`; the shared tiles' names for the remark.
  std::string share_tiles(Roles &r, const std::vector<Stmt> &top, size_t at, bool persistent,
                          std::vector<Stmt> &decls) {
    std::string names;
    std::vector<std::optional<MulticastPlan>> multicast;
    if (!persistent)
      multicast = plan_multicast(top, at, r.loop, r.copies, decls, names);
    r.multicast = multicast.empty() ? std::vector<std::optional<MulticastPlan>>(r.copies.size()) : multicast;
    if (multicast.empty())
      return names;
    Expr any = bool_imm(false);
    for (const auto &m : multicast)
      if (m)
        any = binary(BinaryOp::Or, any, Expr(m->shares));
    r.pair_shares = make_var("pair_shares", ScalarType::Bool);
    decls.push_back(declare(r.pair_shares, any));
    return names;
  }

  /// A loop warp-specialize takes, as planned before the roles split: its stages, its
  /// copies (as bulk copies) and the statements that consume their tiles; the top-level
  /// statements before it, the prelude (declarations that read no memory but read-only
  /// tensor parameters, which both sides run) and the others; the variables the producer
  /// may read.
  struct LoopPlan {
    const ForNode *loop = nullptr;
    int stages = 0;
    /// The loop's body as pipelined_body gives it (its declarations substituted: new
    /// statements), which `copies` point into.
    std::vector<Stmt> body;
    /// The condition the body is under (null: none; at line guard_loc), which the producer tests.
    Expr guard;
    std::uint32_t guard_loc = 0;
    std::vector<BulkCopyPlan> copies;
    std::vector<Stmt> consumers;
    std::set<const BufferNode *> filled;
    std::set<const VarNode *> known;
    std::vector<Stmt> prelude, before;
    /// The copies from views of rows, made from their tensors (the rows outside the view zeroed
    /// by the consumers).
    std::vector<ViewZero> view_zeros;
  };
  std::optional<LoopPlan> refuse_loop(const StmtNode *loop, const std::string &why) {
    not_specialized(loop, why);
    return std::nullopt;
  }

  /// What the producer computes the copies' coordinates and the loop's bounds from: the
  /// parameters, the block's indices (and the loop's variable) and, of the top-level
  /// statements before the loop at top[at], the declarations that read no memory but
  /// read-only tensor parameters and are never assigned (`prelude`, which both sides run).
  void producer_reads(const std::vector<Stmt> &top, size_t at, std::set<const VarNode *> &known,
                      std::vector<Stmt> &prelude) const {
    std::set<const VarNode *> assigned;
    for_each_node(k_.body, nullptr, [&](const Stmt &x) {
      if (const VarNode *v = assigned_var(x.get()))
        assigned.insert(v);
    });
    for (auto &p : k_.params)
      if (p.scalar)
        if (!assigned.count(p.scalar.get())) // (a parameter may be assigned like a variable)
          known.insert(p.scalar.get());
    for (auto &b : k_.block_index)
      if (b)
        known.insert(b.get());
    for (size_t i = 0; i < at; ++i)
      if (auto d = top[i]->as<DeclareNode>();
          d && d->init && !assigned.count(d->var.get()) && reads_only_constant_tensors(d->init)) {
        std::set<const VarNode *> reads;
        free_vars(d->init, reads);
        if (std::all_of(reads.begin(), reads.end(), [&](const VarNode *v) { return known.count(v) > 0; })) {
          known.insert(d->var.get());
          prelude.push_back(top[i]);
        }
      }
  }

  /// Whether the loop at top[at] can be warp-specialized (the remark says why not): its
  /// body starts with copies that bulk copies can make, into shared tiles that only its
  /// consumers' element accesses, copies and gemms read, and what the producer computes
  /// (the copies' offsets, the loop's bounds) reads no memory but read-only tensor
  /// parameters (an index list, a count) and nothing the kernel assigns.
  std::optional<LoopPlan> plan_loop(const std::vector<Stmt> &top, size_t at) {
    const ForNode *loop = top[at]->as<ForNode>();
    const int S = stages_of(loop), NT = k_.threads;
    if (NT % t_.warpgroup_threads() != 0 || NT + t_.warpgroup_threads() > 1024)
      return refuse_loop(loop, "the kernel's " + std::to_string(NT) +
                                       " threads are not whole warpgroups with room for one more");
    bool asserts = false;
    for_each_node(k_.body, nullptr, [&](const Stmt &s) { asserts |= s->as<AssertNode>() != nullptr; });
    if (asserts)
      return refuse_loop(loop, "the kernel has a device_assert, which ends a thread early");
    std::set<const VarNode *> known;
    std::vector<Stmt> prelude;
    producer_reads(top, at, known, prelude);
    // A body under one condition (TileLang's block-sparse loop): the producer tests it and
    // hands the consumers only the iterations where it holds.
    GuardedBody guarded = guarded_body(loop);
    if (guarded.guard) {
      std::set<const VarNode *> reads;
      free_vars(guarded.guard, reads);
      if (!reads_only_constant_tensors(guarded.guard))
        return refuse_loop(loop, "its body is under a condition that reads memory other than read-only tensor "
                                 "parameters (the producer tests it)");
      for (const VarNode *v : reads)
        if (v != loop->var.get() && !known.count(v))
          return refuse_loop(loop, "its body is under a condition that reads '" + v->name +
                                       "', which the kernel assigns, or which is not a parameter, a block index or a "
                                       "constant declared before the loop (the producer tests it)");
    } else if (!loop->body->as<SeqNode>()) {
      return refuse_loop(loop, "its body does not start with copies from global into shared memory");
    }
    const std::set<const StmtNode *> in_prelude = [&] {
      std::set<const StmtNode *> in;
      for (const Stmt &d : prelude)
        in.insert(d.get());
      return in;
    }();

    // The copies from global into shared memory that start the body, and those after other
    // statements that the producer can make as well: into a tile no earlier statement of the
    // body touches, at offsets it computes (TileLang's backward copies lse and dO between
    // its gemms); the others stay with the consumers.
    const std::vector<Stmt> stmts = guarded.guard ? guarded.stmts : pipelined_body(loop);
    std::vector<BulkCopyPlan> copies;
    std::vector<Stmt> consumers;
    std::set<const BufferNode *> filled;
    analysis::SharedAccess earlier;
    auto producer_computes = [&](const CopyNode *c) {
      std::set<const VarNode *> reads;
      bool loads = false;
      for (auto &b : c->src.begin) {
        free_vars(b, reads);
        loads |= !reads_only_constant_tensors(b);
      }
      return !loads && std::all_of(reads.begin(), reads.end(),
                                   [&](const VarNode *v) { return v == loop->var.get() || known.count(v) > 0; });
    };
    auto touched_before = [&](const BufferNode *b) {
      for (const std::set<analysis::BufferUse> *uses : {&earlier.reads, &earlier.writes})
        for (const analysis::BufferUse &u : *uses)
          if (u.buffer == b)
            return true;
      return false;
    };
    std::vector<Stmt> owned;
    std::vector<ViewZero> view_zeros;
    for (auto &s : stmts) {
      auto c = s->as<CopyNode>();
      // (A copy from a view: from its tensor at the view's origin, rows outside the view zeroed.)
      std::optional<ViewZero> zero;
      std::string view_why;
      if (c && c->src.buffer->view_of && c->dst.buffer->scope == Scope::Shared) {
        zero = view_zero(c, view_why);
        if (zero) {
          owned.push_back(zero->copy);
          c = zero->copy->as<CopyNode>();
        }
      }
      if (c && c->src.buffer->scope == Scope::Global && c->dst.buffer->scope == Scope::Shared &&
          !filled.count(c->dst.buffer.get()) &&
          (consumers.empty() || (!touched_before(c->dst.buffer.get()) && producer_computes(c) &&
                                 c->src.buffer->read_only))) {
        std::string why = view_why;
        auto p = why.empty() ? plan_copy(c, why, /*staged=*/true) : std::nullopt;
        if (!p && consumers.empty())
          return refuse_loop(loop, why);
        if (p) {
          copies.push_back(*p);
          filled.insert(c->dst.buffer.get());
          if (zero)
            view_zeros.push_back(*zero);
          continue;
        }
      }
      consumers.push_back(s);
      earlier.merge(analysis::shared_access(s));
    }
    if (copies.empty())
      return refuse_loop(loop, "its body does not start with copies from global into shared memory");
    // (Work besides the gemms, attention's softmax, is taken too: on the H200 attention ran
    // 1.15-1.31x faster warp-specialized than with its cp.async pipeline at two blocks an SM,
    // bench/NOTES.md session 22.)
    const std::set<const BufferNode *> unstageable = unstageable_buffers(k_.body, stages_);
    // The stages are reached through element accesses and copies' and gemms' regions; a
    // reduction, prefix sum or atomic names its buffers whole, and would keep naming the
    // unstaged tile.
    auto whole_use = [&](const BufferNode *b) {
      bool found = false;
      for (auto &c : consumers)
        for_each_node(c, nullptr, [&](const Stmt &x) {
          if (auto r = x->as<ReduceNode>())
            found |= r->src.get() == b || r->dst.get() == b;
          else if (auto u = x->as<CumsumNode>())
            found |= u->src.get() == b || u->dst.get() == b;
          else if (auto a = x->as<AtomicNode>())
            found |= a->dst.buffer.get() == b || (a->src && a->src->buffer.get() == b);
          else if (auto f = x->as<FillNode>())
            found |= f->dst.buffer.get() == b;
        });
      return found;
    };
    for (const BulkCopyPlan &p : copies) {
      const BufferNode *b = p.copy->dst.buffer.get();
      if (whole_use(b))
        return refuse_loop(loop, "'" + b->name + "', which it copies into, is read by a reduction, a prefix sum "
                                     "or an atomic in the loop (a producer's stages are read by gemms, copies and "
                                     "element accesses)");
      if (unstageable.count(b))
        return refuse_loop(loop, "'" + b->name + "', which it copies into, is used outside the loop");
      for (auto &c : consumers)
        for (auto &w : analysis::shared_access(c).writes)
          if (w.buffer == b)
            return refuse_loop(loop, "'" + b->name + "', which it copies into, is written in the loop too");
    }

    std::vector<Stmt> before;
    for (size_t i = 0; i < at; ++i) {
      if (in_prelude.count(top[i].get()))
        continue;
      if (auto db = top[i]->as<DeclBufferNode>(); db && filled.count(db->buffer.get()))
        continue; // declared staged, before the roles split
      before.push_back(top[i]);
    }
    std::set<const VarNode *> needed;
    bool loads = false;
    // (Read-only tensors the producer may read too: a list of the tiles to copy, a count.)
    for (const Expr &e : {loop->begin, loop->extent, loop->step}) {
      free_vars(e, needed);
      loads |= !reads_only_constant_tensors(e);
    }
    for (auto &p : copies)
      for (auto &b : p.copy->src.begin) {
        free_vars(b, needed);
        loads |= !reads_only_constant_tensors(b);
      }
    if (loads)
      return refuse_loop(loop, "the copies' offsets or the loop's bounds read memory other than read-only tensor parameters");
    for (const VarNode *v : needed)
      if (v != loop->var.get() && !known.count(v))
        return refuse_loop(loop, "the copies' offsets or the loop's bounds read '" + v->name +
                                         "', which the kernel assigns, or which is not a parameter, a block index "
                                         "or a constant declared before the loop");
    for (const BulkCopyPlan &p : copies) {
      const BufferNode *b = p.copy->dst.buffer.get();
      bool declared = false;
      for (size_t i = 0; i < at; ++i)
        if (auto db = top[i]->as<DeclBufferNode>(); db && db->buffer.get() == b)
          declared = true;
      if (!declared)
        return refuse_loop(loop, "'" + b->name + "' is not declared at the top of the kernel's body");
    }

    LoopPlan plan;
    plan.loop = loop;
    plan.stages = S;
    plan.body = stmts;
    plan.body.insert(plan.body.end(), owned.begin(), owned.end());
    plan.view_zeros = std::move(view_zeros);
    plan.guard = guarded.guard;
    plan.guard_loc = guarded.loc;
    plan.copies = std::move(copies);
    plan.consumers = std::move(consumers);
    plan.filled = std::move(filled);
    plan.known = std::move(known);
    plan.prelude = std::move(prelude);
    plan.before = std::move(before);
    return plan;
  }

  /// Where the loop's blocks take their indices from: the launch's grid, or (tile::persistent())
  /// tiles that a grid of at most one block an SM takes in turn, where the blocks can compute
  /// the grid (no print, extents from what the producer may read); the prelude's
  /// declarations that read block indices are then computed again for each tile.
  struct GridPlan {
    bool persistent = false;
    std::vector<Stmt> fixed_prelude, tile_prelude;
  };
  GridPlan plan_grid(const LoopPlan &plan) {
    const ForNode *loop = plan.loop;
    const std::vector<Stmt> &prelude = plan.prelude;
    const std::set<const VarNode *> &known = plan.known;
    GridPlan grid;
    std::set<const VarNode *> by_tile;
    for (auto &b : k_.block_index)
      if (b)
        by_tile.insert(b.get());
    for (const Stmt &d : prelude) {
      std::set<const VarNode *> reads;
      free_vars(d->as<DeclareNode>()->init, reads);
      if (std::any_of(reads.begin(), reads.end(), [&](const VarNode *v) { return by_tile.count(v) > 0; })) {
        by_tile.insert(d->as<DeclareNode>()->var.get());
        grid.tile_prelude.push_back(d);
      } else {
        grid.fixed_prelude.push_back(d);
      }
    }
    if (k_.persistence == Kernel::Persistence::On) {
      bool prints = false;
      for_each_node(k_.body, nullptr, [&](const Stmt &s) { prints |= s->as<PrintNode>() != nullptr; });
      std::set<const VarNode *> grid_reads;
      bool grid_loads = false;
      for (int d = 0; d < 3; ++d)
        if (k_.grid[d]) {
          free_vars(k_.grid[d], grid_reads);
          grid_loads |= reads_memory(k_.grid[d]);
        }
      const VarNode *unknown = nullptr;
      for (const VarNode *v : grid_reads)
        if (!known.count(v) || by_tile.count(v))
          unknown = v;
      if (prints)
        k_.remarks.push_back({loop->loc, "grid not persistent: the kernel prints, and a print names its block by the "
                                         "launch's indices"});
      else if (grid_loads || unknown)
        k_.remarks.push_back({loop->loc, "grid not persistent: its extents read " +
                                             (unknown ? "'" + unknown->name + "'" : std::string("memory")) +
                                             ", which the blocks cannot compute (write them from the parameters and "
                                             "constants declared before the loop)"});
      else
        grid.persistent = true;
    }
    return grid;
  }

  /// Ping-pong (pingpong=on; WarpSpecialize.h): the two consumer warpgroups take turns at
  /// the tensor cores, each one's second gemm and next first gemm after the other's. Where
  /// the body is [..., G1, between..., G2, ...] with two wgmma gemms at its top level and
  /// none nested, two consumer warpgroups, no overlap, and nothing between that may be
  /// lowered through shared memory and barriers: the positions of G1 and G2 in the
  /// consumers. The remark says whether, and why not.
  std::optional<std::pair<size_t, size_t>> plan_turns(const LoopPlan &plan, bool overlap) {
    const ForNode *loop = plan.loop;
    const std::vector<Stmt> &consumers = plan.consumers;
    const int NT = k_.threads;
    if (!pingpong_)
      return std::nullopt;
    std::vector<size_t> gemms;
    bool nested = false;
    for (size_t i = 0; i < consumers.size(); ++i) {
      if (auto g = consumers[i]->as<GemmNode>(); g && k_.warpgroup_gemm(*g)) {
        gemms.push_back(i);
        continue;
      }
      for_each_node(consumers[i], nullptr, [&](const Stmt &x) { nested |= x->as<GemmNode>() != nullptr; });
    }
    std::string why;
    if (gemms.size() < 2 && !nested)
      ; // (a loop of one gemm has nothing to overlap it with: no remark)
    else if (groups_ * NT != 2 * t_.warpgroup_threads())
      why = "the kernel has " + std::to_string(NT / t_.warpgroup_threads()) +
            (NT == t_.warpgroup_threads() ? " consumer warpgroup" : " consumer warpgroups") + " (it takes two)";
    else if (overlap)
      why = "the last gemm overlaps the next iteration";
    else if (!plan.view_zeros.empty())
      why = "a copy reads a view of rows, whose tiles the consumers complete behind a barrier of them all";
    else if (gemms.size() != 2 || nested)
      why = "the loop's body has " +
            std::string(nested ? "a gemm inside another statement" : std::to_string(gemms.size()) + " wgmma gemms") +
            " (it takes two at its top level)";
    else if (gemms[1] == gemms[0] + 1)
      why = "nothing runs between its two gemms";
    else
      // A barrier of all consumer threads inside a turn would wait for the other warpgroup,
      // which waits for the turn: no statement that may be lowered through shared memory
      // and barriers (writes of shared tiles, prefix sums, atomics, reductions other than
      // along the rows of a gemm's accumulator, copies other than into a gemm's operand
      // in registers or between fragments of one layout).
      for (auto &c : consumers)
        for_each_node(c, nullptr, [&](const Stmt &x) {
          if (!why.empty())
            return;
          // (A fragment that infer-layout left in shared memory is written there too, with
          // barriers of all consumers: not in registers, it has no layout.)
          for (auto &w : analysis::shared_access(x).writes)
            if (w.buffer->scope == Scope::Shared)
              why = "the loop writes shared memory ('" + w.buffer->name + "')";
            else if (w.buffer->scope == Scope::Fragment && !k_.layouts.count(w.buffer))
              why = "the loop writes fragment '" + w.buffer->name + "', which is in shared memory";
          const GemmNode *g1 = consumers[gemms[0]]->as<GemmNode>(), *g2 = consumers[gemms[1]]->as<GemmNode>();
          auto accumulator = [&](const BufferNode *b) { return b == g1->c.buffer.get() || b == g2->c.buffer.get(); };
          if (x->as<CumsumNode>() || x->as<AtomicNode>())
            why = "the loop has a prefix sum or an atomic";
          else if (auto r = x->as<ReduceNode>(); r && (r->dim != 1 || !accumulator(r->src.get())))
            why = "the loop reduces '" + r->src->name + "' other than along a gemm accumulator's rows";
          else if (auto cp = x->as<CopyNode>()) {
            // (into a gemm's operand in registers, or between fragments of one layout:
            // register moves)
            const BufferNode *src = cp->src.buffer.get(), *dst = cp->dst.buffer.get();
            auto ls = k_.layouts.find(src), ld = k_.layouts.find(dst);
            const bool same = ls != k_.layouts.end() && ld != k_.layouts.end() && ls->second == ld->second;
            if (dst != g1->a.buffer.get() && dst != g2->a.buffer.get() && !same)
              why = "the loop copies '" + src->name + "' into '" + dst->name +
                    "', which may go through shared memory";
          }
        });
    if (gemms.size() < 2 && !nested)
      return std::nullopt;
    if (!why.empty()) {
      k_.remarks.push_back({loop->loc, "warpgroups do not take turns at the tensor cores: " + why});
      return std::nullopt;
    }
    k_.remarks.push_back({consumers[gemms[1]]->loc,
                          "warpgroups take turns at the tensor cores (ping-pong): each one's gemms run while the "
                          "other runs the " +
                              (gemms[1] - gemms[0] == 2 ? std::string("statement")
                                                        : std::to_string(gemms[1] - gemms[0] - 1) + " statements") +
                              " between them"});
    return std::make_pair(gemms[0], gemms[1]);
  }

  /// Copies before the loop from a tensor into a shared tile that nothing else writes
  /// (attention's Q), where `wanted` (a persistent grid, without the overlap): the producer
  /// runs them too, as bulk copies completing on a barrier of their own (the "prologue"),
  /// which the consumers wait on where the copy was, so that it loads the next tile's while
  /// the consumers finish the last. (On the launch's grid the consumers' own copy is what
  /// ran on the H200; with the overlap ptxas spilled the d128 attention's consumers, lit
  /// attention-ptxas.cpp.)
  std::vector<BulkCopyPlan> plan_prologue(const std::vector<Stmt> &top, size_t at, const LoopPlan &plan, bool wanted) {
    std::vector<BulkCopyPlan> prologue;
    std::set<const BufferNode *> prologue_bufs;
    std::set<const BufferNode *> declared_top;
    for (size_t i = 0; i < at; ++i)
      if (auto db = top[i]->as<DeclBufferNode>())
        declared_top.insert(db->buffer.get());
    auto writes = [](const Stmt &s, const BufferNode *b) {
      bool found = false;
      for_each_node(s, nullptr, [&](const Stmt &x) {
        if (auto st = x->as<StoreNode>())
          found |= st->buffer.get() == b;
        else if (auto c = x->as<CopyNode>())
          found |= c->dst.buffer.get() == b;
        else if (auto g = x->as<GemmNode>())
          found |= g->c.buffer.get() == b;
        else if (auto f = x->as<FillNode>())
          found |= f->dst.buffer.get() == b;
        else if (auto r = x->as<ReduceNode>())
          found |= r->dst.get() == b;
        else if (auto u = x->as<CumsumNode>())
          found |= u->dst.get() == b;
        else if (auto a = x->as<AtomicNode>())
          found |= a->dst.buffer.get() == b;
      });
      return found;
    };
    if (!wanted)
      return prologue;
    for (const Stmt &s : plan.before) {
      auto c = s->as<CopyNode>();
      if (!c || c->src.buffer->scope != Scope::Global || c->dst.buffer->scope != Scope::Shared)
        continue;
      const BufferNode *d = c->dst.buffer.get();
      if (!declared_top.count(d) || plan.filled.count(d) || prologue_bufs.count(d))
        continue;
      std::string why;
      std::optional<BulkCopyPlan> p = plan_copy(c, why, /*staged=*/false);
      if (!p)
        continue;
      bool other = false;
      for (const Stmt &t : top)
        if (t.get() != s.get() && writes(t, d))
          other = true;
      std::set<const VarNode *> reads;
      bool reads_mem = false;
      for (auto &b : c->src.begin) {
        free_vars(b, reads);
        reads_mem |= !reads_only_constant_tensors(b);
      }
      for (const VarNode *v : reads)
        other |= !plan.known.count(v);
      if (other || reads_mem)
        continue;
      prologue.push_back(*p);
      prologue_bufs.insert(d);
    }
    return prologue;
  }

  /// The kernel's tensor map of parameter `param` in boxes of rows x cols of region `r`'s
  /// tile dimensions, in `swizzle`: one per tensor, box and swizzle.
  int map_of_box(int param, const Region &r, std::int64_t rows, std::int64_t cols, int swizzle) {
    std::vector<std::int64_t> box(size_t(r.buffer->rank()), 1);
    if (r.tile_dims.size() == 2)
      box[size_t(r.tile_dims[0])] = rows;
    box[size_t(r.tile_dims.back())] = cols;
    for (size_t m = 0; m < k_.tensor_maps.size(); ++m)
      if (k_.tensor_maps[m].param == param && k_.tensor_maps[m].box == box && k_.tensor_maps[m].swizzle_bytes == swizzle)
        return int(m);
    k_.tensor_maps.push_back({param, box, swizzle});
    return int(k_.tensor_maps.size()) - 1;
  }
  /// A bulk store's map: optional (a launch that cannot encode it stores as the copy did),
  /// its bit in the kernel's mask of missing maps.
  int optional_map(int param, const Region &r, std::int64_t rows, std::int64_t cols) {
    const int m = map_of_box(param, r, rows, cols, 128);
    k_.tensor_maps[size_t(m)].optional = true;
    if (!k_.maps_missing)
      k_.maps_missing = make_var("maps_missing", ScalarType::I32);
    return m;
  }

  /// The epilogue's copies of fragments into tensors after the loop at top[at], as bulk
  /// stores (bulk-store=on): each through a shared tile of its own (declared with the
  /// stages, in `staged_decls`), or from a shared tile of the kernel's own (in `own_decls`),
  /// where it fits beside the rest and costs no block an SM; the remark says why not.
  /// `shared_used`: the block's shared memory then, at most (shared_bytes).
  std::vector<BulkStorePlan> plan_stores(const std::vector<Stmt> &top, size_t at, const LoopPlan &plan,
                                         bool persistent, std::vector<Stmt> &staged_decls,
                                         std::set<const BufferNode *> &own_decls, std::int64_t &shared_used) {
    std::vector<BulkStorePlan> stores;
    std::vector<Stmt> declaring = staged_decls;
    declaring.insert(declaring.end(), plan.before.begin(), plan.before.end());
    declaring.insert(declaring.end(), plan.consumers.begin(), plan.consumers.end());
    declaring.insert(declaring.end(), top.begin() + long(at) + 1, top.end());
    std::int64_t used = shared_bytes(declaring);
    const std::map<const BufferNode *, SharedLayout> laid_out_before = k_.shared_layouts;
    for (auto t = top.begin() + long(at) + 1; t != top.end(); ++t) {
      auto c = (*t)->as<CopyNode>();
      // (A copy that is the body of an `if` on what the producer may compute: where it holds.)
      const IfNode *under = nullptr;
      if (auto i = (*t)->as<IfNode>(); !c && i && !i->else_case) {
        auto q = i->then_case->as<SeqNode>();
        const Stmt only = q ? (q->stmts.size() == 1 ? q->stmts[0] : nullptr) : i->then_case;
        std::set<const VarNode *> reads;
        free_vars(i->cond, reads);
        const bool uniform =
            reads_only_constant_tensors(i->cond) &&
            std::all_of(reads.begin(), reads.end(), [&](const VarNode *v) { return plan.known.count(v) > 0; });
        if (only && only->as<CopyNode>() && uniform) {
          c = only->as<CopyNode>();
          under = i;
        }
      }
      if (!c || (c->src.buffer->scope != Scope::Fragment && c->src.buffer->scope != Scope::Shared) ||
          c->dst.buffer->scope != Scope::Global)
        continue;
      const std::string name = "'" + c->dst.buffer->name + "'";
      std::string why;
      std::optional<BulkStorePlan> p = plan_store(c, why);
      if (p && p->own && under) {
        why = "it copies a shared tile of the kernel's own under a condition";
        p.reset();
      }
      if (p && p->own && !own_tile(top, at, t, *p, why, bulk_store_))
        p.reset();
      if (p) {
        p->stmt = t->get();
        p->under = under;
      }
      if (!bulk_store_) {
        if (p)
          k_.remarks.push_back({c->loc, "copy into " + name + " stored by the consumer threads: "
                                        "-fplugin-arg-tile-bulk-store=on makes it bulk tensor stores (TMA)" +
                                            std::string(p->own ? "" : " through shared memory")});
        continue;
      }
      if (!p) {
        k_.remarks.push_back({c->loc, "copy into " + name + " not a bulk tensor store: " + why});
        continue;
      }
      if (p->own) {
        // (Its bytes are counted; its start may move to the copy engine's boundary.)
        const std::int64_t align = store_layout(*p).alignment;
        if (t_.max_shared_bytes > 0 && used + align - 1 > t_.max_shared_bytes) {
          if (auto sl = laid_out_before.find(p->tile.get()); sl != laid_out_before.end())
            k_.shared_layouts[p->tile.get()] = sl->second;
          else
            k_.shared_layouts.erase(p->tile.get());
          k_.remarks.push_back({c->loc, "copy into " + name + " not a bulk tensor store: the tile '" +
                                            p->tile->name + "' on a " + std::to_string(align) +
                                            "-byte boundary may not fit beside the block's other buffers (" +
                                            std::to_string(used) + " bytes with their alignment; a block may have " +
                                            std::to_string(t_.max_shared_bytes) + ")"});
          continue;
        }
        used += align - 1;
        // (Declared before the roles split, so that the wait at the consumers' end names it.)
        for (size_t i = 0; i < at; ++i)
          if (auto d = top[i]->as<DeclBufferNode>(); d && d->buffer == p->tile) {
            staged_decls.push_back(top[i]);
            own_decls.insert(p->tile.get());
          }
        p->map = optional_map(p->param, c->dst, p->rows, p->box_cols);
        stores.push_back(*p);
        continue;
      }
      const BufferNode *dst = c->dst.buffer.get();
      Buffer tile = make_buffer(dst->name + "_tile", Scope::Shared, dst->dtype, {p->rows, p->box_cols * p->boxes});
      tile->loc = c->loc;
      k_.shared_layouts[tile.get()] = store_layout(*p);
      const std::int64_t align = store_layout(*p).alignment;
      const std::int64_t tile_bytes = k_.storage_elements(tile.get()) * bytes(dst->dtype);
      const std::int64_t after = used + align - 1 + tile_bytes;
      // (Blocks an SM come first: a block that waits for its loads is covered by another
      // one, where the store's tile would leave no room for it.)
      const int only = persistent ? 1 : 0;
      if (const int with = occupancy(only, after).blocks, without = occupancy(only, used).blocks; with < without) {
        k_.shared_layouts.erase(tile.get());
        k_.remarks.push_back({c->loc, "copy into " + name + " not a bulk tensor store: its shared tile of " +
                                          std::to_string(tile_bytes) + " bytes would leave room for " +
                                          std::to_string(with) + (with == 1 ? " block" : " blocks") + " an SM, not " +
                                          std::to_string(without)});
        continue;
      }
      if (t_.max_shared_bytes > 0 && after > t_.max_shared_bytes) {
        k_.shared_layouts.erase(tile.get());
        k_.remarks.push_back({c->loc, "copy into " + name + " not a bulk tensor store: its shared tile of " +
                                          std::to_string(tile_bytes) + " bytes does not fit beside the block's other buffers (" +
                                          std::to_string(used) + " bytes with their alignment; a block may have " +
                                          std::to_string(t_.max_shared_bytes) + "; fewer stages make room)"});
        continue;
      }
      used = after;
      p->tile = tile;
      p->first_use = t->get();
      p->map = optional_map(p->param, c->dst, p->rows, p->box_cols);
      staged_decls.push_back(decl_buffer(tile));
      stores.push_back(*p);
    }
    shared_used = used;
    return stores;
  }

  /// The remarks of a loop taken: its copies and swizzles, the producer and the split, the
  /// blocks an SM expected, and the epilogue's bulk stores.
  void remark_roles(const Roles &r, const Occupancy &occ) {
    std::string names;
    for (const BulkCopyPlan &p : r.copies)
      names += (names.empty() ? "'" : ", '") + p.copy->dst.buffer->name + "'";
    std::string first_names;
    for (const BulkCopyPlan &p : r.prologue)
      first_names += (first_names.empty() ? "'" : ", '") + p.copy->dst.buffer->name + "'";
    // "128-byte swizzle", "64- and 128-byte swizzles", "128-byte swizzle; 'lse_s' in dense rows"
    // ("'small' in stages padded to multiples of 128 bytes": one-dimensional tiles' stages.)
    std::set<int> swizzles;
    std::string dense, padded;
    for (const std::vector<BulkCopyPlan> *ps : {&r.copies, &r.prologue})
      for (const BulkCopyPlan &p : *ps)
        if (p.swizzle)
          swizzles.insert(p.swizzle);
        else {
          std::string &names = p.stage_pitch ? padded : dense;
          names += (names.empty() ? "'" : ", '") + p.copy->dst.buffer->name + "'";
        }
    std::string swizzled;
    for (int sw : swizzles)
      swizzled += (swizzled.empty() ? "" : sw == *swizzles.rbegin() ? " and " : ", ") + std::to_string(sw) +
                  (sw == *swizzles.rbegin() ? "-byte swizzle" : "-");
    if (swizzles.size() > 1)
      swizzled += "s";
    if (!dense.empty())
      swizzled += (swizzled.empty() ? "" : "; ") + dense + " in dense rows";
    if (!padded.empty())
      swizzled += (swizzled.empty() ? "" : "; ") + padded + " in stages padded to multiples of " +
                  std::to_string(t_.bulk_copy_alignment) + " bytes";
    k_.remarks.push_back(
        {r.loop->loc, "pipelined loop: " + std::to_string(r.S) + " stages, the copies into " + names +
                        (r.prologue.empty() ? "" : " (and before it into " + first_names + ")") +
                        " are bulk tensor copies (TMA, " + swizzled + ") by a producer warpgroup of " +
                        std::to_string(t_.warpgroup_threads()) + " threads" +
                        (occ.split ? " (" + std::to_string(kProducerRegisters) + " registers each)" : "") + "; the " +
                        std::to_string(r.NT * groups_) + " consumer threads" +
                        (occ.split ? " take " + std::to_string(occ.consumer_registers) + " registers each and" : "") +
                        " hand stages back through mbarriers"});
    if (r.guard)
      k_.remarks.push_back({r.guard_loc ? r.guard_loc : r.loop->loc,
                            "the loop's condition is tested by the producer, " + std::to_string(Roles::kGuardBatch) +
                                " iterations at a time: an iteration where it does not hold takes no stage, and the "
                                "consumers take each iteration that runs from its stage"});
    k_.remarks.push_back({r.loop->loc, std::to_string(occ.blocks) +
                                         (occ.blocks == 1 ? " block an SM expected" : " blocks an SM expected") +
                                         (occ.why.empty() ? "" : " (" + occ.why + ")") + ": " +
                                         std::to_string(occ.launch_registers) + " registers a thread at launch" +
                                         (occ.split ? ", the consumers' " + std::to_string(occ.consumer_registers) : "") +
                                         " for about " + std::to_string(occ.need) + " a consumer needs"});
    for (const BulkStorePlan &p : r.stores)
      k_.remarks.push_back(
          {p.copy->loc, "copy into '" + p.copy->dst.buffer->name + "' by bulk tensor stores (TMA, " +
                            std::to_string(p.boxes) + (p.boxes == 1 ? " box" : " boxes") + " of " +
                            std::to_string(p.rows) + "x" + std::to_string(p.box_cols) + ") from shared '" +
                            p.tile->name + "' (128-byte swizzle), which one consumer thread issues"});
  }

  /// Paired blocks (pair-blocks=on; not with a persistent grid, the overlap, multicast or
  /// more than one warpgroup of the kernel's own): each launched block runs two neighbouring
  /// blocks of the grid along a dimension d (2i and 2i + 1), a consumer group each, and the
  /// producer loads the loop's tiles whose coordinates do not read block index d once for
  /// both, the others for each group. d is the dimension whose shared tiles are the most
  /// bytes (the first of equals), where the grid's extent along it, and the loop's first
  /// value and step, read only what the producer may read and not block index d (each
  /// group may run its own count of iterations). Taken where the pair's shared memory fits
  /// and it has at least as many consumer warpgroups an SM as the blocks alone (up to two).
  /// The remark says why not where the option asks for it.
  struct PairPlan {
    int dim = -1;
    std::vector<bool> shared; // per copy
    std::vector<Stmt> prelude; // the prelude's declarations that read block index dim
    std::int64_t shared_bytes = 0, own_bytes = 0;
    int stages = 0; // the loop's, deepened where the pair has fewer blocks an SM than the blocks alone
  };
  std::optional<PairPlan> plan_pairs(const std::vector<Stmt> &top, size_t at, const LoopPlan &plan, bool persistent,
                                     bool overlap, bool prologue) {
    if (pair_blocks_ == PairBlocks::Off)
      return std::nullopt;
    const ForNode *loop = plan.loop;
    auto refuse = [&](const std::string &why) -> std::optional<PairPlan> {
      k_.remarks.push_back({loop->loc, "blocks not paired: " + why});
      return std::nullopt;
    };
    if (pair_blocks_ == PairBlocks::Auto) { // GEMM's form: one gemm in the loop
      int gemms = 0;
      for (const Stmt &c : plan.consumers)
        for_each_node(c, nullptr, [&](const Stmt &x) { gemms += x->as<GemmNode>() != nullptr; });
      if (gemms != 1)
        return refuse("the loop has " + std::to_string(gemms) + " gemms, and pair-blocks=auto pairs the blocks of a "
                      "loop of one (pair-blocks=on pairs these)");
    }
    if (k_.threads != t_.warpgroup_threads())
      return refuse("the kernel has " + std::to_string(k_.threads) + " threads (a pair takes a warpgroup for each "
                    "block)");
    if (persistent || prologue)
      return refuse("the grid is persistent");
    if (overlap)
      return refuse("the last gemm overlaps the next iteration");
    if (plan.guard)
      return refuse("the loop's body is under a condition, whose iterations the producer chooses");
    if (!plan.view_zeros.empty())
      return refuse("a copy reads a view of rows, whose tiles the consumers complete");
    if (k_.cluster > 1)
      return refuse("the blocks are launched in clusters (multicast)");
    // (What the producer computes runs for both blocks of a pair, also for the second one past
    // the grid's end, which may not read tensors at its index.)
    bool loads = reads_memory(loop->extent);
    for (const Stmt &d : plan.prelude)
      loads |= reads_memory(d->as<DeclareNode>()->init);
    for (const BulkCopyPlan &c : plan.copies)
      for (const Expr &b : c.copy->src.begin)
        loads |= reads_memory(b);
    if (loads)
      return refuse("the copies' coordinates or the loop's bounds read tensors (a pair's block past the grid's end "
                    "would read them too)");
    const Reads reads = reads_before(top, at);
    PairPlan best;
    for (int d = 0; d < k_.grid_rank; ++d) {
      const VarNode *index = k_.block_index[d].get();
      std::set<const VarNode *> grid_reads;
      free_vars(k_.grid[d], grid_reads);
      if (reads_memory(k_.grid[d]) ||
          std::any_of(grid_reads.begin(), grid_reads.end(), [&](const VarNode *v) { return !plan.known.count(v); }))
        continue;
      bool bounds = false;
      for (const Expr &e : {loop->begin, loop->step})
        bounds |= e && reads(e).count(index) > 0;
      if (bounds)
        continue;
      PairPlan p;
      p.dim = d;
      for (const BulkCopyPlan &c : plan.copies) {
        bool own = false;
        for (const Expr &b : c.copy->src.begin)
          own |= reads(b).count(index) > 0;
        p.shared.push_back(!own);
        (own ? p.own_bytes : p.shared_bytes) += c.bytes;
      }
      if (p.shared_bytes > best.shared_bytes)
        best = p;
    }
    if (best.dim < 0)
      return refuse("no dimension of the grid has neighbouring blocks that copy the same tiles in the loop");
    for (const Stmt &x : plan.prelude)
      if (reads(x->as<DeclareNode>()->init).count(k_.block_index[best.dim].get()))
        best.prelude.push_back(x);
    // The shared memory and registers with and without the pair: the loop's tiles (the own
    // ones twice), the other buffers (twice).
    std::vector<Stmt> others = plan.before;
    others.insert(others.end(), plan.consumers.begin(), plan.consumers.end());
    others.insert(others.end(), top.begin() + long(at) + 1, top.end());
    // (With the epilogue's tiles for bulk stores, which plan_stores adds where they fit.)
    std::int64_t rest = shared_bytes(others);
    if (bulk_store_)
      for (auto t = top.begin() + long(at) + 1; t != top.end(); ++t)
        if (auto c = (*t)->as<CopyNode>(); c && c->src.buffer->scope == Scope::Fragment &&
                                           c->dst.buffer->scope == Scope::Global)
          rest += c->src.buffer->num_elements() * bytes(c->dst.buffer->dtype) + 1023;
    auto bytes_with = [&](int groups, std::int64_t stages) {
      std::int64_t total = groups * rest;
      for (size_t c = 0; c < plan.copies.size(); ++c)
        total += (groups == 1 || best.shared[c] ? 1 : 2) * stages * plan.copies[c].bytes + t_.bulk_copy_alignment;
      return total;
    };
    const std::int64_t alone = bytes_with(1, plan.stages), paired = bytes_with(2, plan.stages);
    const Occupancy one = occupancy(0, alone, 1), two = occupancy(0, paired, 2);
    if (t_.max_shared_bytes > 0 && paired > t_.max_shared_bytes)
      return refuse("the pair's shared memory, about " + std::to_string(paired) + " bytes, is more than a block may "
                    "have (" + std::to_string(t_.max_shared_bytes) + ")");
    if (two.consumer_registers < two.need)
      return refuse("the pair's consumers would have " + std::to_string(two.consumer_registers) +
                    " registers a thread, of about " + std::to_string(two.need) + " they need");
    if (2 * two.blocks < std::min(one.blocks, 2))
      return refuse("it would leave " + std::to_string(2 * two.blocks) + " consumer warpgroups an SM, not " +
                    std::to_string(one.blocks));
    // Fewer blocks an SM than alone: more stages, up to the bytes in flight an SM the blocks
    // alone had, where they fit.
    best.stages = plan.stages;
    for (int s = std::min(16, plan.stages * one.blocks / two.blocks); s > plan.stages; --s) {
      const std::int64_t deeper = bytes_with(2, s);
      if ((t_.max_shared_bytes <= 0 || deeper <= t_.max_shared_bytes) && occupancy(0, deeper, 2).blocks >= two.blocks) {
        best.stages = s;
        break;
      }
    }
    return best;
  }

  bool specialize(const std::vector<Stmt> &top, size_t at) {
    std::optional<LoopPlan> plan = plan_loop(top, at);
    if (!plan)
      return false;
    const ForNode *loop = plan->loop;
    int S = plan->stages;
    const int NT = k_.threads;
    const std::vector<BulkCopyPlan> &copies = plan->copies;
    const std::vector<Stmt> &consumers = plan->consumers, &prelude = plan->prelude, &before = plan->before;
    const std::set<const BufferNode *> &filled = plan->filled;
    const std::set<const VarNode *> &known = plan->known;
    std::vector<Stmt> staged_decls;

    // (Taken from here on.)
    choose_panels(top, at, copies);

    const GridPlan grid = plan_grid(*plan);
    const bool persistent = grid.persistent;
    const std::vector<Stmt> &fixed_prelude = grid.fixed_prelude, &tile_prelude = grid.tile_prelude;

    // Whether the last gemm overlaps the next iteration (then its tiles, "late", may have
    // barriers of their own: group 1).
    std::string no_overlap;
    std::optional<OverlapPlan> overlap = plan_overlap(consumers, filled, S, no_overlap);
    if (plan->guard && (overlap || !no_overlap.empty())) {
      overlap.reset();
      no_overlap = "the loop's body is under a condition, whose iterations the producer chooses";
    }
    if (!plan->view_zeros.empty() && (overlap || !no_overlap.empty())) {
      overlap.reset();
      no_overlap = "a copy reads a view of rows, whose tiles the consumers complete";
    }

    // The copies the producer makes before the loop (a persistent grid's prologue).
    std::vector<BulkCopyPlan> prologue = plan_prologue(top, at, *plan, persistent && !overlap);
    std::set<const BufferNode *> prologue_bufs;
    for (const BulkCopyPlan &p : prologue)
      prologue_bufs.insert(p.copy->dst.buffer.get());

    // The tensor maps: one per tensor, box and swizzle.
    auto map_for = [&](const BulkCopyPlan &p) {
      return map_of_box(p.param, p.copy->src, p.rows, p.box_cols, p.swizzle);
    };
    std::vector<int> map_of, prologue_map;
    for (auto &p : copies)
      map_of.push_back(map_for(p));
    for (auto &p : prologue)
      prologue_map.push_back(map_for(p));

    // The roles' building blocks: the barrier groups (the late tiles' own where the last gemm
    // overlaps the next iteration and reads some of them), the staged buffers and the
    // barriers: group g's full and empty per stage, then the prologue's full and empty,
    // then the persistent grid's tile slot's full and empty.
    Roles r{k_, t_, top};
    r.at = at;
    r.loop = loop;
    r.S = S;
    r.NT = NT;
    r.copies = copies;
    r.prologue = prologue;
    r.map_of = map_of;
    r.prologue_map = prologue_map;
    // The tiles neighbouring blocks share (multicast), and the tests of that.
    std::vector<Stmt> shares_decls;
    const std::string shared_names =
        share_tiles(r, top, at, persistent || plan->guard || !plan->view_zeros.empty(), shares_decls);
    if (!plan->view_zeros.empty() && multicast_)
      k_.remarks.push_back({loop->loc, "tiles not shared with the neighbouring block (multicast): a copy reads a view "
                                       "of rows, whose tiles each block's consumers complete"});
    if (plan->guard && multicast_)
      k_.remarks.push_back({loop->loc, "tiles not shared with the neighbouring block (multicast): the loop's body is "
                                       "under a condition, whose iterations each block's producer chooses"});
    r.consumers = consumers;
    r.before = before;
    r.tile_prelude = tile_prelude;
    r.prologue_bufs = prologue_bufs;
    r.overlap = overlap;
    if (overlap)
      r.late = overlap->late;
    const bool any_late = overlap && !overlap->late.empty();
    const bool any_early = !overlap || overlap->late.size() < copies.size();
    r.G = any_late && any_early ? 2 : 1;
    r.E = any_early ? 0 : -1;
    r.L = any_late ? r.G - 1 : -1;
    const int G = r.G;
    // Paired blocks: each copy shared by both groups, or each group's own (2 S stages).
    const std::optional<PairPlan> pairs = plan_pairs(top, at, *plan, persistent, overlap.has_value(), !prologue.empty());
    r.guard = plan->guard;
    r.guard_loc = plan->guard_loc;
    r.view_zeros = plan->view_zeros;
    if (pairs) {
      groups_ = 2;
      k_.pair_dim = pairs->dim;
      k_.pair_group = make_var("pair_group", ScalarType::I32);
      r.pair_shared = pairs->shared;
      r.pair_prelude = pairs->prelude;
      r.shared_tx = pairs->shared_bytes;
      r.own_tx = pairs->own_bytes;
      S = r.S = pairs->stages;
      r.warpgroup = Expr(k_.pair_group); // (the groups take the turns)
    }
    // The consumer warpgroups' turns at the tensor cores (a pair's two groups too).
    const std::optional<std::pair<size_t, size_t>> turns = plan_turns(*plan, overlap.has_value());
    r.turns = turns;
    for (size_t c = 0; c < copies.size(); ++c) { // in the program's order
      const BulkCopyPlan &p = copies[c];
      const BufferNode *b = p.copy->dst.buffer.get();
      const bool own = pairs && !pairs->shared[c];
      r.base.staged[b] = staged_buffer(k_, b, own ? 2 * S : S);
      if (own)
        r.base.grouped.insert(b);
      if (pairs)
        k_.pair_common.insert(r.base.staged[b].get());
      if (p.stage_pitch) // B[n] staged as B[S, n], its rows (the stages) stage_pitch apart
        k_.shared_layouts[r.base.staged[b].get()] = SharedLayout{p.stage_pitch};
      staged_decls.push_back(decl_buffer(r.base.staged[b]));
    }
    for (const Stmt &s : before) // the prologue's tiles: the producer writes them too
      if (auto db = s->as<DeclBufferNode>(); db && prologue_bufs.count(db->buffer.get()))
        staged_decls.push_back(s);
    r.q_full = 2 * std::int64_t(G) * S;
    r.q_empty = r.q_full + 1;
    r.slot_full = r.q_full + (prologue.empty() ? 0 : 2);
    r.slot_empty = r.slot_full + 1;
    r.bars = make_buffer("barriers", Scope::Shared, ScalarType::U64, {r.slot_full + (persistent ? 2 : 0)});
    r.bars->loc = loop->loc;
    if (pairs)
      k_.pair_common.insert(r.bars.get());
    staged_decls.push_back(decl_buffer(r.bars));
    if (r.guard) {
      r.iterations = make_buffer("iterations", Scope::Shared, ScalarType::I32, {S});
      r.iterations->loc = loop->loc;
      staged_decls.push_back(decl_buffer(r.iterations));
    }
    if (persistent) {
      r.slot = make_buffer("next_tile", Scope::Shared, ScalarType::I32, {1});
      r.slot->loc = loop->loc;
      staged_decls.push_back(decl_buffer(r.slot));
    }

    // The epilogue's copies of fragments into tensors, as bulk stores (bulk-store=on).
    std::int64_t shared_used = 0; // the block's shared memory, at most (shared_bytes)
    r.stores = plan_stores(top, at, *plan, persistent, staged_decls, r.own_decls, shared_used);
    if (!k_.thread_index)
      k_.thread_index = make_var("tid", ScalarType::I32);
    const Expr tid = k_.thread_index;
    r.tid = tid;
    r.it_type = loop->extent->type;
    r.tx_bytes.assign(size_t(G), 0);
    for (auto &p : copies)
      r.tx_bytes[size_t(r.group_of(p))] += p.bytes;
    for (auto &p : prologue)
      r.prologue_bytes += p.bytes;
    if (!pairs)
      r.warpgroup = div(tid, int_imm(t_.warpgroup_threads()));
    if (pairs) // (group g's stages of its own tiles from g S)
      r.base.group_stage = cast(r.it_type, mul(Expr(k_.pair_group), int_imm(S)));
    r.own_turn = add(int_imm(2), r.warpgroup);
    r.other_turn = sub(int_imm(3), r.warpgroup);

    Var s = make_var("s", ScalarType::I32);
    // (Where the blocks of a cluster share a tile, both blocks' consumers hand each stage back.)
    const Expr empty_count = pairs ? int_imm(2 * NT)
                             : r.pair_shares ? select(r.pair_shares, int_imm(2 * NT), int_imm(NT))
                                             : int_imm(NT);
    std::vector<Stmt> inits = {
        for_loop(s, int_imm(0), int_imm(std::int64_t(G) * S), ForKind::Serial,
                 seq({r.mbar(MbarrierOp::Init, s, int_imm(1)),
                      r.mbar(MbarrierOp::Init, add(s, int_imm(std::int64_t(G) * S)), empty_count)}))};
    if (!prologue.empty()) {
      inits.push_back(r.mbar(MbarrierOp::Init, int_imm(r.q_full), int_imm(1)));
      inits.push_back(r.mbar(MbarrierOp::Init, int_imm(r.q_empty), int_imm(NT)));
    }
    if (persistent) {
      inits.push_back(r.mbar(MbarrierOp::Init, int_imm(r.slot_full), int_imm(1)));
      inits.push_back(r.mbar(MbarrierOp::Init, int_imm(r.slot_empty), int_imm(NT)));
    }
    // (A paired kernel's thread index is the one in its group: the first group's first.)
    Expr first = binary(BinaryOp::EQ, tid, int_imm(0));
    if (pairs)
      first = logical_and(first, binary(BinaryOp::EQ, Expr(k_.pair_group), int_imm(0)));
    Stmt init = if_then_else(first, seq(inits));

    if (!overlap && !no_overlap.empty())
      k_.remarks.push_back({consumers.back()->loc, "gemm not overlapped with the next iteration: " + no_overlap});
    // Registers and occupancy: the blocks an SM (the most whose shared memory and consumer
    // registers fit), the file divided evenly among their threads at launch, then the
    // producer's given back down to a few and shared among the consumers.
    const Occupancy occ = occupancy(persistent ? 1 : 0, shared_used);
    const int raised = occ.consumer_registers;
    const bool budget = occ.split;
    k_.blocks_per_sm = occ.blocks;

    std::vector<Stmt> producer_side, consumer_side;
    if (budget) {
      producer_side.push_back(std::make_shared<RegisterBudgetNode>(kProducerRegisters, false));
      consumer_side.push_back(std::make_shared<RegisterBudgetNode>(raised, true));
    }
    std::vector<Stmt> out = persistent ? fixed_prelude : prelude;
    out.insert(out.end(), staged_decls.begin(), staged_decls.end());
    out.insert(out.end(), shares_decls.begin(), shares_decls.end());
    out.push_back(init);
    // (In a cluster, the other block's barriers are ready before this block's first copy.)
    out.push_back(std::make_shared<BarrierNode>(true, k_.cluster > 1));
    if (k_.cluster > 1)
      k_.remarks.push_back({loop->loc, "clusters of 2 blocks along the grid's x: where two neighbours copy the same "
                                       "tile of " + shared_names +
                                           ", each loads half of it for both (TMA multicast), and each hands its "
                                           "stages back to both producers"});
    // Ping-pong: warpgroup 0 takes the first turn (warpgroup 1 arrives for it once), and
    // syncs on that arrival at the end, so that each barrier is left as it started.
    if (turns)
      consumer_side.push_back(if_then_else(binary(BinaryOp::EQ, r.warpgroup, int_imm(1)), r.turn(true, int_imm(2))));
    if (pairs) {
      producer_side.push_back(if_then_else(binary(BinaryOp::EQ, tid, int_imm(0)), seq(r.paired_producer())));
      for (const Stmt &x : r.paired_consumers())
        consumer_side.push_back(x);
    } else if (!persistent) {
      producer_side.push_back(
          if_then_else(binary(BinaryOp::EQ, tid, int_imm(NT)), seq(r.producer_tile(nullptr, nullptr))));
      for (const Stmt &x : r.consumer_tile(nullptr, nullptr))
        consumer_side.push_back(x);
    } else {
      // The grid's tiles: each side's loop takes them in turn (Roles::side).
      r.tiles = make_var("tiles", ScalarType::I32);
      out.push_back(declare(r.tiles, mul(mul(cast(ScalarType::I32, k_.grid[0]), cast(ScalarType::I32, k_.grid[1])),
                                         cast(ScalarType::I32, k_.grid[2]))));
      producer_side.push_back(if_then_else(binary(BinaryOp::EQ, tid, int_imm(NT)), r.side(true)));
      consumer_side.push_back(r.side(false));
      k_.persistent = true;
      k_.remarks.push_back(
          {loop->loc, "persistent grid: at most one block an SM, each taking the grid's tiles in turn" +
                          std::string(k_.swizzle_panel > 1 ? " (in panels of " + std::to_string(k_.swizzle_panel) +
                                                                 " rows)"
                                                           : "") +
                          "; the producer loads a block's next tile while its consumers finish the last"});
    }
    // The tiles of the bulk stores stay until the stores have read them.
    if (!r.stores.empty()) {
      std::vector<Stmt> waits;
      for (const BulkStorePlan &p : r.stores)
        waits.push_back(std::make_shared<BulkStoreSyncNode>(BulkStoreSyncOp::Wait, p.tile));
      consumer_side.push_back(r.first_thread(waits));
    }
    if (turns)
      consumer_side.push_back(if_then_else(binary(BinaryOp::EQ, r.warpgroup, int_imm(0)), r.turn(false, int_imm(2))));
    const Expr producer = pairs ? binary(BinaryOp::GE, Expr(k_.pair_group), int_imm(2))
                                : binary(BinaryOp::GE, tid, int_imm(NT));
    out.push_back(if_then_else(producer, seq(producer_side), seq(consumer_side)));
    if (pairs) {
      std::string shared, own;
      for (size_t c = 0; c < copies.size(); ++c)
        (pairs->shared[c] ? shared : own) += ((pairs->shared[c] ? shared : own).empty() ? "'" : ", '") +
                                             copies[c].copy->dst.buffer->name + "'";
      static const char *axes[] = {"x", "y", "z"};
      k_.remarks.push_back({loop->loc, std::string("blocks in pairs along the grid's ") + axes[pairs->dim] +
                                           ": a launched block runs blocks 2i and 2i + 1, a consumer warpgroup each, "
                                           "and its producer loads the tiles of " + shared + " once for both" +
                                           (own.empty() ? "" : " (" + own + " for each)") +
                                           (S > plan->stages ? "; " + std::to_string(S) + " stages instead of " +
                                                                   std::to_string(plan->stages) +
                                                                   ", for the bytes in flight of the blocks alone"
                                                             : "")});
    }
    k_.body = seq(out);
    k_.producer_threads = t_.warpgroup_threads();

    remark_roles(r, occ);
    return true;
  }
};

} // namespace

Kernel warp_specialize(const Kernel &kernel, const Target &target, const WarpSpecializeOptions &options) {
  if (!kernel.fallback_of.empty())
    return kernel;
  // tile::persistent() needs the producer warpgroup: where there is none, the remark says why.
  auto not_persistent = [&](Kernel k, const std::string &why) {
    if (k.persistence == Kernel::Persistence::On)
      k.remarks.push_back({0, "grid not persistent: " + why});
    return k;
  };
  if (kernel.warp_specialize == Kernel::WarpSpecialization::Off)
    return not_persistent(kernel, "tile::warp_specialize(false) (a persistent grid needs the producer warpgroup)");
  if (!target.bulk_tensor_copy || !target.has_warpgroup_mma())
    return not_persistent(kernel, "the target has no bulk tensor copies and warpgroup gemms (sm_90a has)");
  Kernel k = kernel;
  Specializer s(k, target, options);
  if (!s.run()) {
    Kernel unchanged = kernel;
    unchanged.remarks = k.remarks; // why not
    return not_persistent(unchanged, "the kernel is not warp-specialized (a persistent grid needs the producer "
                                     "warpgroup)");
  }
  // Layouts of the buffers the staged ones replaced go with them.
  std::set<const BufferNode *> declared;
  for_each_node(k.body, nullptr, [&](const Stmt &st) {
    if (auto d = st->as<DeclBufferNode>())
      declared.insert(d->buffer.get());
  });
  for (auto it = k.shared_layouts.begin(); it != k.shared_layouts.end();)
    it = declared.count(it->first) ? std::next(it) : k.shared_layouts.erase(it);
  return k;
}

} // namespace tile::transforms
