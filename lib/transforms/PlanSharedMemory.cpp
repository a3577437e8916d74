#include "transforms/PlanSharedMemory.h"

#include <algorithm>
#include <set>

#include "analysis/SharedAccess.h"
#include "ir/SharedLayout.h"
#include "ir/Visitor.h"

namespace tile::transforms {

using namespace ir;

namespace {

struct Life {
  const BufferNode *buffer;
  std::int64_t bytes = 0;
  int first = -1, last = -1; // top-level statements that touch it; -1: none
  bool async = false;        // filled by asynchronous copies
  std::int64_t offset = 0;
  std::int64_t align = 1;    // its start a multiple of this
  std::int64_t stride = 0;   // a paired kernel's buffer with a copy per group: bytes between them
};

bool may_share(const Life &a, const Life &b) {
  if (a.async || b.async || a.first < 0 || b.first < 0)
    return false;
  return a.last < b.first || b.last < a.first;
}

struct Placement {
  std::vector<Life> lives;
  std::int64_t total = 0;
};

/// Places `k`'s shared buffers under its current shared layouts: first fit in declaration
/// order, buffers whose lives do not overlap (and that no asynchronous copy fills) sharing
/// bytes. `top` are the body's top-level statements.
Placement place(const Kernel &k, const std::vector<Stmt> &top, std::int64_t align) {
  // The buffers, in declaration order.
  std::vector<Life> lives;
  std::map<const BufferNode *, size_t> index;
  for_each_node(k.body, nullptr, [&](const Stmt &s) {
    if (auto d = s->as<DeclBufferNode>(); d && analysis::is_block_shared(d->buffer.get()) && !index.count(d->buffer.get())) {
      index[d->buffer.get()] = lives.size();
      Life l{d->buffer.get(), k.storage_elements(d->buffer.get()) * bytes(d->buffer->dtype)};
      l.align = align;
      if (auto sl = k.shared_layouts.find(d->buffer.get()); sl != k.shared_layouts.end())
        l.align = std::max<std::int64_t>(align, sl->second.alignment);
      // A paired kernel's buffers other than those both groups use: one copy per group, the
      // second on the first's alignment.
      if (k.pair_dim >= 0 && !k.pair_common.count(d->buffer.get()) && l.bytes > 0) {
        l.stride = (l.bytes + l.align - 1) / l.align * l.align;
        l.bytes = 2 * l.stride;
      }
      lives.push_back(l);
    }
  });
  for_each_node(k.body, nullptr, [&](const Stmt &s) {
    if (auto a = s->as<AsyncNode>())
      for (auto &u : analysis::shared_access(a->body).writes)
        if (auto it = index.find(u.buffer); it != index.end())
          lives[it->second].async = true;
  });
  for (int i = 0; i < int(top.size()); ++i) {
    const analysis::SharedAccess acc = analysis::shared_access(top[i]);
    std::set<const BufferNode *> touched;
    for (auto &u : acc.reads)
      touched.insert(u.buffer);
    for (auto &u : acc.writes)
      touched.insert(u.buffer);
    for (const BufferNode *b : touched)
      if (auto it = index.find(b); it != index.end()) {
        Life &l = lives[it->second];
        l.first = l.first < 0 ? i : l.first;
        l.last = i;
      }
  }

  // First fit in declaration order: the lowest aligned offset whose bytes no placed buffer
  // it may not share with uses.
  std::int64_t total = 0;
  for (size_t i = 0; i < lives.size(); ++i) {
    Life &l = lives[i];
    std::int64_t offset = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (size_t j = 0; j < i; ++j) {
        const Life &p = lives[j];
        if (may_share(l, p) || p.bytes == 0 || l.bytes == 0)
          continue;
        if (offset < p.offset + p.bytes && p.offset < offset + l.bytes) {
          offset = (p.offset + p.bytes + l.align - 1) / l.align * l.align;
          moved = true;
        }
      }
    }
    l.offset = offset;
    total = std::max(total, offset + l.bytes);
  }
  return {std::move(lives), total};
}

} // namespace

Kernel plan_shared_memory(const Kernel &kernel, const Target &target) {
  Kernel k = kernel;
  const std::int64_t align = std::max<std::int64_t>(target.shared_alignment, 1);
  std::vector<Stmt> top;
  if (auto q = k.body->as<SeqNode>())
    top = q->stmts;
  else
    top = {k.body};
  std::vector<int> barriers; // top-level indices of barriers
  for (int i = 0; i < int(top.size()); ++i)
    if (top[i]->as<BarrierNode>())
      barriers.push_back(i);

  Placement placed = place(k, top, align);
  // Rows padded against bank conflicts (infer-layout) that make the block need more than the
  // target gives: the rows swizzled instead, which spreads them over the banks as well in
  // their own bytes.
  if (target.max_shared_bytes > 0 && placed.total > target.max_shared_bytes) {
    Kernel dense = k;
    std::vector<const BufferNode *> swizzled;
    for (auto &[b, l] : dense.shared_layouts) {
      const std::int64_t cols = b->extent(b->rank() - 1);
      if (l.swizzle_bytes != 0 || l.slab != 0 || l.pitch == cols)
        continue;
      if (const int s = fit_swizzle(*b, cols, 128)) {
        l = SharedLayout{cols, s};
        swizzled.push_back(b);
      }
    }
    Placement again = place(dense, top, align);
    if (!swizzled.empty() && again.total <= target.max_shared_bytes) {
      for (const BufferNode *b : swizzled)
        dense.remarks.push_back({b->loc, "shared '" + b->name + "': " + to_string(dense.shared_layouts[b]) +
                                             " instead of " + to_string(k.shared_layouts[b]) +
                                             ", so that the block's " + std::to_string(again.total) +
                                             " bytes fit the " + std::to_string(target.max_shared_bytes) +
                                             " it may have (padded: " + std::to_string(placed.total) + ")"});
      k = std::move(dense);
      placed = std::move(again);
    }
  }
  std::vector<Life> &lives = placed.lives;
  const std::int64_t total = placed.total;

  // A barrier between two buffers that share bytes, where none is: before the first
  // statement of the later one.
  std::set<int> add_before;
  for (size_t i = 0; i < lives.size(); ++i)
    for (size_t j = 0; j < lives.size(); ++j) {
      const Life &a = lives[i], &b = lives[j];
      if (i == j || !may_share(a, b) || a.last >= b.first || a.bytes == 0 || b.bytes == 0)
        continue;
      if (!(a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes))
        continue;
      k.shared_reused.insert(a.buffer);
      k.shared_reused.insert(b.buffer);
      const bool separated = std::any_of(barriers.begin(), barriers.end(), [&](int x) { return a.last < x && x < b.first; });
      if (!separated)
        add_before.insert(b.first);
    }
  if (!add_before.empty()) {
    std::vector<Stmt> body;
    for (int i = 0; i < int(top.size()); ++i) {
      if (add_before.count(i))
        body.push_back(barrier());
      body.push_back(top[i]);
    }
    k.body = seq(body);
  }
  k.pair_stride.clear();
  for (const Life &l : lives) {
    k.shared_offsets[l.buffer] = l.offset;
    if (l.stride > 0)
      k.pair_stride[l.buffer] = l.stride;
  }
  k.shared_bytes = total;
  return k;
}

} // namespace tile::transforms
