// The environment device compilers are started with. A sanitized tile plugin runs in a clang
// started with the sanitizer runtime preloaded (LD_PRELOAD); the device compilers are not
// instrumented, and nvcc and cicc fail under that preload, so it is not passed on to them.
// Everything else, other preloaded libraries included, is.
#pragma once

#include <string>
#include <vector>

namespace tile::pipeline {

/// Whether `library` (an LD_PRELOAD entry) is a sanitizer runtime: clang's
/// (libclang_rt.asan-x86_64.so, ...) or GCC's (libasan.so.8, ...).
bool is_sanitizer_runtime(const std::string &library);

/// `envp` (a null-terminated array of NAME=VALUE, as `environ`) without the sanitizer
/// runtimes in its LD_PRELOAD, which is dropped when nothing else is left in it; the rest
/// unchanged, in order.
std::vector<std::string> device_compiler_environment(const char *const *envp);

} // namespace tile::pipeline
