// Building a CPU image: the generated C++ (CpuCodegen.h) and the embedded device header
// library (include/tile_cpu.h) compiled by clang++ into a shared object, through the
// device compiler cache of lib/Pipeline/DeviceCompiler.h.
#pragma once

#include <string>
#include <vector>

#include "Pipeline/DeviceCompiler.h"

namespace tile::cpu {

struct CompileOptions {
  std::string cxx;             // empty: default_cxx()
  std::vector<std::string> extra_flags; // after cpu_compile_flags() (the host's -fsanitize=...)
  std::string cache_dir;       // empty: pipeline::default_cache_dir()
  bool use_cache = true;
  std::string emit_source_dir; // non-empty: keep the source and tile_cpu.h there
  unsigned timeout_seconds = pipeline::default_compile_timeout_seconds;
};

/// The clang++ tile was configured with (TILE_CLANGXX).
const char *default_cxx();

/// The device headers the generated source includes, as embedded at build time.
const std::vector<pipeline::SourceFile> &cpu_headers();

/// The flags of the device compile, before `-o IMAGE SOURCE`.
const std::vector<std::string> &cpu_compile_flags();

/// The host CPU as the image depends on it (-march=native): its name and features, "+avx2"
/// or "-avx512f", sorted. Part of the cache key: a cache shared between machines (a home
/// directory on NFS) must not hand one machine the image built for another.
std::string host_cpu_identity();

/// The device compile of `source` (CompileOptions as for compile_cpu_image).
pipeline::DeviceCompileJob cpu_compile_job(const std::string &source, const std::string &name,
                                           const CompileOptions &options);

/// Compiles `source` into a shared object exporting one entry per kernel. `name` (the
/// translation unit) names the generated file.
pipeline::DeviceCompileResult compile_cpu_image(const std::string &source, const std::string &name,
                                                const CompileOptions &options);

} // namespace tile::cpu
