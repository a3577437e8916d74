// Atomics on a tensor element return the element's value before them: slot allocation
// inside a parallel loop (each token of an expert gets a distinct slot), a ticket a block
// takes outside parallel loops (one atomic a block, its value seen by every thread, three
// rounds in a serial loop), exchange and compare-exchange, a float add and a 64-bit
// maximum, on counts that divide no tile size.
// RUN: %tile-cxx %s -O2 -o %t && %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS slots
// CHECK: PASS tickets
// CHECK: PASS exchange
// CHECK: PASS compare_exchange
// CHECK: PASS float_add_old
// CHECK: PASS max_i64_old
// CHECK-NOT: FAIL

#include "Inputs/check.h"

#include <algorithm>
#include <map>
#include <set>

namespace T = tile;

/// Slot[t] = the number of tokens of expert Expert[t] counted before it, Count[e] the total.
[[tile::kernel]] void slots(T::tensor<const int, 1> Expert, T::tensor<int, 1> Count, T::tensor<int, 1> Slot) {
  const int n = Expert.size(0);
  auto [bx] = T::grid(T::ceildiv(n, 64), T::threads(64));
  for (int i : T::parallel(64)) {
    const int t = bx * 64 + i;
    if (t < n) {
      const int s = T::atomic_add(Count(Expert(t)), 1);
      Slot(t) = s;
    }
  }
}

/// Three rounds: each block takes a ticket from Counter[0]; every thread stores what it saw.
[[tile::kernel]] void tickets(T::tensor<int, 1> Counter, T::tensor<int, 3> Seen) {
  auto [bx] = T::grid(Seen.size(0), T::threads(96));
  for (int r : T::serial(3)) {
    const int ticket = T::atomic_add(Counter(0), 1);
    for (int i : T::parallel(96))
      Seen(bx, r, i) = ticket;
  }
}

/// Each block stores bx + 1 into Cell[0] and keeps what it replaced.
[[tile::kernel]] void exchange(T::tensor<long long, 1> Cell, T::tensor<long long, 1> Old) {
  auto [bx] = T::grid(Old.size(0), T::threads(32));
  const long long was = T::atomic_exchange(Cell(0), bx + 1);
  for (int i : T::parallel(32))
    if (i == 0)
      Old(bx) = was;
}

/// Each block tries to claim every flag (0 -> bx + 1) and keeps what it found.
[[tile::kernel]] void claim(T::tensor<int, 1> Flag, T::tensor<int, 2> Found) {
  const int k = Flag.size(0);
  auto [bx] = T::grid(Found.size(0), T::threads(32));
  for (int c : T::serial(T::ceildiv(k, 32)))
    for (int i : T::parallel(32))
      if (c * 32 + i < k) {
        const int found = T::atomic_compare_exchange(Flag(c * 32 + i), 0, bx + 1);
        Found(bx, c * 32 + i) = found;
      }
}

/// Acc[0] += 1 once an iteration; Old[t] the value before.
[[tile::kernel]] void float_add(T::tensor<float, 1> Acc, T::tensor<float, 1> Old) {
  const int n = Old.size(0);
  auto [bx] = T::grid(T::ceildiv(n, 128));
  for (int i : T::parallel(128))
    if (bx * 128 + i < n) {
      const float before = T::atomic_add(Acc(0), 1.0f);
      Old(bx * 128 + i) = before;
    }
}

/// Max[0] = max(Max[0], V[t]); Old[t] the value before.
[[tile::kernel]] void max_i64(T::tensor<const long long, 1> V, T::tensor<long long, 1> Max, T::tensor<long long, 1> Old) {
  const int n = V.size(0);
  auto [bx] = T::grid(T::ceildiv(n, 32), T::threads(32));
  for (int i : T::parallel(32))
    if (bx * 32 + i < n) {
      const long long before = T::atomic_max(Max(0), V(bx * 32 + i));
      Old(bx * 32 + i) = before;
    }
}

void run_slots() {
  const int n = 1000, experts = 7;
  std::vector<int> e(n);
  check::rng r(5);
  for (int &x : e)
    x = int(r.integer(0, experts - 1));
  auto E = check::upload(e, {n});
  auto C = check::upload(std::vector<int>(experts, 0), {experts});
  auto S = check::upload(check::poisoned<int>(n), {n});
  slots(E, C, S);
  const std::vector<int> count = C.to_vector(), slot = S.to_vector();
  std::map<int, std::set<int>> seen;
  std::vector<int> want(experts, 0);
  for (int t = 0; t < n; ++t) {
    ++want[e[t]];
    seen[e[t]].insert(slot[t]);
  }
  bool ok = count == want;
  for (int x = 0; x < experts; ++x) // the slots of an expert: 0 .. count - 1, each once
    ok &= int(seen[x].size()) == want[x] && (want[x] == 0 || (*seen[x].begin() == 0 && *seen[x].rbegin() == want[x] - 1));
  check::report("slots", ok);
}

