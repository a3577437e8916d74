// Kernels on tile::from_dlpack views of memory of the current device (the CPU here, the
// GPU in the GPU test set): a transposed input at a byte offset into a padded output, an
// input whose strides are negative (read backwards), a gemm on DLManagedTensor operands,
// and an array exported with tile::to_dlpack, viewed again and written by a kernel; views
// of the wrong element type or of another device's memory are refused before anything runs.
// REQUIRES: dlpack
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS dlpack_transposed_offset_to_padded
// CHECK: PASS dlpack_negative_strides
// CHECK: PASS dlpack_gemm_managed
// CHECK: PASS dlpack_exported_array
// CHECK: PASS dlpack_refused_type
// CHECK: PASS dlpack_refused_device
// CHECK: PASS dlpack_refused_left_y_alone
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <tile/dlpack.h>

namespace T = tile;

/// Y = 2 X + 1 over [16, 16] tiles.
[[tile::kernel]] void affine(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx, by] = T::grid(T::ceildiv(X.size(1), 16), T::ceildiv(X.size(0), 16));
  T::fragment<float, 16, 16> f;
  T::copy(X.at(by * 16, bx * 16), f);
  for (auto [i, j] : T::parallel(16, 16))
    f(i, j) = 2.0f * f(i, j) + 1.0f;
  T::copy(f, Y.at(by * 16, bx * 16));
}

template <int BM, int BN, int BK>
[[tile::kernel]] void gemm(T::tensor<const T::bf16, 2> A, T::tensor<const T::bf16, 2> B, T::tensor<float, 2> C) {
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM));
  T::shared<T::bf16, BM, BK> As;
  T::shared<T::bf16, BK, BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, BK), T::stages(2))) {
    T::copy(A.at(by * BM, k * BK), As);
    T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * BM, bx * BN));
}

/// A DLTensor of memory of the current device.
DLTensor dl(void *data, std::int64_t *shape, std::int64_t *strides, int ndim, DLDataType dtype) {
  DLTensor t{};
  t.data = data;
  t.device = T::to_dlpack_device(T::current_device());
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = strides;
  return t;
}

int main() {
  const float guard = -777.0f;
  const DLDataType f32{kDLFloat, 32, 1}, bf16{kDLBfloat, 16, 1};
  const int M = 37, N = 29;
  {
    // X[i, j] = xt[3 + j * M + i] (transposed, 3 elements in); Y's rows ld = N + 5 apart.
    const int ld = N + 5;
    auto xt = check::random<float>(3 + std::size_t(N) * M);
    std::vector<float> ref(std::size_t(M) * ld, guard);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        ref[i * ld + j] = 2.0f * xt[3 + j * M + i] + 1.0f;
    auto Xt = check::upload(xt, {std::int64_t(xt.size())});
    auto Yp = check::upload(std::vector<float>(ref.size(), guard), {M, ld});
    std::int64_t xs[] = {M, N}, xst[] = {1, M}, ys[] = {M, N}, yst[] = {ld, 1};
    DLTensor x = dl(Xt.data(), xs, xst, 2, f32);
    x.byte_offset = 3 * sizeof(float);
    DLTensor y = dl(Yp.data(), ys, yst, 2, f32);
    affine(T::from_dlpack<const float, 2>(x, "x"), T::from_dlpack<float, 2>(y, "y"));
    check::equal("dlpack_transposed_offset_to_padded", ref, Yp.to_vector());
  }
  {
    // X[i, j] = x[(M - 1 - i) * N + (N - 1 - j)]: both strides negative, data at the end.
    auto x = check::random<float>(std::size_t(M) * N);
    std::vector<float> ref(x.size());
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        ref[i * N + j] = 2.0f * x[(M - 1 - i) * N + (N - 1 - j)] + 1.0f;
    auto X = check::upload(x, {M, N});
    auto Y = check::upload(check::poisoned<float>(x.size()), {M, N});
    std::int64_t shape[] = {M, N}, back[] = {-N, -1};
    DLTensor xt = dl(X.data() + x.size() - 1, shape, back, 2, f32);
    DLTensor yt = dl(Y.data(), shape, nullptr, 2, f32);
    affine(T::from_dlpack<const float, 2>(xt, "x"), T::from_dlpack<float, 2>(yt, "y"));
    check::equal("dlpack_negative_strides", ref, Y.to_vector());
  }
  {
    // C = A B with A, B and C held by DLManagedTensors (deleters of the caller's: unused).
    const int K = 45;
    auto a = check::random<T::bf16>(std::size_t(M) * K), b = check::random<T::bf16>(std::size_t(K) * N);
    std::vector<double> ref(std::size_t(M) * N, 0.0);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        for (int k = 0; k < K; ++k)
          ref[i * N + j] += check::value(a[i * K + k]) * check::value(b[k * N + j]);
    auto A = check::upload(a, {M, K}), B = check::upload(b, {K, N});
    auto C = check::upload(check::poisoned<float>(ref.size()), {M, N});
    std::int64_t as[] = {M, K}, bs[] = {K, N}, cs[] = {M, N};
    DLManagedTensor ma{}, mb{}, mc{};
    ma.dl_tensor = dl(A.data(), as, nullptr, 2, bf16);
    mb.dl_tensor = dl(B.data(), bs, nullptr, 2, bf16);
    mc.dl_tensor = dl(C.data(), cs, nullptr, 2, f32);
    gemm<32, 16, 16>(T::from_dlpack<const T::bf16, 2>(&ma, "a"), T::from_dlpack<const T::bf16, 2>(&mb, "b"),
                     T::from_dlpack<float, 2>(&mc, "c"));
    check::close("dlpack_gemm_managed", ref, C.to_vector(), 1e-5);
  }
  {
    // An array exported (ownership moves into the DLManagedTensor), viewed, written.
    auto x = check::random<float>(std::size_t(M) * N);
    auto X = check::upload(x, {M, N});
    T::array<float, 2> Y({M, N});
    DLManagedTensor *y = T::to_dlpack(std::move(Y));
    affine(X, T::from_dlpack<float, 2>(y, "y"));
    std::vector<float> ref(x.size()), got(x.size());
    T::rt::copy_to_host(T::current_device(), got.data(), y->dl_tensor.data, got.size() * sizeof(float));
    for (std::size_t i = 0; i < x.size(); ++i)
      ref[i] = 2.0f * x[i] + 1.0f;
    check::equal("dlpack_exported_array", ref, got);
    y->deleter(y);
  }
  {
    auto X = check::upload(std::vector<float>(4, 1.0f), {2, 2});
    auto Y = check::upload(std::vector<float>(4, guard), {2, 2});
    std::int64_t shape[] = {2, 2};
    DLTensor t = dl(Y.data(), shape, nullptr, 2, {kDLFloat, 64, 1});
    check::throws("dlpack_refused_type", [&] { affine(X, T::from_dlpack<float, 2>(t, "y")); },
                  {"tile::from_dlpack: y: expected elements of float32, got float64"});
    // Memory of another device: a GPU's on the CPU, the host's on a GPU.
    DLTensor other = dl(Y.data(), shape, nullptr, 2, f32);
    other.device = T::current_device().backend == T::backend::cpu ? DLDevice{kDLCUDA, 7} : DLDevice{kDLCPU, 0};
    check::throws("dlpack_refused_device", [&] { affine(X, T::from_dlpack<float, 2>(other, "y")); },
                  {"tile::from_dlpack: y: expected memory of the current device ", "got kDL"});
    check::equal("dlpack_refused_left_y_alone", std::vector<float>(4, guard), Y.to_vector());
  }
  return check::result();
}
