// GEMMs that warp-specialize on sm_90a (a producer warpgroup with bulk tensor copies and
// mbarriers), run where each path is taken: tensors whose strides and alignment a tensor map
// takes (the specialized entry), and the same kernels on views it cannot describe (rows of
// an odd number of elements, a base 2 bytes past a 16-byte boundary): the runtime launches
// the fallback entry. Pipelines of 0, 1, 2, 3 and many iterations (fewer than, as many as
// and more than the stages), M and N that divide no tile, a loop from 1 and a clear_accum
// decided at run time, fp16 and bf16 (N and K multiples of 8 where a tensor map should take
// the tensors: rows of a multiple of 16 bytes). On the CPU the same kernels run as they are. Each
// launch's entry is checked too (tile::rt::last_tensor_map_launch).
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS ws_k0_bf16
// CHECK: PASS ws_k64_bf16
// CHECK: PASS ws_k128_f16
// CHECK: PASS ws_k192_bf16
// CHECK: PASS ws_k1000_bf16
// CHECK: PASS ws_k1000_f16_stages4
// CHECK: PASS ws_from_one_bf16
// CHECK: PASS ws_clear_at_run_time_bf16
// CHECK: PASS ws_unaligned_rows_bf16
// CHECK: PASS ws_unaligned_base_f16
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

/// C = A B, A [M, K], B [K, N], 128 x 128 tiles on two consumer warpgroups.
template <class In, int S, int First = 0>
[[tile::kernel]] void ws_gemm(T::tensor<const In, 2> A, T::tensor<const In, 2> B, T::tensor<float, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(256));
  T::shared<In, 128, 64> As;
  T::shared<In, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(First, T::ceildiv(K, 64), T::stages(S))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

/// The accumulator (garbage before) cleared at k tile `first`, decided at run time (a fill
/// before the gemm in the loop: work besides the gemm, taken as the kernel asks).
template <class In>
[[tile::kernel]] void ws_clear_at(T::tensor<const In, 2> A, T::tensor<const In, 2> B, T::tensor<float, 2> C,
                                  int first) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(256));
  T::warp_specialize(true);
  T::shared<In, 128, 64> As;
  T::shared<In, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::fill(acc, 1000.0f);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc, {.transpose_b = false, .clear_accum = (k == first)});
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

/// Which entry the last launch ran (tile::rt::last_tensor_map_launch): on an sm_90 GPU the
/// one with tensor maps where the tensors allow them (`maps`), else the fallback; on other
/// devices the kernel has no tensor maps.
void check_entry(const char *name, bool maps) {
  const tile::device d = tile::current_device();
  const int want = d.backend == tile::backend::cuda && d.architecture() == "sm_90" ? (maps ? 1 : 0) : -1;
  const int got = tile::rt::last_tensor_map_launch();
  if (got != want) {
    std::printf("FAIL %s: entry %d, expected %d (1: tensor maps, 0: fallback, -1: none)\n", name, got, want);
    check::failures++;
  }
}

/// Runs `kernel(A, B, C)` with A and B stored with `pad` elements after each row and
/// `shift` elements before the first, and checks C against a float64 reference of the k
/// tiles from `k_first`, and which entry ran.
template <class In, class Kernel>
void run(const char *name, int M, int N, int K, Kernel kernel, int pad = 0, int shift = 0, int k_first = 0) {
  auto a = check::random<In>(std::size_t(M) * K), b = check::random<In>(std::size_t(K) * N);
  std::vector<double> ref(std::size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = k_first; k < K; ++k)
        ref[std::size_t(i) * N + j] += check::value(a[std::size_t(i) * K + k]) * check::value(b[std::size_t(k) * N + j]);
  // Stored with padded rows, from element `shift` on.
  std::vector<In> ap(std::size_t(shift) + std::size_t(M) * (K + pad)), bp(std::size_t(shift) + std::size_t(K) * (N + pad));
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k)
      ap[std::size_t(shift) + std::size_t(i) * (K + pad) + k] = a[std::size_t(i) * K + k];
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j)
      bp[std::size_t(shift) + std::size_t(k) * (N + pad) + j] = b[std::size_t(k) * N + j];
  auto Ad = check::upload(ap, {std::int64_t(ap.size())}), Bd = check::upload(bp, {std::int64_t(bp.size())});
  T::tensor<const In, 2> A(Ad.data() + shift, {M, K}, {K + pad, 1});
  T::tensor<const In, 2> B(Bd.data() + shift, {K, N}, {N + pad, 1});
  auto C = check::upload(check::poisoned<float>(std::size_t(M) * N), {M, N});
  kernel(A, B, C);
  check_entry(name, pad == 0 && shift == 0);
  check::close(name, ref, C.to_vector(), 1e-5);
}

int main() {
  using T::bf16, T::f16;
  // No iteration (k from 1 to ceildiv(64, 64)): the accumulator's zeros are C.
  run<bf16>(
      "ws_k0_bf16", 130, 72, 64, [](auto &a, auto &b, auto &c) { ws_gemm<bf16, 3, 1>(a, b, c); }, 0, 0, 64);
  run<bf16>("ws_k64_bf16", 200, 136, 64, [](auto &a, auto &b, auto &c) { ws_gemm<bf16, 3>(a, b, c); });
  run<f16>("ws_k128_f16", 129, 264, 128, [](auto &a, auto &b, auto &c) { ws_gemm<f16, 2>(a, b, c); });
  run<bf16>("ws_k192_bf16", 77, 312, 192, [](auto &a, auto &b, auto &c) { ws_gemm<bf16, 3>(a, b, c); });
  // K = 1000: the last k tile is partial (its columns past K arrive as zeros).
  run<bf16>("ws_k1000_bf16", 300, 200, 1000, [](auto &a, auto &b, auto &c) { ws_gemm<bf16, 3>(a, b, c); });
  run<f16>("ws_k1000_f16_stages4", 260, 392, 1000, [](auto &a, auto &b, auto &c) { ws_gemm<f16, 4>(a, b, c); });
  run<bf16>(
      "ws_from_one_bf16", 140, 152, 336, [](auto &a, auto &b, auto &c) { ws_gemm<bf16, 2, 1>(a, b, c); }, 0, 0, 64);
  run<bf16>(
      "ws_clear_at_run_time_bf16", 200, 264, 320, [](auto &a, auto &b, auto &c) { ws_clear_at<bf16>(a, b, c, 2); },
      0, 0, 128);
  // Rows of K + 3 elements (6 bytes more: not a multiple of 16) and a base 2 bytes past a
  // 16-byte boundary: no tensor map describes them, and the fallback runs.
  run<bf16>(
      "ws_unaligned_rows_bf16", 150, 130, 300, [](auto &a, auto &b, auto &c) { ws_gemm<bf16, 3>(a, b, c); }, 3);
  run<f16>(
      "ws_unaligned_base_f16", 131, 140, 256, [](auto &a, auto &b, auto &c) { ws_gemm<f16, 3>(a, b, c); }, 0, 1);
  return check::result();
}
