// A hand-written warp-specialized GEMM (bench/NOTES.md, issue 9, session 21): bf16 C =
// relu(A[M, K] B[K, N]), 128x256x64 tiles, two consumer warpgroups and a producer warpgroup
// whose one thread issues TMA loads into S stages handed over by full and empty mbarriers,
// setmaxnreg 40/232. Not part of the product: the reference the compiler's warp-specialize
// output is compared with on the GPU (same helpers, tile_cuda.h). Build (nvcc only):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I targets/cuda/include -I targets/common/include \
//        -I include/tile/detail bench/proto/ws_gemm.cu -o ws_gemm
//   ./ws_gemm [input scale [timed launches]]   (JSON lines: variant, size, ms, TFLOP/s, error)
#include "tile_cuda.h"
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cmath>
using tile_cuda::bf16, tile_cuda::gmma_desc, tile_cuda::wgmma_fence, tile_cuda::wgmma_commit, tile_cuda::wgmma_wait,
    tile_cuda::pin_register, tile_cuda::mbarrier_init, tile_cuda::mbarrier_wait, tile_cuda::mbarrier_arrive,
    tile_cuda::mbarrier_arrive_expect_tx, tile_cuda::bulk_tensor_load, tile_cuda::setmaxnreg_inc,
    tile_cuda::setmaxnreg_dec;

__device__ __forceinline__ void wgmma256(float (&acc)[128], uint64_t da, uint64_t db) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\nwgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 1;\n}\n"
    : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]), "+f"(acc[30]), "+f"(acc[31]), "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]), "+f"(acc[35]), "+f"(acc[36]), "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]), "+f"(acc[40]), "+f"(acc[41]), "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]), "+f"(acc[45]), "+f"(acc[46]), "+f"(acc[47]), "+f"(acc[48]), "+f"(acc[49]), "+f"(acc[50]), "+f"(acc[51]), "+f"(acc[52]), "+f"(acc[53]), "+f"(acc[54]), "+f"(acc[55]), "+f"(acc[56]), "+f"(acc[57]), "+f"(acc[58]), "+f"(acc[59]), "+f"(acc[60]), "+f"(acc[61]), "+f"(acc[62]), "+f"(acc[63]), "+f"(acc[64]), "+f"(acc[65]), "+f"(acc[66]), "+f"(acc[67]), "+f"(acc[68]), "+f"(acc[69]), "+f"(acc[70]), "+f"(acc[71]), "+f"(acc[72]), "+f"(acc[73]), "+f"(acc[74]), "+f"(acc[75]), "+f"(acc[76]), "+f"(acc[77]), "+f"(acc[78]), "+f"(acc[79]), "+f"(acc[80]), "+f"(acc[81]), "+f"(acc[82]), "+f"(acc[83]), "+f"(acc[84]), "+f"(acc[85]), "+f"(acc[86]), "+f"(acc[87]), "+f"(acc[88]), "+f"(acc[89]), "+f"(acc[90]), "+f"(acc[91]), "+f"(acc[92]), "+f"(acc[93]), "+f"(acc[94]), "+f"(acc[95]), "+f"(acc[96]), "+f"(acc[97]), "+f"(acc[98]), "+f"(acc[99]), "+f"(acc[100]), "+f"(acc[101]), "+f"(acc[102]), "+f"(acc[103]), "+f"(acc[104]), "+f"(acc[105]), "+f"(acc[106]), "+f"(acc[107]), "+f"(acc[108]), "+f"(acc[109]), "+f"(acc[110]), "+f"(acc[111]), "+f"(acc[112]), "+f"(acc[113]), "+f"(acc[114]), "+f"(acc[115]), "+f"(acc[116]), "+f"(acc[117]), "+f"(acc[118]), "+f"(acc[119]), "+f"(acc[120]), "+f"(acc[121]), "+f"(acc[122]), "+f"(acc[123]), "+f"(acc[124]), "+f"(acc[125]), "+f"(acc[126]), "+f"(acc[127]) : "l"(da), "l"(db), "r"(1));
}

