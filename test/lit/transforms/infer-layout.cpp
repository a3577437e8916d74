// infer-layout: fragments whose every use a register layout can serve get one (printed on
// their declaration); the others stay in shared memory. Never fails.
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-gemm=mma -fplugin-arg-tile-print-after=infer-layout \
// RUN:   -fplugin-arg-tile-stop-after=infer-layout %s 2>&1 | FileCheck %s
// RUN: %tile-cxx -fsyntax-only -fplugin-arg-tile-targets=cuda:sm_80 -fplugin-arg-tile-remarks \
// RUN:   -fplugin-arg-tile-stop-after=infer-layout %s 2>&1 | FileCheck %s --check-prefix=REMARKS

#include <tile/tile.h>
namespace T = tile;

// A row-wise normalization: the matrix, its row vectors (a reduction's destination, a
// factor per row) and its column vector (a factor per column) all in registers, laid out
// together: 8-element vectors, 32 threads per row, 4 rows at a time.
// CHECK-LABEL: kernel rows(
// CHECK: fragment x: f32[4, 256] in registers: matrix(4x256, vec 8, 4x32 threads)
// CHECK: fragment w: f32[256] in registers: columns of matrix(4x256, vec 8, 4x32 threads)
// CHECK: fragment m: f32[4] in registers: rows of matrix(4x256, vec 8, 4x32 threads)
[[tile::kernel]] void rows(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 4));
  T::fragment<float, 4, 256> x;
  T::fragment<float, 256> w;
  T::fragment<float, 4> m;
  T::copy(X.at(bx * 4, 0), x);
  T::copy(X.at(0, 0), w);
  T::reduce_max(x, m, 1);
  for (auto [i, j] : T::parallel(4, 256))
    x(i, j) = x(i, j) * w(j) - m(i);
  T::copy(x, Y.at(bx * 4, 0));
}

// Small and odd shapes still get a layout: narrower vectors so that every thread has one,
// or rows that not every thread holds (3 rows of 5 on 128 threads).
// CHECK-LABEL: kernel shapes(
// CHECK: fragment a: f32[8, 16] in registers: matrix(8x16, vec 1, 8x16 threads)
// CHECK: fragment b: f32[3, 5] in registers: matrix(3x5, vec 1, 128x1 threads)
// CHECK: fragment c: f32[256] in registers: matrix(1x256, vec 2, 1x128 threads)
[[tile::kernel]] void shapes(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::fragment<float, 8, 16> a;
  T::fragment<float, 3, 5> b;
  T::fragment<float, 256> c;
  T::clear(a);
  T::clear(b);
  T::clear(c);
  T::copy(a, Y.at(0, 0));
  T::copy(b, Y.at(0, 0));
  T::copy(c, Y.at(0, 0));
}

// Uses that no register layout serves leave the fragment in shared memory: other indices
// (a transpose), gemm and cumsum operands, a reduction along the first dimension, a
// fragment of rank 3, one needing too many registers. (The frontend refuses element
// accesses outside parallel loops.)
// CHECK-LABEL: kernel fallbacks(
// CHECK: fragment ok: f32[4, 32] in registers: matrix(4x32, vec 1, 4x32 threads)
// CHECK: fragment transposed: f32[32, 4]{{$}}
// CHECK: fragment acc: f32[16, 8]{{$}}
// CHECK: fragment scan: f32[4, 32]{{$}}
// CHECK: fragment cols: f32[4, 32]{{$}}
// CHECK: fragment colmin: f32[32]{{$}}
// CHECK: fragment cube: f32[2, 2, 2]{{$}}
// CHECK: fragment huge: f32[128, 128]{{$}}
[[tile::kernel]] void fallbacks(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::fragment<float, 4, 32> ok;
  T::fragment<float, 32, 4> transposed;
  T::shared<T::f16, 16, 8> a;
  T::shared<T::f16, 8, 8> b;
  T::fragment<float, 16, 8> acc;
  T::fragment<float, 4, 32> scan, cols;
  T::fragment<float, 32> colmin;
  T::fragment<float, 2, 2, 2> cube;
  T::fragment<float, 128, 128> huge;
  for (auto [i, j] : T::parallel(4, 32))
    ok(i, j) = transposed(j, i);
  T::gemm(a, b, acc);
  T::cumsum(scan, scan, 1);
  T::reduce_min(cols, colmin, 0);
  T::clear(cube);
  T::clear(huge);
}

