// Every construct the kernel language cannot take is one error at the offending
// expression, with a note saying what to write instead.
// RUN: %tile-cxx -fsyntax-only -ferror-limit=0 -Xclang -verify %s

#include <tile/tile.h>
#include <vector>

namespace T = tile;

struct Base {
  virtual float f(float x) const { return x; }
};
int counter = 0;
float helper(float x) { return x + 1; }
constexpr int twice(int x) { return 2 * x; }
[[tile::macro]] float recurse(float x) { return recurse(x); } // expected-error {{recursive call to 'recurse' is not supported in a kernel}} expected-note {{macros and lambdas are inlined: write the recursion as a loop}}

[[tile::kernel]] void k_throw(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  if (bx > 3)
    throw 1; // expected-error {{exceptions are not supported in kernels}} expected-note {{check conditions with tile::device_assert(cond, "message")}}
}

[[tile::kernel]] void k_try(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  try { // expected-error {{exceptions are not supported in kernels}} expected-note {{check conditions with tile::device_assert}}
    x(0) = 1;
  } catch (...) {
  }
}

[[tile::kernel]] void k_new(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  float *p = new float[4]; // expected-error {{variable 'p' of type 'float *' is not supported in a kernel}} expected-note {{use tile::local<T, N> for a per-thread array}}
}

[[tile::kernel]] void k_virtual(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  Base b; // expected-error {{variable 'b' of type 'Base' is not supported in a kernel}} expected-note {{kernels hold arithmetic scalars and tile buffers}}
}

[[tile::kernel]] void k_recursion(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  float v = recurse(1.0f); // expected-note {{in [[tile::macro]] 'recurse' called from here}}
}

[[tile::kernel]] void k_goto(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  goto end; // expected-error {{goto is not supported in kernels}} expected-note {{use structured loops and if statements}}
end:;
}

[[tile::kernel]] void k_vector(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  std::vector<float> v(4); // expected-error {{variable 'v' of type 'std::vector<float>' is not supported in a kernel}} expected-note {{use tile::local<T, N> for a per-thread array}}
}

[[tile::kernel]] void k_unknown_callee(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  float v = helper(1.0f); // expected-error {{call to 'helper' is not supported in a kernel}} expected-note {{kernels can call tile:: functions, [[tile::macro]] functions, lambdas and constexpr functions}}
}

[[tile::kernel]] void k_std_math(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  float v = std::exp(x(0)); // expected-error {{call to 'std::exp' is not supported in a kernel}} expected-note {{use the kernel language's own functions (tile::exp where it exists)}}
}

[[tile::kernel]] void k_constexpr_runtime(T::tensor<float, 1> x, int n) {
  auto [bx] = T::grid(1);
  int v = twice(n); // expected-error {{call to constexpr function 'twice' is not a compile-time constant here}} expected-note {{mark it [[tile::macro]]}}
}

[[tile::kernel]] void k_parallel_extent(T::tensor<float, 1> x, int n) {
  auto [bx] = T::grid(1);
  T::fragment<float, 64> f;
  for (int i : T::parallel(n)) // expected-error {{the extent of tile::parallel must be a compile-time constant}} expected-note {{use a template parameter, a constexpr variable or a literal}}
    f(i) = 0;
}

[[tile::kernel]] void k_copy_shapes(T::tensor<float, 2> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 64, 32> s;
  T::fragment<float, 32, 64> f;
  T::copy(s, f); // expected-error {{tile::copy between tiles of different shapes: 's' is [64, 32] and 'f' is [32, 64]}} expected-note {{copy between tiles of the same shape}}
}

[[tile::kernel]] void k_gemm_shapes(T::tensor<float, 2> x) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 64, 32> a;
  T::shared<T::bf16, 64, 64> b;
  T::fragment<float, 64, 64> c;
  T::gemm(a, b, c); // expected-error {{tile::gemm shapes do not agree: a is [64, 32], b is [64, 64], c is [64, 64]}} expected-note {{c[M, N] += op(a)[M, K] * op(b)[K, N]}}
}

