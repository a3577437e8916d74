// The IR verifier: run after the frontend and after every pass in debug builds and tests.
//
// Checks that variables are used only where they are in scope, buffers only after their
// declaration, every access has one index per dimension, every assignment targets a
// declared scalar, and every tile operation's operands have the shapes it needs.
#pragma once

#include <string>
#include <vector>

#include "ir/IR.h"

namespace tile::ir {

/// The problems found, one sentence each; empty when `k` is well formed.
std::vector<std::string> verify(const Kernel &k);

} // namespace tile::ir
