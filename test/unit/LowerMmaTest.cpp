// lower-mma (lib/transforms/LowerMma.h) against the instructions' definitions: the IR the
// pass makes of a tensor-core gemm is run on an emulated warp whose ldmatrix and
// mma.sync m16n8k16 follow the PTX ISA's fragment tables (written here, independently of
// the pass), on shared tiles filled through their shared layouts (padding, swizzles,
// pipeline stages) with every other element NaN. Every register of the accumulator must
// then hold, at the element its layout (ir/Fragment.h) says, the exact product of small
// integers plus the accumulator's previous value (or none with clear_accum).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <utility>

#include "analysis/MmaPlan.h"
#include "ir/Fragment.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "ir/Target.h"
#include "ir/Visitor.h"
#include "transforms/LowerMma.h"
#include "Folded.h"

namespace tile::ir {
namespace {

using Matrix = std::vector<std::vector<double>>;

Matrix random_matrix(std::int64_t rows, std::int64_t cols, std::mt19937 &rng) {
  std::uniform_int_distribution<int> d(-3, 3);
  Matrix m(rows, std::vector<double>(cols));
  for (auto &r : m)
    for (auto &x : r)
      x = d(rng);
  return m;
}

/// The (thread, slot) -> element map of a fragment, by the layout's own formula.
std::map<std::pair<int, std::int64_t>, std::vector<std::int64_t>> places(const Fragment &f) {
  std::map<std::pair<int, std::int64_t>, std::vector<std::int64_t>> m;
  for_each_place(f, [&](int t, std::int64_t slot, const std::vector<std::int64_t> &idx) { m[{t, slot}] = idx; });
  return m;
}

/// One warp (or a 64-lane wavefront) running lowered IR in lockstep. A 32-bit register is a
/// pair of 16-bit values (low, high) or, in an f32 buffer, one value (low).
class Warp {
public:
  using Reg = std::pair<double, double>;
  Warp(int warp_index, int lanes = 32) : warp_(warp_index), lanes_(lanes) {}
  std::map<const BufferNode *, std::vector<double>> shared;         // by storage offset
  std::map<const BufferNode *, std::vector<std::vector<Reg>>> local; // per lane
  Var tid;

  void run(const Stmt &s) {
    if (!s)
      return;
    if (auto n = s->as<SeqNode>()) {
      for (auto &x : n->stmts)
        run(x);
    } else if (auto n = s->as<DeclBufferNode>()) {
      if (!local.count(n->buffer.get()))
        local[n->buffer.get()].assign(lanes_, std::vector<Reg>(n->buffer->num_elements(), {NAN, NAN}));
    } else if (auto n = s->as<ForNode>()) {
      ASSERT_EQ(n->for_kind, ForKind::Slots);
      const std::int64_t b = folded(n->begin), e = folded(n->extent);
      for (std::int64_t i = b; i < b + e; ++i) {
        env_[n->var.get()] = i;
        run(n->body);
      }
      env_.erase(n->var.get());
    } else if (auto n = s->as<IfNode>()) {
      const std::int64_t c = eval(n->cond, 0);
      for (int l = 1; l < lanes_; ++l)
        ASSERT_EQ(eval(n->cond, l), c) << "a divergent condition";
      run(c ? n->then_case : n->else_case);
    } else if (auto n = s->as<StoreNode>()) {
      auto f = n->value->as<FloatImmNode>();
      ASSERT_TRUE(f && n->buffer->scope == Scope::Local);
      for (int l = 0; l < lanes_; ++l)
        at(n->buffer.get(), l, eval(n->indices[0], l)).first = f->value;
    } else if (auto n = s->as<VectorMoveNode>()) {
      vector_move(n);
    } else if (auto n = s->as<MatrixLoadNode>()) {
      matrix_load(n);
    } else if (auto n = s->as<MmaNode>()) {
      mma(n);
    } else {
      FAIL() << "unexpected statement: " << to_string(s);
    }
  }

  Reg &at(const BufferNode *b, int lane, std::int64_t i) {
    auto &v = local.at(b)[lane];
    EXPECT_TRUE(i >= 0 && i < std::int64_t(v.size())) << b->name << "[" << i << "]";
    static Reg dummy;
    return i >= 0 && i < std::int64_t(v.size()) ? v[i] : dummy;
  }

  std::int64_t eval(const Expr &e, int lane) {
    Substituter s;
    s.vars[tid.get()] = int_imm(warp_ * lanes_ + lane);
    for (auto &[v, x] : env_)
      s.vars[v] = int_imm(x);
    return folded(s.mutate(e));
  }

private:
  int warp_, lanes_;
  std::map<const VarNode *, std::int64_t> env_;

