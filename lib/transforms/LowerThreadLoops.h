// lower-thread-loops: a thread's share of a Threads loop of constant extent as a loop of
// its own (GPU targets), so that the codegen prints loops instead of deciding how a
// thread walks its iterations, and so that indices are sums of a per-thread part and a
// part that is the same in every thread.
//
// A Threads loop of E iterations (a constant) on a block of NT threads, where each thread
// runs at most max_thread_loop_trips of them:
//
//   for t in threads(E) { body }
//
// becomes
//
//   for r in slots(ceil(E / NT)) { if (tid + r * NT < E) { body[t := tid + r * NT] } }
//
// (the test only where NT does not divide E; the loop of one trip still a Slots loop, since
// its body is per-thread work). Divisions and remainders of the substituted index by a
// positive constant c that divides NT split: (tid + r * NT + x) / c = (tid + x) / c +
// r * (NT / c) and (tid + r * NT + x) % c = (tid + x) % c, where tid + x cannot be
// negative. Threads loops of more iterations a thread, or of run-time extents, stay: the
// codegen prints them as strided loops.
//
// Requires: bind-threads (Threads loops), insert-sync and plan-shared-memory (their
//   analyses read Threads loops); Kernel::threads.
// Establishes: no Threads loop of constant extent and at most max_thread_loop_trips trips;
//   Kernel::thread_index is set where the pass made a loop.
#pragma once

#include "ir/IR.h"

namespace tile::transforms {

/// Threads loops whose threads run more iterations than this each stay loops over the
/// extent with the threads' stride (code size).
inline constexpr std::int64_t max_thread_loop_trips = 8;

ir::Kernel lower_thread_loops(const ir::Kernel &kernel);

} // namespace tile::transforms
