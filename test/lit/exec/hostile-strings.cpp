// Strings the user controls reach the generated source only as inert text: a file name
// holding a newline and a definition (it lands in the comment above each kernel), and
// print and device_assert strings holding quotes, backslashes, newlines, '%', a trigraph
// and bytes of UTF-8. Nothing of them runs, and they print as written.
// RUN: rm -rf %t && mkdir -p %t/src %t/gen
// The file is this one, under a name that ends the comment and defines a static
// initializer (which would print INJECTED when the image is loaded):
// RUN: sh -c 'cp "$1" "$2/src/k$(printf "\nstatic int injected = __builtin_printf(\"INJECTED\\\\n\");\n#define TILE_TAIL(x)\nTILE_TAIL(").cpp"' sh %s %t
// RUN: %tile-cxx -O1 %t/src/*.cpp -o %t/prog -fplugin-arg-tile-emit-source=%t/gen -fplugin-arg-tile-targets=cpu
// RUN: %t/prog 2>&1 | FileCheck %s --implicit-check-not='{{^INJECTED}}'
// RUN: cat %t/gen/*.cpu.cpp | FileCheck %s --check-prefix=SOURCE
// RUN: %tile-cxx -fsyntax-only %t/src/*.cpp -fplugin-arg-tile-targets=cuda -fplugin-arg-tile-print-after=codegen 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SOURCE
// SOURCE: // hostile ({{.*}}/src/k\x0astatic int injected = __builtin_printf("INJECTED\x5cn");\x0a#define TILE_TAIL(x)\x0aTILE_TAIL(.cpp:{{[0-9]+}})
// SOURCE-NOT: {{^}}static int injected
// CHECK: [block 0,0,0] quote " backslash \ percent %d trigraph ??/ end
// CHECK-NEXT: second line */ // é
// CHECK: message: {{.*}}assert "quoted" \ ??/ 100% {{$}}
// CHECK-NEXT: next line é
// CHECK: PASS

#include <tile/tile.h>

#include <cstdio>
#include <string>

namespace T = tile;

[[tile::kernel]] void hostile(T::tensor<float, 1> x, int fail) {
  auto [bx] = T::grid(1);
  T::print("quote \" backslash \\ percent %d trigraph ??/ end\nsecond line */ // \xc3\xa9");
  x(bx) = 1.0f;
  T::device_assert(fail == 0, "assert \"quoted\" \\ ??/ 100% \nnext line \xc3\xa9");
}

int main() {
  T::array<float, 1> x({1});
  hostile(x, 0);
  T::synchronize();
  std::fflush(stdout);
  try {
    hostile(x, 1);
    T::synchronize();
    std::printf("FAIL: no error\n");
    return 1;
  } catch (const T::error &e) {
    std::printf("message: %s\n", e.what());
  }
  std::printf("PASS\n");
}
