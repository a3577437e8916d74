// The deterministic, C-like printer of the tile IR: the oracle of the lit tests.
//
// Variables and buffers print by name; distinct variables that share a name get suffixes
// (`i`, `i.1`, ...) in order of first appearance, so output never depends on addresses.
#pragma once

#include <string>

#include "ir/IR.h"

namespace tile::ir {

std::string to_string(const Expr &e);
std::string to_string(const Stmt &s);
std::string to_string(const Region &r);
std::string to_string(const Kernel &k);

} // namespace tile::ir
