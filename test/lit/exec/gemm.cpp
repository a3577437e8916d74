// tile::gemm on odd M, N, K: plain, transpose_a, transpose_b and both, f16 and bf16 inputs
// with float accumulation, unusual tile sizes (BK = 48, 80), every warp policy, an operand
// in a fragment, clear_accum, and pipelined k loops of several depths.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS gemm_nn_bf16
// CHECK: PASS gemm_tb_f16
// CHECK: PASS gemm_ta_bf16
// CHECK: PASS gemm_ta_tb_f16
// CHECK: PASS gemm_full_row_bf16
// CHECK: PASS gemm_full_col_f16
// CHECK: PASS gemm_fragment_a_bf16
// CHECK: PASS gemm_fragment_a_transposed_bf16
// CHECK: PASS gemm_clear_accum_bf16
// CHECK: PASS gemm_clear_at_run_time_bf16
// CHECK: PASS gemm_clear_at_run_time_f16
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

/// C = op(A) op(B); A is [M, K] ([K, M] with TA), B is [K, N] ([N, K] with TB).
template <class In, int BM, int BN, int BK, int Stages, bool TA, bool TB,
          T::warp_policy Policy = T::warp_policy::square, int Threads = 128>
[[tile::kernel]] void gemm(T::tensor<const In, 2> A, T::tensor<const In, 2> B, T::tensor<float, 2> C) {
  const int M = C.size(0), N = C.size(1), K = TA ? A.size(0) : A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM), T::threads(Threads));
  T::shared<In, TA ? BK : BM, TA ? BM : BK> As;
  T::shared<In, TB ? BN : BK, TB ? BK : BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, BK), T::stages(Stages))) {
    if constexpr (TA)
      T::copy(A.at(k * BK, by * BM), As);
    else
      T::copy(A.at(by * BM, k * BK), As);
    if constexpr (TB)
      T::copy(B.at(bx * BN, k * BK), Bs);
    else
      T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(As, Bs, acc, {.transpose_a = TA, .transpose_b = TB, .policy = Policy});
  }
  T::copy(acc, C.at(by * BM, bx * BN));
}

/// The A operand read straight into a fragment instead of shared memory.
template <int BM, int BN, int BK>
[[tile::kernel]] void gemm_fragment_a(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B,
                                      T::tensor<float, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM));
  T::fragment<T::bf16, BM, BK> Af;
  T::shared<T::bf16, BK, BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::serial(T::ceildiv(K, BK))) {
    T::copy(A.at(by * BM, k * BK), Af);
    T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(Af, Bs, acc);
  }
  T::copy(acc, C.at(by * BM, bx * BN));
}

/// The same with A stored transposed: the fragment stays in shared memory (ldmatrix reads
/// it there) while the gemm still runs on tensor cores.
template <int BM, int BN, int BK>
[[tile::kernel]] void gemm_fragment_a_transposed(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B,
                                                 T::tensor<float, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(0);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM));
  T::fragment<T::bf16, BK, BM> Af;
  T::shared<T::bf16, BK, BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::serial(T::ceildiv(K, BK))) {
    T::copy(A.at(k * BK, by * BM), Af);
    T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(Af, Bs, acc, {.transpose_a = true});
  }
  T::copy(acc, C.at(by * BM, bx * BN));
}

/// The first k tile's gemm clears an accumulator full of garbage; the loop over the others
/// (a pipelined loop that starts at 1) accumulates.
template <int BM, int BN, int BK>
[[tile::kernel]] void gemm_clear_accum(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B,
                                       T::tensor<float, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM));
  T::shared<T::bf16, BM, BK> As;
  T::shared<T::bf16, BK, BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::fill(acc, 1000.0f);
  T::copy(A.at(by * BM, 0), As);
  T::copy(B.at(0, bx * BN), Bs);
  T::gemm(As, Bs, acc, {.clear_accum = true});
  for (int k : T::pipelined(1, T::ceildiv(K, BK), T::stages(2))) {
    T::copy(A.at(by * BM, k * BK), As);
    T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * BM, bx * BN));
}