// A gemm on tensor cores lays its accumulator out as mma.sync does, with the warp grid of
// its policy: square (the warp tile closest to square), full_row (warps stacked along M),
// full_col. A first operand in a fragment is read from registers, laid out as mma's operand
// a (replicated over the N warps); f32 operands keep the FMA path (shared memory).
// CHECK-LABEL: kernel gemms(
// CHECK: fragment sq: f32[64, 64] in registers: mma(64x64, 2x2 warps of 2x4 m16n8 atoms)
// CHECK: fragment rows: f32[64, 64] in registers: mma(64x64, 4x1 warps of 1x8 m16n8 atoms)
// CHECK: fragment cols: f32[64, 64] in registers: mma(64x64, 1x4 warps of 4x2 m16n8 atoms)
// CHECK: fragment ra: f32[64, 64] in registers: mma(64x64, 2x2 warps of 2x4 m16n8 atoms)
// CHECK: fragment fma: f32[64, 64]{{$}}
// CHECK: fragment fa: bf16[64, 32] in registers: mma operand a(64x32, 2x2 warps of 2x4 m16n8 atoms)
// CHECK: fragment f32a: f32[64, 32]{{$}}
[[tile::kernel]] void gemms(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 64, 32> a;
  T::shared<T::bf16, 32, 64> b;
  T::shared<float, 32, 64> b32;
  T::fragment<float, 64, 64> sq, rows, cols, ra, fma;
  T::fragment<T::bf16, 64, 32> fa;
  T::fragment<float, 64, 32> f32a;
  T::gemm(a, b, sq);
  T::gemm(a, b, rows, {.policy = T::warp_policy::full_row});
  T::gemm(a, b, cols, {.policy = T::warp_policy::full_col});
  T::copy(a, fa);
  T::gemm(fa, b, ra);
  T::clear(f32a);
  T::gemm(f32a, b32, fma);
}

// Propagation: a row reduction of a tensor-core accumulator lands in its row vector (the
// four lanes of a row and, on a 2 x 2 grid, the two warps of a row hold each element), and
// the broadcast s(i, j) - m(i) over the accumulator reads it in place; a copy into a bf16
// fragment keeps the layout (converting in registers).
// CHECK-LABEL: kernel softmax_rows(
// CHECK: fragment s: f32[64, 64] in registers: mma(64x64, 2x2 warps of 2x4 m16n8 atoms)
// CHECK: fragment m: f32[64] in registers: rows of mma(64x64, 2x2 warps of 2x4 m16n8 atoms)
// CHECK: fragment p: bf16[64, 64] in registers: mma(64x64, 2x2 warps of 2x4 m16n8 atoms)
[[tile::kernel]] void softmax_rows(T::tensor<T::bf16, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 64, 32> q;
  T::shared<T::bf16, 64, 32> k;
  T::fragment<float, 64, 64> s;
  T::fragment<float, 64> m;
  T::fragment<T::bf16, 64, 64> p;
  T::gemm(q, k, s, {.transpose_b = true, .clear_accum = true});
  T::reduce_max(s, m, 1);
  for (auto [i, j] : T::parallel(64, 64))
    s(i, j) = T::exp2(s(i, j) - m(i));
  T::copy(s, p);
  T::copy(p, Y.at(0, 0));
}

