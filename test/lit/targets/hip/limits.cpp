// A kernel that needs more LDS than a gfx90a block has (64 KiB) is an error when only hip is
// built; built with CUDA too (whose sm_90a runs it), a warning that it will not launch on
// hip devices, with a note on choosing tiles per device.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=hip:gfx90a -Xclang -verify=hip %s
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a,hip:gfx90a -Xclang -verify=both %s

#include <tile/tile.h>
namespace T = tile;

// hip-error@+4 {{tile kernel 'big_tile' needs 98304 bytes of shared memory per block; gfx90a gives a block at most 65536}}
// hip-note@+3 {{use smaller tiles, or fewer stages in tile::pipelined}}
// both-warning@+2 {{tile kernel 'big_tile' needs 98304 bytes of shared memory per block; gfx90a gives a block at most 65536: it will not launch on hip devices}}
// both-note@+1 {{choose tiles that fit hip devices in host code (tile::current_device().architecture() names the device's architecture)}}
[[tile::kernel]] void big_tile(T::tensor<float, 2> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 64, 384> s;
  T::copy(x.at(0, 0), s);
  T::copy(s, x.at(0, 0));
}

// 48 KiB fits: no diagnostic.
[[tile::kernel]] void fits(T::tensor<float, 2> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 64, 192> s;
  T::copy(x.at(0, 0), s);
  T::copy(s, x.at(0, 0));
}
