// Scalar expressions, element accesses, and inlined macro and lambda calls.
#include <cmath>
#include <limits>

#include "frontend/Translator.h"

using namespace clang;

namespace tile::frontend {

namespace {

std::optional<ir::BinaryOp> binary_op(BinaryOperatorKind k) {
  switch (k) {
  case BO_Add: return ir::BinaryOp::Add;
  case BO_Sub: return ir::BinaryOp::Sub;
  case BO_Mul: return ir::BinaryOp::Mul;
  case BO_Div: return ir::BinaryOp::Div;
  case BO_Rem: return ir::BinaryOp::Mod;
  case BO_LT: return ir::BinaryOp::LT;
  case BO_GT: return ir::BinaryOp::GT;
  case BO_LE: return ir::BinaryOp::LE;
  case BO_GE: return ir::BinaryOp::GE;
  case BO_EQ: return ir::BinaryOp::EQ;
  case BO_NE: return ir::BinaryOp::NE;
  case BO_LAnd: return ir::BinaryOp::And;
  case BO_LOr: return ir::BinaryOp::Or;
  case BO_And: return ir::BinaryOp::BitAnd;
  case BO_Or: return ir::BinaryOp::BitOr;
  case BO_Xor: return ir::BinaryOp::BitXor;
  case BO_Shl: return ir::BinaryOp::Shl;
  case BO_Shr: return ir::BinaryOp::Shr;
  default: return std::nullopt;
  }
}

std::optional<ir::Intrinsic> math_intrinsic(const std::string &n) {
  if (n == "tile::exp") return ir::Intrinsic::Exp;
  if (n == "tile::exp2") return ir::Intrinsic::Exp2;
  if (n == "tile::log") return ir::Intrinsic::Log;
  if (n == "tile::log2") return ir::Intrinsic::Log2;
  if (n == "tile::sqrt") return ir::Intrinsic::Sqrt;
  if (n == "tile::rsqrt") return ir::Intrinsic::Rsqrt;
  if (n == "tile::tanh") return ir::Intrinsic::Tanh;
  if (n == "tile::sigmoid") return ir::Intrinsic::Sigmoid;
  if (n == "tile::fma") return ir::Intrinsic::Fma;
  if (n == "tile::round") return ir::Intrinsic::Round;
  if (n == "tile::floor") return ir::Intrinsic::Floor;
  if (n == "tile::ceil") return ir::Intrinsic::Ceil;
  if (n == "tile::trunc") return ir::Intrinsic::Trunc;
  if (n == "tile::sin") return ir::Intrinsic::Sin;
  if (n == "tile::cos") return ir::Intrinsic::Cos;
  if (n == "tile::erf") return ir::Intrinsic::Erf;
  if (n == "tile::pow") return ir::Intrinsic::Pow;
  if (n == "tile::log1p") return ir::Intrinsic::Log1p;
  if (n == "tile::expm1") return ir::Intrinsic::Expm1;
  if (n == "tile::isnan") return ir::Intrinsic::IsNan;
  if (n == "tile::isinf") return ir::Intrinsic::IsInf;
  return std::nullopt;
}

/// The largest finite value of a floating type.
double max_finite(ir::ScalarType t) {
  switch (t) {
  case ir::ScalarType::F64: return std::numeric_limits<double>::max();
  case ir::ScalarType::F32: return std::numeric_limits<float>::max();
  case ir::ScalarType::BF16: return 3.3895313892515355e38;
  case ir::ScalarType::F16: return 65504.0;
  case ir::ScalarType::F8E4M3: return 448.0;
  case ir::ScalarType::F8E5M2: return 57344.0;
  default: return 0;
  }
}

std::int64_t int_min(ir::ScalarType t) {
  if (!ir::is_signed(t) || t == ir::ScalarType::Bool)
    return 0;
  return ir::bits(t) >= 64 ? std::numeric_limits<std::int64_t>::min() : -(std::int64_t(1) << (ir::bits(t) - 1));
}

const Expr *skip_temporaries(const Expr *e) {
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
    else
      return e;
  }
}

} // namespace

