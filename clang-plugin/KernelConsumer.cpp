#include "KernelConsumer.h"

#include <map>

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "Stub.h"
#include "frontend/Frontend.h"

using namespace clang;

namespace tile::plugin {

bool KernelConsumer::HandleTopLevelDecl(DeclGroupRef group) {
  if (adding_decls_)
    return true;
  for (Decl *d : group)
    visit(d);
  return true;
}

void KernelConsumer::HandleInlineFunctionDefinition(FunctionDecl *fd) { take_kernel(fd); }

void KernelConsumer::visit(Decl *d) {
  if (auto *ns = dyn_cast<NamespaceDecl>(d)) {
    for (Decl *c : ns->decls())
      visit(c);
  } else if (auto *ls = dyn_cast<LinkageSpecDecl>(d)) {
    for (Decl *c : ls->decls())
      visit(c);
  } else if (auto *rd = dyn_cast<CXXRecordDecl>(d)) {
    if (rd->isDependentContext() || !rd->hasDefinition())
      return;
    for (Decl *c : rd->decls())
      visit(c);
  } else if (auto *fd = dyn_cast<FunctionDecl>(d)) {
    take_kernel(fd);
  }
}

void KernelConsumer::take_kernel(FunctionDecl *fd) {
  if (!sema_ || !fd->doesThisDeclarationHaveABody() || fd->isDependentContext() || !frontend::is_kernel(fd))
    return;
  if (!seen_.insert(fd).second)
    return;
  Stmt *body = fd->getBody();
  auto head = frontend::find_kernel_head(*sema_, fd, body);
  if (!head)
    return;
  std::string key = frontend::kernel_key(sema_->getASTContext(), fd);
  Stmt *stub = build_launch_stub(*sema_, fd, *head, key);
  if (!stub)
    return;
  kernels_.push_back({fd, body});
  fd->setBody(stub);
}

namespace {
/// Whether Clang itself found errors in `s` (then the kernel is not translated: its errors
/// are reported already, and ours would only echo them).
bool contains_errors(const Stmt *s) {
  if (!s)
    return false;
  if (auto *e = dyn_cast<Expr>(s); e && e->containsErrors())
    return true;
  for (const Stmt *c : s->children())
    if (contains_errors(c))
      return true;
  return false;
}
} // namespace

void KernelConsumer::HandleTranslationUnit(ASTContext &ctx) {
  DiagnosticsEngine &diags = ci_.getDiagnostics();
  if (kernels_.empty() || !sema_)
    return;

  // Every kernel is translated, also after errors elsewhere, so that each gets its own
  // diagnostics; nothing is compiled once there is any error.
  std::vector<ir::Kernel> kernels;
  std::map<std::string, FunctionDecl *> decl_of;
  for (auto &k : kernels_) {
    if (k.decl->isInvalidDecl() || contains_errors(k.body))
      continue;
    auto ir = frontend::translate_kernel(*sema_, k.decl, k.body);
    if (!ir)
      continue;
    decl_of[ir->key] = k.decl;
    kernels.push_back(std::move(*ir));
  }
  if (diags.hasErrorOccurred())
    return;

  std::string unit = llvm::sys::path::filename(file_).str();
  pipeline::Options opts = opts_;
  opts.where = [&ctx](std::uint32_t loc) -> std::string {
    PresumedLoc p = ctx.getSourceManager().getPresumedLoc(SourceLocation::getFromRawEncoding(loc));
    return p.isValid() ? std::string(p.getFilename()) + ":" + std::to_string(p.getLine()) : std::string();
  };
  pipeline::Result result =
      pipeline::run(kernels, unit, opts, [](const std::string &text) { llvm::errs() << text; });

  SourceLocation tu_loc = ctx.getSourceManager().getLocForStartOfFile(ctx.getSourceManager().getMainFileID());
  for (const pipeline::Message &m : result.messages) {
    SourceLocation loc = tu_loc;
    if (auto it = decl_of.find(m.kernel_key); it != decl_of.end())
      loc = it->second->getLocation();
    if (m.loc)
      loc = SourceLocation::getFromRawEncoding(m.loc);
    auto level = m.kind == pipeline::Message::Error     ? DiagnosticsEngine::Error
                 : m.kind == pipeline::Message::Warning ? DiagnosticsEngine::Warning
                                                        : DiagnosticsEngine::Remark;
    diags.Report(loc, diags.getCustomDiagID(level, "%0")) << m.text;
    if (!m.note.empty())
      diags.Report(loc, diags.getCustomDiagID(DiagnosticsEngine::Note, "%0")) << m.note;
  }
  if (!result.ok())
    return;

  int index = 0;
  for (const pipeline::Image &image : result.images) {
    VarDecl *vd = build_image_registration(*sema_, image.manifest, image.bytes, index++);
    if (!vd)
      return;
    adding_decls_ = true;
    ci_.getASTConsumer().HandleTopLevelDecl(DeclGroupRef(vd));
    adding_decls_ = false;
  }
}

} // namespace tile::plugin
