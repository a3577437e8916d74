// The GEMM kernel of examples/gemm.cpp (see there), in a header of its own so that
// examples/gemm_autotune.cpp can instantiate it at other tile shapes.
#pragma once

#include <tile/tile.h>

namespace T = tile;

/// C = relu(A B) with float accumulation; E is bf16 or f16. Tiles of BM x BN, K steps of BK,
/// NT threads, S pipeline stages, blocks rasterized in panels of PANEL rows.
template <class E = T::bf16, int BM = 128, int BN = 256, int BK = 64, int NT = 256, int S = 3, int PANEL = 8>
[[tile::kernel]] void matmul_relu(T::tensor<const E, 2> A,   // [M, K]
                                  T::tensor<const E, 2> B,   // [K, N]
                                  T::tensor<E, 2> C) {       // [M, N]
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM), T::threads(NT));
  T::use_swizzle(PANEL); // blocks in panels of PANEL rows, which share their tiles of B in L2

  T::shared<E, BM, BK> As;
  T::shared<E, BK, BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, BK), T::stages(S))) {
    T::copy(A.at(by * BM, k * BK), As);
    T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(As, Bs, acc);
  }
  for (auto [i, j] : T::parallel(BM, BN))
    acc(i, j) = T::max(acc(i, j), 0.0f);
  T::copy(acc, C.at(by * BM, bx * BN));
}
