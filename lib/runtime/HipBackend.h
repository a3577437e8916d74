// The HIP backend: AMD GPUs through the HIP runtime (libamdhip64.so), loaded at run time with
// dlopen, so that one binary runs with or without an AMD GPU. Images are clang offload
// bundles of AMDGPU code objects (hipcc --genco), one per architecture, which
// hipModuleLoadData takes as they are; before that the backend checks that an image is such
// a bundle and holds code for the device's architecture, so that a wrong image is an error
// that says so rather than the runtime's "invalid image".
//
// Launch ABI (what targets/hip/HipCodegen.h emits, the same as CUDA's): a tensor parameter
// is passed as the bytes of tile::rt::kernel_arg from `data` on (tile_hip::tensor_arg), a
// scalar as its widened value (int64_t or double).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "runtime/Backend.h"

namespace tile::runtime {

/// The number of HIP devices, or 0 with `why` saying why there are none usable (no HIP
/// runtime library, hipInit failed, no AMD GPU, this build has no HIP backend).
int hip_device_count(std::string &why);

/// The backend of HIP device `index` (< hip_device_count()); made on first use.
Backend &hip_backend(int index);

/// A HIP runtime library, loaded and initialized: what the process-wide backend uses (the
/// library `TILE_HIP_LIBRARY` names, else libamdhip64.so), and what tests load directly.
struct HipRuntime;

/// Loads the HIP runtime `library` (a name dlopen searches for, or a path) and counts its
/// devices; null with `why` set when it cannot be loaded or lacks a function tile calls. A
/// runtime that sees no device (hipInit failing included) is returned, with a count of 0.
std::shared_ptr<HipRuntime> load_hip_runtime(const std::string &library, std::string &why);
/// The devices `runtime` sees, and why none when there are none.
int hip_runtime_device_count(const HipRuntime &runtime, std::string &why);
/// A backend for device `index` of `runtime`.
std::unique_ptr<Backend> make_hip_backend(std::shared_ptr<HipRuntime> runtime, int index);

/// The architectures (gfx90a, ...) whose code objects the offload bundle `image` holds; empty
/// with `problem` set when it is not an offload bundle.
std::vector<std::string> hip_image_archs(const void *image, std::size_t size, std::string &problem);

} // namespace tile::runtime