// FlashAttention-2's P: on warps stacked along the rows, the accumulator of S = Q K^T is,
// register for register, the first operand of O += P V: P stays in registers and the second
// gemm reads it there. Without a policy the compiler stacks both gemms' warps so itself
// (their square grids would be 2 x 2). A policy that spreads the warps along N (full_col)
// replicates the operand over the N warps, which the accumulator is not: P then goes
// through shared memory, and says so.
// CHECK-LABEL: kernel p_in_registers(
// CHECK: fragment s: f32[64, 64] in registers: mma(64x64, 4x1 warps of 1x8 m16n8 atoms)
// CHECK: fragment o: f32[64, 64] in registers: mma(64x64, 4x1 warps of 1x8 m16n8 atoms)
// CHECK: fragment p: bf16[64, 64] in registers: mma operand a(64x64, 4x1 warps of 1x8 m16n8 atoms)
// CHECK-LABEL: kernel p_without_policy(
// CHECK: fragment s: f32[64, 64] in registers: mma(64x64, 4x1 warps of 1x8 m16n8 atoms)
// CHECK: fragment o: f32[64, 64] in registers: mma(64x64, 4x1 warps of 1x8 m16n8 atoms)
// CHECK: fragment p: bf16[64, 64] in registers: mma operand a(64x64, 4x1 warps of 1x8 m16n8 atoms)
// CHECK: gemm(p, v, o) on mma.sync.m16n8k16
// CHECK-LABEL: kernel p_through_shared(
// CHECK: fragment s: f32[64, 64] in registers: mma(64x64, 1x4 warps of 4x2 m16n8 atoms)
// CHECK: fragment o: f32[64, 64] in registers: mma(64x64, 1x4 warps of 4x2 m16n8 atoms)
// CHECK: fragment p: bf16[64, 64] rows of 72{{$}}
[[tile::kernel]] void p_in_registers(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 64, 64> q, k, v;
  T::fragment<float, 64, 64> s, o;
  T::fragment<T::bf16, 64, 64> p;
  T::gemm(q, k, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_row});
  T::copy(s, p);
  T::gemm(p, v, o, {.policy = T::warp_policy::full_row});
  T::copy(o, Y.at(0, 0));
}
[[tile::kernel]] void p_without_policy(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 64, 64> q, k, v;
  T::fragment<float, 64, 64> s, o;
  T::fragment<T::bf16, 64, 64> p;
  T::gemm(q, k, s, {.transpose_b = true, .clear_accum = true});
  T::copy(s, p);
  T::gemm(p, v, o);
  T::copy(o, Y.at(0, 0));
}
[[tile::kernel]] void p_through_shared(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 64, 64> q, k, v;
  T::fragment<float, 64, 64> s, o;
  T::fragment<T::bf16, 64, 64> p;
  T::gemm(q, k, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_col});
  T::copy(s, p);
  T::gemm(p, v, o, {.policy = T::warp_policy::full_col});
  T::copy(o, Y.at(0, 0));
}

// MLA's scores over key blocks of 32 with 8 warps side by side (full_col; a latent of 256
// here, so that the tiles fit gfx90a's 64 KiB as well): 32 columns do not
// take 8 warps of 8-column atoms, so the score gemm runs on 4x2 warps (a remark says the
// policy gave way), the output's on 1x8; the row vectors the two layouts ask for in
// different rows go to shared memory, and the reductions from the scores into them leave
// the scores and their gemm in registers.
// CHECK-LABEL: kernel policy_not_met(
// CHECK: fragment s: f32[64, 32] in registers: mma(64x32, 4x2 warps of 1x2 m16n8 atoms)
// CHECK: fragment acc: f32[64, 256] in registers: mma(64x256, 1x8 warps of 4x4 m16n8 atoms)
// CHECK: fragment rs: f32[64]{{$}}
// REMARKS: infer-layout.cpp:204:30: remark: [cuda:sm_80] fragment 's' in registers: mma(64x32, 4x2 warps of 1x2 m16n8 atoms)
// REMARKS: infer-layout.cpp:206:26: remark: [cuda:sm_80] fragment 'rs' in shared memory
// REMARKS: infer-layout.cpp:207:3: remark: [cuda:sm_80] gemm on tensor cores (mma.sync.m16n8k16.bf16, 4x2 warps, a from shared memory via ldmatrix); not full_col (warps side by side along N): no such grid of 8 warps tiles 64x32 with its atoms
// REMARKS: infer-layout.cpp:215:3: remark: [cuda:sm_80] gemm on tensor cores (mma.sync.m16n8k16.bf16, 1x8 warps, a from shared memory via ldmatrix){{$}}
[[tile::kernel]] void policy_not_met(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1, T::threads(256));
  T::shared<T::bf16, 64, 256> q;
  T::shared<T::bf16, 32, 256> kv;
  T::shared<T::bf16, 64, 32> ss;
  T::fragment<float, 64, 32> s;
  T::fragment<float, 64, 256> acc;
  T::fragment<float, 64> rs, l;
  T::gemm(q, kv, s, {.transpose_b = true, .clear_accum = true, .policy = T::warp_policy::full_col});
  T::reduce_sum(s, rs, 1);
  T::copy(s, ss);
  T::clear(l);
  for (int i : T::parallel(64))
    l(i) = l(i) + rs(i);
  for (auto [i, j] : T::parallel(64, 256))
    acc(i, j) = acc(i, j) * l(i);
  T::gemm(ss, kv, acc, {.policy = T::warp_policy::full_col});
  T::copy(acc, Y.at(0, 0));
}

