// The plugin's AST consumer: finds kernels, swaps their bodies for launch stubs, and at the
// end of the translation unit compiles them and adds their images to the TU.
#pragma once

#include <string>
#include <vector>

#include "clang/Frontend/CompilerInstance.h"
#include "clang/Sema/SemaConsumer.h"
#include "llvm/ADT/DenseSet.h"

#include "Pipeline/Pipeline.h"

namespace tile::plugin {

class KernelConsumer : public clang::SemaConsumer {
public:
  KernelConsumer(clang::CompilerInstance &ci, const pipeline::Options &opts, std::string file)
      : ci_(ci), opts_(opts), file_(std::move(file)) {}

  void InitializeSema(clang::Sema &s) override { sema_ = &s; }
  void ForgetSema() override { sema_ = nullptr; }
  bool HandleTopLevelDecl(clang::DeclGroupRef group) override;
  void HandleInlineFunctionDefinition(clang::FunctionDecl *fd) override;
  void HandleTranslationUnit(clang::ASTContext &ctx) override;

private:
  void visit(clang::Decl *d);
  void take_kernel(clang::FunctionDecl *fd);

  struct Kernel {
    clang::FunctionDecl *decl;
    clang::Stmt *body; // the user's body; the function now has the launch stub
  };
  clang::CompilerInstance &ci_;
  pipeline::Options opts_;
  std::string file_;
  clang::Sema *sema_ = nullptr;
  std::vector<Kernel> kernels_;
  llvm::DenseSet<const clang::FunctionDecl *> seen_;
  bool adding_decls_ = false; // our own declarations come back through the multiplexer
};

} // namespace tile::plugin
