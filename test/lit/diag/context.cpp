// Each diagnostic is at the user's line with a note on what to write instead, and leads
// back to the user's code: errors inside a [[tile::macro]] or lambda note each call that
// inlined it, errors in a kernel template note where it was instantiated.
// RUN: %tile-cxx -fsyntax-only -ferror-limit=0 -Xclang -verify %s

#include <tile/tile.h>
namespace T = tile;

[[tile::macro]] void bad_reduce(T::fragment<float, 16, 8> &f, T::fragment<float, 16> &r) {
  T::reduce_sum(f, r, 2); // expected-error {{dimension 2 is out of range for 'f' of rank 2}} expected-note {{write a dimension from 0 to 1 (the dimension to reduce)}}
}
[[tile::macro]] void outer(T::fragment<float, 16, 8> &f, T::fragment<float, 16> &r) {
  bad_reduce(f, r); // expected-note {{in [[tile::macro]] 'bad_reduce' called from here}}
}

[[tile::kernel]] void k_macro_chain(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::fragment<float, 16, 8> f;
  T::fragment<float, 16> r;
  T::clear(f);
  outer(f, r); // expected-note {{in [[tile::macro]] 'outer' called from here}}
}

[[tile::kernel]] void k_lambda(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::fragment<float, 8> frag;
  T::clear(frag);
  auto f = [&](int i) { return frag(i); }; // expected-error {{element of fragment 'frag' accessed outside a tile::parallel loop}} expected-note {{fragments are spread over the block's threads}}
  x(0) = f(1); // expected-note {{in lambda called from here}}
}

template <int D> [[tile::kernel]] void k_template(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::fragment<float, 8> f;
  T::fragment<float, 8> c;
  T::cumsum(f, c, D); // expected-error {{dimension 3 is out of range for 'f' of rank 1}} expected-note {{'f' has one dimension: write 0}}
}

template <int N> [[tile::kernel]] void k_template_head(T::tensor<float, 1> x) {
  x(0) = 1; // expected-error {{only declarations of scalars and tile::expect may come before tile::grid in a kernel}} expected-note {{bind the block indices first}}
  auto [bx] = T::grid(N);
}

void host(T::tensor<float, 1> x) {
  k_template<3>(x); // expected-note {{in instantiation of kernel 'k_template<3>' requested here}}
  k_template_head<2>(x); // expected-note {{in instantiation of kernel 'k_template_head<2>' requested here}}
}

[[tile::kernel]] void k_threads0(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1, T::threads(0)); // expected-error {{a block has 1 to 1024 threads, not 0}} expected-note {{write tile::threads(n) with 1 <= n <= 1024}}
}

[[tile::kernel]] void k_threads4096(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1, T::threads(4096)); // expected-error {{a block has 1 to 1024 threads, not 4096}} expected-note {{write tile::threads(n) with 1 <= n <= 1024}}
}

[[tile::kernel]] void k_stages0(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  for (int k : T::pipelined(4, T::stages(0))) // expected-error {{a pipeline has at least 1 stage, not 0}} expected-note {{write tile::stages(n) with n >= 1}}
    x(k) = 0;
}

[[tile::kernel]] void k_swizzle0(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::use_swizzle(0); // expected-error {{the panel of tile::use_swizzle must be positive, not 0}} expected-note {{write tile::use_swizzle(n) with n >= 1}}
}

[[tile::kernel]] void k_warp_specialize_in_loop(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  for (int i : T::serial(2))
    T::warp_specialize(false); // expected-error {{tile::warp_specialize must be a statement of the kernel's body, outside loops, run-time ifs and macros}} expected-note {{call it once at the top level of the kernel}}
}

// Under a run-time condition it would apply to the whole kernel all the same.
[[tile::kernel]] void k_warp_specialize_in_if(T::tensor<float, 1> x, int n) {
  auto [bx] = T::grid(1);
  if (n > 0)
    T::warp_specialize(false); // expected-error {{tile::warp_specialize must be a statement of the kernel's body, outside loops, run-time ifs and macros}} expected-note {{it applies to the whole kernel; if constexpr may choose}}
}

[[tile::kernel]] void k_persistent_in_loop(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  for (int i : T::serial(2))
    T::persistent(); // expected-error {{tile::persistent must be a statement of the kernel's body, outside loops, run-time ifs and macros}} expected-note {{call it once at the top level of the kernel}}
}

