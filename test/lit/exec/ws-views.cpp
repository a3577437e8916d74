// Pipelined loops whose tiles come from views of rows chosen at run time (X.rows(begin,
// end)), inside an `if` that skips blocks with nothing to do: on sm_90a the producer
// warpgroup copies them from the tensor at the view's origin by bulk tensor copies, and the
// consumers zero the rows of a tile outside the view before they read it, so that a tile
// past the view's end reads zeros as everywhere else. A grouped GEMM (C's rows of expert e =
// its rows of A times W[e], experts of 0, 1, 63, 64, 129 and 300 rows, one and two consumer
// warpgroups), and a weight gradient dW[e] = A_e^T G_e, whose sum runs over the view's rows:
// the rows of the next expert (large values here) must not reach it. Outputs poisoned,
// float64 references; each launch's entry is checked (tensor maps on sm_90a).
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS grouped_bm128
// CHECK: PASS grouped_bm64
// CHECK: PASS grouped_bm128_stages2
// CHECK: PASS weight_gradient
// CHECK: PASS weight_gradient_stages3
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;
using T::bf16;

template <int BM, int S>
[[tile::kernel]] void grouped(T::tensor<const bf16, 2> A, T::tensor<const bf16, 3> W, T::tensor<const int, 1> Offsets,
                              T::tensor<float, 2> C, int max_rows) {
  auto [bx, by, e] = T::grid(T::ceildiv(W.size(2), 128), T::ceildiv(max_rows, BM), W.size(0), T::threads(BM * 2));
  auto Ae = A.rows(Offsets(e), Offsets(e + 1));
  auto Ce = C.rows(Offsets(e), Offsets(e + 1));
  T::shared<bf16, BM, 64> As;
  T::shared<bf16, 64, 128> Bs;
  T::fragment<float, BM, 128> acc;
  if (by * BM < Ae.size(0)) {
    T::clear(acc);
    for (int k : T::pipelined(T::ceildiv(A.size(1), 64), T::stages(S))) {
      T::copy(Ae.at(by * BM, k * 64), As);
      T::copy(W.at(e, T::slice(k * 64), T::slice(bx * 128)), Bs);
      T::gemm(As, Bs, acc);
    }
    T::copy(acc, Ce.at(by * BM, bx * 128));
  }
}

/// dW[e] = A_e^T G_e over expert e's rows: A [tokens, M], G [tokens, N], dW [experts, M, N].
template <int S>
[[tile::kernel]] void weight_gradient(T::tensor<const bf16, 2> A, T::tensor<const bf16, 2> G,
                                      T::tensor<const int, 1> Offsets, T::tensor<float, 3> dW) {
  auto [bn, bm, e] = T::grid(T::ceildiv(G.size(1), 128), T::ceildiv(A.size(1), 64), Offsets.size(0) - 1);
  auto Ae = A.rows(Offsets(e), Offsets(e + 1));
  auto Ge = G.rows(Offsets(e), Offsets(e + 1));
  T::shared<bf16, 64, 64> As;
  T::shared<bf16, 64, 128> Gs;
  T::fragment<float, 64, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(Ae.size(0), 64), T::stages(S))) {
    T::copy(Ae.at(k * 64, bm * 64), As);
    T::copy(Ge.at(k * 64, bn * 128), Gs);
    T::gemm(As, Gs, acc, {.transpose_a = true});
  }
  T::copy(acc, dW.at(e, T::slice(bm * 64), T::slice(bn * 128)));
}

const std::vector<int> counts = {129, 0, 300, 1, 63, 64, 0, 200};

std::vector<int> offsets_of(const std::vector<int> &n) {
  std::vector<int> off{0};
  for (int c : n)
    off.push_back(off.back() + c);
  return off;
}

template <int BM, int S> void run_grouped(const char *name, int K, int N) {
  const std::vector<int> off = offsets_of(counts);
  const int E = int(counts.size()), tokens = off.back();
  int most = 0;
  for (int c : counts)
    most = std::max(most, c);
  auto a = check::random<bf16>(std::size_t(tokens) * K), w = check::random<bf16>(std::size_t(E) * K * N);
  std::vector<double> ref(std::size_t(tokens) * N, 0.0);
  for (int e = 0; e < E; ++e)
    for (int t = off[e]; t < off[e + 1]; ++t)
      for (int k = 0; k < K; ++k) {
        const double x = check::value(a[std::size_t(t) * K + k]);
        for (int j = 0; j < N; ++j)
          ref[std::size_t(t) * N + j] += x * check::value(w[(std::size_t(e) * K + k) * N + j]);
      }
  auto A = check::upload(a, {tokens, K});
  auto W = check::upload(w, {E, K, N});
  auto Off = check::upload(off, {E + 1});
  auto C = check::upload(check::poisoned<float>(std::size_t(tokens) * N), {tokens, N});
  grouped<BM, S>(A, W, Off, C, most);
  check::entry(name, true);
  check::close(name, ref, C.to_vector(), 1e-5);
}

template <int S> void run_weight_gradient(const char *name, int M, int N) {
  const std::vector<int> off = offsets_of(counts);
  const int E = int(counts.size()), tokens = off.back();
  // Values of 100 to 200 in rows of odd experts: a row of the next expert in a tile would
  // show.
  auto a = check::random<bf16>(std::size_t(tokens) * M), g = check::random<bf16>(std::size_t(tokens) * N);
  for (int e = 1; e < E; e += 2)
    for (int t = off[e]; t < off[e + 1]; ++t)
      for (int i = 0; i < M; ++i)
        a[std::size_t(t) * M + i] = bf16(float(100 + (t + i) % 100));
  std::vector<double> ref(std::size_t(E) * M * N, 0.0);
  for (int e = 0; e < E; ++e)
    for (int t = off[e]; t < off[e + 1]; ++t)
      for (int i = 0; i < M; ++i) {
        const double x = check::value(a[std::size_t(t) * M + i]);
        for (int j = 0; j < N; ++j)
          ref[(std::size_t(e) * M + i) * N + j] += x * check::value(g[std::size_t(t) * N + j]);
      }
  auto A = check::upload(a, {tokens, M}), G = check::upload(g, {tokens, N});
  auto Off = check::upload(off, {E + 1});
  auto dW = check::upload(check::poisoned<float>(std::size_t(E) * M * N), {E, M, N});
  weight_gradient<S>(A, G, Off, dW);
  check::entry(name, true);
  check::close(name, ref, dW.to_vector(), 1e-5);
}

int main() {
  run_grouped<128, 3>("grouped_bm128", 200, 264);
  run_grouped<64, 3>("grouped_bm64", 328, 136);
  run_grouped<128, 2>("grouped_bm128_stages2", 72, 200);
  run_weight_gradient<2>("weight_gradient", 136, 264);
  run_weight_gradient<3>("weight_gradient_stages3", 72, 136);
  return check::result();
}