// The shared operands of a tensor-core gemm get padded rows where ldmatrix would otherwise
// read 8 rows from the same banks (rows of 64 and 256 bytes), none where not (80 bytes).
// CHECK-LABEL: kernel padding(
// CHECK: shared a: bf16[64, 32] rows of 40
// CHECK: shared b: bf16[32, 128] rows of 136
// CHECK: shared c: bf16[32, 40]{{$}}
[[tile::kernel]] void padding(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 64, 32> a;
  T::shared<T::bf16, 32, 128> b;
  T::shared<T::bf16, 32, 40> c;
  T::fragment<float, 64, 128> acc;
  T::fragment<float, 64, 40> acc2;
  T::gemm(a, b, acc);
  T::gemm(a, c, acc2);
}

// Every thread holds all of a local buffer: a fragment copied into one, or read by a nest
// that fills one, stays in shared memory (in registers, each thread filled only the rows
// it held, and read the rest of the local uninitialized).
// CHECK-LABEL: kernel into_local(
// CHECK-DAG: fragment x: f32[16, 64]{{$}}
// CHECK-DAG: fragment r: f32[16]{{$}}
[[tile::kernel]] void into_local(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1, T::threads(128));
  T::fragment<float, 16, 64> x;
  T::fragment<float, 16> r;
  T::local<float, 16> l;
  T::local<float, 16, 64> m;
  T::copy(X.at(0, 0), x);
  T::reduce_sum(x, r, 1);
  for (int i : T::parallel(16))
    l(i) = r(i) * 2;
  T::copy(x, m);
  T::copy(m, Y.at(0, 0));
  T::copy(l, Y.at(16, 0));
}

// A 1-D nest over a row vector in registers (4 threads hold each row) that stores into shared
// memory and reads the store back: the stores are one holder's (lower-fragments), so the
// others would read before it wrote; the row vector stays in shared memory and the nest runs
// one thread per row (found by test/fuzz with racecheck). Without the read back it stays.
// CHECK-LABEL: kernel read_back(
// CHECK: fragment r: f32[24]{{$}}
// CHECK-LABEL: kernel no_read_back(
// CHECK: fragment r: f32[24] in registers: rows of
[[tile::kernel]] void read_back(T::tensor<const float, 2> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(1, T::threads(96));
  T::fragment<float, 24, 32> x;
  T::fragment<float, 24> r;
  T::shared<float, 24> s;
  T::copy(X.at(0, 0), x);
  T::reduce_sum(x, r, 1);
  for (int i : T::parallel(24)) {
    s(i) = r(i) * 2;
    T::device_assert(s(i) < 1000, "bound");
  }
  T::copy(s, Y.at(0));
}
[[tile::kernel]] void no_read_back(T::tensor<const float, 2> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(1, T::threads(96));
  T::fragment<float, 24, 32> x;
  T::fragment<float, 24> r;
  T::shared<float, 24> s;
  T::copy(X.at(0, 0), x);
  T::reduce_sum(x, r, 1);
  for (int i : T::parallel(24))
    s(i) = r(i) * 2;
  T::copy(s, Y.at(0));
}

