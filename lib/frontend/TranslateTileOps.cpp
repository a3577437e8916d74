// Tile operations: copy, gemm, fill, reductions, cumsum, atomics, print, assertions,
// layout and rasterization hints; and their operands (buffers and regions).
#include <limits>
#include <sstream>

#include "clang/Basic/SourceManager.h"

#include "frontend/Translator.h"

using namespace clang;

namespace tile::frontend {

namespace {

const Expr *strip_operand(const Expr *e) {
  while (true) {
    e = e->IgnoreParens();
    if (auto *c = dyn_cast<ExprWithCleanups>(e))
      e = c->getSubExpr();
    else if (auto *m = dyn_cast<MaterializeTemporaryExpr>(e))
      e = m->getSubExpr();
    else if (auto *b = dyn_cast<CXXBindTemporaryExpr>(e))
      e = b->getSubExpr();
    else if (auto *d = dyn_cast<CXXDefaultArgExpr>(e))
      e = d->getExpr();
    else if (auto *i = dyn_cast<ImplicitCastExpr>(e);
             i && (i->getCastKind() == CK_NoOp || i->getCastKind() == CK_DerivedToBase ||
                   i->getCastKind() == CK_UncheckedDerivedToBase || i->getCastKind() == CK_LValueToRValue ||
                   i->getCastKind() == CK_ConstructorConversion || i->getCastKind() == CK_ArrayToPointerDecay))
      e = i->getSubExpr();
    else if (auto *c = dyn_cast<CXXConstructExpr>(e); c && c->getNumArgs() == 1 && !isa<CXXTemporaryObjectExpr>(c))
      e = c->getArg(0); // copies and const conversions of tensors
    else
      return e;
  }
}

std::string shape_string(const std::vector<std::int64_t> &s) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); ++i)
    os << (i ? ", " : "") << s[i];
  os << "]";
  return os.str();
}

std::vector<std::int64_t> shape_of(const ir::Buffer &b) {
  std::vector<std::int64_t> s;
  for (int d = 0; d < b->rank(); ++d)
    s.push_back(b->extent(d));
  return s;
}

bool is_at_call(const Expr *e) {
  auto *mc = dyn_cast<CXXMemberCallExpr>(strip_operand(e));
  return mc && mc->getMethodDecl() && mc->getMethodDecl()->getName() == "at";
}

bool is_slice_mark(const Expr *e) {
  auto *rd = strip_operand(e)->getType()->getAsCXXRecordDecl();
  return rd && qualified_name(rd) == "tile::slice_t";
}

} // namespace

std::optional<Translator::GemmOptions> Translator::gemm_options(const Expr *e) {
  GemmOptions o;
  const Expr *s = strip_operand(e);
  auto *record = s->getType()->getAsRecordDecl();
  if (!record) {
    error(e->getExprLoc(), "expected tile::gemm_options", "write {.transpose_b = true, .clear_accum = (k == 0)}");
    return std::nullopt;
  }
  // A constant (a constexpr variable, say): every field is known.
  if (auto v = evaluate(e); v && v->isStruct()) {
    unsigned i = 0;
    for (const FieldDecl *f : record->fields()) {
      const APValue &field = v->getStructField(i++);
      if (!field.isInt())
        continue;
      llvm::StringRef n = f->getName();
      if (n == "transpose_a")
        o.transpose_a = field.getInt().getBoolValue();
      else if (n == "transpose_b")
        o.transpose_b = field.getInt().getBoolValue();
      else if (n == "clear_accum")
        o.clear_accum = ir::bool_imm(field.getInt().getBoolValue());
      else if (n == "policy")
        o.policy = ir::WarpPolicy(field.getInt().getExtValue());
    }
    return o;
  }
  // Designated initializers read by name; clear_accum may be a run-time condition, the
  // others fix the code and must be constants.
  auto *init = dyn_cast<InitListExpr>(s);
  if (!init) {
    error(e->getExprLoc(), "the options of tile::gemm must be written in place",
          "write {.transpose_b = true, .clear_accum = (k == 0)}");
    return std::nullopt;
  }
  if (init->isSyntacticForm() && init->getSemanticForm())
    init = init->getSemanticForm();
  unsigned i = 0;
  for (const FieldDecl *f : record->fields()) {
    if (i >= init->getNumInits())
      break;
    const Expr *value = init->getInit(i++);
    if (isa<ImplicitValueInitExpr>(value) || isa<CXXDefaultInitExpr>(value))
      continue; // the field's default
    llvm::StringRef n = f->getName();
    if (n == "clear_accum") {
      o.clear_accum = expr(value);
      if (!o.clear_accum)
        return std::nullopt;
      o.clear_accum = ir::cast(ir::ScalarType::Bool, o.clear_accum);
      continue;
    }
    auto c = evaluate(value);
    if (!c || !c->isInt()) {
      error(value->getExprLoc(), "." + n.str() + " of tile::gemm must be a compile-time constant",
            "only .clear_accum may be decided at run time; the others choose the code");
      return std::nullopt;
    }
    if (n == "transpose_a")
      o.transpose_a = c->getInt().getBoolValue();
    else if (n == "transpose_b")
      o.transpose_b = c->getInt().getBoolValue();
    else if (n == "policy")
      o.policy = ir::WarpPolicy(c->getInt().getExtValue());
  }
  return o;
}

ir::Buffer Translator::buffer_at(const Expr *e) {
  auto *at = dyn_cast<CXXMemberCallExpr>(strip_operand(e));
  if (!at || !at->getMethodDecl() || at->getMethodDecl()->getName() != "at")
    return nullptr;
  ir::Buffer b = buffer_ref(at->getImplicitObjectArgument(), "region", /*required=*/false);
  return b && b->scope != ir::Scope::Global ? b : nullptr;
}

bool Translator::has_own_extent(const Expr *e) {
  if (!buffer_at(e))
    return false;
  auto *at = cast<CXXMemberCallExpr>(strip_operand(e));
  for (const Expr *a : at->arguments())
    if (is_slice_mark(a))
      return true;
  return false;
}

ir::Buffer Translator::buffer_ref(const Expr *e, const char *op, bool required) {
  const Expr *s = strip_operand(e);
  if (auto *ce = dyn_cast<CXXConstructExpr>(s); ce && ce->getNumArgs() == 1 && ce->getConstructor()->isCopyOrMoveConstructor())
    s = strip_operand(ce->getArg(0)); // (a view returned by value)
  if (auto *dre = dyn_cast<DeclRefExpr>(s))
    if (const Binding *b = lookup(dre->getDecl()); b && b->buffer)
      return b->buffer;
  if (auto *mc = dyn_cast<CXXMemberCallExpr>(s); mc && mc->getMethodDecl() && mc->getMethodDecl()->getName() == "rows" &&
                                                 classify_tile_type(mc->getType()).kind == TileTypeKind::Tensor) {
    // (A declaration's name is this view's, not that of a view it is made of.)
    std::string name = std::move(view_name);
    view_name.clear();
    ir::Buffer base = buffer_ref(mc->getImplicitObjectArgument(), op, required);
    view_name = std::move(name);
    return base ? tensor_rows(mc, base) : nullptr;
  }
  if (required)
    error(e->getExprLoc(), std::string("expected a tile buffer or tensor as operand of ") + op,
          "pass a tile::tensor parameter or a tile::shared / tile::fragment / tile::local variable", e->getSourceRange());
  return nullptr;
}

