// tile: tile-level kernels in single-source C++. Kernel authors include this header only.
//
//   [[tile::kernel]] void k(tile::tensor<float, 1> x) { auto [bx] = tile::grid(...); ... }
//
// Build with tile-c++ (or clang++ -fplugin=libtile.so); see README.md and API.md.
#pragma once

#include "tile/types.h"
#include "tile/tensor.h"
#include "tile/language.h"
#include "tile/host.h"
#include "tile/detail/launch.h"
