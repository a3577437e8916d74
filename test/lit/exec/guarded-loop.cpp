// Pipelined loops whose body is one `if` on a value read from a tensor (TileLang's
// block-sparse form): on sm_90a the producer warpgroup tests the condition and loads only
// the iterations where it holds, handing each one's index to the consumers with its stage;
// elsewhere the loop runs as written. A GEMM whose k blocks a selection tensor picks per row
// block (none, one, all, every other, runs longer than the stages and than the producer's
// batch of 8 tests), on one consumer warpgroup and on two, with 2, 3 and 4 stages, on the
// launch's grid and on a persistent one (blocks take several tiles, the stages continuing
// from tile to tile); and attention's loop of two gemms (two consumer warpgroups taking turns
// at the tensor cores) under the same condition. Sizes divide no tile; outputs poisoned;
// float64 references. Each launch's entry is checked (tensor maps on sm_90a).
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS gemm64_none
// CHECK: PASS gemm64_all
// CHECK: PASS gemm64_one
// CHECK: PASS gemm64_alternate
// CHECK: PASS gemm64_random
// CHECK: PASS gemm64_random_stages3
// CHECK: PASS gemm128_random
// CHECK: PASS gemm128_runs_stages4
// CHECK: PASS gemm128_persistent_random
// CHECK: PASS gemm128_persistent_none
// CHECK: PASS gemm64_persistent_runs
// CHECK: PASS gemm64_unaligned_fallback
// CHECK: PASS two_gemms_random
// CHECK: PASS two_gemms_none
// CHECK: PASS two_gemms_all
// CHECK: PASS two_gemms_persistent
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;
using T::bf16;

/// C = the sum over k blocks kb with Sel(row block, kb) != 0 of A[:, kb] B[kb, :];
/// BM rows of C a block (64: one consumer warpgroup; 128: two).
template <int BM, int S, bool Persistent = false>
[[tile::kernel]] void sel_gemm(T::tensor<const bf16, 2> A, T::tensor<const bf16, 2> B,
                               T::tensor<const std::int32_t, 2> Sel, T::tensor<float, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, BM), T::threads(BM * 2));
  T::persistent(Persistent);
  T::shared<bf16, BM, 64> As;
  T::shared<bf16, 64, 128> Bs;
  T::fragment<float, BM, 128> acc;
  T::clear(acc);
  for (int kb : T::pipelined(T::ceildiv(K, 64), T::stages(S))) {
    if (Sel(by, kb) != 0) {
      T::copy(A.at(by * BM, kb * 64), As);
      T::copy(B.at(kb * 64, bx * 128), Bs);
      T::gemm(As, Bs, acc);
    }
  }
  T::copy(acc, C.at(by * BM, bx * 128));
}

/// Attention's loop of two gemms under the condition: O = the sum over key blocks kb with
/// Sel(query block, kb) != 0 of bf16(0.25 Q K_kb^T) V_kb, the sum halved before each term.
template <bool Persistent = false>
[[tile::kernel]] void sel_two_gemms(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K,
                                    T::tensor<const bf16, 2> V, T::tensor<const std::int32_t, 2> Sel,
                                    T::tensor<float, 2> O) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 128), T::threads(256));
  T::persistent(Persistent);
  T::shared<bf16, 128, 64> Qs;
  T::shared<bf16, 64, 64> Ks, Vs;
  T::fragment<float, 128, 64> s;
  T::fragment<bf16, 128, 64> p;
  T::fragment<float, 128, 64> acc;
  T::copy(Q.at(bx * 128, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(T::ceildiv(K.size(0), 64), T::stages(2))) {
    if (Sel(bx, kb) != 0) {
      T::copy(K.at(kb * 64, 0), Ks);
      T::copy(V.at(kb * 64, 0), Vs);
      T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
      for (auto [i, j] : T::parallel(128, 64))
        s(i, j) = s(i, j) * 0.25f;
      for (auto [i, j] : T::parallel(128, 64))
        acc(i, j) = acc(i, j) * 0.5f;
      T::copy(s, p);
      T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
    }
  }
  T::copy(acc, O.at(bx * 128, 0));
}

enum class Pick { none, all, one, alternate, random, runs };

/// The selection of `cols` k blocks for each of `rows` row blocks.
std::vector<std::int32_t> selection(int rows, int cols, Pick pick) {
  check::rng r(77);
  std::vector<std::int32_t> sel(std::size_t(rows) * cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      bool on = false;
      switch (pick) {
      case Pick::none: on = false; break;
      case Pick::all: on = true; break;
      case Pick::one: on = j == (i * 3) % cols; break;
      case Pick::alternate: on = (i + j) % 2 == 0; break;
      case Pick::random: on = r.integer(0, 3) == 0; break;
      case Pick::runs: on = (j / 11 + i) % 2 == 0; break; // runs of 11 on, 11 off
      }
      sel[std::size_t(i) * cols + j] = on ? 1 + int(r.integer(0, 5)) : 0;
    }
  return sel;
}

