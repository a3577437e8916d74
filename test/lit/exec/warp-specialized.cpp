// GEMMs that warp-specialize on sm_90a (a producer warpgroup with bulk tensor copies and
// mbarriers), run where each path is taken: tensors whose strides and alignment a tensor map
// takes (the specialized entry), and the same kernels on views it cannot describe (rows of
// an odd number of elements, a base 2 bytes past a 16-byte boundary): the runtime launches
// the fallback entry. Pipelines of 0, 1, 2, 3 and many iterations (fewer than, as many as
// and more than the stages), M and N that divide no tile, a loop from 1 and a clear_accum
// decided at run time, fp16 and bf16 (N and K multiples of 8 where a tensor map should take
// the tensors: rows of a multiple of 16 bytes). On the CPU the same kernels run as they are. Each
// launch's entry is checked too (tile::rt::last_tensor_map_launch). And attention's loop of
// two gemms, whose second runs on into the next iteration, over 0, 1, 2, 3 and 7 blocks, on
// the launch's grid and on a persistent one (tile::persistent).
// RUN: %tile-cxx %s -O2 -fplugin-arg-tile-overlap-gemms=on -o %t && %t | FileCheck %s
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
// CHECK: PASS overlap_0_blocks
// CHECK: PASS overlap_1_block
// CHECK: PASS overlap_2_blocks
// CHECK: PASS overlap_3_blocks
// CHECK: PASS overlap_7_blocks
// CHECK: PASS overlap_7_blocks_stages4
// CHECK: PASS overlap_stages2
// CHECK: PASS overlap_stages2_5_blocks
// CHECK: PASS overlap_unaligned_rows
// CHECK: PASS overlap_v_twice_0_blocks
// CHECK: PASS overlap_v_twice_1_block
// CHECK: PASS overlap_v_twice_4_blocks
// CHECK: PASS overlap_v_twice_stages2
// CHECK: PASS overlap_persistent_0_blocks
// CHECK: PASS overlap_persistent_1_block
// CHECK: PASS overlap_persistent_7_blocks
// CHECK: PASS overlap_persistent_stages2
// CHECK: PASS overlap_persistent_v_twice
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

