// Ping-pong (pingpong=on): on sm_90a the two consumer warpgroups of a warp-specialized loop
// of two gemms take turns at the tensor cores, each one's second gemm and next first gemm
// after the other's. The attention-shaped kernels of persistent.cpp, on persistent grids
// (each block's turns continuing from tile to tile) and on the launch's grid, with loops of
// 1 to 11 iterations that differ from tile to tile; the GEMMs there have one gemm and take
// no turns. On the CPU the kernels run as they are.
// RUN: %tile-cxx %s -O2 -fplugin-arg-tile-pingpong=on -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS pingpong_causal_160_tiles
// CHECK: PASS pingpong_causal_swizzle2
// CHECK: PASS pingpong_full_500_tiles
// CHECK: PASS pingpong_unaligned_rows
// CHECK: PASS pingpong_launch_grid_causal
// CHECK: PASS pingpong_launch_grid_full
// CHECK: PASS pingpong_launch_grid_one_key
// CHECK: PASS pingpong_gemm_154_tiles
// CHECK-NOT: FAIL

#define PERSISTENT_NO_MAIN
#include "persistent.cpp"

int main() {
  using T::bf16;
  run_attention<2, true>("pingpong_causal_160_tiles", 40, 500, 300);
  run_attention<3, true, 2>("pingpong_causal_swizzle2", 36, 600, 650);
  run_attention<2, false>("pingpong_full_500_tiles", 250, 200, 64);
  run_attention<2, true>("pingpong_unaligned_rows", 20, 300, 260, 3);
  run_attention<2, true, 0, false>("pingpong_launch_grid_causal", 6, 1000, 700);
  run_attention<3, false, 0, false>("pingpong_launch_grid_full", 4, 700, 690);
  run_attention<2, false, 0, false>("pingpong_launch_grid_one_key", 4, 300, 1);
  run_gemm<bf16>("pingpong_gemm_154_tiles", 1700, 1304, 104, [](auto &a, auto &b, auto &c) { p_gemm<bf16, 3>(a, b, c); });
  return check::result();
}
