// Tile kernels for PyTorch: a shared library whose C entry points take DLPack tensors
// (tile_torch.py calls them through ctypes on torch tensors, without a copy). Built with
//   tile-c++ -O2 -shared -fPIC tile_torch.cpp -o libtile_torch.so
// Each entry point views its tensors with tile::from_dlpack (a mismatch of device, element
// type, rank or shape is an error naming the argument), runs on the device that holds
// them, on the stream it is given (PyTorch's current stream), and writes its output in
// place. Errors come back as a non-zero status and a message in `err`: no C++ exception
// crosses the C boundary.
#include <tile/tile.h>
#include <tile/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>

namespace T = tile;

namespace {

/// C = A B with float accumulation. Tiles small enough for the CPU as for a GPU. The last
/// parameter (unnamed: the body does not use it) is the stream the launch runs on.
template <class E, int BM = 64, int BN = 64, int BK = 32, int NT = 128, int S = 2>
[[tile::kernel]] void matmul(T::tensor<const E, 2> A, T::tensor<const E, 2> B, T::tensor<E, 2> C, T::stream) {
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  T::expect(B.size(0) == K && C.size(0) == M && C.size(1) == N, "A is [M, K], B [K, N] and C [M, N]");
  auto [bx, by] = T::grid(T::ceildiv(N, BN), T::ceildiv(M, BM), T::threads(NT));
  T::shared<E, BM, BK> As;
  T::shared<E, BK, BN> Bs;
  T::fragment<float, BM, BN> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(K, BK), T::stages(S))) {
    T::copy(A.at(by * BM, k * BK), As);
    T::copy(B.at(k * BK, bx * BN), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * BM, bx * BN));
}

/// Y = softmax(X) along the rows, in float, BN columns at a time (examples/softmax.cpp's
/// online softmax: one pass for the row's maximum and sum, one to write), on the stream of
/// the last parameter.
template <class E, int BN = 256, int NT = 128>
[[tile::kernel]] void softmax(T::tensor<const E, 2> X, T::tensor<E, 2> Y, T::stream) {
  const int M = X.size(0), N = X.size(1);
  T::expect(Y.size(0) == M && Y.size(1) == N, "X and Y have the same shape");
  auto [bx] = T::grid(M, T::threads(NT));
  T::fragment<float, 1, BN> x, m, sum;
  T::fragment<float, 1> row_max, row_sum;
  T::fill(m, -T::infinity<float>());
  T::clear(sum);
  const int chunks = T::ceildiv(N, BN);
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx, c * BN), x);
    for (auto [i, j] : T::parallel(1, BN)) {
      if (c * BN + j < N) {
        float e = T::exp(-T::abs(x(i, j) - m(i, j)));
        sum(i, j) = x(i, j) > m(i, j) ? sum(i, j) * e + 1.0f : sum(i, j) + e;
        m(i, j) = T::max(m(i, j), x(i, j));
      }
    }
  }
  T::reduce_max(m, row_max, 1);
  for (auto [i, j] : T::parallel(1, BN))
    sum(i, j) = sum(i, j) * T::exp(m(i, j) - row_max(i));
  T::reduce_sum(sum, row_sum, 1);
  for (int i : T::parallel(1))
    row_sum(i) = 1.0f / row_sum(i);
  for (int c = 0; c < chunks; ++c) {
    T::copy(X.at(bx, c * BN), x);
    for (auto [i, j] : T::parallel(1, BN))
      x(i, j) = T::exp(x(i, j) - row_max(i)) * row_sum(i);
    T::copy(x, Y.at(bx, c * BN));
  }
}

/// Runs `body`; a failure becomes status 1 and its message in err (truncated to errlen).
template <class F> int guarded(const char *entry, char *err, std::size_t errlen, F &&body) {
  std::string message;
  try {
    body();
    return 0;
  } catch (const std::exception &e) {
    message = e.what();
  } catch (...) {
    message = "unknown exception";
  }
  if (err && errlen > 0)
    std::snprintf(err, errlen, "%s: %s", entry, message.c_str());
  return 1;
}

[[noreturn]] void fail(const char *name, const std::string &what) { throw T::error(std::string(name) + ": " + what); }

const DLTensor &tensor_of(const DLManagedTensor *t, const char *name) {
  if (!t)
    fail(name, "null DLManagedTensor");
  return t->dl_tensor;
}

