// Two chained gemms on 128 x 128 tiles, as attention's step has them (S = Q K^T, P = S as
// bf16, O += P V), pipelined in two stages: 174080 bytes of shared memory with the operands'
// rows padded against bank conflicts, more than sm_80 gives a block (166912), and 163840
// with them swizzled, which plan-shared-memory then chooses (transforms/
// plan-shared-memory-swizzle.cpp shows the choice). Built with -fplugin-arg-tile-gemm=mma
// (test/gpu's shared-fit-mma, one class for sm_90a and sm_80 with sm_80's limit) the
// H200 runs that layout through ldmatrix; by default sm_90a has its own class (mma.sync
// here: one warpgroup of 128 rows is not wgmma's shape) with room for the padded rows, and
// the CPU runs its own code. Odd sizes, outputs poisoned, a float64 reference
// that rounds S to bf16 as the kernel does.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS chained_gemms_200x300
// CHECK: PASS chained_gemms_128x128
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

[[tile::kernel]] void chained(T::tensor<const T::bf16, 2> Q, T::tensor<const T::bf16, 2> K,
                              T::tensor<const T::bf16, 2> V, T::tensor<float, 2> O) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 128));
  T::shared<T::bf16, 128, 128> q, k, v;
  T::fragment<float, 128, 128> s, acc;
  T::fragment<T::bf16, 128, 128> p;
  T::copy(Q.at(bx * 128, 0), q);
  T::clear(acc);
  for (int j : T::pipelined(T::ceildiv(K.size(0), 128), T::stages(2))) {
    T::copy(K.at(j * 128, 0), k);
    T::copy(V.at(j * 128, 0), v);
    T::gemm(q, k, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    T::copy(s, p);
    T::gemm(p, v, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(bx * 128, 0));
}

void run(const std::string &name, int m, int n) {
  const int d = 128;
  auto q = check::random<T::bf16>(std::size_t(m) * d, -0.5, 0.5);
  auto k = check::random<T::bf16>(std::size_t(n) * d, -0.5, 0.5);
  auto v = check::random<T::bf16>(std::size_t(n) * d);
  auto Q = check::upload(q, {m, d});
  auto K = check::upload(k, {n, d});
  auto V = check::upload(v, {n, d});
  auto O = check::upload(check::poisoned<float>(std::size_t(m) * d), {m, d});
  chained(Q, K, V, O);
  std::vector<double> ref(std::size_t(m) * d, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double dot = 0;
      for (int x = 0; x < d; ++x)
        dot += check::value(q[std::size_t(i) * d + x]) * check::value(k[std::size_t(j) * d + x]);
      const double p = check::value(T::bf16(float(dot)));
      for (int x = 0; x < d; ++x)
        ref[std::size_t(i) * d + x] += p * check::value(v[std::size_t(j) * d + x]);
    }
  // S is rounded to bf16 from a float sum: one rounding step apart at most (2^-8 relative).
  check::close(name, ref, O.to_vector(), 1e-2);
}

int main() {
  run("chained_gemms_200x300", 200, 300);
  run("chained_gemms_128x128", 128, 128);
  return check::result();
}