[[tile::kernel]] void k_persistent_at_run_time(T::tensor<float, 1> x, int n) {
  auto [bx] = T::grid(1);
  T::persistent(n > 0); // expected-error {{the argument of tile::persistent must be a compile-time constant}} expected-note {{use a template parameter, a constexpr variable or a literal}}
}

[[tile::kernel]] void k_swizzle_in_if(T::tensor<float, 1> x, int n) {
  auto [bx] = T::grid(1);
  if (n > 0)
    T::use_swizzle(4); // expected-error {{tile::use_swizzle must be a statement of the kernel's body, outside loops, run-time ifs and macros}} expected-note {{call it once after tile::grid, at the top level of the kernel (it applies to the whole kernel)}}
}

[[tile::kernel]] void k_stream_first(T::stream s, T::tensor<float, 1> x) { // expected-error {{a tile::stream parameter must be the kernel's last parameter}} expected-note {{move it to the end of the parameter list}}
  auto [bx] = T::grid(1);
}

[[tile::kernel]] void k_asm(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  asm volatile("nop"); // expected-error {{inline assembly is not supported in kernels}} expected-note {{the compiler chooses the instructions}}
}

[[tile::kernel]] void k_bindings(T::tensor<float, 1> x) {
  auto [bx, by] = T::grid(4); // expected-error {{type 'std::array<int, 1>' decomposes into 1 element, but 2 names were provided}} expected-error {{tile::grid with 1 extent binds 1 block index, not 2}} expected-note {{write one name per extent: auto [bx] = tile::grid(gx)}}
}

[[tile::kernel]] void k_grid_in_if(T::tensor<float, 1> x, int n) {
  if (n > 0) {
    auto [bx] = T::grid(n); // expected-error {{tile::grid must be a statement of the kernel's body, not nested in another statement}} expected-note {{bind the block indices at the top of the body}}
  }
}

[[tile::kernel]] void k_two_grids(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  auto [by] = T::grid(2); // expected-error {{tile::grid may appear only once, as the first tile statement of a kernel}} expected-note {{bind all block indices with one tile::grid(gx, gy, gz)}}
}

[[tile::kernel]] void k_parallel0(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::fragment<float, 4> f;
  for (int i : T::parallel(0)) // expected-error {{the extents of tile::parallel must be positive, not 0}} expected-note {{write tile::parallel(n) with n >= 1}}
    f(i) = 0;
}

[[tile::kernel]] void k_expect_after_grid(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::expect(x.size(0) > 0, "x is not empty"); // expected-error {{tile::expect must come before tile::grid}} expected-note {{checked on the host at launch}}
}

[[tile::kernel]] void k_statement_before_grid(T::tensor<float, 1> x) {
  T::expect(x.size(0) > 0, "x is not empty");
  x(0) = 1; // expected-error {{only declarations of scalars and tile::expect may come before tile::grid in a kernel}} expected-note {{bind the block indices first}}
  auto [bx] = T::grid(1);
}

// The statements before tile::grid also run on the host, where a tensor's data is device
// memory: an element read there is an error (in a declaration, in tile::expect, in an extent).
[[tile::kernel]] void k_element_before_grid(T::tensor<const int, 1> n, T::tensor<float, 1> x) {
  const int blocks = n(0) + 1; // expected-error {{an element of a tensor is read before tile::grid, where the statements also run on the host}} expected-note {{read it after tile::grid, or pass the value as a scalar parameter}}
  auto [bx] = T::grid(blocks);
}
[[tile::kernel]] void k_element_in_expect(T::tensor<const int, 1> n, T::tensor<float, 1> x) {
  T::expect(n(0) > 0, "n[0] is positive"); // expected-error {{an element of a tensor is read before tile::grid}} expected-note {{read it after tile::grid}}
  auto [bx] = T::grid(1);
}
[[tile::kernel]] void k_element_in_extent(T::tensor<const int, 1> n, T::tensor<float, 1> x) {
  auto [bx] = T::grid(T::ceildiv(n(0), 64)); // expected-error {{an element of a tensor is read in a grid extent, which is computed on the host}} expected-note {{size the grid from tensor sizes and scalar parameters}}
}