ir::Buffer Translator::tensor_rows(const CXXMemberCallExpr *call, const ir::Buffer &base) {
  if (lazy_operand > 0) {
    error(call->getExprLoc(), "a view of tensor '" + base->name + "' cannot be made in an operand of &&, || or ?:",
          "its first row and count would be read whether or not the operand is; make it before the statement: "
          "auto rows = " + base->name + ".rows(begin, end);");
    return nullptr;
  }
  if (parallel_depth > 0 || pipelined_depth > 0) {
    error(call->getExprLoc(), std::string("a view of tensor '") + base->name + "' cannot be made inside a tile::" +
                                  (parallel_depth > 0 ? "parallel" : "pipelined") + " loop",
          "make it before the loop: auto rows = " + base->name + ".rows(begin, end);");
    return nullptr;
  }
  std::string name = std::move(view_name); // (views made in its arguments are unnamed)
  view_name.clear();
  ir::Expr begin = expr(call->getArg(0));
  ir::Expr end = begin ? expr(call->getArg(1)) : nullptr;
  if (!end)
    return nullptr;
  const ir::ScalarType i64 = ir::ScalarType::I64;
  ir::Expr size = ir::cast(i64, base->shape[0]);
  // Both ends clipped to the tensor's rows, as on the host.
  auto clip = [&](ir::Expr x, ir::Expr lo) {
    return ir::binary(ir::BinaryOp::Max, ir::binary(ir::BinaryOp::Min, ir::cast(i64, std::move(x)), size), std::move(lo));
  };
  ir::Var first = ir::make_var(unique_name(base->name + "_first"), i64);
  ir::Var rows = ir::make_var(unique_name(base->name + "_count"), i64);
  emit(ir::declare(first, clip(begin, ir::int_imm(0, i64))));
  emit(ir::declare(rows, ir::sub(clip(end, first), first)));
  auto view = std::make_shared<ir::BufferNode>(*base);
  view->name = unique_name(name.empty() ? base->name + "_rows" : name);
  view->shape[0] = rows;
  view->view_of = base;
  view->origin.assign(base->rank(), ir::int_imm(0, i64));
  view->origin[0] = first;
  view->loc = call->getExprLoc().getRawEncoding();
  emit(ir::decl_buffer(view));
  return view;
}

std::optional<ir::Region> Translator::region(const Expr *e, const std::vector<std::int64_t> *other_shape,
                                             const char *op) {
  const Expr *s = strip_operand(e);
  auto *at = dyn_cast<CXXMemberCallExpr>(s);
  if (!at || !at->getMethodDecl() || at->getMethodDecl()->getName() != "at") {
    ir::Buffer b = buffer_ref(e, op);
    if (!b)
      return std::nullopt;
    if (b->scope != ir::Scope::Global)
      return ir::full_region(b);
    if (!other_shape) {
      error(e->getExprLoc(), "the extent of tensor '" + b->name + "' in " + op + " is not known",
            "name a tile of it with " + b->name + ".at(i, j, ...) and pass a buffer as the other operand");
      return std::nullopt;
    }
    if (int(other_shape->size()) != b->rank()) {
      error(e->getExprLoc(), "tensor '" + b->name + "' has rank " + std::to_string(b->rank()) +
                                 " but the other operand of " + op + " has rank " + std::to_string(other_shape->size()),
            "name the tile with " + b->name + ".at(...) and tile::slice marks");
      return std::nullopt;
    }
    ir::Region r;
    r.buffer = b;
    for (int d = 0; d < b->rank(); ++d) {
      r.begin.push_back(ir::int_imm(0));
      r.extent.push_back((*other_shape)[d]);
      r.tile_dims.push_back(d);
    }
    return r;
  }

  ir::Buffer b = buffer_ref(at->getImplicitObjectArgument(), op);
  if (!b)
    return std::nullopt;
  // A region of a shared, fragment or local buffer with tile::slice marks has an extent of
  // its own: from each marked start to the end of the buffer, one element elsewhere.
  std::vector<std::int64_t> own_shape;
  if (!other_shape && b->scope != ir::Scope::Global) {
    for (unsigned i = 0; i < at->getNumArgs() && int(i) < b->rank(); ++i) {
      const Expr *a = strip_operand(at->getArg(i));
      if (!is_slice_mark(a))
        continue;
      auto *sc = dyn_cast<CallExpr>(a);
      auto start = sc && sc->getNumArgs() == 1 ? evaluate(sc->getArg(0)) : std::nullopt;
      if (!start || !start->isInt()) {
        error(a->getExprLoc(), "the start of a tile::slice of '" + b->name + "' must be a compile-time constant here",
              "the region's extent runs from the start to the end of '" + b->name +
                  "', and extents are compile-time constants");
        return std::nullopt;
      }
      own_shape.push_back(b->extent(int(i)) - start->getInt().getExtValue());
    }
    if (!own_shape.empty())
      other_shape = &own_shape;
  }
  if (!other_shape) {
    if (b->scope == ir::Scope::Global)
      error(at->getExprLoc(), "the extent of " + b->name + ".at(...) in " + op + " is not known",
            "the extent of a tensor region comes from the other operand: pass a whole buffer there, or a region "
            "of one with tile::slice marks");
    else
      error(at->getExprLoc(), "the extent of " + b->name + ".at(...) in " + op + " is not known",
            "mark the dimensions the tile spans with tile::slice(start) (they run to the end of '" + b->name +
                "'), or pass the whole buffer");
    return std::nullopt;
  }
  ir::Region r;
  r.buffer = b;
  std::vector<int> slices;
  for (unsigned i = 0; i < at->getNumArgs(); ++i) {
    const Expr *a = strip_operand(at->getArg(i));
    auto *rd = a->getType()->getAsCXXRecordDecl();
    if (rd && qualified_name(rd) == "tile::slice_t") {
      auto *sc = dyn_cast<CallExpr>(a);
      if (!sc || qualified_name(sc->getDirectCallee()) != "tile::slice") {
        error(a->getExprLoc(), "expected tile::slice(start)", "mark a dimension the tile spans with tile::slice(start)");
        return std::nullopt;
      }
      ir::Expr v = expr(sc->getArg(0));
      if (!v)
        return std::nullopt;
      r.begin.push_back(v);
      slices.push_back(int(i));
      continue;
    }
    ir::Expr v = expr(at->getArg(i));
    if (!v)
      return std::nullopt;
    r.begin.push_back(v);
  }
  int rank = b->rank(), tile_rank = int(other_shape->size());
  if (tile_rank > rank) {
    error(at->getExprLoc(), "a tile of rank " + std::to_string(tile_rank) + " does not fit in '" + b->name +
                                "' of rank " + std::to_string(rank),
          "a region has at least as many dimensions as the tile it holds");
    return std::nullopt;
  }
  if (!slices.empty() && int(slices.size()) != tile_rank && tile_rank != rank) {
    error(at->getExprLoc(), std::to_string(slices.size()) + " tile::slice marks in " + b->name +
                                ".at(...), but the other operand of " + op + " has rank " + std::to_string(tile_rank),
          "mark exactly the dimensions the tile spans with tile::slice(start)");
    return std::nullopt;
  }
  if (tile_rank == rank) {
    for (int d = 0; d < rank; ++d)
      r.tile_dims.push_back(d);
  } else if (!slices.empty()) {
    r.tile_dims = slices;
  } else {
    for (int d = rank - tile_rank; d < rank; ++d)
      r.tile_dims.push_back(d);
  }
  r.extent.assign(rank, 1);
  for (int i = 0; i < tile_rank; ++i)
    r.extent[r.tile_dims[i]] = (*other_shape)[i];
  if (b->scope != ir::Scope::Global) {
    for (int d = 0; d < rank; ++d) {
      auto c = ir::as_const_int(r.begin[d]);
      if (c && (*c < 0 || *c + r.extent[d] > b->extent(d))) {
        error(at->getExprLoc(), "the tile of " + b->name + ".at(...) in " + op + " reaches past the end of '" +
                                    b->name + "' (dimension " + std::to_string(d) + ")",
              "tiles of shared, fragment and local buffers must lie inside the buffer");
        return std::nullopt;
      }
      if (!c && !check_index(at->getArg(d)->getExprLoc(), b, d, r.begin[d], r.extent[d]))
        return std::nullopt;
    }
  }
  return r;
}

