#include "transforms/PlanSharedMemory.h"

#include <algorithm>
#include <set>

#include "analysis/SharedAccess.h"
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
};

} // namespace

Kernel plan_shared_memory(const Kernel &kernel, const Target &target) {
  Kernel k = kernel;
  const std::int64_t align = std::max<std::int64_t>(target.shared_alignment, 1);
  std::vector<Stmt> top;
  if (auto q = k.body->as<SeqNode>())
    top = q->stmts;
  else
    top = {k.body};

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
      lives.push_back(l);
    }
  });
  for_each_node(k.body, nullptr, [&](const Stmt &s) {
    if (auto a = s->as<AsyncNode>())
      for (auto &u : analysis::shared_access(a->body).writes)
        if (auto it = index.find(u.buffer); it != index.end())
          lives[it->second].async = true;
  });
  std::vector<int> barriers; // top-level indices of barriers
  for (int i = 0; i < int(top.size()); ++i) {
    if (top[i]->as<BarrierNode>())
      barriers.push_back(i);
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
  auto may_share = [](const Life &a, const Life &b) {
    if (a.async || b.async || a.first < 0 || b.first < 0)
      return false;
    return a.last < b.first || b.last < a.first;
  };

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
  for (const Life &l : lives)
    k.shared_offsets[l.buffer] = l.offset;
  k.shared_bytes = total;
  return k;
}

} // namespace tile::transforms
