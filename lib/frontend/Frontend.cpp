// Kernel-level translation: attributes, tile types, parameters, the kernel's head.
#include "frontend/Frontend.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Mangle.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/Support/raw_ostream.h"

#include "frontend/Translator.h"
#include "ir/Verifier.h"

using namespace clang;

namespace tile::frontend {

namespace {
bool has_annotation(const Decl *d, llvm::StringRef what) {
  if (!d)
    return false;
  for (auto *a : d->specific_attrs<AnnotateAttr>())
    if (a->getAnnotation() == what)
      return true;
  return false;
}

const Expr *strip(const Expr *e) {
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

/// The tile::grid call a statement of the head consists of, if any.
CallExpr *grid_call_of(Stmt *s) {
  const Expr *init = nullptr;
  if (auto *ds = dyn_cast<DeclStmt>(s)) {
    if (!ds->isSingleDecl())
      return nullptr;
    if (auto *vd = dyn_cast<VarDecl>(ds->getSingleDecl()))
      init = vd->getInit();
  } else if (auto *e = dyn_cast<Expr>(s)) {
    init = e;
  }
  if (!init)
    return nullptr;
  auto *call = dyn_cast<CallExpr>(strip(init));
  if (!call || !call->getDirectCallee() || qualified_name(call->getDirectCallee()) != "tile::grid")
    return nullptr;
  return const_cast<CallExpr *>(call);
}
/// The call when `e` (parentheses, casts to void and cleanups aside) calls `name`.
const CallExpr *call_to(const Expr *e, llvm::StringRef name) {
  e = strip(e);
  if (auto *c = dyn_cast<CStyleCastExpr>(e); c && c->getCastKind() == CK_ToVoid)
    e = strip(c->getSubExpr());
  auto *call = dyn_cast<CallExpr>(e);
  return call && call->getDirectCallee() && qualified_name(call->getDirectCallee()) == name ? call : nullptr;
}

/// The first tile::grid call anywhere inside `s` (for the error when it is not where it must be).
const CallExpr *nested_grid_call(const Stmt *s) {
  if (!s)
    return nullptr;
  if (auto *call = dyn_cast<CallExpr>(s))
    if (call->getDirectCallee() && qualified_name(call->getDirectCallee()) == "tile::grid")
      return call;
  for (const Stmt *c : s->children())
    if (const CallExpr *found = nested_grid_call(c))
      return found;
  return nullptr;
}
} // namespace

const CallExpr *expect_call(const Stmt *s) {
  auto *e = dyn_cast_or_null<Expr>(s);
  return e ? call_to(e, "tile::expect") : nullptr;
}

bool is_kernel(const Decl *d) {
  if (auto *fd = dyn_cast_or_null<FunctionDecl>(d)) {
    if (has_annotation(fd, kernel_annotation))
      return true;
    if (auto *pattern = fd->getTemplateInstantiationPattern())
      return has_annotation(pattern, kernel_annotation);
  }
  return has_annotation(d, kernel_annotation);
}

bool is_macro(const Decl *d) {
  if (auto *fd = dyn_cast_or_null<FunctionDecl>(d)) {
    if (has_annotation(fd, macro_annotation))
      return true;
    if (auto *pattern = fd->getTemplateInstantiationPattern())
      return has_annotation(pattern, macro_annotation);
  }
  return has_annotation(d, macro_annotation);
}

std::string qualified_name(const NamedDecl *d) {
  if (!d || !d->getDeclName().isIdentifier())
    return "";
  std::string s;
  llvm::raw_string_ostream os(s);
  d->printQualifiedName(os);
  return os.str();
}

std::optional<ir::ScalarType> scalar_type_of(QualType t) {
  t = t.getNonReferenceType().getCanonicalType().getUnqualifiedType();
  if (auto *bt = t->getAs<BuiltinType>()) {
    switch (bt->getKind()) {
    case BuiltinType::Bool: return ir::ScalarType::Bool;
    case BuiltinType::Char_S:
    case BuiltinType::SChar: return ir::ScalarType::I8;
    case BuiltinType::Char_U:
    case BuiltinType::UChar: return ir::ScalarType::U8;
    case BuiltinType::Short: return ir::ScalarType::I16;
    case BuiltinType::UShort: return ir::ScalarType::U16;
    case BuiltinType::Int: return ir::ScalarType::I32;
    case BuiltinType::UInt: return ir::ScalarType::U32;
    case BuiltinType::Long:
    case BuiltinType::LongLong: return ir::ScalarType::I64;
    case BuiltinType::ULong:
    case BuiltinType::ULongLong: return ir::ScalarType::U64;
    case BuiltinType::Float: return ir::ScalarType::F32;
    case BuiltinType::Double: return ir::ScalarType::F64;
    default: return std::nullopt;
    }
  }
  if (auto *et = t->getAs<EnumType>())
    return scalar_type_of(et->getDecl()->getIntegerType());
  if (auto *rd = t->getAsCXXRecordDecl()) {
    std::string n = qualified_name(rd);
    if (n == "tile::bf16") return ir::ScalarType::BF16;
    if (n == "tile::f16") return ir::ScalarType::F16;
    if (n == "tile::f8e4m3") return ir::ScalarType::F8E4M3;
    if (n == "tile::f8e5m2") return ir::ScalarType::F8E5M2;
  }
  return std::nullopt;
}

TileTypeInfo classify_tile_type(QualType t) {
  TileTypeInfo info;
  t = t.getNonReferenceType().getCanonicalType().getUnqualifiedType();
  auto *spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(t->getAsCXXRecordDecl());
  if (!spec) {
    if (auto *rd = t->getAsCXXRecordDecl(); rd && qualified_name(rd) == "tile::stream")
      info.kind = TileTypeKind::Stream;
    return info;
  }
  std::string n = qualified_name(spec->getSpecializedTemplate());
  const TemplateArgumentList &args = spec->getTemplateArgs();
  if (n == "tile::region") {
    info.kind = TileTypeKind::Region;
    return info;
  }
  TileTypeKind kind = n == "tile::tensor"     ? TileTypeKind::Tensor
                      : n == "tile::shared"   ? TileTypeKind::Shared
                      : n == "tile::fragment" ? TileTypeKind::Fragment
                      : n == "tile::local"    ? TileTypeKind::Local
                                              : TileTypeKind::None;
  if (kind == TileTypeKind::None || args.size() < 2 || args[0].getKind() != TemplateArgument::Type)
    return info;
  QualType elem = args[0].getAsType();
  auto st = scalar_type_of(elem);
  if (!st)
    return info;
  info.kind = kind;
  info.elem = *st;
  info.read_only = elem.isConstQualified();
  if (kind == TileTypeKind::Tensor) {
    info.rank = int(args[1].getAsIntegral().getExtValue());
    return info;
  }
  const TemplateArgument &dims = args[1];
  if (dims.getKind() == TemplateArgument::Pack) {
    for (const TemplateArgument &d : dims.pack_elements())
      info.shape.push_back(d.getAsIntegral().getExtValue());
  } else {
    for (unsigned i = 1; i < args.size(); ++i)
      info.shape.push_back(args[i].getAsIntegral().getExtValue());
  }
  return info;
}

std::string kernel_key(ASTContext &ctx, const FunctionDecl *fd) {
  std::unique_ptr<MangleContext> mangle(ctx.createMangleContext());
  std::string key;
  llvm::raw_string_ostream os(key);
  if (mangle->shouldMangleDeclName(fd))
    mangle->mangleName(GlobalDecl(fd), os);
  else
    os << fd->getName();
  return os.str();
}

// ---------------------------------------------------------------------------------------
// The kernel's head
// ---------------------------------------------------------------------------------------

void note_instantiation(Sema &sema, const FunctionDecl *fd) {
  if (!fd || !isTemplateInstantiation(fd->getTemplateSpecializationKind()))
    return;
  SourceLocation poi = fd->getPointOfInstantiation();
  if (poi.isInvalid())
    return;
  std::string name;
  llvm::raw_string_ostream os(name);
  fd->getNameForDiagnostic(os, sema.getASTContext().getPrintingPolicy(), /*Qualified=*/true);
  DiagnosticsEngine &d = sema.getDiagnostics();
  d.Report(poi, d.getCustomDiagID(DiagnosticsEngine::Note, "in instantiation of kernel '%0' requested here"))
      << os.str();
}

/// The first element access `t(i, ...)` of a tile::tensor in `s`, else null.
static const Expr *tensor_element_access(const Stmt *s) {
  if (!s)
    return nullptr;
  if (auto *op = dyn_cast<CXXOperatorCallExpr>(s);
      op && op->getOperator() == OO_Call && op->getNumArgs() > 0 &&
      classify_tile_type(op->getArg(0)->getType()).kind == TileTypeKind::Tensor)
    return op;
  for (const Stmt *c : s->children())
    if (const Expr *e = tensor_element_access(c))
      return e;
  return nullptr;
}

static void report(Sema &sema, const FunctionDecl *fd, SourceLocation loc, const std::string &message,
                   const std::string &note) {
  DiagnosticsEngine &d = sema.getDiagnostics();
  d.Report(loc, d.getCustomDiagID(DiagnosticsEngine::Error, "%0")) << message;
  if (!note.empty())
    d.Report(loc, d.getCustomDiagID(DiagnosticsEngine::Note, "%0")) << note;
  note_instantiation(sema, fd);
}

std::optional<KernelHead> find_kernel_head(Sema &sema, const FunctionDecl *fd, Stmt *body) {
  auto *cs = dyn_cast_or_null<CompoundStmt>(body);
  if (!fd->getReturnType()->isVoidType()) {
    report(sema, fd, fd->getLocation(), "a tile kernel must return void", "return results through a tile::tensor parameter");
    return std::nullopt;
  }
  if (!cs) {
    report(sema, fd, fd->getLocation(), "a tile kernel needs a body", "");
    return std::nullopt;
  }
  // Parameters: what the launch stub can pass.
  for (unsigned i = 0; i < fd->getNumParams(); ++i) {
    const ParmVarDecl *p = fd->getParamDecl(i);
    TileTypeInfo info = classify_tile_type(p->getType());
    bool scalar = info.kind == TileTypeKind::None && !p->getType()->isReferenceType() &&
                  p->getType()->isArithmeticType();
    if (info.kind == TileTypeKind::Tensor || scalar)
      continue;
    if (info.kind == TileTypeKind::Stream) {
      if (i + 1 == fd->getNumParams())
        continue;
      report(sema, fd, p->getLocation(), "a tile::stream parameter must be the kernel's last parameter",
             "move it to the end of the parameter list");
      return std::nullopt;
    }
    std::string name = p->getName().empty() ? "#" + std::to_string(i + 1) : p->getNameAsString();
    report(sema, fd, p->getLocation(),
           "kernel parameter '" + name + "' has type '" + p->getType().getAsString() + "', which a kernel cannot take",
           "kernel parameters are tile::tensor<T, Rank> views, arithmetic scalars and a last tile::stream");
    return std::nullopt;
  }

  KernelHead head;
  Stmt *grid_stmt = nullptr;
  for (Stmt *s : cs->body())
    if (grid_call_of(s)) {
      grid_stmt = s;
      break;
    }
  if (!grid_stmt) {
    if (const CallExpr *nested = nested_grid_call(cs)) {
      report(sema, fd, nested->getExprLoc(), "tile::grid must be a statement of the kernel's body, not nested in another statement",
             "bind the block indices at the top of the body (auto [bx] = tile::grid(n);) and guard the work after it "
             "with if (...)");
      return std::nullopt;
    }
    report(sema, fd, fd->getLocation(), "tile kernel '" + fd->getNameAsString() + "' has no tile::grid statement",
           "bind the block indices first: auto [bx] = tile::grid(n);");
    return std::nullopt;
  }
  for (Stmt *s : cs->body()) {
    if (s == grid_stmt) {
      CallExpr *g = grid_call_of(s);
      head.grid_call = g;
      for (unsigned i = 0; i < g->getNumArgs(); ++i)
        if (!g->getArg(i)->getType()->isRecordType()) {
          head.extent_args.push_back(i);
          if (const Expr *access = tensor_element_access(g->getArg(i))) {
            report(sema, fd, access->getExprLoc(),
                   "an element of a tensor is read in a grid extent, which is computed on the host (on the host "
                   "a tensor's data is device memory)",
                   "size the grid from tensor sizes and scalar parameters");
            return std::nullopt;
          }
        }
      // One name per extent. (With a wrong count, Clang reports the decomposition too, with no
      // word on what to write.)
      auto *ds = dyn_cast<DeclStmt>(s);
      auto *dd = ds && ds->isSingleDecl() ? dyn_cast<DecompositionDecl>(ds->getSingleDecl()) : nullptr;
      const size_t rank = head.extent_args.size();
      if (dd && dd->bindings().size() != rank && rank >= 1 && rank <= 3) {
        static const char *forms[] = {"", "auto [bx] = tile::grid(gx)", "auto [bx, by] = tile::grid(gx, gy)",
                                      "auto [bx, by, bz] = tile::grid(gx, gy, gz)"};
        report(sema, fd, dd->getLocation(),
               "tile::grid with " + std::to_string(rank) + " extent" + (rank == 1 ? "" : "s") + " binds " +
                   std::to_string(rank) + " block ind" + (rank == 1 ? "ex" : "ices") + ", not " +
                   std::to_string(dd->bindings().size()),
               std::string("write one name per extent: ") + forms[rank]);
        return std::nullopt;
      }
      return head;
    }
    bool scalar_decls = false;
    if (auto *ds = dyn_cast<DeclStmt>(s)) {
      scalar_decls = true;
      for (Decl *d : ds->decls()) {
        auto *vd = dyn_cast<VarDecl>(d);
        scalar_decls &= vd && !isa<DecompositionDecl>(vd) && scalar_type_of(vd->getType()).has_value() &&
                        !vd->getType()->isReferenceType() && vd->isLocalVarDecl() && !vd->isStaticLocal();
      }
    }
    if (!scalar_decls && !isa<NullStmt>(s) && !expect_call(s)) {
      report(sema, fd, s->getBeginLoc(),
             "only declarations of scalars and tile::expect may come before tile::grid in a kernel",
             "bind the block indices first (auto [bx] = tile::grid(n);), then write the kernel's work");
      return std::nullopt;
    }
    if (const Expr *access = tensor_element_access(s)) {
      report(sema, fd, access->getExprLoc(),
             "an element of a tensor is read before tile::grid, where the statements also run on the host (on "
             "the host a tensor's data is device memory)",
             "read it after tile::grid, or pass the value as a scalar parameter");
      return std::nullopt;
    }
    head.prologue.push_back(s);
  }
  return std::nullopt; // unreachable: grid_stmt is in the body
}

// ---------------------------------------------------------------------------------------
// Translator
// ---------------------------------------------------------------------------------------

Translator::Translator(Sema &s, const FunctionDecl *k) : sema(s), ctx(s.getASTContext()), kernel_decl(k) {}

void Translator::error(SourceLocation loc, const std::string &message, const std::string &note, SourceRange range) {
  if (failed_)
    return; // one error per kernel: later ones would only echo the first
  failed_ = true;
  DiagnosticsEngine &d = sema.getDiagnostics();
  {
    auto b = d.Report(loc, d.getCustomDiagID(DiagnosticsEngine::Error, "%0"));
    b << message;
    if (range.isValid())
      b << range;
  } // the diagnostic is emitted here, before its note
  if (!note.empty())
    d.Report(loc, d.getCustomDiagID(DiagnosticsEngine::Note, "%0")) << note;
  // Where the code came from: the macro and lambda calls being inlined, innermost first,
  // then the code that instantiated a kernel template.
  for (auto it = inline_stack.rbegin(); it != inline_stack.rend(); ++it)
    if (it->call_loc.isValid())
      d.Report(it->call_loc, d.getCustomDiagID(DiagnosticsEngine::Note, "in %0 called from here")) << it->shown;
  note_instantiation(sema, kernel_decl);
}

Translator::Nesting::Nesting(Translator &t, SourceLocation loc) : t_(t) {
  if (++t_.nesting_ == max_nesting + 1)
    t_.error(loc, "this kernel nests statements and expressions more than " + std::to_string(max_nesting) + " deep",
             "split deep expressions into statements with intermediate variables, and write repeated calls as loops");
}

const Translator::Binding *Translator::lookup(const ValueDecl *d) const {
  auto it = env.find(d);
  return it == env.end() ? nullptr : &it->second;
}

std::string Translator::unique_name(const std::string &base) {
  std::string b = base.empty() ? "t" : base;
  int n = names_[b]++;
  return n ? b + "_" + std::to_string(n) : b;
}

std::optional<ir::Kernel> Translator::run(Stmt *body) {
  auto head = find_kernel_head(sema, kernel_decl, body);
  if (!head) {
    failed_ = true;
    return std::nullopt;
  }

  // Names and location.
  {
    kernel.key = kernel_key(ctx, kernel_decl);
    std::string display;
    llvm::raw_string_ostream ds(display);
    kernel_decl->getNameForDiagnostic(ds, ctx.getPrintingPolicy(), /*Qualified=*/true);
    kernel.display_name = ds.str();
    PresumedLoc p = ctx.getSourceManager().getPresumedLoc(kernel_decl->getLocation());
    if (p.isValid())
      kernel.location = std::string(p.getFilename()) + ":" + std::to_string(p.getLine());
  }

  // Parameters.
  int index = 0;
  for (unsigned i = 0; i < kernel_decl->getNumParams(); ++i) {
    const ParmVarDecl *p = kernel_decl->getParamDecl(i);
    std::string name = p->getName().empty() ? "arg" + std::to_string(i) : p->getNameAsString();
    TileTypeInfo info = classify_tile_type(p->getType());
    if (info.kind == TileTypeKind::Stream) {
      if (i + 1 != kernel_decl->getNumParams()) {
        error(p->getLocation(), "a tile::stream parameter must be the kernel's last parameter",
              "move it to the end of the parameter list");
        return std::nullopt;
      }
      continue;
    }
    ir::Param param;
    param.name = unique_name(name);
    if (info.kind == TileTypeKind::Tensor) {
      param.tensor = ir::make_tensor_buffer(param.name, index, info.elem, info.rank, info.read_only);
      env[p].buffer = param.tensor;
    } else if (auto st = scalar_type_of(p->getType()); st && !p->getType()->isReferenceType() &&
                                                          info.kind == TileTypeKind::None) {
      param.scalar = ir::make_var(param.name, *st);
      env[p].var = param.scalar;
    } else {
      error(p->getLocation(),
            "kernel parameter '" + name + "' has type '" + p->getType().getAsString() +
                "', which a kernel cannot take",
            "kernel parameters are tile::tensor<T, Rank> views, arithmetic scalars and a last tile::stream");
      return std::nullopt;
    }
    kernel.params.push_back(param);
    ++index;
  }

  Block top(*this);
  for (Stmt *s : head->prologue) {
    if (expect_call(s))
      continue; // checked on the host by the launch stub
    stmt(s);
    if (failed_)
      return std::nullopt;
  }

  // tile::grid: extents, threads, block indices.
  const CallExpr *g = head->grid_call;
  kernel.grid_rank = int(head->extent_args.size());
  for (int d = 0; d < 3; ++d)
    kernel.grid[d] = ir::int_imm(1);
  for (int d = 0; d < kernel.grid_rank; ++d) {
    ir::Expr e = expr(g->getArg(head->extent_args[d]));
    if (!e)
      return std::nullopt;
    kernel.grid[d] = ir::cast(ir::ScalarType::I32, e);
  }
  for (unsigned i = 0; i < g->getNumArgs(); ++i) {
    if (std::find(head->extent_args.begin(), head->extent_args.end(), i) != head->extent_args.end())
      continue;
    // tile::threads(n)
    const Expr *arg = strip(g->getArg(i));
    auto *tc = dyn_cast<CallExpr>(arg);
    if (!tc || qualified_name(tc->getDirectCallee()) != "tile::threads" || tc->getNumArgs() != 1) {
      error(arg->getExprLoc(), "the last argument of tile::grid must be tile::threads(n)",
            "write tile::grid(extents..., tile::threads(n)) with a constant n");
      return std::nullopt;
    }
    auto n = const_int(tc->getArg(0), "the thread count of tile::threads");
    if (!n)
      return std::nullopt;
    if (*n < 1 || *n > 1024) {
      error(tc->getArg(0)->getExprLoc(), "a block has 1 to 1024 threads, not " + std::to_string(*n),
            "write tile::threads(n) with 1 <= n <= 1024 (128 when it is left out); multiples of 32 fill whole warps");
      return std::nullopt;
    }
    kernel.threads = int(*n);
  }
  static const char *block_names[] = {"bx", "by", "bz"};
  for (int d = 0; d < kernel.grid_rank; ++d)
    kernel.block_index[d] = ir::make_var(block_names[d], ir::ScalarType::I32);
  // Bind the structured bindings (or the array variable) to the block indices.
  Stmt *grid_stmt = nullptr;
  for (Stmt *s : cast<CompoundStmt>(body)->body())
    if (grid_call_of(s) == g) {
      grid_stmt = s;
      break;
    }
  if (auto *ds = dyn_cast<DeclStmt>(grid_stmt)) {
    if (auto *dd = dyn_cast<DecompositionDecl>(ds->getSingleDecl())) {
      auto bindings = dd->bindings(); // as many as extents: find_kernel_head checked
      for (int d = 0; d < kernel.grid_rank; ++d) {
        kernel.block_index[d] = ir::make_var(bindings[d]->getNameAsString(), ir::ScalarType::I32);
        env[bindings[d]].var = kernel.block_index[d];
      }
    } else {
      error(ds->getBeginLoc(), "bind the block indices of tile::grid with a structured binding",
            "write auto [bx, by] = tile::grid(...);");
      return std::nullopt;
    }
  }

  // The rest of the body.
  bool after = false;
  for (Stmt *s : cast<CompoundStmt>(body)->body()) {
    if (s == grid_stmt) {
      after = true;
      continue;
    }
    if (!after)
      continue;
    stmt(s);
    if (failed_)
      return std::nullopt;
  }
  kernel.body = top.finish();

  auto problems = ir::verify(kernel);
  if (!problems.empty()) {
    error(kernel_decl->getLocation(), "internal error in tile kernel '" + kernel.display_name + "': " + problems[0],
          "please report this; the kernel's IR failed verification after the frontend");
    return std::nullopt;
  }
  return kernel;
}

std::optional<ir::Kernel> translate_kernel(Sema &sema, const FunctionDecl *fd, Stmt *body) {
  Translator t(sema, fd);
  auto k = t.run(body);
  if (t.failed())
    return std::nullopt;
  return k;
}

} // namespace tile::frontend
