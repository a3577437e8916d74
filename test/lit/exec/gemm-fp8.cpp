// tile::gemm on 8-bit floats (f8e4m3, f8e5m2, and one of each) with float accumulation, on
// odd M, N, K: C = A B^T with A [M, K] and B [N, K] (K-major, as Hopper's wgmma takes 8-bit
// operands: on sm_90a these run on it, m64nNk32, one or two warpgroups, where the K tile is
// 128 bytes), and B as [K, N] or K tiles of 64, which wgmma does not take here (FMA, the
// remark says why). Each against a float64 reference of
// the same 8-bit values.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS gemm_e4m3_64x64x128
// CHECK: PASS gemm_e5m2_128x128x128_two_warpgroups
// CHECK: PASS gemm_e4m3_64x64x64_fma
// CHECK: PASS gemm_e4m3_e5m2_64x128x128
// CHECK: PASS gemm_e4m3_b_not_transposed
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

/// C = A op(B): A is [M, K], B is [N, K] with TB (else [K, N]).
template <class TA, class TB, int BM, int BN, int BK, int Threads, int Stages, bool Transposed = true>
[[tile::kernel]] void gemm8(T::tensor<const TA, 2> A, T::tensor<const TB, 2> B, T::tensor<float, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM), T::threads(Threads));
  T::shared<TA, BM, BK> As;
  T::shared<TB, Transposed ? BN : BK, Transposed ? BK : BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, BK), T::stages(Stages))) {
    T::copy(A.at(by * BM, k * BK), As);
    if constexpr (Transposed)
      T::copy(B.at(bx * BN, k * BK), Bs);
    else
      T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(As, Bs, acc, {.transpose_b = Transposed});
  }
  T::copy(acc, C.at(by * BM, bx * BN));
}

template <class TA, class TB, bool Transposed = true, class F>
void run(const std::string &name, int M, int N, int K, F kernel) {
  auto a = check::random<TA>(std::size_t(M) * K, -2, 2);
  auto b = check::random<TB>(std::size_t(N) * K, -2, 2);
  auto A = check::upload(a, {M, K});
  auto B = Transposed ? check::upload(b, {N, K}) : check::upload(b, {K, N});
  auto C = check::upload(check::poisoned<float>(std::size_t(M) * N), {M, N});
  kernel(A, B, C);
  std::vector<double> ref(std::size_t(M) * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k)
        s += check::value(a[std::size_t(i) * K + k]) *
             check::value(Transposed ? b[std::size_t(j) * K + k] : b[std::size_t(k) * N + j]);
      ref[std::size_t(i) * N + j] = s;
    }
  // Products of 8-bit floats are exact in f32 and the CPU's sums round in f32 (about 1e-7
  // here); Hopper's tensor cores add 8-bit products with fewer bits than f32 (the H200 gave
  // 1.2e-4 to 2.0e-4 on these cases), so 1e-3 on a GPU. A layout or descriptor mistake
  // puts whole elements in the wrong place: errors of order 1.
  const bool cpu = tile::current_device().name() == "cpu";
  check::close(name, ref, C.to_vector(), cpu ? 1e-5 : 1e-3);
}

int main() {
  using T::f8e4m3, T::f8e5m2;
  run<f8e4m3, f8e4m3>("gemm_e4m3_64x64x128", 77, 45, 300,
                      [](auto &a, auto &b, auto &c) { gemm8<f8e4m3, f8e4m3, 64, 64, 128, 128, 3>(a, b, c); });
  run<f8e5m2, f8e5m2>("gemm_e5m2_128x128x128_two_warpgroups", 200, 130, 290,
                      [](auto &a, auto &b, auto &c) { gemm8<f8e5m2, f8e5m2, 128, 128, 128, 256, 2>(a, b, c); });
  // K tiles of 64 bytes: wgmma here reads 128-byte rows only (FMA, the remark says why).
  run<f8e4m3, f8e4m3>("gemm_e4m3_64x64x64_fma", 70, 66, 100,
                      [](auto &a, auto &b, auto &c) { gemm8<f8e4m3, f8e4m3, 64, 64, 64, 128, 2>(a, b, c); });
  run<f8e4m3, f8e5m2>("gemm_e4m3_e5m2_64x128x128", 65, 129, 300,
                      [](auto &a, auto &b, auto &c) { gemm8<f8e4m3, f8e5m2, 64, 128, 128, 128, 2>(a, b, c); });
  run<f8e4m3, f8e4m3, false>("gemm_e4m3_b_not_transposed", 50, 70, 90, [](auto &a, auto &b, auto &c) {
    gemm8<f8e4m3, f8e4m3, 32, 32, 32, 128, 2, false>(a, b, c);
  });
  return check::result();
}