/// Calls `run.template operator()<E>()` with E the tile type of `t`'s elements.
template <class Run> void dispatch_float(const DLTensor &t, const char *name, Run &&run) {
  const DLDataType d = t.dtype;
  if (d.lanes == 1 && d.code == kDLFloat && d.bits == 32)
    run.template operator()<float>();
  else if (d.lanes == 1 && d.code == kDLFloat && d.bits == 16)
    run.template operator()<T::f16>();
  else if (d.lanes == 1 && d.code == kDLBfloat && d.bits == 16)
    run.template operator()<T::bf16>();
  else
    fail(name, "expected elements of float32, float16 or bfloat16, got " + T::dlpack_dtype_name(d));
}

/// Kernels run on the device that holds `t` (the first tensor of the call).
void use_device_of(const DLTensor &t, const char *name) {
  const T::device d = T::device_of(t, name);
  if (T::current_device() != d)
    T::set_device(d);
}

std::string shape_text(std::int64_t r, std::int64_t c) { return "[" + std::to_string(r) + ", " + std::to_string(c) + "]"; }

} // namespace

extern "C" {

/// out = a @ b for 2-D tensors of float32, float16 or bfloat16 (all three alike) on one
/// device, on `stream` (a cudaStream_t; null: the default stream; unused on the CPU).
/// Returns 0, or 1 with a message in err.
int tile_torch_matmul(const DLManagedTensor *a, const DLManagedTensor *b, const DLManagedTensor *out, void *stream,
                      char *err, std::size_t errlen) {
  return guarded("tile_torch_matmul", err, errlen, [&] {
    const DLTensor &ta = tensor_of(a, "a");
    use_device_of(ta, "a");
    dispatch_float(ta, "a", [&]<class E>() {
      auto A = T::from_dlpack<const E, 2>(a, "a");
      auto B = T::from_dlpack<const E, 2>(b, "b");
      auto C = T::from_dlpack<E, 2>(out, "out");
      if (B.size(0) != A.size(1))
        fail("b", "expected " + std::to_string(A.size(1)) + " rows (a is " + shape_text(A.size(0), A.size(1)) +
                      "), got " + shape_text(B.size(0), B.size(1)));
      if (C.size(0) != A.size(0) || C.size(1) != B.size(1))
        fail("out", "expected " + shape_text(A.size(0), B.size(1)) + ", got " + shape_text(C.size(0), C.size(1)));
      matmul<E>(A, B, C, T::stream(stream));
    });
  });
}

/// out = softmax(x) along dimension 1 of 2-D tensors of float32, float16 or bfloat16 (alike).
int tile_torch_softmax(const DLManagedTensor *x, const DLManagedTensor *out, void *stream, char *err,
                       std::size_t errlen) {
  return guarded("tile_torch_softmax", err, errlen, [&] {
    const DLTensor &tx = tensor_of(x, "x");
    use_device_of(tx, "x");
    dispatch_float(tx, "x", [&]<class E>() {
      auto X = T::from_dlpack<const E, 2>(x, "x");
      auto Y = T::from_dlpack<E, 2>(out, "out");
      if (Y.size(0) != X.size(0) || Y.size(1) != X.size(1))
        fail("out", "expected " + shape_text(X.size(0), X.size(1)) + ", got " + shape_text(Y.size(0), Y.size(1)));
      softmax<E>(X, Y, T::stream(stream));
    });
  });
}

/// *out = a @ b in a new tensor that tile allocates on a's device and exports with
/// tile::to_dlpack (the caller owns it: torch.utils.dlpack.from_dlpack takes it over).
int tile_torch_matmul_new(const DLManagedTensor *a, const DLManagedTensor *b, DLManagedTensor **out, void *stream,
                          char *err, std::size_t errlen) {
  return guarded("tile_torch_matmul_new", err, errlen, [&] {
    if (!out)
      fail("out", "null pointer");
    *out = nullptr;
    const DLTensor &ta = tensor_of(a, "a");
    use_device_of(ta, "a");
    dispatch_float(ta, "a", [&]<class E>() {
      auto A = T::from_dlpack<const E, 2>(a, "a");
      auto B = T::from_dlpack<const E, 2>(b, "b");
      if (B.size(0) != A.size(1))
        fail("b", "expected " + std::to_string(A.size(1)) + " rows (a is " + shape_text(A.size(0), A.size(1)) +
                      "), got " + shape_text(B.size(0), B.size(1)));
      T::array<E, 2> C({A.size(0), B.size(1)});
      matmul<E>(A, B, C, T::stream(stream));
      *out = T::to_dlpack(std::move(C));
    });
  });
}

} // extern "C"
