#include "Pipeline/ChildEnvironment.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

namespace tile::pipeline {

bool is_sanitizer_runtime(const std::string &library) {
  llvm::StringRef name = llvm::sys::path::filename(library);
  if (name.starts_with("libclang_rt."))
    return name.contains("san"); // asan, ubsan_standalone, hwasan, tsan, msan, lsan, ...
  for (const char *gcc : {"libasan.so", "libhwasan.so", "libtsan.so", "liblsan.so", "libubsan.so"})
    if (name.starts_with(gcc))
      return true;
  return false;
}

std::vector<std::string> device_compiler_environment(const char *const *envp) {
  std::vector<std::string> env;
  for (; envp && *envp; ++envp) {
    llvm::StringRef preload(*envp);
    if (!preload.consume_front("LD_PRELOAD=")) {
      env.push_back(*envp);
      continue;
    }
    // ld.so separates the entries by spaces or colons.
    llvm::SmallVector<llvm::StringRef> libraries;
    llvm::SplitString(preload, libraries, " :");
    std::string kept;
    bool dropped = false;
    for (llvm::StringRef library : libraries) {
      if (is_sanitizer_runtime(library.str()))
        dropped = true;
      else
        kept += (kept.empty() ? "" : ":") + library.str();
    }
    if (!dropped)
      env.push_back(*envp); // as it was, separators and all
    else if (!kept.empty())
      env.push_back("LD_PRELOAD=" + kept);
  }
  return env;
}

} // namespace tile::pipeline