std::optional<APValue> Translator::evaluate(const Expr *e) {
  if (e->isValueDependent() || e->isTypeDependent())
    return std::nullopt;
  Expr::EvalResult r;
  if (!e->EvaluateAsRValue(r, ctx) || r.HasSideEffects)
    return std::nullopt;
  return r.Val;
}

std::optional<std::int64_t> Translator::const_int(const Expr *e, const std::string &what) {
  auto v = evaluate(e);
  if (v && v->isInt())
    return v->getInt().getExtValue();
  error(e->getExprLoc(), what + " must be a compile-time constant",
        "use a template parameter, a constexpr variable or a literal", e->getSourceRange());
  return std::nullopt;
}

std::optional<Translator::ElementRef> Translator::element_ref(const Expr *e, bool for_write) {
  e = skip_temporaries(e);
  if (auto *ic = dyn_cast<ImplicitCastExpr>(e); ic && ic->getCastKind() == CK_NoOp)
    e = skip_temporaries(ic->getSubExpr());
  auto *op = dyn_cast<CXXOperatorCallExpr>(e);
  if (!op || op->getOperator() != OO_Call || op->getNumArgs() < 1)
    return std::nullopt;
  ir::Buffer b = buffer_ref(op->getArg(0), "element access", /*required=*/false);
  if (!b)
    return std::nullopt;
  if (b->scope == ir::Scope::Fragment && parallel_depth == 0) {
    error(op->getExprLoc(), "element of fragment '" + b->name + "' accessed outside a tile::parallel loop",
          "fragments are spread over the block's threads: access their elements inside "
          "for (auto [i, j] : tile::parallel(...)), or copy the fragment to a shared or local buffer");
    return std::nullopt;
  }
  if (for_write && b->read_only) {
    error(op->getExprLoc(), "tensor '" + b->name + "' is read-only", "declare it tile::tensor<T, Rank> without const");
    return std::nullopt;
  }
  ElementRef r;
  r.buffer = b;
  for (unsigned i = 1; i < op->getNumArgs(); ++i) {
    ir::Expr idx = expr(op->getArg(i));
    if (!idx)
      return std::nullopt;
    r.indices.push_back(idx);
  }
  if (int(r.indices.size()) == b->rank() && b->scope != ir::Scope::Global)
    for (int d = 0; d < b->rank(); ++d)
      if (!check_index(op->getArg(d + 1)->getExprLoc(), b, d, r.indices[d]))
        return std::nullopt;
  if (int(r.indices.size()) != b->rank()) {
    error(op->getExprLoc(), "'" + b->name + "' has rank " + std::to_string(b->rank()) + " but is indexed with " +
                                std::to_string(r.indices.size()) + " indices",
          "write one index per dimension");
    return std::nullopt;
  }
  return r;
}

ir::Expr Translator::checked_binary(SourceLocation loc, ir::BinaryOp op, const ir::Expr &a, const ir::Expr &b) {
  ir::Expr r = ir::binary(op, a, b);
  auto n = r->as<ir::BinaryNode>();
  if (!n)
    return r; // folded: a defined value
  auto divisor = ir::as_const_int(n->b);
  if ((op == ir::BinaryOp::Div || op == ir::BinaryOp::Mod) && divisor && *divisor == 0) {
    error(loc, std::string("integer ") + (op == ir::BinaryOp::Div ? "division" : "remainder") + " by zero",
          "division of integers by zero has no value; test the divisor first, or divide floating-point values");
    return nullptr;
  }
  if ((op == ir::BinaryOp::Shl || op == ir::BinaryOp::Shr) && divisor &&
      (*divisor < 0 || *divisor >= ir::bits(n->a->type))) {
    error(loc, "shift by " + std::to_string(*divisor) + " bits of a " + std::to_string(ir::bits(n->a->type)) +
                   "-bit value",
          "shift counts run from 0 to " + std::to_string(ir::bits(n->a->type) - 1) +
              "; convert the value to a wider type first (tile::cast<int64_t>(x) << n)");
    return nullptr;
  }
  return r;
}

