// The checked build (-fplugin-arg-tile-check-bounds): an element access outside its tensor
// (a load, a store, an atomic; indices read from tensors, negative or past the end, in one
// and two dimensions) makes the launch throw tile::error naming the kernel, the tensor, the
// index, the tensor's sizes and the line of the access; the access itself is skipped. Accesses
// that run only under a condition (&&, ?:, if) are checked only where they run, tile copies
// past the tensor's end are clipped as always, kernels that stay inside give their results,
// and a launch after a failure runs normally.
// RUN: %tile-cxx -fplugin-arg-tile-check-bounds %s -O2 -o %t && %t > %t.out
// RUN: FileCheck %s < %t.out
// RUN: FileCheck %s --check-prefix=LINE < %t.out
// CHECK-NOT: FAIL
// CHECK: PASS gather_inside
// CHECK: PASS gather_past_end
// CHECK: PASS gather_negative
// CHECK: PASS after_failure
// CHECK: PASS store_rows_inside
// CHECK: PASS store_row_past_end
// CHECK: PASS atomic_inside
// CHECK: PASS atomic_past_end
// CHECK: PASS conditional_accesses
// CHECK: PASS clipped_copies
// CHECK-NOT: FAIL

#include "Inputs/check.h"

namespace T = tile;

/// Y(r) = X(Idx(r)): an index read from a tensor.
[[tile::kernel]] void gather(T::tensor<const float, 1> X, T::tensor<const int, 1> Idx, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(Y.size(0), 64));
  for (int i : T::parallel(64)) {
    const int r = bx * 64 + i;
    if (r < Y.size(0))
      Y(r) = X(Idx(r)); // LINE: message: {{.*}}'gather'{{.*}}element (1000) of tensor 'X' is outside its sizes (300) ({{.*}}check-bounds.cpp:[[# @LINE]])
  }                     // LINE: message: {{.*}}'gather'{{.*}}element (-3) of tensor 'X' is outside its sizes (300) ({{.*}}check-bounds.cpp:[[# @LINE - 1]])
}

/// Row r of X goes to row Dest(r) of Y.
[[tile::kernel]] void store_rows(T::tensor<const float, 2> X, T::tensor<const int, 1> Dest, T::tensor<float, 2> Y) {
  auto [bx] = T::grid(X.size(0));
  for (int c : T::parallel(64))
    if (c < X.size(1))
      Y(Dest(bx), c) = X(bx, c); // LINE: message: {{.*}}'store_rows'{{.*}}element (9, {{[0-9]+}}) of tensor 'Y' is outside its sizes (9, 40) ({{.*}}check-bounds.cpp:[[# @LINE]])
}

/// Slot(r) = the count of Bin(r)'s bin before r took its place in it.
[[tile::kernel]] void take_slots(T::tensor<const int, 1> Bin, T::tensor<int, 1> Counts, T::tensor<int, 1> Slot) {
  auto [bx] = T::grid(T::ceildiv(Bin.size(0), 64));
  for (int i : T::parallel(64)) {
    const int r = bx * 64 + i;
    if (r < Bin.size(0)) {
      const int old = T::atomic_add(Counts(Bin(r)), 1); // LINE: message: {{.*}}'take_slots'{{.*}}element (8) of tensor 'Counts' is outside its sizes (8) ({{.*}}check-bounds.cpp:[[# @LINE]])
      Slot(r) = old;
    }
  }
}

/// Y(r) = X(r) where r < X.size(0) and X(r) > 0, else 0, for the 128 elements of Y: the
/// reads of X past its end do not run.
[[tile::kernel]] void positive(T::tensor<const float, 1> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(Y.size(0), 64));
  for (int i : T::parallel(64)) {
    const int r = bx * 64 + i;
    const bool ok = r < X.size(0) && X(r) > 0.0f;
    Y(r) = ok ? X(r) : 0.0f;
  }
}

/// Y = 2 X through tiles of 64, past the end of X (clipped) at n = 100.
[[tile::kernel]] void twice(T::tensor<const float, 1> X, T::tensor<float, 1> Y) {
  auto [bx] = T::grid(T::ceildiv(X.size(0), 64));
  T::fragment<float, 64> f;
  T::copy(X.at(bx * 64), f);
  for (int i : T::parallel(64))
    f(i) = 2.0f * f(i);
  T::copy(f, Y.at(bx * 64));
}

