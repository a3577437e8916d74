// Statements: declarations, assignments, loops, conditionals.
#include <functional>

#include "frontend/Translator.h"

using namespace clang;

namespace tile::frontend {

namespace {

const Expr *strip_all(const Expr *e) {
  while (true) {
    e = e->IgnoreParens();
    if (auto *c = dyn_cast<ExprWithCleanups>(e))
      e = c->getSubExpr();
    else if (auto *m = dyn_cast<MaterializeTemporaryExpr>(e))
      e = m->getSubExpr();
    else if (auto *b = dyn_cast<CXXBindTemporaryExpr>(e))
      e = b->getSubExpr();
    else if (auto *i = dyn_cast<ImplicitCastExpr>(e); i && i->getCastKind() == CK_NoOp)
      e = i->getSubExpr();
    else
      return e;
  }
}

std::optional<ir::BinaryOp> compound_op(BinaryOperatorKind k) {
  switch (k) {
  case BO_AddAssign: return ir::BinaryOp::Add;
  case BO_SubAssign: return ir::BinaryOp::Sub;
  case BO_MulAssign: return ir::BinaryOp::Mul;
  case BO_DivAssign: return ir::BinaryOp::Div;
  case BO_RemAssign: return ir::BinaryOp::Mod;
  case BO_AndAssign: return ir::BinaryOp::BitAnd;
  case BO_OrAssign: return ir::BinaryOp::BitOr;
  case BO_XorAssign: return ir::BinaryOp::BitXor;
  case BO_ShlAssign: return ir::BinaryOp::Shl;
  case BO_ShrAssign: return ir::BinaryOp::Shr;
  default: return std::nullopt;
  }
}

/// The first assignment (=, op=, ++, --) to `var` in `body`, or null (a loop whose variable
/// changes in its body has no trip count the compiler can rely on).
const Expr *assignment_to(const Stmt *body, const ValueDecl *var) {
  if (!body)
    return nullptr;
  if (auto *bo = dyn_cast<BinaryOperator>(body); bo && bo->isAssignmentOp())
    if (auto *d = dyn_cast<DeclRefExpr>(bo->getLHS()->IgnoreParenImpCasts()); d && d->getDecl() == var)
      return bo;
  if (auto *uo = dyn_cast<UnaryOperator>(body); uo && uo->isIncrementDecrementOp())
    if (auto *d = dyn_cast<DeclRefExpr>(uo->getSubExpr()->IgnoreParenImpCasts()); d && d->getDecl() == var)
      return uo;
  for (const Stmt *c : body->children())
    if (const Expr *a = assignment_to(c, var))
      return a;
  return nullptr;
}
bool assigns_to(const Stmt *body, const ValueDecl *var) { return assignment_to(body, var) != nullptr; }

} // namespace

ir::Stmt Translator::sub_block(const Stmt *s) {
  Block b(*this);
  stmt(s);
  return b.finish();
}

void Translator::stmt(const Stmt *s) {
  if (failed() || !s)
    return;
  Nesting nesting(*this, s->getBeginLoc());
  if (failed())
    return;
  struct RestoreLoc {
    std::uint32_t &at, saved;
    ~RestoreLoc() { at = saved; }
  } restore{loc_, loc_};
  loc_ = s->getBeginLoc().getRawEncoding();
  if (!inline_stack.empty() && inline_stack.back().returned) {
    error(s->getBeginLoc(), "statement after the return of a macro or lambda",
          "a [[tile::macro]] function or lambda may return only at its end");
    return;
  }

  if (auto *cs = dyn_cast<CompoundStmt>(s)) {
    Block b(*this);
    for (const Stmt *c : cs->body()) {
      stmt(c);
      if (failed())
        return;
    }
    emit(b.finish());
    return;
  }
  if (isa<NullStmt>(s))
    return;
  if (auto *as = dyn_cast<AttributedStmt>(s))
    return stmt(as->getSubStmt());

  if (auto *ds = dyn_cast<DeclStmt>(s))
    return declaration(ds);

  if (auto *rs = dyn_cast<ReturnStmt>(s)) {
    if (inline_stack.empty()) {
      error(rs->getReturnLoc(), "return is not supported in the body of a kernel",
            "guard the rest of the kernel with if (...) instead of returning early");
      return;
    }
    // By index: evaluating the value may inline further calls, which grow inline_stack.
    size_t frame = inline_stack.size() - 1;
    if (rs->getRetValue()) {
      ir::Expr v = expr(rs->getRetValue());
      if (!v)
        return;
      if (inline_stack[frame].result)
        emit(ir::assign(inline_stack[frame].result, v));
    }
    inline_stack[frame].returned = true;
    return;
  }

  if (auto *is = dyn_cast<IfStmt>(s))
    return if_stmt(is);

  if (auto *fr = dyn_cast<CXXForRangeStmt>(s))
    return range_for(fr);

  if (auto *fs = dyn_cast<ForStmt>(s))
    return counted_for(fs);

  if (isa<WhileStmt>(s) || isa<DoStmt>(s)) {
    error(s->getBeginLoc(), "while loops are not supported in kernels",
          "write a for loop with a trip count: for (int i = 0; i < n; ++i) or tile::serial(n)");
    return;
  }
  if (isa<BreakStmt>(s) || isa<ContinueStmt>(s)) {
    error(s->getBeginLoc(), std::string(isa<BreakStmt>(s) ? "break" : "continue") + " is not supported in kernels",
          "guard the rest of the loop body with if (...)");
    return;
  }
  if (isa<GotoStmt>(s) || isa<IndirectGotoStmt>(s) || isa<LabelStmt>(s)) {
    error(s->getBeginLoc(), "goto is not supported in kernels", "use structured loops and if statements");
    return;
  }
  if (isa<CXXTryStmt>(s)) {
    error(s->getBeginLoc(), "exceptions are not supported in kernels",
          "check conditions with tile::device_assert(cond, \"message\")");
    return;
  }
  if (isa<AsmStmt>(s)) {
    error(s->getBeginLoc(), "inline assembly is not supported in kernels",
          "write the computation with the kernel language's operations; the compiler chooses the instructions "
          "for each target");
    return;
  }
  if (isa<SwitchStmt>(s)) {
    error(s->getBeginLoc(), "switch statements are not supported in kernels", "use if / else if");
    return;
  }

  auto *e = dyn_cast<Expr>(s);
  if (!e) {
    error(s->getBeginLoc(), std::string("this statement (") + s->getStmtClassName() + ") is not supported in a kernel",
          "kernels are written with declarations, assignments, if, for loops and tile operations");
    return;
  }
  expr_stmt(e);
}


void Translator::declaration(const DeclStmt *ds) {
  for (const Decl *d : ds->decls()) {
    auto *vd = dyn_cast<VarDecl>(d);
    if (!vd) {
      if (isa<TypeDecl>(d) || isa<UsingDecl>(d) || isa<UsingDirectiveDecl>(d) || isa<StaticAssertDecl>(d))
        continue; // compile-time only
      error(d->getLocation(), "this declaration is not supported in a kernel",
            "kernels declare scalars, tile buffers, lambdas, types and static_asserts");
      return;
    }
    if (vd->isStaticLocal() || vd->hasGlobalStorage()) {
      error(vd->getLocation(), "static variables are not supported in kernels",
            "use a tile::shared buffer for values shared by the block, or a constexpr variable for constants");
      return;
    }
    if (isa<DecompositionDecl>(vd)) {
      auto *init = vd->getInit() ? dyn_cast<CallExpr>(strip_all(vd->getInit())) : nullptr;
      if (init && qualified_name(init->getDirectCallee()) == "tile::grid") {
        error(init->getExprLoc(), "tile::grid may appear only once, as the first tile statement of a kernel",
              "bind all block indices with one tile::grid(gx, gy, gz) at the start of the kernel's body");
        return;
      }
      error(vd->getLocation(), "structured bindings are only supported for tile::grid and tile::parallel",
            "declare the variables one by one");
      return;
    }
    QualType t = vd->getType();
    TileTypeInfo info = classify_tile_type(t);
    if (info.kind == TileTypeKind::Shared || info.kind == TileTypeKind::Fragment ||
        info.kind == TileTypeKind::Local) {
      if (t->isReferenceType()) {
        // An alias of another buffer.
        ir::Buffer b = vd->getInit() ? buffer_ref(vd->getInit(), "reference") : nullptr;
        if (!b)
          return;
        env[vd].buffer = b;
        continue;
      }
      if (parallel_depth > 0) {
        error(vd->getLocation(), "tile buffers cannot be declared inside a tile::parallel loop",
              "declare the buffer before the loop");
        return;
      }
      // Elements are indexed with 32-bit offsets.
      std::int64_t elements = 1;
      bool too_many = false;
      for (std::int64_t e : info.shape)
        too_many |= __builtin_mul_overflow(elements, e, &elements) || elements > INT32_MAX;
      if (too_many) {
        error(vd->getLocation(), "tile buffer '" + vd->getNameAsString() + "' has more than " +
                                     std::to_string(INT32_MAX) + " elements",
              "a tile buffer holds one block's tile: use smaller extents, and keep large data in tensors");
        return;
      }
      ir::Scope scope = info.kind == TileTypeKind::Shared     ? ir::Scope::Shared
                        : info.kind == TileTypeKind::Fragment ? ir::Scope::Fragment
                                                              : ir::Scope::Local;
      ir::Buffer b = ir::make_buffer(unique_name(vd->getNameAsString()), scope, info.elem, info.shape);
      b->loc = vd->getLocation().getRawEncoding();
      env[vd].buffer = b;
      emit(ir::decl_buffer(b));
      continue;
    }
    if (info.kind == TileTypeKind::Tensor) {
      view_name = vd->getNameAsString(); // (a view made here takes the variable's name)
      ir::Buffer b = vd->getInit() ? buffer_ref(vd->getInit(), "tensor alias", false) : nullptr;
      view_name.clear();
      if (!b) {
        error(vd->getLocation(), "tensors cannot be created inside a kernel",
              "pass every tensor as a kernel parameter");
        return;
      }
      env[vd].buffer = b;
      continue;
    }
    if (info.kind == TileTypeKind::Region) {
      error(vd->getLocation(), "a region cannot be stored in a variable",
            "pass x.at(...) directly to the tile operation");
      return;
    }
    if (auto *rd = t->getAsCXXRecordDecl(); rd && rd->isLambda()) {
      env[vd].lambda = rd->getLambdaCallOperator();
      continue;
    }
    auto st = scalar_type_of(t);
    if (!st || t->isReferenceType()) {
      if (t->isReferenceType() && st) {
        auto *init = vd->getInit() ? dyn_cast<DeclRefExpr>(strip_all(vd->getInit())) : nullptr;
        const Binding *b = init ? lookup(init->getDecl()) : nullptr;
        if (b && b->var) {
          env[vd].var = b->var;
          continue;
        }
        error(vd->getLocation(), "references in kernels may only name scalar variables",
              "copy the value into a variable: auto x = ...;");
        return;
      }
      error(vd->getLocation(), "variable '" + vd->getNameAsString() + "' of type '" + t.getAsString() +
                                   "' is not supported in a kernel",
            "kernels hold arithmetic scalars and tile buffers: use tile::local<T, N> for a per-thread array, "
            "tile::shared<T, ...> for block-shared memory");
      return;
    }
    ir::Expr init;
    if (vd->getInit()) {
      // `T old = tile::atomic_add(C(i), v);`: the atomic, then the element's value before it.
      auto *ac = dyn_cast<CallExpr>(strip_all(vd->getInit()));
      const std::string callee = ac ? qualified_name(ac->getDirectCallee()) : "";
      if (callee.rfind("tile::atomic_", 0) == 0) {
        init = atomic_value(ac, callee.substr(6));
        if (init)
          init = ir::cast(*st, init);
      } else {
        init = expr(vd->getInit());
      }
      if (!init)
        return;
    }
    // Constants stay constants: they may size tiles and fold away.
    if (t.isConstQualified() && init && (init->as<ir::IntImmNode>() || init->as<ir::FloatImmNode>())) {
      env[vd].value = ir::cast(*st, init);
      continue;
    }
    ir::Var v = ir::make_var(unique_name(vd->getNameAsString()), *st);
    env[vd].var = v;
    emit(ir::declare(v, init));
  }
  return;
}

void Translator::if_stmt(const IfStmt *is) {
  if (is->getInit() || is->getConditionVariable()) {
    error(is->getIfLoc(), "if statements with an initializer or a condition variable are not supported in kernels",
          "declare the variable before the if");
    return;
  }
  if (is->isConstexpr()) {
    auto v = evaluate(is->getCond());
    if (!v || !v->isInt()) {
      error(is->getIfLoc(), "condition of if constexpr is not a constant",
            "use template parameters and constexpr values in the condition, or write a plain if");
      return;
    }
    if (v->getInt().getBoolValue())
      return stmt(is->getThen());
    return stmt(is->getElse());
  }
  ir::Expr c = expr(is->getCond());
  if (!c)
    return;
  ++conditional;
  ir::Stmt t = sub_block(is->getThen());
  ir::Stmt e = is->getElse() ? sub_block(is->getElse()) : nullptr;
  --conditional;
  if (failed())
    return;
  emit(ir::if_then_else(c, t, e));
  return;
}

void Translator::range_for(const CXXForRangeStmt *fr) {
  const Expr *range = strip_all(fr->getRangeInit());
  auto *call = dyn_cast<CallExpr>(range);
  std::string name = call ? qualified_name(call->getDirectCallee()) : "";
  if (name != "tile::parallel" && name != "tile::pipelined" && name != "tile::serial" && name != "tile::unroll") {
    error(fr->getForLoc(), "range-based for loops in kernels must iterate over a tile loop",
          "write for (int i : tile::serial(n)), tile::parallel(...), tile::pipelined(...) or tile::unroll(n)");
    return;
  }
  const VarDecl *lv = fr->getLoopVariable();
  std::vector<const ValueDecl *> vars;
  if (auto *dd = dyn_cast<DecompositionDecl>(lv))
    for (auto *b : dd->bindings())
      vars.push_back(b);
  else
    vars.push_back(lv);
  // The loop owns its indices: the passes rely on their ranges and on each thread's
  // iterations (a copy that C++ would let the body change would change neither).
  for (const ValueDecl *v : vars)
    if (const Expr *a = assignment_to(fr->getBody(), v)) {
      error(a->getExprLoc(), "the index '" + v->getNameAsString() + "' of " + name + " cannot be modified",
            "the loop sets it; copy it into a variable of your own first: int j = " + v->getNameAsString() + ";");
      return;
    }

  if (name == "tile::parallel") {
    std::vector<std::int64_t> extents;
    for (unsigned i = 0; i < call->getNumArgs(); ++i) {
      auto e = const_int(call->getArg(i), "the extent of tile::parallel");
      if (!e)
        return;
      if (*e < 1) {
        error(call->getArg(i)->getExprLoc(), "the extents of tile::parallel must be positive, not " + std::to_string(*e),
              "a parallel loop runs over a tile: write tile::parallel(n) with n >= 1");
        return;
      }
      extents.push_back(*e);
    }
    if (vars.size() != extents.size()) {
      error(lv->getLocation(), "tile::parallel with " + std::to_string(extents.size()) + " extents binds " +
                                   std::to_string(extents.size()) + " indices",
            extents.size() == 1 ? "write for (int i : tile::parallel(n))"
                                : "write for (auto [i, j, ...] : tile::parallel(...))");
      return;
    }
    std::vector<ir::Var> loop_vars;
    for (size_t d = 0; d < vars.size(); ++d) {
      loop_vars.push_back(ir::make_var(unique_name(vars[d]->getNameAsString()), ir::ScalarType::I32));
      env[vars[d]].var = loop_vars.back();
      ranges[loop_vars.back().get()] = {0, extents[d] - 1};
    }
    ++parallel_depth;
    ir::Stmt body = sub_block(fr->getBody());
    --parallel_depth;
    if (failed())
      return;
    for (int d = int(extents.size()) - 1; d >= 0; --d)
      body = ir::for_loop(loop_vars[d], ir::int_imm(0), ir::int_imm(extents[d]), ir::ForKind::Parallel, body);
    emit(body);
    return;
  }

  if (vars.size() != 1 || isa<DecompositionDecl>(lv)) {
    error(lv->getLocation(), "this loop binds one index", "write for (int k : " + name + "(...))");
    return;
  }
  ir::ForKind kind = name == "tile::pipelined" ? ir::ForKind::Pipelined
                     : name == "tile::unroll"  ? ir::ForKind::Unrolled
                                               : ir::ForKind::Serial;
  std::vector<const Expr *> bounds;
  int stages = 0;
  for (unsigned i = 0; i < call->getNumArgs(); ++i) {
    const Expr *a = call->getArg(i);
    if (isa<CXXDefaultArgExpr>(a))
      continue;
    TileTypeInfo ti = classify_tile_type(a->getType());
    if (a->getType()->isRecordType() && ti.kind == TileTypeKind::None) {
      auto *sc = dyn_cast<CallExpr>(strip_all(a));
      if (!sc || qualified_name(sc->getDirectCallee()) != "tile::stages") {
        error(a->getExprLoc(), "expected tile::stages(n)", "write tile::pipelined(n, tile::stages(s))");
        return;
      }
      auto n = const_int(sc->getArg(0), "the number of pipeline stages");
      if (!n)
        return;
      if (*n < 1) {
        error(sc->getArg(0)->getExprLoc(), "a pipeline has at least 1 stage, not " + std::to_string(*n),
              "write tile::stages(n) with n >= 1 (2 or 3 overlap copies with compute; 1 does not overlap)");
        return;
      }
      stages = int(*n);
      continue;
    }
    bounds.push_back(a);
  }
  if (kind == ir::ForKind::Pipelined && stages == 0)
    stages = 2;
  ir::Expr begin = ir::int_imm(0), extent;
  std::int64_t unroll_factor = 0;
  if (bounds.size() == 1) {
    if (kind == ir::ForKind::Unrolled) {
      auto n = const_int(bounds[0], "the extent of tile::unroll");
      if (!n)
        return;
      // Every iteration becomes a copy of the body in the generated code (and device
      // compilers take time more than linear in it): long loops stay loops.
      if (*n > max_unroll || unrolled_iterations * *n > max_unroll) {
        error(bounds[0]->getExprLoc(),
              "tile::unroll of " + std::to_string(*n) + " iterations" +
                  (unrolled_iterations > 1 ? " inside unrolled loops of " + std::to_string(unrolled_iterations) : "") +
                  " makes more than " + std::to_string(max_unroll) + " copies of its body",
              "unroll short loops only: write tile::serial(n) (or a plain for loop) for this one");
        return;
      }
      unroll_factor = *n;
      extent = ir::int_imm(*n);
    } else {
      extent = expr(bounds[0]);
    }
  } else {
    begin = expr(bounds[0]);
    ir::Expr end = begin ? expr(bounds[1]) : nullptr;
    if (!end)
      return;
    extent = ir::binary(ir::BinaryOp::Max, ir::sub(end, begin), ir::int_imm(0));
  }
  if (!extent)
    return;
  ir::Var v = ir::make_var(unique_name(lv->getNameAsString()), ir::ScalarType::I32);
  env[lv].var = v;
  begin = ir::cast(ir::ScalarType::I32, begin);
  extent = ir::cast(ir::ScalarType::I32, extent);
  auto b0 = ir::as_const_int(begin), n = ir::as_const_int(extent);
  if (b0 && n && *n > 0)
    ranges[v.get()] = {*b0, *b0 + *n - 1};
  ++loop_depth;
  const int pipelined = kind == ir::ForKind::Pipelined;
  pipelined_depth += pipelined;
  const std::int64_t outer_unrolled = unrolled_iterations;
  unrolled_iterations *= std::max<std::int64_t>(unroll_factor, 1);
  ir::Stmt body = sub_block(fr->getBody());
  unrolled_iterations = outer_unrolled;
  pipelined_depth -= pipelined;
  --loop_depth;
  if (failed())
    return;
  emit(ir::for_loop(v, begin, extent, kind, body, nullptr, stages));
  return;
}

void Translator::counted_for(const ForStmt *fs) {
  // for (int i = a; i < b; i += s): a serial loop with a trip count.
  auto bad = [&](SourceLocation loc) {
    error(loc, "this for loop has no trip count the compiler can derive",
          "write for (int i = begin; i < end; i += step) with an integer variable that the body does not "
          "modify, or use tile::serial(begin, end)");
  };
  const DeclStmt *init = dyn_cast_or_null<DeclStmt>(fs->getInit());
  const VarDecl *var = init && init->isSingleDecl() ? dyn_cast<VarDecl>(init->getSingleDecl()) : nullptr;
  if (!var || !var->getInit() || !var->getType()->isIntegerType() || !fs->getCond() || !fs->getInc())
    return bad(fs->getForLoc());
  if (assigns_to(fs->getBody(), var))
    return bad(fs->getForLoc());
  auto *cond = dyn_cast<BinaryOperator>(fs->getCond()->IgnoreParenImpCasts());
  const Expr *lhs = cond ? cond->getLHS()->IgnoreParenImpCasts() : nullptr;
  auto *lhs_ref = lhs ? dyn_cast<DeclRefExpr>(lhs) : nullptr;
  if (!cond || !lhs_ref || lhs_ref->getDecl() != var)
    return bad(fs->getCond()->getExprLoc());
  // The step.
  const Expr *inc = fs->getInc()->IgnoreParenImpCasts();
  ir::Expr step;
  bool negative = false;
  auto refers = [&](const Expr *e) {
    auto *d = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts());
    return d && d->getDecl() == var;
  };
  if (auto *u = dyn_cast<UnaryOperator>(inc); u && u->isIncrementDecrementOp() && refers(u->getSubExpr())) {
    step = ir::int_imm(1);
    negative = u->isDecrementOp();
  } else if (auto *ca = dyn_cast<CompoundAssignOperator>(inc);
             ca && refers(ca->getLHS()) && (ca->getOpcode() == BO_AddAssign || ca->getOpcode() == BO_SubAssign)) {
    step = expr(ca->getRHS());
    if (!step)
      return;
    negative = ca->getOpcode() == BO_SubAssign;
  } else {
    return bad(inc->getExprLoc());
  }
  auto st = scalar_type_of(var->getType());
  ir::Expr begin = expr(var->getInit());
  ir::Expr bound = begin ? expr(cond->getRHS()) : nullptr;
  if (!bound)
    return;
  begin = ir::cast(*st, begin);
  bound = ir::cast(*st, bound);
  step = ir::cast(*st, step);
  if (auto c = ir::as_const_int(step); c && *c <= 0) {
    error(inc->getExprLoc(), "the step of this loop must be positive", "count the other way with -= or --");
    return;
  }
  // Trip count: the number of values begin, begin +- step, ... that satisfy the condition.
  ir::Expr span;
  ir::Expr one = ir::int_imm(1, *st);
  switch (cond->getOpcode()) {
  case BO_LT: span = negative ? nullptr : ir::sub(bound, begin); break;
  case BO_LE: span = negative ? nullptr : ir::add(ir::sub(bound, begin), one); break;
  case BO_NE: span = negative ? ir::sub(begin, bound) : ir::sub(bound, begin); break;
  case BO_GT: span = negative ? ir::sub(begin, bound) : nullptr; break;
  case BO_GE: span = negative ? ir::add(ir::sub(begin, bound), one) : nullptr; break;
  default: break;
  }
  if (!span)
    return bad(cond->getOperatorLoc());
  ir::Expr trips = ir::div(ir::sub(ir::add(span, step), one), step);
  trips = ir::binary(ir::BinaryOp::Max, trips, ir::int_imm(0, *st));
  ir::Var v = ir::make_var(unique_name(var->getNameAsString()), *st);
  env[var].var = v;
  auto b0 = ir::as_const_int(begin), n = ir::as_const_int(trips), k = ir::as_const_int(step);
  if (b0 && n && k && *n > 0 && *n < (std::int64_t(1) << 31) && *k < (std::int64_t(1) << 31)) {
    std::int64_t last = negative ? *b0 - (*n - 1) * *k : *b0 + (*n - 1) * *k;
    ranges[v.get()] = {std::min(*b0, last), std::max(*b0, last)};
  }
  ++loop_depth;
  ir::Stmt body = sub_block(fs->getBody());
  --loop_depth;
  if (failed())
    return;
  emit(ir::for_loop(v, begin, trips, ir::ForKind::Serial, body,
                    negative ? ir::unary(ir::UnaryOp::Neg, step) : step));
  return;
}

