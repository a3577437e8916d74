// The manifest of a device image: which kernels it holds and how to call them.
//
// Text, one record per line, written by the compiler (lib/Pipeline) and read here:
//
//   tile-image 2
//   target cuda
//   archs sm_90a                        (optional: the architectures the image runs on)
//   kernel <key> <symbol> <threads> <shared> <params> <display name: the rest of the line>
//
// <key> is the kernel's mangled name (what launch_packed receives), <symbol> the image's
// entry for it, <threads> the threads per block, <shared> the bytes of dynamic shared memory
// a block needs (version 1 manifests have no such field: 0), <params> a comma-separated list of parameter
// signatures, `t<dtype>x<rank>` for a tensor and `s<dtype>` for a scalar (dtype: the code of
// tile::dtype), or `-` for none. <target> is the backend that runs the image (cpu, cuda, hip).
// `archs` lists the device architectures the image holds code for, as the target names them
// (CUDA: sm_NN[a] machine code for exactly that architecture, compute_NN code the driver
// compiles for NN and later); without it the image runs on every device of its target. A
// translation unit whose architectures need different code registers an image for each.
//
// A kernel with tensor maps lists them after its record (`tmap <param> <swizzle> <box>`, and
// ` optional` for one its entry can run without: a mask of those missing follows the maps),
// then `persistent` where its grid is persistent, `cluster <n>` where its blocks are launched
// in clusters of n along x, `pair <dim>` where each block runs two of the grid's blocks
// along dimension dim (0 to 2: x, y, z), after it `unpaired <symbol> <threads> <shared> <blocks
// an SM>` where the kernel also has an entry without pairs (for grids too small for pairs),
// then `fallback <symbol> <threads> <shared>`.
#pragma once

#include <string>
#include <optional>
#include <string_view>
#include <vector>

#include "runtime/TensorMap.h"

namespace tile::runtime {

/// The signature of one kernel parameter.
struct ParamSignature {
  bool is_tensor = false;
  int dtype = 0; // a tile::dtype code
  int rank = 0;  // tensors: 1 to 4; scalars: 0
  friend bool operator==(const ParamSignature &, const ParamSignature &) = default;
};

/// One entry of an image: its symbol and how to launch it.
struct EntryInfo {
  std::string symbol;
  int threads = 0;
  long long shared_bytes = 0;
  int blocks_per_sm = 0; // `unpaired`: the blocks an SM it is built for
};

struct KernelInfo {
  std::string key;
  std::string symbol;
  int threads = 0;
  long long shared_bytes = 0;
  std::vector<ParamSignature> params;
  std::string display_name;
  /// Tensor maps passed after the parameters (bulk tensor copies; where one is optional, a
  /// mask of those not encoded follows them), and the entry that needs none, for launches
  /// whose tensors no map can describe.
  std::vector<TensorMapSpec> tensor_maps;
  /// A persistent grid (`persistent`, after the tensor maps): at most one block an SM is
  /// launched, and a zeroed tile count is passed after the tensor maps (and the mask).
  bool persistent = false;
  /// > 1 (`cluster <n>`, after the tensor maps): blocks are launched in clusters of n
  /// neighbours along x where the grid's x extent is a multiple of n, else one by one.
  int cluster = 0;
  /// >= 0 (`pair <dim>`, after the tensor maps): each block runs the grid's blocks 2i and
  /// 2i + 1 along dimension `pair_dim`, so the launch has ceil(extent / 2) blocks along it.
  int pair_dim = -1;
  /// With `pair`: the entry without pairs (`unpaired`, the same tensor maps), launched
  /// where the grid's blocks fit the device's SMs at once (see launches_paired).
  std::optional<EntryInfo> unpaired;
  std::optional<EntryInfo> fallback;

  /// Whether a launch of `blocks` blocks on a device of `multiprocessors` SMs runs the
  /// paired entry: a paired kernel without an `unpaired` entry always does; with one, where
  /// the blocks are more than the unpaired entry's blocks an SM on every SM (a grid that
  /// fits the SMs at once gains nothing from sharing loads, and pairs would leave half the
  /// SMs idle).
  bool launches_paired(long long blocks, int multiprocessors) const;
};

struct Manifest {
  std::string target;
  std::vector<std::string> archs; // empty: every device of the target
  std::vector<KernelInfo> kernels;
};

/// How well an image built for `archs` fits a device of architecture `device_arch` (CUDA:
/// "sm_90"): 2 for machine code of exactly its architecture, 1 for code the driver compiles
/// for it (compute_NN, NN at most the device's) or an image that names no architecture, 0
/// when it cannot run there. A device that names no architecture takes every image (1).
int arch_fit(const std::vector<std::string> &archs, std::string_view device_arch);

/// Parses a manifest; throws tile::error naming the line and the cause when it is malformed.
Manifest parse_manifest(std::string_view text);

/// The manifest spelling of a signature: "t0x2", "s6".
std::string to_string(const ParamSignature &p);
/// How a user reads a signature: "tensor<float, 2>", "int32_t".
std::string describe(const ParamSignature &p);
/// The C++ spelling of a tile::dtype code ("float", "tile::bf16"), or "dtype N" if unknown.
std::string dtype_name(int code);
/// True when `code` is a tile::dtype.
bool is_dtype(int code);

} // namespace tile::runtime
