// Several translation units in one tile-c++ call, each with kernels, one of them a
// template instantiated in both units (its image is registered twice, launched once).
// RUN: rm -rf %t && split-file %s %t
// RUN: %tile-cxx %t/a.cpp %t/b.cpp -I%t -o %t/prog
// RUN: env TILE_DEVICE=cpu %t/prog | FileCheck %s
// CHECK: a: 42
// CHECK: b: 84
// CHECK: shared: 7 7

//--- common.h
#include <tile/tile.h>
template <int V> [[tile::kernel]] void put(tile::tensor<int, 1> x) {
  auto [bx] = tile::grid(1);
  x(0) = V;
}
void run_b();
int run_shared_b();

//--- a.cpp
#include "common.h"
#include <cstdio>
[[tile::kernel]] void times_two(tile::tensor<int, 1> x) {
  auto [bx] = tile::grid(1);
  x(0) = x(0) * 2;
}
int main() {
  tile::array<int, 1> x({1});
  x.copy_from(std::vector<int>{21});
  times_two(x);
  std::printf("a: %d\n", x.to_vector()[0]);
  run_b();
  put<7>(x);
  std::printf("shared: %d %d\n", x.to_vector()[0], run_shared_b());
}

//--- b.cpp
#include "common.h"
#include <cstdio>
[[tile::kernel]] void times_four(tile::tensor<int, 1> x) {
  auto [bx] = tile::grid(1);
  x(0) = x(0) * 4;
}
void run_b() {
  tile::array<int, 1> x({1});
  x.copy_from(std::vector<int>{21});
  times_four(x);
  std::printf("b: %d\n", x.to_vector()[0]);
}
int run_shared_b() {
  tile::array<int, 1> x({1});
  put<7>(x);
  return x.to_vector()[0];
}