  /// A vector move from shared memory into a lane's registers: its elements one by one, the
  /// addresses multiples of the chunk.
  void vector_move(const VectorMoveNode *n) {
    ASSERT_TRUE(n->src->scope == Scope::Shared && n->dst->scope == Scope::Local && !n->async);
    const int elements = n->bytes / bytes(n->src->dtype), chunk = n->chunk / bytes(n->src->dtype);
    auto &mem = shared.at(n->src.get());
    for (int l = 0; l < lanes_; ++l) {
      const std::int64_t from = eval(n->src_offset, l), to = eval(n->dst_offset, l);
      ASSERT_TRUE(from >= 0 && from + elements <= std::int64_t(mem.size())) << "lane " << l << " reads at " << from;
      ASSERT_EQ(from % chunk, 0) << "lane " << l << ": a misaligned read at " << from;
      ASSERT_EQ(to % chunk, 0) << "lane " << l << ": a misaligned write at " << to;
      for (int e = 0; e < elements; ++e)
        at(n->dst.get(), l, to + e).first = mem[from + e];
    }
  }

  /// v_mfma_f32_16x16x16 (AMD's CDNA3 ISA, the dense matrix layouts): lane l holds A's
  /// (l % 16, 4 (l / 16) + j) and B's (4 (l / 16) + j, l % 16) for j = 0..3, two to a
  /// register; and C's (4 (l / 16) + i, l % 16) in register i.
  void mfma(const MmaNode *n) {
    ASSERT_EQ(lanes_, 64);
    ASSERT_EQ(n->a_regs.size(), 2u);
    ASSERT_EQ(n->b_regs.size(), 2u);
    ASSERT_EQ(n->c_regs.size(), 4u);
    double A[16][16], B[16][16], C[16][16];
    for (int l = 0; l < 64; ++l) {
      const int q = l / 16, r = l % 16;
      for (int i = 0; i < 2; ++i) {
        Reg a = operand(n->a, n->a_regs[i], l), b = operand(n->b, n->b_regs[i], l);
        A[r][4 * q + 2 * i] = a.first;
        A[r][4 * q + 2 * i + 1] = a.second;
        B[4 * q + 2 * i][r] = b.first;
        B[4 * q + 2 * i + 1][r] = b.second;
      }
      for (int i = 0; i < 4; ++i)
        C[4 * q + i][r] = at(n->c.get(), l, eval(n->c_regs[i], l)).first;
    }
    for (int l = 0; l < 64; ++l)
      for (int i = 0; i < 4; ++i) {
        const int row = 4 * (l / 16) + i, col = l % 16;
        double sum = C[row][col];
        for (int k = 0; k < 16; ++k)
          sum += A[row][k] * B[k][col];
        at(n->c.get(), l, eval(n->c_regs[i], l)).first = sum;
      }
  }

  /// ldmatrix (PTX ISA): lane l gives the address of row l % 8 of matrix l / 8 and receives
  /// of matrix i the elements (l / 4, 2 (l % 4) + {0, 1}), transposed (2 (l % 4) + {0, 1}, l / 4).
  void matrix_load(const MatrixLoadNode *n) {
    const int count = int(n->dst_regs.size());
    auto &mem = shared.at(n->src.get());
    std::vector<std::array<std::array<double, 8>, 8>> m(count);
    for (int l = 0; l < 8 * count; ++l) {
      const std::int64_t off = eval(n->src_offset, l);
      ASSERT_TRUE(off >= 0 && off + 8 <= std::int64_t(mem.size())) << "lane " << l << " reads at " << off;
      for (int c = 0; c < 8; ++c)
        m[l / 8][l % 8][c] = mem[off + c];
    }
    for (int l = 0; l < 32; ++l)
      for (int i = 0; i < count; ++i) {
        const int r = l / 4, c = 2 * (l % 4);
        at(n->dst.get(), l, eval(n->dst_regs[i], l)) =
            n->transpose ? Reg{m[i][c][r], m[i][c + 1][r]} : Reg{m[i][r][c], m[i][r][c + 1]};
      }
  }

  Reg operand(const Buffer &b, const Expr &r, int lane) {
    const std::int64_t i = eval(r, lane);
    if (b->dtype == ScalarType::U32)
      return at(b.get(), lane, i);
    return {at(b.get(), lane, i).first, at(b.get(), lane, i + 1).first};
  }

