#include "ir/Target.h"

#include <algorithm>
#include <cctype>
#include <functional>

namespace tile::ir {

namespace {

/// `archs` grouped by `key` (their lowering class; none: unknown, joining the first group),
/// in the order of their first members.
std::vector<std::vector<std::string>>
group_by_class(const std::vector<std::string> &archs,
               const std::function<std::optional<std::string>(const std::string &)> &key) {
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> classes;
  for (const std::string &arch : archs) {
    const std::optional<std::string> k = key(arch);
    const std::string name = k ? *k : keys.empty() ? "" : keys.front();
    auto it = std::find(keys.begin(), keys.end(), name);
    if (it == keys.end()) {
      keys.push_back(name);
      classes.push_back({arch});
    } else {
      classes[it - keys.begin()].push_back(arch);
    }
  }
  return classes;
}

} // namespace

Target cpu_target() {
  Target t;
  t.kind = "cpu";
  t.warp_size = 1;
  t.max_vector_bytes = 64;
  return t;
}

std::optional<Target> cuda_target(const std::string &arch, std::string &problem) {
  std::string rest = arch.rfind("sm_", 0) == 0 ? arch.substr(3) : "";
  const bool specific = !rest.empty() && rest.back() == 'a';
  if (specific)
    rest.pop_back();
  if (rest.empty() || rest.size() > 4 ||
      !std::all_of(rest.begin(), rest.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    problem = "unknown CUDA architecture '" + arch + "'; write it as sm_NN or sm_NNa (sm_90a, sm_80)";
    return std::nullopt;
  }
  Target t;
  t.kind = "cuda";
  t.arch = arch;
  t.compute_capability = std::stoi(rest);
  const int cc = t.compute_capability;
  t.warp_size = 32;
  t.max_vector_bytes = 16;
  t.max_registers_per_thread = 255;
  t.register_file = 64 * 1024;
  t.shared_alignment = 128; // the widest vector and the bulk tensor copy's boxes
  // mma.sync.m16n8k16 with bf16 operands, ldmatrix and cp.async: sm_80 and later.
  if (cc >= 80) {
    // Lane l holds of the 16 x 8 accumulator the elements (l / 4 + 8 vh, 2 (l % 4) + vl) in
    // register 2 vh + vl (PTX ISA, the fragments of mma.m16n8k16).
    AtomLayout acc;
    acc.rows = 16;
    acc.cols = 8;
    acc.lanes = t.warp_size;
    acc.digits = {Digit{0, 2, false, 2, "vh"}, Digit{0, 8, true, 4, ""}, Digit{1, 4, true, 1, ""},
                  Digit{1, 2, false, 1, "vl"}};
    t.mma = MmaAtom{"mma.sync.m16n8k16", 16, 8, 16, acc, 16};
    t.async_copy = true;
  }
  t.bulk_tensor_copy = cc == 90 && specific;
  // wgmma.mma_async m64nNk16 (16-bit) and m64nNk32 (8-bit): 32 bytes of K an instruction
  // (targets/cuda/HOPPER-NOTES.md); sm_90a only.
  if (cc == 90 && specific)
    t.warpgroup_mma = WarpgroupMmaAtom{"wgmma.mma_async", 4, 64, 32, 8, 256, 128, 1024};
  // The largest dynamic shared memory per block (CUDA programming guide, compute
  // capabilities table).
  t.max_shared_bytes = cc >= 120                 ? 99 * 1024
                       : cc >= 90                ? 227 * 1024
                       : cc == 80 || cc == 87    ? 163 * 1024
                       : cc == 86 || cc == 89    ? 99 * 1024
                       : cc == 75                ? 64 * 1024
                                                 : 48 * 1024;
  return t;
}

std::optional<Target> hip_target(const std::string &arch, std::string &problem) {
  std::string rest = arch.rfind("gfx", 0) == 0 ? arch.substr(3) : "";
  auto hex = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f'); };
  // gfxN.. with N the major version (8, 9, 10, 11, 12), then two hexadecimal digits.
  const size_t major_digits = !rest.empty() && rest[0] == '1' ? 2 : 1;
  if (rest.size() != major_digits + 2 || !std::all_of(rest.begin(), rest.end(), hex) ||
      !std::all_of(rest.begin(), rest.begin() + major_digits, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    problem = "unknown AMD GPU architecture '" + arch + "'; write it as gfxNNN (gfx90a, gfx942)";
    return std::nullopt;
  }
  const int major = std::stoi(rest.substr(0, major_digits));
  if (major < 9 || major > 12) {
    problem = "AMD GPU architecture '" + arch + "' is not one tile builds for; write gfx9NN, gfx10NN, gfx11NN or gfx12NN";
    return std::nullopt;
  }
  Target t;
  t.kind = "hip";
  t.arch = arch;
  t.warp_size = major == 9 ? 64 : 32;
  t.max_vector_bytes = 16;
  t.max_registers_per_thread = 256;
  t.register_file = 512 * 64; // a SIMD's vector registers, in 32-bit words of a wavefront's lanes
  t.shared_alignment = 16;
  t.max_shared_bytes = 64 * 1024; // LDS a workgroup may allocate
  // v_mfma_f32_16x16x16{bf16_1k,f16} on 64 lanes: lane l holds of the 16 x 16 accumulator
  // the elements (4 (l / 16) + i, l % 16) in register i (AMD's CDNA2 and CDNA3 ISA, the
  // dense matrix layouts of MFMA). Its A operand holds the transpose: (l % 16, 4 (l / 16) + i).
  const bool mfma = arch == "gfx90a" || arch == "gfx940" || arch == "gfx941" || arch == "gfx942";
  if (mfma) {
    AtomLayout acc;
    acc.rows = 16;
    acc.cols = 16;
    acc.lanes = t.warp_size;
    acc.digits = {Digit{0, 4, true, 16, ""}, Digit{0, 4, false, 1, "vi"}, Digit{1, 16, true, 1, ""}};
    MmaAtom atom{"v_mfma_f32_16x16x16", 16, 16, 16, acc, 8};
    atom.a_from_accumulator = false;
    atom.units = "matrix cores";
    atom.operand_load = "ds_read";
    atom.bf16_suffix = "bf16_1k";
    atom.f16_suffix = "f16";
    t.mma = atom;
  }
  return t;
}

std::optional<Target> gpu_target(const std::string &kind, const std::string &arch, std::string &problem) {
  return kind == "hip" ? hip_target(arch, problem) : cuda_target(arch, problem);
}

const std::vector<std::string> &default_gpu_archs(const std::string &kind) {
  static const std::vector<std::string> hip = {"gfx90a"};
  return kind == "hip" ? hip : default_cuda_archs();
}

std::vector<std::vector<std::string>> gpu_arch_classes(const std::string &kind, const std::vector<std::string> &archs,
                                                       bool warpgroup_mma) {
  if (kind != "hip")
    return cuda_arch_classes(archs, warpgroup_mma);
  return group_by_class(archs, [](const std::string &arch) {
    std::string problem;
    auto t = hip_target(arch, problem);
    return t ? std::optional<std::string>(t->lowering_class()) : std::nullopt;
  });
}

Target common_gpu_target(const std::string &kind, const std::vector<std::string> &archs) {
  std::optional<Target> common;
  for (const std::string &arch : archs) {
    std::string problem;
    auto t = gpu_target(kind, arch, problem);
    if (!t)
      continue;
    if (!common) {
      common = t;
      continue;
    }
    common->arch += "+" + t->arch;
    common->compute_capability = std::min(common->compute_capability, t->compute_capability);
    if (!t->mma)
      common->mma.reset();
    common->async_copy &= t->async_copy;
    common->bulk_tensor_copy &= t->bulk_tensor_copy;
    if (!t->warpgroup_mma)
      common->warpgroup_mma.reset();
    common->max_shared_bytes = std::min(common->max_shared_bytes, t->max_shared_bytes);
    common->shared_alignment = std::max(common->shared_alignment, t->shared_alignment);
  }
  if (!common) {
    std::string problem;
    return *gpu_target(kind, kind == "hip" ? "gfx90a" : "sm_80", problem);
  }
  return *common;
}

Target common_cuda_target(const std::vector<std::string> &archs) { return common_gpu_target("cuda", archs); }

const std::vector<std::string> &default_cuda_archs() {
  static const std::vector<std::string> archs = {"sm_90a", "sm_80"};
  return archs;
}

std::string Target::lowering_class() const {
  return kind + " warp " + std::to_string(warp_size) + " vector " + std::to_string(max_vector_bytes) + " mma " +
         (mma ? mma->name : "none") + " async " + (async_copy ? "yes" : "no");
}

std::vector<std::vector<std::string>> cuda_arch_classes(const std::vector<std::string> &archs, bool warpgroup_mma) {
  return group_by_class(archs, [&](const std::string &arch) {
    std::string problem;
    auto t = cuda_target(arch, problem);
    return t ? std::optional<std::string>(t->lowering_class() + (warpgroup_mma && t->warpgroup_mma ? " wgmma" : ""))
             : std::nullopt;
  });
}

} // namespace tile::ir
