// warp-specialize (sm_90a): a `pipelined` loop whose copies feed a warpgroup gemm (wgmma)
// gets a producer warpgroup that moves the copies' tiles by bulk tensor copies (TMA) into
// `stages` copies of the shared buffers, and the kernel's own threads consume them: the
// two sides hand stages to each other through mbarriers, and setmaxnreg gives the
// consumers the registers the producer does not need.
//
// Requires: infer-layout (shared layouts, warpgroup accumulators); copies and gemms still
//   tile operations (before lower-tile-ops).
// Establishes, for the kernel's first such loop, a top-level statement of its body
//   (`for k in pipelined(n, stages S) { copies; consumers }`, NT = the kernel's threads):
//
//     <the top-level declarations before the loop that read no memory but read-only tensor
//      parameters (a count, an index list)>
//     decl B[S, ...] for each buffer a copy fills; decl barriers[2 S]
//     if (tid == 0) { mbarrier_init(barriers[s], 1), mbarrier_init(barriers[S + s], NT) }
//     barrier(whole block)
//     if (tid >= NT) {                          // the producer warpgroup (128 threads)
//       registers_down_to(P)
//       if (tid == NT) for it in serial(0, n) {
//         if (it >= S) mbarrier_wait(barriers[S + it % S], parity (it / S + 1) % 2)  // stage free
//         mbarrier_arrive_expect_tx(barriers[it % S], bytes of the iteration's tiles)
//         bulk_copy(B + stage it % S <- tensor_map[coordinates of iteration it], barriers[it % S])
//       }
//     } else {                                  // the consumers: the rest of the kernel
//       registers_up_to(C)
//       <the other statements before the loop>
//       for it in serial(0, n) {
//         var k = begin + it * step
//         mbarrier_wait(barriers[it % S], parity (it / S) % 2)               // stage filled
//         consumers (B as stage it % S)
//         mbarrier_arrive(barriers[S + it % S])                              // stage read
//       }
//       <the statements after the loop>
//     }
//
//   With overlap_gemms, where the consumers end with a second wgmma gemm G2 after a first
//   G1 (attention: S = Q K^T; softmax; O += P V), G2 is deferred into the next iteration:
//
//       <iteration 0: G1, wait, the statements between>
//       for it in serial(1, n - 1) {
//         wait for the early tiles of it; G1 (issued); wait for the late tiles of it - 1;
//         G2 of it - 1 (issued); wgmma_wait(1); the statements that do not touch G2's
//         operands; wgmma_wait(0); hand back the late tiles of it - 1; the others;
//         hand back the early tiles of it
//       }
//       <G2 of iteration n - 1, wgmma_wait(0), hand back the late tiles of n - 1>
//
//   With pingpong (two consumer warpgroups, no overlap, a loop of two wgmma gemms with work
//   between them), the warpgroups take turns at the tensor cores, FlashAttention-3's
//   ping-pong: named barriers 2 and 3 (one per warpgroup w, 256 threads) order each one's
//   "gemm phase", G2 of an iteration then G1 of the next, after the other's, so that one's
//   gemms run while the other does the statements between (the softmax):
//
//       (warpgroup 1, once: arrive on 2)
//       for it ... { wait for stage it; (it == 0: sync on 2 + w); G1 (issued);
//                    arrive on 2 + (1 - w); wgmma_wait(0); the statements between;
//                    sync on 2 + w; G2; hand back stage it }
//       (n > 0: arrive on 2 + (1 - w))
//       (warpgroup 0, at the end: sync on 2, for the first arrive)
//
//   No other barrier of the consumers may fall between a warpgroup's sync and its next
//   arrive (it would wait for the other warpgroup, which waits for the turn): the turns are
//   not taken where the loop writes shared memory (insert-sync places barriers only there
//   and before the loop).
//
//   With bulk_store, a top-level copy after the loop of a whole fragment in registers into
//   a tile of a tensor parameter that the kernel touches nowhere else (the epilogue's
//   `copy(acc, C.at(...))`) goes through a shared tile T of the tensor's element type, in
//   rows or slabs of 128 bytes in the 128-byte swizzle, and leaves it by bulk tensor
//   stores (one box a slab) that one consumer thread issues:
//
//       (persistent: if (tid == 0) bulk_store_wait(T); barrier())  // the last tile's read
//       copy(acc, T)                                              // converts, in registers
//       proxy_fence_async_shared(); barrier()
//       if (tid == 0) { bulk_store(tensor_map[coordinates] <- T + slab) ...; bulk_store_commit(T) }
//       ... at the consumers' end: if (tid == 0) bulk_store_wait(T)
//
//   A copy from a shared tile of the kernel's own into such a tensor tile (TileLang's
//   `copy(acc, Cs); copy(Cs, C...)`) stores from that tile instead, which takes the bulk
//   store's layout: where the tile is declared at the top of the body, has the tensor's
//   element type, no annotated layout, and only the statements after the loop up to the
//   copy use it (the persistent grid's wait then goes before the first of them).
//
//   The output's tensor map is optional (Kernel::TensorMap::optional): the bulk path runs
//   under `if ((maps_missing & (1 << map)) == 0)`, and the copy as it was otherwise, for
//   launches whose output no tensor map describes (Kernel::maps_missing, the runtime's mask).
//
//   The box's elements past the tensor's edges are not written, as the copy's own bounds
//   checks give. T must fit the block's shared memory beside the stages; where it does
//   not, or the copy does not qualify, the remark says why and the copy stays as it was.
//
//   The late tiles are those G2 reads; with early ones too they get full and empty
//   barriers of their own (barriers[4 S]: group g's full[s] at g S + s, its empty[s] at
//   2 S + g S + s).
//
//   Kernel::producer_threads = 128, Kernel::tensor_maps one per tensor, box and swizzle;
//   barriers of the consumers wait for the NT threads only. A copy qualifies when it moves
//   a whole shared tile of rank 2 from a tensor parameter, without conversion or
//   transposition, and the tile is stored in a swizzle the copy engine writes (128, 64 or
//   32 bytes: rows, or slabs, of one span, one box each); the copies' coordinates and the
//   loop's bounds read only parameters, block indices and those leading declarations.
//
//   Kernel::blocks_per_sm: the most blocks an SM (up to 4) whose shared memory and
//   consumers' registers fit; the register split (registers_down_to / up_to) divides that
//   many blocks' registers. Where the kernel has no use_swizzle and the loop copies one
//   tile along the grid's rows and another along its columns (a GEMM), swizzle_panel = 8.
//
//   Phases, each a method of the pass's Specializer: plan_loop (what qualifies), plan_grid
//   (persistence), plan_overlap, plan_turns, plan_prologue, plan_stores (and their
//   occupancy), occupancy; then Roles builds the producer's and consumers' statements
//   from those plans. Elements past the tensor's edges arrive as
//   zeros, as the copies' own bounds checks give. Kernels with device_assert (which ends a
//   consumer thread early) and loops that do not qualify stay as they are, with a remark
//   saying why where the loop has a wgmma gemm.
//
//   Whether a launch's tensors can be described by tensor maps (16-byte aligned, strides
//   of 16-byte multiples) is known only at run time: the pipeline also builds the kernel
//   without this pass (Kernel::fallback_of), and the runtime launches that where it must.
#pragma once