  /// mma.sync.m16n8k16.row.col (PTX ISA): with g = l / 4 and t = l % 4, A's registers hold
  /// (g, 2t), (g + 8, 2t), (g, 2t + 8), (g + 8, 2t + 8) and the next columns; B's (k = 2t,
  /// n = g), (2t + 8, g) and the next rows; C's (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1).
  void mma(const MmaNode *n) {
    if (n->n == 16)
      return mfma(n);
    ASSERT_EQ(n->m * 1000 + n->n * 100 + n->k, 16816);
    ASSERT_EQ(n->a_regs.size(), 4u);
    ASSERT_EQ(n->b_regs.size(), 2u);
    ASSERT_EQ(n->c_regs.size(), 4u);
    double A[16][16], B[16][8], C[16][8];
    for (int l = 0; l < 32; ++l) {
      const int g = l / 4, t = l % 4;
      for (int i = 0; i < 4; ++i) {
        Reg a = operand(n->a, n->a_regs[i], l);
        const int r = g + (i % 2) * 8, c = 2 * t + (i / 2) * 8;
        A[r][c] = a.first;
        A[r][c + 1] = a.second;
      }
      for (int i = 0; i < 2; ++i) {
        Reg b = operand(n->b, n->b_regs[i], l);
        B[2 * t + i * 8][g] = b.first;
        B[2 * t + i * 8 + 1][g] = b.second;
      }
      for (int i = 0; i < 4; ++i)
        C[g + (i / 2) * 8][2 * t + i % 2] = at(n->c.get(), l, eval(n->c_regs[i], l)).first;
    }
    for (int l = 0; l < 32; ++l) {
      const int g = l / 4, t = l % 4;
      for (int i = 0; i < 4; ++i) {
        const int r = g + (i / 2) * 8, c = 2 * t + i % 2;
        double sum = C[r][c];
        for (int k = 0; k < 16; ++k)
          sum += A[r][k] * B[k][c];
        at(n->c.get(), l, eval(n->c_regs[i], l)).first = sum;
      }
    }
  }
};

using Memory = std::map<const BufferNode *, std::vector<double>>;

/// A bf16 shared operand of `k` holding value(i, j) at tile element (i, j), laid out by `l`
/// (pitch 0: dense) and filled into `mem` (NaN elsewhere); with several `stages`, the tile
/// is the last stage of a multi-buffered one. Returns the gemm's region of it.
Region shared_operand(Kernel &k, Memory &mem, const std::string &name, std::int64_t rows, std::int64_t cols,
                      const SharedLayout &l, int stages, const std::function<double(std::int64_t, std::int64_t)> &value,
                      ScalarType type = ScalarType::BF16) {
  std::vector<std::int64_t> shape = {rows, cols};
  if (stages > 1)
    shape.insert(shape.begin(), stages);
  Buffer b = make_buffer(name, Scope::Shared, type, shape);
  if (l.pitch)
    k.shared_layouts[b.get()] = l;
  Region r;
  r.buffer = b;
  r.extent = shape;
  r.begin.assign(shape.size(), int_imm(0));
  r.tile_dims = {0, 1};
  if (stages > 1) {
    r.begin[0] = int_imm(stages - 1);
    r.extent[0] = 1;
    r.tile_dims = {1, 2};
  }
  const SharedLayout *sl = l.pitch ? &l : nullptr;
  auto &v = mem[b.get()];
  v.assign(shared_storage_elements(*b, sl), NAN);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      std::vector<std::int64_t> idx = {i, j};
      if (stages > 1)
        idx.insert(idx.begin(), stages - 1);
      v[shared_offset(*b, sl, idx)] = value(i, j);
    }
  return r;
}

struct Case {
  std::int64_t M, N, K;
  int warps_m, warps_n;
  bool ta = false, tb = false, clear = false;
  SharedLayout la{}, lb{}; // pitch 0: dense
  int stages = 1;          // > 1: the operands are stage 1 of multi-buffered tiles
  bool a_in_registers = false;
  std::string arch = "sm_90a"; // gfx90a: MFMA on 64-lane wavefronts
};

void check(const Case &cs) {
  std::string problem;
  const Target target = *gpu_target(cs.arch.rfind("gfx", 0) == 0 ? "hip" : "cuda", cs.arch, problem);
  const int lanes = target.warp_size;
  std::mt19937 rng(unsigned(cs.M * 131 + cs.N * 17 + cs.K + cs.ta * 2 + cs.tb));
  const int threads = lanes * cs.warps_m * cs.warps_n;
  Kernel k;
  k.display_name = "gemm_test";
  k.threads = threads;
  k.thread_index = make_var("tid", ScalarType::I32);

  const Matrix A = random_matrix(cs.M, cs.K, rng), B = random_matrix(cs.K, cs.N, rng);
  const Matrix C0 = random_matrix(cs.M, cs.N, rng);
  std::map<const BufferNode *, std::vector<double>> mem;
  const MmaAtomRef atom = target.mma_atoms.back()->warps == 1 && target.kind == "hip"
                              ? target.mma_atoms.back()
                              : target.mma_atom("mma.sync", ScalarType::BF16, ScalarType::BF16);
  ASSERT_TRUE(atom);
  Fragment cf = mma_fragment(MmaShape{MmaShape::C, cs.M, cs.N, cs.warps_m, cs.warps_n}, threads, atom->accumulator);
  Buffer c = make_buffer("acc", Scope::Local, ScalarType::F32, {cf.slots()});
  k.layouts[c.get()] = cf;
  Region ra, rb = cs.tb ? shared_operand(k, mem, "Bs", cs.N, cs.K, cs.lb, cs.stages, [&](auto i, auto j) { return B[j][i]; })
                        : shared_operand(k, mem, "Bs", cs.K, cs.N, cs.lb, cs.stages, [&](auto i, auto j) { return B[i][j]; });
  Buffer p;
  Fragment pf;
  if (cs.a_in_registers) {
    pf = mma_fragment(MmaShape{MmaShape::A, cs.M, cs.K, cs.warps_m, cs.warps_n}, threads, atom->accumulator);
    p = make_buffer("p", Scope::Local, ScalarType::BF16, {pf.slots()});
    k.layouts[p.get()] = pf;
    ra = full_region(p);
  } else {
    ra = cs.ta ? shared_operand(k, mem, "As", cs.K, cs.M, cs.la, cs.stages, [&](auto i, auto j) { return A[j][i]; })
               : shared_operand(k, mem, "As", cs.M, cs.K, cs.la, cs.stages, [&](auto i, auto j) { return A[i][j]; });
  }
  auto gemm = std::make_shared<GemmNode>(ra, rb, full_region(c), cs.ta, cs.tb, cs.clear, WarpPolicy::Square);
  gemm->atom = atom;
  k.body = gemm;
  Kernel lowered = transforms::lower_mma(k, target);
  SCOPED_TRACE(to_string(lowered.body));
  bool gemm_left = false;
  for_each_node(lowered.body, nullptr, [&](const Stmt &s) { gemm_left |= s->kind == StmtKind::Gemm; });
  EXPECT_FALSE(gemm_left);

  const auto c_places = places(cf);
  for (int w = 0; w < threads / lanes; ++w) {
    Warp warp(w, lanes);
    warp.tid = lowered.thread_index;
    warp.shared = mem;
    warp.local[c.get()].assign(lanes, std::vector<Warp::Reg>(cf.slots(), {NAN, NAN}));
    if (p) {
      const auto p_places = places(pf);
      warp.local[p.get()].assign(lanes, std::vector<Warp::Reg>(pf.slots(), {NAN, NAN}));
      for (auto &[where, idx] : p_places)
        if (where.first / lanes == w)
          warp.local[p.get()][where.first % lanes][where.second].first = A[idx[0]][idx[1]];
    }
    for (auto &[where, idx] : c_places)
      if (where.first / lanes == w)
        warp.local[c.get()][where.first % lanes][where.second].first = C0[idx[0]][idx[1]];
    warp.run(lowered.body);
    if (::testing::Test::HasFatalFailure())
      return;
    int wrong = 0;
    for (auto &[where, idx] : c_places) {
      if (where.first / lanes != w)
        continue;
      double want = cs.clear ? 0 : C0[idx[0]][idx[1]];
      for (std::int64_t kk = 0; kk < cs.K; ++kk)
        want += A[idx[0]][kk] * B[kk][idx[1]];
      const double got = warp.local[c.get()][where.first % lanes][where.second].first;
      if (got != want && wrong++ < 5)
        ADD_FAILURE() << "thread " << where.first << " slot " << where.second << " element (" << idx[0] << ", "
                      << idx[1] << "): " << got << ", want " << want;
    }
    EXPECT_EQ(wrong, 0) << "warp " << w;
  }
}

TEST(LowerMma, SharedOperandsDense) { check({.M = 64, .N = 64, .K = 32, .warps_m = 2, .warps_n = 2}); }

TEST(LowerMma, SharedOperandsTransposedAndCleared) {
  check({.M = 32, .N = 48, .K = 48, .warps_m = 2, .warps_n = 1, .ta = true, .tb = true, .clear = true});
}

TEST(LowerMma, PaddedStagedOperands) {
  check({.M = 64, .N = 32, .K = 32, .warps_m = 2, .warps_n = 2, .la = {40, 0}, .lb = {40, 0}, .stages = 3});
}

TEST(LowerMma, SwizzledOperands) {
  // Rows of 64 bf16 (128 bytes): the 128-byte swizzle; B transposed with 64-byte rows.
  check({.M = 64, .N = 64, .K = 64, .warps_m = 2, .warps_n = 2, .tb = true, .la = {64, 128}, .lb = {64, 128}});
  check({.M = 32, .N = 64, .K = 32, .warps_m = 1, .warps_n = 2, .ta = true, .la = {32, 64}, .lb = {64, 64},
         .stages = 2});
}

TEST(LowerMma, OddAtomsAlongN) {
  // 3 atoms of 8 columns a warp: two by one four-matrix load, the last by a two-matrix one.
  check({.M = 32, .N = 24, .K = 32, .warps_m = 2, .warps_n = 1});
  check({.M = 32, .N = 48, .K = 16, .warps_m = 1, .warps_n = 2, .tb = true, .la = {24, 0}, .lb = {24, 0}});
}

TEST(LowerMma, FirstOperandInRegisters) {
  // FlashAttention-2's P V: P as the instruction's A in registers, V from shared memory.
  check({.M = 64, .N = 64, .K = 64, .warps_m = 4, .warps_n = 1, .la = {}, .lb = {72, 0}, .stages = 2,
         .a_in_registers = true});
  check({.M = 32, .N = 40, .K = 32, .warps_m = 2, .warps_n = 1, .tb = true, .clear = true, .a_in_registers = true});
  check({.M = 32, .N = 32, .K = 48, .warps_m = 1, .warps_n = 2, .lb = {32, 64}, .a_in_registers = true});
}

} // namespace
} // namespace tile::ir

