#include "Stub.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Sema/Lookup.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;

namespace tile::plugin {

namespace {

void report(Sema &s, SourceLocation loc, const std::string &message) {
  DiagnosticsEngine &d = s.getDiagnostics();
  d.Report(loc, d.getCustomDiagID(DiagnosticsEngine::Error, "%0")) << message;
}

/// `tile::rt::NAME` as a callee expression (an overload set or template is fine).
ExprResult runtime_function(Sema &s, const char *name, SourceLocation loc) {
  ASTContext &c = s.getASTContext();
  DeclContext *dc = c.getTranslationUnitDecl();
  for (const char *ns : {"tile", "rt"}) {
    LookupResult r(s, DeclarationName(&c.Idents.get(ns)), loc, Sema::LookupNamespaceName);
    s.LookupQualifiedName(r, dc);
    auto *found = r.getAsSingle<NamespaceDecl>();
    if (!found) {
      report(s, loc, std::string("tile kernels need the runtime's declarations: #include <tile/tile.h> (namespace '") +
                         ns + "' not found)");
      return ExprError();
    }
    dc = found;
  }
  LookupResult r(s, DeclarationName(&c.Idents.get(name)), loc, Sema::LookupOrdinaryName);
  s.LookupQualifiedName(r, dc);
  if (r.empty()) {
    report(s, loc, std::string("tile::rt::") + name + " not found: is <tile/tile.h> from the same tile version?");
    return ExprError();
  }
  return s.BuildDeclarationNameExpr(CXXScopeSpec(), r, /*NeedsADL=*/false);
}

StringLiteral *string_literal(ASTContext &c, llvm::StringRef bytes, SourceLocation loc) {
  QualType t = c.getStringLiteralArrayType(c.CharTy, bytes.size());
  return StringLiteral::Create(c, bytes, StringLiteralKind::Ordinary, /*Pascal=*/false, t, loc);
}

/// Whether `e` is a constant the host's C++ evaluates as the kernel language does: a
/// divisor other than 0 and -1 (the plugin leaves constant expressions alone; the frontend
/// reports a constant divisor of 0).
bool safe_constant_divisor(const Expr *e, ASTContext &c) {
  Expr::EvalResult r;
  if (e->isValueDependent() || !e->EvaluateAsInt(r, c))
    return false;
  const llvm::APSInt &v = r.Val.getInt();
  return !v.isZero() && !(v.isSigned() && v.isAllOnes());
}

/// Gives the statements before tile::grid (and the grid's extents), which the launch stub
/// runs on the host as C++, the kernel language's meaning where C++ leaves it undefined:
/// an integer `/` or `%` whose divisor may be 0 or -1 becomes tile::rt::divide or
/// tile::rt::remainder, and a floating-point to integer conversion (written or implicit)
/// becomes tile::rt::to_integer (truncating, saturating, NaN to 0). The nodes are replaced
/// in place; the frontend reads those calls as the operators they replace, so that the
/// device computes the same values. Returns false after an error.
bool host_semantics(Sema &s, Stmt *&slot) {
  if (!slot)
    return true;
  for (Stmt *&child : slot->children())
    if (!host_semantics(s, child))
      return false;
  auto *e = dyn_cast<Expr>(slot);
  if (!e || e->isValueDependent() || e->isTypeDependent())
    return true;
  ASTContext &c = s.getASTContext();
  const char *callee = nullptr;
  llvm::SmallVector<Expr *, 2> args;
  if (auto *bo = dyn_cast<BinaryOperator>(e); bo && !isa<CompoundAssignOperator>(bo) &&
                                               (bo->getOpcode() == BO_Div || bo->getOpcode() == BO_Rem) &&
                                               bo->getType()->isIntegerType() &&
                                               !safe_constant_divisor(bo->getRHS(), c)) {
    callee = bo->getOpcode() == BO_Div ? "divide" : "remainder";
    args = {bo->getLHS(), bo->getRHS()};
  } else if (auto *cast = dyn_cast<CastExpr>(e); cast && cast->getCastKind() == CK_FloatingToIntegral &&
                                                 cast->getType()->isIntegerType() &&
                                                 !cast->getType()->isEnumeralType() &&
                                                 !cast->getType()->isBooleanType() && !e->isEvaluatable(c)) {
    callee = "to_integer";
    QualType to = cast->getType().getUnqualifiedType();
    args = {cast->getSubExpr(),
            IntegerLiteral::Create(c, llvm::APInt(c.getIntWidth(to), 0), to, e->getExprLoc())};
  }
  if (!callee)
    return true;
  SourceLocation loc = e->getExprLoc();
  ExprResult fn = runtime_function(s, callee, loc);
  if (fn.isInvalid())
    return false;
  ExprResult call = s.BuildCallExpr(nullptr, fn.get(), loc, args, loc);
  if (call.isInvalid())
    return false;
  slot = call.get();
  return true;
}

/// A grid extent as written, before its conversion to tile::grid's int parameter: the
/// runtime takes 64 bits and reports extents past what a block index holds, where the
/// conversion would wrap them around (2^32 blocks to none).
Expr *extent_value(Expr *e) {
  while (auto *cast = dyn_cast<ImplicitCastExpr>(e)) {
    if (cast->getCastKind() != CK_IntegralCast)
      break;
    e = cast->getSubExpr();
  }
  return e;
}

} // namespace

Stmt *build_launch_stub(Sema &s, FunctionDecl *fd, const frontend::KernelHead &head, const std::string &key) {
  ASTContext &c = s.getASTContext();
  SourceLocation loc = head.grid_call->getBeginLoc();
  Sema::SynthesizedFunctionScope scope(s, fd);

  for (Stmt *st : head.prologue) // (a declaration or a tile::expect call: only their parts are replaced)
    if (!host_semantics(s, st))
      return nullptr;
  for (unsigned d : head.extent_args) {
    Stmt *arg = head.grid_call->getArg(d);
    if (!host_semantics(s, arg))
      return nullptr;
    head.grid_call->setArg(d, cast<Expr>(arg));
  }
  ExprResult fn = runtime_function(s, "launch", loc);
  if (fn.isInvalid())
    return nullptr;
  llvm::SmallVector<Expr *, 8> args;
  args.push_back(string_literal(c, key, loc));
  for (unsigned d = 0; d < 3; ++d) {
    if (d < head.extent_args.size())
      args.push_back(extent_value(head.grid_call->getArg(head.extent_args[d])));
    else
      args.push_back(IntegerLiteral::Create(c, llvm::APInt(32, 1), c.IntTy, loc));
  }
  for (ParmVarDecl *p : fd->parameters()) {
    ExprResult ref = s.BuildDeclRefExpr(p, p->getType().getNonReferenceType(), VK_LValue, loc);
    if (ref.isInvalid())
      return nullptr;
    args.push_back(ref.get());
  }
  ExprResult call = s.BuildCallExpr(nullptr, fn.get(), loc, args, loc);
  if (call.isInvalid())
    return nullptr;
  call = s.ActOnFinishFullExpr(call.get(), /*DiscardedValue=*/true);
  if (call.isInvalid())
    return nullptr;

  // The prologue runs on the host; each tile::expect(condition, message) in it becomes
  // tile::rt::expect(condition, message, kernel name, file:line).
  llvm::SmallVector<Stmt *, 8> stmts;
  for (Stmt *st : head.prologue) {
    const CallExpr *expect = frontend::expect_call(st);
    if (!expect) {
      stmts.push_back(st);
      continue;
    }
    SourceLocation eloc = expect->getExprLoc();
    ExprResult check = runtime_function(s, "expect", eloc);
    if (check.isInvalid())
      return nullptr;
    std::string name;
    llvm::raw_string_ostream os(name);
    fd->getNameForDiagnostic(os, c.getPrintingPolicy(), /*Qualified=*/true);
    PresumedLoc p = c.getSourceManager().getPresumedLoc(eloc);
    std::string where = p.isValid() ? std::string(p.getFilename()) + ":" + std::to_string(p.getLine()) : "";
    Expr *expect_args[] = {const_cast<Expr *>(expect->getArg(0)), const_cast<Expr *>(expect->getArg(1)),
                           string_literal(c, os.str(), eloc), string_literal(c, where, eloc)};
    ExprResult checked = s.BuildCallExpr(nullptr, check.get(), eloc, expect_args, eloc);
    if (!checked.isInvalid())
      checked = s.ActOnFinishFullExpr(checked.get(), /*DiscardedValue=*/true);
    if (checked.isInvalid())
      return nullptr;
    stmts.push_back(checked.get());
  }
  stmts.push_back(call.get());
  SourceLocation begin = fd->getBody() ? fd->getBody()->getBeginLoc() : loc;
  SourceLocation end = fd->getBody() ? fd->getBody()->getEndLoc() : loc;
  return CompoundStmt::Create(c, stmts, FPOptionsOverride(), begin, end);
}

VarDecl *build_image_registration(Sema &s, const std::string &manifest, const std::string &bytes, int index) {
  ASTContext &c = s.getASTContext();
  SourceManager &sm = c.getSourceManager();
  SourceLocation loc = sm.getLocForEndOfFile(sm.getMainFileID());
  ExprResult fn = runtime_function(s, "register_image", loc);
  if (fn.isInvalid())
    return nullptr;
  Expr *args[] = {
      string_literal(c, manifest, loc),
      string_literal(c, bytes, loc),
      IntegerLiteral::Create(c, llvm::APInt(c.getTypeSize(c.getSizeType()), bytes.size()), c.getSizeType(), loc),
  };
  ExprResult call = s.BuildCallExpr(nullptr, fn.get(), loc, args, loc);
  if (call.isInvalid())
    return nullptr;
  TranslationUnitDecl *tu = c.getTranslationUnitDecl();
  std::string name = "__tile_image_" + std::to_string(index);
  auto *vd = VarDecl::Create(c, tu, loc, loc, &c.Idents.get(name), c.IntTy, c.getTrivialTypeSourceInfo(c.IntTy, loc),
                             SC_Static);
  s.AddInitializerToDecl(vd, call.get(), /*DirectInit=*/false);
  vd->addAttr(UsedAttr::CreateImplicit(c));
  tu->addDecl(vd);
  return vd;
}

} // namespace tile::plugin
