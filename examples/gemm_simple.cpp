// C = relu(A B) in bf16 (or fp16) with float accumulation, written as the language
// reference's first program writes it (docs/language.md): tiles of 128 x 128, K steps of 32,
// 128 threads, a pipelined loop of 3 stages, nothing else asked of the compiler. The
// compiler chooses the rest: on sm_90a wgmma (two m64 instructions for the warpgroup's 128
// rows, K-major a in the 64-byte swizzle), a producer warpgroup with bulk tensor copies,
// and blocks in pairs that load A's tile once for both, with 6 stages, where the grid has more
// blocks than the SMs hold at once, else two blocks an SM (-fplugin-arg-tile-remarks says so).
//   gemm_simple [M N K [bf16|f16]]      (default 1000 1000 1000 bf16: no size divides a tile)
#include "gemm_check.h"

namespace T = tile;

template <class E, int BM = 128, int BN = 128, int BK = 32>
[[tile::kernel]] void matmul_relu_simple(T::tensor<const E, 2> A, // [M, K]
                                         T::tensor<const E, 2> B, // [K, N]
                                         T::tensor<E, 2> C) {     // [M, N]
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM), T::threads(128));

  T::shared<E, BM, BK> As;
  T::shared<E, BK, BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, BK), T::stages(3))) {
    T::copy(A.at(by * BM, k * BK), As);
    T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(As, Bs, acc);
  }
  for (auto [i, j] : T::parallel(BM, BN))
    acc(i, j) = T::max(acc(i, j), 0.0f);
  T::copy(acc, C.at(by * BM, bx * BN));
}

int main(int argc, char **argv) {
  return example::gemm_main("gemm_simple", argc, argv, []<class E>(int M, int N, int K, const char *type_name) {
    return example::check_gemm<E>("gemm_simple", M, N, K, type_name,
                                  [](auto &A, auto &B, auto &C) { matmul_relu_simple<E>(A, B, C); });
  });
}
