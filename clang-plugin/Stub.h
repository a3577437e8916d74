// What the plugin adds to the AST through Sema: launch stubs and image registrations.
#pragma once

#include <string>

#include "clang/AST/Decl.h"
#include "clang/Sema/Sema.h"

#include "frontend/Frontend.h"

namespace tile::plugin {

/// The body that replaces kernel `fd`'s: the user's statements before tile::grid, then
/// `tile::rt::launch(key, gx, gy, gz, params...)`. Null (with an error reported) on failure.
clang::Stmt *build_launch_stub(clang::Sema &sema, clang::FunctionDecl *fd, const frontend::KernelHead &head,
                               const std::string &key);

/// `static int __tile_image_N = tile::rt::register_image(manifest, bytes, size);` at the end
/// of the translation unit. Null (with an error reported) on failure.
clang::VarDecl *build_image_registration(clang::Sema &sema, const std::string &manifest, const std::string &bytes,
                                         int index);

} // namespace tile::plugin
