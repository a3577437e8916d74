// CPU images take the sanitizers of the translation unit that calls their kernels: in a program
// compiled with -fsanitize=address,undefined, a kernel's write just past the end of an array is
// reported by ASan and its signed overflow by UBSan, at the generated source's line; the
// kernel's frame in the report has its entry's name (the image is loaded under a name that
// the symbolizer, another process, can open).
// RUN: %tile-cxx -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined %s -o %t
// RUN: %t 14 7 | FileCheck %s --check-prefix=OK
// RUN: not %t 15 7 2>&1 | FileCheck %s --check-prefix=ASAN
// RUN: not %t 3 2147483647 2>&1 | FileCheck %s --check-prefix=UBSAN
// OK: PASS
// ASAN: ERROR: AddressSanitizer: heap-buffer-overflow
// ASAN: WRITE of size 4
// ASAN-NEXT: #0 {{.*}} in tile_cpu__Z4pokeN4tile6tensorIiLi1EEEii_{{.*}} (/proc/{{[0-9]+}}/fd/
// ASAN: 0 bytes after 60-byte region
// UBSAN: sanitize.cpu.cpp:{{[0-9]+}}:{{[0-9]+}}: runtime error: signed integer overflow: 2147483647 + 1

#include <cstdio>
#include <cstdlib>
#include <tile/tile.h>
#include <vector>

namespace T = tile;

[[tile::kernel]] void poke(T::tensor<int, 1> Out, int index, int step) {
  auto [bx] = T::grid(1);
  Out(index + bx) = step + 1;
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  const int index = std::atoi(argv[1]), step = std::atoi(argv[2]);
  T::array<int, 1> out({15}); // 60 bytes: ASan sees the allocation's exact end
  out.copy_from(std::vector<int>(15, -1));
  poke(out, index, step);
  std::vector<int> got = out.to_vector();
  bool ok = true;
  for (int i = 0; i < 15; ++i)
    ok &= got[i] == (i == index ? step + 1 : -1);
  std::printf("%s\n", ok ? "PASS" : "FAIL");
}
