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

Expr shared_offset(const BufferNode &b, const SharedLayout *l, const std::vector<Expr> &idx) {
  const int rank = b.rank();
  const std::int64_t pitch = l ? l->pitch : b.extent(rank - 1);
  Expr off;
  std::int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    Expr i = idx[d];
    if (d == rank - 1 && l && l->swizzle_bytes && rank >= 2) {
      // col -> ((col / v) ^ (row % (S / 16))) * v + col % v, v the elements of a chunk.
      const ScalarType t = i->type;
      const std::int64_t v = swizzle_chunk_elements(b), phases = l->swizzle_bytes / 16;
      Expr chunk = v == 1 ? i : div(i, int_imm(v, t));
      Expr phase = binary(BinaryOp::Mod, cast(t, idx[rank - 2]), int_imm(phases, t));
      Expr moved = binary(BinaryOp::BitXor, chunk, phase);
      i = v == 1 ? moved : add(mul(moved, int_imm(v, t)), binary(BinaryOp::Mod, i, int_imm(v, t)));
    }
    Expr term = mul(i, int_imm(stride, i->type));
    off = off ? add(term, off) : term;
    stride *= d == rank - 1 ? pitch : b.extent(d);
  }
  return off ? off : int_imm(0);
}

std::int64_t shared_offset(const BufferNode &b, const SharedLayout *l, const std::vector<std::int64_t> &idx) {
  const int rank = b.rank();
  const std::int64_t pitch = l ? l->pitch : b.extent(rank - 1);
  std::int64_t off = 0, stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    std::int64_t i = idx[d];
    if (d == rank - 1 && l && l->swizzle_bytes && rank >= 2) {
      const std::int64_t v = swizzle_chunk_elements(b), phases = l->swizzle_bytes / 16;
      i = ((i / v) ^ (idx[rank - 2] % phases)) * v + i % v;
    }
    off += i * stride;
    stride *= d == rank - 1 ? pitch : b.extent(d);
  }
  return off;
}

std::int64_t shared_storage_elements(const BufferNode &b, const SharedLayout *l) {
  std::int64_t n = l ? l->pitch : b.extent(b.rank() - 1);
  for (int d = 0; d + 1 < b.rank(); ++d)
    n *= b.extent(d);
  return n;
}

std::string to_string(const SharedLayout &l) {
  std::string s = "rows of " + std::to_string(l.pitch);
  if (l.swizzle_bytes)
    s += " swizzled " + std::to_string(l.swizzle_bytes);
  return s;
}

} // namespace tile::ir