bool Translator::check_index(SourceLocation loc, const ir::Buffer &b, int dim, const ir::Expr &first,
                             std::int64_t span) {
  auto r = analysis::bounds_of(first, ranges);
  if (!r)
    return true;
  const std::int64_t extent = b->extent(dim);
  const std::int64_t lo = r->lo, hi = r->hi + span - 1;
  const bool all_out = hi < 0 || lo >= extent, some_out = lo < 0 || hi >= extent;
  if (!all_out && !(some_out && conditional == 0))
    return true;
  std::string where = "dimension " + std::to_string(dim) + " of '" + b->name + "' (extent " + std::to_string(extent) + ")";
  std::string valid = "valid indices of '" + b->name + "' in dimension " + std::to_string(dim) + " are 0 to " +
                      std::to_string(extent - 1);
  std::string what = span == 1 ? "index" : "the tile's first index";
  if (lo == r->hi)
    error(loc, what + " " + std::to_string(lo) + (span == 1 ? "" : " (with " + std::to_string(span) + " elements)") +
                   " is outside " + where,
          valid);
  else if (all_out)
    error(loc, what + " ranges over [" + std::to_string(r->lo) + ", " + std::to_string(r->hi) + "], outside " + where,
          valid);
  else
    error(loc, what + " ranges over [" + std::to_string(r->lo) + ", " + std::to_string(r->hi) + "]" +
                   (span == 1 ? "" : " (with " + std::to_string(span) + " elements)") + ", which reaches outside " +
                   where,
          valid + ": guard the access with if (...) or narrow the loop");
  return false;
}

/// The scalar type of `e` (an error at it where it has none).
std::optional<ir::ScalarType> Translator::result_type(const Expr *e) {
  QualType type = e->getType();
  auto st = scalar_type_of(type);
  if (!st)
    error(e->getExprLoc(), "expression of type '" + type.getAsString() + "' is not a scalar",
          "kernel expressions compute arithmetic scalars; tile buffers are operands of tile operations",
          e->getSourceRange());
  return st;
}

/// A conversion (expr()'s part for casts).
ir::Expr Translator::cast_expr(const CastExpr *ce) {
  const Expr *e = ce;
  auto result_type = [&] { return this->result_type(e); };
  const Expr *sub = ce->getSubExpr();
  switch (ce->getCastKind()) {
  case CK_LValueToRValue:
  case CK_NoOp:
  case CK_ConstructorConversion:
  case CK_UserDefinedConversion: {
    ir::Expr v = expr(sub);
    if (!v)
      return nullptr;
    auto st = result_type();
    return st ? ir::cast(*st, v) : nullptr;
  }
  case CK_IntegralCast:
  case CK_FloatingCast:
  case CK_IntegralToFloating:
  case CK_FloatingToIntegral:
  case CK_IntegralToBoolean:
  case CK_FloatingToBoolean: {
    ir::Expr v = expr(sub);
    auto st = result_type();
    return v && st ? ir::cast(*st, v) : nullptr;
  }
  case CK_BooleanToSignedIntegral: {
    ir::Expr v = expr(sub);
    auto st = result_type();
    return v && st ? ir::unary(ir::UnaryOp::Neg, ir::cast(*st, v)) : nullptr;
  }
  default:
    error(e->getExprLoc(), std::string("conversion '") + ce->getCastKindName() + "' is not supported in a kernel",
          "kernels compute with arithmetic scalars; pointers and class objects are not values there",
          e->getSourceRange());
    return nullptr;
  }
}

