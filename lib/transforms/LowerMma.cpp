#include "transforms/LowerMma.h"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>

#include "ir/Visitor.h"

namespace tile::transforms {

using namespace ir;

namespace {

Expr i32(std::int64_t v) { return int_imm(v); }
Expr mod(Expr a, std::int64_t c) { return binary(BinaryOp::Mod, std::move(a), i32(c)); }
Expr quot(Expr a, std::int64_t c) { return div(std::move(a), i32(c)); }

/// A tensor-core layout read per warp: its lane digits (thread digits inside a warp) taken
/// as 0, so that indices are the origin of the warp's atoms; slot digits by name.
class WarpView {
public:
  WarpView(const Fragment &f, int warp, const std::string &kernel) : orig_(f), f_(f) {
    for (Digit &g : f_.digits) {
      if (!g.thread)
        continue;
      if (g.stride < warp && g.stride * g.extent > warp)
        throw std::logic_error("lower-mma: kernel '" + kernel + "': a thread digit of " + to_string(f) +
                               " straddles the warp");
      if (g.stride < warp) {
        g.thread = false; // a lane digit: 0 at the warp's origin
        g.name = "lane";
      }
    }
  }
  /// The values of the slot digits named in `v` (the others 0).
  std::vector<Expr> values(const std::map<std::string, Expr> &v) const {
    std::vector<Expr> out(f_.digits.size());
    for (size_t i = 0; i < f_.digits.size(); ++i) {
      if (f_.digits[i].thread)
        continue;
      auto it = v.find(f_.digits[i].name);
      out[i] = it == v.end() ? i32(0) : it->second;
    }
    return out;
  }
  /// Index d of the warp's element with those slot digits and every lane digit 0.
  Expr origin(int d, const Expr &tid, const std::map<std::string, Expr> &v) const { return f_.index(d, tid, values(v)); }
  /// The register slot of the element with those slot digits.
  Expr slot(const std::map<std::string, Expr> &v) const { return orig_.slot(values(v)); }

private:
  const Fragment &orig_;
  Fragment f_; // the lane digits as slot digits
};

/// A first operand in registers laid out as the instruction's A (each warp's rows as the
/// m16n8k16 A atom; mma.sync and wgmma take the same): the slot of the low element of
/// register i (0-3) of k step ks of atom row am, the pairs at (vh, cs) = (0, 2 ks),
/// (1, 2 ks), (0, 2 ks + 1), (1, 2 ks + 1); the high element is the next slot.
Expr a_register(const WarpView &a, const Expr &am, const Expr &ks, const Expr &i) {
  return a.slot({{"rs", am}, {"cs", add(mul(ks, i32(2)), quot(i, 2))}, {"vh", mod(i, 2)}, {"vl", i32(0)}});
}

/// Whether `af` is the instruction's A for an accumulator of `shape` with K columns, in
/// register pairs of adjacent 16-bit slots.
bool is_a_operand(const Fragment &af, const WarpView &a, const MmaShape &shape, std::int64_t K, const Buffer &b) {
  return af.mma->operand == MmaShape::A && af.mma->rows == shape.rows && af.mma->cols == K &&
         af.mma->warps_m == shape.warps_m && bytes(b->dtype) == 2 &&
         is_const_int(sub(a.slot({{"vl", i32(1)}}), a.slot({{"vl", i32(0)}})), 1);
}

class Lowerer : public IRMutator {
public:
  Lowerer(Kernel &k, const Target &t) : k_(k), t_(t) {}

protected:
  /// A wgmma gemm's wait goes after the statements that follow it and may run while it
  /// does: inject-pipeline's copies of later stages (AsyncNode::ahead, which never write
  /// the stage the gemm reads) and their commit. Where those end a loop's body and leave
  /// the stage it read unwritten for one iteration more (AsyncNode::stages), the wait lets
  /// that gemm stay in flight into the next iteration (whose gemm the hardware runs after
  /// it), and a wait for all follows the loop.
  Stmt mutate_Seq(const Stmt &self, const SeqNode *n) override {
    const bool loop_body = n == loop_body_;
    std::vector<Stmt> out;
    bool changed = false;
    for (size_t i = 0; i < n->stmts.size(); ++i) {
      const Stmt &s = n->stmts[i];
      if (!is_warpgroup_gemm(s) || s->as<GemmNode>()->deferred_wait) { // (its waits are placed)
        Stmt m = mutate(s);
        changed |= m != s;
        out.push_back(m);
        continue;
      }
      defer_wait_ = true;
      out.push_back(mutate(s));
      defer_wait_ = false;
      int slack = -1; // iterations the gemm's stage stays unwritten past this one
      while (i + 1 < n->stmts.size() && overlaps_gemm(n->stmts[i + 1])) {
        for_each_node(n->stmts[i + 1], nullptr, [&](const Stmt &x) {
          if (auto a = x->as<AsyncNode>())
            slack = slack < 0 ? a->stages - 1 - a->ahead : std::min(slack, a->stages - 1 - a->ahead);
        });
        out.push_back(mutate(n->stmts[++i]));
      }
      // (Not a gemm whose a is in registers: its next iteration packs them again.)
      const bool lag = loop_body && i + 1 == n->stmts.size() && slack >= 1 && gemm_registers_.size() == 1;
      // A lagging wait leaves this gemm running: its registers are pinned by the wait for
      // all after the loop, not here (pinned here, nvcc would recompute a's registers each
      // iteration while the gemm still reads them).
      out.push_back(std::make_shared<WarpgroupSyncNode>(WarpgroupSyncKind::Wait, lag ? 1 : 0,
                                                        lag ? std::vector<Buffer>{} : gemm_registers_));
      if (lag)
        for (const Buffer &b : gemm_registers_)
          if (std::find(drain_registers_.begin(), drain_registers_.end(), b) == drain_registers_.end())
            drain_registers_.push_back(b);
      changed = true;
    }
    return changed ? seq(out) : self;
  }