/// clear_accum decided at run time, as TileLang's examples write it: the accumulator (full
/// of garbage before) is cleared at k tile `first`, so C sums the k tiles from there on.
template <class In, int BM, int BN, int BK>
[[tile::kernel]] void gemm_clear_at(T::tensor<const In, 2> A, T::tensor<const In, 2> B, T::tensor<float, 2> C,
                                    int first) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM));
  T::shared<In, BM, BK> As;
  T::shared<In, BK, BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::fill(acc, 1000.0f);
  for (int k : T::pipelined(T::ceildiv(K, BK), T::stages(2))) {
    T::copy(A.at(by * BM, k * BK), As);
    T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(As, Bs, acc, {.transpose_b = false, .clear_accum = (k == first)});
  }
  T::copy(acc, C.at(by * BM, bx * BN));
}

/// Runs `kernel(A, B, C)` on random inputs and checks C against a float64 reference.
template <class In, class Kernel>
void run(const char *name, int M, int N, int K, bool ta, bool tb, Kernel kernel, int k_first = 0) {
  auto a = check::random<In>(std::size_t(M) * K), b = check::random<In>(std::size_t(K) * N);
  std::vector<double> ref(std::size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = k_first; k < K; ++k)
        ref[i * N + j] += check::value(ta ? a[k * M + i] : a[i * K + k]) * check::value(tb ? b[j * K + k] : b[k * N + j]);
  auto A = check::upload(a, {ta ? K : M, ta ? M : K});
  auto B = check::upload(b, {tb ? N : K, tb ? K : N});
  auto C = check::upload(check::poisoned<float>(std::size_t(M) * N), {M, N});
  kernel(A, B, C);
  check::close(name, ref, C.to_vector(), 1e-5);
}

int main() {
  using T::bf16, T::f16;
  using P = T::warp_policy;
  run<bf16>("gemm_nn_bf16", 77, 45, 83, false, false,
            [](auto &a, auto &b, auto &c) { gemm<bf16, 64, 64, 32, 3, false, false>(a, b, c); });
  run<f16>("gemm_tb_f16", 50, 61, 100, false, true,
           [](auto &a, auto &b, auto &c) { gemm<f16, 32, 48, 16, 2, false, true>(a, b, c); });
  run<bf16>("gemm_ta_bf16", 67, 39, 130, true, false,
            [](auto &a, auto &b, auto &c) { gemm<bf16, 48, 32, 48, 4, true, false>(a, b, c); });
  run<f16>("gemm_ta_tb_f16", 33, 35, 97, true, true,
           [](auto &a, auto &b, auto &c) { gemm<f16, 16, 16, 80, 2, true, true>(a, b, c); });
  run<bf16>("gemm_full_row_bf16", 70, 90, 41, false, false,
            [](auto &a, auto &b, auto &c) { gemm<bf16, 64, 32, 16, 2, false, false, P::full_row, 256>(a, b, c); });
  run<f16>("gemm_full_col_f16", 29, 75, 57, false, true,
           [](auto &a, auto &b, auto &c) { gemm<f16, 32, 64, 32, 3, false, true, P::full_col, 64>(a, b, c); });
  run<bf16>("gemm_fragment_a_bf16", 45, 37, 70, false, false,
            [](auto &a, auto &b, auto &c) { gemm_fragment_a<32, 32, 16>(a, b, c); });
  run<bf16>("gemm_fragment_a_transposed_bf16", 51, 40, 66, true, false,
            [](auto &a, auto &b, auto &c) { gemm_fragment_a_transposed<32, 32, 16>(a, b, c); });
  run<bf16>("gemm_clear_accum_bf16", 39, 53, 75, false, false,
            [](auto &a, auto &b, auto &c) { gemm_clear_accum<32, 32, 16>(a, b, c); });
  run<bf16>(
      "gemm_clear_at_run_time_bf16", 41, 70, 90, false, false,
      [](auto &a, auto &b, auto &c) { gemm_clear_at<bf16, 32, 64, 16>(a, b, c, 2); }, 2 * 16);
  run<f16>(
      "gemm_clear_at_run_time_f16", 64, 33, 47, false, false,
      [](auto &a, auto &b, auto &c) { gemm_clear_at<f16, 64, 32, 16>(a, b, c, 0); }, 0);
  return check::result();
}
