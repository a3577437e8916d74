// pingpong=on: where a warp-specialized loop of wgmma gemms does not get the two consumer
// warpgroups' turns at the tensor cores, the remark says why, and the kernel has no turns
// (no named barriers 2 and 3). A barrier of all consumers inside a turn would deadlock: the
// loop may not write shared memory, which insert-sync orders with such barriers, a fragment
// that infer-layout left in shared memory included (before session 27 such a fragment was
// let through, and the turns deadlocked).
// REQUIRES: nvcc
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-pingpong=on \
// RUN:   -fplugin-arg-tile-remarks %s 2>&1 | FileCheck %s
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-pingpong=on \
// RUN:   -fplugin-arg-tile-overlap-gemms=on -fplugin-arg-tile-remarks %s 2>&1 | FileCheck %s --check-prefix=OVERLAP
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-pingpong=on \
// RUN:   -fplugin-arg-tile-print-after=warp-specialize %s 2>&1 | FileCheck %s --check-prefix=IR
// CHECK-DAG: pingpong-refusals.cpp:45:3: remark: [cuda:sm_90a] warpgroups do not take turns at the tensor cores: the loop writes fragment 't', which is in shared memory
// CHECK-DAG: remark: [cuda:sm_90a] fragment 't' in shared memory
// CHECK-DAG: pingpong-refusals.cpp:71:3: remark: [cuda:sm_90a] warpgroups do not take turns at the tensor cores: the loop writes shared memory ('Ws')
// CHECK-DAG: pingpong-refusals.cpp:93:3: remark: [cuda:sm_90a] warpgroups do not take turns at the tensor cores: the kernel has 1 consumer warpgroup (it takes two)
// CHECK-DAG: pingpong-refusals.cpp:112:3: remark: [cuda:sm_90a] warpgroups do not take turns at the tensor cores: nothing runs between its two gemms
// CHECK-DAG: pingpong-refusals.cpp:133:3: remark: [cuda:sm_90a] warpgroups do not take turns at the tensor cores: the loop's body has 3 wgmma gemms (it takes two at its top level)
// CHECK-DAG: pingpong-refusals.cpp:157:3: remark: [cuda:sm_90a] warpgroups do not take turns at the tensor cores: the loop's body has a gemm inside another statement (it takes two at its top level)
// Without the overlap, its kernel takes turns (the others' refusals are theirs).
// CHECK-DAG: pingpong-refusals.cpp:188:5: remark: [cuda:sm_90a] warpgroups take turns at the tensor cores (ping-pong)
// OVERLAP: pingpong-refusals.cpp:179:3: remark: [cuda:sm_90a] warpgroups do not take turns at the tensor cores: the last gemm overlaps the next iteration
// The kernel with the fragment in shared memory: no turns, its barriers of all consumers.
// IR-LABEL: kernel shared_fragment(
// IR-NOT: named_barrier
// IR: kernel shared_tile(
#include <tile/tile.h>
namespace T = tile;
using T::bf16;

// The row vector t is read at another row than its own: infer-layout keeps it in shared
// memory, and writing it in the loop takes barriers of all consumers.
[[tile::kernel]] void shared_fragment(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K,
                                      T::tensor<const bf16, 2> V, T::tensor<float, 2> O, int blocks) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 128), T::threads(256));
  T::shared<bf16, 128, 64> Qs;
  T::shared<bf16, 64, 64> Ks, Vs;
  T::fragment<float, 128, 64> s;
  T::fragment<bf16, 128, 64> p;
  T::fragment<float, 128, 64> acc;
  T::fragment<float, 128> t;
  T::copy(Q.at(bx * 128, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(blocks, T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(V.at(kb * 64, 0), Vs);
    for (int i : T::parallel(128))
      t(i) = float(kb + i);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    for (auto [i, j] : T::parallel(128, 64))
      s(i, j) = s(i, j) - t(127 - i);
    T::copy(s, p);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(bx * 128, 0));
}

// A shared tile of the kernel's own written in the loop.
[[tile::kernel]] void shared_tile(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K,
                                  T::tensor<const bf16, 2> V, T::tensor<float, 2> O, int blocks) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 128), T::threads(256));
  T::shared<bf16, 128, 64> Qs;
  T::shared<bf16, 64, 64> Ks, Vs;
  T::shared<bf16, 128, 64> Ws;
  T::fragment<float, 128, 64> s;
  T::fragment<bf16, 128, 64> p;
  T::fragment<float, 128, 64> acc;
  T::copy(Q.at(bx * 128, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(blocks, T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    for (auto [i, j] : T::parallel(128, 64))
      Ws(i, j) = bf16(s(i, j));
    T::copy(Ws, p);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(bx * 128, 0));
}

// One consumer warpgroup.
[[tile::kernel]] void one_warpgroup(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K,
                                    T::tensor<const bf16, 2> V, T::tensor<float, 2> O, int blocks) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 64), T::threads(128));
  T::shared<bf16, 64, 64> Qs, Ks, Vs;
  T::fragment<float, 64, 64> s;
  T::fragment<bf16, 64, 64> p;
  T::fragment<float, 64, 64> acc;
  T::copy(Q.at(bx * 64, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(blocks, T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true});
    T::copy(s, p);
    T::gemm(p, Vs, acc);
  }
  T::copy(acc, O.at(bx * 64, 0));
}

