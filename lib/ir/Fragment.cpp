#include "ir/Fragment.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "ir/IR.h"

namespace tile::ir {

namespace {

/// Slot digits renumbered densely: innermost (smallest old stride) gets stride 1.
void compact_slots(Fragment &f) {
  std::vector<int> order = f.slot_digits();
  std::int64_t stride = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    f.digits[*it].stride = stride;
    stride *= f.digits[*it].extent;
  }
}

Expr conjunction(const Fragment &f, int kind, const Expr &tid) {
  Expr all = nullptr;
  for (const Digit &g : f.digits)
    if (g.thread && g.dim == kind && g.extent > 1) {
      Expr c = thread_digit_is_zero(tid, g.stride, g.extent, f.threads);
      all = all ? logical_and(all, c) : c;
    }
  return all;
}

std::string dims_string(const std::vector<std::int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

Digit slot(int dim, std::int64_t extent, std::int64_t stride, std::string name) {
  return Digit{dim, extent, false, stride, std::move(name)};
}
Digit thread(int dim, std::int64_t extent, std::int64_t stride) { return Digit{dim, extent, true, stride, ""}; }

} // namespace

std::int64_t Fragment::slots() const {
  std::int64_t last = 0;
  for (const Digit &g : digits)
    if (!g.thread)
      last += (g.extent - 1) * g.stride;
  return last + 1;
}

std::int64_t Fragment::replicas() const {
  std::int64_t n = 1;
  for (const Digit &g : digits)
    if (g.dim == Digit::Replica)
      n *= g.extent;
  return n;
}

std::vector<int> Fragment::slot_digits() const {
  std::vector<int> order;
  for (int i = 0; i < int(digits.size()); ++i)
    if (!digits[i].thread)
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return digits[a].stride != digits[b].stride ? digits[a].stride > digits[b].stride : a < b;
  });
  return order;
}

bool Fragment::padded(int d) const {
  std::int64_t n = 1;
  for (const Digit &g : digits)
    if (g.dim == d)
      n *= g.extent;
  return n > shape[d];
}

Expr thread_digit(const Expr &tid, std::int64_t stride, std::int64_t extent, int threads) {
  if (extent == 1)
    return int_imm(0);
  if (stride * extent >= threads)
    return stride == 1 ? tid : div(tid, int_imm(stride));
  // tid % (s e) / s rather than tid / s % e: the form nvcc keeps in fewer registers.
  Expr v = binary(BinaryOp::Mod, tid, int_imm(stride * extent));
  return stride == 1 ? v : div(v, int_imm(stride));
}

Expr thread_digit_is_zero(const Expr &tid, std::int64_t stride, std::int64_t extent, int threads) {
  if (stride * extent >= threads)
    return lt(tid, int_imm(stride));
  Expr v = stride == 1 ? tid : div(tid, int_imm(stride));
  return binary(BinaryOp::EQ, binary(BinaryOp::Mod, v, int_imm(extent)), int_imm(0));
}

Expr Fragment::digit_value(int i, const Expr &tid) const {
  return thread_digit(tid, digits[i].stride, digits[i].extent, threads);
}

Expr Fragment::index(int d, const Expr &tid, const std::vector<Expr> &slot_values) const {
  // A sum of each digit's value times the extents of the digits inside it, outer first (not
  // Horner's nesting, which costs nvcc registers: a GEMM at the limit spilled).
  std::vector<int> ds;
  for (int i = 0; i < int(digits.size()); ++i)
    if (digits[i].dim == d && !(digits[i].thread && digits[i].extent == 1))
      ds.push_back(i);
  Expr acc = nullptr;
  for (size_t k = 0; k < ds.size(); ++k) {
    std::int64_t weight = 1;
    for (size_t n = k + 1; n < ds.size(); ++n)
      weight *= digits[ds[n]].extent;
    Expr v = digits[ds[k]].thread ? digit_value(ds[k], tid) : slot_values.at(ds[k]);
    v = mul(v, int_imm(weight));
    acc = acc ? add(acc, v) : v;
  }
  return acc ? acc : int_imm(0);
}

