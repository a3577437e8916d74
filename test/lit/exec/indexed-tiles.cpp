// Tiles whose rows a tensor names, in pipelined loops: a block-sparse product over the key
// blocks an index list gives (`const int kb = Index(qb, i)`, prefetched on the GPU: the
// copies of a later iteration read its entry of the list), the same over a mask of key
// blocks (the loop's body under `if (Mask(qb, kb))`), and the list's count read from a
// tensor; with lists that repeat blocks, skip blocks, name the last partial block, and are
// empty; on sizes that divide no tile size, outputs poisoned.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS index_list
// CHECK: PASS mask
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

/// O(qb) = the sum over i < Count(qb) of Q's tile qb times K's tile Index(qb, i), transposed.
[[tile::kernel]] void index_list(T::tensor<const T::f16, 2> Q, T::tensor<const T::f16, 2> K,
                                 T::tensor<const int, 2> Index, T::tensor<const int, 1> Count,
                                 T::tensor<float, 2> O) {
  auto [qb] = T::grid(T::ceildiv(Q.size(0), 64));
  T::shared<T::f16, 64, 64> Qs;
  T::shared<T::f16, 64, 64> Ks;
  T::fragment<float, 64, 64> acc;
  T::copy(Q.at(qb * 64, 0), Qs);
  T::clear(acc);
  for (int i : T::pipelined(Count(qb), T::stages(3))) {
    const int kb = Index(qb, i);
    T::copy(K.at(kb * 64, 0), Ks);
    T::gemm(Qs, Ks, acc, {.transpose_b = true});
  }
  T::copy(acc, O.at(qb * 64, 0));
}

/// The same over the key blocks kb with Mask(qb, kb) != 0.
[[tile::kernel]] void masked(T::tensor<const T::f16, 2> Q, T::tensor<const T::f16, 2> K,
                             T::tensor<const std::int8_t, 2> Mask, T::tensor<float, 2> O) {
  auto [qb] = T::grid(T::ceildiv(Q.size(0), 64));
  T::shared<T::f16, 64, 64> Qs;
  T::shared<T::f16, 64, 64> Ks;
  T::fragment<float, 64, 64> acc;
  T::copy(Q.at(qb * 64, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(T::ceildiv(K.size(0), 64), T::stages(3))) {
    if (Mask(qb, kb) != 0) {
      T::copy(K.at(kb * 64, 0), Ks);
      T::gemm(Qs, Ks, acc, {.transpose_b = true});
    }
  }
  T::copy(acc, O.at(qb * 64, 0));
}

int main() {
  const int m = 200, n = 300, d = 56; // 4 query blocks (the last partial), 5 key blocks; rows of 112 bytes (tensor maps take them)
  const int QB = (m + 63) / 64, KB = (n + 63) / 64, L = 6;
  auto q = check::random<T::f16>(std::size_t(m) * d);
  auto k = check::random<T::f16>(std::size_t(n) * d);
  auto Q = check::upload(q, {m, d});
  auto K = check::upload(k, {n, d});
  // Lists: block 3 twice and the last partial block; nothing; every block; one block.
  const std::vector<std::vector<int>> lists{{3, 0, 3, 4}, {}, {0, 1, 2, 3, 4}, {2}};
  std::vector<int> index(QB * L, -1), count(QB);
  std::vector<std::int8_t> mask(QB * KB, 0);
  for (int b = 0; b < QB; ++b) {
    count[b] = int(lists[b].size());
    for (int i = 0; i < count[b]; ++i) {
      index[b * L + i] = lists[b][i];
      mask[b * KB + lists[b][i]] = 1;
    }
  }
  // acc(r, c) for query row r (block r / 64) and column c of a key block kb: Q(r) . K(kb * 64 + c).
  auto product = [&](int r, int kb, int c) {
    double s = 0;
    if (kb * 64 + c >= n)
      return s;
    for (int p = 0; p < d; ++p)
      s += check::value(q[std::size_t(r) * d + p]) * check::value(k[std::size_t(kb * 64 + c) * d + p]);
    return s;
  };
  {
    auto Index = check::upload(index, {QB, L});
    auto Count = check::upload(count, {QB});
    auto O = check::upload(check::poisoned<float>(m * 64), {m, 64});
    index_list(Q, K, Index, Count, O);
    std::vector<double> ref(m * 64, 0.0);
    for (int r = 0; r < m; ++r)
      for (int kb : lists[r / 64])
        for (int c = 0; c < 64; ++c)
          ref[r * 64 + c] += product(r, kb, c);
    check::close("index_list", ref, O.to_vector(), 1e-3);
  }
  {
    auto Mask = check::upload(mask, {QB, KB});
    auto O = check::upload(check::poisoned<float>(m * 64), {m, 64});
    masked(Q, K, Mask, O);
    std::vector<double> ref(m * 64, 0.0);
    for (int r = 0; r < m; ++r)
      for (int kb = 0; kb < KB; ++kb)
        if (mask[(r / 64) * KB + kb])
          for (int c = 0; c < 64; ++c)
            ref[r * 64 + c] += product(r, kb, c);
    check::close("mask", ref, O.to_vector(), 1e-3);
  }
  return check::result();
}