// Two gemms with nothing between them (into two accumulators).
[[tile::kernel]] void back_to_back(T::tensor<const bf16, 2> A, T::tensor<const bf16, 2> B, T::tensor<float, 2> C,
                                   T::tensor<float, 2> D) {
  auto [bx] = T::grid(T::ceildiv(A.size(0), 128), T::threads(256));
  T::shared<bf16, 128, 64> As;
  T::shared<bf16, 64, 64> Bs;
  T::fragment<float, 128, 64> c, d;
  T::clear(c);
  T::clear(d);
  for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(2))) {
    T::copy(A.at(bx * 128, k * 64), As);
    T::copy(B.at(k * 64, 0), Bs);
    T::gemm(As, Bs, c, {.policy = T::warp_policy::full_row});
    T::gemm(As, Bs, d, {.policy = T::warp_policy::full_row});
  }
  T::copy(c, C.at(bx * 128, 0));
  T::copy(d, D.at(bx * 128, 0));
}

// Three gemms.
[[tile::kernel]] void three_gemms(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K,
                                  T::tensor<const bf16, 2> V, T::tensor<float, 2> O, int blocks) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 128), T::threads(256));
  T::shared<bf16, 128, 64> Qs;
  T::shared<bf16, 64, 64> Ks, Vs;
  T::fragment<float, 128, 64> s, s2;
  T::fragment<bf16, 128, 64> p;
  T::fragment<float, 128, 64> acc;
  T::copy(Q.at(bx * 128, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(blocks, T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    T::gemm(Qs, Vs, s2, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    for (auto [i, j] : T::parallel(128, 64))
      s(i, j) = s(i, j) + s2(i, j);
    T::copy(s, p);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(bx * 128, 0));
}

// The second gemm under a branch.
[[tile::kernel]] void nested_gemm(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K,
                                  T::tensor<const bf16, 2> V, T::tensor<float, 2> O, int blocks, int skip) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 128), T::threads(256));
  T::shared<bf16, 128, 64> Qs;
  T::shared<bf16, 64, 64> Ks, Vs;
  T::fragment<float, 128, 64> s;
  T::fragment<bf16, 128, 64> p;
  T::fragment<float, 128, 64> acc;
  T::copy(Q.at(bx * 128, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(blocks, T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    T::copy(s, p);
    if (kb != skip)
      T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(bx * 128, 0));
}

// The overlap (overlap-gemms=on, 3 stages, a statement between the gemms free of the second).
[[tile::kernel]] void overlapped(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K,
                                 T::tensor<const bf16, 2> V, T::tensor<float, 2> O, int blocks) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 128), T::threads(256));
  T::shared<bf16, 128, 64> Qs;
  T::shared<bf16, 64, 64> Ks, Vs;
  T::fragment<float, 128, 64> s;
  T::fragment<bf16, 128, 64> p;
  T::fragment<float, 128, 64> acc;
  T::copy(Q.at(bx * 128, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(blocks, T::stages(3))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    for (auto [i, j] : T::parallel(128, 64))
      s(i, j) = s(i, j) * 0.25f;
    for (auto [i, j] : T::parallel(128, 64))
      acc(i, j) = acc(i, j) * 0.5f;
    T::copy(s, p);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(bx * 128, 0));
}

// An atomic in the loop.
// CHECK-DAG: pingpong-refusals.cpp:[[@LINE+11]]:3: remark: [cuda:sm_90a] warpgroups do not take turns at the tensor cores: the loop has a prefix sum or an atomic
[[tile::kernel]] void atomics(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K, T::tensor<const bf16, 2> V,
                              T::tensor<float, 2> O, T::tensor<float, 2> S, int blocks) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 128), T::threads(256));
  T::shared<bf16, 128, 64> Qs;
  T::shared<bf16, 64, 64> Ks, Vs;
  T::fragment<float, 128, 64> s;
  T::fragment<bf16, 128, 64> p;
  T::fragment<float, 128, 64> acc;
  T::copy(Q.at(bx * 128, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(blocks, T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    T::atomic_add(S.at(bx * 128, 0), s);
    T::copy(s, p);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(bx * 128, 0));
}

// A reduction of other than a gemm accumulator (its rows: the operand p).
// CHECK-DAG: pingpong-refusals.cpp:[[@LINE+12]]:3: remark: [cuda:sm_90a] warpgroups do not take turns at the tensor cores: the loop reduces 'p' other than along a gemm accumulator's rows
[[tile::kernel]] void operand_rows(T::tensor<const bf16, 2> Q, T::tensor<const bf16, 2> K, T::tensor<const bf16, 2> V,
                                   T::tensor<float, 2> O, int blocks) {
  auto [bx] = T::grid(T::ceildiv(Q.size(0), 128), T::threads(256));
  T::shared<bf16, 128, 64> Qs;
  T::shared<bf16, 64, 64> Ks, Vs;
  T::fragment<float, 128, 64> s;
  T::fragment<bf16, 128, 64> p;
  T::fragment<float, 128, 64> acc;
  T::fragment<float, 128> m;
  T::copy(Q.at(bx * 128, 0), Qs);
  T::clear(acc);
  for (int kb : T::pipelined(blocks, T::stages(2))) {
    T::copy(K.at(kb * 64, 0), Ks);
    T::copy(V.at(kb * 64, 0), Vs);
    T::gemm(Qs, Ks, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
    T::copy(s, p);
    T::reduce_max(p, m, 1);
    T::gemm(p, Vs, acc, {.policy = T::warp_policy::full_row});
  }
  T::copy(acc, O.at(bx * 128, 0));
}
