// The attention kernel of examples/flash_attention.cpp (see there), in a header of its own
// so that bench/tune_gpu.cpp can time it at other tile shapes.
#pragma once

#include <tile/tile.h>

namespace flash {

namespace T = tile;

template <int D, bool CAUSAL, int BM = 64, int BN = 64, int NT = 128, int STAGES = 2, bool LONGEST_FIRST = true,
          bool WARP_SPECIALIZE = true, bool PERSISTENT = false>
[[tile::kernel]] void flash_attention(T::tensor<const T::bf16, 4> Q, T::tensor<const T::bf16, 4> K,
                                      T::tensor<const T::bf16, 4> V, T::tensor<T::bf16, 4> O, float scale) {
  const int H = Q.size(1), SQ = Q.size(2), HKV = K.size(1), SK = K.size(2);
  // A positive scale: the maximum of the unscaled scores is then the scaled maximum.
  T::expect(scale > 0, "flash_attention needs a positive scale");
  auto [bx, by, bz] = T::grid(T::ceildiv(SQ, BM), H, Q.size(0), T::threads(NT));
  // On sm_90a the compiler gives the loop a producer warpgroup moving K and V by bulk
  // tensor copies, and with 3 stages runs each P V gemm on into the next iteration, while
  // that iteration's softmax does; bench/tune_gpu.cpp also times it without.
  if constexpr (!WARP_SPECIALIZE)
    T::warp_specialize(false);
  // A persistent grid: a block an SM, each taking query blocks in turn (in the order above),
  // its producer loading the next one's Q, K and V while its consumers store the last O.
  if constexpr (PERSISTENT)
    T::persistent();
  const int hk = by / (H / HKV);
  // Causal: the query block with the most key blocks takes the grid's first block index
  // (the GPU starts blocks in index order), so that the short ones fill the last wave.
  const int qb = CAUSAL && LONGEST_FIRST ? T::ceildiv(SQ, BM) - 1 - bx : bx;
  T::shared<T::bf16, BM, D> Qs;
  T::shared<T::bf16, BN, D> Ks, Vs;
  T::fragment<float, BM, BN> s;
  T::fragment<T::bf16, BM, BN> p;
  T::fragment<float, BM, D> acc;
  T::fragment<float, BM> m, m_old, l, row_sum, rescale;
  T::copy(Q.at(bz, by, qb * BM, 0), Qs);
  T::clear(acc);
  T::clear(l);
  T::fill(m, -T::infinity<float>());
  const float scale_log2 = scale * 1.4426950408889634f; // exp(x) = exp2(x log2 e)
  // Causal: key blocks up to the diagonal of the last query row of this block.
  const int blocks = CAUSAL ? T::min(T::ceildiv(SK, BN), T::ceildiv((qb + 1) * BM, BN)) : T::ceildiv(SK, BN);
  for (int kb : T::pipelined(blocks, T::stages(STAGES))) {
    T::copy(K.at(bz, hk, kb * BN, 0), Ks);
    T::copy(V.at(bz, hk, kb * BN, 0), Vs);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    // The mask only where the block crosses the end of the keys or the diagonal (a
    // uniform branch).
    if (kb * BN + BN > SK || (CAUSAL && kb * BN + BN - 1 > qb * BM)) {
      for (auto [i, j] : T::parallel(BM, BN)) {
        const bool masked = kb * BN + j >= SK || (CAUSAL && kb * BN + j > qb * BM + i);
        if (masked)
          s(i, j) = -T::infinity<float>();
      }
    }
    T::copy(m, m_old);
    T::reduce_max(s, m, 1, false); // m = max(m_old, the block's row maxima)
    for (int i : T::parallel(BM))
      rescale(i) = T::exp2((m_old(i) - m(i)) * scale_log2);
    // The output's rescaling first, far from the gemm that reads it.
    for (auto [i, j] : T::parallel(BM, D))
      acc(i, j) = acc(i, j) * rescale(i);
    // One FFMA and one exp2 a score.
    for (auto [i, j] : T::parallel(BM, BN))
      s(i, j) = T::exp2(s(i, j) * scale_log2 - m(i) * scale_log2);
    T::reduce_sum(s, row_sum, 1);
    for (int i : T::parallel(BM))
      l(i) = l(i) * rescale(i) + row_sum(i);
    T::copy(s, p);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  for (auto [i, j] : T::parallel(BM, D))
    acc(i, j) = acc(i, j) / l(i);
  T::copy(acc, O.at(bz, by, qb * BM, 0));
}

} // namespace flash
