// The device header's mbarrier and bulk tensor copy helpers (tile_cuda.h, for the TMA path
// of issue 9): a kernel that uses each of them compiles for sm_90a through ptxas, and its PTX
// holds the instructions of targets/cuda/HOPPER-NOTES.md, sections 7 and 8.
// REQUIRES: nvcc
// RUN: rm -rf %t && split-file %s %t
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-cache=%t/cache \
// RUN:   -fplugin-arg-tile-emit-source=%t %t/kernel.cpp -o %t/kernel.o
// RUN: %nvcc -cubin -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I%t %t/use.cu -o %t/use.cubin
// RUN: %nvcc -ptx -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I%t %t/use.cu -o - | FileCheck %s
// CHECK: mbarrier.init.shared::cta.b64
// CHECK: fence.mbarrier_init.release.cluster
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64 _, [{{%r[0-9]+}}], {{%r[0-9]+}};
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: mbarrier.arrive.shared::cta.b64

//--- kernel.cpp
// Any kernel: compiling it leaves the device headers next to its generated source.
#include <tile/tile.h>
namespace T = tile;
[[tile::kernel]] void copy(T::tensor<const float, 1> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(1);
  T::fragment<float, 128> x;
  T::copy(X.at(0), x);
  T::copy(x, Y.at(0));
}

//--- use.cu
#include "tile_cuda.h"

struct alignas(64) Map {
  unsigned long long bits[16];
};

extern "C" __global__ void __launch_bounds__(128) use(const __grid_constant__ Map a, const __grid_constant__ Map k,
                                                      float *out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    tile_cuda::mbarrier_init(&bar, 1);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    tile_cuda::mbarrier_arrive_expect_tx(&bar, 16384);
    const int c2[2] = {0, int(blockIdx.x) * 64};
    tile_cuda::bulk_tensor_load<2>(smem, &a, &bar, c2);
    const int c4[4] = {0, 64, 3, 1};
    tile_cuda::bulk_tensor_load<4>(smem + 8192, &k, &bar, c4);
  }
  tile_cuda::mbarrier_wait(&bar, 0);
  out[threadIdx.x] = float(smem[threadIdx.x]);
  __syncthreads();
  if (threadIdx.x == 0)
    tile_cuda::mbarrier_arrive(&bar);
}
