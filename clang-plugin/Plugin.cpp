// Registration of the tile plugin: the [[tile::kernel]] and [[tile::macro]] attributes and
// the `tile` action, which runs before Clang's main action and parses the plugin's options.
#include "clang/AST/Attr.h"
#include "clang/Basic/Sanitizers.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendPluginRegistry.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Sema/ParsedAttr.h"
#include "clang/Sema/Sema.h"
#include "llvm/ADT/StringExtras.h"

#include "KernelConsumer.h"
#include "Options.h"
#include "Pipeline/Toolchain.h"
#include "frontend/Frontend.h"

using namespace clang;

namespace {

/// [[tile::kernel]] and [[tile::macro]]: attach an annotation the frontend looks for.
template <bool Kernel> struct TileAttrInfo : ParsedAttrInfo {
  TileAttrInfo() {
    static constexpr Spelling spellings[] = {{ParsedAttr::AS_CXX11, Kernel ? "tile::kernel" : "tile::macro"}};
    Spellings = spellings;
    NumArgs = 0;
    OptArgs = 0;
  }
  bool diagAppertainsToDecl(Sema &S, const ParsedAttr &attr, const Decl *d) const override {
    if (isa<FunctionDecl>(d) || isa<FunctionTemplateDecl>(d))
      return true;
    S.Diag(attr.getLoc(), diag::warn_attribute_wrong_decl_type_str) << attr << attr.isRegularKeywordAttribute() << "functions";
    return false;
  }
  AttrHandling handleDeclAttribute(Sema &S, Decl *d, const ParsedAttr &attr) const override {
    if (attr.getNumArgs() != 0) {
      S.Diag(attr.getLoc(), S.getDiagnostics().getCustomDiagID(DiagnosticsEngine::Error, "'%0' takes no arguments"))
          << (Kernel ? "tile::kernel" : "tile::macro");
      return AttributeNotApplied;
    }
    const char *what = Kernel ? tile::frontend::kernel_annotation : tile::frontend::macro_annotation;
    d->addAttr(AnnotateAttr::Create(S.Context, what, nullptr, 0, attr.getRange()));
    return AttributeApplied;
  }
};

/// The host's sanitizers that CPU images take too: ASan and UBSan's checks, whose runtimes a
/// program compiled with them has (other sanitizers would need the image's code in their own
/// runtime's bookkeeping; their images are not instrumented). Fatal and trapping checks stay so.
std::vector<std::string> image_sanitize_flags(const CompilerInstance &ci) {
  const SanitizerMask forwarded = SanitizerKind::Address | SanitizerKind::Undefined | SanitizerKind::Integer |
                                  SanitizerKind::ImplicitConversion | SanitizerKind::Nullability |
                                  SanitizerKind::FloatDivideByZero | SanitizerKind::LocalBounds;
  auto names = [](SanitizerMask mask) {
    SanitizerSet set;
    set.Mask = mask;
    llvm::SmallVector<llvm::StringRef, 32> list;
    serializeSanitizerSet(set, list);
    return llvm::join(list, ",");
  };
  SanitizerMask on = ci.getLangOpts().Sanitize.Mask & forwarded;
  if (!on)
    return {};
  std::vector<std::string> flags = {"-fsanitize=" + names(on)};
  if (SanitizerMask fatal = on & ~ci.getCodeGenOpts().SanitizeRecover.Mask)
    flags.push_back("-fno-sanitize-recover=" + names(fatal));
  if (SanitizerMask trap = on & ci.getCodeGenOpts().SanitizeTrap.Mask)
    flags.push_back("-fsanitize-trap=" + names(trap));
  return flags;
}

class TileAction : public PluginASTAction {
public:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &ci, llvm::StringRef file) override {
    Preprocessor &pp = ci.getPreprocessor();
    pp.setPredefines(pp.getPredefines() + "#define __TILE_PLUGIN__ 1\n");
    options_.sanitize_flags = image_sanitize_flags(ci);
    return std::make_unique<tile::plugin::KernelConsumer>(ci, options_, file.str());
  }
  bool ParseArgs(const CompilerInstance &ci, const std::vector<std::string> &args) override {
    std::string problem;
    if (!tile::plugin::parse_options(args, options_, problem)) {
      DiagnosticsEngine &d = ci.getDiagnostics();
      d.Report(d.getCustomDiagID(DiagnosticsEngine::Error, "tile plugin: %0")) << problem;
      return false;
    }
    options_.syntax_only = ci.getFrontendOpts().ProgramAction == frontend::ParseSyntaxOnly;
    if (options_.print_toolchain) {
      // What tile-c++ asks before it runs a compiler cache (Pipeline/Toolchain.h): the last
      // line is the fingerprint.
      tile::pipeline::ToolchainFingerprint fp = tile::pipeline::toolchain_fingerprint(options_);
      llvm::outs() << fp.description << "fingerprint " << fp.hash << "\n";
      llvm::outs().flush();
    }
    return true;
  }
  ActionType getActionType() override { return AddBeforeMainAction; }

private:
  tile::pipeline::Options options_;
};

} // namespace

static ParsedAttrInfoRegistry::Add<TileAttrInfo<true>> kernel_attr("tile-kernel", "marks a tile kernel");
static ParsedAttrInfoRegistry::Add<TileAttrInfo<false>> macro_attr("tile-macro", "marks a tile macro");
static FrontendPluginRegistry::Add<TileAction> action("tile", "compiles [[tile::kernel]] functions");