void Translator::expr_stmt(const Expr *e) {
e = strip_all(e);
if (auto *ce = dyn_cast<CastExpr>(e); ce && ce->getCastKind() == CK_ToVoid)
  e = strip_all(ce->getSubExpr());

// Assignments: scalars and buffer elements.
auto assign_to = [&](const Expr *lhs, const std::function<ir::Expr(ir::Expr)> &value) {
  const Expr *l = strip_all(lhs);
  if (auto *d = dyn_cast<DeclRefExpr>(l->IgnoreImpCasts())) {
    const Binding *b = lookup(d->getDecl());
    if (b && b->var) {
      ir::Expr v = value(b->var);
      if (v)
        emit(ir::assign(b->var, v));
      return;
    }
    if (b && b->value) {
      error(d->getExprLoc(), "'" + d->getDecl()->getNameAsString() + "' is a constant",
            "declare it without const to change it");
      return;
    }
  }
  if (auto ref = element_ref(l, true)) {
    ir::Expr v = value(ir::load(ref->buffer, ref->indices));
    if (v)
      emit(ir::store(ref->buffer, ref->indices, v));
    return;
  }
  if (!failed())
    error(lhs->getExprLoc(), "cannot assign to this expression in a kernel",
          "assign to scalar variables and buffer elements b(i, j)");
};

if (auto *bo = dyn_cast<BinaryOperator>(e); bo && bo->isAssignmentOp()) {
  if (bo->getOpcode() == BO_Assign) {
    assign_to(bo->getLHS(), [&](ir::Expr) { return expr(bo->getRHS()); });
    return;
  }
  auto op = compound_op(bo->getOpcode());
  assign_to(bo->getLHS(), [&](ir::Expr old) -> ir::Expr {
    ir::Expr r = expr(bo->getRHS());
    return r ? checked_binary(bo->getOperatorLoc(), *op, old, r) : nullptr;
  });
  return;
}
if (auto *uo = dyn_cast<UnaryOperator>(e); uo && uo->isIncrementDecrementOp()) {
  assign_to(uo->getSubExpr(), [&](ir::Expr old) {
    return ir::binary(uo->isIncrementOp() ? ir::BinaryOp::Add : ir::BinaryOp::Sub, old, ir::int_imm(1));
  });
  return;
}
if (auto *op = dyn_cast<CXXOperatorCallExpr>(e); op && op->getOperator() == OO_Equal && op->getNumArgs() == 2) {
  // Assignment of an extended-float element: bf16's copy assignment.
  assign_to(op->getArg(0), [&](ir::Expr) { return expr(op->getArg(1)); });
  return;
}

if (auto *call = dyn_cast<CallExpr>(e)) {
  if (tile_op(call) || failed())
    return;
  bool handled = false;
  inline_call(call, handled);
  if (handled || failed())
    return;
}
// Any other expression statement: evaluate it for its errors, then drop its value.
if (expr(e) && !failed())
  return; // a value computed and discarded: nothing to do
}

} // namespace tile::frontend
