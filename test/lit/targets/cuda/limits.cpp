// Kernels that need more than a CUDA block can have are errors at the kernel, with a note
// on what to change: shared memory beyond the architecture's limit (sm_90a: 227 KiB; sm_80:
// 163 KiB), also when it comes from the stages of a pipelined loop, and fragments or local
// buffers too large for a thread. Built for several architectures, a kernel that fits only
// some of them gets a warning naming the others.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a -Xclang -verify=sm90,any %s
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_80 -Xclang -verify=sm80,any %s
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_90a+sm_80 -Xclang -verify=both,any %s
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cpu -Xclang -verify=cpu %s
// cpu-no-diagnostics

#include <tile/tile.h>
namespace T = tile;

// sm90-error@+4 {{tile kernel 'huge_shared' needs 67108864 bytes of shared memory per block; sm_90a gives a block at most 232448}}
// both-error@+3 {{tile kernel 'huge_shared' needs 67108864 bytes of shared memory per block; sm_90a gives a block at most 232448}}
// sm80-error@+2 {{tile kernel 'huge_shared' needs 67108864 bytes of shared memory per block; sm_80 gives a block at most 166912}}
// any-note@+1 {{use smaller tiles, or fewer stages in tile::pipelined}}
[[tile::kernel]] void huge_shared(T::tensor<float, 2> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 4096, 4096> s;
  T::copy(x.at(0, 0), s);
  T::copy(s, x.at(0, 0));
}

// (A fragment no register layout serves lives in shared memory.)
// any-error@+2 {{tile kernel 'huge_fragment' needs 67108864 bytes of shared memory per block}}
// any-note@+1 {{use smaller tiles}}
[[tile::kernel]] void huge_fragment(T::tensor<float, 2> x) {
  auto [bx] = T::grid(1);
  T::fragment<float, 4096, 4096> f;
  T::copy(x.at(0, 0), f);
  T::copy(f, x.at(0, 0));
}

// any-error@+2 {{tile kernel 'huge_local' needs 4194304 bytes of registers and local memory per thread ('l' alone 4194304); tile refuses more than 16384}}
// any-note@+1 {{use smaller tiles or more threads (tile::threads(n)), and keep large tiles in tile::shared}}
[[tile::kernel]] void huge_local(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::local<float, 1 << 20> l;
  for (int i : T::serial(1 << 20))
    l(i) = x(i);
  x(0) = l(5);
}

// An f32 GEMM whose staged tiles take 3 x (128 x 96 + 96 x 128) x 4 bytes = 288 KiB.
// any-error-re@+2 {{tile kernel 'staged_gemm' needs {{[0-9]+}} bytes of shared memory per block; sm_{{90a|80}} gives a block at most}}
// any-note@+1 {{fewer stages in tile::pipelined}}
[[tile::kernel]] void staged_gemm(T::tensor<const float, 2> A, T::tensor<const float, 2> B, T::tensor<float, 2> C) {
  auto [bx, by] = T::grid(T::ceildiv(C.size(1), 128), T::ceildiv(C.size(0), 128), T::threads(256));
  T::shared<float, 128, 96> As;
  T::shared<float, 96, 128> Bs;
  T::fragment<float, 128, 128> acc;
  T::clear(acc);
  for (int k : T::pipelined(T::ceildiv(A.size(1), 96), T::stages(3))) {
    T::copy(A.at(by * 128, k * 96), As);
    T::copy(B.at(k * 96, bx * 128), Bs);
    T::gemm(As, Bs, acc);
  }
  T::copy(acc, C.at(by * 128, bx * 128));
}

// Within the limits: no diagnostic (sm_80 takes 160 KiB, sm_90a 227 KiB).
[[tile::kernel]] void fits(T::tensor<float, 2> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 160, 256> s;
  T::copy(x.at(0, 0), s);
  T::copy(s, x.at(0, 0));
}

// 200 KiB: fits sm_90a, not sm_80.
// sm80-error@+4 {{tile kernel 'fits_sm90' needs 204800 bytes of shared memory per block; sm_80 gives a block at most 166912}}
// sm80-note@+3 {{use smaller tiles}}
// both-warning@+2 {{tile kernel 'fits_sm90' needs 204800 bytes of shared memory per block, more than a block may have on sm_80 (166912): it will not launch there}}
// both-note@+1 {{build for the other architectures only (-fplugin-arg-tile-targets=cuda:sm_90a), or use smaller tiles}}
[[tile::kernel]] void fits_sm90(T::tensor<float, 2> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 200, 256> s;
  T::copy(x.at(0, 0), s);
  T::copy(s, x.at(0, 0));
}
