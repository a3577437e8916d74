#include "ir/SharedLayout.h"

#include "ir/IR.h"

#include <algorithm>

namespace tile::ir {

std::int64_t swizzle_chunk_elements(const BufferNode &b) { return std::max<std::int64_t>(16 / bytes(b.dtype), 1); }

int fit_swizzle(const BufferNode &b, std::int64_t pitch, int requested) {
  if (b.rank() < 2 || bytes(b.dtype) > 16)
    return 0;
  const std::int64_t row_bytes = pitch * bytes(b.dtype);
  for (int s = 128; s >= 32; s /= 2)
    if (s <= requested && row_bytes % s == 0)
      return s;
  return 0;
}

namespace {

/// Column `col` of row `row` where the swizzle of `l` puts it: col -> ((col / v) ^ (line %
/// (S / 16))) * v + col % v, v the elements of a 16-byte chunk, line the row's 128-byte
/// line (rows narrower than 128 bytes share one: line = row / (128 / row bytes); else the
/// row).
Expr swizzled_column(const BufferNode &b, const SharedLayout &l, const Expr &col, const Expr &row) {
  const ScalarType t = col->type;
  const std::int64_t v = swizzle_chunk_elements(b), phases = l.swizzle_bytes / 16;
  const std::int64_t row_bytes = l.pitch * bytes(b.dtype), rows_a_line = row_bytes < 128 ? 128 / row_bytes : 1;
  Expr chunk = v == 1 ? col : div(col, int_imm(v, t));
  Expr line = rows_a_line > 1 ? div(cast(t, row), int_imm(rows_a_line, t)) : cast(t, row);
  Expr phase = binary(BinaryOp::Mod, line, int_imm(phases, t));
  Expr moved = binary(BinaryOp::BitXor, chunk, phase);
  return v == 1 ? moved : add(mul(moved, int_imm(v, t)), binary(BinaryOp::Mod, col, int_imm(v, t)));
}

/// The offset of (row, col) in one rows x pitch tile laid out by `l` (no slabs).
Expr shared_offset_2d(const BufferNode &b, const SharedLayout *l, const Expr &row, const Expr &col) {
  Expr c = l && l->swizzle_bytes ? swizzled_column(b, *l, col, row) : col;
  return add(mul(row, int_imm(l->pitch, row->type)), c);
}

} // namespace

Expr shared_offset(const BufferNode &b, const SharedLayout *l, const std::vector<Expr> &idx) {
  const int rank = b.rank();
  if (l && l->slab && rank >= 2) {
    // Slab c / W, then the element (row, c % W) of a rows x W tile, the outer dimensions
    // holding whole tiles.
    const std::int64_t W = l->slab, R = b.extent(rank - 2), C = b.extent(rank - 1);
    const Expr &c = idx[rank - 1];
    const ScalarType t = c->type;
    SharedLayout inner{W, l->swizzle_bytes, 0};
    Expr off = add(mul(div(c, int_imm(W, t)), int_imm(R * W, t)),
                   shared_offset_2d(b, &inner, idx[rank - 2], binary(BinaryOp::Mod, c, int_imm(W, t))));
    std::int64_t stride = R * C;
    for (int d = rank - 3; d >= 0; --d) {
      off = add(mul(idx[d], int_imm(stride, idx[d]->type)), off);
      stride *= b.extent(d);
    }
    return off;
  }
  const std::int64_t pitch = l ? l->pitch : b.extent(rank - 1);
  Expr off;
  std::int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    Expr i = idx[d];
    if (d == rank - 1 && l && l->swizzle_bytes && rank >= 2)
      i = swizzled_column(b, *l, i, idx[rank - 2]);
    Expr term = mul(i, int_imm(stride, i->type));
    off = off ? add(term, off) : term;
    stride *= d == rank - 1 ? pitch : b.extent(d);
  }
  return off ? off : int_imm(0);
}

std::int64_t shared_offset(const BufferNode &b, const SharedLayout *l, const std::vector<std::int64_t> &idx) {
  std::vector<Expr> e;
  for (std::int64_t i : idx)
    e.push_back(int_imm(i, ScalarType::I64));
  auto v = as_const_int(shared_offset(b, l, e));
  return v ? *v : -1;
}

std::int64_t shared_storage_elements(const BufferNode &b, const SharedLayout *l) {
  std::int64_t n = l && !l->slab ? l->pitch : b.extent(b.rank() - 1);
  for (int d = 0; d + 1 < b.rank(); ++d)
    n *= b.extent(d);
  return n;
}

std::string to_string(const SharedLayout &l) {
  std::string s = "rows of " + std::to_string(l.pitch);
  if (l.swizzle_bytes)
    s += " swizzled " + std::to_string(l.swizzle_bytes);
  if (l.slab)
    s += " in slabs of " + std::to_string(l.slab) + " columns";
  return s;
}

} // namespace tile::ir