/// A call: element access, tile:: functions, macros, lambdas, constexpr functions (expr()'s
/// part for calls).
ir::Expr Translator::call_expr(const CallExpr *call) {
  const Expr *e = call;
  QualType type = e->getType();
  auto result_type = [&] { return this->result_type(e); };
  // Element access: b(i, j).
  if (auto ref = element_ref(call, false))
    return ir::load(ref->buffer, ref->indices);
  if (failed())
    return nullptr;

  const FunctionDecl *fn = call->getDirectCallee();
  std::string name = qualified_name(fn);

  if (auto *mc = dyn_cast<CXXMemberCallExpr>(call)) {
    const CXXMethodDecl *m = mc->getMethodDecl();
    const Expr *obj = mc->getImplicitObjectArgument();
    TileTypeInfo info = classify_tile_type(obj->getType());
    if (m && isa<CXXConversionDecl>(m)) {
      ir::Expr v = expr(obj);
      auto st = result_type();
      return v && st ? ir::cast(*st, v) : nullptr;
    }
    if (info.kind == TileTypeKind::Tensor && m && (m->getName() == "size" || m->getName() == "stride")) {
      ir::Buffer b = buffer_ref(obj, "size");
      if (!b)
        return nullptr;
      auto d = const_int(mc->getArg(0), "the dimension of " + m->getNameAsString() + "()");
      if (!d)
        return nullptr;
      if (*d < 0 || *d >= b->rank()) {
        error(mc->getArg(0)->getExprLoc(),
              "dimension " + std::to_string(*d) + " is out of range for tensor '" + b->name + "' of rank " +
                  std::to_string(b->rank()),
              "write a dimension from 0 to " + std::to_string(b->rank() - 1));
        return nullptr;
      }
      ir::Expr v = m->getName() == "size" ? b->shape[*d] : b->strides[*d];
      auto st = result_type();
      return st ? ir::cast(*st, v) : nullptr;
    }
    if (m && m->isVirtual()) {
      error(call->getExprLoc(), "virtual call to '" + m->getNameAsString() + "' is not supported in a kernel",
            "call a [[tile::macro]] function instead");
      return nullptr;
    }
  }

  if (name.rfind("tile::", 0) == 0 && fn && fn->getDeclContext()->getRedeclContext()->isNamespace()) {
    auto arg = [&](unsigned i) { return expr(call->getArg(i)); };
    auto st = result_type();
    if (!st)
      return nullptr;
    if (name == "tile::min" || name == "tile::max") {
      ir::Expr a = arg(0), b = a ? arg(1) : nullptr;
      if (!b)
        return nullptr;
      return ir::binary(name == "tile::min" ? ir::BinaryOp::Min : ir::BinaryOp::Max, ir::cast(*st, a), ir::cast(*st, b));
    }
    if (name == "tile::abs") {
      ir::Expr a = arg(0);
      return a ? ir::call(ir::Intrinsic::Abs, {ir::cast(*st, a)}) : nullptr;
    }
    if (auto f = math_intrinsic(name)) {
      std::vector<ir::Expr> args;
      for (unsigned i = 0; i < call->getNumArgs(); ++i) {
        ir::Expr a = arg(i);
        if (!a)
          return nullptr;
        // Math happens in the result's type; isnan / isinf test their argument in f64
        // when it is f64, else in f32 (16-bit floats widen exactly).
        ir::ScalarType in = *st;
        if (*f == ir::Intrinsic::IsNan || *f == ir::Intrinsic::IsInf)
          in = a->type == ir::ScalarType::F64 ? ir::ScalarType::F64 : ir::ScalarType::F32;
        args.push_back(ir::cast(in, a));
      }
      return ir::call(*f, args);
    }
    if (name == "tile::cast") {
      ir::Expr a = arg(0);
      return a ? ir::cast(*st, a) : nullptr;
    }
    if (name == "tile::ceildiv") {
      ir::Expr a = arg(0), b = a ? arg(1) : nullptr;
      if (!b)
        return nullptr;
      a = ir::cast(*st, a);
      b = ir::cast(*st, b);
      return ir::div(ir::sub(ir::add(a, b), ir::int_imm(1, *st)), b);
    }
    // The launch stub's spelling of `/`, `%` and float-to-integer conversions before tile::grid
    // (clang-plugin/Stub.cpp gives them the language's meaning on the host): the operators.
    if (name == "tile::rt::divide" || name == "tile::rt::remainder") {
      ir::Expr a = arg(0), b = a ? arg(1) : nullptr;
      if (!b)
        return nullptr;
      ir::Expr r = checked_binary(call->getExprLoc(), name == "tile::rt::divide" ? ir::BinaryOp::Div : ir::BinaryOp::Mod,
                                  a, b);
      return r ? ir::cast(*st, r) : nullptr;
    }
    if (name == "tile::rt::to_integer") {
      ir::Expr a = arg(0);
      return a ? ir::cast(*st, a) : nullptr;
    }
    if (name.rfind("tile::atomic_", 0) == 0) {
      error(call->getExprLoc(), "the value of " + name + " is read only as the initializer of a declaration",
            "write it as a statement, or as const T old = " + name + "(...); and use old");
      return nullptr;
    }
    if (name == "tile::infinity")
      return ir::is_float(*st) ? ir::float_imm(std::numeric_limits<double>::infinity(), *st)
                               : ir::int_imm(std::numeric_limits<std::int64_t>::max(), *st);
    if (name == "tile::lowest")
      return ir::is_float(*st) ? ir::float_imm(-max_finite(*st), *st) : ir::int_imm(int_min(*st), *st);
    error(call->getExprLoc(), "'" + name + "' does not compute a value",
          "call tile operations as statements of their own");
    return nullptr;
  }

  bool handled = false;
  ir::Expr v = inline_call(call, handled);
  if (handled) {
    if (!v && !failed())
      error(call->getExprLoc(), "'" + (fn ? fn->getNameAsString() : std::string("lambda")) + "' returns no value",
            "call it as a statement of its own, or make it return a scalar");
    return v;
  }
  if (failed())
    return nullptr;
  std::string shown = name.empty() ? (fn ? fn->getNameAsString() : "this function") : name;
  if (name.rfind("std::", 0) == 0) {
    std::string base = name.substr(name.rfind(':') + 1);
    error(call->getExprLoc(), "call to '" + shown + "' is not supported in a kernel",
          "use the kernel language's own functions (tile::" + base + " where it exists)");
    return nullptr;
  }
  if (fn && fn->isConstexpr()) {
    error(call->getExprLoc(), "call to constexpr function '" + shown + "' is not a compile-time constant here",
          "constexpr functions are evaluated at compile time; to inline one on run-time values, mark it [[tile::macro]]");
    return nullptr;
  }
  error(call->getExprLoc(), "call to '" + shown + "' is not supported in a kernel",
        "kernels can call tile:: functions, [[tile::macro]] functions, lambdas and constexpr functions");
  return nullptr;
}

