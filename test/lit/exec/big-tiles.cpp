// Tile buffers larger than a block's stack run on the CPU (they move to the heap): a 4 MiB
// local buffer, a 64 MiB shared one and a 64 MiB fragment (together more than the 64 MiB
// stacks of the runtime's workers). These tiles exceed what a CUDA block can hold, so this
// file is built for the CPU only (targets/cuda/limits.cpp checks the error there).
// RUN: %tile-cxx %s -O2 -fplugin-arg-tile-targets=cpu -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS big_local
// CHECK: PASS big_shared_and_fragment
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

constexpr int L = 1 << 20, S = 4096;

/// y[i] = x[L - 1 - i] through a per-thread buffer of L floats.
[[tile::kernel]] void reverse(T::tensor<const float, 1> x, T::tensor<float, 1> y) {
  auto [bx] = T::grid(1);
  T::local<float, L> l;
  for (int i : T::serial(L))
    l(i) = x(i);
  for (int i : T::serial(L))
    y(i) = l(L - 1 - i);
}

/// B = 2 A + 1 through an S x S shared tile and an S x S fragment.
[[tile::kernel]] void twice(T::tensor<const float, 2> A, T::tensor<float, 2> B) {
  auto [bx] = T::grid(1);
  T::shared<float, S, S> s;
  T::fragment<float, S, S> f;
  T::copy(A.at(0, 0), s);
  T::copy(s, f);
  for (auto [i, j] : T::parallel(S, S))
    f(i, j) = 2.0f * f(i, j) + 1.0f;
  T::copy(f, B.at(0, 0));
}

int main() {
  auto x = check::random<float>(L);
  auto X = check::upload(x, {L});
  auto Y = check::upload(check::poisoned<float>(L), {L});
  reverse(X, Y);
  std::vector<double> ry(L);
  for (int i = 0; i < L; ++i)
    ry[i] = x[L - 1 - i];
  check::close("big_local", ry, Y.to_vector(), 0);

  const int n = S - 5; // the tile reaches past the tensor's edge
  auto a = check::random<float>(std::size_t(n) * n);
  auto A = check::upload(a, {n, n});
  auto B = check::upload(check::poisoned<float>(std::size_t(n) * n), {n, n});
  twice(A, B);
  std::vector<double> rb(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    rb[i] = 2.0 * a[i] + 1.0;
  check::close("big_shared_and_fragment", rb, B.to_vector(), 1e-7);
  return check::result();
}
