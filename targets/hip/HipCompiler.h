// Building a HIP image: the generated HIP C++ (HipCodegen.h) and the embedded device header
// library (include/tile_hip.h over targets/common/include/tile_gpu.h) compiled by hipcc
// (`--genco`, one `--offload-arch` per architecture) into a clang offload bundle holding a
// code object per architecture, which hipModuleLoadData takes as it is; through the device
// compiler cache of lib/Pipeline/DeviceCompiler.h. The architectures are always named:
// without them hipcc asks the machine's GPU, and there may be none.
#pragma once

#include <string>
#include <vector>

#include "Pipeline/DeviceCompiler.h"

namespace tile::hip {

struct CompileOptions {
  std::string hipcc;               // empty: default_hipcc()
  std::vector<std::string> archs;  // "gfx90a"; empty: gfx90a
  std::string cache_dir;           // empty: pipeline::default_cache_dir()
  bool use_cache = true;
  std::string emit_source_dir;     // non-empty: keep the source and tile_hip.h there
  unsigned timeout_seconds = pipeline::default_compile_timeout_seconds;
};

/// hipcc on PATH, else in $ROCM_PATH/bin, else in /opt/rocm/bin; empty when none is.
std::string default_hipcc();

/// The device headers the generated source includes, as embedded at build time.
const std::vector<pipeline::SourceFile> &hip_headers();

/// The hipcc flags for `archs`, before `-o IMAGE SOURCE`; empty with `problem` set when an
/// architecture is not one tile knows (ir::hip_target).
std::vector<std::string> hip_compile_flags(const std::vector<std::string> &archs, std::string &problem);

/// Compiles `source` into an offload bundle. `name` (the translation unit) names the
/// generated file.
pipeline::DeviceCompileResult compile_hip_image(const std::string &source, const std::string &name,
                                               const CompileOptions &options);

} // namespace tile::hip
