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
  unsigned timeout_seconds = pipeline::default_compile_timeout_seconds;
};

/// nvcc on PATH, else in $CUDA_HOME/bin, else in /usr/local/cuda/bin; empty when none is.
std::string default_nvcc();
/// The first executable nvcc in the directories of `path` (a PATH value, may be null), then
/// `cuda_home`/bin (may be null), then `fallback_dir`; empty when there is none.
std::string find_nvcc(const char *path, const char *cuda_home, const std::string &fallback_dir);

/// sm_90a and sm_80.
const std::vector<std::string> &default_archs();

/// The device headers the generated source includes, as embedded at build time.
const std::vector<pipeline::SourceFile> &cuda_headers();

/// The nvcc flags for `archs`, before `-o IMAGE SOURCE`; empty with `problem` set when an
/// architecture is not of the form sm_NN or sm_NNa.
std::vector<std::string> cuda_compile_flags(const std::vector<std::string> &archs, std::string &problem);

/// What an image compiled with those flags holds code for, as its manifest's `archs`
/// record names it: machine code of each of `archs`, and the PTX of the oldest portable one
/// (compute_NN) where there is one.
std::vector<std::string> image_archs(const std::vector<std::string> &archs);

/// What ptxas said of one entry function when nvcc ran (with -Xptxas -v, as
/// compile_cuda_image runs it; the log is kept with the image in the cache).
struct PtxasReport {
  std::string symbol;                // the entry function
  std::string arch;                  // the architecture compiled for: "sm_90a"
  int registers = -1;                // a thread's registers; -1 where ptxas did not say
  int stack_bytes = 0, spill_store_bytes = 0, spill_load_bytes = 0;
  std::vector<std::string> messages; // what else ptxas said of it: "(C7515) Potential Performance Loss: ..."
};

/// The lines of nvcc's log that parse_ptxas_report reads, without the compile times: what
/// the image cache keeps of the log (the same for every compile of the same source).
std::string ptxas_report_lines(const std::string &log);

/// The entries of nvcc's log `log`, in the order ptxas compiled them (one per entry and
/// architecture).
std::vector<PtxasReport> parse_ptxas_report(const std::string &log);

/// Compiles `source` into a fatbin. `name` (the translation unit) names the generated file.
pipeline::DeviceCompileResult compile_cuda_image(const std::string &source, const std::string &name,
                                                 const CompileOptions &options);

} // namespace tile::cuda