  Stmt mutate_For(const Stmt &self, const ForNode *n) override {
    const SeqNode *outer_body = loop_body_;
    std::vector<Buffer> outer_drain = std::move(drain_registers_);
    loop_body_ = n->body->as<SeqNode>();
    drain_registers_.clear();
    Stmt s = IRMutator::mutate_For(self, n);
    if (!drain_registers_.empty()) // a gemm of the last iteration may still run
      s = seq({s, std::make_shared<WarpgroupSyncNode>(WarpgroupSyncKind::Wait, 0, drain_registers_)});
    loop_body_ = outer_body;
    drain_registers_ = std::move(outer_drain);
    return s;
  }

  bool is_warpgroup_gemm(const Stmt &s) const {
    auto g = s->as<GemmNode>();
    return g && k_.warpgroup_gemm(*g);
  }

  static bool overlaps_gemm(const Stmt &s) {
    if (s->as<AsyncCommitNode>())
      return true;
    if (auto a = s->as<AsyncNode>())
      return a->ahead > 0;
    if (auto i = s->as<IfNode>())
      return !i->else_case && overlaps_gemm(i->then_case) && !i->then_case->as<AsyncCommitNode>();
    return false;
  }

  Stmt mutate_Gemm(const Stmt &, const GemmNode *n) override {
    auto fail = [&](const std::string &why) -> Stmt {
      throw std::logic_error("lower-mma: kernel '" + k_.display_name + "': " + why);
    };
    auto ct = k_.layouts.find(n->c.buffer.get());
    if (ct == k_.layouts.end() || !ct->second.mma || ct->second.mma->operand != MmaShape::C ||
        n->c.buffer->scope != Scope::Local)
      return fail("a gemm whose accumulator is not a tensor-core fragment in registers");
    const Fragment &cf = ct->second;
    if (!n->atom)
      return fail("a gemm on tensor cores without its instruction (infer-layout's atom)");
    const MmaAtom &atom = *n->atom;
    switch (atom.read) {
    case OperandRead::LaneLoad:
      return lane_load_gemm(n, cf, atom);
    case OperandRead::Descriptor:
      return warpgroup_gemm(n, cf, atom);
    case OperandRead::MatrixLoad:
      return matrix_load_gemm(n, cf, atom);
    }
    return fail("an unknown kind of matrix instruction");
  }