void Translator::print_buffer(const CallExpr *call, unsigned arg, const ir::Buffer &b) {
  const Expr *e = call->getArg(arg);
  std::vector<ir::Expr> header;
  for (unsigned i = 0; i < arg; ++i)
    if (auto *sl = dyn_cast<StringLiteral>(strip_operand(call->getArg(i))))
      header.push_back(ir::string_imm(sl->getString().str()));
  if (arg + 1 != call->getNumArgs() || header.size() != arg) {
    error(e->getExprLoc(), "a buffer is printed whole, after its label",
          "write tile::print(\"label\", " + b->name + ") with a string literal label, or tile::print(" + b->name + ")");
    return;
  }
  if (b->scope == ir::Scope::Global) {
    error(e->getExprLoc(), "tile::print prints tile buffers, not tensor '" + b->name + "'",
          "copy a tile of it into a buffer first, or print elements: tile::print(" + b->name + "(i, j))");
    return;
  }
  if (parallel_depth > 0) {
    error(e->getExprLoc(), "a buffer cannot be printed inside a tile::parallel loop",
          "print it before or after the loop; inside, print elements");
    return;
  }
  // A fragment's elements are spread over the block's threads: staged through shared
  // memory, so that one thread prints them in order.
  ir::Buffer src = b;
  if (b->scope == ir::Scope::Fragment) {
    std::vector<std::int64_t> shape;
    for (int d = 0; d < b->rank(); ++d)
      shape.push_back(b->extent(d));
    src = ir::make_buffer(unique_name(b->name + "_print"), ir::Scope::Shared, b->dtype, shape);
    emit(ir::decl_buffer(src));
    emit(std::make_shared<ir::CopyNode>(ir::full_region(b), ir::full_region(src)));
  }
  std::string shape = "[";
  for (int d = 0; d < b->rank(); ++d)
    shape += (d ? ", " : "") + std::to_string(b->extent(d));
  header.push_back(ir::string_imm(b->name + " " + ir::name(b->dtype) + shape + "]:"));
  emit(std::make_shared<ir::PrintNode>(header));

  // One line per row (the last dimension), in pieces of `per_line` values: device printf
  // takes few arguments, and each line carries the block's indices.
  constexpr std::int64_t per_line = 16;
  const int rank = b->rank();
  const std::int64_t columns = b->extent(rank - 1);
  std::vector<ir::Var> rows;
  for (int d = 0; d + 1 < rank; ++d)
    rows.push_back(ir::make_var(unique_name("row"), ir::ScalarType::I32));
  std::vector<ir::Stmt> lines;
  for (std::int64_t c0 = 0; c0 < columns; c0 += per_line) {
    std::vector<ir::Expr> args;
    if (rank > 1)
      args.push_back(ir::string_imm("  row"));
    args.insert(args.end(), rows.begin(), rows.end());
    if (columns > per_line) {
      args.push_back(ir::string_imm(rank > 1 ? "from" : "  from"));
      args.push_back(ir::int_imm(c0));
    }
    if (!args.empty())
      args.push_back(ir::string_imm(":"));
    for (std::int64_t c = c0; c < std::min(columns, c0 + per_line); ++c) {
      std::vector<ir::Expr> idx(rows.begin(), rows.end());
      idx.push_back(ir::int_imm(c));
      args.push_back(ir::load(src, idx));
    }
    lines.push_back(std::make_shared<ir::PrintNode>(args));
  }
  ir::Stmt body = ir::seq(lines);
  for (int d = rank - 2; d >= 0; --d)
    body = ir::for_loop(rows[d], ir::int_imm(0), ir::int_imm(b->extent(d)), ir::ForKind::Serial, body);
  emit(body);
}