[[tile::kernel]] void k_reduce_shapes(T::tensor<float, 2> x) {
  auto [bx] = T::grid(1);
  T::fragment<float, 64, 32> f;
  T::fragment<float, 32> r;
  T::reduce_max(f, r, 1); // expected-error {{tile::reduce_max of 'f' [64, 32] along dimension 1 gives [64], but 'r' is [32]}} expected-note {{the destination has the source's shape without the reduced dimension}}
}

// (Each kernel stops at its first error.)
#define ARG_REDUCE_KERNEL(NAME, CALL)                                                              \
  [[tile::kernel]] void NAME(T::tensor<float, 2> x, int first) {                                   \
    auto [bx] = T::grid(1);                                                                        \
    T::fragment<float, 64, 32> f;                                                                  \
    T::fragment<float, 64> best;                                                                   \
    T::fragment<int, 64> at;                                                                       \
    T::fragment<float, 64> not_positions;                                                          \
    T::fragment<int, 32> wrong;                                                                    \
    CALL;                                                                                          \
  }
ARG_REDUCE_KERNEL(k_argmax_float_positions, T::reduce_argmax(f, best, not_positions, 1)) // expected-error {{the positions of tile::reduce_argmax go into a buffer of integers, not 'not_positions' of f32}} expected-note {{declare the third operand with an integer element type such as int}}
ARG_REDUCE_KERNEL(k_argmin_shape, T::reduce_argmin(f, best, wrong, 1)) // expected-error {{tile::reduce_argmin of 'f' [64, 32] along dimension 1 gives [64], but 'wrong' is [32]}} expected-note {{the values and the positions have the source's shape without the reduced dimension}}
ARG_REDUCE_KERNEL(k_argmax_dim, T::reduce_argmax(f, best, at, 2)) // expected-error {{dimension 2 is out of range for 'f' of rank 2}} expected-note {{write a dimension from 0 to 1 (the dimension to reduce)}}
ARG_REDUCE_KERNEL(k_argmax_fine, T::reduce_argmax(f, best, at, 1, false, first)) // (a run-time first position is fine)

#define SORT_KERNEL(NAME, CALL)                                                                    \
  [[tile::kernel]] void NAME(T::tensor<float, 2> x) {                                              \
    auto [bx] = T::grid(1);                                                                        \
    T::fragment<float, 16, 32> f;                                                                  \
    T::shared<float, 16, 32> s;                                                                    \
    T::shared<int, 16, 16> narrow;                                                                 \
    T::fragment<float, 16, 4> top;                                                                 \
    T::fragment<int, 16, 4> at;                                                                    \
    T::fragment<float, 16, 40> too_many;                                                           \
    T::fragment<float, 16, 4> not_positions;                                                       \
    CALL;                                                                                          \
  }
SORT_KERNEL(k_sort_fragment, T::sort(f, 1)) // expected-error {{tile::sort sorts shared buffers, not fragment 'f'}} expected-note {{copy the tile into a T::shared buffer, sort it there and copy it back}}
SORT_KERNEL(k_sort_values_shape, T::sort(s, narrow, 1)) // expected-error {{tile::sort needs values of the keys' shape: 's' is [16, 32], 'narrow' is [16, 16]}} expected-note {{declare the values with the keys' shape}}
SORT_KERNEL(k_sort_dim, T::sort(s, 2, true)) // expected-error {{dimension 2 is out of range for 's' of rank 2}} expected-note {{write a dimension from 0 to 1 (the dimension to sort along)}}
SORT_KERNEL(k_topk_too_many, T::topk(f, too_many, at, 1)) // expected-error {{tile::topk of 'f' [16, 32] along dimension 1 takes values and indices of its shape with at most 32 along that dimension, not [16, 40] and [16, 4]}} expected-note {{declare both with the source's shape but k along the dimension}}
SORT_KERNEL(k_topk_float_positions, T::topk(s, top, not_positions, 1)) // expected-error {{the positions of tile::topk go into a buffer of integers, not 'not_positions' of f32}} expected-note {{declare the third operand with an integer element type}}
SORT_KERNEL(k_topk_fine, T::topk(s, top, at, 1))

[[tile::kernel]] void k_view_in_parallel(T::tensor<float, 2> x) {
  auto [bx] = T::grid(1);
  for (int i : T::parallel(8))
    x.rows(i, i + 1)(0, 0) = 1.0f; // expected-error {{a view of tensor 'x' cannot be made inside a tile::parallel loop}} expected-note {{make it before the loop: auto rows = x.rows(begin, end);}}
}

