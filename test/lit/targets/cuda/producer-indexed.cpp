// warp-specialize with tiles that a read-only tensor names: the producer computes the copies'
// coordinates from an index list (`const int kb = Index(qb, i)`) and the loop's count from a
// count tensor, both read-only, and issues the bulk tensor copies at them; the consumers read
// the same values. Offsets that read a tensor the kernel may write stay with the cp.async
// pipeline, and the remark says why. nvcc compiles the generated CUDA for sm_90a.
// RUN: rm -rf %t && mkdir %t
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fplugin-arg-tile-bulk-store=off -fsyntax-only \
// RUN:   -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks %s 2>&1 | FileCheck %s --check-prefix=REMARKS
// REMARKS-DAG: producer-indexed.cpp:[[# @LINE + 37]]:3: remark: [cuda:sm_90a] pipelined loop: 3 stages, the copies into 'Ks' are bulk tensor copies
// REMARKS-DAG: producer-indexed.cpp:[[# @LINE + 51]]:3: remark: [cuda:sm_90a] pipelined loop not warp-specialized: the copies' offsets or the loop's bounds read memory other than read-only tensor parameters
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=off -fplugin-arg-tile-bulk-store=off -fsyntax-only \
// RUN:   -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-print-after=warp-specialize %s 2>&1 | FileCheck %s
// CHECK-LABEL: kernel index_list(
// CHECK: if (tid == 128) {
// CHECK-NEXT: for it in serial(0, Count[qb]) {
// CHECK: bulk_copy(Ks + it % 3 * 4096 <- tensor_map0[Index[qb, it] * 64, 0], barriers[it % 3])
// CHECK: for it.1 in serial(0, Count[qb]) {
// CHECK-LABEL: kernel index_written(
// CHECK-NOT: bulk_copy
// CHECK-LABEL: kernel store_with_view(
// Paired blocks would run the producer's reads of a tensor for a block past the grid's end:
// not paired. A bulk store is refused where the kernel writes the tensor through a view of
// its rows too. Copies whose coordinates read a view stay with the cp.async pipeline.
// RUN: %tile-cxx -fplugin-arg-tile-pair-blocks=on -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a \
// RUN:   -fplugin-arg-tile-remarks %s 2>&1 | FileCheck %s --check-prefix=MORE
// MORE-DAG: producer-indexed.cpp:[[# @LINE + 20]]:3: remark: [cuda:sm_90a] blocks not paired: the copies' coordinates or the loop's bounds read tensors (a pair's block past the grid's end would read them too)
// MORE-DAG: producer-indexed.cpp:[[# @LINE + 58]]:3: remark: [cuda:sm_90a] copy into 'C' not a bulk tensor store: the kernel reads or writes 'C' elsewhere too
// MORE-DAG: producer-indexed.cpp:[[# @LINE + 70]]:3: remark: [cuda:sm_90a] pipelined loop not warp-specialized: the copies' offsets or the loop's bounds read memory other than read-only tensor parameters
// MORE-DAG: producer-indexed.cpp:[[# @LINE + 69]]:3: remark: [cuda:sm_90a] pipelined loop: 3 stages, the copies into 'As', 'Bs' run 2 iterations ahead
// REQUIRES: nvcc
// RUN: %tile-cxx -c -fplugin-arg-tile-pair-blocks=off -fplugin-arg-tile-targets=cuda:sm_90a \
// RUN:   -fplugin-arg-tile-cache=%t/cache -fplugin-arg-tile-emit-source=%t %s -o %t/a.o
// RUN: FileCheck %s --check-prefix=SRC < %t/producer-indexed.cu
// SRC: tile_cuda::bulk_tensor_load<2>(Ks + it % 3 * 4096, &tensor_map0, barriers + it % 3, {0, Index[

#include <tile/tile.h>
namespace T = tile;

[[tile::kernel]] void index_list(T::tensor<const T::bf16, 2> Q, T::tensor<const T::bf16, 2> K,
                                 T::tensor<const int, 2> Index, T::tensor<const int, 1> Count, T::tensor<float, 2> O) {
  auto [qb] = T::grid(T::ceildiv(Q.size(0), 64));
  T::shared<T::bf16, 64, 64> Qs, Ks;
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

[[tile::kernel]] void index_written(T::tensor<const T::bf16, 2> Q, T::tensor<const T::bf16, 2> K,
                                    T::tensor<int, 2> Index, T::tensor<float, 2> O) {
  auto [qb] = T::grid(T::ceildiv(Q.size(0), 64));
  T::shared<T::bf16, 64, 64> Qs, Ks;
  T::fragment<float, 64, 64> acc;
  T::copy(Q.at(qb * 64, 0), Qs);
  T::clear(acc);
  for (int i : T::pipelined(Index.size(1), T::stages(3))) {
    T::copy(K.at(Index(qb, i) * 64, 0), Ks);
    T::gemm(Qs, Ks, acc, {.transpose_b = true});
  }
  T::copy(acc, O.at(qb * 64, 0));
}

/// C's tiles, with a marker written through a view of C's rows before the loop.
[[tile::kernel]] void store_with_view(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B,
                                      T::tensor<T::bf16, 2> C) {
  auto [bx, by] = T::grid(T::ceildiv(B.size(1), 128), T::ceildiv(A.size(0), 128));
  auto Cv = C.rows(0, C.size(0));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int i : T::parallel(128))
    if (by * 128 + i < Cv.size(0) && bx * 128 < Cv.size(1))
      Cv(by * 128 + i, bx * 128) = T::bf16(-1.0f);
  for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(2))) {
    T::copy(A.at(by * 128, k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

/// Rows of A that a view of a start list names.
[[tile::kernel]] void starts_in_view(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B,
                                     T::tensor<const int, 1> Starts, T::tensor<const int, 1> Offsets,
                                     T::tensor<float, 2> C) {
  auto [bx, by, g] = T::grid(T::ceildiv(B.size(1), 128), 8, Offsets.size(0) - 1);
  auto Sg = Starts.rows(Offsets(g), Offsets(g + 1));
  T::shared<T::bf16, 128, 64> As;
  T::shared<T::bf16, 64, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(3))) {
    T::copy(A.at(Sg(by), k * 64), As);
    T::copy(B.at(k * 64, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}