bool Translator::tile_op(const CallExpr *call) {
  const FunctionDecl *fn = call->getDirectCallee();
  std::string name = qualified_name(fn);
  if (name.rfind("tile::", 0) != 0)
    return false;
  std::string op = name.substr(6);
  static const char *ops[] = {"copy", "gemm", "clear", "fill", "reduce_sum", "reduce_max", "reduce_min",
                              "reduce_absmax", "reduce_abssum", "reduce_argmax", "reduce_argmin", "sort", "topk", "cumsum", "atomic_add", "atomic_max", "atomic_min",
                              "atomic_exchange", "atomic_compare_exchange",
                              "print", "device_assert", "use_swizzle", "warp_specialize", "persistent", "annotate_layout", "grid", "expect"};
  bool known = false;
  for (const char *o : ops)
    known |= op == o;
  if (!known)
    return false;
  SourceLocation loc = call->getExprLoc();

  if (op == "expect") {
    error(loc, "tile::expect must come before tile::grid",
          "state what the kernel assumes of its arguments before tile::grid (it is checked on the host at "
          "launch); check values inside the kernel with tile::device_assert(cond, \"message\")");
    return true;
  }
  if (op == "grid") {
    error(loc, "tile::grid may appear only once, as the first tile statement of a kernel",
          "move it to the start of the kernel's body");
    return true;
  }
  bool element_wise_ok = op == "print" || op == "device_assert" || op.rfind("atomic_", 0) == 0;
  if (parallel_depth > 0 && !element_wise_ok) {
    error(loc, "tile::" + op + " cannot be used inside a tile::parallel loop",
          "tile operations work on whole tiles: call it before or after the loop");
    return true;
  }

  if (op == "copy")
    return copy_op(call, op, loc), true;

  if (op == "gemm")
    return gemm_op(call, op, loc), true;

  if (op == "clear" || op == "fill") {
    ir::Buffer b = whole_local(call->getArg(0), op.c_str());
    if (!b)
      return true;
    ir::Expr v = op == "clear" ? ir::int_imm(0) : expr(call->getArg(1));
    if (!v)
      return true;
    emit(std::make_shared<ir::FillNode>(ir::full_region(b), ir::cast(b->dtype, v)));
    return true;
  }

  if (op == "reduce_argmax" || op == "reduce_argmin")
    return arg_reduce_op(call, op, loc), true;
  if (op == "sort" || op == "topk")
    return sort_op(call, op, loc), true;
  if (op.rfind("reduce_", 0) == 0 || op == "cumsum")
    return reduce_op(call, op, loc), true;

  if (op.rfind("atomic_", 0) == 0)
    return atomic_op(call, op, loc), true;

  if (op == "print") {
    for (unsigned i = 0; i < call->getNumArgs(); ++i)
      if (ir::Buffer b = buffer_ref(call->getArg(i), "tile::print", /*required=*/false)) {
        print_buffer(call, i, b);
        return true;
      }
    std::vector<ir::Expr> args;
    for (unsigned i = 0; i < call->getNumArgs(); ++i) {
      const Expr *a = strip_operand(call->getArg(i));
      if (auto *sl = dyn_cast<StringLiteral>(a)) {
        args.push_back(ir::string_imm(sl->getString().str()));
        continue;
      }
      ir::Expr v = expr(call->getArg(i));
      if (!v)
        return true;
      args.push_back(v);
    }
    emit(std::make_shared<ir::PrintNode>(args));
    return true;
  }

  if (op == "device_assert") {
    ir::Expr c = expr(call->getArg(0));
    if (!c)
      return true;
    auto *sl = dyn_cast<StringLiteral>(strip_operand(call->getArg(1)));
    if (!sl) {
      error(call->getArg(1)->getExprLoc(), "the message of tile::device_assert must be a string literal",
            "write tile::device_assert(cond, \"what went wrong\")");
      return true;
    }
    std::string msg = sl->getString().str();
    PresumedLoc p = ctx.getSourceManager().getPresumedLoc(loc);
    if (p.isValid())
      msg += " (" + std::string(p.getFilename()) + ":" + std::to_string(p.getLine()) + ")";
    emit(std::make_shared<ir::AssertNode>(c, msg));
    return true;
  }

  if (op == "use_swizzle") {
    if (loop_depth > 0 || conditional > 0 || !inline_stack.empty()) {
      error(loc, "tile::use_swizzle must be a statement of the kernel's body, outside loops, run-time ifs and macros",
            "call it once after tile::grid, at the top level of the kernel (it applies to the whole kernel)");
      return true;
    }
    auto p = const_int(call->getArg(0), "the panel of tile::use_swizzle");
    if (!p)
      return true;
    if (*p < 1) {
      error(call->getArg(0)->getExprLoc(), "the panel of tile::use_swizzle must be positive, not " + std::to_string(*p),
            "write tile::use_swizzle(n) with n >= 1 blocks per panel (8 when it is left out)");
      return true;
    }
    kernel.swizzle_panel = int(*p);
    return true;
  }

  // Kernel-wide switches: tile::warp_specialize(on), tile::persistent(on).
  if (op == "warp_specialize" || op == "persistent") {
    if (loop_depth > 0 || conditional > 0 || !inline_stack.empty()) {
      error(loc, "tile::" + op + " must be a statement of the kernel's body, outside loops, run-time ifs and macros",
            "call it once at the top level of the kernel (it applies to the whole kernel; if constexpr may choose)");
      return true;
    }
    auto on = const_int(call->getArg(0), "the argument of tile::" + op);
    if (!on)
      return true;
    if (op == "persistent")
      kernel.persistence = *on ? ir::Kernel::Persistence::On : ir::Kernel::Persistence::Off;
    else
      kernel.warp_specialize = *on ? ir::Kernel::WarpSpecialization::On : ir::Kernel::WarpSpecialization::Off;
    return true;
  }

  if (op == "annotate_layout") {
    ir::Buffer b = whole_local(call->getArg(0), "annotate_layout");
    if (!b)
      return true;
    auto v = evaluate(call->getArg(1));
    if (!v || !v->isStruct() || v->getStructNumFields() < 2) {
      error(call->getArg(1)->getExprLoc(), "the layout of tile::annotate_layout must be a compile-time constant",
            "use tile::layouts::row_major(), col_major() or swizzled(bytes)");
      return true;
    }
    auto kind = ir::LayoutKind(v->getStructField(0).getInt().getExtValue());
    int bytes = int(v->getStructField(1).getInt().getExtValue());
    if (kind == ir::LayoutKind::Swizzled && bytes != 32 && bytes != 64 && bytes != 128) {
      error(call->getArg(1)->getExprLoc(),
            "tile::layouts::swizzled takes spans of 32, 64 or 128 bytes, not " + std::to_string(bytes),
            "write tile::layouts::swizzled(128), swizzled(64) or swizzled(32)");
      return true;
    }
    emit(std::make_shared<ir::AnnotateLayoutNode>(b, kind, bytes));
    return true;
  }
  return false;
}


ir::Buffer Translator::whole_local(const Expr *e, const char *what) {
  ir::Buffer b = buffer_ref(e, what);
  if (b && b->scope == ir::Scope::Global) {
    error(e->getExprLoc(), std::string("tile::") + what + " works on shared, fragment and local buffers, not on tensor '" +
                               b->name + "'",
          "copy the tile into a buffer first: tile::copy(" + b->name + ".at(...), buf)");
    return nullptr;
  }
  return b;
}