[[tile::kernel]] void k_view_in_operand(T::tensor<float, 2> x, T::tensor<const int, 1> off) {
  auto [g] = T::grid(4);
  if (g + 1 < off.size(0) && x.rows(off(g), off(g + 1)).size(0) > 0) // expected-error {{a view of tensor 'x' cannot be made in an operand of &&, || or ?:}} expected-note {{its first row and count would be read whether or not the operand is; make it before the statement: auto rows = x.rows(begin, end);}}
    x(0, 0) = 1.0f;
}

[[tile::kernel]] void k_view_in_pipelined(T::tensor<float, 2> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 8, 8> s;
  for (int k : T::pipelined(4))
    T::copy(x.rows(k * 8, k * 8 + 8).at(0, 0), s); // expected-error {{a view of tensor 'x' cannot be made inside a tile::pipelined loop}} expected-note {{make it before the loop}}
}

[[tile::kernel]] void k_while(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  int i = 0;
  while (i < 4) // expected-error {{while loops are not supported in kernels}} expected-note {{write a for loop with a trip count}}
    ++i;
}

[[tile::kernel]] void k_break(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  for (int i = 0; i < 4; ++i)
    if (i == 2)
      break; // expected-error {{break is not supported in kernels}} expected-note {{guard the rest of the loop body with if (...)}}
}

[[tile::kernel]] void k_return(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  if (bx == 0)
    return; // expected-error {{return is not supported in the body of a kernel}} expected-note {{guard the rest of the kernel with if (...) instead of returning early}}
}

[[tile::kernel]] void k_global(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  x(0) = counter; // expected-error {{kernel uses variable 'counter', which is not a compile-time constant}} expected-note {{pass the value as a kernel parameter or make it constexpr}}
}

[[tile::kernel]] void k_no_grid(T::tensor<float, 1> x) { // expected-error {{tile kernel 'k_no_grid' has no tile::grid statement}} expected-note {{bind the block indices first: auto [bx] = tile::grid(n);}}
  x(0) = 1;
}

[[tile::kernel]] void k_before_grid(T::tensor<float, 1> x) {
  x(0) = 1; // expected-error {{only declarations of scalars and tile::expect may come before tile::grid in a kernel}} expected-note {{bind the block indices first}}
  auto [bx] = T::grid(1);
}

[[tile::kernel]] void k_param(std::vector<float> v) { // expected-error {{kernel parameter 'v' has type 'std::vector<float>', which a kernel cannot take}} expected-note {{kernel parameters are tile::tensor<T, Rank> views, arithmetic scalars and a last tile::stream}}
  auto [bx] = T::grid(1);
}

[[tile::kernel]] void k_fragment_outside(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::fragment<float, 64> f;
  T::clear(f);
  x(0) = f(3); // expected-error {{element of fragment 'f' accessed outside a tile::parallel loop}} expected-note {{fragments are spread over the block's threads}}
}

[[tile::kernel]] void k_op_in_parallel(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::fragment<float, 64> f;
  for (int i : T::parallel(64))
    T::clear(f); // expected-error {{tile::clear cannot be used inside a tile::parallel loop}} expected-note {{tile operations work on whole tiles}}
}

[[tile::kernel]] void k_copy_const(T::tensor<const float, 1> x) {
  auto [bx] = T::grid(1);
  T::fragment<float, 64> f;
  T::clear(f);
  T::copy(f, x.at(0)); // expected-error {{tile::copy into read-only tensor 'x'}} expected-note {{declare it tile::tensor<T, Rank> without const}}
}

[[tile::kernel]] void k_threads(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1, T::threads(2048)); // expected-error {{a block has 1 to 1024 threads, not 2048}} expected-note {{write tile::threads(n) with 1 <= n <= 1024}}
}

[[tile::kernel]] void k_stages(T::tensor<float, 1> x, int s) {
  auto [bx] = T::grid(1);
  for (int k : T::pipelined(4, T::stages(s))) // expected-error {{the number of pipeline stages must be a compile-time constant}} expected-note {{use a template parameter}}
    x(k) = 0;
}

