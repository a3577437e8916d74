#include "ir/Verifier.h"

#include <algorithm>
#include <set>

#include "ir/Printer.h"
#include "ir/Visitor.h"

namespace tile::ir {

namespace {

class Verifier : public IRVisitor {
public:
  std::vector<std::string> problems;
  std::vector<std::set<const VarNode *>> vars{1};
  std::vector<std::set<const BufferNode *>> buffers{1};
  const LayoutMap *layouts = nullptr;
  const Kernel *kernel = nullptr;

  bool var_in_scope(const VarNode *v) const {
    for (auto &s : vars)
      if (s.count(v))
        return true;
    return false;
  }
  bool buffer_in_scope(const BufferNode *b) const {
    for (auto &s : buffers)
      if (s.count(b))
        return true;
    return false;
  }
  void fail(const std::string &s) { problems.push_back(s); }

  void check_buffer(const Buffer &b, const char *where) {
    if (!buffer_in_scope(b.get()))
      fail(std::string(where) + " of buffer '" + b->name + "' outside its scope");
  }
  void check_indices(const Buffer &b, const std::vector<Expr> &idx, const char *where) {
    check_buffer(b, where);
    if (int(idx.size()) != b->rank())
      fail(std::string(where) + " of '" + b->name + "' with " + std::to_string(idx.size()) +
           " indices, the buffer has rank " + std::to_string(b->rank()));
    for (auto &i : idx)
      if (!is_integer(i->type))
        fail(std::string(where) + " of '" + b->name + "' with a non-integer index " + to_string(i));
  }
  void check_region(const Region &r, const char *op) {
    check_buffer(r.buffer, op);
    if (int(r.begin.size()) != r.buffer->rank() || r.extent.size() != r.begin.size())
      fail(std::string(op) + ": region of '" + r.buffer->name + "' does not match its rank");
    for (size_t i = 0; i < r.tile_dims.size(); ++i)
      if (r.tile_dims[i] < 0 || r.tile_dims[i] >= r.buffer->rank() || (i && r.tile_dims[i] <= r.tile_dims[i - 1]))
        fail(std::string(op) + ": bad tile dimensions of region of '" + r.buffer->name + "'");
    for (size_t d = 0; d < r.extent.size(); ++d) {
      bool tile_dim = false;
      for (int t : r.tile_dims)
        tile_dim |= t == int(d);
      if (!tile_dim && r.extent[d] != 1)
        fail(std::string(op) + ": fixed dimension " + std::to_string(d) + " of '" + r.buffer->name +
             "' has extent " + std::to_string(r.extent[d]));
    }
    IRVisitor::visit(r);
  }
  void check_local_buffer(const Buffer &b, const char *op) {
    check_buffer(b, op);
    if (b->scope == Scope::Global)
      fail(std::string(op) + " needs a shared, fragment or local buffer, not tensor '" + b->name + "'");
  }

