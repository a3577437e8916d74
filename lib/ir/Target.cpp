#include "ir/Target.h"

#include <algorithm>
#include <cctype>

namespace tile::ir {

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

Target common_cuda_target(const std::vector<std::string> &archs) {
  std::optional<Target> common;
  for (const std::string &arch : archs) {
    std::string problem;
    auto t = cuda_target(arch, problem);
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
    return *cuda_target("sm_80", problem);
  }
  return *common;
}

const std::vector<std::string> &default_cuda_archs() {
  static const std::vector<std::string> archs = {"sm_90a", "sm_80"};
  return archs;
}

std::string Target::lowering_class() const {
  return kind + " warp " + std::to_string(warp_size) + " vector " + std::to_string(max_vector_bytes) + " mma " +
         (mma ? mma->name : "none") + " async " + (async_copy ? "yes" : "no");
}

std::vector<std::vector<std::string>> cuda_arch_classes(const std::vector<std::string> &archs, bool warpgroup_mma) {
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> classes;
  for (const std::string &arch : archs) {
    std::string problem;
    auto t = cuda_target(arch, problem);
    const std::string key = t ? t->lowering_class() + (warpgroup_mma && t->warpgroup_mma ? " wgmma" : "")
                              : keys.empty() ? "" : keys.front();
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) {
      keys.push_back(key);
      classes.push_back({arch});
    } else {
      classes[it - keys.begin()].push_back(arch);
    }
  }
  return classes;
}

} // namespace tile::ir