/// Attention's shape of loop: O = the sum over `blocks` key blocks kb of 0.25 Q K_kb^T V_kb,
/// the sum halved before each block's term is added. Warp-specialized with 3 stages or
/// more (and overlap-gemms=on), the second gemm of each block runs on into the next block's iteration, while
/// the scaling of s does (bench/NOTES.md, session 22); the halving of acc and the copy into
/// p wait for it. Q [M, 64], K and V [N, 64], O [M, 64] (in f32).
///
/// With Same, K is not read: V's tile serves both gemms (one tile, read by both).
template <int S, bool Same = false, bool Persistent = false>
[[tile::kernel]] void ws_two_gemms(T::tensor<const T::bf16, 2> Q, T::tensor<const T::bf16, 2> K,
                                   T::tensor<const T::bf16, 2> V, T::tensor<float, 2> O, int blocks) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 128), T::threads(256));
  T::persistent(Persistent);
  T::shared<T::bf16, 128, 64> Qs;
  T::shared<T::bf16, 64, 64> Ks, Vs;
  T::fragment<float, 128, 64> s;
  T::fragment<T::bf16, 128, 64> p;
  T::fragment<float, 128, 64> acc;
  T::copy(Q.at(bx * 128, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(blocks, T::stages(S))) {
    if constexpr (Same) { // (K unused: V's tile read by both gemms)
      T::copy(V.at(kb * 64, 0), Vs);
      T::gemm(Qs, Vs, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    } else {
      T::copy(K.at(kb * 64, 0), Ks);
      T::copy(V.at(kb * 64, 0), Vs);
      T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    }
    for (auto [i, j] : T::parallel(128, 64))
      s(i, j) = s(i, j) * 0.25f;
    for (auto [i, j] : T::parallel(128, 64))
      acc(i, j) = acc(i, j) * 0.5f;
    T::copy(s, p);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(bx * 128, 0));
}

/// Runs ws_two_gemms<S, same> (with K = V where `same`) over `blocks` key blocks of N keys (K and V rows past N arrive as
/// zeros), K's rows `pad` elements apart beyond its 64, against a float64 reference that
/// rounds each 0.25 Q K^T to bf16 as p does.
template <int S, bool same = false, bool persistent = false>
void run_two_gemms(const char *name, int M, int N, int blocks, int pad = 0) {
  using T::bf16;
  auto q = check::random<bf16>(std::size_t(M) * 64), k = check::random<bf16>(std::size_t(N) * 64),
       v = check::random<bf16>(std::size_t(N) * 64);
  if (same)
    k = v;
  std::vector<double> ref(std::size_t(M) * 64, 0.0);
  for (int i = 0; i < M; ++i)
    for (int kb = 0; kb < blocks; ++kb) {
      double *o = &ref[std::size_t(i) * 64];
      for (int d = 0; d < 64; ++d)
        o[d] *= 0.5;
      for (int j = kb * 64; j < std::min(N, kb * 64 + 64); ++j) {
        double dot = 0;
        for (int d = 0; d < 64; ++d)
          dot += check::value(q[std::size_t(i) * 64 + d]) * check::value(k[std::size_t(j) * 64 + d]);
        const double pij = check::value(bf16(float(0.25 * dot)));
        for (int d = 0; d < 64; ++d)
          o[d] += pij * check::value(v[std::size_t(j) * 64 + d]);
      }
    }
  std::vector<bf16> kp(std::size_t(N) * (64 + pad));
  for (int j = 0; j < N; ++j)
    for (int d = 0; d < 64; ++d)
      kp[std::size_t(j) * (64 + pad) + d] = k[std::size_t(j) * 64 + d];
  auto Qd = check::upload(q, {M, 64}), Vd = check::upload(v, {N, 64});
  auto Kd = check::upload(kp, {std::int64_t(kp.size())});
  T::tensor<const bf16, 2> Kt(Kd.data(), {N, 64}, {64 + pad, 1});
  auto O = check::upload(check::poisoned<float>(std::size_t(M) * 64), {M, 64});
  ws_two_gemms<S, same, persistent>(Qd, Kt, Vd, O, blocks);
  check::entry(name, pad == 0);
  check::close(name, ref, O.to_vector(), 1e-2);
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
  check::entry(name, pad == 0 && shift == 0);
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
  // The overlapped second gemm: no iteration, one (only the peeled first and the last
  // gemm after the loop), two, as many as the stages, more; 4 stages; 2 stages (not
  // overlapped, the remark says why); K's rows 3 elements longer (the fallback entry).
  run_two_gemms<3>("overlap_0_blocks", 200, 130, 0);
  run_two_gemms<3>("overlap_1_block", 200, 50, 1);
  run_two_gemms<3>("overlap_2_blocks", 130, 100, 2);
  run_two_gemms<3>("overlap_3_blocks", 260, 190, 3);
  run_two_gemms<3>("overlap_7_blocks", 300, 420, 7);
  run_two_gemms<4>("overlap_7_blocks_stages4", 129, 448, 7);
  run_two_gemms<2>("overlap_stages2", 140, 130, 3);
  run_two_gemms<2>("overlap_stages2_5_blocks", 140, 300, 5);
  run_two_gemms<3>("overlap_unaligned_rows", 150, 260, 5, 3);
  // V read by both gemms (K = V): one set of barriers; with 2 stages not overlapped.
  run_two_gemms<3, true>("overlap_v_twice_0_blocks", 130, 70, 0);
  run_two_gemms<3, true>("overlap_v_twice_1_block", 130, 70, 1);
  run_two_gemms<3, true>("overlap_v_twice_4_blocks", 200, 250, 4);
  run_two_gemms<2, true>("overlap_v_twice_stages2", 200, 250, 4);
  // On a persistent grid (157 tiles: blocks take several, the stages' parities continuing
  // from tile to tile), with no block, one and seven.
  run_two_gemms<3, false, true>("overlap_persistent_0_blocks", 20000, 130, 0);
  run_two_gemms<3, false, true>("overlap_persistent_1_block", 20000, 50, 1);
  run_two_gemms<3, false, true>("overlap_persistent_7_blocks", 20000, 420, 7);
  run_two_gemms<2, false, true>("overlap_persistent_stages2", 20000, 300, 5);
  run_two_gemms<3, true, true>("overlap_persistent_v_twice", 20000, 250, 4);
  return check::result();
}
