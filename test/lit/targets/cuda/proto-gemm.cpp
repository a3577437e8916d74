// The hand-written warp-specialized GEMM that the compiler's output is compared with on the
// GPU (bench/proto/ws_gemm.cu, bench/NOTES.md issue 9) still builds against tile_cuda.h:
// its host code includes the device header too, and its PTX has what it is the reference of.
// REQUIRES: nvcc
// RUN: %nvcc -ptx -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I%S/../../../../targets/cuda/include \
// RUN:   -I%S/../../../../targets/common/include \
// RUN:   -I%S/../../../../include/tile/detail %S/../../../../bench/proto/ws_gemm.cu -o - | FileCheck %s
// CHECK-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK-DAG: setmaxnreg.inc.sync.aligned.u32 232
// CHECK-DAG: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
