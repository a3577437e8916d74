#include "analysis/SharedAccess.h"

#include "ir/Visitor.h"

namespace tile::analysis {

using namespace ir;

void SharedAccess::merge(const SharedAccess &o) {
  reads.insert(o.reads.begin(), o.reads.end());
  writes.insert(o.writes.begin(), o.writes.end());
}

bool SharedAccess::conflicts_with(const SharedAccess &later) const {
  for (auto *b : writes)
    if (later.reads.count(b) || later.writes.count(b))
      return true;
  for (auto *b : reads)
    if (later.writes.count(b))
      return true;
  return false;
}

bool is_block_shared(const BufferNode *b) { return b->scope == Scope::Shared || b->scope == Scope::Fragment; }

namespace {
class Collector : public IRVisitor {
public:
  SharedAccess acc;

private:
  void read(const Buffer &b) {
    if (is_block_shared(b.get()))
      acc.reads.insert(b.get());
  }
  void write(const Buffer &b) {
    if (is_block_shared(b.get()))
      acc.writes.insert(b.get());
  }
  void visit_Load(const LoadNode *n) override {
    read(n->buffer);
    IRVisitor::visit_Load(n);
  }
  void visit_Store(const StoreNode *n) override {
    write(n->buffer);
    IRVisitor::visit_Store(n);
  }
  void visit_Copy(const CopyNode *n) override {
    read(n->src.buffer);
    write(n->dst.buffer);
    IRVisitor::visit_Copy(n);
  }
  void visit_Gemm(const GemmNode *n) override {
    read(n->a.buffer);
    read(n->b.buffer);
    read(n->c.buffer);
    write(n->c.buffer);
    IRVisitor::visit_Gemm(n);
  }
  void visit_Fill(const FillNode *n) override {
    write(n->dst.buffer);
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
  void visit_Atomic(const AtomicNode *n) override {
    if (n->src)
      read(n->src->buffer);
    IRVisitor::visit_Atomic(n);
  }
};
} // namespace

SharedAccess shared_access(const Stmt &s) {
  Collector c;
  c.visit(s);
  return c.acc;
}

} // namespace tile::analysis