void Translator::copy_op(const CallExpr *call, const std::string &op, SourceLocation loc) {
  const Expr *src = call->getArg(0), *dst = call->getArg(1);
  std::optional<ir::Region> s, d;
  if (!is_at_call(dst) && buffer_ref(dst, "copy", false) && buffer_ref(dst, "copy")->scope != ir::Scope::Global) {
    ir::Buffer db = buffer_ref(dst, "copy");
    auto shape = shape_of(db);
    d = ir::full_region(db);
    s = region(src, &shape, "tile::copy");
  } else if (!is_at_call(src) && buffer_ref(src, "copy", false) &&
             buffer_ref(src, "copy")->scope != ir::Scope::Global) {
    ir::Buffer sb = buffer_ref(src, "copy");
    auto shape = shape_of(sb);
    s = ir::full_region(sb);
    d = region(dst, &shape, "tile::copy");
  } else if (failed()) {
    return;
  } else {
    // Two regions: one with an extent of its own (a buffer's region with tile::slice
    // marks) gives the other its shape.
    const bool src_own = has_own_extent(src), dst_own = !src_own && has_own_extent(dst);
    if (!src_own && !dst_own) {
      const Expr *buffer_region = buffer_at(src) ? src : buffer_at(dst) ? dst : nullptr;
      if (buffer_region) {
        region(buffer_region, nullptr, "tile::copy"); // says how to give it an extent
        return;
      }
      error(loc, "tile::copy needs a whole shared, fragment or local buffer as one of its operands",
            "the other operand's extent comes from that buffer: copy(A.at(i, j), buf) or copy(buf, A.at(i, j))");
      return;
    }
    auto &known = src_own ? s : d, &other = src_own ? d : s;
    known = region(src_own ? src : dst, nullptr, "tile::copy");
    if (!known)
      return;
    auto shape = known->tile_shape();
    other = region(src_own ? dst : src, &shape, "tile::copy");
  }
  if (!s || !d)
    return;
  if (s->tile_shape() != d->tile_shape()) {
    error(loc, "tile::copy between tiles of different shapes: '" + s->buffer->name + "' is " +
                   shape_string(s->tile_shape()) + " and '" + d->buffer->name + "' is " + shape_string(d->tile_shape()),
          "copy between tiles of the same shape (a region x.at(...) takes the other operand's shape)");
    return;
  }
  if (d->buffer->read_only) {
    error(call->getArg(1)->getExprLoc(), "tile::copy into read-only tensor '" + d->buffer->name + "'",
          "declare it tile::tensor<T, Rank> without const");
    return;
  }
  emit(std::make_shared<ir::CopyNode>(*s, *d));
  return;
}

void Translator::gemm_op(const CallExpr *call, const std::string &op, SourceLocation loc) {
  ir::Buffer a = buffer_ref(call->getArg(0), "tile::gemm");
  ir::Buffer b = a ? buffer_ref(call->getArg(1), "tile::gemm") : nullptr;
  ir::Buffer c = b ? buffer_ref(call->getArg(2), "tile::gemm") : nullptr;
  if (!c)
    return;
  for (auto [buf, arg] : {std::pair{a, 0}, {b, 1}}) {
    if (buf->scope == ir::Scope::Global) {
      error(call->getArg(arg)->getExprLoc(), "operand '" + buf->name + "' of tile::gemm is a tensor",
            "copy the tile into a tile::shared buffer first");
      return;
    }
  }
  if (c->scope != ir::Scope::Fragment) {
    error(call->getArg(2)->getExprLoc(), "the accumulator '" + c->name + "' of tile::gemm must be a tile::fragment",
          "declare it tile::fragment<float, M, N>");
    return;
  }
  if (c->dtype == ir::ScalarType::Bool) {
    error(call->getArg(2)->getExprLoc(),
          "the accumulator '" + c->name + "' of tile::gemm has element type bool, which holds no sums",
          "accumulate in a fragment of float or of an integer type");
    return;
  }
  bool ta = false, tb = false, clear = false;
  ir::Expr clear_if; // a run-time clear_accum condition
  ir::WarpPolicy policy = ir::WarpPolicy::Square;
  if (call->getNumArgs() > 3 && !isa<CXXDefaultArgExpr>(call->getArg(3))) {
    auto options = gemm_options(call->getArg(3));
    if (!options)
      return;
    ta = options->transpose_a;
    tb = options->transpose_b;
    policy = options->policy;
    if (auto c = ir::as_const_int(options->clear_accum))
      clear = *c != 0;
    else
      clear_if = options->clear_accum;
  }
  auto sa = shape_of(a), sb = shape_of(b), sc = shape_of(c);
  if (sa.size() != 2 || sb.size() != 2 || sc.size() != 2) {
    error(loc, "tile::gemm needs 2-D operands", "");
    return;
  }
  std::int64_t m = ta ? sa[1] : sa[0], ka = ta ? sa[0] : sa[1];
  std::int64_t kb = tb ? sb[1] : sb[0], n = tb ? sb[0] : sb[1];
  if (ka != kb || sc[0] != m || sc[1] != n) {
    error(loc, "tile::gemm shapes do not agree: " + std::string(ta ? "op(a) = a^T is " : "a is ") +
                   shape_string(ta ? std::vector<std::int64_t>{m, ka} : sa) + ", " + (tb ? "op(b) = b^T is " : "b is ") +
                   shape_string(tb ? std::vector<std::int64_t>{kb, n} : sb) + ", c is " + shape_string(sc),
          "c[M, N] += op(a)[M, K] * op(b)[K, N]; set .transpose_a / .transpose_b for operands stored transposed");
    return;
  }
  // clear_accum decided at run time (`.clear_accum = (k == 0)`): clear c when it holds.
  if (clear_if)
    emit(ir::if_then_else(clear_if, std::make_shared<ir::FillNode>(ir::full_region(c), ir::cast(c->dtype, ir::int_imm(0)))));
  emit(std::make_shared<ir::GemmNode>(ir::full_region(a), ir::full_region(b), ir::full_region(c), ta, tb, clear,
                                      policy));
  return;
}

