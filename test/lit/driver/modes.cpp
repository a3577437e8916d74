// The plugin works with -c, -S, -emit-llvm and -fsyntax-only: the kernel's body becomes a
// launch stub and the object registers its device image at start-up.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tile-cxx -c %s -o %t/a.o
// RUN: llvm-nm %t/a.o | FileCheck %s --check-prefix=OBJ
// OBJ-DAG: T _Z6squareN4tile6tensorIfLi1EEE
// OBJ-DAG: b _ZL{{[0-9]+}}__tile_image_0
// OBJ-DAG: U _ZN4tile2rt13launch_packedEPKclllPKNS0_10kernel_argEiPKNS_6streamE
// OBJ-DAG: U _ZN4tile2rt14register_imageEPKcS2_m
// RUN: %tile-cxx -S -emit-llvm %s -o - | FileCheck %s --check-prefix=IR
// IR: define{{.*}} void @_Z6squareN4tile6tensorIfLi1EEE(
// IR: call void @_ZN4tile2rt6launchIJNS_6tensorIfLi1EEEEEEvPKclllDpRKT_(ptr noundef @.str
// IR: call noundef i32 @_ZN4tile2rt14register_imageEPKcS2_m(ptr noundef @.str{{.*}}, ptr noundef @.str{{.*}}, i64 noundef {{[0-9]+}})
// RUN: %tile-cxx -S %s -o %t/a.s
// RUN: FileCheck %s --check-prefix=ASM < %t/a.s
// ASM: _Z6squareN4tile6tensorIfLi1EEE:
// RUN: %tile-cxx -fsyntax-only %s
// RUN: %tile-cxx %s -o %t/prog && env TILE_DEVICE=cpu %t/prog | FileCheck %s --check-prefix=EXEC
// EXEC: PASS

#include <cstdio>
#include <tile/tile.h>
#include <vector>

[[tile::kernel]] void square(tile::tensor<float, 1> x) {
  auto [bx] = tile::grid(tile::ceildiv(x.size(0), 32));
  tile::fragment<float, 32> f;
  tile::copy(x.at(bx * 32), f);
  for (int i : tile::parallel(32))
    f(i) = f(i) * f(i);
  tile::copy(f, x.at(bx * 32));
}

int main() {
  std::vector<float> v(70);
  for (int i = 0; i < 70; ++i)
    v[i] = float(i);
  tile::array<float, 1> x({70});
  x.copy_from(v);
  square(x);
  auto r = x.to_vector();
  for (int i = 0; i < 70; ++i)
    if (r[i] != float(i * i)) {
      std::printf("FAIL %d %g\n", i, r[i]);
      return 1;
    }
  std::printf("PASS\n");
}
