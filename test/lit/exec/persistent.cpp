// Persistent grids (tile::persistent): on sm_90a a warp-specialized kernel launches at most
// one block an SM, and each block takes the grid's tiles in turn, its producer loading the
// next tile's copies (the K loop's, and the copy of Q before the loop) while its consumers
// finish the last. Checked where it runs: GEMMs of more tiles than an H200 has SMs, fewer,
// one, with use_swizzle's panels, with pipelines of 0 iterations; attention's shape of loop
// whose count differs from tile to tile (causal, the longest query blocks first) over more
// tiles than SMs; and tensors no tensor map describes (the fallback entry, one block a
// tile). Each launch's blocks are checked too (tile::rt::last_launch_blocks): fewer than the
// tiles where the persistent entry ran them, as many elsewhere. On the CPU the kernels run
// as they are, one block a tile.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS persistent_gemm_154_tiles
// CHECK: PASS persistent_gemm_swizzle3
// CHECK: PASS persistent_gemm_one_tile
// CHECK: PASS persistent_gemm_no_iteration
// CHECK: PASS persistent_gemm_unaligned_rows
// CHECK: PASS persistent_attention_causal_160_tiles
// CHECK: PASS persistent_attention_causal_swizzle2
// CHECK: PASS persistent_attention_full_24_tiles
// CHECK: PASS persistent_attention_500_tiles
// CHECK: PASS persistent_attention_unaligned_rows
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <algorithm>

namespace T = tile;

/// C = A B over k tiles from First, 128 x 128 tiles on two consumer warpgroups, persistent;
/// blocks in panels of Panel rows where Panel > 0.
template <class In, int S, int Panel = 0, int First = 0>
[[tile::kernel]] void p_gemm(T::tensor<const In, 2> A, T::tensor<const In, 2> B, T::tensor<float, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(256));
  T::persistent();
  if constexpr (Panel > 0)
    T::use_swizzle(Panel);
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

/// Attention's shape of loop, per head `by`: O = the sum over key blocks kb of
/// 0.25 Q K_kb^T V_kb (bf16 scores; causal: keys past the query's row count zero), the sum
/// halved before each block's term. Query blocks longest first; causal loops end at the
/// diagonal, so each tile has its own count. Q [H, M, 64], K and V [H, N, 64], O [H, M, 64].
template <int S, bool Causal, int Panel = 0, bool Persistent = true>
[[tile::kernel]] void p_attention(T::tensor<const T::bf16, 3> Q, T::tensor<const T::bf16, 3> K,
                                  T::tensor<const T::bf16, 3> V, T::tensor<float, 3> O) {
  const int M = Q.size(1), N = K.size(1);
  auto [bx, by] = T::grid(T::ceildiv(M, 128), Q.size(0), T::threads(256));
  T::persistent(Persistent);
  if constexpr (Panel > 0)
    T::use_swizzle(Panel);
  const int qb = T::ceildiv(M, 128) - 1 - bx;
  T::shared<T::bf16, 128, 64> Qs;
  T::shared<T::bf16, 64, 64> Ks, Vs;
  T::fragment<float, 128, 64> s;
  T::fragment<T::bf16, 128, 64> p;
  T::fragment<float, 128, 64> acc;
  T::copy(Q.at(by, qb * 128, 0), Qs);
  T::clear(acc);
  const int blocks = Causal ? T::min(T::ceildiv(N, 64), T::ceildiv((qb + 1) * 128, 64)) : T::ceildiv(N, 64);
  for (int kb : T::pipelined(blocks, T::stages(S))) {
    T::copy(K.at(by, kb * 64, 0), Ks);
    T::copy(V.at(by, kb * 64, 0), Vs);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    for (auto [i, j] : T::parallel(128, 64))
      s(i, j) = Causal && kb * 64 + j > qb * 128 + i ? 0.0f : s(i, j) * 0.25f;
    for (auto [i, j] : T::parallel(128, 64))
      acc(i, j) = acc(i, j) * 0.5f;
    T::copy(s, p);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(by, qb * 128, 0));
}

