// How a tile lives in shared memory: row-major, each row of the last dimension padded to
// `pitch` elements, and optionally its 16-byte chunks XOR-swizzled: within each span of
// `swizzle_bytes` = S bytes of a row, chunk c of row r is stored at chunk c ^ (line % (S /
// 16)), where line is the row's 128-byte line: r / (128 / row bytes) for rows narrower than
// 128 bytes, else r. Rows padded by a 16-byte unit, or a swizzle, spread the eight rows
// ldmatrix reads at once over the banks. For rows of exactly S bytes (slabs of S bytes, for
// wider tiles) from a multiple of 8 S bytes, this is the S-byte swizzle of Hopper's bulk
// tensor copy and wgmma (which XOR address bits 4 to 3 + log2(S / 16) with bits 7 on).
//
// The one formula for a shared element's place: the codegens print it (targets/common
// CEmitter::offset), lower-mma builds ldmatrix's addresses from it, and the unit tests
// evaluate it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tile::ir {

struct ExprNode;
struct BufferNode;
using Expr = std::shared_ptr<const ExprNode>;

struct SharedLayout {
  std::int64_t pitch = 0; // elements from one row to the next (>= the last dimension)
  int swizzle_bytes = 0;  // 0, or 32, 64 or 128
  /// 0, or the last dimension split into slabs of this many columns, each stored whole
  /// (all its rows, `pitch` = `slab` elements apart) before the next: the layout Hopper's
  /// bulk tensor copies write for boxes of `slab` columns, and wgmma's operands whose
  /// contiguous dimension is wider than a swizzle span. Rank 2 or more; the dimensions
  /// outside the rows (pipeline stages) hold whole tiles.
  std::int64_t slab = 0;
  /// 0, or the bytes the tile's start (and each slab's) must be a multiple of, past the
  /// target's shared alignment (1024 for the hardware's 128-byte swizzle).
  int alignment = 0;
  bool operator==(const SharedLayout &o) const {
    return pitch == o.pitch && swizzle_bytes == o.swizzle_bytes && slab == o.slab && alignment == o.alignment;
  }
};

/// Elements of `b` that the `swizzle_bytes` swizzle moves as one (16 bytes' worth).
std::int64_t swizzle_chunk_elements(const BufferNode &b);

/// The largest swizzle of at most `requested` bytes (32, 64 or 128) that `b` can take: its
/// rows (the last dimension, `pitch` elements) a whole number of spans, an element at most
/// 16 bytes, rank 2 or more. 0 when none can.
int fit_swizzle(const BufferNode &b, std::int64_t pitch, int requested);

/// The offset, in elements, of `b`'s element at `idx` under `l` (null: dense row-major).
/// Indices keep their type; the constants take it.
Expr shared_offset(const BufferNode &b, const SharedLayout *l, const std::vector<Expr> &idx);

/// The same with constant indices (for tests).
std::int64_t shared_offset(const BufferNode &b, const SharedLayout *l, const std::vector<std::int64_t> &idx);

/// Elements `b`'s storage holds under `l` (null: its size).
std::int64_t shared_storage_elements(const BufferNode &b, const SharedLayout *l);

std::string to_string(const SharedLayout &l);

} // namespace tile::ir
