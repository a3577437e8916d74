// Running a device compiler (clang++, nvcc, hipcc) on generated source, with a
// content-addressed cache of the images it makes. Target-independent: each target says which
// compiler, which flags and which header files go with its source.
//
// The cache key is the SHA-256 of the source, the headers, the flags, the compiler's
// `--version` output and the target's name, so a rebuild of unchanged kernels runs no
// device compiler. Entries are written to a temporary file in the cache directory and
// renamed into place, so concurrent builds never see half an image. A cache directory that
// cannot be used only means compiling without the cache.
#pragma once

#include <string>
#include <vector>

namespace tile::pipeline {

/// A file written next to the generated source (a target's device headers).
struct SourceFile {
  std::string name;
  std::string text;
};

struct DeviceCompileJob {
  std::string target;             // "cpu": part of the cache key and the cache's subfolder
  std::string compiler;           // a path, or a name looked up on PATH
  std::vector<std::string> flags; // the compiler runs as: compiler flags... -o IMAGE SOURCE
  std::string name;               // names the files: the translation unit ("gemm.cpp")
  std::string source_suffix;      // of the source file: ".cpu.cpp"
  std::string image_suffix;       // of the image file: ".so"
  std::string source;
  std::vector<SourceFile> headers;
  std::string cache_dir;       // empty: default_cache_dir()
  bool use_cache = true;
  std::string emit_source_dir; // non-empty: keep a copy of source and headers there
};

struct DeviceCompileResult {
  bool ok = false;
  std::string image;       // the compiled image's bytes
  bool cached = false;     // the image came from the cache; no compiler ran
  std::string log;         // what the compiler printed (stderr and stdout), or why it could not run
  std::string source_path; // on failure: the generated source, kept for the error message
};

DeviceCompileResult compile_device_image(const DeviceCompileJob &job);

/// $XDG_CACHE_HOME/tile, else $HOME/.cache/tile; empty when neither is set.
std::string default_cache_dir();

/// The `--version` output of `compiler` (a path), asked once per path per process; empty
/// when it cannot run.
std::string compiler_version(const std::string &compiler);

/// The hex SHA-256 under which `job`'s image is cached, given the compiler's version.
std::string device_cache_key(const DeviceCompileJob &job, const std::string &version);

/// The file name of the generated source of `job` (its name's stem + source_suffix).
std::string device_source_name(const DeviceCompileJob &job);

} // namespace tile::pipeline