// BM 128 BN 256 BK 64; 2 consumer warpgroups (tid < 256) + producer warpgroup (tid >= 256).
template <int S, int WAIT, bool REALLOC, bool PERSIST>
__global__ void __launch_bounds__(384, 1) ws_gemm(const __grid_constant__ CUtensorMap tA, const __grid_constant__ CUtensorMap tB,
                                                   bf16 *C, int M, int N, int K, int panel) {
  extern __shared__ __align__(1024) unsigned char smem[];
  bf16 *As = (bf16 *)smem, *Bs = (bf16 *)(smem + S * 16384);
  uint64_t *full = (uint64_t *)(smem + S * 49152), *empty = full + S;
  const int tid = threadIdx.x;
  const int nk = (K + 63) / 64;
  const int gx = (N + 255) / 256, gy = (M + 127) / 128, tiles = gx * gy;
  if (tid == 0) {
    for (int s = 0; s < S; ++s) { mbarrier_init(&full[s], 1); mbarrier_init(&empty[s], 256); }
  }
  __syncthreads();
  auto tile_xy = [&](int t, int &bx, int &by) {
    // panels of `panel` rows, as block_index
    const int panel_blocks = panel * gx;
    const int p = t / panel_blocks, off = t % panel_blocks;
    const int rows = (p + 1) * panel <= gy ? panel : gy - p * panel;
    const int col = off / rows;
    bx = (p & 1) ? gx - 1 - col : col;
    by = p * panel + off % rows;
  };
  const int first = PERSIST ? blockIdx.x : blockIdx.y * gridDim.x + blockIdx.x;
  const int stride = PERSIST ? gridDim.x : tiles;
  if (tid >= 256) {
    if (REALLOC) setmaxnreg_dec<40>();
    if (tid == 256) {
      int g = 0; // global iteration count across tiles
      for (int t = first; t < tiles; t += stride) {
        int bx, by; tile_xy(t, bx, by);
        for (int it = 0; it < nk; ++it, ++g) {
          const int s = g % S;
          if (g >= S) mbarrier_wait(&empty[s], ((g / S) - 1) & 1);
          mbarrier_arrive_expect_tx(&full[s], 49152);
          bulk_tensor_load<2>(As + s * 8192, &tA, &full[s], {it * 64, by * 128});
          #pragma unroll
          for (int j = 0; j < 4; ++j)
            bulk_tensor_load<2>(Bs + s * 16384 + j * 4096, &tB, &full[s], {bx * 256 + j * 64, it * 64});
        }
      }
    }
  } else {
    if (REALLOC) setmaxnreg_inc<232>();
    const int wg = tid / 128;
    int g = 0;
    for (int t = first; t < tiles; t += stride) {
      int bx, by; tile_xy(t, bx, by);
      float acc[128];
      #pragma unroll
      for (int r = 0; r < 128; ++r) acc[r] = 0.f;
      for (int it = 0; it < nk; ++it, ++g) {
        const int s = g % S;
        mbarrier_wait(&full[s], (g / S) & 1);
        wgmma_fence();
        #pragma unroll
        for (int ks = 0; ks < 4; ++ks) {
          const uint64_t da = gmma_desc(As + s * 8192 + wg * 4096 + ks * 16, 16, 1024, 1);
          const uint64_t db = gmma_desc(Bs + s * 16384 + ks * 16 * 64, 8192, 1024, 1);
          wgmma256(acc, da, db);
        }
        wgmma_commit();
        wgmma_wait<WAIT>();
        #pragma unroll
        for (int r = 0; r < 128; ++r) pin_register(acc[r]);
        if (WAIT == 0) mbarrier_arrive(&empty[s]);
        else if (it > 0) mbarrier_arrive(&empty[(g - 1) % S]);
      }
      if (WAIT > 0) {
        wgmma_wait<0>();
        #pragma unroll
        for (int r = 0; r < 128; ++r) pin_register(acc[r]);
        mbarrier_arrive(&empty[(g - 1) % S]);
      }
      // epilogue: relu, bf16, straight from registers
      #pragma unroll
      for (int cs = 0; cs < 32; ++cs)
        #pragma unroll
        for (int vh = 0; vh < 2; ++vh) {
          const int i = by * 128 + tid / 32 * 16 + vh * 8 + tid % 32 / 4, j = bx * 256 + cs * 8 + tid % 4 * 2;
          if (i < M && j + 1 < N) {
            __nv_bfloat162 v = __floats2bfloat162_rn(fmaxf(acc[(cs * 2 + vh) * 2], 0.f), fmaxf(acc[(cs * 2 + vh) * 2 + 1], 0.f));
            *reinterpret_cast<__nv_bfloat162 *>(C + (size_t)i * N + j) = v;
          } else if (i < M && j < N) C[(size_t)i * N + j] = __float2bfloat16(fmaxf(acc[(cs * 2 + vh) * 2], 0.f));
        }
    }
  }
}

__global__ void init(bf16 *p, size_t n, unsigned seed, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed * 97531u; h ^= h >> 13; h *= 0x5bd1e995; h ^= h >> 15;
    p[i] = __float2bfloat16(((h & 0xFFFF) / 65536.0f - 0.5f) * scale);
  }
}
__global__ void ref_rows(const bf16 *A, const bf16 *B, float *R, int M, int N, int K, int step) {
  const int r = blockIdx.y * step, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= M || j >= N) return;
  float s = 0;
  for (int k = 0; k < K; ++k) s += __bfloat162float(A[(size_t)r * K + k]) * __bfloat162float(B[(size_t)k * N + j]);
  R[(size_t)blockIdx.y * N + j] = fmaxf(s, 0.f);
}

