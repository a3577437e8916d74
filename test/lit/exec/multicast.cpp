// Clusters with multicast (sm_90a, multicast=on): neighbouring blocks that copy the same tile
// in a warp-specialized loop load half of it each, for both. The seed's GEMM in panels of 8
// rows (pairs share B's tile; in a last panel of one row they share A's; in one of three rows
// some pairs share neither), a grid of odd x (blocks one by one), and a one-dimensional grid
// whose weight tile every block reads; each against float64 on sizes that divide no tile,
// outputs poisoned, and each launch checked to have run in clusters of two exactly where its
// grid's x extent is even (on sm_90 with the producer's entry; elsewhere, one by one).
// RUN: %tile-cxx %s -O2 -fplugin-arg-tile-multicast=on -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS gemm_pairs_share_b
// CHECK: PASS gemm_last_panel_shares_a
// CHECK: PASS gemm_last_panel_of_3
// CHECK: PASS gemm_odd_grid
// CHECK: PASS rows_shared_weights
// CHECK: PASS rows_odd_grid
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;
using T::bf16;

[[tile::kernel]] void matmul(T::tensor<const bf16, 2> A, T::tensor<const bf16, 2> B, T::tensor<float, 2> C) {
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(128));
  T::shared<bf16, 128, 32> As;
  T::shared<bf16, 32, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 32), T::stages(3))) {
    T::copy(A.at(by * 128, k * 32), As);
    T::copy(B.at(k * 32, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

/// Y = X W: a block of 64 rows of X each; W [K, 128] the same for every block.
[[tile::kernel]] void rows(T::tensor<const bf16, 2> X, T::tensor<const bf16, 2> W, T::tensor<float, 2> Y) {
  const int M = X.size(0), K = X.size(1);
  auto [bx] = T::grid(T::ceildiv(M, 64), T::threads(128));
  T::shared<bf16, 64, 64> Xs;
  T::shared<bf16, 64, 128> Ws;
  T::fragment<float, 64, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(2))) {
    T::copy(X.at(bx * 64, k * 64), Xs);
    T::copy(W.at(k * 64, 0), Ws);
    T::gemm(Xs, Ws, acc);
  }
  T::copy(acc, Y.at(bx * 64, 0));
}

/// The launch ran in clusters of two where `even_x` (the grid's x extent even) on sm_90 with
/// the producer's entry, one by one otherwise.
void check_cluster(const char *name, bool even_x) {
  const tile::device d = tile::current_device();
#ifdef TILE_GPU_TEST_GEMM_MMA
  const bool hopper = false;
#else
  const bool hopper = d.backend == tile::backend::cuda && d.architecture() == "sm_90";
#endif
  const int want = hopper && even_x && tile::rt::last_tensor_map_launch() == 1 ? 2 : 1;
  const int got = tile::rt::last_launch_cluster();
  if (got != want) {
    std::printf("FAIL %s: clusters of %d blocks, expected %d\n", name, got, want);
    check::failures++;
  }
}

/// C = A B against float64: A [M, K], B [K, N].
std::vector<double> reference(const std::vector<bf16> &a, const std::vector<bf16> &b, int M, int N, int K) {
  std::vector<double> ref(std::size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const double x = check::value(a[std::size_t(i) * K + k]);
      for (int j = 0; j < N; ++j)
        ref[std::size_t(i) * N + j] += x * check::value(b[std::size_t(k) * N + j]);
    }
  return ref;
}

void run_gemm(const char *name, int M, int N, int K) {
  auto a = check::random<bf16>(std::size_t(M) * K), b = check::random<bf16>(std::size_t(K) * N);
  auto A = check::upload(a, {M, K}), B = check::upload(b, {K, N});
  auto C = check::upload(check::poisoned<float>(std::size_t(M) * N), {M, N});
  matmul(A, B, C);
  check_cluster(name, (N + 127) / 128 % 2 == 0);
  check::close(name, reference(a, b, M, N, K), C.to_vector(), 1e-4);
}

void run_rows(const char *name, int M, int K) {
  auto x = check::random<bf16>(std::size_t(M) * K), w = check::random<bf16>(std::size_t(K) * 128);
  auto X = check::upload(x, {M, K}), W = check::upload(w, {K, 128});
  auto Y = check::upload(check::poisoned<float>(std::size_t(M) * 128), {M, 128});
  rows(X, W, Y);
  check_cluster(name, (M + 63) / 64 % 2 == 0);
  check::close(name, reference(x, w, M, 128, K), Y.to_vector(), 1e-4);
}

int main() {
  run_gemm("gemm_pairs_share_b", 1000, 1000, 256);      // grid 8 x 8: one panel
  run_gemm("gemm_last_panel_shares_a", 1100, 1010, 160); // grid 8 x 9: a last panel of one row
  run_gemm("gemm_last_panel_of_3", 1408, 1000, 96);      // grid 8 x 11: a last panel of three rows
  run_gemm("gemm_odd_grid", 520, 264, 200);              // grid 3 x 5
  run_rows("rows_shared_weights", 1000, 300);            // grid 16
  run_rows("rows_odd_grid", 300, 200);                   // grid 5
  return check::result();
}