#include "ir/IR.h"
#include "ir/Target.h"

namespace tile::transforms {

/// The option pair-blocks: Off; On: every loop whose blocks can be paired is (see
/// Specializer::plan_pairs); Auto (the default): a loop of one gemm (GEMM's form).
enum class PairBlocks { Off, On, Auto };

struct WarpSpecializeOptions {
  /// > 0: every pipelined loop takes that many stages instead of its own (the option
  /// stages=, as inject-pipeline).
  int stages = 0;
  /// The option overlap-gemms=on: a loop that ends with a second wgmma gemm gets it
  /// deferred into the next iteration (see Specializer::plan_overlap), where it can.
  bool overlap_gemms = false;
  /// The option pingpong (on by default): two consumer warpgroups take turns at the tensor
  /// cores, where they can.
  bool pingpong = true;
  /// The option bulk-store (on by default): the epilogue's copies of fragments into tensors
  /// become bulk tensor stores through shared tiles, where they can.
  bool bulk_store = true;
  /// The option multicast=on: neighbouring blocks that copy the same tile in a loop are
  /// launched as a cluster of two and load half of it each, for both (see
  /// Specializer::plan_multicast), where they can.
  bool multicast = false;
  /// The option pair-blocks: a launched block runs two neighbouring blocks of the grid,
  /// a consumer warpgroup each, whose loop copies the same tiles for both (see
  /// Specializer::plan_pairs), where they can and the option asks for it.
  PairBlocks pair_blocks = PairBlocks::Off;
};

ir::Kernel warp_specialize(const ir::Kernel &kernel, const ir::Target &target, const WarpSpecializeOptions &options = {});

} // namespace tile::transforms
