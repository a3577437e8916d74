#include "ir/Printer.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace tile::ir {

namespace {

int precedence(BinaryOp op) {
  switch (op) {
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Mod:
    return 10;
  case BinaryOp::Add:
  case BinaryOp::Sub:
    return 9;
  case BinaryOp::Shl:
  case BinaryOp::Shr:
    return 8;
  case BinaryOp::LT:
  case BinaryOp::LE:
  case BinaryOp::GT:
  case BinaryOp::GE:
    return 7;
  case BinaryOp::EQ:
  case BinaryOp::NE:
    return 6;
  case BinaryOp::BitAnd:
    return 5;
  case BinaryOp::BitXor:
    return 4;
  case BinaryOp::BitOr:
    return 3;
  case BinaryOp::And:
    return 2;
  case BinaryOp::Or:
    return 1;
  case BinaryOp::Min:
  case BinaryOp::Max:
    return 100; // printed as calls
  }
  return 0;
}

std::string format_float(double v, ScalarType t) {
  if (std::isinf(v))
    return std::string(v > 0 ? "" : "-") + "inf:" + name(t);
  if (std::isnan(v))
    return std::string("nan:") + name(t);
  char buf[64];
  std::snprintf(buf, sizeof buf, t == ScalarType::F64 ? "%.17g" : "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  if (t == ScalarType::F32)
    return s + "f";
  if (t == ScalarType::F64)
    return s;
  return std::string(name(t)) + "(" + s + ")";
}

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out + "\"";
}

class Printer {
public:
  std::ostringstream os;
  int indent = 0;

  std::string var_name(const VarNode *v) { return unique(v, v->name); }
  std::string buffer_name(const BufferNode *b) { return unique(b, b->name); }

  void expr(const Expr &e, int parent_prec = 0) {
    switch (e->kind) {
    case ExprKind::IntImm: {
      auto n = e->as<IntImmNode>();
      if (n->type == ScalarType::Bool)
        os << (n->value ? "true" : "false");
      else if (n->type == ScalarType::I32)
        os << n->value;
      else if (is_signed(n->type))
        os << name(n->type) << "(" << n->value << ")";
      else
        os << name(n->type) << "(" << std::uint64_t(n->value) << ")";
      return;
    }
    case ExprKind::FloatImm: {
      auto n = e->as<FloatImmNode>();
      os << format_float(n->value, n->type);
      return;
    }
    case ExprKind::StringImm:
      os << quote(e->as<StringImmNode>()->value);
      return;
    case ExprKind::Var:
      os << var_name(e->as<VarNode>());
      return;
    case ExprKind::Cast: {
      auto n = e->as<CastNode>();
      os << name(n->type) << "(";
      expr(n->value);
      os << ")";
      return;
    }
    case ExprKind::Binary: {
      auto n = e->as<BinaryNode>();
      if (n->op == BinaryOp::Min || n->op == BinaryOp::Max) {
        os << name(n->op) << "(";
        expr(n->a);
        os << ", ";
        expr(n->b);
        os << ")";
        return;
      }
      int p = precedence(n->op);
      bool parens = p <= parent_prec;
      if (parens)
        os << "(";
      expr(n->a, p - 1); // left-associative: an equal-precedence left child needs no parens
      os << " " << name(n->op) << " ";
      expr(n->b, p);
      if (parens)
        os << ")";
      return;
    }
    case ExprKind::Unary: {
      auto n = e->as<UnaryNode>();
      os << name(n->op);
      expr(n->a, 50);
      return;
    }
    case ExprKind::Select: {
      auto n = e->as<SelectNode>();
      os << "select(";
      expr(n->cond);
      os << ", ";
      expr(n->t);
      os << ", ";
      expr(n->f);
      os << ")";
      return;
    }
    case ExprKind::Call: {
      auto n = e->as<CallNode>();
      os << name(n->fn) << "(";
      list(n->args);
      os << ")";
      return;
    }
    case ExprKind::Load: {
      auto n = e->as<LoadNode>();
      os << buffer_name(n->buffer.get()) << "[";
      list(n->indices);
      os << "]";
      return;
    }
    case ExprKind::TensorDim: {
      auto n = e->as<TensorDimNode>();
      os << n->tensor << (n->stride ? ".stride(" : ".size(") << n->dim << ")";
      return;
    }
    case ExprKind::VectorFlag: {
      auto n = e->as<VectorFlagNode>();
      os << "vector_ok(" << buffer_name(n->tensor.get()) << ", " << n->bytes << ")";
      return;
    }
    case ExprKind::Aligned: {
      auto n = e->as<AlignedNode>();
      os << "aligned(";
      address(n->buffer.get(), n->offset);
      os << ", " << n->bytes << ")";
      return;
    }
    }
  }