[[tile::kernel]] void k_gemm_runtime_transpose(T::tensor<float, 1> x, bool flag) {
  auto [bx] = T::grid(1);
  T::shared<T::bf16, 16, 16> a, b;
  T::fragment<float, 16, 16> c;
  T::gemm(a, b, c, {.transpose_b = flag}); // expected-error {{.transpose_b of tile::gemm must be a compile-time constant}} expected-note {{only .clear_accum may be decided at run time}}
}

[[tile::kernel]] void k_gemm_bool_accumulator(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 16, 16> a, b;
  T::fragment<bool, 16, 16> c;
  T::gemm(a, b, c); // expected-error {{the accumulator 'c' of tile::gemm has element type bool, which holds no sums}} expected-note {{accumulate in a fragment of float or of an integer type}}
}

// An atomic's value is read as a declaration's initializer; exchange and compare-exchange
// take one element; an atomic writes, so not into a read-only tensor.
[[tile::kernel]] void k_atomic_value_in_expression(T::tensor<int, 1> c, T::tensor<int, 1> out) {
  auto [bx] = T::grid(1);
  for (int i : T::parallel(32))
    out(i) = T::atomic_add(c(0), 1) * 2; // expected-error {{the value of tile::atomic_add is read only as the initializer of a declaration}} expected-note {{write it as a statement, or as const T old = tile::atomic_add(...); and use old}}
}
[[tile::kernel]] void k_atomic_exchange_region(T::tensor<int, 1> c) {
  auto [bx] = T::grid(1);
  T::fragment<int, 32> f;
  T::clear(f);
  T::atomic_exchange(c.at(0), f); // expected-error {{tile::atomic_exchange works on one tensor element}} expected-note {{an element-wise update of a region is an add, max or min}}
}
[[tile::kernel]] void k_atomic_read_only(T::tensor<const int, 1> c, T::tensor<int, 1> out) {
  auto [bx] = T::grid(1);
  const int old = T::atomic_max(c(0), 3); // expected-error {{tensor 'c' is read-only}} expected-note {{declare it tile::tensor<T, Rank> without const}}
  for (int i : T::parallel(32))
    out(i) = old;
}

[[tile::kernel]] void k_print_buffers(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::fragment<float, 8> f;
  T::clear(f);
  T::print("f", f, 3); // expected-error {{a buffer is printed whole, after its label}} expected-note {{write tile::print("label", f) with a string literal label, or tile::print(f)}}
}

[[tile::kernel]] void k_print_tensor(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::print("x", x); // expected-error {{tile::print prints tile buffers, not tensor 'x'}} expected-note {{copy a tile of it into a buffer first}}
}

[[tile::kernel]] void k_print_in_parallel(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 8> s;
  for (int i : T::parallel(8))
    T::print("s", s); // expected-error {{a buffer cannot be printed inside a tile::parallel loop}} expected-note {{print it before or after the loop}}
}

[[tile::kernel]] void k_region_no_extent(T::tensor<float, 2> q) {
  auto [bx] = T::grid(1);
  T::shared<float, 4, 64> s;
  T::fill(s, 0.0f);
  T::copy(s.at(1, 0), q.at(0, 0)); // expected-error {{the extent of s.at(...) in tile::copy is not known}} expected-note {{mark the dimensions the tile spans with tile::slice(start) (they run to the end of 's'), or pass the whole buffer}}
}

[[tile::kernel]] void k_region_slice_runtime(T::tensor<float, 2> q, int c) {
  auto [bx] = T::grid(1);
  T::shared<float, 4, 64> s;
  T::fill(s, 0.0f);
  T::copy(s.at(1, T::slice(c)), q.at(0, T::slice(0))); // expected-error {{the start of a tile::slice of 's' must be a compile-time constant here}} expected-note {{extents are compile-time constants}}
}

[[tile::kernel]] void k_swizzle_span(T::tensor<float, 2> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 32, 32> t;
  T::annotate_layout(t, T::layouts::swizzled(16)); // expected-error {{tile::layouts::swizzled takes spans of 32, 64 or 128 bytes, not 16}} expected-note {{write tile::layouts::swizzled(128), swizzled(64) or swizzled(32)}}
  T::copy(x.at(0, 0), t);
}