  void visit_Var(const VarNode *n) override {
    if (!var_in_scope(n))
      fail("use of variable '" + n->name + "' outside its scope");
  }
  void visit_Load(const LoadNode *n) override {
    check_indices(n->buffer, n->indices, "load");
    IRVisitor::visit_Load(n);
  }
  void visit_Seq(const SeqNode *n) override {
    vars.emplace_back();
    buffers.emplace_back();
    IRVisitor::visit_Seq(n);
    vars.pop_back();
    buffers.pop_back();
  }
  void visit_Declare(const DeclareNode *n) override {
    IRVisitor::visit_Declare(n);
    vars.back().insert(n->var.get());
  }
  void visit_Assign(const AssignNode *n) override {
    if (!var_in_scope(n->var.get()))
      fail("assignment to undeclared variable '" + n->var->name + "'");
    IRVisitor::visit_Assign(n);
  }
  void visit_Store(const StoreNode *n) override {
    check_indices(n->buffer, n->indices, "store");
    if (n->buffer->read_only)
      fail("store to read-only tensor '" + n->buffer->name + "'");
    IRVisitor::visit_Store(n);
  }
  void visit_VectorMove(const VectorMoveNode *n) override {
    check_buffer(n->dst, "vector move");
    check_buffer(n->src, "vector move");
    if (n->dst->read_only)
      fail("vector move into read-only tensor '" + n->dst->name + "'");
    if (n->dst->dtype != n->src->dtype)
      fail("vector move between '" + n->src->name + "' and '" + n->dst->name + "' of different element types");
    if (n->chunk <= 0 || (n->chunk & (n->chunk - 1)) != 0 || n->bytes <= 0 || n->bytes % n->chunk != 0)
      fail("vector move of " + std::to_string(n->bytes) + " bytes in chunks of " + std::to_string(n->chunk));
    if (n->async && (n->src->scope != Scope::Global || n->dst->scope != Scope::Shared))
      fail("asynchronous vector move from '" + n->src->name + "' to '" + n->dst->name +
           "': only from a tensor into shared memory");
    IRVisitor::visit_VectorMove(n);
  }
  void visit_MatrixLoad(const MatrixLoadNode *n) override {
    check_buffer(n->dst, "matrix load");
    check_buffer(n->src, "matrix load");
    if (n->dst->scope != Scope::Local || n->dst->dtype != ScalarType::U32)
      fail("matrix load into '" + n->dst->name + "', which is not a local buffer of u32 registers");
    if (n->src->scope == Scope::Global || n->src->scope == Scope::Local || bytes(n->src->dtype) > 2)
      fail("matrix load from '" + n->src->name + "', which is not a shared tile of 8- or 16-bit elements");
    if (n->transpose && bytes(n->src->dtype) != 2)
      fail("transposing matrix load from '" + n->src->name + "', whose elements are not 16-bit");
    if (n->dst_regs.size() != 1 && n->dst_regs.size() != 2 && n->dst_regs.size() != 4)
      fail("matrix load of " + std::to_string(n->dst_regs.size()) + " matrices (1, 2 or 4)");
    IRVisitor::visit_MatrixLoad(n);
  }
  void visit_WarpgroupSync(const WarpgroupSyncNode *n) override {
    for (const Buffer &b : n->registers) {
      check_buffer(b, "wgmma wait");
      // (Fragments until lower-fragments: warp-specialize places the waits of the gemms it
      // defers.)
      if (b->scope != Scope::Fragment && (b->scope != Scope::Local || b->rank() != 1))
        fail("wgmma wait's registers '" + b->name + "' are not a fragment or a local rank-1 buffer");
    }
    IRVisitor::visit_WarpgroupSync(n);
  }
  void visit_Wgmma(const WgmmaNode *n) override {
    if (n->a_reg_buffer) {
      check_buffer(n->a_reg_buffer, "wgmma");
      if (n->a.buffer || n->a_reg_buffer->scope != Scope::Local || n->a_reg_buffer->dtype != ScalarType::U32 ||
          n->a_regs.size() != 4)
        fail("wgmma's registers of a are not four local 32-bit registers");
    }
    for (const DescriptorOperand *d : {&n->a, &n->b}) {
      if (d == &n->a && n->a_reg_buffer)
        continue;
      check_buffer(d->buffer, "wgmma");
      // Shared tiles, and fragments that live in shared memory (not in registers).
      // operand_type is b's; a 8-bit a may be the other 8-bit kind.
      const bool type_ok = d->buffer->dtype == n->operand_type ||
                           (d == &n->a && bytes(d->buffer->dtype) == 1 && bytes(n->operand_type) == 1 &&
                            is_float(d->buffer->dtype) && is_float(n->operand_type));
      if ((d->buffer->scope != Scope::Shared && d->buffer->scope != Scope::Fragment) || !type_ok)
        fail("wgmma operand '" + d->buffer->name + "' is not a shared tile of the operand type");
    }
    if (n->instruction.empty())
      fail("wgmma without its instruction's spelling");
    if (n->k * bytes(n->operand_type) != 32)
      fail("wgmma of K = " + std::to_string(n->k) + " on " + name(n->operand_type) + " (32 bytes of K an instruction)");
    check_buffer(n->c, "wgmma");
    if (n->c->scope != Scope::Local || n->c->dtype != ScalarType::F32)
      fail("wgmma accumulator '" + n->c->name + "' is not f32 registers");
    if (n->n % 8 != 0 || n->n < 8 || n->n > 256 || int(n->c_regs.size()) != n->n / 2)
      fail("wgmma of N = " + std::to_string(n->n) + " with " + std::to_string(n->c_regs.size()) + " registers");
    IRVisitor::visit_Wgmma(n);
  }
  void visit_Mma(const MmaNode *n) override {
    for (const Buffer *b : {&n->a, &n->b, &n->c}) {
      check_buffer(*b, "mma");
      if ((*b)->scope != Scope::Local)
        fail("mma operand '" + (*b)->name + "' is not in registers (a local buffer)");
    }
    for (const Buffer *b : {&n->a, &n->b})
      if ((*b)->dtype != ScalarType::U32 && (*b)->dtype != n->operand_type)
        fail("mma operand '" + (*b)->name + "' is neither u32 registers nor of the operand type");
    if (n->c->dtype != ScalarType::F32)
      fail("mma accumulator '" + n->c->name + "' is not f32");
    if (n->a_regs.empty() || n->b_regs.empty() || n->c_regs.empty())
      fail("mma without registers");
    if (n->instruction.empty())
      fail("mma without its instruction's spelling");
    IRVisitor::visit_Mma(n);
  }
  void visit_Aligned(const AlignedNode *n) override {
    check_buffer(n->buffer, "alignment test");
    IRVisitor::visit_Aligned(n);
  }
  void visit_VectorFlag(const VectorFlagNode *n) override {
    if (n->tensor->scope != Scope::Global)
      fail("vector flag of '" + n->tensor->name + "', which is not a tensor");
  }
  void visit_For(const ForNode *n) override {
    visit(n->begin);
    visit(n->extent);
    visit(n->step);
    if (!is_integer(n->var->type))
      fail("loop variable '" + n->var->name + "' is not an integer");
    vars.emplace_back();
    vars.back().insert(n->var.get());
    visit(n->body);
    vars.pop_back();
  }
  void visit_DeclBuffer(const DeclBufferNode *n) override {
    const Buffer &b = n->buffer;
    if (b->scope == Scope::Global) {
      if (!b->view_of)
        fail("declaration of global buffer '" + b->name + "' that is no view");
      else if (b->view_of->scope != Scope::Global || int(b->origin.size()) != b->rank() ||
               b->view_of->rank() != b->rank())
        fail("view '" + b->name + "' does not match the tensor it views");
      else
        check_buffer(b->view_of, "view");
      for (auto &e : b->origin)
        visit(e);
      for (auto &e : b->shape)
        visit(e);
    }
    buffers.back().insert(b.get());
  }
  void visit_Copy(const CopyNode *n) override {
    check_region(n->src, "copy");
    check_region(n->dst, "copy");
    if (n->src.tile_shape() != n->dst.tile_shape())
      fail("copy between tiles of different shapes: " + to_string(n->src) + " and " + to_string(n->dst));
    if (n->dst.buffer->read_only)
      fail("copy into read-only tensor '" + n->dst.buffer->name + "'");
  }
  void visit_Gemm(const GemmNode *n) override {
    check_region(n->a, "gemm");
    check_region(n->b, "gemm");
    check_region(n->c, "gemm");
    auto a = n->a.tile_shape(), b = n->b.tile_shape(), c = n->c.tile_shape();
    // After lower-fragments a tensor-core accumulator is the thread's registers, whose
    // layout gives the M x N view.
    auto registers = [&](const Region &r, std::vector<std::int64_t> &shape) {
      if (auto it = layouts->find(r.buffer.get());
          r.buffer->scope == Scope::Local && it != layouts->end() && it->second.mma) {
        if (shape.size() != 1 || shape[0] != it->second.slots())
          fail("gemm registers '" + r.buffer->name + "' do not match their layout");
        shape = {it->second.mma->rows, it->second.mma->cols};
      }
    };
    registers(n->a, a);
    registers(n->c, c);
    if (a.size() != 2 || b.size() != 2 || c.size() != 2) {
      fail("gemm operands must be 2-D tiles");
      return;
    }
    std::int64_t m = n->transpose_a ? a[1] : a[0], ka = n->transpose_a ? a[0] : a[1];
    std::int64_t kb = n->transpose_b ? b[1] : b[0], nn = n->transpose_b ? b[0] : b[1];
    if (ka != kb || c[0] != m || c[1] != nn)
      fail("gemm shapes do not agree");
    if (n->c.buffer->scope != Scope::Fragment && n->c.buffer->scope != Scope::Local)
      fail("gemm accumulator '" + n->c.buffer->name + "' must be a fragment");
  }
  void visit_Fill(const FillNode *n) override {
    check_region(n->dst, "fill");
    if (n->dst.buffer->read_only)
      fail("fill of read-only tensor '" + n->dst.buffer->name + "'");
    visit(n->value);
  }
  void visit_Reduce(const ReduceNode *n) override {
    check_local_buffer(n->src, "reduce");
    check_local_buffer(n->dst, "reduce");
    if (n->dim < 0 || n->dim >= n->src->rank()) {
      fail("reduce dimension out of range");
      return;
    }
    std::vector<std::int64_t> want;
    for (int d = 0; d < n->src->rank(); ++d)
      if (d != n->dim)
        want.push_back(n->src->extent(d));
    if (want.empty())
      want.push_back(1);
    std::vector<std::int64_t> got;
    for (int d = 0; d < n->dst->rank(); ++d)
      got.push_back(n->dst->extent(d));
    if (want != got)
      fail("reduce destination '" + n->dst->name + "' has the wrong shape");
  }
  void visit_Cumsum(const CumsumNode *n) override {
    check_local_buffer(n->src, "cumsum");
    check_local_buffer(n->dst, "cumsum");
    if (n->src->shape.size() != n->dst->shape.size())
      fail("cumsum source and destination differ in rank");
    for (int d = 0; d < n->src->rank() && d < n->dst->rank(); ++d)
      if (n->src->extent(d) != n->dst->extent(d))
        fail("cumsum source and destination differ in shape");
    if (n->dim < 0 || n->dim >= n->src->rank())
      fail("cumsum dimension out of range");
  }
  void visit_Atomic(const AtomicNode *n) override {
    check_region(n->dst, "atomic");
    if (n->dst.buffer->scope != Scope::Global)
      fail("atomic destination must be a tensor");
    if (n->src) {
      check_region(*n->src, "atomic");
      if (n->src->tile_shape() != n->dst.tile_shape())
        fail("atomic source and destination tiles differ in shape");
      if (n->result || n->compare || n->atomic_kind == AtomicKind::Exchange ||
          n->atomic_kind == AtomicKind::CompareExchange)
        fail("a region atomic is an add, max or min without a result");
    } else {
      if (n->dst.num_elements() != 1)
        fail("element atomic on a region of more than one element");
      visit(n->value);
      if ((n->compare != nullptr) != (n->atomic_kind == AtomicKind::CompareExchange))
        fail("an atomic has a compared value exactly when it is a compare-exchange");
      if (n->compare)
        visit(n->compare);
      if (n->result && n->result->type != n->dst.buffer->dtype)
        fail("an atomic's result variable has another type than the element");
    }
  }
  void visit_AnnotateLayout(const AnnotateLayoutNode *n) override { check_buffer(n->buffer, "annotate_layout"); }
  /// A bulk copy's or store's shared tile, tensor map and coordinates.
  void check_bulk(const char *what, const Buffer &tile, int map, size_t coords) {
    check_buffer(tile, what);
    auto sl = kernel->shared_layouts.find(tile.get());
    const int swizzle = sl == kernel->shared_layouts.end() ? 0 : sl->second.swizzle_bytes;
    // In a swizzle from a multiple of 8 of its spans, or in dense rows (a box of one row
    // may be written into a row padded past the tile: a one-dimensional tile's stages).
    const bool one_row = map >= 0 && size_t(map) < kernel->tensor_maps.size() &&
                         !kernel->tensor_maps[size_t(map)].box.empty() &&
                         std::all_of(kernel->tensor_maps[size_t(map)].box.begin(),
                                     kernel->tensor_maps[size_t(map)].box.end() - 1,
                                     [](std::int64_t e) { return e == 1; });
    const bool dense =
        swizzle == 0 &&
        (sl == kernel->shared_layouts.end() ||
         (sl->second.slab == 0 && (sl->second.pitch == tile->extent(tile->rank() - 1) ||
                                   (one_row && sl->second.pitch >= kernel->tensor_maps[size_t(map)].box.back() &&
                                    sl->second.pitch >= tile->extent(tile->rank() - 1)))));
    if (tile->scope != Scope::Shared || (!dense && (swizzle == 0 || sl->second.alignment < 8 * swizzle)))
      fail(std::string(what) + " of '" + tile->name +
           "', which is not a shared tile in dense rows or in a swizzle from a multiple of 8 of its spans");
    if (map < 0 || size_t(map) >= kernel->tensor_maps.size()) {
      fail(std::string(what) + " through tensor map " + std::to_string(map) + " of " +
           std::to_string(kernel->tensor_maps.size()));
      return;
    }
    const Kernel::TensorMap &m = kernel->tensor_maps[size_t(map)];
    if (m.param < 0 || size_t(m.param) >= kernel->params.size() || !kernel->params[size_t(m.param)].tensor)
      fail(std::string(what) + " through tensor map " + std::to_string(map) + " of parameter " +
           std::to_string(m.param) + ", which is not a tensor");
    else if (coords != m.box.size() || int(coords) != kernel->params[size_t(m.param)].tensor->rank())
      fail(std::string(what) + " with " + std::to_string(coords) + " coordinates through tensor map " +
           std::to_string(map) + " of a box of " + std::to_string(m.box.size()) + " dimensions");
    else if (m.swizzle_bytes != swizzle)
      fail(std::string(what) + " of '" + tile->name + "' in the " + std::to_string(swizzle) +
           "-byte swizzle through tensor map " + std::to_string(map) + " of the " + std::to_string(m.swizzle_bytes) +
           "-byte one");
  }
  void visit_BulkCopy(const BulkCopyNode *n) override {
    check_bulk("bulk_copy", n->dst, n->map, n->coords.size());
    if (n->map >= 0 && size_t(n->map) < kernel->tensor_maps.size() && kernel->tensor_maps[size_t(n->map)].optional)
      fail("bulk_copy through optional tensor map " + std::to_string(n->map) + " (a launch may not have it)");
    if (n->multicast && kernel->cluster <= 1)
      fail("bulk_copy multicast in a kernel not launched in clusters");
    IRVisitor::visit_BulkCopy(n);
  }
  void visit_Mbarrier(const MbarrierNode *n) override {
    if (n->op == MbarrierOp::ArriveCluster && kernel->cluster <= 1)
      fail("mbarrier arrival on another block's barrier in a kernel not launched in clusters");
    IRVisitor::visit_Mbarrier(n);
  }
  void visit_BulkStore(const BulkStoreNode *n) override {
    check_bulk("bulk_store", n->src, n->map, n->coords.size());
    IRVisitor::visit_BulkStore(n);
  }
  void visit_BulkStoreSync(const BulkStoreSyncNode *n) override {
    check_buffer(n->buffer, "bulk_store_sync");
    if (n->buffer->scope != Scope::Shared)
      fail("bulk store commit or wait of '" + n->buffer->name + "', which is not in shared memory");
  }
  void visit_IterationSlot(const IterationSlotNode *n) override {
    check_buffer(n->slots, "iteration slot");
    if (n->slots->scope != Scope::Shared)
      fail("iteration slots '" + n->slots->name + "' not in shared memory");
    if ((n->op == IterationSlotOp::Put) != (n->value != nullptr) || (n->op == IterationSlotOp::Get) != (n->var != nullptr))
      fail("iteration slot without its value or variable");
    if (n->var && !var_in_scope(n->var.get()))
      fail("iteration slot read into undeclared variable '" + n->var->name + "'");
    IRVisitor::visit_IterationSlot(n);
  }
  void visit_TileFetch(const TileFetchNode *n) override {
    if (!var_in_scope(n->tile.get()))
      fail("tile fetch into undeclared variable '" + n->tile->name + "'");
    if (n->op != TileFetchOp::First && (!n->slot || n->slot->scope != Scope::Shared || n->slot->num_elements() != 1))
      fail("tile fetch through a slot that is not one element of shared memory");
  }
};

} // namespace

std::vector<std::string> verify(const Kernel &k) {
  Verifier v;
  v.layouts = &k.layouts;
  v.kernel = &k;
  for (auto &p : k.params) {
    if (p.tensor)
      v.buffers[0].insert(p.tensor.get());
    else
      v.vars[0].insert(p.scalar.get());
  }
  // (A persistent kernel declares its block indices for each tile it takes.)
  for (int d = 0; d < 3; ++d)
    if (k.block_index[d] && !k.persistent)
      v.vars[0].insert(k.block_index[d].get());
  if (k.thread_index)
    v.vars[0].insert(k.thread_index.get());
  if (k.maps_missing)
    v.vars[0].insert(k.maps_missing.get());
  // A cluster launch's rank, block count and partner's indices (declared by the codegen).
  if (k.cluster > 1) {
    if (!k.cluster_rank || !k.cluster_blocks || k.persistent)
      v.fail("a cluster launch without its rank and block count, or on a persistent grid");
    for (const Var &x : {k.cluster_rank, k.cluster_blocks})
      if (x)
        v.vars[0].insert(x.get());
    for (int d = 0; d < k.grid_rank; ++d) {
      if (!k.partner_index[d])
        v.fail("a cluster launch without its partner's block index " + std::to_string(d));
      else
        v.vars[0].insert(k.partner_index[d].get());
    }
  }
  // A paired kernel's group (declared by the codegen), and what it pairs.
  if (k.pair_dim >= 0) {
    if (!k.pair_group || !k.thread_index || k.pair_dim >= k.grid_rank || !k.block_index[k.pair_dim] ||
        k.persistent || k.cluster > 1 || !k.producer_threads)
      v.fail("a paired kernel without its group, thread or paired block index, or with a persistent grid, clusters "
             "or no producer");
    if (k.pair_group)
      v.vars[0].insert(k.pair_group.get());
  }
  // The mask of missing maps is the kernel's parameter exactly where some map is optional
  // (the codegen declares it for the one, the runtime passes it for the other).
  bool optional = false;
  for (const Kernel::TensorMap &m : k.tensor_maps)
    optional |= m.optional;
  if (optional != bool(k.maps_missing))
    v.fail(optional ? "optional tensor maps without a mask of missing maps"
                    : "a mask of missing maps without optional tensor maps");
  if (k.threads <= 0 || k.threads > 1024)
    v.fail("threads per block must be in 1..1024, got " + std::to_string(k.threads));
  // Grid extents may use scalars the body declares before tile::grid; those are checked
  // where they are declared, so only the body is walked with scopes.
  v.visit(k.body);
  return v.problems;
}

} // namespace tile::ir