template <int BM, class Kernel>
void run_gemm(const char *name, int M, int N, int K, Pick pick, Kernel kernel, int pad = 0) {
  const int RB = (M + BM - 1) / BM, KB = (K + 63) / 64;
  auto a = check::random<bf16>(std::size_t(M) * K), b = check::random<bf16>(std::size_t(K) * N);
  const std::vector<std::int32_t> sel = selection(RB, KB, pick);
  std::vector<double> ref(std::size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      if (!sel[std::size_t(i / BM) * KB + k / 64])
        continue;
      const double x = check::value(a[std::size_t(i) * K + k]);
      for (int j = 0; j < N; ++j)
        ref[std::size_t(i) * N + j] += x * check::value(b[std::size_t(k) * N + j]);
    }
  std::vector<bf16> ap(std::size_t(M) * (K + pad));
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k)
      ap[std::size_t(i) * (K + pad) + k] = a[std::size_t(i) * K + k];
  auto Ad = check::upload(ap, {std::int64_t(ap.size())});
  T::tensor<const bf16, 2> A(Ad.data(), {M, K}, {K + pad, 1});
  auto B = check::upload(b, {K, N});
  auto Sel = check::upload(sel, {RB, KB});
  auto C = check::upload(check::poisoned<float>(std::size_t(M) * N), {M, N});
  kernel(A, B, Sel, C);
  check::entry(name, pad == 0);
  check::close(name, ref, C.to_vector(), 1e-5);
}

template <bool Persistent = false> void run_two_gemms(const char *name, int M, int N, Pick pick) {
  const int QB = (M + 127) / 128, KB = (N + 63) / 64;
  auto q = check::random<bf16>(std::size_t(M) * 64), k = check::random<bf16>(std::size_t(N) * 64),
       v = check::random<bf16>(std::size_t(N) * 64);
  const std::vector<std::int32_t> sel = selection(QB, KB, pick);
  std::vector<double> ref(std::size_t(M) * 64, 0.0);
  for (int i = 0; i < M; ++i)
    for (int kb = 0; kb < KB; ++kb) {
      if (!sel[std::size_t(i / 128) * KB + kb])
        continue;
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
  auto Q = check::upload(q, {M, 64}), K = check::upload(k, {N, 64}), V = check::upload(v, {N, 64});
  auto Sel = check::upload(sel, {QB, KB});
  auto O = check::upload(check::poisoned<float>(std::size_t(M) * 64), {M, 64});
  sel_two_gemms<Persistent>(Q, K, V, Sel, O);
  check::entry(name, true);
  check::close(name, ref, O.to_vector(), 1e-2);
}

int main() {
  auto g64 = [](auto &a, auto &b, auto &s, auto &c) { sel_gemm<64, 2>(a, b, s, c); };
  run_gemm<64>("gemm64_none", 150, 200, 700, Pick::none, g64);
  run_gemm<64>("gemm64_all", 150, 200, 700, Pick::all, g64);
  run_gemm<64>("gemm64_one", 150, 200, 700, Pick::one, g64);
  run_gemm<64>("gemm64_alternate", 150, 200, 1000, Pick::alternate, g64);
  run_gemm<64>("gemm64_random", 333, 260, 1500, Pick::random, g64);
  run_gemm<64>("gemm64_random_stages3", 333, 260, 1500, Pick::random,
               [](auto &a, auto &b, auto &s, auto &c) { sel_gemm<64, 3>(a, b, s, c); });
  run_gemm<128>("gemm128_random", 300, 130, 2000, Pick::random,
                [](auto &a, auto &b, auto &s, auto &c) { sel_gemm<128, 2>(a, b, s, c); });
  run_gemm<128>("gemm128_runs_stages4", 300, 130, 3000, Pick::runs,
                [](auto &a, auto &b, auto &s, auto &c) { sel_gemm<128, 4>(a, b, s, c); });
  // Persistent grids of more tiles than SMs: the stages' parities go on from tile to tile,
  // each tile's end taking a stage too.
  run_gemm<128>("gemm128_persistent_random", 5000, 300, 700, Pick::random,
                [](auto &a, auto &b, auto &s, auto &c) { sel_gemm<128, 3, true>(a, b, s, c); });
  run_gemm<128>("gemm128_persistent_none", 5000, 300, 300, Pick::none,
                [](auto &a, auto &b, auto &s, auto &c) { sel_gemm<128, 2, true>(a, b, s, c); });
  run_gemm<64>("gemm64_persistent_runs", 9000, 200, 1500, Pick::runs,
               [](auto &a, auto &b, auto &s, auto &c) { sel_gemm<64, 2, true>(a, b, s, c); });
  // Rows of K + 3 elements: no tensor map takes A, and the fallback entry runs the loop.
  run_gemm<64>("gemm64_unaligned_fallback", 150, 200, 700, Pick::random, g64, 3);
  run_two_gemms("two_gemms_random", 300, 1100, Pick::random);
  run_two_gemms("two_gemms_none", 300, 500, Pick::none);
  run_two_gemms("two_gemms_all", 200, 700, Pick::all);
  run_two_gemms<true>("two_gemms_persistent", 20000, 700, Pick::random);
  return check::result();
}
