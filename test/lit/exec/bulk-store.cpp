// Bulk tensor stores (bulk-store=on): on sm_90a a warp-specialized kernel's epilogue copy of
// a fragment into a tensor goes through a shared tile that one thread stores by TMA. Checked
// where it runs: bf16 and f16 outputs on the launch's grid and on persistent grids (where a
// block's next tile waits for the last tile's stores to have read the shared tile), tiles
// on the tensor's edges (the box's elements past them not written: the output is a view
// into a wider buffer whose guard columns must keep their poison), from a shared tile of the
// kernel's own (TileLang's way) as from a fragment, a view whose rows no tensor map
// describes (the entry without C's map, which stores C as the copy is written), and
// persistent.cpp's f32 GEMMs and attention loops (ping-pong on, on both grids). On the CPU
// the kernels run as they are.
// RUN: %tile-cxx %s -O2 -fplugin-arg-tile-bulk-store=on -fplugin-arg-tile-pingpong=on -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS bulk_store_bf16_launch_grid
// CHECK: PASS bulk_store_bf16_launch_grid_guards
// CHECK: PASS bulk_store_f16_persistent_154_tiles
// CHECK: PASS bulk_store_f16_persistent_154_tiles_guards
// CHECK: PASS bulk_store_bf16_one_tile
// CHECK: PASS bulk_store_bf16_one_tile_guards
// CHECK: PASS bulk_store_own_tile_launch_grid
// CHECK: PASS bulk_store_own_tile_launch_grid_guards
// CHECK: PASS bulk_store_own_tile_persistent_154_tiles
// CHECK: PASS bulk_store_own_tile_persistent_154_tiles_guards
// CHECK: PASS bulk_store_unaligned_output
// CHECK: PASS bulk_store_unaligned_output_guards
// CHECK: PASS bulk_store_unaligned_output_persistent
// CHECK: PASS bulk_store_unaligned_output_persistent_guards
// CHECK: PASS bulk_store_f32_persistent_154_tiles
// CHECK: PASS bulk_store_f32_no_iteration
// CHECK: PASS bulk_store_attention_causal_160_tiles
// CHECK: PASS bulk_store_attention_launch_grid_full
// CHECK: PASS bulk_store_attention_unaligned_rows
// CHECK-NOT: FAIL

#define PERSISTENT_NO_MAIN
#include "persistent.cpp"

#include <cmath>

/// C = relu(A B) / 2 in E, 128 x 128 tiles on two consumer warpgroups.
template <class E, bool Persistent>
[[tile::kernel]] void bs_gemm(T::tensor<const E, 2> A, T::tensor<const E, 2> B, T::tensor<E, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(256));
  T::persistent(Persistent);
  T::shared<E, 128, 64> As;
  T::shared<E, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  for (auto [i, j] : T::parallel(128, 128))
    acc(i, j) = T::max(acc(i, j), 0.0f) * 0.5f;
  T::copy(acc, C.at(by * 128, bx * 128));
}

/// The same through a shared tile of the kernel's own (TileLang's way), f16 or bf16.
template <class E, bool Persistent>
[[tile::kernel]] void bs_own_gemm(T::tensor<const E, 2> A, T::tensor<const E, 2> B, T::tensor<E, 2> C) {
  const int M = C.size(0), N = C.size(1), K = A.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, 128), T::ceildiv(M, 128), T::threads(256));
  T::persistent(Persistent);
  T::shared<E, 128, 64> As;
  T::shared<E, 64, 128> Bs;
  T::shared<E, 128, 128> Cs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, 64), T::stages(3))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  for (auto [i, j] : T::parallel(128, 128))
    acc(i, j) = T::max(acc(i, j), 0.0f) * 0.5f;
  T::copy(acc, Cs);
  T::copy(Cs, C.at(by * 128, bx * 128));
}