void Translator::reduce_op(const CallExpr *call, const std::string &op, SourceLocation loc) {
  ir::Buffer s = whole_local(call->getArg(0), op.c_str());
  ir::Buffer d = s ? whole_local(call->getArg(1), op.c_str()) : nullptr;
  if (!d)
    return;
  auto dim = const_int(call->getArg(2), "the dimension of tile::" + op);
  if (!dim)
    return;
  auto flag = const_int(call->getArg(3), std::string(op == "cumsum" ? "reverse" : "clear") + " of tile::" + op);
  if (!flag)
    return;
  if (*dim < 0 || *dim >= s->rank()) {
    error(call->getArg(2)->getExprLoc(),
          "dimension " + std::to_string(*dim) + " is out of range for '" + s->name + "' of rank " +
              std::to_string(s->rank()),
          s->rank() == 1 ? "'" + s->name + "' has one dimension: write 0"
                         : "write a dimension from 0 to " + std::to_string(s->rank() - 1) + " (" +
                               (op == "cumsum" ? "the dimension to sum along" : "the dimension to reduce") + ")");
    return;
  }
  auto ss = shape_of(s), ds = shape_of(d);
  if (op == "cumsum") {
    if (ss != ds) {
      error(loc, "tile::cumsum needs a destination of the source's shape: '" + s->name + "' is " +
                     shape_string(ss) + ", '" + d->name + "' is " + shape_string(ds),
          "declare the destination with the source's shape");
      return;
    }
    emit(std::make_shared<ir::CumsumNode>(s, d, int(*dim), *flag != 0));
    return;
  }
  std::vector<std::int64_t> want;
  for (int i = 0; i < s->rank(); ++i)
    if (i != *dim)
      want.push_back(ss[i]);
  if (want.empty())
    want.push_back(1);
  if (want != ds) {
    error(loc, "tile::" + op + " of '" + s->name + "' " + shape_string(ss) + " along dimension " +
                   std::to_string(*dim) + " gives " + shape_string(want) + ", but '" + d->name + "' is " +
                   shape_string(ds),
          "the destination has the source's shape without the reduced dimension");
    return;
  }
  std::string k = op.substr(7);
  ir::ReduceKind kind = k == "sum"      ? ir::ReduceKind::Sum
                        : k == "max"    ? ir::ReduceKind::Max
                        : k == "min"    ? ir::ReduceKind::Min
                        : k == "absmax" ? ir::ReduceKind::AbsMax
                                        : ir::ReduceKind::AbsSum;
  emit(std::make_shared<ir::ReduceNode>(kind, s, d, int(*dim), *flag != 0));
  return;
}

void Translator::emit_parallel(const std::vector<std::int64_t> &shape,
                               const std::function<ir::Stmt(const std::vector<ir::Expr> &)> &body) {
  std::vector<ir::Var> vars;
  std::vector<ir::Expr> idx;
  for (size_t d = 0; d < shape.size(); ++d) {
    vars.push_back(ir::make_var(unique_name("i"), ir::ScalarType::I32));
    idx.push_back(vars.back());
  }
  ir::Stmt loop = body(idx);
  for (int d = int(shape.size()) - 1; d >= 0; --d)
    loop = ir::for_loop(vars[d], ir::int_imm(0), ir::int_imm(shape[d]), ir::ForKind::Parallel, loop);
  emit(loop);
}

void Translator::arg_reduce_op(const CallExpr *call, const std::string &op, SourceLocation loc) {
  // reduce_argmax(src, values, indices, dim, clear = true, first = 0)
  ir::Buffer s = whole_local(call->getArg(0), op.c_str());
  ir::Buffer v = s ? whole_local(call->getArg(1), op.c_str()) : nullptr;
  ir::Buffer ix = v ? whole_local(call->getArg(2), op.c_str()) : nullptr;
  if (!ix)
    return;
  auto dim = const_int(call->getArg(3), "the dimension of tile::" + op);
  auto clear = dim ? const_int(call->getArg(4), "clear of tile::" + op) : std::nullopt;
  ir::Expr first = clear ? expr(call->getArg(5)) : nullptr;
  if (!first)
    return;
  if (*dim < 0 || *dim >= s->rank()) {
    error(call->getArg(3)->getExprLoc(),
          "dimension " + std::to_string(*dim) + " is out of range for '" + s->name + "' of rank " +
              std::to_string(s->rank()),
          s->rank() == 1 ? "'" + s->name + "' has one dimension: write 0"
                         : "write a dimension from 0 to " + std::to_string(s->rank() - 1) + " (the dimension to reduce)");
    return;
  }
  if (!ir::is_integer(ix->dtype) || ix->dtype == ir::ScalarType::Bool) {
    error(call->getArg(2)->getExprLoc(),
          "the positions of tile::" + op + " go into a buffer of integers, not '" + ix->name + "' of " +
              ir::name(ix->dtype),
          "declare the third operand with an integer element type such as int");
    return;
  }
  const std::vector<std::int64_t> ss = shape_of(s);
  std::vector<std::int64_t> want;
  for (int i = 0; i < s->rank(); ++i)
    if (i != *dim)
      want.push_back(ss[i]);
  if (want.empty())
    want.push_back(1);
  for (const ir::Buffer &d : {v, ix})
    if (shape_of(d) != want) {
      error(loc, "tile::" + op + " of '" + s->name + "' " + shape_string(ss) + " along dimension " +
                     std::to_string(*dim) + " gives " + shape_string(want) + ", but '" + d->name + "' is " +
                     shape_string(shape_of(d)),
            "the values and the positions have the source's shape without the reduced dimension");
      return;
    }
  const bool max = op == "reduce_argmax";
  const ir::ScalarType pos_type = ir::ScalarType::I32;
  const std::int64_t none = std::numeric_limits<std::int32_t>::max();
  // best: the extreme of each row; position: where each element holds it (else `none`);
  // found: the first such position.
  ir::Buffer best = ir::make_buffer(unique_name(s->name + "_best"), v->scope, s->dtype, want);
  ir::Buffer position = ir::make_buffer(unique_name(s->name + "_position"), s->scope, pos_type, ss);
  ir::Buffer found = ir::make_buffer(unique_name(s->name + "_found"), ix->scope, pos_type, want);
  for (auto &b : {best, position, found}) {
    b->loc = loc.getRawEncoding(); // (remarks about them point at the call)
    emit(ir::decl_buffer(b));
  }
  emit(std::make_shared<ir::ReduceNode>(max ? ir::ReduceKind::Max : ir::ReduceKind::Min, s, best, int(*dim), true));
  emit_parallel(ss, [&](const std::vector<ir::Expr> &i) {
    std::vector<ir::Expr> row;
    for (int d = 0; d < s->rank(); ++d)
      if (d != *dim)
        row.push_back(i[d]);
    if (row.empty())
      row.push_back(ir::int_imm(0));
    ir::Expr holds = ir::binary(ir::BinaryOp::EQ, ir::load(s, i), ir::load(best, row));
    return ir::store(position, i, ir::select(holds, i[*dim], ir::int_imm(none, pos_type)));
  });
  emit(std::make_shared<ir::ReduceNode>(ir::ReduceKind::Min, position, found, int(*dim), true));
  emit_parallel(want, [&](const std::vector<ir::Expr> &j) {
    ir::Expr at = ir::load(found, j);
    ir::Expr any = ir::binary(ir::BinaryOp::NE, at, ir::int_imm(none, pos_type));
    ir::Expr index = ir::select(any, ir::add(ir::cast(ir::ScalarType::I64, first), ir::cast(ir::ScalarType::I64, at)),
                                ir::int_imm(-1, ir::ScalarType::I64));
    ir::Stmt take = ir::seq({ir::store(v, j, ir::cast(v->dtype, ir::load(best, j))),
                             ir::store(ix, j, ir::cast(ix->dtype, index))});
    if (*clear)
      return take;
    // Combined with what the buffers hold: a row's new extreme replaces the held one only
    // where it is strictly beyond it (on a tie the held, earlier position stays).
    ir::Expr held = ir::load(v, j), now = ir::load(best, j);
    ir::Expr beyond = max ? ir::binary(ir::BinaryOp::GT, now, held) : ir::binary(ir::BinaryOp::LT, now, held);
    return ir::if_then_else(ir::logical_and(any, beyond), take);
  });
}