  /// A gemm on a warp's m16 x n8 instruction (mma.sync) whose operands a warp loads from
  /// shared memory as 8 x 16-byte matrices (ldmatrix): for each k step of the atom's K (32
  /// bytes of a row), A's and B's matrices of the warp's atoms, then one instruction per
  /// accumulator atom; or a from registers, laid out as the instruction's A.
  Stmt matrix_load_gemm(const GemmNode *n, const Fragment &cf, const MmaAtom &atom) {
    auto fail = [&](const std::string &why) -> Stmt {
      throw std::logic_error("lower-mma: kernel '" + k_.display_name + "': " + why);
    };
    if (atom.m != 16 || atom.n != 8 || atom.k_bytes != 32 || t_.warp_size != 32)
      return fail("a matrix-load instruction of other than 16 x 8 x 32 bytes on 32-lane warps");
    const MmaShape &shape = *cf.mma;
    const std::int64_t AM = shape.atoms_m(), AN = shape.atoms_n();
    const int warp = t_.warp_size;
    if (!k_.thread_index)
      k_.thread_index = make_var("tid", ScalarType::I32);
    const Expr tid = k_.thread_index;
    const WarpView c(cf, warp, k_.display_name);

    const Buffer &cb = n->c.buffer;
    const ScalarType ot = n->b.buffer->dtype;
    const std::string instruction = atom.instruction(n->a.buffer->dtype, ot, atom.n);
    auto at = k_.layouts.find(n->a.buffer.get());
    const bool a_in_registers = at != k_.layouts.end() && at->second.mma && n->a.buffer->scope == Scope::Local;
    const std::int64_t K = a_in_registers ? at->second.mma->cols
                                          : n->a.tile_shape()[n->transpose_a ? 0 : 1];
    // K of an instruction, and of one 16-byte row of a loaded matrix, in elements.
    const int KA = atom.k_for(ot), KH = KA / 2;
    if (K % KA != 0)
      return fail("a gemm whose K is not a multiple of the instruction's");
    const std::int64_t KS = K / KA;

    std::vector<Stmt> body;
    // The instruction's lanes: lane l of ldmatrix gives the address of row l % 8 of matrix l / 8.
    const Expr lane = mod(tid, warp), mat = quot(lane, 8), row = mod(lane, 8);
    auto slots_loop = [](const std::string &name, std::int64_t extent, const std::function<Stmt(const Expr &)> &f) {
      Var v = make_var(name, ScalarType::I32);
      return for_loop(v, i32(0), i32(extent), ForKind::Slots, f(v));
    };
    if (n->clear_accum)
      body.push_back(slots_loop("i", cf.slots(), [&](const Expr &i) {
        return store(cb, {i}, float_imm(0.0, ScalarType::F32));
      }));

    // Where a shared operand's tile element (r, c) lives.
    auto shared_at = [&](const Region &r, Expr row_index, Expr col_index) {
      auto sl = k_.shared_layouts.find(r.buffer.get());
      return shared_offset(*r.buffer, sl == k_.shared_layouts.end() ? nullptr : &sl->second,
                           r.index_of({std::move(row_index), std::move(col_index)}));
    };
    // The warp's first row of A atom am and first column of B atom an (the accumulator's
    // layout), and the registers of C atom (am, an) in the instruction's order: (row, col),
    // (row, col + 1), (row + 8, col), (row + 8, col + 1) of the lane's elements.
    auto m0 = [&](const Expr &am) { return c.origin(0, tid, {{"rs", am}}); };
    auto n0 = [&](const Expr &an) { return c.origin(1, tid, {{"cs", an}}); };
    if (AN > 1) {
      auto step = as_const_int(sub(c.origin(1, i32(0), {{"cs", i32(1)}}), c.origin(1, i32(0), {{"cs", i32(0)}})));
      if (!step || *step != 8)
        return fail("the accumulator's atoms along N are not adjacent");
    }
    auto c_regs = [&](const Expr &am, const Expr &an) {
      std::vector<Expr> regs;
      for (int vh = 0; vh < 2; ++vh)
        for (int vl = 0; vl < 2; ++vl)
          regs.push_back(c.slot({{"rs", am}, {"cs", an}, {"vh", i32(vh)}, {"vl", i32(vl)}}));
      return regs;
    };

    // B atoms of k step ks into registers b[base + 2 an + i]: matrices (k 0-7, n), (k 8-15,
    // n) of atom an, then those of an + 1; stored [K, N] they are read transposed.
    const Buffer bregs = make_buffer("b_frag", Scope::Local, ScalarType::U32, {(a_in_registers ? 2 : 1) * AN * 2});
    body.insert(body.begin(), decl_buffer(bregs));
    auto load_b = [&](const Expr &ks, const Expr &base) {
      std::vector<Stmt> loads;
      const Expr k0 = mul(ks, i32(KA));
      if (AN / 2 > 0)
        loads.push_back(slots_loop("an", AN / 2, [&](const Expr &an2) {
          const Expr an = mul(an2, i32(2));
          const Expr kk = add(k0, mul(mod(mat, 2), i32(KH))), nn = add(n0(an), mul(quot(mat, 2), i32(8)));
          const Expr off = n->transpose_b ? shared_at(n->b, add(nn, row), kk) : shared_at(n->b, add(kk, row), nn);
          std::vector<Expr> regs;
          for (int i = 0; i < 4; ++i)
            regs.push_back(add(base, add(mul(an2, i32(4)), i32(i))));
          return Stmt(std::make_shared<MatrixLoadNode>(bregs, regs, n->b.buffer, off, !n->transpose_b));
        }));
      if (AN % 2) { // the last atom alone: lanes 0-15 give the addresses of its two matrices
        const std::int64_t an = AN - 1;
        const Expr kk = add(k0, mul(mod(mat, 2), i32(KH))), nn = n0(i32(an));
        const Expr off = n->transpose_b ? shared_at(n->b, add(nn, row), kk) : shared_at(n->b, add(kk, row), nn);
        loads.push_back(std::make_shared<MatrixLoadNode>(
            bregs, std::vector<Expr>{add(base, i32(an * 2)), add(base, i32(an * 2 + 1))}, n->b.buffer, off,
            !n->transpose_b));
      }
      return seq(loads);
    };
    auto mma = [&](const Buffer &ab, const std::function<std::vector<Expr>(const Expr &)> &a_regs, const Expr &bbase) {
      return slots_loop("am", AM, [&](const Expr &am) {
        return slots_loop("an", AN, [&](const Expr &an) {
          std::vector<Expr> b_regs = {add(bbase, mul(an, i32(2))), add(bbase, add(mul(an, i32(2)), i32(1)))};
          auto m = std::make_shared<MmaNode>(atom.m, atom.n, KA, ot, ab, a_regs(am), bregs, b_regs, cb, c_regs(am, an));
          m->instruction = instruction;
          return Stmt(m);
        });
      });
    };

    if (!a_in_registers) {
      // A atoms of k step ks: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k
      // 8-15), (rows 8-15, k 8-15) of atom am; stored [K, M] they are read transposed.
      const Buffer aregs = make_buffer("a_frag", Scope::Local, ScalarType::U32, {AM * 4});
      body.insert(body.begin(), decl_buffer(aregs));
      body.push_back(slots_loop("ks", KS, [&](const Expr &ks) {
        const Expr k0 = mul(ks, i32(KA));
        // Atom am's four registers, as loaded and as the mma takes them.
        auto a_regs = [](const Expr &am) {
          std::vector<Expr> regs;
          for (int i = 0; i < 4; ++i)
            regs.push_back(add(mul(am, i32(4)), i32(i)));
          return regs;
        };
        Stmt la = slots_loop("am", AM, [&](const Expr &am) {
          const Expr mm = add(m0(am), mul(mod(mat, 2), i32(8))), kk = add(k0, mul(quot(mat, 2), i32(KH)));
          const Expr off = n->transpose_a ? shared_at(n->a, add(kk, row), mm) : shared_at(n->a, add(mm, row), kk);
          return Stmt(std::make_shared<MatrixLoadNode>(aregs, a_regs(am), n->a.buffer, off, n->transpose_a));
        });
        return seq({la, load_b(ks, i32(0)), mma(aregs, a_regs, i32(0))});
      }));
    } else {
      // A in registers, laid out as the instruction's A (a_register).
      const Fragment &af = at->second;
      const WarpView a(af, warp, k_.display_name);
      if (!is_a_operand(af, a, shape, K, n->a.buffer))
        return fail("a first operand in registers whose layout is not the instruction's A of this gemm");
      auto a_regs = [&](const Expr &ks, const Expr &am) {
        std::vector<Expr> regs;
        for (int i = 0; i < 4; ++i)
          regs.push_back(a_register(a, am, ks, i32(i)));
        return regs;
      };
      // The B atoms of the next k step are loaded before this step's mma.
      body.push_back(load_b(i32(0), i32(0)));
      body.push_back(slots_loop("ks", KS, [&](const Expr &ks) {
        const Expr next = add(ks, i32(1));
        Stmt prefetch = if_then_else(lt(next, i32(KS)), load_b(next, mul(mod(next, 2), i32(AN * 2))));
        return seq({prefetch, mma(n->a.buffer, [&](const Expr &am) { return a_regs(ks, am); },
                                  mul(mod(ks, 2), i32(AN * 2)))});
      }));
    }
    // One block (its registers' scope): a Slots loop of one trip.
    Stmt s = for_loop(make_var("g", ScalarType::I32), i32(0), i32(1), ForKind::Slots, seq(body));
    s->loc = n->loc;
    return s;
  }