/// Runs bs_gemm<E, persistent> (own: bs_own_gemm) with C a view of columns [guard, guard + N) of a buffer whose
/// rows are N + 2 guard + pad elements, against a float64 reference; the guard columns (and
/// the padding) must keep their poison. `entry`: the entry the launch should take on an
/// sm_90 GPU (tile::rt::last_tensor_map_launch: 1 with every tensor map, 2 without C's). A
/// and B need rows of a multiple of 16 bytes (K and N multiples of 8) for their maps, or the
/// launch takes the entry without a producer (0).
template <class E, bool persistent, bool own = false>
void run_bs_gemm(const char *name, int M, int N, int K, int guard, int pad, int entry) {
  auto a = check::random<E>(std::size_t(M) * K), b = check::random<E>(std::size_t(K) * N);
  std::vector<double> ref(std::size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i) {
    for (int k = 0; k < K; ++k) {
      const double x = check::value(a[std::size_t(i) * K + k]);
      for (int j = 0; j < N; ++j)
        ref[std::size_t(i) * N + j] += x * check::value(b[std::size_t(k) * N + j]);
    }
    for (int j = 0; j < N; ++j)
      ref[std::size_t(i) * N + j] = std::max(ref[std::size_t(i) * N + j], 0.0) * 0.5;
  }
  const int row = N + 2 * guard + pad;
  auto Ad = check::upload(a, {M, K}), Bd = check::upload(b, {K, N});
  auto Cd = check::upload(check::poisoned<E>(std::size_t(M) * row), {M, row});
  T::tensor<E, 2> C(Cd.data() + guard, {M, N}, {row, 1});
  if constexpr (own)
    bs_own_gemm<E, persistent>(Ad, Bd, C);
  else
    bs_gemm<E, persistent>(Ad, Bd, C);
  // The launch's entry (C's map missing: the producer still runs the K loop, and C is stored
  // as the copy is written), and its blocks (at most one an SM on a persistent grid).
  const tile::device d = tile::current_device();
#ifdef TILE_GPU_TEST_GEMM_MMA // test/gpu's bulk-store-mma: no wgmma, so no producer and no tensor maps
  const bool sm90 = false;
#else
  const bool sm90 = d.backend == tile::backend::cuda && d.architecture() == "sm_90";
#endif
  const long long tiles = (long long)((M + 127) / 128) * ((N + 127) / 128), blocks = tile::rt::last_launch_blocks();
  if (tile::rt::last_tensor_map_launch() != (sm90 ? entry : -1)) {
    std::printf("FAIL %s: entry %d\n", name, tile::rt::last_tensor_map_launch());
    check::failures++;
  }
  if (sm90 && persistent ? blocks < 1 || blocks > std::min(tiles, 144LL) : blocks != tiles) {
    std::printf("FAIL %s: %lld blocks ran %lld tiles\n", name, blocks, tiles);
    check::failures++;
  }
  const std::vector<E> all = Cd.to_vector();
  std::vector<E> got(std::size_t(M) * N);
  bool guards = true;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < row; ++j) {
      const E x = all[std::size_t(i) * row + j];
      if (j >= guard && j < guard + N)
        got[std::size_t(i) * N + (j - guard)] = x;
      else
        guards = guards && std::isnan(check::value(x));
    }
  check::close(name, ref, got, 1e-2);
  check::report(std::string(name) + "_guards", guards, "an element outside the view was written");
}

int main() {
  using T::bf16, T::f16;
  // 8 x 7 tiles, the last row and column of tiles partial.
  run_bs_gemm<bf16, false>("bulk_store_bf16_launch_grid", 1000, 776, 304, 8, 0, 1);
  // 14 x 11 = 154 tiles: more than the SMs, so that blocks store several.
  run_bs_gemm<f16, true>("bulk_store_f16_persistent_154_tiles", 1700, 1304, 104, 16, 0, 1);
  run_bs_gemm<bf16, true>("bulk_store_bf16_one_tile", 100, 72, 200, 8, 0, 1);
  // From the kernel's own shared tile.
  run_bs_gemm<bf16, false, true>("bulk_store_own_tile_launch_grid", 900, 392, 264, 8, 0, 1);
  run_bs_gemm<f16, true, true>("bulk_store_own_tile_persistent_154_tiles", 1700, 1304, 104, 8, 0, 1);
  // Rows of N + 2 guard + 3 elements: no tensor map describes C; the entry runs without it,
  // on the launch's grid and on a persistent one (from a fragment and from its own tile).
  run_bs_gemm<bf16, false>("bulk_store_unaligned_output", 300, 264, 104, 8, 3, 2);
  run_bs_gemm<f16, true, true>("bulk_store_unaligned_output_persistent", 1700, 1304, 104, 8, 3, 2);
  // persistent.cpp's kernels (f32 outputs, through f32 tiles).
  run_gemm<bf16>("bulk_store_f32_persistent_154_tiles", 1700, 1304, 104,
                 [](auto &a, auto &b, auto &c) { p_gemm<bf16, 3>(a, b, c); });
  run_gemm<bf16>(
      "bulk_store_f32_no_iteration", 1000, 2296, 64, [](auto &a, auto &b, auto &c) { p_gemm<bf16, 2, 0, 1>(a, b, c); },
      0, 64);
  run_attention<2, true>("bulk_store_attention_causal_160_tiles", 40, 500, 300);
  run_attention<3, false, 0, false>("bulk_store_attention_launch_grid_full", 4, 700, 690);
  run_attention<2, true>("bulk_store_attention_unaligned_rows", 20, 300, 260, 3);
  return check::result();
}
