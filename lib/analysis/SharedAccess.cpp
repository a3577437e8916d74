#include "analysis/SharedAccess.h"

#include "ir/Visitor.h"

namespace tile::analysis {

using namespace ir;

namespace {

std::int64_t floor_mod(std::int64_t a, std::int64_t m) { return ((a % m) + m) % m; }

/// Signed integers: their arithmetic does not wrap (overflow is undefined), so
/// (v + c1) - (v + c2) is c1 - c2.
bool signed_int(ScalarType t) { return is_integer(t) && is_signed(t); }

bool overlap(const std::set<BufferUse> &a, const std::set<BufferUse> &b) {
  for (auto &x : a)
    for (auto &y : b)
      if (x.buffer == y.buffer && !x.slot.disjoint_from(y.slot))
        return true;
  return false;
}

std::set<BufferUse> shift(const std::set<BufferUse> &uses, const VarNode *var, const Expr &step) {
  auto c = step ? step->as<IntImmNode>() : nullptr;
  std::set<BufferUse> out;
  for (BufferUse u : uses) {
    if (u.slot.var == var) {
      if (c)
        u.slot.offset = floor_mod(u.slot.offset - c->value, u.slot.modulus);
      else
        u.slot = Slot();
    }
    out.insert(u);
  }
  return out;
}

/// `e` as v + c with v in `uniform`, or false.
bool uniform_plus_constant(const Expr &e, const std::set<const VarNode *> &uniform, const VarNode *&v,
                           std::int64_t &c) {
  if (!signed_int(e->type)) // unsigned arithmetic wraps: no such reasoning
    return false;
  if (auto x = e->as<VarNode>(); x && uniform.count(x)) {
    v = x;
    c = 0;
    return true;
  }
  if (auto x = e->as<CastNode>())
    return signed_int(x->value->type) && bits(x->type) >= bits(x->value->type) &&
           uniform_plus_constant(x->value, uniform, v, c);
  auto b = e->as<BinaryNode>();
  if (!b || (b->op != BinaryOp::Add && b->op != BinaryOp::Sub))
    return false;
  if (auto k = b->b->as<IntImmNode>(); k && uniform_plus_constant(b->a, uniform, v, c)) {
    c += b->op == BinaryOp::Add ? k->value : -k->value;
    return true;
  }
  if (auto k = b->a->as<IntImmNode>(); k && b->op == BinaryOp::Add && uniform_plus_constant(b->b, uniform, v, c)) {
    c += k->value;
    return true;
  }
  return false;
}

/// The slot of an access whose first index is `first`.
Slot slot_of(const Expr &first, const std::set<const VarNode *> &uniform) {
  Slot s;
  auto m = first ? first->as<BinaryNode>() : nullptr;
  if (!m || m->op != BinaryOp::Mod || !signed_int(m->type))
    return s;
  auto k = m->b->as<IntImmNode>();
  const VarNode *v = nullptr;
  std::int64_t c = 0;
  if (!k || k->value <= 0 || !uniform_plus_constant(m->a, uniform, v, c))
    return s;
  s.var = v;
  s.modulus = k->value;
  s.offset = floor_mod(c, k->value);
  return s;
}

class Collector : public IRVisitor {
public:
  explicit Collector(const std::set<const VarNode *> &uniform) : uniform_(uniform) {}
  SharedAccess acc;

private:
  const std::set<const VarNode *> &uniform_;

  Slot slot(const std::vector<Expr> &first) const {
    return first.empty() ? Slot() : slot_of(first[0], uniform_);
  }
  Slot slot(const Region &r) const {
    if (r.begin.empty() || r.extent.empty() || r.extent[0] != 1)
      return Slot();
    return slot_of(r.begin[0], uniform_);
  }
  void read(const Buffer &b, Slot s = Slot()) {
    if (is_block_shared(b.get()))
      acc.reads.insert({b.get(), s});
  }
  void write(const Buffer &b, Slot s = Slot()) {
    if (is_block_shared(b.get()))
      acc.writes.insert({b.get(), s});
  }
  void read(const Region &r) { read(r.buffer, slot(r)); }
  void write(const Region &r) { write(r.buffer, slot(r)); }

  void visit_Load(const LoadNode *n) override {
    read(n->buffer, slot(n->indices));
    IRVisitor::visit_Load(n);
  }
  void visit_Store(const StoreNode *n) override {
    write(n->buffer, slot(n->indices));
    IRVisitor::visit_Store(n);
  }
  void visit_Copy(const CopyNode *n) override {
    read(n->src);
    write(n->dst);
    IRVisitor::visit_Copy(n);
  }
  void visit_Gemm(const GemmNode *n) override {
    read(n->a);
    read(n->b);
    read(n->c);
    write(n->c);
    IRVisitor::visit_Gemm(n);
  }
  void visit_Fill(const FillNode *n) override {
    write(n->dst);
    IRVisitor::visit_Fill(n);
  }
  void visit_Reduce(const ReduceNode *n) override {
    read(n->src);
    read(n->dst);
    write(n->dst);
  }
  void visit_Cumsum(const CumsumNode *n) override {
    read(n->src);
    write(n->dst);
  }
  // A bulk store reads its tile asynchronously, until the wait (both reads here, so that
  // the tile's writes are ordered before the one and after the other).
  void visit_BulkStore(const BulkStoreNode *n) override {
    read(n->src);
    IRVisitor::visit_BulkStore(n);
  }
  void visit_BulkStoreSync(const BulkStoreSyncNode *n) override { read(n->buffer); }
  void visit_Atomic(const AtomicNode *n) override {
    if (n->src)
      read(n->src->buffer);
    IRVisitor::visit_Atomic(n);
  }
};

} // namespace

bool Slot::disjoint_from(const Slot &o) const {
  return !whole() && var == o.var && modulus == o.modulus && offset != o.offset;
}

void SharedAccess::merge(const SharedAccess &o) {
  reads.insert(o.reads.begin(), o.reads.end());
  writes.insert(o.writes.begin(), o.writes.end());
}

bool SharedAccess::conflicts_with(const SharedAccess &later) const {
  return overlap(writes, later.reads) || overlap(writes, later.writes) || overlap(reads, later.writes);
}

SharedAccess SharedAccess::shifted(const VarNode *var, const Expr &step) const {
  SharedAccess out;
  out.reads = shift(reads, var, step);
  out.writes = shift(writes, var, step);
  return out;
}

bool is_block_shared(const BufferNode *b) { return b->scope == Scope::Shared || b->scope == Scope::Fragment; }

SharedAccess shared_access(const Stmt &s, const std::set<const VarNode *> &uniform) {
  Collector c(uniform);
  c.visit(s);
  return c.acc;
}

} // namespace tile::analysis
