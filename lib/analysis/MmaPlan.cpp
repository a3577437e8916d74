#include "analysis/MmaPlan.h"

#include <algorithm>

namespace tile::analysis {

using namespace ir;

namespace {

bool is_f8(ScalarType t) { return t == ScalarType::F8E4M3 || t == ScalarType::F8E5M2; }

std::optional<MmaShape> refuse(std::string &why_not, std::string why) {
  why_not = std::move(why);
  return std::nullopt;
}

std::string swizzles_taken(const MmaAtom &atom);

/// What every atom asks: operands in shared memory or fragments, whole rank-2 tiles, an
/// f32 accumulator fragment, whole warps, K a multiple of the atom's.
bool common_rules(const GemmNode &g, int threads, const Target &target, const MmaAtom &atom, std::string &why_not) {
  const Buffer &a = g.a.buffer, &b = g.b.buffer, &c = g.c.buffer;
  if (a->scope == Scope::Global || b->scope == Scope::Global || a->scope == Scope::Local || b->scope == Scope::Local)
    return refuse(why_not, "operands must be in shared memory or fragments"), false;
  if (a->rank() != 2 || b->rank() != 2 || !g.a.whole() || !g.b.whole())
    return refuse(why_not, "operands must be whole rank-2 tiles"), false;
  if (c->scope != Scope::Fragment || c->rank() != 2 || !g.c.whole() || c->dtype != ScalarType::F32)
    return refuse(why_not, "the accumulator must be a whole rank-2 f32 fragment"), false;
  if (threads % target.warp_size != 0)
    return refuse(why_not, "the block's threads are not whole warps"), false;
  const std::int64_t K = g.transpose_a ? a->extent(0) : a->extent(1);
  const int ak = atom.k_for(a->dtype);
  if (K % ak != 0)
    return refuse(why_not, "K = " + std::to_string(K) + " is not a multiple of " + std::to_string(ak)), false;
  return true;
}

/// The warp grid of the atom's m x n accumulator tiles over the gemm's M x N, as the
/// policy asks.
std::optional<MmaShape> warp_grid(const GemmNode &g, int threads, const Target &target, const MmaAtom &atom,
                                  std::string &why_not) {
  if (!common_rules(g, threads, target, atom, why_not))
    return std::nullopt;
  const Buffer &c = g.c.buffer;
  const std::int64_t am = atom.accumulator.rows, an = atom.accumulator.cols;
  const std::int64_t M = c->extent(0), N = c->extent(1);
  const int warps = threads / target.warp_size;
  std::optional<MmaShape> best;
  auto consider = [&](int wm) {
    const int wn = warps / wm;
    if (warps % wm != 0 || M % (am * wm) != 0 || N % (an * wn) != 0)
      return;
    MmaShape l{MmaShape::C, M, N, wm, wn, am, an};
    if (M * N / threads > target.max_accumulator_registers)
      return;
    // Square: the warp tile closest to square (fewest operand loads per instruction).
    auto skew = [](const MmaShape &x) {
      std::int64_t h = x.rows / x.warps_m, w = x.cols / x.warps_n;
      return h > w ? h - w : w - h;
    };
    if (!best || skew(l) < skew(*best))
      best = l;
  };
  if (g.policy == WarpPolicy::FullRow)
    consider(warps); // warps stacked along the rows, each with all columns
  else if (g.policy == WarpPolicy::FullCol)
    consider(1);
  if (!best)
    for (int wm = 1; wm <= warps; ++wm)
      consider(wm);
  if (!best)
    return refuse(why_not, "no grid of " + std::to_string(warps) + " warps tiles " + std::to_string(M) + "x" +
                               std::to_string(N) + " by " + std::to_string(am) + "x" + std::to_string(an) +
                               " atoms within " + std::to_string(target.max_accumulator_registers) +
                               " registers per thread");
  return best;
}

/// An atom whose warps read shared operands into registers (mma.sync, MFMA).
std::optional<MmaShape> warp_plan(const GemmNode &g, int threads, const Target &target, const MmaAtom &atom,
                                  std::string &why_not) {
  const Buffer &a = g.a.buffer, &b = g.b.buffer;
  // The operands are read in rows of operand_row_bytes (ldmatrix: 16 bytes, 8 elements).
  const int row_bytes = atom.operand_row_bytes, row_elements = row_bytes / bytes(a->dtype);
  auto grid = warp_grid(g, threads, target, atom, why_not);
  if (!grid)
    return grid;
  if (a->extent(1) % row_elements != 0 || b->extent(1) % row_elements != 0)
    return refuse(why_not, "operand rows are not a multiple of " + std::to_string(row_elements) + " elements (" +
                               std::to_string(row_bytes) + " bytes)");
  if (bytes(a->dtype) != atom.transposable_bytes && (g.transpose_a || !g.transpose_b))
    return refuse(why_not, atom.operand_load + " transposes " + std::to_string(8 * atom.transposable_bytes) +
                               "-bit elements only: " + std::to_string(8 * bytes(a->dtype)) +
                               "-bit operands must be K-major (a not transposed, b as [N, K] with transpose_b)");
  return grid;
}

/// An atom of a warpgroup whose instruction reads shared operands through descriptors
/// (wgmma): an m64 x n instruction a warpgroup, each warpgroup's rows one or more of them,
/// the warpgroups stacked along M (gm) and side by side along N (gn). K-major operands (a
/// [M, K], b [N, K] with transpose_b) in any K a multiple of the instruction's; MN-major
/// ones (a transposed, b [K, N]) of 16-bit elements, their tiles' rows in slabs of one
/// swizzle span; a also from registers (K-major).
std::optional<MmaShape> warpgroup_plan(const GemmNode &g, int threads, const Target &target, const MmaAtom &atom,
                                       std::string &why_not) {
  const Buffer &a = g.a.buffer, &b = g.b.buffer, &c = g.c.buffer;
  if (!common_rules(g, threads, target, atom, why_not))
    return std::nullopt;
  const int e = bytes(a->dtype);
  // MN-major operands: 16-bit elements only (the instruction transposes no others).
  const bool a_mn = g.transpose_a, b_mn = !g.transpose_b;
  if (e != atom.transposable_bytes && (a_mn || b_mn || a->scope != Scope::Shared))
    return refuse(why_not, "wgmma takes " +
                               (is_f8(a->dtype) ? std::string("8-bit floats") : std::to_string(8 * e) + "-bit operands") +
                               " K-major from shared memory only: a shared tile a, and b as [N, K] with transpose_b");
  // a from registers (a fragment: the RS form, K-major) or a shared tile; b from a shared tile.
  if ((a->scope != Scope::Shared && a->scope != Scope::Fragment) || b->scope != Scope::Shared)
    return refuse(why_not, "wgmma takes b from a shared tile and a from a shared tile or a fragment");
  const int warpgroup = atom.threads(target.warp_size);
  if (threads % warpgroup != 0)
    return refuse(why_not, "the block's threads are not whole warpgroups");
  const int groups = threads / warpgroup;
  const std::int64_t M = c->extent(0), N = c->extent(1);
  // Each shared tile in a swizzle its rows take; an MN-major operand's instruction reads
  // whole slabs of it (descriptor_swizzle).
  const int sa = descriptor_swizzle(atom, *a, a_mn ? atom.m * e : 0), sb = descriptor_swizzle(atom, *b);
  if (sa == 0 || sb == 0) {
    const BufferNode &x = sa == 0 ? *a : *b;
    return refuse(why_not, "the rows of '" + x.name + "' are " + std::to_string(x.extent(1) * e) +
                               " bytes, which no swizzle of wgmma's divides (" + swizzles_taken(atom) + " bytes)");
  }
  if (M % atom.m != 0)
    return refuse(why_not, "M = " + std::to_string(M) + " is not a multiple of " + std::to_string(atom.m) +
                               " (the instruction's rows)");
  // The grid of warpgroups: gm along M, gn along N, as the policy asks (square and
  // full_row: along M first).
  std::string grid_why;
  auto fits = [&](int gm) -> bool {
    const int gn = groups / gm;
    if (groups % gm != 0)
      return false;
    if (M % (atom.m * gm) != 0)
      return grid_why = "M = " + std::to_string(M) + " is not " + std::to_string(atom.m) + " rows or a multiple for " +
                        (gm == 1 ? std::string("the block's warpgroup") : "each of " + std::to_string(gm) + " warpgroups"),
             false;
    const std::int64_t n = N % gn == 0 ? N / gn : 0;
    if (n == 0 || n % atom.n_step != 0 || n > atom.max_n)
      return grid_why = "N = " + std::to_string(N) + (gn > 1 ? " over " + std::to_string(gn) + " warpgroups" : "") +
                        " is not a multiple of " + std::to_string(atom.n_step) + " up to " +
                        std::to_string(atom.max_n) + (gn > 1 ? " each" : ""),
             false;
    if (b_mn && descriptor_swizzle(atom, *b, n * e) == 0)
      return grid_why = "N = " + std::to_string(n) + " an instruction does not fill a whole span of a swizzle (" +
                        swizzles_taken(atom) + " bytes) of '" + b->name + "' (b not transposed)",
             false;
    if (M * N / threads > target.max_accumulator_registers)
      return grid_why = "the accumulator takes more than " + std::to_string(target.max_accumulator_registers) +
                        " registers per thread",
             false;
    return true;
  };
  // (Where the policy's grid does not fit, any other that does, as warp_grid.)
  int gm = 0;
  if (g.policy == WarpPolicy::FullCol)
    gm = fits(1) ? 1 : 0;
  else if (g.policy == WarpPolicy::FullRow)
    gm = fits(groups) ? groups : 0;
  const std::string policy_why = grid_why;
  for (int x = groups; x >= 1 && gm == 0; --x)
    gm = fits(x) ? x : 0;
  if (gm == 0)
    return refuse(why_not, policy_why.empty() ? grid_why : policy_why);
  MmaShape s{MmaShape::C, M, N, atom.warps * gm, groups / gm, atom.accumulator.rows, atom.accumulator.cols};
  s.group_warps = atom.warps;
  return s;
}

/// "128, 64 or 32": the swizzles of `atom`.
std::string swizzles_taken(const MmaAtom &atom) {
  std::string out;
  for (size_t i = 0; i < atom.swizzles.size(); ++i)
    out += (i == 0 ? "" : i + 1 == atom.swizzles.size() ? " or " : ", ") + std::to_string(atom.swizzles[i].first);
  return out;
}

/// "two bf16 or two f16 operands": the operand types `atoms` take.
std::string types_taken(const std::vector<MmaAtomRef> &atoms) {
  std::vector<std::string> kinds;
  for (const MmaAtomRef &atom : atoms)
    for (auto &[a, b] : atom->operand_types) {
      const std::string kind = is_f8(a) ? "two 8-bit float" : "two " + std::string(name(a));
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
        kinds.push_back(kind);
    }
  std::string out;
  for (size_t i = 0; i < kinds.size(); ++i)
    out += (i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ") + kinds[i];
  return out + " operands";
}

} // namespace

int descriptor_swizzle(const MmaAtom &atom, const BufferNode &tile, std::int64_t mn_bytes) {
  const std::int64_t row = tile.extent(tile.rank() - 1) * bytes(tile.dtype);
  for (auto &[swizzle, code] : atom.swizzles)
    if (row % swizzle == 0 && (mn_bytes == 0 || mn_bytes % swizzle == 0))
      return swizzle;
  return 0;
}

SharedLayout descriptor_layout(const BufferNode &tile, int swizzle) {
  const std::int64_t span = swizzle / bytes(tile.dtype), cols = tile.extent(tile.rank() - 1);
  return SharedLayout{span, swizzle, cols > span ? span : 0, 8 * swizzle};
}

std::pair<int, int> descriptor_swizzles(const GemmNode &g, const MmaShape &shape, const MmaAtom &atom) {
  const int e = bytes(g.b.buffer->dtype);
  const std::int64_t n = shape.cols / shape.warps_n; // an instruction's columns
  return {descriptor_swizzle(atom, *g.a.buffer, g.transpose_a ? atom.m * e : 0),
          descriptor_swizzle(atom, *g.b.buffer, g.transpose_b ? 0 : n * e)};
}

std::optional<MmaShape> plan_mma(const GemmNode &g, int threads, const Target &target, const MmaAtom &atom,
                                 std::string &why_not) {
  if (!atom.takes(g.a.buffer->dtype, g.b.buffer->dtype))
    return refuse(why_not, std::string("operands are ") + name(g.a.buffer->dtype) + " and " + name(g.b.buffer->dtype));
  return atom.read == OperandRead::Descriptor ? warpgroup_plan(g, threads, target, atom, why_not)
                                              : warp_plan(g, threads, target, atom, why_not);
}

std::optional<MmaChoice> choose_mma(const GemmNode &g, int threads, const Target &target,
                                    const std::vector<MmaAtomRef> &atoms,
                                    std::vector<std::pair<std::string, std::string>> &why_not) {
  why_not.clear();
  const ScalarType at = g.a.buffer->dtype, bt = g.b.buffer->dtype;
  bool typed = false;
  for (const MmaAtomRef &atom : atoms) {
    if (!atom->takes(at, bt))
      continue;
    typed = true;
    std::string why;
    if (auto s = plan_mma(g, threads, target, *atom, why))
      return MmaChoice{atom, *s};
    // One reason a family: its first atom's.
    if (std::none_of(why_not.begin(), why_not.end(), [&](auto &w) { return w.first == atom->family; }))
      why_not.emplace_back(atom->family, why);
  }
  if (!typed)
    why_not.emplace_back("", atoms.empty() ? target.name() + " has no tensor-core gemm tile uses"
                                           : std::string("operands are ") + name(at) + " and " + name(bt) +
                                                 "; tensor cores take " + types_taken(atoms));
  return std::nullopt;
}

} // namespace tile::analysis