void Translator::sort_network(const ir::Buffer &keys, const ir::Buffer &values, int dim, bool descending, bool tie) {
  // Bitonic sort in the form whose every comparator puts the smaller key (descending: the
  // larger) at the lower position: in step (p, q), position i meets i ^ (2^p - 1) for q = 0
  // (the mirror in its block of 2^p) and i ^ 2^(p - 1 - q) after. A row of n positions runs
  // as one of the next power of two whose positions past n hold keys that sort last; as
  // those never move before n, the comparators that would meet them are skipped.
  const std::vector<std::int64_t> shape = shape_of(keys);
  const std::int64_t n = shape[dim];
  int log2 = 0;
  while ((std::int64_t(1) << log2) < n)
    ++log2;
  if (log2 == 0)
    return; // rows of one element
  ir::Var p = ir::make_var(unique_name("sort_block"), ir::ScalarType::I32);
  ir::Var q = ir::make_var(unique_name("sort_step"), ir::ScalarType::I32);
  std::vector<ir::Var> vars;
  std::vector<ir::Expr> idx;
  for (size_t d = 0; d < shape.size(); ++d) {
    vars.push_back(ir::make_var(unique_name("i"), ir::ScalarType::I32));
    idx.push_back(vars.back());
  }
  const ir::Expr one = ir::int_imm(1);
  ir::Expr i = idx[dim];
  ir::Expr mirror = ir::binary(ir::BinaryOp::BitXor, i, ir::sub(ir::binary(ir::BinaryOp::Shl, one, p), one));
  ir::Expr apart = ir::binary(ir::BinaryOp::BitXor, i,
                              ir::binary(ir::BinaryOp::Shl, one, ir::sub(ir::sub(p, one), q)));
  ir::Var partner = ir::make_var(unique_name("partner"), ir::ScalarType::I32);
  std::vector<ir::Expr> other = idx;
  other[dim] = partner;
  ir::Var a = ir::make_var(unique_name("key"), keys->dtype), b = ir::make_var(unique_name("key"), keys->dtype);
  std::vector<ir::Stmt> swap{ir::store(keys, idx, b), ir::store(keys, other, a)};
  ir::Expr beyond = descending ? ir::binary(ir::BinaryOp::GT, b, a) : ir::lt(b, a);
  std::vector<ir::Stmt> body{ir::declare(a, ir::load(keys, idx)), ir::declare(b, ir::load(keys, other))};
  if (values) {
    ir::Var va = ir::make_var(unique_name("value"), values->dtype), vb = ir::make_var(unique_name("value"), values->dtype);
    body.push_back(ir::declare(va, ir::load(values, idx)));
    body.push_back(ir::declare(vb, ir::load(values, other)));
    swap.push_back(ir::store(values, idx, vb));
    swap.push_back(ir::store(values, other, va));
    if (tie)
      beyond = ir::binary(ir::BinaryOp::Or, beyond,
                          ir::logical_and(ir::binary(ir::BinaryOp::EQ, b, a), ir::lt(vb, va)));
  }
  body.push_back(ir::if_then_else(beyond, ir::seq(swap)));
  ir::Stmt compare = ir::if_then_else(
      ir::logical_and(ir::binary(ir::BinaryOp::GT, partner, i), ir::lt(partner, ir::int_imm(n))), ir::seq(body));
  ir::Stmt loop = ir::seq({ir::declare(partner, ir::select(ir::binary(ir::BinaryOp::EQ, q, ir::int_imm(0)), mirror, apart)),
                           compare});
  for (int d = int(shape.size()) - 1; d >= 0; --d)
    loop = ir::for_loop(vars[d], ir::int_imm(0), ir::int_imm(shape[d]), ir::ForKind::Parallel, loop);
  ir::Stmt steps = ir::for_loop(q, ir::int_imm(0), p, ir::ForKind::Serial, loop);
  emit(ir::for_loop(p, one, ir::int_imm(log2), ir::ForKind::Serial, steps));
}