  /// A gemm on a 64-lane 16x16x16 matrix-core instruction (MFMA, the target's atom: lane l
  /// holds of the accumulator atom the elements (4 (l / 16) + i, l % 16)): for each k step
  /// of 16, each lane loads its four elements of every A atom of its wavefront's rows, (l %
  /// 16, 4 (l / 16) + j), and of every B atom of its columns, (4 (l / 16) + j, l % 16), from
  /// shared memory into registers (8 bytes at once where K is the operand's contiguous
  /// dimension), then issues one instruction per accumulator atom. The operands are always
  /// in shared memory (infer-layout sends a fragment a there: the instruction's A is the
  /// accumulator's transpose).
  Stmt lane_load_gemm(const GemmNode *n, const Fragment &cf, const MmaAtom &atom) {
    auto fail = [&](const std::string &why) -> Stmt {
      throw std::logic_error("lower-mma: kernel '" + k_.display_name + "': " + why);
    };
    const MmaShape &shape = *cf.mma;
    if (k_.layouts.count(n->a.buffer.get()) || n->a.buffer->scope == Scope::Local)
      return fail("a matrix-core gemm whose first operand is in registers");
    const std::int64_t AM = shape.atoms_m(), AN = shape.atoms_n();
    const int warp = t_.warp_size;
    if (!k_.thread_index)
      k_.thread_index = make_var("tid", ScalarType::I32);
    const Expr tid = k_.thread_index;
    const WarpView c(cf, warp, k_.display_name);
    const Buffer &cb = n->c.buffer;
    const ScalarType ot = n->b.buffer->dtype;
    const std::int64_t K = n->a.tile_shape()[n->transpose_a ? 0 : 1];
    if (atom.m != 16 || atom.n != 16 || atom.k_for(ot) != 16 || warp != 64 || bytes(ot) != 2)
      return fail("a lane-load instruction of other than 16 x 16 x 16 of 16-bit operands on 64-lane wavefronts");
    if (K % 16 != 0)
      return fail("a gemm whose K is not a multiple of the instruction's");
    const std::string instruction = atom.instruction(n->a.buffer->dtype, ot, atom.n);
    const Expr lane = mod(tid, warp), row = mod(lane, 16), quad = quot(lane, 16);
    auto slots_loop = [](const std::string &name, std::int64_t extent, const std::function<Stmt(const Expr &)> &f) {
      Var v = make_var(name, ScalarType::I32);
      return for_loop(v, i32(0), i32(extent), ForKind::Slots, f(v));
    };
    std::vector<Stmt> body;
    if (n->clear_accum)
      body.push_back(slots_loop("i", cf.slots(), [&](const Expr &i) {
        return store(cb, {i}, float_imm(0.0, ScalarType::F32));
      }));
    const Buffer aregs = make_buffer("a_frag", Scope::Local, ot, {AM * 4});
    const Buffer bregs = make_buffer("b_frag", Scope::Local, ot, {AN * 4});
    body.insert(body.begin(), {decl_buffer(aregs), decl_buffer(bregs)});

    // The lane's four elements (mn, k0 + j) of operand r, whose element (mn, k) is at index
    // (mn, k) of its tile, or (k, mn) with `k_rows` (K its rows), into dst[base + j].
    auto load4 = [&](const Region &r, bool k_rows, const Expr &mn, const Expr &k0, const Buffer &dst, const Expr &base) {
      auto sl = k_.shared_layouts.find(r.buffer.get());
      const SharedLayout *layout = sl == k_.shared_layouts.end() ? nullptr : &sl->second;
      auto at = [&](const Expr &k) {
        return shared_offset(*r.buffer, layout, r.index_of(k_rows ? std::vector<Expr>{k, mn} : std::vector<Expr>{mn, k}));
      };
      // Four consecutive elements of K in one access: K is the tile's last dimension, whose
      // rows (and slabs, and 16-byte swizzle chunks) start at multiples of four elements.
      const std::int64_t pitch = layout ? layout->pitch : r.buffer->extent(r.buffer->rank() - 1);
      const auto begin = as_const_int(r.begin.back());
      const bool together = !k_rows && bytes(ot) == 2 && pitch % 4 == 0 && (!layout || layout->slab % 4 == 0) &&
                            begin && *begin % 4 == 0;
      if (together)
        return Stmt(std::make_shared<VectorMoveNode>(dst, base, r.buffer, at(k0), 8, 8, false));
      std::vector<Stmt> moves;
      for (int j = 0; j < 4; ++j)
        moves.push_back(std::make_shared<VectorMoveNode>(dst, add(base, i32(j)), r.buffer, at(add(k0, i32(j))), 2, 2,
                                                         false));
      return seq(moves);
    };
    auto c_regs = [&](const Expr &am, const Expr &an) {
      std::vector<Expr> regs;
      for (int i = 0; i < 4; ++i)
        regs.push_back(c.slot({{"rs", am}, {"cs", an}, {"vi", i32(i)}}));
      return regs;
    };
    body.push_back(slots_loop("ks", K / 16, [&](const Expr &ks) {
      const Expr k0 = add(mul(ks, i32(16)), mul(quad, i32(4)));
      Stmt la = slots_loop("am", AM, [&](const Expr &am) {
        return load4(n->a, n->transpose_a, add(c.origin(0, tid, {{"rs", am}}), row), k0, aregs, mul(am, i32(4)));
      });
      Stmt lb = slots_loop("an", AN, [&](const Expr &an) {
        return load4(n->b, !n->transpose_b, add(c.origin(1, tid, {{"cs", an}}), row), k0, bregs, mul(an, i32(4)));
      });
      Stmt mma = slots_loop("am", AM, [&](const Expr &am) {
        return slots_loop("an", AN, [&](const Expr &an) {
          const Expr a0 = mul(am, i32(4)), b0 = mul(an, i32(4));
          auto m = std::make_shared<MmaNode>(16, 16, 16, ot, aregs, std::vector<Expr>{a0, add(a0, i32(2))}, bregs,
                                             std::vector<Expr>{b0, add(b0, i32(2))}, cb, c_regs(am, an));
          m->instruction = instruction;
          return Stmt(m);
        });
      });
      return seq({la, lb, mma});
    }));
    Stmt s = for_loop(make_var("g", ScalarType::I32), i32(0), i32(1), ForKind::Slots, seq(body));
    s->loc = n->loc;
    return s;
  }

