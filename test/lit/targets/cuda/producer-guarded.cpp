// warp-specialize with a pipelined loop whose body is one `if` on a read-only tensor
// (TileLang's block-sparse form): the producer tests the condition 8 iterations at a time,
// fills a stage only for an iteration where it holds, puts that iteration's index into the
// stage's slot and ends with -1; the consumers loop over the slots until the end and hand
// its stage back too. A condition that reads a tensor the kernel writes, or a variable the
// kernel assigns, keeps the loop on the cp.async pipeline, and the remark says why; the
// overlap, pairs and multicast are not taken for such a loop. nvcc compiles the CUDA.
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -fplugin-arg-tile-bulk-store=off -fplugin-arg-tile-multicast=on -fplugin-arg-tile-overlap-gemms=on \
// RUN:   -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks %s 2>&1 | FileCheck %s --check-prefix=REMARKS
// REMARKS-DAG: producer-guarded.cpp:[[# @LINE + 55]]:3: remark: [cuda:sm_90a] pipelined loop: 3 stages, the copies into 'Ks', 'Vs' are bulk tensor copies
// REMARKS-DAG: producer-guarded.cpp:[[# @LINE + 55]]:5: remark: [cuda:sm_90a] the loop's condition is tested by the producer, 8 iterations at a time: an iteration where it does not hold takes no stage, and the consumers take each iteration that runs from its stage
// REMARKS-DAG: producer-guarded.cpp:[[# @LINE + 53]]:3: remark: [cuda:sm_90a] tiles not shared with the neighbouring block (multicast): the loop's body is under a condition, whose iterations each block's producer chooses
// REMARKS-DAG: producer-guarded.cpp:[[# @LINE + 60]]:7: remark: [cuda:sm_90a] gemm not overlapped with the next iteration: the loop's body is under a condition, whose iterations the producer chooses
// REMARKS-DAG: producer-guarded.cpp:[[# @LINE + 73]]:3: remark: [cuda:sm_90a] pipelined loop not warp-specialized: its body is under a condition that reads memory other than read-only tensor parameters (the producer tests it)
// REMARKS-DAG: producer-guarded.cpp:[[# @LINE + 93]]:3: remark: [cuda:sm_90a] pipelined loop not warp-specialized: its body is under a condition that reads 'last', which the kernel assigns, or which is not a parameter, a block index or a constant declared before the loop (the producer tests it)
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fplugin-arg-tile-bulk-store=off -fsyntax-only \
// RUN:   -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-print-after=warp-specialize %s 2>&1 | FileCheck %s
// CHECK-LABEL: kernel block_sparse(
// CHECK: shared iterations: i32[3]
// CHECK: if (tid == 128) {
// CHECK-NEXT: var taken: i32 = 0
// CHECK-NEXT: for chunk in serial(0, (max((N + 64 - 1) / 64, 0) + 7) / 8) {
// CHECK-NEXT: var holds: bool = chunk * 8 < (N + 64 - 1) / 64 && Mask[qb, chunk * 8] != 0
// CHECK: var holds.7: bool = chunk * 8 + 7 < (N + 64 - 1) / 64 && Mask[qb, chunk * 8 + 7] != 0
// CHECK-NEXT: if (holds) {
// CHECK-NEXT: if (taken >= 3) {
// CHECK-NEXT: mbarrier_wait(barriers[taken % 3 + 3], parity (taken / 3 + 1) % 2)
// CHECK: put_iteration(iterations[taken % 3], chunk * 8)
// CHECK-NEXT: mbarrier_arrive_expect_tx(barriers[taken % 3], bytes 16384)
// CHECK-NEXT: bulk_copy(Ks + taken % 3 * 4096 <- tensor_map0[chunk * 8 * 64, 0], barriers[taken % 3])
// CHECK: taken = taken + 1
// CHECK: put_iteration(iterations[taken % 3], -1)
// CHECK-NEXT: mbarrier_arrive(barriers[taken % 3])
// CHECK: var taken.1: i32 = 0
// CHECK: mbarrier_wait(barriers[taken.1 % 3], parity taken.1 / 3 % 2)
// CHECK-NEXT: it = got_iteration(iterations[taken.1 % 3])
// CHECK: while (it >= 0) {
// CHECK-NEXT: var kb: i32 = it
// CHECK: mbarrier_arrive(barriers[taken.1 % 3 + 3])
// CHECK-NEXT: taken.1 = taken.1 + 1
// CHECK-NEXT: mbarrier_wait(barriers[taken.1 % 3], parity taken.1 / 3 % 2)
// CHECK-NEXT: it = got_iteration(iterations[taken.1 % 3])
// CHECK-NEXT: }
// CHECK-NEXT: mbarrier_arrive(barriers[taken.1 % 3 + 3])
// REQUIRES: nvcc
// RUN: %tile-cxx -c -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-cache=%t/cache \
// RUN:   -fplugin-arg-tile-emit-source=%t %s -o %t/a.o
// RUN: FileCheck %s --check-prefix=SRC < %t/producer-guarded.cu
// SRC: iterations[taken % 3] = chunk * 8;
// SRC: it = iterations[taken_1 % 3];

