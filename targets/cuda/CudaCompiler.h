// Building a CUDA image: the generated CUDA C++ (CudaCodegen.h) and the embedded device
// header library (include/tile_cuda.h) compiled by nvcc into a fatbin holding a cubin per
// architecture asked for and PTX of the oldest (for GPUs newer than all of them), through
// the device compiler cache of lib/Pipeline/DeviceCompiler.h.
#pragma once

#include <string>
#include <vector>

#include "Pipeline/DeviceCompiler.h"

namespace tile::cuda {

struct CompileOptions {
  std::string nvcc;                // empty: default_nvcc()
  std::vector<std::string> archs;  // "sm_90a", "sm_80"; empty: default_archs()
  std::string cache_dir;           // empty: pipeline::default_cache_dir()
  bool use_cache = true;
  std::string emit_source_dir;     // non-empty: keep the source and tile_cuda.h there
};

/// nvcc on PATH, else the CUDA toolkit's usual place; empty when neither exists.
std::string default_nvcc();

/// sm_90a and sm_80.
const std::vector<std::string> &default_archs();

/// The device headers the generated source includes, as embedded at build time.
const std::vector<pipeline::SourceFile> &cuda_headers();

/// The nvcc flags for `archs`, before `-o IMAGE SOURCE`; empty with `problem` set when an
/// architecture is not of the form sm_NN or sm_NNa.
std::vector<std::string> cuda_compile_flags(const std::vector<std::string> &archs, std::string &problem);

/// Compiles `source` into a fatbin. `name` (the translation unit) names the generated file.
pipeline::DeviceCompileResult compile_cuda_image(const std::string &source, const std::string &name,
                                                 const CompileOptions &options);

} // namespace tile::cuda
