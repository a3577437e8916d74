// The kernels of examples/flash_decoding.cpp (see there), in a header of their own so that
// bench/tune_gpu.cpp can time them at other tile shapes.
#pragma once

#include <tile/tile.h>

namespace decoding {

namespace T = tile;

constexpr int D = 128;

/// Partial attention of the query rows of KV head `by` (its group, padded to G rows: rows
/// past the group are other heads', computed and not written) over keys [bx * chunk,
/// (bx + 1) * chunk) of batch bz. Out: [B, splits, H, D] (the output normalized over the
/// chunk), Lse: [B, splits, H] (log2 of the chunk's sum of exp2, plus its scaled maximum).
/// Four warps side by side over the key block (full_col: 16 rows are one row of atoms): P
/// then goes from the first gemm's layout to the second's through shared memory (the
/// remark says so), and still this beats one warp with everything in registers, which
/// issues the copies of a whole block alone (H200: 3760 against 3255 GB/s, bench/NOTES.md).
template <int G = 16, int BN = 64, int NT = 128, int STAGES = 2>
[[tile::kernel]] void decode_chunk(T::tensor<const T::bf16, 3> Q, T::tensor<const T::bf16, 4> K,
                                   T::tensor<const T::bf16, 4> V, T::tensor<float, 4> Out,
                                   T::tensor<float, 3> Lse, float scale, int chunk) {
  const int H = Q.size(1), HKV = K.size(1), S = K.size(2), splits = Out.size(1);
  T::expect(scale > 0, "flash_decoding needs a positive scale");
  T::expect(H % HKV == 0 && H / HKV <= G, "flash_decoding takes at most G query heads per KV head");
  auto [bx, by, bz] = T::grid(splits, HKV, Q.size(0), T::threads(NT));
  const int group = H / HKV;
  T::shared<T::bf16, G, D> Qs;
  T::shared<T::bf16, BN, D> Ks, Vs;
  T::fragment<float, G, BN> s;
  T::fragment<T::bf16, G, BN> p;
  T::fragment<float, G, D> acc;
  T::fragment<float, G> m, m_old, l, row_sum, rescale;
  T::copy(Q.at(bz, by * group, 0), Qs);
  T::clear(acc);
  T::clear(l);
  T::fill(m, -T::infinity<float>());
  const float scale_log2 = scale * 1.4426950408889634f;
  const int begin = bx * chunk, end = T::min(begin + chunk, S);
  for (int kb : T::pipelined(T::ceildiv(end - begin, BN), T::stages(STAGES))) {
    const int k0 = begin + kb * BN;
    T::copy(K.at(bz, by, k0, 0), Ks);
    T::copy(V.at(bz, by, k0, 0), Vs);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_col});
    if (k0 + BN > end) { // the chunk's last block: keys past it are another block's
      for (auto [i, j] : T::parallel(G, BN))
        if (k0 + j >= end)
          s(i, j) = -T::infinity<float>();
    }
    T::copy(m, m_old);
    T::reduce_max(s, m, 1, false);
    for (int i : T::parallel(G))
      rescale(i) = T::exp2((m_old(i) - m(i)) * scale_log2);
    for (auto [i, j] : T::parallel(G, D))
      acc(i, j) = acc(i, j) * rescale(i);
    for (auto [i, j] : T::parallel(G, BN))
      s(i, j) = T::exp2(s(i, j) * scale_log2 - m(i) * scale_log2);
    T::reduce_sum(s, row_sum, 1);
    for (int i : T::parallel(G))
      l(i) = l(i) * rescale(i) + row_sum(i);
    T::copy(s, p);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_col});
  }
  for (auto [i, j] : T::parallel(G, D))
    if (i < group)
      Out(bz, bx, by * group + i, j) = acc(i, j) / l(i);
  for (int i : T::parallel(G))
    if (i < group)
      Lse(bz, bx, by * group + i) = m(i) * scale_log2 + T::log2(l(i));
}

/// O[b, h] = sum over chunks c of w_c Out[b, c, h] / sum w_c, w_c = exp2(Lse[b, c, h] - max).
/// One block per (head, batch), at most NS chunks; each of the D columns reduces the
/// chunks' weights itself (D times the same few values: the fragments stay in registers).
template <int NS = 32, int NT = 128>
[[tile::kernel]] void combine(T::tensor<const float, 4> Out, T::tensor<const float, 3> Lse, T::tensor<T::bf16, 3> O) {
  const int splits = Out.size(1);
  T::expect(splits <= NS, "flash_decoding combines at most NS chunks");
  auto [bx, by] = T::grid(O.size(1), O.size(0), T::threads(NT));
  T::fragment<float, D, NS> w, part;
  T::fragment<float, D> top, total, o;
  for (auto [j, c] : T::parallel(D, NS))
    w(j, c) = c < splits ? Lse(by, c, bx) : -T::infinity<float>();
  T::reduce_max(w, top, 1);
  for (auto [j, c] : T::parallel(D, NS)) {
    w(j, c) = T::exp2(w(j, c) - top(j));
    part(j, c) = c < splits ? Out(by, c, bx, j) * w(j, c) : 0.0f;
  }
  T::reduce_sum(w, total, 1);
  T::reduce_sum(part, o, 1);
  for (int j : T::parallel(D))
    O(by, bx, j) = o(j) / total(j);
}

} // namespace decoding
