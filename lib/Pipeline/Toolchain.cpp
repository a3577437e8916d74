#include "Pipeline/Toolchain.h"

#include <algorithm>

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "targets/cpu/CpuCompiler.h"
#include "targets/cuda/CudaCompiler.h"
#include "targets/hip/HipCompiler.h"

namespace tile::pipeline {

namespace {

/// The program that runs for `compiler` (as compile_device_image finds it): itself when it
/// names a path, else found on PATH; empty when there is none.
std::string resolve(const std::string &compiler) {
  if (compiler.empty() || compiler.find('/') != std::string::npos)
    return compiler;
  auto found = llvm::sys::findProgramByName(compiler);
  return found ? *found : std::string();
}

/// Indents every line of `text` under a description's line.
std::string indented(llvm::StringRef text) {
  std::string out;
  llvm::SmallVector<llvm::StringRef> lines;
  text.rtrim().split(lines, '\n');
  for (llvm::StringRef l : lines)
    out += "    " + l.rtrim().str() + "\n";
  return out;
}

} // namespace

ToolchainFingerprint toolchain_fingerprint(const Options &opts) {
  ToolchainFingerprint fp;
  std::string key = "tile-toolchain 1\n";
  auto add_compiler = [&](const char *target, const std::string &given, const std::string &fallback) {
    const std::string program = resolve(given.empty() ? fallback : given);
    key += std::string("target ") + target + "\n";
    fp.description += std::string(target) + ": " + (program.empty() ? "no device compiler found" : program) + "\n";
    if (program.empty()) {
      key += "compiler missing " + given + "\n";
      return;
    }
    const std::string version = compiler_version(program, std::min(opts.compile_timeout, 60u));
    if (!version.empty()) {
      // The version, not the path: the same compiler installed elsewhere builds the same images.
      key += "version " + std::to_string(version.size()) + ":" + version + "\n";
      fp.description += indented(version);
      return;
    }
    // A compiler that cannot say its version (no image cache either): its file stands for it.
    llvm::sys::fs::file_status st;
    std::string file = "version unknown; " + program;
    if (!llvm::sys::fs::status(program, st))
      file += " size " + std::to_string(st.getSize()) + " modified " +
              std::to_string(llvm::sys::toTimeT(st.getLastModificationTime())) + " inode " +
              std::to_string(st.getUniqueID().getFile());
    key += file + "\n";
    fp.description += "    " + file + "\n";
  };
  if (opts.target_cpu) {
    add_compiler("cpu", opts.cxx, cpu::default_cxx());
    const std::string cpu = cpu::host_cpu_identity(); // images are built with -march=native
    key += cpu + "\n";
    fp.description += "    " + cpu + "\n";
  }
  if (opts.target_cuda)
    add_compiler("cuda", opts.nvcc, cuda::default_nvcc());
  if (opts.target_hip)
    add_compiler("hip", opts.hipcc, hip::default_hipcc());
  fp.hash = llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(key)), /*LowerCase=*/true);
  return fp;
}

} // namespace tile::pipeline