namespace tile::ir {
namespace {

// MFMA (gfx90a): the same gemms on 64-lane wavefronts, operands read from LDS by plain
// loads (8 bytes of K at once where K is contiguous).
TEST(LowerMma, MatrixCoreDense) {
  check({.M = 64, .N = 64, .K = 32, .warps_m = 2, .warps_n = 2, .arch = "gfx90a"});
}
TEST(LowerMma, MatrixCoreTransposedAndCleared) {
  check({.M = 32, .N = 64, .K = 48, .warps_m = 1, .warps_n = 2, .ta = true, .tb = true, .clear = true,
         .arch = "gfx90a"});
}
TEST(LowerMma, MatrixCorePaddedStaged) {
  check({.M = 128, .N = 128, .K = 32, .warps_m = 1, .warps_n = 2, .la = {36, 0}, .lb = {132, 0}, .stages = 3,
         .arch = "gfx90a"});
}
TEST(LowerMma, MatrixCoreSwizzled) {
  check({.M = 64, .N = 64, .K = 64, .warps_m = 2, .warps_n = 1, .la = {64, 128}, .lb = {64, 128}, .arch = "gfx90a"});
}
TEST(LowerMma, MatrixCoreOddPitch) { // rows 2 bytes apart from a multiple of 8: element by element
  check({.M = 32, .N = 32, .K = 32, .warps_m = 1, .warps_n = 1, .la = {34, 0}, .lb = {34, 0}, .arch = "gfx90a"});
}

// wgmma (lower-mma's warpgroup path) against the instruction as targets/cuda/HOPPER-NOTES.md
// gathers it: each descriptor read in its swizzle S (the byte address's bits 4 on XOR bits 7
// on, log2(S / 16) of them) from the canonical layouts, K-major (element (r, k) at start +
// (r / 8) SBO + (r % 8) S + k e) or MN-major (element (mn, k) at start + (mn / (S / e)) LBO
// + (k / 8) SBO + (k % 8) S + (mn % (S / e)) e); the accumulator d[4j + r] of thread t of a
// warpgroup holding (16 (t / 32) + t % 32 / 4 + 8 (r / 2), 8 j + 2 (t % 4) + r % 2) of the
// instruction's 64 x N. The shared tiles are filled through the layouts infer-layout gives
// them (analysis::descriptor_layout), and the result is read back through the
// accumulator's layout: this checks the layouts, the descriptors and the instructions'
// rows and columns against each other. With a in registers (the RS form), a[i] of thread t
// holds the pair (16 (t / 32) + t % 32 / 4 + 8 (i % 2), 2 (t % 4) + 8 (i / 2) + {0, 1}) of
// the 64 x 16 tile, the lower k in the low half.
struct GroupCase {
  std::int64_t N;
  int groups;
  bool tb = false, clear = false;
  int stages = 1;
  std::int64_t K = 64;
  bool a_in_registers = false;
  ScalarType a_type = ScalarType::BF16, b_type = ScalarType::BF16; // 8-bit: K-major shared only
  bool ta = false; // a as [K, M] (MN-major)
  int atoms_m = 1; // m64 tiles a warpgroup along M
  int groups_n = 1; // warpgroups side by side along N
};

void check_warpgroup(const GroupCase &cs) {
  std::string problem;
  const Target target = *cuda_target("sm_90a", problem);
  const MmaAtomRef atom = target.mma_atom("wgmma", cs.a_type, cs.b_type);
  ASSERT_TRUE(atom);
  const int gm = cs.groups / cs.groups_n;
  const std::int64_t M = 64 * cs.atoms_m * gm, K = cs.K;
  const int threads = 128 * cs.groups;
  std::mt19937 rng(unsigned(cs.N * 7 + cs.groups + cs.tb * 3 + cs.clear + K + cs.a_in_registers * 5 + cs.ta * 11 +
                            cs.atoms_m * 13 + cs.groups_n * 17));
  const Matrix A = random_matrix(M, K, rng), B = random_matrix(K, cs.N, rng), C0 = random_matrix(M, cs.N, rng);
  Kernel k;
  k.display_name = "wgmma_test";
  k.threads = threads;
  k.thread_index = make_var("tid", ScalarType::I32);
  Memory mem;
  const int e = bytes(cs.b_type), kstep = 32 / e;
  // Each shared operand in the layout infer-layout gives it.
  // (mn_bytes: what an MN-major operand's instruction reads along M or N.)
  auto operand = [&](const std::string &name, std::int64_t rows, std::int64_t cols,
                     const std::function<double(std::int64_t, std::int64_t)> &value, ScalarType type,
                     std::int64_t mn_bytes) {
    Buffer shape_of = make_buffer(name, Scope::Shared, type, {rows, cols});
    const int swizzle = analysis::descriptor_swizzle(*atom, *shape_of, mn_bytes);
    EXPECT_NE(swizzle, 0) << name;
    return shared_operand(k, mem, name, rows, cols, analysis::descriptor_layout(*shape_of, swizzle), cs.stages, value,
                          type);
  };
  MmaShape shape{MmaShape::C, M, cs.N, 4 * gm, cs.groups_n};
  shape.group_warps = 4;
  Region ra;
  std::vector<std::vector<double>> a_regs; // per thread, with a in registers
  if (cs.a_in_registers) {
    MmaShape op{MmaShape::A, M, K, 4 * gm, cs.groups_n};
    op.group_warps = 4;
    Fragment af = mma_fragment(op, threads, atom->accumulator);
    Buffer p = make_buffer("p", Scope::Local, ScalarType::BF16, {af.slots()});
    k.layouts[p.get()] = af;
    a_regs.assign(threads, std::vector<double>(af.slots(), NAN));
    for (auto &[where, idx] : places(af))
      a_regs[where.first][where.second] = A[idx[0]][idx[1]];
    ra = full_region(p);
  } else {
    ra = cs.ta ? operand("As", K, M, [&](auto i, auto j) { return A[j][i]; }, cs.a_type, 64 * e)
               : operand("As", M, K, [&](auto i, auto j) { return A[i][j]; }, cs.a_type, 0);
  }
  Region rb = cs.tb ? operand("Bs", cs.N, K, [&](auto i, auto j) { return B[j][i]; }, cs.b_type, 0)
                    : operand("Bs", K, cs.N, [&](auto i, auto j) { return B[i][j]; }, cs.b_type,
                              cs.N / cs.groups_n * e);
  Fragment cf = mma_fragment(shape, threads, atom->accumulator);
  Buffer c = make_buffer("acc", Scope::Local, ScalarType::F32, {cf.slots()});
  k.layouts[c.get()] = cf;
  auto gemm = std::make_shared<GemmNode>(ra, rb, full_region(c), cs.ta, cs.tb, cs.clear, WarpPolicy::Square);
  gemm->atom = atom;
  k.body = gemm;
  Kernel lowered = transforms::lower_mma(k, target);
  SCOPED_TRACE(to_string(lowered.body));

  // Per thread: the accumulator's registers, from C0 through the layout.
  const auto c_places = places(cf);
  std::vector<std::vector<double>> acc(threads, std::vector<double>(cf.slots(), NAN));
  for (auto &[where, idx] : c_places)
    acc[where.first][where.second] = C0[idx[0]][idx[1]];
  std::map<const VarNode *, std::int64_t> env;
  auto eval = [&](const Expr &e, int t) {
    Substituter s;
    s.vars[lowered.thread_index.get()] = int_imm(t);
    for (auto &[v, x] : env)
      s.vars[v] = int_imm(x);
    return folded(s.mutate(e));
  };
  bool fenced = false, committed = false, waited = false;
  int instructions = 0;
  // a's registers packed in pairs (the RS form): per thread, register -> (low, high).
  std::vector<std::map<std::int64_t, std::pair<double, double>>> packed(threads);
  // The element of a descriptor operand at byte offset u from its buffer's start (which is
  // where the swizzle counts from).
  auto fetch = [&](const DescriptorOperand &d, std::int64_t u) {
    EXPECT_EQ(atom->swizzle_code(d.swizzle_bytes), d.swizzle_code);
    const std::int64_t phases = d.swizzle_bytes / 16 - 1;
    const std::int64_t p = u ^ (((u >> 7) & phases) << 4);
    return mem.at(d.buffer.get())[p / e];
  };
  // Element (mn, k) of the instruction's operand through descriptor d from byte `start`.
  auto element = [&](const DescriptorOperand &d, std::int64_t start, int mn, int kk) {
    const std::int64_t S = d.swizzle_bytes, span = S / e;
    return d.mn_major ? fetch(d, start + (mn / span) * d.lbo + (kk / 8) * d.sbo + (kk % 8) * S + (mn % span) * e)
                      : fetch(d, start + (mn / 8) * d.sbo + (mn % 8) * S + kk * e);
  };
  std::function<void(const Stmt &)> run = [&](const Stmt &s) {
    if (auto q = s->as<SeqNode>()) {
      for (auto &x : q->stmts)
        run(x);
    } else if (auto st = s->as<StoreNode>()) {
      // The RS form's packing, before the fence: u32[r] = pack2(p[i], p[j]).
      auto c = st->value->as<CallNode>();
      ASSERT_TRUE(cs.a_in_registers && !fenced && c && c->fn == Intrinsic::Pack2 && c->args.size() == 2 &&
                  st->buffer->dtype == ScalarType::U32)
          << to_string(s);
      auto lo = c->args[0]->as<LoadNode>(), hi = c->args[1]->as<LoadNode>();
      ASSERT_TRUE(lo && hi && lo->buffer == ra.buffer && hi->buffer == ra.buffer);
      for (int t = 0; t < threads; ++t)
        packed[t][eval(st->indices[0], t)] = {a_regs[t][eval(lo->indices[0], t)], a_regs[t][eval(hi->indices[0], t)]};
    } else if (auto f = s->as<ForNode>()) {
      for (std::int64_t i = 0; i < folded(f->extent); ++i) {
        env[f->var.get()] = folded(f->begin) + i;
        run(f->body);
      }
    } else if (auto w = s->as<WarpgroupSyncNode>()) {
      (w->sync_kind == WarpgroupSyncKind::Fence ? fenced : w->sync_kind == WarpgroupSyncKind::Commit ? committed : waited) =
          true;
      EXPECT_TRUE(w->sync_kind != WarpgroupSyncKind::Wait || (committed && w->pending == 0));
    } else if (auto g = s->as<WgmmaNode>()) {
      EXPECT_TRUE(fenced && !committed);
      EXPECT_EQ(g->instruction, atom->instruction(cs.a_type, cs.b_type, g->n));
      EXPECT_EQ(g->n, cs.N / cs.groups_n);
      ++instructions;
      for (int grp = 0; grp < cs.groups; ++grp) {
        const int t0 = grp * 128;
        // One descriptor for the whole warpgroup.
        const bool rs = bool(g->a_reg_buffer);
        ASSERT_EQ(rs, cs.a_in_registers);
        ASSERT_EQ(g->k, kstep);
        ASSERT_EQ(g->a.mn_major, cs.ta);
        ASSERT_EQ(g->b.mn_major, !cs.tb);
        const std::int64_t sa = rs ? 0 : eval(g->a.offset, t0) * e, sb = eval(g->b.offset, t0) * e;
        for (int t = t0; t < t0 + 128; ++t)
          ASSERT_TRUE((rs || eval(g->a.offset, t) * e == sa) && eval(g->b.offset, t) * e == sb);
        double a[64][32], bm[32][256];
        for (int r = 0; r < 64; ++r)
          for (int kk = 0; kk < 32; ++kk)
            a[r][kk] = NAN;
        if (rs) {
          ASSERT_EQ(g->a_regs.size(), 4u);
          for (int t = t0; t < t0 + 128; ++t) {
            const int lt = t - t0, w = lt / 32, l = lt % 32;
            for (int i = 0; i < 4; ++i) {
              auto reg = packed[t].find(eval(g->a_regs[i], t));
              ASSERT_TRUE(reg != packed[t].end()) << "a register not packed before the fence";
              const int r = 16 * w + l / 4 + 8 * (i % 2), kk = 2 * (l % 4) + 8 * (i / 2);
              a[r][kk] = reg->second.first;
              a[r][kk + 1] = reg->second.second;
            }
          }
        } else {
          for (int r = 0; r < 64; ++r)
            for (int kk = 0; kk < kstep; ++kk)
              a[r][kk] = element(g->a, sa, r, kk);
        }
        for (int kk = 0; kk < kstep; ++kk)
          for (int n = 0; n < g->n; ++n)
            bm[kk][n] = element(g->b, sb, n, kk);
        for (int t = t0; t < t0 + 128; ++t) {
          const int lt = t - t0, w = lt / 32, l = lt % 32;
          const bool add_to = eval(g->accumulate, t) != 0;
          ASSERT_EQ(g->c_regs.size(), size_t(g->n / 2));
          for (int i = 0; i < g->n / 2; ++i) {
            const int r = 16 * w + l / 4 + 8 * ((i % 4) / 2), col = 8 * (i / 4) + 2 * (l % 4) + i % 2;
            double sum = 0;
            for (int kk = 0; kk < kstep; ++kk)
              sum += a[r][kk] * bm[kk][col];
            double &d = acc[t][eval(g->c_regs[i], t)];
            d = add_to ? d + sum : sum;
          }
        }
      }
    } else if (!s->as<DeclBufferNode>()) {
      FAIL() << "unexpected statement: " << to_string(s);
    }
  };
  run(lowered.body);
  EXPECT_EQ(instructions, K / kstep * cs.atoms_m);
  EXPECT_TRUE(committed && waited);
  int wrong = 0;
  for (auto &[where, idx] : c_places) {
    double want = cs.clear ? 0 : C0[idx[0]][idx[1]];
    for (std::int64_t kk = 0; kk < K; ++kk)
      want += A[idx[0]][kk] * B[kk][idx[1]];
    const double got = acc[where.first][where.second];
    if (got != want && wrong++ < 5)
      ADD_FAILURE() << "thread " << where.first << " slot " << where.second << " element (" << idx[0] << ", " << idx[1]
                    << "): " << got << ", want " << want;
  }
  EXPECT_EQ(wrong, 0);
}

TEST(LowerMma, WarpgroupNMajorB) { check_warpgroup({.N = 256, .groups = 2, .stages = 3}); }
TEST(LowerMma, WarpgroupKMajorBCleared) { check_warpgroup({.N = 64, .groups = 1, .tb = true, .clear = true}); }
TEST(LowerMma, WarpgroupNarrowN) { check_warpgroup({.N = 128, .groups = 1, .clear = true, .stages = 2}); }
// Attention's gemms on wgmma: S = Q K^T with head dimension 128 (K-major slabs for both),
// and O += P V with P in registers (the RS form), V N-major.
TEST(LowerMma, WarpgroupKMajorSlabs) {
  check_warpgroup({.N = 64, .groups = 2, .tb = true, .clear = true, .stages = 2, .K = 128});
  check_warpgroup({.N = 128, .groups = 1, .K = 128});
}
// 8-bit floats: K-major only, 32 of K an instruction, rows of 128 elements (wider ones in
// slabs of 128 columns); either kind for each operand.
TEST(LowerMma, WarpgroupEightBit) {
  check_warpgroup({.N = 128, .groups = 2, .tb = true, .stages = 2, .K = 128, .a_type = ScalarType::F8E4M3,
                   .b_type = ScalarType::F8E4M3});
  check_warpgroup({.N = 64, .groups = 1, .tb = true, .clear = true, .K = 256, .a_type = ScalarType::F8E4M3,
                   .b_type = ScalarType::F8E5M2});
}
TEST(LowerMma, WarpgroupFirstOperandInRegisters) {
  check_warpgroup({.N = 128, .groups = 1, .stages = 2, .K = 64, .a_in_registers = true});
  check_warpgroup({.N = 64, .groups = 2, .clear = true, .K = 128, .a_in_registers = true});
}
// K tiles of 16 and 32 bf16 (rows of 32 and 64 bytes: the 32- and 64-byte swizzles), and
// of 48 (96 bytes: 32-byte slabs), K-major and MN-major.
TEST(LowerMma, WarpgroupNarrowSwizzles) {
  check_warpgroup({.N = 128, .groups = 1, .tb = true, .K = 32});
  check_warpgroup({.N = 128, .groups = 1, .clear = true, .stages = 3, .K = 32});
  check_warpgroup({.N = 64, .groups = 1, .tb = true, .clear = true, .K = 16});
  check_warpgroup({.N = 32, .groups = 1, .K = 16});
  check_warpgroup({.N = 96, .groups = 2, .tb = true, .K = 48});
  check_warpgroup({.N = 64, .groups = 1, .tb = true, .K = 64, .a_type = ScalarType::F8E4M3,
                   .b_type = ScalarType::F8E5M2}); // 8-bit: rows of 64 bytes
}
// a transposed (MN-major from shared memory: dQ = dS^T K, linear attention's K^T V).
TEST(LowerMma, WarpgroupTransposedA) {
  check_warpgroup({.N = 64, .groups = 1, .tb = true, .K = 64, .ta = true});
  check_warpgroup({.N = 128, .groups = 2, .clear = true, .stages = 2, .K = 32, .ta = true});
  check_warpgroup({.N = 64, .groups = 1, .K = 16, .ta = true});
}
// Several m64 tiles a warpgroup along M (the seed's 128 x 128 on one warpgroup), and
// warpgroups side by side along N (a 64-row accumulator over two: MLA's full_col).
TEST(LowerMma, WarpgroupAtomsAndColumns) {
  check_warpgroup({.N = 128, .groups = 1, .stages = 3, .K = 32, .atoms_m = 2});
  check_warpgroup({.N = 64, .groups = 1, .tb = true, .clear = true, .K = 64, .a_in_registers = true, .atoms_m = 2});
  check_warpgroup({.N = 256, .groups = 2, .clear = true, .K = 32, .groups_n = 2});
  check_warpgroup({.N = 128, .groups = 2, .tb = true, .K = 64, .a_in_registers = true, .groups_n = 2});
  check_warpgroup({.N = 64, .groups = 2, .tb = true, .K = 32, .ta = true, .atoms_m = 2, .groups_n = 2});
  // b not transposed, 32 columns each: its 128-byte rows in the 64-byte swizzle (slabs of
  // the 32 columns an instruction reads).
  check_warpgroup({.N = 64, .groups = 2, .K = 32, .ta = true, .atoms_m = 2, .groups_n = 2});
  check_warpgroup({.N = 32, .groups = 2, .clear = true, .K = 64, .groups_n = 2});
}

} // namespace
} // namespace tile::ir
