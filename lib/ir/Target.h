// What a target can do, as the passes need it: one description per architecture, passed to
// every pass that depends on the hardware (as Halide's lowering passes its Target), and one
// registry of target names and defaults, which the plugin's options query. Generic passes
// read facts from here; they never test an architecture's name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/Fragment.h"
#include "ir/MmaAtom.h"
#include "ir/Type.h"

namespace tile::ir {

/// What a unit's gemms ask of the MMA atoms: their operand types, and whether the warpgroup
/// atoms may take them (gemm=auto).
struct GemmUse {
  std::vector<std::pair<ScalarType, ScalarType>> operand_types;
  bool warpgroup = true;
};

struct Target {
  std::string kind; // "cpu", "cuda", "hip"
  std::string arch; // "sm_90a", "sm_80", "gfx90a"; empty for the CPU
  int compute_capability = 0; // 90, 80 (CUDA)
  int warp_size = 1;          // threads that run in lockstep and exchange registers by shuffles (AMD: the wavefront)
  int max_vector_bytes = 16;  // the widest load or store of one thread
  /// The matrix instructions (MMA atoms, ir/MmaAtom.h) in the order gemms take them where
  /// they can: wgmma before mma.sync on sm_90a (gemm=mma leaves out the warpgroup atoms).
  std::vector<MmaAtomRef> mma_atoms;
  bool async_copy = false;    // cp.async: global to shared without registers
  bool bulk_tensor_copy = false; // TMA and setmaxnreg (sm_90a: warp-specialize)
  /// The swizzles (bytes) bulk tensor copies write shared tiles in, widest first; a tile
  /// in one starts on a multiple of 8 of its spans.
  std::vector<int> bulk_copy_swizzles;
  /// A bulk tensor copy's box: rows of a multiple of `bulk_copy_row_bytes`, at most
  /// `bulk_copy_box` elements in each dimension, written into shared memory from a multiple
  /// of `bulk_copy_alignment` bytes (each pipeline stage of a tile in no swizzle too).
  int bulk_copy_row_bytes = 0, bulk_copy_box = 0, bulk_copy_alignment = 0;
  /// > 1: blocks may be launched in clusters of this many, whose bulk copies can write every
  /// block of the cluster at once (multicast) and whose threads can arrive on each other's
  /// mbarriers (sm_90a: warp-specialize pairs neighbouring blocks).
  int cluster_blocks = 0;
  /// Warps that run together as a warpgroup (the producer of warp-specialize; setmaxnreg
  /// and wgmma work on whole ones).
  int warpgroup_warps = 0;
  std::int64_t max_shared_bytes = 0; // dynamic shared memory of one block
  /// Shared memory one multiprocessor has for its blocks, and what the hardware reserves of
  /// it for each block (0: not known; occupancy is not planned).
  std::int64_t multiprocessor_shared_bytes = 0, block_reserved_shared_bytes = 0;
  std::int64_t shared_alignment = 16; // each shared buffer starts at a multiple of this
  int max_registers_per_thread = 0;
  /// 32-bit registers one multiprocessor has for its blocks (setmaxnreg moves them between
  /// a block's warpgroups).
  int register_file = 0;
  /// Registers per thread a fragment may take before it is better off in shared memory,
  /// and a tensor-core accumulator (which the gemm keeps in registers anyway).
  int max_fragment_registers = 64, max_accumulator_registers = 256;

  /// "cuda:sm_90a", "cpu": how remarks name the target.
  std::string name() const { return arch.empty() ? kind : kind + ":" + arch; }
  /// Whether it has an MMA atom that runs one warp's tiles (mma.sync, MFMA) / whose
  /// instructions run asynchronously on a warpgroup (wgmma).
  bool has_warp_mma() const;
  bool has_warpgroup_mma() const;
  /// The atom of `family` that takes operands of types a and b (null: none).
  MmaAtomRef mma_atom(const std::string &family, ScalarType a, ScalarType b) const;
  /// The atoms a gemm may take: without the warpgroup ones where `warpgroup` is false.
  std::vector<MmaAtomRef> gemm_atoms(bool warpgroup) const;
  /// Threads of a warpgroup.
  int warpgroup_threads() const { return warpgroup_warps * warp_size; }
  /// The facts that the passes read and that change the code they make (warp size, vector
  /// width, async copies, and the MMA atoms that `gemms` may take): architectures of one
  /// class share one pipeline and one generated source; the others get their own. (The
  /// limits are not among them: one source serves a class, and each architecture's limits
  /// are checked. bulk_tensor_copy changes code only where wgmma does (warp-specialize), so
  /// it needs no class of its own.)
  std::string lowering_class(const GemmUse &gemms) const;
};

Target cpu_target();
/// The CUDA architecture `arch` ("sm_90a", "sm_80", any "sm_NN" or "sm_NNa"), or nothing and
/// why not.
std::optional<Target> cuda_target(const std::string &arch, std::string &problem);
/// One description that serves all of `archs` (the facts they share), for the one source
/// compiled for all of them.
Target common_cuda_target(const std::vector<std::string> &archs);
/// The CUDA architectures built when the user names none.
const std::vector<std::string> &default_cuda_archs();
/// `archs` grouped by lowering class for a unit whose gemms are `gemms`, in the order of
/// their first members; unknown architectures join the first group.
std::vector<std::vector<std::string>> cuda_arch_classes(const std::vector<std::string> &archs, const GemmUse &gemms = {});

/// The AMD GPU architecture `arch` ("gfx90a", "gfx942", any "gfxN..."), or nothing and why
/// not. CDNA and GCN (gfx9) run 64-wide wavefronts; gfx90a and gfx94x have the MFMA
/// instructions tile uses (v_mfma_f32_16x16x16 with bf16 and f16 operands); RDNA (gfx10,
/// gfx11, gfx12) runs 32-wide ones and has no MFMA.
std::optional<Target> hip_target(const std::string &arch, std::string &problem);

// The GPU targets by kind ("cuda", "hip"), for what the pipeline and the limits share.
/// The target of `arch` of `kind`.
std::optional<Target> gpu_target(const std::string &kind, const std::string &arch, std::string &problem);
/// One description that serves all of `archs` (the facts they share).
Target common_gpu_target(const std::string &kind, const std::vector<std::string> &archs);
/// The architectures built when the user names none (cuda: sm_90a, sm_80; hip: gfx90a).
const std::vector<std::string> &default_gpu_archs(const std::string &kind);
/// `archs` grouped by lowering class (cuda_arch_classes for CUDA).
std::vector<std::vector<std::string>> gpu_arch_classes(const std::string &kind, const std::vector<std::string> &archs,
                                                       const GemmUse &gemms = {});

} // namespace tile::ir
