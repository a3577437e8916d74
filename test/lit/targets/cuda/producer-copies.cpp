// warp-specialize's producer copies on sm_90a: besides wgmma's swizzled operands, the
// producer moves one-dimensional tiles (a key block's log-sum-exp) and tiles in dense rows
// (no swizzle: one box of the whole tile, its stages on 128-byte boundaries, to which a
// one-dimensional tile's stages are padded), and copies
// written after other statements of the body where no statement before them touches their
// tile and the producer can compute their offsets (they are issued with the iteration's
// first ones). A copy the copy engine cannot make refuses the loop where it starts the body,
// and stays with the consumers where it comes later; each refusal says which rule (IR: multicast=off; pair-blocks=off).
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks %s 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARKS
// REMARKS-DAG: producer-copies.cpp:76:3: remark: [cuda:sm_90a] pipelined loop: 2 stages, the copies into 'Ks', 'lse_s', 'w_s' are bulk tensor copies (TMA, 128-byte swizzle; 'lse_s', 'w_s' in dense rows) by a producer warpgroup of 128 threads
// REMARKS-DAG: producer-copies.cpp:96:3: remark: [cuda:sm_90a] pipelined loop: 2 stages, the copies into 'Ks', 'lse_s', 'Vs' are bulk tensor copies (TMA, 128-byte swizzle; 'lse_s' in dense rows)
// REMARKS-DAG: producer-copies.cpp:117:3: remark: [cuda:sm_90a] pipelined loop: 2 stages, the copies into 'Ks' are bulk tensor copies (TMA, 128-byte swizzle)
// REMARKS-DAG: producer-copies.cpp:140:3: remark: [cuda:sm_90a] pipelined loop not warp-specialized: the rows of the tile 'narrow' are 8 bytes (a bulk copy's box takes rows of a multiple of 16 bytes, at most 256 elements)
// REMARKS-DAG: producer-copies.cpp:159:3: remark: [cuda:sm_90a] pipelined loop: 2 stages, the copies into 'Ks', 'small', 'tiny' are bulk tensor copies (TMA, 128-byte swizzle; 'small', 'tiny' in stages padded to multiples of 128 bytes) by a producer warpgroup of 128 threads
// A box may start only on a 16-byte boundary of the tensor's rows (elsewhere the copy engine
// faults: an illegal instruction on the H100); an offset not known to be one refuses.
// REMARKS-DAG: producer-copies.cpp:175:3: remark: [cuda:sm_90a] pipelined loop not warp-specialized: the copy into 'Ks' starts at a column not known to be a multiple of 16 bytes into the tensor's rows (a bulk copy's box starts on one)
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-multicast=off -fplugin-arg-tile-print-after=warp-specialize %s 2>&1 \
// RUN:   | FileCheck %s
// A one-dimensional tile: a box of 1 x 64 of a [B, S] tensor in no swizzle, each stage 256
// bytes on; a tile of dense rows of 8 floats: one box of 64 x 8.
// CHECK-LABEL: kernel one_dimensional(
// CHECK: tensor_map1(lse, box 1x64, swizzle 0) tensor_map2(w, box 64x8, swizzle 0)
// CHECK: shared lse_s: f32[2, 64]
// CHECK-NOT: rows of
// CHECK: shared w_s: f32[2, 64, 8]
// CHECK: bulk_copy(Ks + it % 2 * 4096 <- tensor_map0[
// CHECK-NEXT: bulk_copy(lse_s + it % 2 * 64 <- tensor_map1[b, it * 64], barriers[it % 2])
// CHECK-NEXT: bulk_copy(w_s + it % 2 * 512 <- tensor_map2[it * 64, 0], barriers[it % 2])
// The consumers read the stage the barrier hands them.
// CHECK: mbarrier_wait(barriers[it.1 % 2], parity it.1 / 2 % 2)
// CHECK: lse_s[it.1 % 2,
// Copies written after the first gemm: issued by the producer with K's, before any gemm.
// CHECK-LABEL: kernel hoisted(
// CHECK: mbarrier_arrive_expect_tx(barriers[it % 2], bytes 16640)
// CHECK-NEXT: bulk_copy(Ks
// CHECK-NEXT: bulk_copy(lse_s
// CHECK-NEXT: bulk_copy(Vs
// CHECK: registers_up_to(
// CHECK-NOT: copy(lse[
// CHECK-NOT: copy(V[
// CHECK: gemm(Qs
// A copy after a statement that reads its tile, and one whose offset the body computes,
// stay with the consumers.
// CHECK-LABEL: kernel kept(
// CHECK: mbarrier_arrive_expect_tx(barriers[it % 2], bytes 8192)
// CHECK-NEXT: bulk_copy(Ks
// CHECK-NEXT: }
// CHECK: copy(lse[b, kb * 64 +: 64], lse_s)
// CHECK: copy(V[row +: 64, 0 +: 64], Vs)
// One-dimensional tiles of 64 and 16 bytes, each stage 128 bytes on.
// CHECK-LABEL: kernel small_tile(
// CHECK-NEXT: tensor_map1(w, box 16, swizzle 0) tensor_map2(w, box 4, swizzle 0)
// CHECK: shared small: f32[2, 16] rows of 32
// CHECK: shared tiny: f32[2, 4] rows of 32
// CHECK: mbarrier_arrive_expect_tx(barriers[it % 2], bytes 8272)
// CHECK: bulk_copy(small + it % 2 * 32 <- tensor_map1[it * 16], barriers[it % 2])
// CHECK-NEXT: bulk_copy(tiny + it % 2 * 32 <- tensor_map2[it * 4], barriers[it % 2])
// CHECK: small[it.1 % 2, j % 16] * tiny[it.1 % 2, j % 4]