typedef CUresult (*Encode)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *, const cuuint64_t *,
                           const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                           CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
static Encode encode;
static CUtensorMap make_map(void *p, uint64_t inner, uint64_t outer, uint32_t box_inner, uint32_t box_outer) {
  CUtensorMap m;
  cuuint64_t dims[2] = {inner, outer}, strides[1] = {inner * 2};
  cuuint32_t box[2] = {box_inner, box_outer}, es[2] = {1, 1};
  CUresult r = encode(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, p, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) { printf("encode failed %d\n", r); exit(1); }
  return m;
}

template <int S, int WAIT, bool REALLOC, bool PERSIST>
void run(const char *name, int M, int N, int K, bf16 *A, bf16 *B, bf16 *C, float *R, int step, int panel, int reps) {
  CUtensorMap tA = make_map(A, K, M, 64, 128), tB = make_map(B, N, K, 64, 64);
  auto kern = ws_gemm<S, WAIT, REALLOC, PERSIST>;
  const int smem = S * 49152 + 2 * S * 8;
  cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  const int gx = (N + 255) / 256, gy = (M + 127) / 128;
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  dim3 grid = PERSIST ? dim3(std::min(sms, gx * gy)) : dim3(gx, gy);
  cudaMemset(C, 0xFF, (size_t)M * N * 2);
  kern<<<grid, 384, smem>>>(tA, tB, C, M, N, K, panel);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) { printf("%s: %s\n", name, cudaGetErrorString(e)); exit(1); }
  // check sampled rows
  std::vector<bf16> c((size_t)M * N); cudaMemcpy(c.data(), C, c.size() * 2, cudaMemcpyDeviceToHost);
  const int rows = (M + step - 1) / step;
  std::vector<float> r((size_t)rows * N); cudaMemcpy(r.data(), R, r.size() * 4, cudaMemcpyDeviceToHost);
  double num = 0, den = 0;
  for (int q = 0; q < rows; ++q) for (int j = 0; j < N; ++j) {
    double d = __bfloat162float(c[(size_t)q * step * N + j]) - r[(size_t)q * N + j];
    num += d * d; den += (double)r[(size_t)q * N + j] * r[(size_t)q * N + j];
  }
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int w = 0; w < 5; ++w) kern<<<grid, 384, smem>>>(tA, tB, C, M, N, K, panel);
  cudaEventRecord(a);
  for (int w = 0; w < reps; ++w) kern<<<grid, 384, smem>>>(tA, tB, C, M, N, K, panel);
  cudaEventRecord(b); cudaEventSynchronize(b);
  float ms; cudaEventElapsedTime(&ms, a, b); ms /= reps;
  printf("{\"proto\": \"%s\", \"size\": \"%dx%dx%d\", \"reps\": %d, \"ms\": %.4f, \"tflops\": %.1f, \"rel_err\": %.2e}\n", name, M, N, K, reps, ms,
         2.0 * M * N * K / ms / 1e9, std::sqrt(num / den));
}

int main(int argc, char **argv) {
  cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", (void **)&encode, cudaEnableDefault, &q);
  int sizes[][3] = {{8192, 8192, 8192}};
  const float scale = argc > 1 ? atof(argv[1]) : 1.0f;
  const int reps = argc > 2 ? atoi(argv[2]) : 20;
  for (auto &sz : sizes) {
    const int M = sz[0], N = sz[1], K = sz[2];
    bf16 *A, *B, *C; float *R;
    cudaMalloc(&A, (size_t)M * K * 2); cudaMalloc(&B, (size_t)K * N * 2); cudaMalloc(&C, (size_t)M * N * 2);
    const int step = M > 5000 ? 97 : 31, rows = (M + step - 1) / step;
    cudaMalloc(&R, (size_t)rows * N * 4);
    init<<<1024, 256>>>(A, (size_t)M * K, 1, scale); init<<<1024, 256>>>(B, (size_t)K * N, 2, scale);
    ref_rows<<<dim3((N + 255) / 256, rows), 256>>>(A, B, R, M, N, K, step);
    run<3, 0, true, false>("s3 wait0 realloc", M, N, K, A, B, C, R, step, 8, reps);
    run<4, 0, true, false>("s4 wait0 realloc", M, N, K, A, B, C, R, step, 8, reps);
    run<4, 1, true, false>("s4 wait1 realloc", M, N, K, A, B, C, R, step, 8, reps);
    cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(R);
  }
}