/// Whether the last launch ran `tiles` tiles as it should: on an sm_90 GPU with tensor maps
/// (`maps`) on a persistent grid, at most one block an SM (an H200 has 132, no Hopper more
/// than 144); elsewhere, and built with gemm=mma (test/gpu's NAME-mma programs: no wgmma, no
/// producer, no persistent grid), one block a tile and no tensor maps.
void check_blocks(const char *name, long long tiles, bool maps, bool persistent = true) {
  const tile::device d = tile::current_device();
#ifdef TILE_GPU_TEST_GEMM_MMA
  const bool specialized = false;
#else
  const bool specialized = d.backend == tile::backend::cuda && d.architecture() == "sm_90";
#endif
  const long long got = tile::rt::last_launch_blocks();
  const bool ok = specialized && maps && persistent ? got >= 1 && got <= std::min(tiles, 144LL) : got == tiles;
  if (!ok) {
    std::printf("FAIL %s: %lld blocks ran %lld tiles\n", name, got, tiles);
    check::failures++;
  }
  const int entry = tile::rt::last_tensor_map_launch();
  if (entry != (specialized ? (maps ? 1 : 0) : -1)) {
    std::printf("FAIL %s: entry %d\n", name, entry);
    check::failures++;
  }
}

/// Runs `kernel(A, B, C)` (A's and B's rows `pad` elements longer than they are wide)
/// against a float64 reference of the k tiles from `k_first`.
template <class In, class Kernel>
void run_gemm(const char *name, int M, int N, int K, Kernel kernel, int pad = 0, int k_first = 0) {
  auto a = check::random<In>(std::size_t(M) * K), b = check::random<In>(std::size_t(K) * N);
  std::vector<double> ref(std::size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int k = k_first; k < K; ++k) {
      const double x = check::value(a[std::size_t(i) * K + k]);
      for (int j = 0; j < N; ++j)
        ref[std::size_t(i) * N + j] += x * check::value(b[std::size_t(k) * N + j]);
    }
  std::vector<In> ap(std::size_t(M) * (K + pad)), bp(std::size_t(K) * (N + pad));
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k)
      ap[std::size_t(i) * (K + pad) + k] = a[std::size_t(i) * K + k];
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j)
      bp[std::size_t(k) * (N + pad) + j] = b[std::size_t(k) * N + j];
  auto Ad = check::upload(ap, {std::int64_t(ap.size())}), Bd = check::upload(bp, {std::int64_t(bp.size())});
  T::tensor<const In, 2> A(Ad.data(), {M, K}, {K + pad, 1});
  T::tensor<const In, 2> B(Bd.data(), {K, N}, {N + pad, 1});
  auto C = check::upload(check::poisoned<float>(std::size_t(M) * N), {M, N});
  kernel(A, B, C);
  check_blocks(name, (long long)((M + 127) / 128) * ((N + 127) / 128), pad == 0);
  check::close(name, ref, C.to_vector(), 1e-5);
}

