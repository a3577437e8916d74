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
  std::string name; // "mma.sync.m16n8k16", "v_mfma_f32_16x16x16"
  int m = 0, n = 0, k = 0;
  AtomLayout accumulator;
  /// Its operands are read from shared memory in rows of this many bytes (ldmatrix: 16, 8
  /// rows at once; MFMA's lanes: 8, 16 rows at once): operand rows a whole number of them,
  /// padded by one where rows an even number of them apart would share banks.
  int operand_row_bytes = 0;
  /// Whether its first operand's registers are laid out as accumulator atoms side by side
  /// (mma.sync m16n8k16: A's 16 x 16 is two 16 x 8 accumulator atoms), so that an
  /// accumulator converted in registers can be the next gemm's A. MFMA's A is the
  /// accumulator's transpose: a fragment operand goes through shared memory.
  bool a_from_accumulator = true;
  /// How remarks call the units that run it, and how its operands are read from shared
  /// memory.
  std::string units = "tensor cores", operand_load = "ldmatrix";
  /// The instruction's name for bf16 and for f16 operands, after `name`.
  std::string bf16_suffix = ".bf16", f16_suffix = ".f16";
  /// The instruction for operands of type `t` ("mma.sync.m16n8k16.bf16",
  /// "v_mfma_f32_16x16x16bf16_1k").
  std::string instruction(ScalarType t) const { return name + (t == ScalarType::F16 ? f16_suffix : bf16_suffix); }
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
  std::string kind; // "cpu", "cuda", "hip"
  std::string arch; // "sm_90a", "sm_80", "gfx90a"; empty for the CPU
  int compute_capability = 0; // 90, 80 (CUDA)
  int warp_size = 1;          // threads that run in lockstep and exchange registers by shuffles (AMD: the wavefront)
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
                                                       bool warpgroup_mma = false);

} // namespace tile::ir
