#include "analysis/FragmentPressure.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "ir/Visitor.h"

namespace tile::analysis {

using namespace ir;

namespace {

/// The fragments a statement reads, and those it writes whole without reading them first.
struct Uses {
  std::set<const BufferNode *> reads, overwrites;
  bool elementwise = false; // a copy or a loop (parallel: element by element)
};

Uses uses_of(const Stmt &s) {
  Uses u;
  u.elementwise = s->as<CopyNode>() || s->as<ForNode>();
  std::set<const BufferNode *> writes;
  // (Only fragments count: a tensor's shape is known at run time.)
  auto whole = [](const Region &r) {
    return r.buffer->scope != Scope::Fragment || r.num_elements() == r.buffer->num_elements();
  };
  for_each_node(
      s,
      [&](const Expr &x) {
        if (auto l = x->as<LoadNode>())
          u.reads.insert(l->buffer.get());
      },
      [&](const Stmt &x) {
        if (auto st = x->as<StoreNode>()) {
          writes.insert(st->buffer.get()); // (perhaps of some elements: the others live on)
          u.reads.insert(st->buffer.get());
        } else if (auto c = x->as<CopyNode>()) {
          u.reads.insert(c->src.buffer.get());
          if (!whole(c->dst))
            u.reads.insert(c->dst.buffer.get());
          writes.insert(c->dst.buffer.get());
        } else if (auto g = x->as<GemmNode>()) {
          u.reads.insert({g->a.buffer.get(), g->b.buffer.get()});
          if (!g->clear_accum)
            u.reads.insert(g->c.buffer.get());
          writes.insert(g->c.buffer.get());
        } else if (auto f = x->as<FillNode>()) {
          if (!whole(f->dst))
            u.reads.insert(f->dst.buffer.get());
          writes.insert(f->dst.buffer.get());
        } else if (auto r = x->as<ReduceNode>()) {
          u.reads.insert(r->src.get());
          if (!r->clear)
            u.reads.insert(r->dst.get());
          writes.insert(r->dst.get());
        } else if (auto c = x->as<CumsumNode>()) {
          u.reads.insert(c->src.get());
          writes.insert(c->dst.get());
        }
      });
  for (const BufferNode *b : writes)
    if (!u.reads.count(b))
      u.overwrites.insert(b);
  return u;
}

} // namespace

std::int64_t fragment_words_live(const Stmt &body, const LayoutMap &layouts) {
  // The statements in order, each top-level loop's body expanded; `loops` the first and
  // last positions of each loop, `loop_of[i]` those of the loop statement i is in, or
  // {-1, -1}.
  std::vector<Uses> at;
  std::vector<std::pair<int, int>> loops, loop_of;
  auto top = [](const Stmt &s) {
    auto seq = s->as<SeqNode>();
    return seq ? seq->stmts : std::vector<Stmt>{s};
  };
  for (const Stmt &s : top(body)) {
    auto f = s->as<ForNode>();
    if (!f) {
      at.push_back(uses_of(s));
      loop_of.push_back({-1, -1});
      continue;
    }
    const int first = int(at.size());
    for (const Stmt &x : top(f->body))
      at.push_back(uses_of(x));
    loops.push_back({first, int(at.size()) - 1});
    loop_of.resize(at.size(), loops.back());
  }
  // Each fragment's interval of positions: from its first use to its last.
  struct Life {
    int first = -1, last = -1;
    bool read_first = false; // its first use may read it
  };
  std::map<const BufferNode *, Life> life;
  for (int i = 0; i < int(at.size()); ++i)
    for (const auto *set : {&at[i].reads, &at[i].overwrites})
      for (const BufferNode *b : *set) {
        if (!layouts.count(b))
          continue;
        Life &l = life[b];
        if (l.first < 0) {
          l.first = i;
          l.read_first = at[i].reads.count(b) > 0;
        }
        l.last = std::max(l.last, i);
      }
  // A fragment used in a loop lives through all of it where it is also used outside it
  // or its first use in the loop may read what the last iteration left.
  for (auto &[b, l] : life) {
    const auto [lo, hi] = loop_of[size_t(l.first)];
    const bool outside = lo >= 0 && (l.last > hi);
    if (lo >= 0 && (outside || l.read_first))
      l.last = std::max(l.last, hi);
    for (const auto [a, z] : loops)
      if (l.first < a && l.last >= a) // used before a loop and in or after it
        l.last = std::max(l.last, z);
  }
  auto words = [&](const BufferNode *b) {
    const Fragment &f = layouts.at(b);
    return (f.slots() * bytes(b->dtype) + 3) / 4;
  };
  // At each statement: the fragments live across it, and those it reads last and writes
  // first: both, or in a copy or a loop the larger (an element-wise conversion frees its
  // source as it fills its destination).
  std::int64_t most = 0;
  for (int i = 0; i < int(at.size()); ++i) {
    std::int64_t across = 0, ending = 0, starting = 0;
    for (auto &[b, l] : life) {
      const bool used = at[size_t(i)].reads.count(b) || at[size_t(i)].overwrites.count(b);
      if (l.first < i && (l.last > i || (l.last == i && !used))) // (carried to a loop's end)
        across += words(b);
      else if (l.first < i && l.last == i)
        ending += words(b);
      else if (l.first == i && l.last > i)
        starting += words(b);
      else if (l.first == i && l.last == i)
        starting = std::max(starting, words(b));
    }
    most = std::max(most, across + (at[size_t(i)].elementwise ? std::max(ending, starting) : ending + starting));
  }
  return most;
}

} // namespace tile::analysis
