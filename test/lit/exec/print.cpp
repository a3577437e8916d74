// tile::print: one line per call with the block's indices first, scalars of several types
// and strings; inside a parallel loop, one line per iteration; only the blocks that reach
// the call print (blocks run in any order).
// RUN: %tile-cxx %s -O2 -o %t && %t 2>&1 | FileCheck %s --implicit-check-not='[block'
// CHECK-DAG: [block 1,1,0] hello n = 42 x = 2.5 big = -1099511627776 d = 0.125 flag = 1
// CHECK-DAG: [block 2,0,0] item 0 value 10
// CHECK-DAG: [block 2,0,0] item 1 value 11
// CHECK-DAG: [block 2,0,0] item 2 value 12
// CHECK: done

#include <tile/tile.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace T = tile;

[[tile::kernel]] void say(T::tensor<const float, 1> X, int n, std::int64_t big, double d) {
  auto [bx, by] = T::grid(3, 2);
  T::fragment<float, 3> f;
  T::copy(X.at(1), f);
  if (bx == 1 && by == 1)
    T::print("hello n =", n, "x =", X(0), "big =", big, "d =", d, "flag =", n > 40);
  if (bx == 2 && by == 0)
    for (int i : T::parallel(3))
      T::print("item", i, "value", f(i));
}

int main() {
  T::array<float, 1> X({4});
  X.copy_from(std::vector<float>{2.5f, 10.0f, 11.0f, 12.0f});
  say(X, 42, -(std::int64_t(1) << 40), 0.125);
  T::synchronize();
  std::printf("done\n");
}
