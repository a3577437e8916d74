// The toolchain fingerprint: what decides the device images of a compile that is neither on
// its command line nor in its sources nor the plugin itself. That is, for each target the
// compile builds (the default ones depend on which device compilers are found), the device
// compiler's `--version` output, and for the CPU target (built with -march=native) the host
// CPU's name and features.
//
// Compiler caches (ccache, sccache) hash the command line, the sources and the compiler (and
// the file -fplugin= names), not the device compilers the plugin runs nor the CPU it runs on.
// tile-c++ puts the fingerprint into the command line they hash
// (-fplugin-arg-tile-toolchain=HEX) when it runs one of them (TILE_CXX_LAUNCHER, or
// `tile-c++ --launch LAUNCHER -- COMPILER ARGS`), so that a changed device compiler or another
// CPU is a miss. The plugin checks a fingerprint it is given against its own before it
// builds images, so that a compile elsewhere (distcc) or after a change cannot store its
// object under another machine's key.
#pragma once

#include <string>

#include "Pipeline/Pipeline.h"

namespace tile::pipeline {

struct ToolchainFingerprint {
  std::string description; // for people: one line per target and what was found
  std::string hash;        // hex SHA-256 of what decides the images (not the paths)
};

/// The fingerprint of the targets `opts` builds, with the device compilers they name (or
/// would find) and the host CPU.
ToolchainFingerprint toolchain_fingerprint(const Options &opts);

} // namespace tile::pipeline
