// Prints the directed roundings of fuzz.h (sums, products, quotients of long doubles, and
// rounding to every element format in every mode) for random operands; check_reference.py
// recomputes them with exact rational arithmetic. The interval reference of the random
// tester is only as sound as these.
#include "fuzz.h"

#include <cstdio>

int main(int argc, char **argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 4000;
  fz::Rng r(7);
  const fz::Fmt *formats[] = {&fz::F32, &fz::BF16, &fz::F16, &fz::E4M3, &fz::E5M2, &fz::F64};
  auto operand = [&]() -> long double {
    long double v = (long double)r.uniform(-1, 1) * std::ldexp(1.0L, int(r.next() % 60) - 30);
    switch (r.next() % 5) {
    case 0: return (float)v; // values of the kernels' types: exact products in long double
    case 1: return (double)v;
    case 2: return (long double)(float)v + (long double)(float)r.uniform(-1, 1) * 1e-12L;
    case 3: return std::ldexp((long double)(int)(r.next() % 1000), -(int)(r.next() % 160)); // subnormals
    default: return v;
    }
  };
  for (int i = 0; i < n; ++i) {
    const long double a = operand(), b = operand();
    std::printf("%La %La %La %La %La %La %La %La", a, b, fz::add_dir(a, b, -1), fz::add_dir(a, b, 1),
                fz::mul_dir(a, b, -1), fz::mul_dir(a, b, 1), fz::div_dir(a, b, -1), fz::div_dir(a, b, 1));
    for (const fz::Fmt *f : formats)
      for (int mode = -1; mode <= 1; ++mode)
        std::printf(" %La", fz::round_to(a, *f, mode));
    std::printf("\n");
  }
}
