// Paired blocks (sm_90a, pair-blocks=on): a launched block runs two neighbouring blocks of the
// grid, a consumer warpgroup each, and its producer loads the loop's tiles the two share once.
// The seed's GEMM (pairs along x share A's tile) on even and odd grids, a one-dimensional grid
// whose weight tile every block reads, a loop whose trip count differs between the two blocks
// of a pair (the one with fewer iterations hands the other's stages back unread), and an
// epilogue that goes through a shared tile of the kernel's own, read back transposed (each
// group its own copy and its own barrier); each against float64 on sizes that divide no tile,
// outputs poisoned, and each launch checked to have run ceil(x / 2) blocks along the paired
// dimension (on sm_90 with the producer's entry; elsewhere the grid as it is).
// RUN: %tile-cxx %s -O2 -fplugin-arg-tile-pair-blocks=on -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS gemm_even_grid
// CHECK: PASS gemm_odd_grid
// CHECK: PASS gemm_one_column
// CHECK: PASS rows_shared_weights
// CHECK: PASS rows_odd_grid
// CHECK: PASS triangle_even
// CHECK: PASS triangle_odd
// CHECK: PASS own_tile_flipped
// CHECK: PASS own_tile_flipped_odd
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

/// Y[rows of block b] = X[those rows, :K_b] W[:K_b, :] with K_b = (b + 1) * 64 (at most K): the
/// two blocks of a pair run different counts of iterations (attention's causal loop).
[[tile::kernel]] void triangle(T::tensor<const bf16, 2> X, T::tensor<const bf16, 2> W, T::tensor<float, 2> Y) {
  const int M = X.size(0), K = X.size(1);
  auto [bx] = T::grid(T::ceildiv(M, 64), T::threads(128));
  const int steps = T::min(T::ceildiv(K, 64), bx + 1);
  T::shared<bf16, 64, 64> Xs;
  T::shared<bf16, 64, 128> Ws;
  T::fragment<float, 64, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(steps, T::stages(2))) {
    T::copy(X.at(bx * 64, k * 64), Xs);
    T::copy(W.at(k * 64, 0), Ws);
    T::gemm(Xs, Ws, acc);
  }
  T::copy(acc, Y.at(bx * 64, 0));
}

/// rows(), its result's rows reversed within each block's 64 through a shared tile of the
/// kernel's own (a barrier between the write and the read) and scaled by 2.
[[tile::kernel]] void flipped(T::tensor<const bf16, 2> X, T::tensor<const bf16, 2> W, T::tensor<float, 2> Y) {
  const int M = X.size(0), K = X.size(1);
  auto [bx] = T::grid(T::ceildiv(M, 64), T::threads(128));
  T::shared<bf16, 64, 64> Xs;
  T::shared<bf16, 64, 128> Ws;
  T::shared<float, 64, 128> Ys;
  T::fragment<float, 64, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(2))) {
    T::copy(X.at(bx * 64, k * 64), Xs);
    T::copy(W.at(k * 64, 0), Ws);
    T::gemm(Xs, Ws, acc);
  }
  T::copy(acc, Ys);
  for (auto [i, j] : T::parallel(64, 128))
    acc(i, j) = Ys(63 - i, j) * 2.0f;
  T::copy(acc, Y.at(bx * 64, 0));
}

/// The launch ran `paired` blocks (the grid with its paired dimension halved, rounded up) on
/// sm_90 with the producer's entry, and `all` otherwise.
void check_blocks(const char *name, long long paired, long long all) {
  const tile::device d = tile::current_device();
#ifdef TILE_GPU_TEST_GEMM_MMA
  const bool hopper = false;
#else
  const bool hopper = d.backend == tile::backend::cuda && d.architecture() == "sm_90";
#endif
  const long long want = hopper && tile::rt::last_tensor_map_launch() != 0 ? paired : all;
  const long long got = tile::rt::last_launch_blocks();
  if (got != want) {
    std::printf("FAIL %s: %lld blocks launched, expected %lld\n", name, got, want);
    check::failures++;
  }
}

/// C = A B against float64 (A [M, K], B [K, N]), over the first `steps(i)` chunks of 64 of K
/// for row i (all of K where null).
std::vector<double> reference(const std::vector<bf16> &a, const std::vector<bf16> &b, int M, int N, int K,
                              int (*chunks)(int row) = nullptr) {
  std::vector<double> ref(std::size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < (chunks ? std::min(K, 64 * chunks(i)) : K); ++k) {
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
  const long long gx = (N + 127) / 128, gy = (M + 127) / 128;
  check_blocks(name, (gx + 1) / 2 * gy, gx * gy);
  check::close(name, reference(a, b, M, N, K), C.to_vector(), 1e-4);
}

enum class Rows { plain, triangle, flipped };

void run_rows(const char *name, Rows kind, int M, int K) {
  auto x = check::random<bf16>(std::size_t(M) * K), w = check::random<bf16>(std::size_t(K) * 128);
  auto X = check::upload(x, {M, K}), W = check::upload(w, {K, 128});
  auto Y = check::upload(check::poisoned<float>(std::size_t(M) * 128), {M, 128});
  std::vector<double> ref;
  if (kind == Rows::triangle) {
    triangle(X, W, Y);
    ref = reference(x, w, M, 128, K, [](int row) { return row / 64 + 1; });
  } else {
    ref = reference(x, w, M, 128, K);
    if (kind == Rows::flipped) {
      flipped(X, W, Y);
      // Row i of a block's 64 takes row 63 - i, where that row is in the matrix (rows past
      // M read the zeros of the block's padding).
      std::vector<double> out(ref.size(), 0.0);
      for (int i = 0; i < M; ++i) {
        const int from = i / 64 * 64 + 63 - i % 64;
        for (int j = 0; j < 128; ++j)
          out[std::size_t(i) * 128 + j] = from < M ? 2 * ref[std::size_t(from) * 128 + j] : 0.0;
      }
      ref = out;
    } else {
      rows(X, W, Y);
    }
  }
  const long long gx = (M + 63) / 64;
  check_blocks(name, (gx + 1) / 2, gx);
  check::close(name, ref, Y.to_vector(), 1e-4);
}

int main() {
  run_gemm("gemm_even_grid", 1000, 1000, 256);  // grid 8 x 8
  run_gemm("gemm_odd_grid", 520, 264, 200);     // grid 3 x 5: the last pair of each row has one block
  run_gemm("gemm_one_column", 300, 100, 72);    // grid 1 x 3: every pair has one block
  run_rows("rows_shared_weights", Rows::plain, 1000, 300);  // grid 16
  run_rows("rows_odd_grid", Rows::plain, 300, 200);         // grid 5
  run_rows("triangle_even", Rows::triangle, 500, 520);      // grid 8, 1 to 8 of 9 steps
  run_rows("triangle_odd", Rows::triangle, 290, 130);       // grid 5, 1 to 3 of 3 steps
  run_rows("own_tile_flipped", Rows::flipped, 1000, 300);
  run_rows("own_tile_flipped_odd", Rows::flipped, 300, 72);
  return check::result();
}