/// Runs p_attention<S, causal, panel> over H heads (K's rows `pad` elements longer than 64)
/// against a float64 reference that rounds each score to bf16 as p does.
template <int S, bool causal, int panel = 0, bool persistent = true>
void run_attention(const char *name, int H, int M, int N, int pad = 0) {
  using T::bf16;
  auto q = check::random<bf16>(std::size_t(H) * M * 64), k = check::random<bf16>(std::size_t(H) * N * 64),
       v = check::random<bf16>(std::size_t(H) * N * 64);
  std::vector<double> ref(std::size_t(H) * M * 64, 0.0);
  const int key_blocks = (N + 63) / 64;
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < M; ++i) {
      const int qb = i / 128;
      const int blocks = causal ? std::min(key_blocks, ((qb + 1) * 128 + 63) / 64) : key_blocks;
      double *o = &ref[(std::size_t(h) * M + i) * 64];
      const bf16 *qi = &q[(std::size_t(h) * M + i) * 64];
      for (int kb = 0; kb < blocks; ++kb) {
        for (int d = 0; d < 64; ++d)
          o[d] *= 0.5;
        for (int j = kb * 64; j < std::min(N, kb * 64 + 64); ++j) {
          if (causal && j > i)
            continue;
          const bf16 *kj = &k[(std::size_t(h) * N + j) * 64], *vj = &v[(std::size_t(h) * N + j) * 64];
          double dot = 0;
          for (int d = 0; d < 64; ++d)
            dot += check::value(qi[d]) * check::value(kj[d]);
          const double pij = check::value(bf16(float(0.25 * dot)));
          for (int d = 0; d < 64; ++d)
            o[d] += pij * check::value(vj[d]);
        }
      }
    }
  std::vector<bf16> kp(std::size_t(H) * N * (64 + pad));
  for (std::size_t r = 0; r < std::size_t(H) * N; ++r)
    for (int d = 0; d < 64; ++d)
      kp[r * (64 + pad) + d] = k[r * 64 + d];
  auto Qd = check::upload(q, {H, M, 64}), Vd = check::upload(v, {H, N, 64});
  auto Kd = check::upload(kp, {std::int64_t(kp.size())});
  T::tensor<const bf16, 3> Kt(Kd.data(), {H, N, 64}, {std::int64_t(N) * (64 + pad), 64 + pad, 1});
  auto O = check::upload(check::poisoned<float>(std::size_t(H) * M * 64), {H, M, 64});
  p_attention<S, causal, panel, persistent>(Qd, Kt, Vd, O);
  check_blocks(name, (long long)((M + 127) / 128) * H, pad == 0, persistent);
  check::close(name, ref, O.to_vector(), 1e-2);
}

#ifndef PERSISTENT_NO_MAIN
int main() {
  using T::bf16, T::f16;
  // 14 x 11 = 154 tiles: more than the SMs, so that blocks take several. (N and K are
  // multiples of 8 where a tensor map should take the tensors: rows of a multiple of 16 bytes.)
  run_gemm<bf16>("persistent_gemm_154_tiles", 1700, 1304, 104,
                 [](auto &a, auto &b, auto &c) { p_gemm<bf16, 3>(a, b, c); });
  run_gemm<f16>("persistent_gemm_swizzle3", 1500, 2000, 136,
                [](auto &a, auto &b, auto &c) { p_gemm<f16, 2, 3>(a, b, c); });
  run_gemm<bf16>("persistent_gemm_one_tile", 100, 72, 200, [](auto &a, auto &b, auto &c) { p_gemm<bf16, 3>(a, b, c); });
  // No iteration in any tile (k from 1 to ceildiv(64, 64)): C is the accumulator's zeros.
  run_gemm<bf16>(
      "persistent_gemm_no_iteration", 1000, 2296, 64, [](auto &a, auto &b, auto &c) { p_gemm<bf16, 2, 0, 1>(a, b, c); },
      0, 64);
  // Rows of K + 3 elements: no tensor map describes them; the fallback runs, a block a tile.
  run_gemm<bf16>(
      "persistent_gemm_unaligned_rows", 700, 650, 130, [](auto &a, auto &b, auto &c) { p_gemm<bf16, 3>(a, b, c); }, 3);
  // 40 heads x 4 query blocks: 160 tiles of 1 to 5 key blocks (4 or 5 past the diagonal).
  run_attention<2, true>("persistent_attention_causal_160_tiles", 40, 500, 300);
  run_attention<3, true, 2>("persistent_attention_causal_swizzle2", 36, 600, 650);
  run_attention<2, false>("persistent_attention_full_24_tiles", 3, 1000, 700);
  // 250 heads x 2 query blocks of one key block each: many short tiles.
  run_attention<2, false>("persistent_attention_500_tiles", 250, 200, 64);
  run_attention<2, true>("persistent_attention_unaligned_rows", 20, 300, 260, 3);
  return check::result();
}
#endif