void run_tickets() {
  const int blocks = 37;
  auto C = check::upload(std::vector<int>{5}, {1});
  auto Seen = check::upload(check::poisoned<int>(blocks * 3 * 96), {blocks, 3, 96});
  tickets(C, Seen);
  const std::vector<int> seen = Seen.to_vector();
  std::set<int> all;
  bool ok = C.to_vector()[0] == 5 + 3 * blocks;
  for (int b = 0; b < blocks; ++b)
    for (int r = 0; r < 3; ++r) {
      const int t = seen[(b * 3 + r) * 96];
      for (int i = 0; i < 96; ++i)
        ok &= seen[(b * 3 + r) * 96 + i] == t; // every thread saw the block's ticket
      if (r > 0)
        ok &= t > seen[(b * 3 + r - 1) * 96];
      all.insert(t);
    }
  ok &= int(all.size()) == 3 * blocks && *all.begin() == 5 && *all.rbegin() == 5 + 3 * blocks - 1;
  check::report("tickets", ok);
}

void run_exchange() {
  const int blocks = 50;
  auto Cell = check::upload(std::vector<long long>{0}, {1});
  auto Old = check::upload(check::poisoned<long long>(blocks), {blocks});
  exchange(Cell, Old);
  std::vector<long long> values = Old.to_vector();
  values.push_back(Cell.to_vector()[0]);
  std::sort(values.begin(), values.end());
  bool ok = true;
  for (int i = 0; i <= blocks; ++i)
    ok &= values[i] == i; // 0 (the start) and every block's bx + 1, each once
  check::report("exchange", ok);
}

void run_compare_exchange() {
  const int blocks = 23, k = 70;
  auto Flag = check::upload(std::vector<int>(k, 0), {k});
  auto Found = check::upload(check::poisoned<int>(blocks * k), {blocks, k});
  claim(Flag, Found);
  const std::vector<int> flag = Flag.to_vector(), found = Found.to_vector();
  bool ok = true;
  for (int c = 0; c < k; ++c) {
    int winners = 0;
    for (int b = 0; b < blocks; ++b) {
      const int f = found[b * k + c];
      if (f == 0) {
        ++winners;
        ok &= flag[c] == b + 1;
      } else {
        ok &= f == flag[c];
      }
    }
    ok &= winners == 1;
  }
  check::report("compare_exchange", ok);
}

void run_float_add() {
  const int n = 1000;
  auto Acc = check::upload(std::vector<float>{0.0f}, {1});
  auto Old = check::upload(check::poisoned<float>(n), {n});
  float_add(Acc, Old);
  std::vector<float> old = Old.to_vector();
  std::sort(old.begin(), old.end());
  bool ok = Acc.to_vector()[0] == float(n);
  for (int i = 0; i < n; ++i)
    ok &= old[i] == float(i);
  check::report("float_add_old", ok);
}

void run_max_i64() {
  const int n = 300;
  std::vector<long long> v(n);
  check::rng r(9);
  for (auto &x : v)
    x = (long long)(r.integer(-1000000, 1000000)) << 30;
  auto V = check::upload(v, {n});
  const long long start = -(1ll << 62);
  auto M = check::upload(std::vector<long long>{start}, {1});
  auto Old = check::upload(check::poisoned<long long>(n), {n});
  max_i64(V, M, Old);
  const std::vector<long long> old = Old.to_vector();
  const long long most = *std::max_element(v.begin(), v.end());
  std::set<long long> values(v.begin(), v.end());
  values.insert(start);
  bool ok = M.to_vector()[0] == most;
  int at_start = 0;
  for (int t = 0; t < n; ++t) {
    ok &= values.count(old[t]) > 0 && old[t] <= most; // some value the element held
    at_start += old[t] == start;
  }
  ok &= at_start >= 1; // the first to come found the start
  check::report("max_i64_old", ok);
}

int main() {
  run_slots();
  run_tickets();
  run_exchange();
  run_compare_exchange();
  run_float_add();
  run_max_i64();
  return check::result();
}
