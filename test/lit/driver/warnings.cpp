// tile's headers and the code the plugin adds are clean under -Wall -Wextra -Werror, with the
// plugin (tile-c++) and without it (plain clang++, where [[tile::kernel]] is an attribute
// clang does not know: that one warning is the only one silenced).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tile-cxx -Wall -Wextra -Werror -c %s -o %t/with-plugin.o -fplugin-arg-tile-targets=cpu
// RUN: %clangxx -std=c++20 -Wall -Wextra -Werror -Wno-unknown-attributes -I%include -c %s -o %t/without-plugin.o
#include <tile/tile.h>

namespace T = tile;

// Every tile operation whose declaration has parameters (reduce_*, cumsum, gemm, ...).
[[tile::kernel]] void ops(T::tensor<const float, 2> x, T::tensor<float, 1> sums, T::tensor<float, 2> y) {
  auto [bx] = T::grid(T::ceildiv(x.size(0), 16));
  T::fragment<float, 16, 16> f, g;
  T::fragment<float, 16> r;
  T::shared<float, 16, 16> s;
  T::copy(x.at(bx * 16, 0), f);
  T::reduce_sum(f, r, 1);
  T::reduce_max(f, r, 1, false);
  T::reduce_min(f, r, 1);
  T::reduce_absmax(f, r, 1);
  T::reduce_abssum(f, r, 1, true);
  T::cumsum(f, g, 1, true);
  T::copy(f, s);
  T::clear(f);
  T::gemm(s, s, f);
  for (auto [i, j] : T::parallel(16, 16))
    g(i, j) = g(i, j) + f(i, j);
  T::copy(r, sums.at(bx * 16));
  T::copy(g, y.at(bx * 16, 0));
}