ir::Expr Translator::expr(const Expr *e) {
  Nesting nesting(*this, e->getExprLoc());
  if (failed())
    return nullptr;
  e = e->IgnoreParens();
  QualType type = e->getType();

  // Constant expressions (literals, template parameters, constexpr calls) fold first.
  if (type->isIntegralOrEnumerationType() || type->isRealFloatingType()) {
    if (auto v = evaluate(e)) {
      auto st = scalar_type_of(type);
      if (st && v->isInt())
        return ir::int_imm(v->getInt().isSigned() ? v->getInt().getSExtValue() : std::int64_t(v->getInt().getZExtValue()), *st);
      if (st && v->isFloat())
        return ir::float_imm(v->getFloat().convertToDouble(), *st);
    }
  }

  auto result_type = [&] { return this->result_type(e); };

  if (auto *c = dyn_cast<ExprWithCleanups>(e))
    return expr(c->getSubExpr());
  if (auto *m = dyn_cast<MaterializeTemporaryExpr>(e))
    return expr(m->getSubExpr());
  if (auto *b = dyn_cast<CXXBindTemporaryExpr>(e))
    return expr(b->getSubExpr());
  if (auto *d = dyn_cast<CXXDefaultArgExpr>(e))
    return expr(d->getExpr());
  if (auto *s = dyn_cast<SubstNonTypeTemplateParmExpr>(e))
    return expr(s->getReplacement());

  if (auto *ce = dyn_cast<CastExpr>(e))
    return cast_expr(ce);

  if (auto *dre = dyn_cast<DeclRefExpr>(e)) {
    const ValueDecl *d = dre->getDecl();
    if (const Binding *b = lookup(d)) {
      if (b->var)
        return b->var;
      if (b->value)
        return b->value;
      if (b->buffer) {
        error(e->getExprLoc(), "buffer '" + b->buffer->name + "' used as a scalar value",
              "pass buffers to tile operations, or index them: buf(i, j)", e->getSourceRange());
        return nullptr;
      }
    }
    if (isa<VarDecl>(d) && cast<VarDecl>(d)->hasGlobalStorage()) {
      error(e->getExprLoc(), "kernel uses variable '" + d->getNameAsString() + "', which is not a compile-time constant",
            "kernels cannot read global or static variables: pass the value as a kernel parameter or make it constexpr",
            e->getSourceRange());
      return nullptr;
    }
    error(e->getExprLoc(), "'" + d->getNameAsString() + "' cannot be used in a kernel here",
          "kernels use their parameters, block indices, loop variables and local scalars", e->getSourceRange());
    return nullptr;
  }

  if (auto *bo = dyn_cast<BinaryOperator>(e)) {
    if (bo->isAssignmentOp()) {
      error(bo->getOperatorLoc(), "assignment inside an expression is not supported in a kernel",
            "write the assignment as a statement of its own");
      return nullptr;
    }
    if (bo->getOpcode() == BO_Comma) {
      error(bo->getOperatorLoc(), "the comma operator is not supported in a kernel", "write two statements");
      return nullptr;
    }
    auto op = binary_op(bo->getOpcode());
    if (!op) {
      error(bo->getOperatorLoc(), "operator '" + bo->getOpcodeStr().str() + "' is not supported in a kernel",
            "kernels compute with arithmetic, comparison, logical and bitwise operators on scalars");
      return nullptr;
    }
    ir::Expr a = expr(bo->getLHS());
    const bool short_circuit = bo->getOpcode() == BO_LAnd || bo->getOpcode() == BO_LOr;
    conditional += short_circuit;
    lazy_operand += short_circuit;
    ir::Expr b = a ? expr(bo->getRHS()) : nullptr;
    lazy_operand -= short_circuit;
    conditional -= short_circuit;
    if (!b)
      return nullptr;
    ir::Expr r = checked_binary(bo->getOperatorLoc(), *op, a, b);
    auto st = r ? result_type() : std::nullopt;
    return st ? ir::cast(*st, r) : nullptr;
  }

  if (auto *uo = dyn_cast<UnaryOperator>(e)) {
    switch (uo->getOpcode()) {
    case UO_Plus:
      return expr(uo->getSubExpr());
    case UO_Minus:
    case UO_LNot:
    case UO_Not: {
      ir::Expr a = expr(uo->getSubExpr());
      if (!a)
        return nullptr;
      ir::UnaryOp op = uo->getOpcode() == UO_Minus ? ir::UnaryOp::Neg
                       : uo->getOpcode() == UO_LNot ? ir::UnaryOp::Not
                                                    : ir::UnaryOp::BitNot;
      auto st = result_type();
      return st ? ir::cast(*st, ir::unary(op, a)) : nullptr;
    }
    case UO_PreInc:
    case UO_PreDec:
    case UO_PostInc:
    case UO_PostDec:
      error(uo->getOperatorLoc(), "increment inside an expression is not supported in a kernel",
            "write the increment as a statement of its own");
      return nullptr;
    default:
      error(uo->getOperatorLoc(), "pointers are not supported in kernels",
            "index tensors and buffers directly: t(i, j)");
      return nullptr;
    }
  }

  if (auto *co = dyn_cast<ConditionalOperator>(e)) {
    ir::Expr c = expr(co->getCond());
    ++conditional;
    ++lazy_operand;
    ir::Expr t = c ? expr(co->getTrueExpr()) : nullptr;
    ir::Expr f = t ? expr(co->getFalseExpr()) : nullptr;
    --lazy_operand;
    --conditional;
    auto st = f ? result_type() : std::nullopt;
    return st ? ir::cast(*st, ir::select(c, t, f)) : nullptr;
  }

  if (isa<CXXThrowExpr>(e)) {
    error(e->getExprLoc(), "exceptions are not supported in kernels",
          "check conditions with tile::device_assert(cond, \"message\")");
    return nullptr;
  }
  if (isa<CXXNewExpr>(e) || isa<CXXDeleteExpr>(e)) {
    error(e->getExprLoc(), "dynamic allocation is not supported in kernels",
          "use tile::local, tile::fragment or tile::shared buffers of compile-time size");
    return nullptr;
  }

  if (auto *cons = dyn_cast<CXXConstructExpr>(e)) {
    auto st = scalar_type_of(type);
    if (st && ir::is_extended_float(*st)) {
      if (cons->getNumArgs() == 0)
        return ir::float_imm(0.0, *st);
      ir::Expr v = expr(cons->getArg(0));
      return v ? ir::cast(*st, v) : nullptr;
    }
  }

  if (auto *call = dyn_cast<CallExpr>(e))
    return call_expr(call);

  if (isa<StringLiteral>(e)) {
    error(e->getExprLoc(), "string literals are only allowed in tile::print, tile::device_assert and tile::expect",
          "kernel expressions compute arithmetic scalars");
    return nullptr;
  }
  error(e->getExprLoc(), std::string("this expression (") + e->getStmtClassName() + ") is not supported in a kernel",
        "kernel expressions are arithmetic on scalars, buffer elements and tile:: functions", e->getSourceRange());
  return nullptr;
}

