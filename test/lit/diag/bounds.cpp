// Accesses that no run of the kernel can make inside a tile buffer, integer division by a
// constant zero and shifts past a value's width are errors at the user's line (they were
// accepted and then wrong, or dropped a store without a word).
// RUN: %tile-cxx -fsyntax-only -ferror-limit=0 -Xclang -verify %s

#include <tile/tile.h>
namespace T = tile;

[[tile::kernel]] void k_const_index(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::local<float, 4> l;
  l(100000) = 1.0f; // expected-error {{index 100000 is outside dimension 0 of 'l' (extent 4)}} expected-note {{valid indices of 'l' in dimension 0 are 0 to 3}}
}

[[tile::kernel]] void k_negative_index(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::local<float, 4, 8> l;
  x(0) = l(1, -1); // expected-error {{index -1 is outside dimension 1 of 'l' (extent 8)}} expected-note {{valid indices of 'l' in dimension 1 are 0 to 7}}
}

[[tile::kernel]] void k_parallel_index(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 64> s;
  for (int i : T::parallel(64))
    s(i + 100000) = 0.0f; // expected-error {{index ranges over [100000, 100063], outside dimension 0 of 's' (extent 64)}} expected-note {{valid indices of 's' in dimension 0 are 0 to 63}}
}

// Some iterations out of bounds, unconditionally: an error; under a guard it is the
// user's business (and right).
[[tile::kernel]] void k_shifted(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 64> s;
  T::fragment<float, 64> f;
  for (int i : T::parallel(64))
    f(i) = s(i + 1); // expected-error {{index ranges over [1, 64], which reaches outside dimension 0 of 's' (extent 64)}} expected-note {{guard the access with if (...) or narrow the loop}}
}

[[tile::kernel]] void k_shifted_guarded(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 64> s;
  T::fragment<float, 64> f;
  for (int i : T::parallel(64)) {
    f(i) = i + 1 < 64 ? s(i + 1) : 0.0f;
    if (i > 0)
      f(i) += s(i - 1);
    f(i) += (i < 32 && s(i + 32) > 0.0f) ? 1.0f : 0.0f;
  }
  T::copy(f, x.at(0));
}

[[tile::kernel]] void k_serial_loop(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::local<float, 8> l;
  for (int k = 0; k < 16; k += 2)
    l(k / 2) = 0.0f; // fine: k / 2 in [0, 7]
  for (int k : T::serial(4, 12))
    l(k) = 1.0f; // expected-error {{index ranges over [4, 11], which reaches outside dimension 0 of 'l' (extent 8)}} expected-note {{valid indices of 'l' in dimension 0 are 0 to 7}}
}

[[tile::kernel]] void k_region(T::tensor<float, 2> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 64, 32> s;
  T::fragment<float, 16, 32> f;
  for (int k : T::serial(4))
    T::copy(s.at(k * 16, 0), f); // fine: rows k * 16 .. k * 16 + 15
  for (int k : T::serial(5))
    T::copy(f, s.at(k * 16, 0)); // expected-error {{the tile's first index ranges over [0, 64] (with 16 elements), which reaches outside dimension 0 of 's' (extent 64)}} expected-note {{guard the access}}
}

[[tile::kernel]] void k_div_zero(T::tensor<int, 1> x) {
  auto [bx] = T::grid(1);
  int v = x(0);
  x(1) = v / 0; // expected-error {{integer division by zero}} expected-note {{test the divisor first}} expected-warning {{division by zero is undefined}}
}

[[tile::kernel]] void k_mod_zero(T::tensor<int, 1> x) {
  auto [bx] = T::grid(1);
  int v = x(0);
  v %= 0; // expected-error {{integer remainder by zero}} expected-note {{test the divisor first}} expected-warning {{remainder by zero is undefined}}
}

[[tile::kernel]] void k_shift(T::tensor<int, 1> x) {
  auto [bx] = T::grid(1);
  int v = x(0);
  x(1) = v << 40; // expected-error {{shift by 40 bits of a 32-bit value}} expected-note {{shift counts run from 0 to 31}} expected-warning {{shift count >= width of type}}
}

[[tile::kernel]] void k_shift_negative(T::tensor<long, 1> x) {
  auto [bx] = T::grid(1);
  long v = x(0);
  x(1) = v >> -1; // expected-error {{shift by -1 bits of a 64-bit value}} expected-note {{shift counts run from 0 to 63}} expected-warning {{shift count is negative}}
}

[[tile::kernel]] void k_float_div(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  x(1) = x(0) / 0.0f; // fine: infinity or NaN
}

[[tile::kernel]] void k_unroll(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  for (int i : T::unroll(1 << 20)) // expected-error {{tile::unroll of 1048576 iterations makes more than 1024 copies of its body}} expected-note {{write tile::serial(n) (or a plain for loop) for this one}}
    x(i) = 0.0f;
}

[[tile::kernel]] void k_unroll_nested(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  for (int i : T::unroll(64))
    for (int j : T::unroll(32)) // expected-error {{tile::unroll of 32 iterations inside unrolled loops of 64 makes more than 1024 copies of its body}} expected-note {{unroll short loops only}}
      x(i * 32 + j) = 0.0f;
}

[[tile::kernel]] void k_too_many_elements(T::tensor<float, 1> x) {
  auto [bx] = T::grid(1);
  T::shared<float, 1 << 16, 1 << 16> s; // expected-error {{tile buffer 's' has more than 2147483647 elements}} expected-note {{a tile buffer holds one block's tile}}
}