void Translator::sort_op(const CallExpr *call, const std::string &op, SourceLocation loc) {
  const bool topk = op == "topk";
  // sort(keys, dim, descending) | sort(keys, values, dim, descending) | topk(src, values, indices, dim)
  const bool with_values = topk || call->getNumArgs() == 4;
  const unsigned dim_arg = topk ? 3 : with_values ? 2 : 1;
  ir::Buffer first = whole_local(call->getArg(0), op.c_str());
  ir::Buffer second = first && with_values ? whole_local(call->getArg(1), op.c_str()) : nullptr;
  ir::Buffer third = second && topk ? whole_local(call->getArg(2), op.c_str()) : nullptr;
  if (!first || (with_values && !second) || (topk && !third))
    return;
  auto dim = const_int(call->getArg(dim_arg), "the dimension of tile::" + op);
  auto descending = dim && !topk ? const_int(call->getArg(dim_arg + 1), "descending of tile::" + op) : std::optional<std::int64_t>(1);
  if (!dim || !descending)
    return;
  if (*dim < 0 || *dim >= first->rank()) {
    error(call->getArg(dim_arg)->getExprLoc(),
          "dimension " + std::to_string(*dim) + " is out of range for '" + first->name + "' of rank " +
              std::to_string(first->rank()),
          first->rank() == 1 ? "'" + first->name + "' has one dimension: write 0"
                             : "write a dimension from 0 to " + std::to_string(first->rank() - 1) + " (the dimension to " +
                                   (topk ? "choose along)" : "sort along)"));
    return;
  }
  const std::vector<std::int64_t> shape = shape_of(first);
  if (!topk) {
    if (first->scope != ir::Scope::Shared || (second && second->scope != ir::Scope::Shared)) {
      const ir::Buffer &b = first->scope != ir::Scope::Shared ? first : second;
      error(loc, "tile::sort sorts shared buffers, not " + std::string(ir::name(b->scope)) + " '" + b->name + "'",
            "the rows are exchanged between threads: copy the tile into a T::shared buffer, sort it there and copy it back");
      return;
    }
    if (second && shape_of(second) != shape) {
      error(loc, "tile::sort needs values of the keys' shape: '" + first->name + "' is " + shape_string(shape) + ", '" +
                     second->name + "' is " + shape_string(shape_of(second)),
            "declare the values with the keys' shape");
      return;
    }
    sort_network(first, second, int(*dim), *descending != 0, false);
    return;
  }
  // topk: the largest `k` of each row (k the extent of `values` along dim), largest first,
  // equal ones by position; their positions into `indices`.
  std::vector<std::int64_t> want = shape_of(second);
  if (want.size() != shape.size() || shape_of(third) != want || want[*dim] > shape[*dim] ||
      [&] {
        for (size_t d = 0; d < want.size(); ++d)
          if (int(d) != *dim && want[d] != shape[d])
            return true;
        return false;
      }()) {
    error(loc, "tile::topk of '" + first->name + "' " + shape_string(shape) + " along dimension " +
                   std::to_string(*dim) + " takes values and indices of its shape with at most " +
                   std::to_string(shape[*dim]) + " along that dimension, not " + shape_string(shape_of(second)) +
                   " and " + shape_string(shape_of(third)),
          "declare both with the source's shape but k along the dimension, such as [rows, k]");
    return;
  }
  if (!ir::is_integer(third->dtype) || third->dtype == ir::ScalarType::Bool) {
    error(call->getArg(2)->getExprLoc(),
          "the positions of tile::topk go into a buffer of integers, not '" + third->name + "' of " + ir::name(third->dtype),
          "declare the third operand with an integer element type such as int");
    return;
  }
  ir::Buffer keys = ir::make_buffer(unique_name(first->name + "_keys"), ir::Scope::Shared, first->dtype, shape);
  ir::Buffer positions = ir::make_buffer(unique_name(first->name + "_positions"), ir::Scope::Shared, ir::ScalarType::I32, shape);
  for (auto &b : {keys, positions}) {
    b->loc = loc.getRawEncoding();
    emit(ir::decl_buffer(b));
  }
  emit(std::make_shared<ir::CopyNode>(ir::full_region(first), ir::full_region(keys)));
  emit_parallel(shape, [&](const std::vector<ir::Expr> &i) { return ir::store(positions, i, i[*dim]); });
  sort_network(keys, positions, int(*dim), true, true);
  emit_parallel(want, [&](const std::vector<ir::Expr> &i) {
    return ir::seq({ir::store(second, i, ir::cast(second->dtype, ir::load(keys, i))),
                    ir::store(third, i, ir::cast(third->dtype, ir::load(positions, i)))});
  });
}

namespace {
ir::AtomicKind atomic_kind(const std::string &op) {
  const std::string k = op.substr(7);
  return k == "add"        ? ir::AtomicKind::Add
         : k == "max"      ? ir::AtomicKind::Max
         : k == "min"      ? ir::AtomicKind::Min
         : k == "exchange" ? ir::AtomicKind::Exchange
                           : ir::AtomicKind::CompareExchange;
}
} // namespace

void Translator::atomic_op(const CallExpr *call, const std::string &op, SourceLocation loc) {
  const ir::AtomicKind kind = atomic_kind(op);
  if (auto ref = element_ref(call->getArg(0), true)) {
    atomic_element(call, op, *ref, nullptr);
    return;
  }
  if (failed())
    return;
  if (kind == ir::AtomicKind::Exchange || kind == ir::AtomicKind::CompareExchange) {
    error(call->getArg(0)->getExprLoc(), "tile::" + op + " works on one tensor element",
          "pass an element T(i, j) of a tile::tensor; an element-wise update of a region is an add, max or min");
    return;
  }
  ir::Buffer src = whole_local(call->getArg(1), op.c_str());
  if (!src)
    return;
  auto shape = shape_of(src);
  auto d = region(call->getArg(0), &shape, ("tile::" + op).c_str());
  if (!d)
    return;
  if (d->buffer->scope != ir::Scope::Global || d->buffer->read_only) {
    error(call->getArg(0)->getExprLoc(), "the destination of tile::" + op + " must be a writable tensor region",
          "atomics combine into global memory: pass T.at(i, j) of a tile::tensor<T, Rank> without const");
    return;
  }
  emit(std::make_shared<ir::AtomicNode>(kind, *d, nullptr, ir::full_region(src)));
  return;
}

bool Translator::atomic_element(const CallExpr *call, const std::string &op, const ElementRef &element,
                                const ir::Var &result) {
  const ir::AtomicKind kind = atomic_kind(op);
  if (element.buffer->scope != ir::Scope::Global) {
    error(call->getArg(0)->getExprLoc(),
          "tile::" + op + " works on tensor elements, not on '" + element.buffer->name + "'",
          "atomics combine results across blocks in global memory");
    return false;
  }
  const ir::ScalarType at = ir::arith_type(element.buffer->dtype);
  const bool cas = kind == ir::AtomicKind::CompareExchange;
  ir::Expr compare = cas ? expr(call->getArg(1)) : nullptr;
  if (cas && !compare)
    return false;
  ir::Expr v = expr(call->getArg(cas ? 2 : 1));
  if (!v)
    return false;
  ir::Region r;
  r.buffer = element.buffer;
  r.begin = element.indices;
  r.extent.assign(element.indices.size(), 1);
  emit(std::make_shared<ir::AtomicNode>(kind, r, ir::cast(at, v), std::nullopt,
                                        compare ? ir::cast(at, compare) : nullptr, result));
  return true;
}

ir::Expr Translator::atomic_value(const CallExpr *call, const std::string &op) {
  auto ref = element_ref(call->getArg(0), true);
  if (!ref) {
    if (!failed())
      error(call->getArg(0)->getExprLoc(), "the value of tile::" + op + " is that of one tensor element",
            "pass an element T(i, j) of a tile::tensor; the region form returns nothing");
    return nullptr;
  }
  const ir::ScalarType t = ref->buffer->dtype;
  ir::Var old = ir::make_var(unique_name("old"), t);
  emit(ir::declare(old, nullptr));
  if (!atomic_element(call, op, *ref, old))
    return nullptr;
  if (parallel_depth > 0)
    return old;
  // Outside parallel loops one thread of the block runs the atomic: its value goes to every
  // thread through a shared slot (the barrier between is insert-sync's).
  ir::Buffer slot = ir::make_buffer(unique_name("atomic_slot"), ir::Scope::Shared, t, {1});
  emit(ir::decl_buffer(slot));
  emit(ir::store(slot, {ir::int_imm(0)}, old));
  ir::Var value = ir::make_var(unique_name("old"), t);
  emit(ir::declare(value, ir::load(slot, {ir::int_imm(0)})));
  return value;
}

} // namespace tile::frontend
