// Tensors of more than 2^31 elements: sizes arrive whole (a size of 2^32 + 512 is not 512),
// index arithmetic past 2^31 does not wrap around on the CPU (on CUDA, whose kernels index
// a dimension in 32 bits, such a tensor is refused at launch with tile::error), and a grid
// past what a block index holds is an error instead of a launch of fewer (or no) blocks.
// The arrays are 2^31 + 77 bytes of which the kernels touch a few kilobytes: untouched
// pages of a large host allocation take no memory.
// RUN: %tile-cxx %s -O2 -o %t && %t 2>&1 | FileCheck %s
// CHECK: PASS tail_past_2^31
// CHECK: PASS size_past_2^32
// CHECK: message: {{.*}}'count_blocks'{{.*}}grid extent past 2^31 - 1 (4294967296, 1, 1)
// CHECK: PASS grid_past_2^31
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <cstdint>
#include <cstdio>

namespace T = tile;

// Blocks from `first` on, each adds 1 to a 256-element tile: the tile's corner b * 256 is
// past 2^31 for the last blocks.
[[tile::kernel]] void add_one_from(T::tensor<std::int8_t, 1> x, int first) {
  auto [bx] = T::grid(T::ceildiv(x.size(0), 256) - first);
  const int b = first + bx;
  T::fragment<std::int8_t, 256> f;
  T::copy(x.at(b * 256), f);
  for (int i : T::parallel(256))
    f(i) = f(i) + 1;
  T::copy(f, x.at(b * 256));
}

// Writes its size to out(0); one block.
[[tile::kernel]] void size_of(T::tensor<const float, 1> x, T::tensor<std::int64_t, 1> out) {
  auto [bx] = T::grid(1);
  out(bx) = x.size(0);
}

// One block per 256 elements of x (which it does not touch).
[[tile::kernel]] void count_blocks(T::tensor<const float, 1> x, T::tensor<int, 1> count) {
  auto [bx] = T::grid(T::ceildiv(x.size(0), 256));
  T::atomic_add(count(0), bx >= 0 ? 1 : 0);
}

int main() {
  const T::device dev = T::current_device();
  {
    const std::int64_t n = (1ll << 31) + 77, tail = 3 * 256 + 77, start = n - tail;
    T::array<std::int8_t, 1> x({n});
    std::vector<std::int8_t> host(tail);
    for (std::int64_t i = 0; i < tail; ++i)
      host[i] = std::int8_t(i % 100);
    T::rt::copy_to_device(dev, x.data() + start, host.data(), tail);
    if (dev.backend == T::backend::cuda) {
      check::throws("tail_past_2^31", [&] { add_one_from(x, int(start / 256)); },
                    {"add_one_from", "2147483725 elements in dimension 0", "at most 2130706432"});
    } else {
      add_one_from(x, int(start / 256));
      std::vector<std::int8_t> got(tail), want(tail);
      T::rt::copy_to_host(dev, got.data(), x.data() + start, tail);
      for (std::int64_t i = 0; i < tail; ++i)
        want[i] = std::int8_t(host[i] + 1);
      check::equal("tail_past_2^31", want, got);
    }
  }
  {
    // A view whose sizes no kernel reads past: only its size is used.
    T::array<float, 1> cell({1});
    T::array<std::int64_t, 1> out({1});
    out.copy_from(std::vector<std::int64_t>{-1});
    T::tensor<const float, 1> view(cell.data(), {(1ll << 32) + 512});
    if (dev.backend == T::backend::cuda) {
      check::throws("size_past_2^32", [&] { size_of(view, out); }, {"4294967808 elements in dimension 0"});
    } else {
      size_of(view, out);
      check::equal("size_past_2^32", std::vector<std::int64_t>{(1ll << 32) + 512}, out.to_vector());
    }
  }
  {
    T::array<float, 1> cell({1});
    T::array<int, 1> count({1});
    count.copy_from(std::vector<int>{0});
    check::throws("grid_past_2^31",
                  [&] { count_blocks(T::tensor<const float, 1>(cell.data(), {1ll << 40}), count); },
                  {"grid extent past 2^31 - 1"});
  }
  return check::result();
}
