// Scales a vector whose length divides no tile size; prints PASS when every element is right.
#include <cmath>
#include <cstdio>
#include <tile/tile.h>
#include <vector>

namespace T = tile;

[[tile::kernel]] void scale(T::tensor<const float, 1> x, T::tensor<float, 1> y, float alpha) {
  const int n = x.size(0);
  auto [bx] = T::grid(T::ceildiv(n, 256));
  T::fragment<float, 256> f;
  T::copy(x.at(bx * 256), f);
  for (int i : T::parallel(256))
    f(i) = f(i) * alpha;
  T::copy(f, y.at(bx * 256));
}

int main() {
  const int n = 1000;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i)
    x[i] = float(i) - 500.0f;
  T::array<float, 1> X({n}), Y({n});
  X.copy_from(x);
  Y.copy_from(std::vector<float>(n, NAN));
  scale(X, Y, 2.5f);
  auto y = Y.to_vector();
  for (int i = 0; i < n; ++i)
    if (y[i] != x[i] * 2.5f) {
      std::printf("FAIL at %d: %g\n", i, y[i]);
      return 1;
    }
  std::printf("PASS\n");
}
