// ptxas's report of each CUDA entry in the remarks: its registers, stack and spills, per
// architecture, from the compile and, unchanged, from an image taken from the cache (which
// keeps nvcc's log beside the image); -fsyntax-only compiles nothing and says nothing of it.
// REQUIRES: nvcc
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tile-cxx -c %s -o %t/a.o -fplugin-arg-tile-targets=cuda:sm_90a+sm_80 -fplugin-arg-tile-cache=%t/cache \
// RUN:   -fplugin-arg-tile-remarks -fplugin-arg-tile-verbose 2> %t/cold.txt
// RUN: FileCheck %s --check-prefixes=REPORT,COLD < %t/cold.txt
// RUN: %tile-cxx -c %s -o %t/b.o -fplugin-arg-tile-targets=cuda:sm_90a+sm_80 -fplugin-arg-tile-cache=%t/cache \
// RUN:   -fplugin-arg-tile-remarks -fplugin-arg-tile-verbose 2> %t/warm.txt
// RUN: FileCheck %s --check-prefixes=REPORT,WARM < %t/warm.txt
// REPORT-DAG: ptxas-report.cpp:[[@LINE+12]]:23: remark: [cuda:sm_90a] kernel 'twice': {{[0-9]+}} registers a thread (ptxas), no stack, no spills
// REPORT-DAG: ptxas-report.cpp:[[@LINE+11]]:23: remark: [cuda:sm_80] kernel 'twice': {{[0-9]+}} registers a thread (ptxas), no stack, no spills
// A thread's array indexed by data lives on the stack; 320 values live at once do not fit
// 255 registers and spill. (The figures are ptxas's: only their form is checked.)
// REPORT-DAG: ptxas-report.cpp:[[@LINE+17]]:23: remark: [cuda:sm_90a] kernel 'indexed': {{[0-9]+}} registers a thread (ptxas), {{[1-9][0-9]*}} bytes of stack, no spills
// REPORT-DAG: ptxas-report.cpp:[[@LINE+25]]:23: remark: [cuda:sm_90a] kernel 'crowded': 255 registers a thread (ptxas), {{[0-9]+}} bytes of stack, spills: {{[1-9][0-9]*}} bytes stored, {{[1-9][0-9]*}} bytes loaded
// COLD: remark: tile: cuda image of ptxas-report.cpp (3 kernels) compiled
// WARM: remark: tile: cuda image of ptxas-report.cpp (3 kernels) loaded from cache, no device compiler run
// RUN: %tile-cxx -fsyntax-only %s -fplugin-arg-tile-targets=cuda:sm_90a -fplugin-arg-tile-remarks 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SYNTAX
// SYNTAX-NOT: (ptxas)
#include <tile/tile.h>
[[tile::kernel]] void twice(tile::tensor<float, 1> x) {
  auto [bx] = tile::grid(tile::ceildiv(x.size(0), 128));
  tile::fragment<float, 128> f;
  tile::copy(x.at(bx * 128), f);
  for (int i : tile::parallel(128))
    f(i) = f(i) * 2.0f;
  tile::copy(f, x.at(bx * 128));
}

[[tile::kernel]] void indexed(tile::tensor<float, 1> x, tile::tensor<const int, 1> idx) {
  auto [bx] = tile::grid(tile::ceildiv(x.size(0), 512));
  tile::local<float, 512> l;
  tile::copy(x.at(0), l);
  for (int i = 0; i < 512; ++i)
    l(idx(i) & 511) += 1.0f;
  tile::copy(l, x.at(bx * 512));
}

[[tile::kernel]] void crowded(tile::tensor<float, 1> x, int n) {
  auto [bx] = tile::grid(tile::ceildiv(x.size(0), 320));
  tile::local<float, 320> l;
  tile::copy(x.at(0), l);
  for (int k = 0; k < n; ++k)
    for (int i : tile::unroll(320))
      l(i) = l(i) * l((i + 7) % 320) + 1.0f;
  tile::copy(l, x.at(bx * 320));
}