Expr Fragment::slot(const std::vector<Expr> &slot_values) const {
  std::vector<int> order = slot_digits();
  if (order.empty())
    return int_imm(0);
  // Horner over decreasing strides while each stride divides the one before, so that a
  // matrix's slot reads (rs * CS + cs) * V + v.
  bool horner = true;
  for (size_t i = 1; i < order.size(); ++i)
    horner &= digits[order[i]].stride > 0 && digits[order[i - 1]].stride % digits[order[i]].stride == 0;
  if (!horner) {
    Expr sum = int_imm(0);
    for (int i : order)
      sum = add(sum, mul(slot_values.at(i), int_imm(digits[i].stride)));
    return sum;
  }
  Expr acc = slot_values.at(order[0]);
  for (size_t i = 1; i < order.size(); ++i)
    acc = add(mul(acc, int_imm(digits[order[i - 1]].stride / digits[order[i]].stride)), slot_values.at(order[i]));
  return mul(acc, int_imm(digits[order.back()].stride));
}

Expr Fragment::holds(const Expr &tid) const { return conjunction(*this, Digit::Idle, tid); }
Expr Fragment::first_replica(const Expr &tid) const { return conjunction(*this, Digit::Replica, tid); }

bool operator==(const Fragment &a, const Fragment &b) {
  if (a.shape != b.shape || a.threads != b.threads)
    return false;
  // Digits of extent 1 change nothing; the order of digits matters within a dimension only.
  auto key = [](const Fragment &f) {
    std::vector<std::tuple<int, int, std::int64_t, bool, std::int64_t>> k;
    std::map<int, int> pos;
    for (const Digit &g : f.digits)
      if (g.extent > 1)
        k.emplace_back(g.dim, g.dim < 0 ? 0 : pos[g.dim]++, g.extent, g.thread, g.stride);
    std::sort(k.begin(), k.end());
    return k;
  };
  return key(a) == key(b);
}

Fragment matrix_fragment(std::int64_t rows, std::int64_t cols, int threads, int warp) {
  // Vectors of up to 8 elements (16 bytes of bf16), narrower while that would leave
  // threads without a vector.
  std::int64_t vec = 8;
  while (vec > 1 && (cols % vec != 0 || rows * cols / vec < threads))
    vec /= 2;
  // Threads per row: a power of two dividing both the row's vectors and the threads; at
  // most a warp (row reductions then combine a row's threads by warp shuffles alone) when
  // the rows can keep every warp busy, else up to the threads per row that spreads the
  // rows over all threads (a row over several warps: reductions also combine the warps
  // through shared memory).
  std::int64_t tc = 1;
  const std::int64_t max_tc = rows * warp >= threads ? warp : threads / rows;
  while (tc * 2 <= max_tc && (cols / vec) % (tc * 2) == 0 && threads % (tc * 2) == 0)
    tc *= 2;
  const std::int64_t tr = threads / tc, rs = (rows + tr - 1) / tr, cs = cols / (vec * tc);
  Fragment f;
  f.shape = {rows, cols};
  f.threads = threads;
  f.digits = {slot(0, rs, cs * vec, "rs"), thread(0, tr, tc), slot(1, cs, vec, "cs"), thread(1, tc, 1),
              slot(1, vec, 1, "v")};
  f.description = "matrix(" + std::to_string(rows) + "x" + std::to_string(cols) + ", vec " + std::to_string(vec) +
                  ", " + std::to_string(tr) + "x" + std::to_string(tc) + " threads)";
  return f;
}

Fragment vector_fragment(std::int64_t n, int threads, int warp) {
  Fragment f = matrix_fragment(1, n, threads, warp);
  f.shape = {n};
  for (Digit &g : f.digits)
    g.dim = g.dim == 0 ? Digit::Idle : 0; // the row digits: threads past the one row hold nothing
  return f;
}

std::int64_t AtomLayout::registers() const {
  std::int64_t n = 1;
  for (const Digit &g : digits)
    if (!g.thread)
      n *= g.extent;
  return n;
}