  /// `b + offset` (an element's address), or `b` for offset 0.
  void address(const BufferNode *b, const Expr &offset) {
    os << buffer_name(b);
    if (is_const_int(offset, 0))
      return;
    os << " + ";
    expr(offset);
  }

  void list(const std::vector<Expr> &v) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (i)
        os << ", ";
      expr(v[i]);
    }
  }

  void region(const Region &r) {
    const BufferNode *b = r.buffer.get();
    bool whole = b->scope != Scope::Global && int(r.tile_dims.size()) == b->rank();
    for (int d = 0; whole && d < b->rank(); ++d)
      whole = is_const_int(r.begin[d], 0) && r.extent[d] == b->extent(d);
    os << buffer_name(b);
    if (whole)
      return;
    os << "[";
    for (int d = 0; d < int(r.begin.size()); ++d) {
      if (d)
        os << ", ";
      expr(r.begin[d]);
      bool tile_dim = false;
      for (int t : r.tile_dims)
        tile_dim |= t == d;
      if (tile_dim)
        os << " +: " << r.extent[d];
    }
    os << "]";
  }

  void line() {
    for (int i = 0; i < indent; ++i)
      os << "  ";
  }

  void block(const Stmt &s) {
    os << " {\n";
    ++indent;
    stmt(s);
    --indent;
    line();
    os << "}";
  }

  /// A tile operation (copy, gemm, fill, reduce, cumsum, atomic, print, assert, annotate_layout). Whether `s` was one.
  bool tile_op(const Stmt &s) {
    switch (s->kind) {
    case StmtKind::Copy: {
      auto n = s->as<CopyNode>();
      os << "copy(";
      region(n->src);
      os << ", ";
      region(n->dst);
      os << ")";
      break;
    }
    case StmtKind::Gemm: {
      auto n = s->as<GemmNode>();
      os << "gemm(";
      region(n->a);
      os << ", ";
      region(n->b);
      os << ", ";
      region(n->c);
      if (n->transpose_a)
        os << ", transpose_a";
      if (n->transpose_b)
        os << ", transpose_b";
      if (n->clear_accum)
        os << ", clear_accum";
      if (n->deferred_wait)
        os << ", deferred_wait";
      if (n->policy != WarpPolicy::Square)
        os << ", policy=" << name(n->policy);
      os << ")";
      if (n->atom)
        os << " on " << n->atom->ir_name(n->a.buffer->dtype, n->b.buffer->dtype);
      break;
    }
    case StmtKind::Fill: {
      auto n = s->as<FillNode>();
      os << "fill(";
      region(n->dst);
      os << ", ";
      expr(n->value);
      os << ")";
      break;
    }
    case StmtKind::Reduce: {
      auto n = s->as<ReduceNode>();
      os << "reduce_" << name(n->reduce_kind) << "(" << buffer_name(n->src.get()) << ", "
         << buffer_name(n->dst.get()) << ", dim=" << n->dim << (n->clear ? "" : ", accumulate") << ")";
      break;
    }
    case StmtKind::Cumsum: {
      auto n = s->as<CumsumNode>();
      os << "cumsum(" << buffer_name(n->src.get()) << ", " << buffer_name(n->dst.get()) << ", dim=" << n->dim
         << (n->reverse ? ", reverse" : "") << ")";
      break;
    }
    case StmtKind::Atomic: {
      auto n = s->as<AtomicNode>();
      if (n->result)
        os << var_name(n->result.get()) << " = ";
      os << "atomic_" << name(n->atomic_kind) << "(";
      region(n->dst);
      os << ", ";
      if (n->compare) {
        expr(n->compare);
        os << ", ";
      }
      if (n->src)
        region(*n->src);
      else
        expr(n->value);
      os << ")";
      break;
    }
    case StmtKind::Print: {
      auto n = s->as<PrintNode>();
      os << "print(";
      list(n->args);
      os << ")";
      break;
    }
    case StmtKind::Assert: {
      auto n = s->as<AssertNode>();
      os << "assert(";
      expr(n->cond);
      os << ", " << quote(n->message) << ")";
      break;
    }
    case StmtKind::AnnotateLayout: {
      auto n = s->as<AnnotateLayoutNode>();
      os << "annotate_layout(" << buffer_name(n->buffer.get()) << ", " << name(n->layout);
      if (n->layout == LayoutKind::Swizzled)
        os << "(" << n->swizzle_bytes << ")";
      os << ")";
      break;
    }
    default:
      return false;
    }
    return true;
  }

  /// A barrier, an mbarrier, a bulk copy or store, a persistent loop, a named barrier, a register budget. Whether `s` was one.
  bool sync_op(const Stmt &s) {
    switch (s->kind) {
    case StmtKind::Barrier:
      os << (s->as<BarrierNode>()->cluster       ? "barrier(whole cluster)"
             : s->as<BarrierNode>()->whole_block ? "barrier(whole block)"
                                                 : "barrier()");
      break;
    case StmtKind::Mbarrier: {
      auto n = s->as<MbarrierNode>();
      static const char *ops[] = {"mbarrier_init", "mbarrier_arrive_expect_tx", "mbarrier_arrive", "mbarrier_wait",
                                  "mbarrier_arrive_warp"};
      os << ops[int(n->op)] << "(" << buffer_name(n->barriers.get()) << "[";
      expr(n->index);
      os << "]";
      if (n->value) {
        os << (n->op == MbarrierOp::Init            ? ", count "
               : n->op == MbarrierOp::Wait          ? ", parity "
               : n->op == MbarrierOp::ArriveCluster ? ", of block "
                                                    : ", bytes ");
        expr(n->value);
      }
      os << ")";
      break;
    }
    case StmtKind::BulkCopy: {
      auto n = s->as<BulkCopyNode>();
      os << "bulk_copy(";
      address(n->dst.get(), n->dst_offset);
      os << " <- tensor_map" << n->map << "[";
      list(n->coords);
      os << "], " << buffer_name(n->barriers.get()) << "[";
      expr(n->barrier_index);
      os << "]";
      if (n->multicast) {
        os << ", to blocks ";
        expr(n->multicast);
      }
      os << ")";
      break;
    }
    case StmtKind::BulkStore: {
      auto n = s->as<BulkStoreNode>();
      os << "bulk_store(tensor_map" << n->map << "[";
      list(n->coords);
      os << "] <- ";
      address(n->src.get(), n->src_offset);
      os << ")";
      break;
    }
    case StmtKind::BulkStoreSync: {
      auto n = s->as<BulkStoreSyncNode>();
      os << (n->op == BulkStoreSyncOp::Commit ? "bulk_store_commit(" : "bulk_store_wait(")
         << buffer_name(n->buffer.get()) << ")";
      break;
    }
    case StmtKind::While: {
      auto n = s->as<WhileNode>();
      os << "while (";
      expr(n->cond);
      os << ")";
      block(n->body);
      break;
    }
    case StmtKind::TileFetch: {
      auto n = s->as<TileFetchNode>();
      os << var_name(n->tile.get()) << " = ";
      if (n->op == TileFetchOp::First)
        os << "first_tile()";
      else
        os << (n->op == TileFetchOp::Publish ? "publish_next_tile(" : "received_tile(") << buffer_name(n->slot.get()) << ")";
      break;
    }
    case StmtKind::IterationSlot: {
      auto n = s->as<IterationSlotNode>();
      if (n->op == IterationSlotOp::Get)
        os << var_name(n->var.get()) << " = ";
      os << (n->op == IterationSlotOp::Put ? "put_iteration(" : "got_iteration(") << buffer_name(n->slots.get()) << "[";
      expr(n->index);
      os << "]";
      if (n->value) {
        os << ", ";
        expr(n->value);
      }
      os << ")";
      break;
    }
    case StmtKind::NamedBarrier: {
      auto n = s->as<NamedBarrierNode>();
      os << (n->arrive ? "named_barrier_arrive(" : "named_barrier_sync(");
      expr(n->id);
      os << ", " << n->threads << " threads)";
      break;
    }
    case StmtKind::RegisterBudget: {
      auto n = s->as<RegisterBudgetNode>();
      os << "registers_" << (n->increase ? "up" : "down") << "_to(" << n->registers << ")";
      break;
    }
    default:
      return false;
    }
    return true;
  }

  /// A statement of the lowered forms: asynchronous copies, vector moves, matrix loads, wgmma, mma. Whether `s` was one.
  bool lowered_op(const Stmt &s) {
    switch (s->kind) {
    case StmtKind::Async:
      os << "async";
      if (int ahead = s->as<AsyncNode>()->ahead)
        os << "(ahead " << ahead << " of " << s->as<AsyncNode>()->stages << ")";
      block(s->as<AsyncNode>()->body);
      break;
    case StmtKind::AsyncCommit:
      os << "async_commit()";
      break;
    case StmtKind::AsyncWait:
      os << "async_wait(" << s->as<AsyncWaitNode>()->pending << ")";
      break;
    case StmtKind::VectorMove: {
      auto n = s->as<VectorMoveNode>();
      os << (n->async ? "async_vector_move(" : "vector_move(");
      address(n->dst.get(), n->dst_offset);
      os << ", ";
      address(n->src.get(), n->src_offset);
      os << ", " << n->bytes << " bytes in " << n->chunk << ")";
      break;
    }
    case StmtKind::MatrixLoad: {
      auto n = s->as<MatrixLoadNode>();
      os << (n->transpose ? "matrix_load_trans(" : "matrix_load(") << buffer_name(n->dst.get()) << "[";
      list(n->dst_regs);
      os << "], ";
      address(n->src.get(), n->src_offset);
      os << ")";
      break;
    }
    case StmtKind::Wgmma: {
      auto n = s->as<WgmmaNode>();
      os << "wgmma_m64n" << n->n << "k" << n->k << "."
         << name(n->a_reg_buffer || !n->a.buffer ? n->operand_type : n->a.buffer->dtype);
      if (!n->a_reg_buffer && n->a.buffer && n->a.buffer->dtype != n->operand_type)
        os << "." << name(n->operand_type);
      os << "(" << buffer_name(n->c.get()) << "[";
      list(n->c_regs);
      os << "] " << "+= ";
      if (n->a_reg_buffer) {
        os << buffer_name(n->a_reg_buffer.get()) << "[";
        list(n->a_regs);
        os << "]";
      }
      for (const DescriptorOperand *d : {&n->a, &n->b}) {
        if (d == &n->a && n->a_reg_buffer)
          continue;
        if (d == &n->b)
          os << " * ";
        os << "desc(";
        address(d->buffer.get(), d->offset);
        os << ", " << (d->mn_major ? "mn-major" : "k-major") << ", swizzle " << d->swizzle_bytes << ", lbo " << d->lbo
           << ", sbo " << d->sbo << ")";
      }
      os << ", accumulate ";
      expr(n->accumulate);
      os << ")";
      break;
    }
    case StmtKind::WarpgroupSync: {
      auto n = s->as<WarpgroupSyncNode>();
      if (n->sync_kind != WarpgroupSyncKind::Wait) {
        os << (n->sync_kind == WarpgroupSyncKind::Fence ? "wgmma_fence()" : "wgmma_commit()");
        break;
      }
      os << "wgmma_wait(" << n->pending;
      for (size_t i = 0; i < n->registers.size(); ++i)
        os << (i ? ", " : "; ") << buffer_name(n->registers[i].get());
      os << ")";
      break;
    }
    case StmtKind::ProxyFence:
      os << "proxy_fence_async_shared()";
      break;
    case StmtKind::Mma: {
      auto n = s->as<MmaNode>();
      os << "mma_m" << n->m << "n" << n->n << "k" << n->k << "." << name(n->operand_type) << "("
         << buffer_name(n->c.get()) << "[";
      list(n->c_regs);
      os << "] += " << buffer_name(n->a.get()) << "[";
      list(n->a_regs);
      os << "] * " << buffer_name(n->b.get()) << "[";
      list(n->b_regs);
      os << "])";
      break;
    }
    default:
      return false;
    }
    return true;
  }

  void stmt(const Stmt &s) {
    if (!s)
      return;
    if (auto n = s->as<SeqNode>()) {
      for (auto &c : n->stmts)
        stmt(c);
      return;
    }
    line();
    switch (s->kind) {
    case StmtKind::Seq:
      break;
    case StmtKind::Declare: {
      auto n = s->as<DeclareNode>();
      os << "var " << var_name(n->var.get()) << ": " << name(n->var->type);
      if (n->init) {
        os << " = ";
        expr(n->init);
      }
      break;
    }
    case StmtKind::Assign: {
      auto n = s->as<AssignNode>();
      os << var_name(n->var.get()) << " = ";
      expr(n->value);
      break;
    }
    case StmtKind::Store: {
      auto n = s->as<StoreNode>();
      os << buffer_name(n->buffer.get()) << "[";
      list(n->indices);
      os << "] = ";
      expr(n->value);
      break;
    }
    case StmtKind::For: {
      auto n = s->as<ForNode>();
      os << "for " << var_name(n->var.get()) << " in " << name(n->for_kind) << "(";
      expr(n->begin);
      os << ", ";
      expr(n->extent);
      if (!is_const_int(n->step, 1)) {
        os << ", step=";
        expr(n->step);
      }
      if (n->for_kind == ForKind::Pipelined)
        os << ", stages=" << n->stages;
      os << ")";
      if (bindings)
        if (auto it = bindings->find(n->var.get()); it != bindings->end())
          os << " bound by " << to_string(it->second);
      block(n->body);
      break;
    }
    case StmtKind::If: {
      auto n = s->as<IfNode>();
      os << "if (";
      expr(n->cond);
      os << ")";
      block(n->then_case);
      if (n->else_case) {
        os << (n->rare_else ? " else (rare)" : " else");
        block(n->else_case);
      }
      break;
    }
    case StmtKind::DeclBuffer: {
      auto n = s->as<DeclBufferNode>();
      const char *scope = n->buffer->view_of ? "view" : name(n->buffer->scope);
      os << scope << " " << buffer_name(n->buffer.get()) << ": " << name(n->buffer->dtype) << "[";
      list(n->buffer->shape);
      os << "]";
      if (n->buffer->view_of) {
        os << " of " << buffer_name(n->buffer->view_of.get()) << " at [";
        list(n->buffer->origin);
        os << "]";
      }
      if (layouts)
        if (auto it = layouts->find(n->buffer.get()); it != layouts->end())
          os << " in registers: " << to_string(it->second);
      if (shared_layouts)
        if (auto it = shared_layouts->find(n->buffer.get()); it != shared_layouts->end())
          os << " " << to_string(it->second);
      if (offsets)
        if (auto it = offsets->find(n->buffer.get()); it != offsets->end())
          os << " at byte " << it->second;
      break;
    }
    default:
      if (!tile_op(s) && !sync_op(s))
        lowered_op(s);
      break;
    }
    os << "\n";
  }

  void kernel(const Kernel &k) {
    os << "kernel " << k.display_name << "(";
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (i)
        os << ", ";
      auto &p = k.params[i];
      if (p.tensor) {
        os << buffer_name(p.tensor.get()) << ": tensor<" << (p.tensor->read_only ? "const " : "")
           << name(p.tensor->dtype) << ", " << p.tensor->rank() << ">";
      } else {
        os << var_name(p.scalar.get()) << ": " << name(p.scalar->type);
      }
    }
    os << ")\n    grid(";
    for (int d = 0; d < k.grid_rank; ++d) {
      if (d)
        os << ", ";
      os << var_name(k.block_index[d].get()) << " < ";
      expr(k.grid[d]);
    }
    os << ") threads(" << k.threads << ")";
    if (k.producer_threads)
      os << " producer_threads(" << k.producer_threads << ")";
    if (k.pair_dim >= 0)
      os << " paired(" << var_name(k.block_index[k.pair_dim].get()) << ", " << var_name(k.pair_group.get()) << ")";
    if (k.blocks_per_sm)
      os << " blocks_per_sm(" << k.blocks_per_sm << ")";
    if (k.swizzle_panel)
      os << " swizzle(" << k.swizzle_panel << ")";
    for (size_t i = 0; i < k.tensor_maps.size(); ++i) {
      const Kernel::TensorMap &m = k.tensor_maps[i];
      os << " tensor_map" << i << "(" << buffer_name(k.params[m.param].tensor.get()) << ", box ";
      for (size_t d = 0; d < m.box.size(); ++d)
        os << (d ? "x" : "") << m.box[d];
      os << ", swizzle " << m.swizzle_bytes << (m.optional ? ", optional" : "") << ")";
    }
    if (k.maps_missing)
      os << " missing_maps(" << var_name(k.maps_missing.get()) << ")";
    if (k.persistent)
      os << " persistent";
    if (k.cluster > 1) {
      os << " cluster(" << k.cluster << ": " << var_name(k.cluster_rank.get()) << " of "
         << var_name(k.cluster_blocks.get()) << ", partner";
      for (int d = 0; d < k.grid_rank; ++d)
        os << " " << var_name(k.partner_index[d].get());
      os << ")";
    }
    if (!k.fallback_of.empty())
      os << " fallback";
    if (!k.unpaired_of.empty())
      os << " unpaired";
    if (k.shared_bytes >= 0)
      os << " shared_bytes(" << k.shared_bytes << ")";
    os << " {\n";
    indent = 1;
    layouts = &k.layouts;
    bindings = &k.bindings;
    shared_layouts = &k.shared_layouts;
    offsets = &k.shared_offsets;
    stmt(k.body);
    indent = 0;
    os << "}\n";
  }

private:
  const LayoutMap *layouts = nullptr;
  const std::map<const VarNode *, Fragment> *bindings = nullptr;
  const std::map<const BufferNode *, SharedLayout> *shared_layouts = nullptr;
  const std::map<const BufferNode *, std::int64_t> *offsets = nullptr;
  std::map<const void *, std::string> names_;
  std::map<std::string, int> used_;
  std::string unique(const void *key, const std::string &base) {
    auto it = names_.find(key);
    if (it != names_.end())
      return it->second;
    int n = used_[base]++;
    std::string s = n ? base + "." + std::to_string(n) : base;
    names_[key] = s;
    return s;
  }
};

} // namespace

std::string to_string(const Expr &e) {
  Printer p;
  p.expr(e);
  return p.os.str();
}
std::string to_string(const Stmt &s) {
  Printer p;
  p.stmt(s);
  return p.os.str();
}
std::string to_string(const Region &r) {
  Printer p;
  p.region(r);
  return p.os.str();
}
std::string to_string(const Kernel &k) {
  Printer p;
  p.kernel(k);
  return p.os.str();
}

} // namespace tile::ir
