// C = relu(A B) in bf16 (or fp16) with float accumulation: the kernel of API.md, with the
// element type as a template parameter, and block rasterization (panels of 8 rows of
// blocks: 8192^3 on the H200 went 523 -> 572 TFLOP/s, bench/NOTES.md session 20).
//   gemm [M N K [bf16|f16]]      (default 1000 1000 1000 bf16: no size divides a tile)
#include "gemm.h"
#include "gemm_check.h"

int main(int argc, char **argv) {
  return example::gemm_main("gemm", argc, argv, []<class E>(int M, int N, int K, const char *type_name) {
    // AMD GPUs (64 KiB of LDS a block): 128x128 tiles, K steps of 32, two stages (35 KiB;
    // compiled for gfx90a, not yet run on one). Elsewhere the H200's shapes above.
    const bool amd = T::current_device().backend == T::backend::hip;
    return example::check_gemm<E>("gemm", M, N, K, type_name, [&](auto &A, auto &B, auto &C) {
      if (amd)
        matmul_relu<E, 128, 128, 32, 256, 2>(A, B, C);
      else
        matmul_relu<E>(A, B, C);
    });
  });
}
