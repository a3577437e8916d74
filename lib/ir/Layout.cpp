#include "ir/Layout.h"

namespace tile::ir {

std::int64_t FragmentLayout::slots() const {
  switch (kind) {
  case Matrix: return row_steps() * col_steps() * vec;
  case RowVector: return row_steps();
  case ColumnVector: return col_steps() * vec;
  case MmaAccumulator: return atoms_m() * atoms_n() * 4;
  }
  return 0;
}

ElementPlace element_at(const FragmentLayout &l, int thread, std::int64_t rs, std::int64_t cs, std::int64_t v) {
  if (l.kind == FragmentLayout::MmaAccumulator) {
    const int warp = thread / 32, lane = thread % 32;
    const std::int64_t wm = warp % l.warps_m, wn = warp / l.warps_m;
    return {wm * (l.rows / l.warps_m) + rs * 16 + lane / 4 + (v / 2) * 8,
            wn * (l.cols / l.warps_n) + cs * 8 + (lane % 4) * 2 + v % 2, (rs * l.atoms_n() + cs) * 4 + v};
  }
  const std::int64_t row = rs * l.row_threads + thread / l.threads_per_row;
  const std::int64_t col = (cs * l.threads_per_row + thread % l.threads_per_row) * l.vec + v;
  switch (l.kind) {
  case FragmentLayout::RowVector: return {row, 0, rs};
  case FragmentLayout::ColumnVector: return {0, col, cs * l.vec + v};
  default: return {row, col, (rs * l.col_steps() + cs) * l.vec + v};
  }
}

FragmentLayout matrix_layout(std::int64_t rows, std::int64_t cols, int threads) {
  FragmentLayout l;
  l.rows = rows;
  l.cols = cols;
  // Vectors of up to 8 elements (16 bytes of bf16), narrower while that would leave
  // threads without a vector.
  int vec = 8;
  while (vec > 1 && (cols % vec != 0 || rows * cols / vec < threads))
    vec /= 2;
  l.vec = vec;
  // Threads per row: a power of two dividing both the row's vectors and the threads; at
  // most a warp (row reductions then combine a row's threads by warp shuffles alone) when
  // the rows can keep every warp busy, else up to the threads per row that spreads the
  // rows over all threads (a row over several warps: reductions also combine the warps
  // through shared memory).
  int tc = 1;
  const int max_tc = rows * 32 >= threads ? 32 : int(threads / rows);
  while (tc * 2 <= max_tc && (cols / vec) % (tc * 2) == 0 && threads % (tc * 2) == 0)
    tc *= 2;
  l.threads_per_row = tc;
  l.row_threads = threads / tc;
  return l;
}

std::string to_string(const FragmentLayout &l) {
  if (l.kind == FragmentLayout::MmaAccumulator)
    return "mma(" + std::to_string(l.rows) + "x" + std::to_string(l.cols) + ", " + std::to_string(l.warps_m) + "x" +
           std::to_string(l.warps_n) + " warps of " + std::to_string(l.atoms_m()) + "x" +
           std::to_string(l.atoms_n()) + " m16n8 atoms)";
  std::string m = "matrix(" + std::to_string(l.rows) + "x" + std::to_string(l.cols) + ", vec " + std::to_string(l.vec) +
                  ", " + std::to_string(l.row_threads) + "x" + std::to_string(l.threads_per_row) + " threads)";
  switch (l.kind) {
  case FragmentLayout::Matrix: return m;
  case FragmentLayout::RowVector: return "rows of " + m;
  case FragmentLayout::ColumnVector: return "columns of " + m;
  case FragmentLayout::MmaAccumulator: break;
  }
  return m;
}

} // namespace tile::ir