// ---------------------------------------------------------------------------------------
// Macros and lambdas
// ---------------------------------------------------------------------------------------

ir::Expr Translator::inline_call(const CallExpr *call, bool &handled) {
  handled = false;
  const FunctionDecl *fn = call->getDirectCallee();
  unsigned first_arg = 0;
  bool lambda = false;
  if (auto *op = dyn_cast<CXXOperatorCallExpr>(call); op && op->getOperator() == OO_Call) {
    auto *m = dyn_cast_or_null<CXXMethodDecl>(fn);
    if (!m || !m->getParent()->isLambda())
      return nullptr;
    lambda = true;
    first_arg = 1;
  } else if (!fn || !is_macro(fn)) {
    return nullptr;
  }
  handled = true;
  std::string shown = lambda ? std::string("lambda") : fn->getNameAsString();
  for (auto &f : inline_stack)
    if (f.fn->getCanonicalDecl() == fn->getCanonicalDecl()) {
      error(call->getExprLoc(), "recursive call to '" + shown + "' is not supported in a kernel",
            "macros and lambdas are inlined: write the recursion as a loop");
      return nullptr;
    }
  // Different functions can still call each other without end (r<N> calls r<N - 1>): the
  // depth of inlining is limited too.
  if (int(inline_stack.size()) >= max_inline_depth) {
    error(call->getExprLoc(),
          "macro and lambda calls nested more than " + std::to_string(max_inline_depth) + " deep in a kernel",
          "macros and lambdas are inlined: write the repetition as a loop (tile::unroll(n) for a constant count)");
    return nullptr;
  }
  const FunctionDecl *def = nullptr;
  const Stmt *body = fn->getBody(def);
  if (!body) {
    error(call->getExprLoc(), "the body of '" + shown + "' is not available in this file",
          "define [[tile::macro]] functions before the kernels that call them, in the same file or a header");
    return nullptr;
  }
  if (!def)
    def = fn;

  // Bind parameters: buffers by reference, scalars by value (a fresh variable each call)
  // or, for scalar references, to the caller's variable.
  std::vector<std::pair<const ValueDecl *, std::optional<Binding>>> saved;
  for (unsigned i = 0; i < def->getNumParams(); ++i) {
    const ParmVarDecl *p = def->getParamDecl(i);
    const Expr *a = call->getArg(first_arg + i);
    auto old = env.find(p);
    saved.emplace_back(p, old == env.end() ? std::nullopt : std::optional<Binding>(old->second));
    TileTypeInfo info = classify_tile_type(p->getType());
    Binding b;
    if (info.kind == TileTypeKind::Tensor || info.kind == TileTypeKind::Shared ||
        info.kind == TileTypeKind::Fragment || info.kind == TileTypeKind::Local) {
      b.buffer = buffer_ref(a, "argument");
      if (!b.buffer)
        return nullptr;
    } else if (p->getType()->isReferenceType() && !p->getType().getNonReferenceType().isConstQualified()) {
      auto *dre = dyn_cast<DeclRefExpr>(skip_temporaries(a)->IgnoreImpCasts());
      const Binding *caller = dre ? lookup(dre->getDecl()) : nullptr;
      if (!caller || !caller->var) {
        error(a->getExprLoc(), "argument for reference parameter '" + p->getNameAsString() + "' must be a scalar variable",
              "pass buffer elements by value and assign the result, or pass the whole buffer");
        return nullptr;
      }
      b.var = caller->var;
    } else {
      auto st = scalar_type_of(p->getType());
      if (!st) {
        error(p->getLocation(), "parameter '" + p->getNameAsString() + "' of '" + shown + "' has type '" +
                                    p->getType().getAsString() + "', which kernels cannot pass",
              "macro parameters are tile buffers, tensors and arithmetic scalars");
        return nullptr;
      }
      ir::Expr v = expr(a);
      if (!v)
        return nullptr;
      b.var = ir::make_var(unique_name(p->getNameAsString()), *st);
      emit(ir::declare(b.var, v));
    }
    env[p] = b;
  }

  InlineFrame frame{fn, nullptr};
  frame.call_loc = call->getExprLoc();
  frame.shown = lambda ? std::string("lambda") : "[[tile::macro]] '" + shown + "'";
  QualType rt = fn->getReturnType();
  if (!rt->isVoidType()) {
    auto st = scalar_type_of(rt);
    if (!st) {
      error(call->getExprLoc(), "'" + shown + "' returns '" + rt.getAsString() + "', which is not a scalar",
            "macros return arithmetic scalars or nothing");
      return nullptr;
    }
    frame.result = ir::make_var(unique_name(lambda ? "result" : fn->getNameAsString()), *st);
    emit(ir::declare(frame.result, nullptr));
  }
  inline_stack.push_back(frame);
  stmt(body);
  InlineFrame done = inline_stack.back();
  inline_stack.pop_back();
  for (auto &[p, old] : saved) {
    if (old)
      env[p] = *old;
    else
      env.erase(p);
  }
  if (failed())
    return nullptr;
  if (done.result && !done.returned) {
    error(call->getExprLoc(), "'" + shown + "' ends without returning a value",
          "end every path of it with return value;");
    return nullptr;
  }
  return done.result;
}

} // namespace tile::frontend
