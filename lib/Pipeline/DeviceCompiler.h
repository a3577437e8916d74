// Running a device compiler (clang++, nvcc, hipcc) on generated source, with a
// content-addressed cache of the images it makes. Target-independent: each target says which
// compiler, which flags and which header files go with its source.
//
// The cache key is the SHA-256 of the source, the headers, the flags, the compiler's
// `--version` output, the target's name and what else the target says decides the image
// (the host CPU, for -march=native), so a rebuild of unchanged kernels runs no device
// compiler; a compiler whose `--version` fails is not cached (nothing would tell it from
// another). An entry holds a header (a magic line, its key, the image's length and SHA-256)
// and the image: a truncated, overwritten or foreign entry is a miss, compiled again and
// replaced. Entries are written to a temporary file in the cache directory, synced to disk
// and renamed into place, so concurrent builds and crashes never leave half an image under
// an entry's name. A cache directory that cannot be used only means compiling without the
// cache (said in a note, for `verbose`).
//
// The compiler runs with a time limit (Subprocess.h: it is killed, with whatever it started,
// and the generated source is kept), in a directory of its own that is also its TMPDIR and
// that is removed when the build is interrupted. That directory is named by the key, and the
// files in it carry a fixed time, so that the same input compiles to the same bytes (nvcc
// records the source's path and time in line info and in the names of internal symbols).
#pragma once

#include <optional>
#include <functional>
#include <string>
#include <vector>

namespace tile::pipeline {

/// The time limit of a device compiler run unless the job says otherwise.
inline constexpr unsigned default_compile_timeout_seconds = 300;

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
  std::vector<std::string> key_extras; // what else decides the image (the host CPU, for -march=native)
  unsigned timeout_seconds = default_compile_timeout_seconds; // the compiler is stopped after this
  /// What of a successful compile's log the cache keeps beside the image (a cached build
  /// gives it as its log): the part the target reads (ptxas's report), which must be the
  /// same for every compile of the same key. None: nothing is kept.
  std::function<std::string(const std::string &)> cached_log;
};

struct DeviceCompileResult {
  bool ok = false;
  std::string image;       // the compiled image's bytes
  bool cached = false;     // the image came from the cache; no compiler ran
  std::string log;         // what the compiler printed (stderr and stdout; cached with the image),
                           // or why it could not run
  std::string source_path; // on failure: the generated source, kept for the error message
  bool timed_out = false;  // the compiler ran past the job's time limit and was stopped
  std::string program;     // the compiler that ran (or would have), for messages
  std::vector<std::string> notes; // about the cache: an entry found damaged and replaced, a
                                  // cache that cannot be used or written (and why)
};

DeviceCompileResult compile_device_image(const DeviceCompileJob &job);

/// The first executable `name` in the directories of `path` (a PATH value, may be null),
/// then in `home`/bin (a toolkit's root, as $CUDA_HOME or $ROCM_PATH name it; may be null),
/// then in `fallback_dir`; empty when there is none.
std::string find_program(const std::string &name, const char *path, const char *home, const std::string &fallback_dir);

/// $XDG_CACHE_HOME/tile, else $HOME/.cache/tile; empty when neither is set.
std::string default_cache_dir();

/// The `--version` output of `compiler` (a path), asked once per path per process; empty
/// when it cannot run or runs past `timeout_seconds`.
std::string compiler_version(const std::string &compiler, unsigned timeout_seconds = 60);

/// The hex SHA-256 under which `job`'s image is cached, given the compiler's version.
std::string device_cache_key(const DeviceCompileJob &job, const std::string &version);

/// A cache entry: a header naming `key`, the lengths of the image and of the compiler's log
/// and their SHA-256, then `image` and `log` (what the compiler printed when it made the image:
/// nvcc's resource report, say, which a cached build gives as the compile did).
std::string encode_cache_entry(const std::string &key, const std::string &image, const std::string &log = "");
struct CacheEntry {
  std::string image, log;
};
/// The image and log of cache entry `bytes` if it is a whole, unaltered entry for `key`;
/// else nothing, with `problem` saying what is wrong with it.
std::optional<CacheEntry> decode_cache_entry(const std::string &bytes, const std::string &key, std::string &problem);

/// The file name of the generated source of `job` (its name's stem + source_suffix).
std::string device_source_name(const DeviceCompileJob &job);

} // namespace tile::pipeline