#include <tile/tile.h>
namespace T = tile;
using T::bf16;

[[tile::kernel]] void one_dimensional(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K,
                                      T::tensor<const float, 2> lse, T::tensor<const float, 2> w,
                                      T::tensor<float, 2> O) {
  auto [bx, b] = T::grid(T::ceildiv(Q.size(0), 64), lse.size(0), T::threads(128));
  T::shared<bf16, 64, 64> Qs, Ks;
  T::shared<float, 64> lse_s;
  T::shared<float, 64, 8> w_s;
  T::fragment<float, 64, 64> s, acc;
  T::copy(Q.at(bx * 64, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(T::ceildiv(K.size(0), 64), T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(lse.at(b, kb * 64), lse_s);
    T::copy(w.at(kb * 64, 0), w_s);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true});
    for (auto [i, j] : T::parallel(64, 64))
      acc(i, j) += s(i, j) * w_s(j, 3) - lse_s(j);
  }
  T::copy(acc, O.at(bx * 64, 0));
}

[[tile::kernel]] void hoisted(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K, T::tensor<const bf16, 2> V,
                              T::tensor<const float, 2> lse, T::tensor<float, 2> O) {
  auto [bx, b] = T::grid(T::ceildiv(Q.size(0), 64), lse.size(0), T::threads(128));
  T::shared<bf16, 64, 64> Qs, Ks, Vs;
  T::shared<float, 64> lse_s;
  T::fragment<float, 64, 64> s, acc;
  T::fragment<bf16, 64, 64> p;
  T::copy(Q.at(bx * 64, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(T::ceildiv(K.size(0), 64), T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    T::copy(lse.at(b, kb * 64), lse_s);
    for (auto [i, j] : T::parallel(64, 64))
      p(i, j) = s(i, j) - lse_s(j);
    T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(bx * 64, 0));
}

[[tile::kernel]] void kept(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K, T::tensor<const bf16, 2> V,
                           T::tensor<const float, 2> lse, T::tensor<float, 2> O) {
  auto [bx, b] = T::grid(T::ceildiv(Q.size(0), 64), lse.size(0), T::threads(128));
  T::shared<bf16, 64, 64> Qs, Ks, Vs;
  T::shared<float, 64> lse_s;
  T::fragment<float, 64, 64> s, acc;
  T::fragment<bf16, 64, 64> p;
  T::copy(Q.at(bx * 64, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(T::ceildiv(K.size(0), 64), T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    for (int j : T::parallel(64))
      lse_s(j) = 0.0f;
    T::copy(lse.at(b, kb * 64), lse_s); // (lse_s written before: the consumers copy)
    for (auto [i, j] : T::parallel(64, 64))
      p(i, j) = s(i, j) - lse_s(j);
    const int row = kb * 64 + 0 * bx;
    T::copy(V.at(row, 0), Vs); // (at an offset the body computes)
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(bx * 64, 0));
}

[[tile::kernel]] void narrow_rows(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K,
                                  T::tensor<const float, 2> w, T::tensor<float, 2> O) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 64), T::threads(128));
  T::shared<bf16, 64, 64> Qs, Ks;
  T::shared<float, 64, 2> narrow;
  T::fragment<float, 64, 64> s, acc;
  T::copy(Q.at(bx * 64, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(T::ceildiv(K.size(0), 64), T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(w.at(kb * 64, 0), narrow);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true});
    for (auto [i, j] : T::parallel(64, 64))
      acc(i, j) += s(i, j) * narrow(j, 1);
  }
  T::copy(acc, O.at(bx * 64, 0));
}

[[tile::kernel]] void small_tile(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K,
                                 T::tensor<const float, 1> w, T::tensor<float, 2> O) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 64), T::threads(128));
  T::shared<bf16, 64, 64> Qs, Ks;
  T::shared<float, 16> small;
  T::shared<float, 4> tiny;
  T::fragment<float, 64, 64> s, acc;
  T::copy(Q.at(bx * 64, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(T::ceildiv(K.size(0), 64), T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(w.at(kb * 16), small);
    T::copy(w.at(kb * 4), tiny);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true});
    for (auto [i, j] : T::parallel(64, 64))
      acc(i, j) += s(i, j) * small(j % 16) * tiny(j % 4);
  }
  T::copy(acc, O.at(bx * 64, 0));
}

[[tile::kernel]] void odd_column(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K, T::tensor<float, 2> O) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 64), T::threads(128));
  T::shared<bf16, 64, 64> Qs, Ks;
  T::fragment<float, 64, 64> s;
  T::copy(Q.at(bx * 64, 0), Qs);
  for (int kb : T::pipelined(T::ceildiv(K.size(0), 64), T::stages(2))) {
    T::copy(K.at(kb * 64, 4), Ks); // 8 bytes into the rows
    T::gemm(Qs, Ks, s, {.transpose_b = true});
  }
  T::copy(s, O.at(bx * 64, 0));
}
