// tile::print("label", buf) prints a whole buffer once per block: a header line naming it,
// then one line per row (rows longer than 16 values in pieces, each with its first column).
// Fragments (also a tensor-core accumulator on GPUs) are gathered first, so the values come
// in order from one thread.
// RUN: %tile-cxx %s -O2 -o %t && %t 2>&1 | FileCheck %s --implicit-check-not='[block' --match-full-lines
// CHECK: [block 0,0,0] frag f f32[3, 4]:
// CHECK-NEXT: [block 0,0,0]   row 0 : 0 1 2 3
// CHECK-NEXT: [block 0,0,0]   row 1 : 10 11 12 13
// CHECK-NEXT: [block 0,0,0]   row 2 : 20 21 22 23
// CHECK-NEXT: [block 0,0,0] shared s i32[2, 3]:
// CHECK-NEXT: [block 0,0,0]   row 0 : 0 -1 -2
// CHECK-NEXT: [block 0,0,0]   row 1 : -10 -11 -12
// CHECK-NEXT: [block 0,0,0] l bf16[3]:
// CHECK-NEXT: [block 0,0,0] 0.5 1.5 2.5
// CHECK-NEXT: [block 0,0,0] long d f64[20]:
// CHECK-NEXT: [block 0,0,0]   from 0 : 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15
// CHECK-NEXT: [block 0,0,0]   from 16 : 16 17 18 19
// CHECK-NEXT: [block 0,0,0] cube c u8[2, 2, 2]:
// CHECK-NEXT: [block 0,0,0]   row 0 0 : 0 1
// CHECK-NEXT: [block 0,0,0]   row 0 1 : 2 3
// CHECK-NEXT: [block 0,0,0]   row 1 0 : 4 5
// CHECK-NEXT: [block 0,0,0]   row 1 1 : 6 7
// CHECK-NEXT: done
// CHECK: [block 0,0,0] accumulator acc f32[16, 16]:
// CHECK-NEXT: [block 0,0,0]   row 0 : 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
// CHECK-COUNT-14: [block 0,0,0]   row {{[0-9]+}} : 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
// CHECK-NEXT: [block 0,0,0]   row 15 : 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
// CHECK-NEXT: done

#include <tile/tile.h>

#include <cstdio>
#include <vector>

namespace T = tile;

[[tile::kernel]] void show(T::tensor<const float, 2> X) {
  auto [bx] = T::grid(1);
  T::fragment<float, 3, 4> f;
  T::copy(X.at(0, 0), f);
  T::print("frag", f);
  T::shared<int, 2, 3> s;
  for (auto [i, j] : T::parallel(2, 3))
    s(i, j) = -(i * 10 + j);
  T::print("shared", s);
  T::local<T::bf16, 3> l;
  for (int i : T::serial(3))
    l(i) = T::bf16(float(i) + 0.5f);
  T::print(l);
  T::fragment<double, 20> d;
  for (int i : T::parallel(20))
    d(i) = i;
  T::print("long", d);
  T::fragment<std::uint8_t, 2, 2, 2> c;
  for (auto [i, j, k] : T::parallel(2, 2, 2))
    c(i, j, k) = i * 4 + j * 2 + k;
  T::print("cube", c);
}

/// A gemm's accumulator: with A all ones and B[k, j] = (j + 8) / 16, acc[i, j] = j + 8.
[[tile::kernel]] void show_acc(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 16, 16> As, Bs;
  T::fragment<float, 16, 16> acc;
  T::copy(A.at(0, 0), As);
  T::copy(B.at(0, 0), Bs);
  T::gemm(As, Bs, acc, {.clear_accum = true});
  T::print("accumulator", acc);
}

int main() {
  std::vector<float> x(3 * 4);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      x[i * 4 + j] = float(i * 10 + j);
  T::array<float, 2> X({3, 4});
  X.copy_from(x);
  show(X);
  T::synchronize();
  std::printf("done\n");
  std::fflush(stdout);

  std::vector<T::bf16> a(16 * 16, T::bf16(1.0f)), b(16 * 16);
  // B[k, j] = (j + 8) / 16, so that acc[i, j] = sum over 16 k = j + 8.
  for (int k = 0; k < 16; ++k)
    for (int j = 0; j < 16; ++j)
      b[k * 16 + j] = T::bf16(float(j + 8) / 16.0f);
  T::array<T::bf16, 2> A({16, 16}), B({16, 16});
  A.copy_from(a);
  B.copy_from(b);
  show_acc(A, B);
  T::synchronize();
  std::printf("done\n");
}
