// Constants converted to the extended float types inside kernels (folded by the compiler)
// hold values of those types: bf16, f16 and fp8 roundings of float and integer constants,
// overflow to infinity (NaN for e4m3), read back as float through tile::cast, a conversion
// and arithmetic; checked against the host types' conversions.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS constants_extended
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

[[tile::kernel]] void constants(T::tensor<float, 1> Y) {
  auto [bx] = T::grid(1);
  T::fragment<float, 12> f;
  for (int i : T::parallel(12)) {
    if (i == 0)
      f(i) = T::cast<float>(T::cast<T::bf16>(0.3f));
    else if (i == 1)
      f(i) = float(T::cast<T::f16>(0.1f));
    else if (i == 2)
      f(i) = T::cast<T::f8e4m3>(0.3f) + 0.0f;
    else if (i == 3)
      f(i) = T::cast<T::f8e5m2>(0.3f) * 1.0f;
    else if (i == 4)
      f(i) = float(T::cast<T::bf16>(257));
    else if (i == 5)
      f(i) = float(T::cast<T::f16>(70000.0f));
    else if (i == 6)
      f(i) = float(T::cast<T::f8e4m3>(500.0f));
    else if (i == 7)
      f(i) = float(T::cast<T::f8e5m2>(-1.0e6f));
    else if (i == 8)
      f(i) = float(T::cast<T::f16>(1.0e-7f)); // subnormal
    else if (i == 9)
      f(i) = float(T::cast<T::bf16>(1.0e-39f)); // subnormal
    else if (i == 10)
      f(i) = T::cast<T::bf16>(0.3f) - 0.3f;
    else
      f(i) = float(T::cast<T::f8e4m3>(0.001f)); // subnormal
  }
  T::copy(f, Y.at(0));
}

int main() {
  using T::bf16, T::f16, T::f8e4m3, T::f8e5m2;
  const std::vector<float> ref = {float(bf16(0.3f)),      float(f16(0.1f)),          float(f8e4m3(0.3f)),
                                  float(f8e5m2(0.3f)),    float(bf16(257.0f)),       float(f16(70000.0f)),
                                  float(f8e4m3(500.0f)),  float(f8e5m2(-1.0e6f)),    float(f16(1.0e-7f)),
                                  float(bf16(1.0e-39f)),  float(bf16(0.3f)) - 0.3f, float(f8e4m3(0.001f))};
  auto Y = check::upload(check::poisoned<float>(ref.size()), {int(ref.size())});
  constants(Y);
  check::equal("constants_extended", ref, Y.to_vector());
  return check::result();
}
