// The ordered pass list per target, from the frontend's IR to device images.
//
//   cpu:  lower-tile-ops -> codegen (C++) -> clang++ -> shared object
//   cuda: infer-layout -> warp-specialize -> lower-tile-ops -> lower-gemm -> lower-fragments
//         -> bind-threads -> inject-pipeline -> insert-sync -> plan-shared-memory -> ...
//         -> lower-mma -> codegen (CUDA C++) -> nvcc -> fatbin
//   hip:  the same passes (on a target of 64-wide wavefronts, MFMA, no async copies or TMA)
//         -> codegen (HIP C++) -> hipcc -> offload bundle
//
// The frontend's IR is verified and printed once; each target's passes then run on their
// own copy. Each pass can be printed before / after (`print-before=`, `print-after=`, or
// `all`; printouts after the frontend's are tagged with the target, "[cuda]") and the
// pipelines can stop after any of them (`stop-after=`, for lit tests: targets without that
// pass do not run).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "Pipeline/DeviceCompiler.h"
#include "ir/IR.h"
#include "transforms/WarpSpecialize.h"

namespace tile::pipeline {

struct Options {
  bool target_cpu = true;
  bool target_cuda = false;
  std::vector<std::string> cuda_archs; // sm_90a, sm_80
  bool target_hip = false;
  std::vector<std::string> hip_archs;
  bool targets_given = false;          // false: the default targets

  std::vector<std::string> print_before, print_after; // pass names or "all"
  std::string stop_after;
  std::string emit_source_dir;
  std::string cache_dir; // empty: $XDG_CACHE_HOME/tile
  std::string nvcc, hipcc, cxx;
  // The host translation unit's sanitizers as clang++ flags (-fsanitize=...), which CPU
  // images are compiled with too; empty when it has none.
  std::vector<std::string> sanitize_flags;
  bool verbose = false;
  bool remarks = false; // what the passes chose: fragment places, gemm instructions, resources
  bool gemm_fma = false; // gemm=fma: every gemm on FMA instead of tensor cores
  bool gemm_wgmma = true; // wgmma on sm_90a where it takes the gemm (gemm=auto, the default); gemm=mma: mma.sync only
  bool warp_specialize = true; // warp-specialize=off: no producer warpgroups (sm_90a)
  bool pingpong = true;        // pingpong=off: two consumer warpgroups do not take turns at the tensor cores
  bool bulk_store = true;      // bulk-store=off: epilogues' copies of fragments into tensors by the consumer threads
  bool multicast = false;      // multicast=on: tiles neighbouring blocks share loaded once for both (clusters of two)
  // pair-blocks=on|auto|off: two of the grid's blocks a launched block, their shared tiles
  // loaded once (auto: loops of one gemm, launched so where the grid fills the SMs)
  transforms::PairBlocks pair_blocks = transforms::PairBlocks::Auto;
  bool overlap_gemms = false;  // overlap-gemms=on: a warp-specialized loop's last gemm overlaps the next iteration
  int stages = 0;        // stages=N: every pipelined loop with N stages (0: as written)
  bool syntax_only = false; // -fsyntax-only: run the passes, build no images
  unsigned compile_timeout = default_compile_timeout_seconds; // seconds a device compiler may run
  // toolchain=HEX (tile-c++ adds it for a compiler cache): the toolchain fingerprint
  // (Toolchain.h) this compile's images must be built with; checked before they are built.
  std::string toolchain;
  bool print_toolchain = false; // print-toolchain: print the fingerprint to stdout
  bool check_bounds = false;     // check-bounds: every element access to a tensor checks its index
  // "file:line" of a location in the frontend's encoding (StmtNode::loc), for run-time
  // messages; empty where unknown. Set by the plugin.
  std::function<std::string(std::uint32_t)> where;
};

/// The passes of a target's pipeline, in order ("frontend" names the IR as the frontend
/// made it; print-after=frontend prints it).
const std::vector<std::string> &pass_names(const std::string &target);
/// Whether `name` is the name of a pass of any target.
bool is_pass_name(const std::string &name);

struct Image {
  std::string target;   // "cpu"
  std::string manifest; // see lib/runtime/Manifest.h
  std::string bytes;
};

struct Message {
  enum Kind { Error, Warning, Remark } kind;
  std::string kernel_key; // empty: about the whole translation unit
  std::string text;
  std::string note = ""; // what to write instead (errors)
  std::uint32_t loc = 0;  // where in the kernel (the frontend's encoding); 0: at the kernel
};

struct Result {
  std::vector<Image> images;
  std::vector<Message> messages;
  bool ok() const {
    for (auto &m : messages)
      if (m.kind == Message::Error)
        return false;
    return true;
  }
};

/// Lowers `kernels` (one translation unit's, `unit` names it) for every target in `opts`
/// and builds their images. IR printouts go to `dump`.
Result run(const std::vector<ir::Kernel> &kernels, const std::string &unit, const Options &opts,
           const std::function<void(const std::string &)> &dump);

} // namespace tile::pipeline