#include <tile/tile.h>
namespace T = tile;

[[tile::kernel]] void block_sparse(T::tensor<const T::bf16, 2> Q, T::tensor<const T::bf16, 2> K,
                                   T::tensor<const T::bf16, 2> V, T::tensor<const int, 2> Mask,
                                   T::tensor<float, 2> O) {
  const int N = K.size(0);
  auto [qb] = T::grid(T::ceildiv(Q.size(0), 64));
  T::shared<T::bf16, 64, 64> Qs, Ks, Vs;
  T::fragment<float, 64, 64> s, acc;
  T::fragment<T::bf16, 64, 64> p;
  T::copy(Q.at(qb * 64, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(T::ceildiv(N, 64), T::stages(3))) {
    if (Mask(qb, kb) != 0) {
      T::copy(K.at(kb * 64, 0), Ks);
      T::copy(V.at(kb * 64, 0), Vs);
      T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true});
      for (auto [i, j] : T::parallel(64, 64))
        s(i, j) = s(i, j) * 0.125f;
      T::copy(s, p);
      T::gemm(p, Vs, acc);
    }
  }
  T::copy(acc, O.at(qb * 64, 0));
}

// The mask is written by the kernel: its values may change, so the producer cannot test it.
[[tile::kernel]] void mask_written(T::tensor<const T::bf16, 2> Q, T::tensor<const T::bf16, 2> K,
                                   T::tensor<int, 2> Mask, T::tensor<float, 2> O) {
  auto [qb] = T::grid(T::ceildiv(Q.size(0), 64));
  T::shared<T::bf16, 64, 64> Qs, Ks;
  T::fragment<float, 64, 64> acc;
  T::copy(Q.at(qb * 64, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(T::ceildiv(K.size(0), 64), T::stages(3))) {
    if (Mask(qb, kb) != 0) {
      T::copy(K.at(kb * 64, 0), Ks);
      T::gemm(Qs, Ks, acc, {.transpose_b = true});
    }
  }
  Mask(qb, 0) = 1;
  T::copy(acc, O.at(qb * 64, 0));
}

// The condition reads a variable the kernel assigns.
[[tile::kernel]] void assigned_bound(T::tensor<const T::bf16, 2> Q, T::tensor<const T::bf16, 2> K,
                                     T::tensor<float, 2> O, int n) {
  auto [qb] = T::grid(T::ceildiv(Q.size(0), 64));
  T::shared<T::bf16, 64, 64> Qs, Ks;
  T::fragment<float, 64, 64> acc;
  int last = n;
  if (qb == 0)
    last = 1;
  T::copy(Q.at(qb * 64, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(T::ceildiv(K.size(0), 64), T::stages(3))) {
    if (kb < last) {
      T::copy(K.at(kb * 64, 0), Ks);
      T::gemm(Qs, Ks, acc, {.transpose_b = true});
    }
  }
  T::copy(acc, O.at(qb * 64, 0));
}