// A 2-D nest over vectors alone runs by the matrix layout of its extents, and records it for
// lower-fragments; so does one whose vectors a reduction laid out already (found by
// test/fuzz on the GPU: lower-fragments had left such a nest unbound).
// CHECK-LABEL: kernel vectors_alone(
// CHECK: fragment c: f32[16] in registers: columns of matrix(8x16, vec 1, 16x16 threads)
// CHECK: fragment r: f32[8] in registers: rows of matrix(8x16, vec 1, 16x16 threads)
// CHECK: for i in parallel(0, 8) bound by matrix(8x16, vec 1, 16x16 threads) {
[[tile::kernel]] void vectors_alone(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1, T::threads(256));
  T::fragment<float, 16> c;
  T::fragment<float, 8> r;
  T::fragment<float, 8, 16> x;
  T::shared<float, 8, 16> out;
  T::copy(X.at(0, 0), c);
  T::copy(X.at(0, 0), x);
  T::reduce_sum(x, r, 1);
  for (auto [i, j] : T::parallel(8, 16))
    out(i, j) = c(j) + r(i);
  T::copy(out, Y.at(0, 0));
}

// A vector written in a 2-D nest through one of its variables: the threads that hold a
// copy of v(i) each run their own (i, j), so under `if (j == 0)` only one copy would change;
// v stays in shared memory (found in review).
// CHECK-LABEL: kernel vector_written_in_matrix_nest(
// CHECK: fragment v: f32[8]{{$}}
[[tile::kernel]] void vector_written_in_matrix_nest(T::tensor<const float, 2> X, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::fragment<float, 8, 64> x;
  T::fragment<float, 8> v;
  T::copy(X.at(0, 0), x);
  for (auto [i, j] : T::parallel(8, 64))
    if (j == 0)
      v(i) = x(i, j);
  for (auto [i, j] : T::parallel(8, 64))
    x(i, j) = x(i, j) * v(i);
  T::copy(x, Y.at(0, 0));
}

// A nest over an accumulator and a gemm's operand a (laid out differently on the default
// warp grids) runs by the accumulator's layout: S and m stay in registers and both gemms on
// tensor cores; P, which cannot take both layouts, goes through shared memory (found in
// review: P's layout used to win and send S to shared memory and its gemm to FMA).
// CHECK-LABEL: kernel accumulator_binds_first(
// CHECK: fragment s: f32[64, 64] in registers: mma(64x64, 2x2 warps of 2x4 m16n8 atoms)
// CHECK: fragment acc: f32[64, 128] in registers: mma(64x128
// CHECK: fragment p: bf16[64, 64] rows of 72{{$}}
// CHECK: fragment m: f32[64] in registers: rows of mma(64x64, 2x2 warps of 2x4 m16n8 atoms)
[[tile::kernel]] void accumulator_binds_first(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 64, 64> q, k;
  T::shared<T::bf16, 64, 128> v;
  T::fragment<float, 64, 64> s;
  T::fragment<float, 64, 128> acc;
  T::fragment<T::bf16, 64, 64> p;
  T::fragment<float, 64> m;
  T::gemm(q, k, s, {.transpose_b = true, .clear_accum = true});
  T::reduce_max(s, m, 1);
  for (auto [i, j] : T::parallel(64, 64))
    p(i, j) = T::exp2(s(i, j) - m(i));
  T::gemm(p, v, acc, {.clear_accum = true});
  T::copy(acc, Y.at(0, 0));
}

// A transposed operand a is read by ldmatrix from shared memory from the start: its layout
// never binds the nest that fills it from an accumulator (found in review).
// CHECK-LABEL: kernel transposed_a(
// CHECK: fragment s: f32[64, 32] in registers: mma(64x32
// CHECK: fragment p: bf16[64, 32]{{( rows of [0-9]+)?$}}
[[tile::kernel]] void transposed_a(T::tensor<float, 2> Y) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 64, 32> q;
  T::shared<T::bf16, 32, 32> k2;
  T::shared<T::bf16, 64, 64> x;
  T::fragment<float, 64, 32> s;
  T::fragment<T::bf16, 64, 32> p;
  T::fragment<float, 32, 64> acc;
  T::gemm(q, k2, s, {.clear_accum = true});
  for (auto [i, j] : T::parallel(64, 32))
    p(i, j) = s(i, j);
  T::gemm(p, x, acc, {.transpose_a = true, .clear_accum = true});
  T::copy(acc, Y.at(0, 0));
}