  /// A gemm on wgmma (infer-layout chose it and laid the operands out for it): for each k
  /// step of the instruction's K (32 bytes of a row), one instruction for each of the
  /// warpgroup's atoms along M (its m64 tiles), of N the warpgroup's columns, between a
  /// fence and a commit and wait.
  Stmt warpgroup_gemm(const GemmNode *n, const Fragment &cf, const MmaAtom &w) {
    const MmaShape &shape = *cf.mma;
    if (shape.group_warps != w.warps || shape.warps_m % w.warps != 0 ||
        shape.rows % (std::int64_t(w.m) * (shape.warps_m / w.warps)) != 0 || shape.cols % shape.warps_n != 0)
      throw std::logic_error("lower-mma: kernel '" + k_.display_name + "': a wgmma gemm on a grid it cannot take");
    const int group = w.threads(t_.warp_size);
    if (!k_.thread_index)
      k_.thread_index = make_var("tid", ScalarType::I32);
    const Expr tid = k_.thread_index;
    const WarpView c(cf, t_.warp_size, k_.display_name);
    // Columns of the warpgroup's instruction, its atoms along M.
    const std::int64_t N = shape.cols / shape.warps_n, AM = shape.atoms_m();
    const std::int64_t K = n->transpose_b ? n->b.tile_shape()[1] : n->b.tile_shape()[0];
    // K of one instruction: 32 bytes of each operand's row (16 bf16, 32 fp8).
    const int kstep = w.k_for(n->b.buffer->dtype);
    if (K % kstep != 0)
      throw std::logic_error("lower-mma: kernel '" + k_.display_name + "': a wgmma gemm whose K is not a multiple of " +
                             std::to_string(kstep));
    // The thread's registers of atom row am in the instruction's order: column atom j's four.
    auto regs = [&](const Expr &am) {
      std::vector<Expr> out;
      for (std::int64_t j = 0; j < N / 8; ++j)
        for (int vh = 0; vh < 2; ++vh)
          for (int vl = 0; vl < 2; ++vl)
            out.push_back(c.slot({{"rs", am}, {"cs", i32(j)}, {"vh", i32(vh)}, {"vl", i32(vl)}}));
      return out;
    };
    auto operand = [&](const Region &r, Expr row, Expr col, bool mn_major) {
      auto sl = k_.shared_layouts.find(r.buffer.get());
      const int swizzle = sl == k_.shared_layouts.end() ? 0 : sl->second.swizzle_bytes;
      if (!w.swizzle_code(swizzle))
        throw std::logic_error("lower-mma: kernel '" + k_.display_name + "': wgmma operand '" + r.buffer->name +
                               "' is not in a swizzle of the instruction's");
      DescriptorOperand d;
      d.buffer = r.buffer;
      d.offset = shared_offset(*r.buffer, &sl->second, r.index_of({std::move(row), std::move(col)}));
      d.swizzle_bytes = swizzle;
      d.swizzle_code = w.swizzle_code(swizzle);
      d.mn_major = mn_major;
      // Rows of swizzle_bytes, 8-row groups 8 rows apart; MN-major slabs (rows of K) a slab
      // apart along M or N; a K-major LBO is not read (16: the field's 1) (targets/cuda/
      // HOPPER-NOTES.md, section 2).
      d.sbo = 8 * swizzle;
      d.lbo = mn_major ? r.tile_shape()[0] * swizzle : 16;
      return d;
    };
    // The warpgroup's first row of atom row am, and its first column: the accumulator's
    // layout at the group's first thread.
    const Expr first = mul(quot(tid, group), i32(group));
    auto m0 = [&](const Expr &am) { return c.origin(0, first, {{"rs", am}}); };
    const Expr n0 = c.origin(1, first, {});
    std::vector<Stmt> body;
    body.push_back(std::make_shared<WarpgroupSyncNode>(WarpgroupSyncKind::Fence, 0));
    Var ks = make_var("ks", ScalarType::I32), am = make_var("am", ScalarType::I32);
    const Expr k0 = mul(ks, i32(kstep));
    DescriptorOperand b = n->transpose_b ? operand(n->b, n0, k0, false) : operand(n->b, k0, n0, true);
    Expr accumulate = n->clear_accum ? binary(BinaryOp::NE, ks, i32(0)) : Expr(bool_imm(true));
    const std::string spelled = w.instruction(n->a.buffer->dtype, n->b.buffer->dtype, int(N));
    // The instruction of atom row `row`: a from registers or through a descriptor.
    std::function<Stmt(const Expr &)> instruction_of;
    auto at = k_.layouts.find(n->a.buffer.get());
    if (at != k_.layouts.end() && at->second.mma && n->a.buffer->scope == Scope::Local) {
      // a in registers, laid out as the instruction's A (a_register: a warp's 16 rows of
      // each atom row).
      const Fragment &af = at->second;
      const WarpView a(af, t_.warp_size, k_.display_name);
      if (!is_a_operand(af, a, shape, K, n->a.buffer) || af.mma->atoms_m() != AM)
        throw std::logic_error("lower-mma: kernel '" + k_.display_name +
                               "': a first operand in registers whose layout is not wgmma's A of this gemm");
      // Packed into 32-bit registers before the fence: written inside the fence's window,
      // they would make ptxas fence each instruction again (C7519).
      // They are declared at the top of the kernel and pinned after the wait for the gemm
      // (with its accumulator): the instructions read them after they issue, so nvcc must not
      // give their registers to anything else before that wait (statements between the
      // issue and a deferred wait reused them: a wrong result, bench/NOTES.md session 39).
      const std::int64_t KS = K / kstep;
      const Buffer packed = make_buffer("a_packed", Scope::Local, ScalarType::U32, {AM * KS * 4});
      top_decls_.push_back(decl_buffer(packed));
      packed_of_[n->c.buffer.get()] = packed;
      a_packed_ = packed;
      auto packed_at = [KS](const Expr &m, const Expr &k, const Expr &i) {
        return add(mul(add(mul(m, i32(KS)), k), i32(4)), i);
      };
      Var kp = make_var("kp", ScalarType::I32), r = make_var("r", ScalarType::I32);
      auto pack = [&](const Expr &m) {
        const Expr low = a_register(a, m, kp, r);
        const Expr pair = std::make_shared<CallNode>(
            ScalarType::U32, Intrinsic::Pack2,
            std::vector<Expr>{load(n->a.buffer, {low}), load(n->a.buffer, {add(low, i32(1))})});
        return for_loop(kp, i32(0), i32(KS), ForKind::Slots,
                        for_loop(r, i32(0), i32(4), ForKind::Slots, store(packed, {packed_at(m, kp, r)}, pair)));
      };
      Var pm = make_var("pm", ScalarType::I32);
      body.insert(body.begin(), AM > 1 ? for_loop(pm, i32(0), i32(AM), ForKind::Slots, pack(pm)) : pack(i32(0)));
      instruction_of = [&, packed, packed_at](const Expr &row) -> Stmt {
        std::vector<Expr> a_regs;
        for (int i = 0; i < 4; ++i)
          a_regs.push_back(packed_at(row, ks, i32(i)));
        auto node = std::make_shared<WgmmaNode>(int(N), n->b.buffer->dtype, DescriptorOperand{}, b, n->c.buffer,
                                                regs(row), cast(ScalarType::I32, accumulate), packed, a_regs);
        node->k = kstep;
        node->instruction = spelled;
        return node;
      };
    } else {
      instruction_of = [&](const Expr &row) -> Stmt {
        DescriptorOperand a = n->transpose_a ? operand(n->a, k0, m0(row), true) : operand(n->a, m0(row), k0, false);
        auto node = std::make_shared<WgmmaNode>(int(N), n->b.buffer->dtype, a, b, n->c.buffer, regs(row),
                                                cast(ScalarType::I32, accumulate));
        node->k = kstep;
        node->instruction = spelled;
        return node;
      };
    }
    const Stmt instruction =
        AM > 1 ? for_loop(am, i32(0), i32(AM), ForKind::Slots, instruction_of(am)) : instruction_of(i32(0));
    body.push_back(for_loop(ks, i32(0), i32(K / kstep), ForKind::Slots, instruction));
    body.push_back(std::make_shared<WarpgroupSyncNode>(WarpgroupSyncKind::Commit, 0));
    // The accumulator, and a's packed registers.
    gemm_registers_ = {n->c.buffer};
    if (a_packed_)
      gemm_registers_.push_back(a_packed_);
    a_packed_ = nullptr;
    if (!defer_wait_ && !n->deferred_wait) // else mutate_Seq or warp-specialize placed it
      body.push_back(std::make_shared<WarpgroupSyncNode>(WarpgroupSyncKind::Wait, 0, gemm_registers_));
    uses_warpgroup = true;
    Stmt s = for_loop(make_var("g", ScalarType::I32), i32(0), i32(1), ForKind::Slots, seq(body));
    s->loc = n->loc;
    return s;
  }

