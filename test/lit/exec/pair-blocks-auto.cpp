// Paired blocks as the default (pair-blocks=auto) chooses them: the seed's GEMM, a loop of one
// gemm, has an entry with pairs and one without. On sm_90 the runtime launches the paired one
// (half the blocks along x) where the grid has more blocks than the SMs hold alone at once,
// and the one without pairs (every block) where they fit; elsewhere the grid as it is. Each
// against float64 on sizes that divide no tile, outputs poisoned. (33 x 33 = 1089 blocks is
// more than any sm_90 device holds at two an SM; 4 x 3 fits every one.)
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS small_grid_one_by_one
// CHECK: PASS large_grid_in_pairs
// CHECK: PASS large_odd_grid_in_pairs
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

void run(const char *name, int M, int N, int K, bool pairs) {
  auto a = check::random<bf16>(std::size_t(M) * K), b = check::random<bf16>(std::size_t(K) * N);
  auto A = check::upload(a, {M, K}), B = check::upload(b, {K, N});
  auto C = check::upload(check::poisoned<float>(std::size_t(M) * N), {M, N});
  matmul(A, B, C);
  const long long gx = (N + 127) / 128, gy = (M + 127) / 128;
  const tile::device d = tile::current_device();
#ifdef TILE_GPU_TEST_GEMM_MMA
  const bool hopper = false;
#else
  const bool hopper = d.backend == tile::backend::cuda && d.architecture() == "sm_90";
#endif
  const long long want =
      hopper && tile::rt::last_tensor_map_launch() != 0 && pairs ? (gx + 1) / 2 * gy : gx * gy;
  if (tile::rt::last_launch_blocks() != want) {
    std::printf("FAIL %s: %lld blocks launched, expected %lld\n", name, tile::rt::last_launch_blocks(), want);
    check::failures++;
  }
  std::vector<double> ref(std::size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const double x = check::value(a[std::size_t(i) * K + k]);
      for (int j = 0; j < N; ++j)
        ref[std::size_t(i) * N + j] += x * check::value(b[std::size_t(k) * N + j]);
    }
  check::close(name, ref, C.to_vector(), 1e-4);
}

int main() {
  run("small_grid_one_by_one", 300, 500, 72, false);   // grid 4 x 3
  run("large_grid_in_pairs", 4200, 4200, 40, true);    // grid 33 x 33
  run("large_odd_grid_in_pairs", 3000, 4100, 33, true); // grid 33 x 24: each row's last pair has one block
  return check::result();
}