Fragment mma_fragment(MmaShape m, int threads, const AtomLayout &atom) {
  m.atom_rows = atom.rows;
  m.atom_cols = atom.cols;
  const bool c = m.operand == MmaShape::C;
  // Atoms a warp holds along the rows, and along the columns (A: K / cols atoms of K).
  const std::int64_t am = m.atoms_m(), an_warp = c ? m.atoms_n() : m.cols / atom.cols;
  const std::int64_t regs = atom.registers(), lanes = atom.lanes;
  Fragment f;
  f.shape = {m.rows, m.cols};
  f.threads = threads;
  f.mma = m;
  // Each dimension: the warp's place in the grid, the atom's place in the warp's tile
  // (slots of whole atoms), then the instruction's table within the atom.
  auto atom_digits = [&](int dim) {
    for (Digit g : atom.digits)
      if (g.dim == dim)
        f.digits.push_back(g);
  };
  // A warpgroup's warps inside its atoms along M (each instruction covers a warp's rows of
  // each of its warps), the groups outside.
  const int inner = m.warpgroup() && am > 1 ? m.group_warps : 1;
  f.digits = {thread(0, m.warps_m / inner, lanes * inner), slot(0, am, an_warp * regs, "rs"), thread(0, inner, lanes)};
  atom_digits(0);
  if (c)
    f.digits.push_back(thread(1, m.warps_n, lanes * m.warps_m));
  f.digits.push_back(slot(1, an_warp, regs, "cs"));
  atom_digits(1);
  if (!c && m.warps_n > 1)
    f.digits.push_back(thread(Digit::Replica, m.warps_n, lanes * m.warps_m)); // every N warp needs the rows
  f.digits.erase(std::remove_if(f.digits.begin(), f.digits.end(), [](const Digit &g) { return g.thread && g.extent == 1; }),
                 f.digits.end());
  const std::string atoms = "m" + std::to_string(atom.rows) + "n" + std::to_string(atom.cols) + " atoms)";
  f.description = (c ? "mma(" : "mma operand a(") + std::to_string(m.rows) + "x" + std::to_string(m.cols) + ", " +
                  std::to_string(m.warps_m) + "x" + std::to_string(m.warps_n) + " warps of " + std::to_string(am) +
                  "x" + std::to_string(an_warp) + " " + atoms;
  return f;
}

Fragment select_dims(const Fragment &f, const std::vector<int> &dims, std::vector<int> *origin) {
  Fragment r;
  r.threads = f.threads;
  bool identity = dims.size() == f.shape.size(), dropped_slot = false;
  for (size_t k = 0; k < dims.size(); ++k) {
    r.shape.push_back(f.shape[dims[k]]);
    identity &= dims[k] == int(k);
  }
  if (origin)
    origin->clear();
  for (int i = 0; i < int(f.digits.size()); ++i) {
    Digit g = f.digits[i];
    if (g.dim >= 0) {
      auto it = std::find(dims.begin(), dims.end(), g.dim);
      if (it == dims.end()) {
        if (!g.thread) {
          dropped_slot = true;
          continue;
        }
        g.dim = Digit::Replica;
      } else {
        g.dim = int(it - dims.begin());
      }
    }
    r.digits.push_back(g);
    if (origin)
      origin->push_back(i);
  }
  if (dropped_slot)
    compact_slots(r);
  if (identity) {
    r.description = f.description;
    r.mma = f.mma;
  } else if (f.rank() == 2 && dims == std::vector<int>{0}) {
    r.description = "rows of " + f.description;
  } else if (f.rank() == 2 && dims == std::vector<int>{1}) {
    r.description = "columns of " + f.description;
  } else {
    std::string d;
    for (int x : dims)
      d += (d.empty() ? "" : ", ") + std::to_string(x);
    r.description = "dims (" + d + ") of " + f.description;
  }
  return r;
}

Fragment drop_dim(const Fragment &f, int dim) {
  std::vector<int> dims;
  for (int d = 0; d < f.rank(); ++d)
    if (d != dim)
      dims.push_back(d);
  return select_dims(f, dims);
}

std::string to_string(const Fragment &f) { return f.description; }

std::string digits_string(const Fragment &f) {
  std::string s = "[" + dims_string(f.shape) + " on " + std::to_string(f.threads) + ":";
  for (const Digit &g : f.digits) {
    s += " ";
    s += g.dim == Digit::Replica ? "rep" : g.dim == Digit::Idle ? "idle" : "d" + std::to_string(g.dim);
    s += (g.thread ? ":t" : ":s") + std::to_string(g.stride) + "x" + std::to_string(g.extent);
  }
  return s + "]";
}

} // namespace tile::ir
