// The frontend: Clang AST of a [[tile::kernel]] function -> tile IR.
//
// This and clang-plugin/ are the only places that include Clang headers. Every construct the
// kernel language cannot take is reported as a Clang error at the user's expression, with a
// note saying what to write instead; translation then gives up on that kernel.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace clang {
class ASTContext;
class CallExpr;
class Decl;
class FunctionDecl;
class Sema;
class Stmt;
} // namespace clang

namespace tile::frontend {

/// True when `d` carries [[tile::kernel]] (the plugin attaches an annotation).
bool is_kernel(const clang::Decl *d);
/// True when `d` carries [[tile::macro]].
bool is_macro(const clang::Decl *d);

/// The annotation strings the plugin's attributes attach.
inline constexpr const char *kernel_annotation = "tile.kernel";
inline constexpr const char *macro_annotation = "tile.macro";

/// How a kernel's body starts: the scalar statements before tile::grid (they also run on the
/// host to size the grid) and the tile::grid call itself.
struct KernelHead {
  std::vector<clang::Stmt *> prologue;
  clang::CallExpr *grid_call = nullptr;
  /// Indices of grid_call's arguments that are grid extents (the rest is tile::threads).
  std::vector<unsigned> extent_args;
};

/// The call when statement `s` is `tile::expect(condition, message);`, else null.
const clang::CallExpr *expect_call(const clang::Stmt *s);

/// The runtime's key of kernel `fd`: its mangled name.
std::string kernel_key(clang::ASTContext &ctx, const clang::FunctionDecl *fd);

/// Finds the head of `body` (the kernel's original body); reports an error and returns
/// nullopt when the body does not start with scalar statements and a tile::grid.
std::optional<KernelHead> find_kernel_head(clang::Sema &sema, const clang::FunctionDecl *fd,
                                           clang::Stmt *body);

/// When `fd` is an instantiation of a kernel template, a note at the code that
/// instantiated it (diagnostics about its body would otherwise not lead to the user's call).
void note_instantiation(clang::Sema &sema, const clang::FunctionDecl *fd);

/// Translates kernel `fd`, whose original body is `body`, into tile IR.
std::optional<ir::Kernel> translate_kernel(clang::Sema &sema, const clang::FunctionDecl *fd,
                                           clang::Stmt *body);

} // namespace tile::frontend