int main() {
  // gather
  const int nx = 300, ny = 150;
  auto x = check::random<float>(nx);
  std::vector<int> idx(ny);
  for (int r = 0; r < ny; ++r)
    idx[r] = int(check::inputs.integer(0, nx - 1));
  auto X = check::upload(x, {nx});
  auto run_gather = [&](const std::vector<int> &index) {
    auto Idx = check::upload(index, {ny});
    auto Y = check::upload(check::poisoned<float>(ny), {ny});
    gather(X, Idx, Y);
    return Y.to_vector();
  };
  std::vector<double> ref(ny);
  for (int r = 0; r < ny; ++r)
    ref[r] = x[idx[r]];
  check::close("gather_inside", ref, run_gather(idx), 0);
  auto past = idx;
  past[77] = 1000;
  check::throws("gather_past_end", [&] { run_gather(past); }, {"gather", "'X'", "(1000)", "(300)"});
  auto negative = idx;
  negative[149] = -3;
  check::throws("gather_negative", [&] { run_gather(negative); }, {"gather", "'X'", "(-3)"});
  check::close("after_failure", ref, run_gather(idx), 0);

  // store_rows: 9 rows of 40 into a permutation of Y's rows, then one row past the end.
  const int rows = 9, cols = 40;
  auto xs = check::random<float>(rows * cols);
  std::vector<int> dest{4, 0, 8, 1, 7, 2, 6, 3, 5};
  auto Xs = check::upload(xs, {rows, cols});
  auto run_rows = [&](const std::vector<int> &d) {
    auto Dest = check::upload(d, {rows});
    auto Ys = check::upload(check::poisoned<float>(rows * cols), {rows, cols});
    store_rows(Xs, Dest, Ys);
    return Ys.to_vector();
  };
  std::vector<double> moved(rows * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      moved[dest[r] * cols + c] = xs[r * cols + c];
  check::close("store_rows_inside", moved, run_rows(dest), 0);
  auto bad_dest = dest;
  bad_dest[5] = rows;
  check::throws("store_row_past_end", [&] { run_rows(bad_dest); }, {"store_rows", "'Y'", "(9, ", "(9, 40)"});

  // take_slots: 8 bins, 200 items.
  const int items = 200, bins = 8;
  std::vector<int> bin(items);
  for (int &b : bin)
    b = int(check::inputs.integer(0, bins - 1));
  auto run_slots = [&](const std::vector<int> &b, std::vector<int> &slots) {
    auto Bin = check::upload(b, {items});
    auto Counts = check::upload(std::vector<int>(bins, 0), {bins});
    auto Slot = check::upload(check::poisoned<int>(items), {items});
    take_slots(Bin, Counts, Slot);
    slots = Slot.to_vector();
    return Counts.to_vector();
  };
  std::vector<int> slots, counts_ref(bins, 0);
  for (int b : bin)
    ++counts_ref[b];
  auto counts = run_slots(bin, slots);
  // Each bin's slots are 0 .. count - 1, each once.
  bool distinct = true;
  for (int b = 0; b < bins; ++b) {
    std::vector<int> seen(counts_ref[b], 0);
    for (int r = 0; r < items; ++r)
      if (bin[r] == b)
        distinct &= slots[r] >= 0 && slots[r] < counts_ref[b] && !seen[slots[r]]++;
  }
  check::report("atomic_inside", counts == counts_ref && distinct);
  auto bad_bin = bin;
  bad_bin[123] = bins;
  check::throws("atomic_past_end", [&] { run_slots(bad_bin, slots); }, {"take_slots", "'Counts'", "(8)"});

  // positive: X has 100 elements, Y 128.
  const int n = 100, m = 128;
  auto xp = check::random<float>(n);
  auto Xp = check::upload(xp, {n});
  auto Yp = check::upload(check::poisoned<float>(m), {m});
  positive(Xp, Yp);
  std::vector<double> pos(m, 0.0);
  for (int r = 0; r < n; ++r)
    pos[r] = xp[r] > 0 ? xp[r] : 0.0;
  check::close("conditional_accesses", pos, Yp.to_vector(), 0);

  // twice: tiles past the end of X and Y at n = 100.
  auto Yt = check::upload(check::poisoned<float>(n), {n});
  twice(Xp, Yt);
  std::vector<double> dbl(n);
  for (int r = 0; r < n; ++r)
    dbl[r] = 2.0 * xp[r];
  check::close("clipped_copies", dbl, Yt.to_vector(), 0);
  return check::result();
}
