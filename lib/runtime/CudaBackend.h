// The CUDA backend: NVIDIA GPUs through the CUDA driver API, loaded at run time with dlopen
// (libcuda.so.1), so that one binary runs with or without a GPU. Each device is driven in its
// primary context, the one the CUDA runtime (cudaMalloc, PyTorch) uses, so pointers from
// those work in tensors. Images are fatbins (a cubin per architecture plus PTX).
//
// Launch ABI (what targets/cuda/CudaCodegen.h emits): a tensor parameter is passed as the
// bytes of tile::rt::kernel_arg from `data` on (tile_cuda::tensor_arg), a scalar as its
// widened value (int64_t or double).
#pragma once

#include <string>

#include "runtime/Backend.h"

namespace tile::runtime {

/// The number of CUDA devices, or 0 with `why` saying why there are none usable (no
/// driver, cuInit failed, this build has no CUDA backend).
int cuda_device_count(std::string &why);

/// The backend of CUDA device `index` (< cuda_device_count()); made on first use.
Backend &cuda_backend(int index);

} // namespace tile::runtime