[[tile::kernel]] void k_unroll(T::tensor<float, 1> x, int n) {
  auto [bx] = T::grid(1);
  for (int k : T::unroll(n)) // expected-error {{the extent of tile::unroll must be a compile-time constant}} expected-note {{use a template parameter}}
    x(k) = 0;
}

[[tile::kernel]] void k_switch(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  switch (bx) { // expected-error {{switch statements are not supported in kernels}} expected-note {{use if / else if}}
  default:
    break;
  }
}

[[tile::kernel]] void k_pointer(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  float v = *x.data(); // expected-error {{pointers are not supported in kernels}} expected-note {{index tensors and buffers directly: t(i, j)}}
}

[[tile::kernel]] void k_loop_var(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  for (int i = 0; i < 8; ++i) // expected-error {{this for loop has no trip count the compiler can derive}} expected-note {{with an integer variable that the body does not modify}}
    i += 2;
}

// The indices of tile loops belong to the loop (C++ would let the body change its copy;
// the passes rely on the index's range and on which thread runs which iterations).
[[tile::kernel]] void k_parallel_var(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 64> s;
  for (int i : T::parallel(64)) {
    s(i) = 1.0f;
    i = i + 1; // expected-error {{the index 'i' of tile::parallel cannot be modified}} expected-note {{copy it into a variable of your own first: int j = i;}}
  }
  T::copy(s, x.at(0));
}

[[tile::kernel]] void k_parallel_binding(T::tensor<float, 2> x) {
  auto [bx] = T::grid(1);
  T::fragment<float, 8, 8> f;
  for (auto [i, j] : T::parallel(8, 8)) {
    f(i, j) = 0.0f;
    ++j; // expected-error {{the index 'j' of tile::parallel cannot be modified}} expected-note {{int j = j;}}
  }
  T::copy(f, x.at(0, 0));
}

[[tile::kernel]] void k_serial_var(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  for (int k : T::serial(1)) {
    k -= 10; // expected-error {{the index 'k' of tile::serial cannot be modified}} expected-note {{the loop sets it}}
    x(0) = float(k);
  }
}

[[tile::kernel]] void k_pipelined_var(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  for (int k : T::pipelined(4, T::stages(2)))
    k *= 2; // expected-error {{the index 'k' of tile::pipelined cannot be modified}} expected-note {{the loop sets it}}
}

[[tile::kernel]] void k_unroll_var(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  for (int k : T::unroll(4))
    k--; // expected-error {{the index 'k' of tile::unroll cannot be modified}} expected-note {{the loop sets it}}
}

[[tile::kernel]] void k_second_grid(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::grid(2); // expected-error {{tile::grid may appear only once, as the first tile statement of a kernel}} expected-note {{move it to the start of the kernel's body}}
}

[[tile::kernel]] void k_region_var(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  auto r = x.at(0); // expected-error {{a region cannot be stored in a variable}} expected-note {{pass x.at(...) directly to the tile operation}}
}

[[tile::kernel]] void k_copy_two_regions(T::tensor<float, 1> x, T::tensor<float, 1> y) {
  auto [bx] = T::grid(1);
  T::copy(x.at(0), y.at(0)); // expected-error {{tile::copy needs a whole shared, fragment or local buffer as one of its operands}} expected-note {{the other operand's extent comes from that buffer}}
}

[[tile::kernel]] void k_static(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  static int s = 0; // expected-error {{static variables are not supported in kernels}} expected-note {{use a tile::shared buffer}}
}

[[tile::kernel]] void k_dim(T::tensor<float, 2> x) {
  auto [bx] = T::grid(x.size(2)); // expected-error {{dimension 2 is out of range for tensor 'x' of rank 2}} expected-note {{write a dimension from 0 to 1}}
}

[[tile::kernel]] void k_shared_oob(T::tensor<float, 2> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 64, 64> s;
  T::fragment<float, 32, 32> f;
  T::copy(s.at(0, 48), f); // expected-error {{the tile of s.at(...) in tile::copy reaches past the end of 's' (dimension 1)}} expected-note {{tiles of shared, fragment and local buffers must lie inside the buffer}}
}
