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
#include "ir/Type.h"

namespace tile::ir {

/// A warp-level tensor-core instruction: its tile, and which lane holds which element of
/// its m x n accumulator in which register (the layout algebra's table of the instruction,
/// from which mma_fragment builds every tensor-core fragment).
struct MmaAtom {
  std::string name; // "mma.sync.m16n8k16"
  int m = 0, n = 0, k = 0;
  AtomLayout accumulator;
  /// Its operands are read from shared memory in rows of this many bytes, 8 rows at once
  /// (ldmatrix): operand rows a whole number of them, padded by one where rows an even
  /// number of them apart would share banks.
  int operand_row_bytes = 0;
};

/// A warpgroup tensor-core instruction (wgmma): `warps` consecutive warps compute together
/// an m x N x K tile (K of k_bytes of each operand's row), N a multiple of n_step up to max_n, the operands read from shared
/// memory through descriptors of a `swizzle_bytes` swizzle that counts from
/// `swizzle_alignment`-byte boundaries (rows of swizzle_bytes of K, or slabs that wide).
struct WarpgroupMmaAtom {
  std::string name; // "wgmma.mma_async"
  int warps = 0, m = 0;
  int k_bytes = 0; // K of one instruction, in bytes of an operand's row: 16 bf16, 32 fp8
  int n_step = 0, max_n = 0;
  int swizzle_bytes = 0, swizzle_alignment = 0;
  /// K of one instruction for operands of type `t`.
  int k_for(ScalarType t) const { return k_bytes / bytes(t); }
};

struct Target {
  std::string kind; // "cpu", "cuda"
  std::string arch; // "sm_90a", "sm_80"; empty for the CPU
  int compute_capability = 0; // 90, 80 (CUDA)
  int warp_size = 1;          // threads that run in lockstep and exchange registers by shuffles
  int max_vector_bytes = 16;  // the widest load or store of one thread
  std::optional<MmaAtom> mma; // tensor-core gemm (bf16 and f16 into f32)
  bool async_copy = false;    // cp.async: global to shared without registers
  bool bulk_tensor_copy = false; // TMA and setmaxnreg (sm_90a: warp-specialize)
  std::optional<WarpgroupMmaAtom> warpgroup_mma; // wgmma (sm_90a; off with -fplugin-arg-tile-gemm=mma)
  std::int64_t max_shared_bytes = 0; // dynamic shared memory of one block
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
  /// The facts that the passes read and that change the code they make (warp size, vector
  /// width, tensor-core instruction, async copies): architectures of one class share one
  /// pipeline and one generated source; the others get their own. (The limits are not
  /// among them: one source serves a class, and each architecture's limits are checked.
  /// warpgroup_mma joins through cuda_arch_classes when the pipeline uses it;
  /// bulk_tensor_copy changes code only where wgmma does (warp-specialize), so it needs no
  /// class of its own.)
  std::string lowering_class() const;
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
/// `archs` grouped by lowering class, in the order of their first members; unknown
/// architectures join the first group.
/// `warpgroup_mma`: the pipeline uses wgmma where the target has it (a class of its own).
std::vector<std::vector<std::string>> cuda_arch_classes(const std::vector<std::string> &archs, bool warpgroup_mma = false);

} // namespace tile::ir