  // A wait that warp-specialize placed pins the packed registers of the gemms it waits for.
  Stmt mutate_WarpgroupSync(const Stmt &self, const WarpgroupSyncNode *n) override {
    if (n->sync_kind != WarpgroupSyncKind::Wait)
      return self;
    std::vector<Buffer> regs = n->registers;
    for (const Buffer &b : n->registers)
      if (auto p = packed_of_.find(b.get());
          p != packed_of_.end() && std::find(regs.begin(), regs.end(), p->second) == regs.end())
        regs.push_back(p->second);
    if (regs.size() == n->registers.size())
      return self;
    auto w = std::make_shared<WarpgroupSyncNode>(n->sync_kind, n->pending, regs);
    w->loc = n->loc;
    return w;
  }

public:
  bool uses_warpgroup = false; // a gemm became wgmma: barriers need proxy fences
  std::vector<Stmt> top_decls_; // the packed registers of gemms' a

private:
  bool defer_wait_ = false;             // lowering a wgmma gemm whose wait mutate_Seq places
  Buffer a_packed_;                     // a's packed registers of the gemm being lowered
  /// The packed registers of the last wgmma gemm lowered into each accumulator (warp-
  /// specialize's waits name the accumulator), and their declarations.
  std::map<const BufferNode *, Buffer> packed_of_;
  std::vector<Buffer> gemm_registers_;  // the registers of the wgmma gemm lowered last
  const SeqNode *loop_body_ = nullptr;  // the body of the innermost loop being lowered
  std::vector<Buffer> drain_registers_; // of that loop's gemms that may outlive their iteration
  Kernel &k_;
  const Target &t_;
};

/// Shared memory that ordinary stores write and wgmma reads next: each thread fences its
/// writes for the asynchronous proxy before every barrier.
class FenceBarriers : public IRMutator {
  Stmt mutate_Barrier(const Stmt &self, const BarrierNode *) override {
    return seq({std::make_shared<ProxyFenceNode>(), self});
  }
  // (A barrier that an earlier pass fenced already, warp-specialize's before a bulk store,
  // keeps its one fence.)
  Stmt mutate_Seq(const Stmt &self, const SeqNode *n) override {
    std::vector<Stmt> out;
    bool changed = false;
    for (size_t i = 0; i < n->stmts.size(); ++i) {
      const Stmt &s = n->stmts[i];
      const bool fenced = i > 0 && n->stmts[i - 1]->as<ProxyFenceNode>() && s->as<BarrierNode>();
      out.push_back(fenced ? s : mutate(s));
      changed |= out.back() != s;
    }
    return changed ? seq(std::move(out)) : self;
  }
};

} // namespace

Kernel lower_mma(const Kernel &kernel, const Target &target) {
  Kernel k = kernel;
  Lowerer l(k, target);
  k.body = l.mutate(kernel.body);
  if (!l.top_decls_.empty()) {
    std::vector<Stmt> body = l.top_decls_;
    body.push_back(k.body);
    k.body = seq(body);
  }
  if (l.uses_warpgroup)
    k.body = FenceBarriers().mutate(k.body);
  return k;
}

} // namespace tile::transforms
