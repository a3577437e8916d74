#include "ir/Target.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <memory>

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

const std::vector<std::pair<ScalarType, ScalarType>> sixteen_bit = {{ScalarType::BF16, ScalarType::BF16},
                                                                    {ScalarType::F16, ScalarType::F16}};
const std::vector<std::pair<ScalarType, ScalarType>> eight_bit = {{ScalarType::F8E4M3, ScalarType::F8E4M3},
                                                                  {ScalarType::F8E4M3, ScalarType::F8E5M2},
                                                                  {ScalarType::F8E5M2, ScalarType::F8E4M3},
                                                                  {ScalarType::F8E5M2, ScalarType::F8E5M2}};
const std::vector<std::pair<ScalarType, std::string>> ptx_types = {{ScalarType::BF16, "bf16"},
                                                                   {ScalarType::F16, "f16"},
                                                                   {ScalarType::F8E4M3, "e4m3"},
                                                                   {ScalarType::F8E5M2, "e5m2"}};

/// mma.sync's m16 x n8 accumulator: lane l holds the elements (l / 4 + 8 vh, 2 (l % 4) + vl)
/// in register 2 vh + vl (PTX ISA, the fragments of mma.m16n8k16; m16n8k32's are the same).
AtomLayout mma_sync_accumulator(int warp) {
  AtomLayout acc;
  acc.rows = 16;
  acc.cols = 8;
  acc.lanes = warp;
  acc.digits = {Digit{0, 2, false, 2, "vh"}, Digit{0, 8, true, 4, ""}, Digit{1, 4, true, 1, ""},
                Digit{1, 2, false, 1, "vl"}};
  return acc;
}

/// mma.sync.m16n8k16 (16-bit operands) or m16n8k32 (8-bit floats, sm_89 and later): 32
/// bytes of K an instruction, operands through ldmatrix (which transposes 16-bit elements
/// only: 8-bit operands are K-major).
MmaAtom mma_sync_atom(int warp, bool eight) {
  MmaAtom a;
  a.family = "mma.sync";
  a.warps = 1;
  a.m = 16;
  a.n = 8;
  a.k_bytes = 32;
  a.operand_types = eight ? eight_bit : sixteen_bit;
  a.accumulator = mma_sync_accumulator(warp);
  a.read = OperandRead::MatrixLoad;
  a.operand_row_bytes = 16;
  // A's registers of 16-bit elements are two accumulator atoms side by side; of 8-bit ones
  // four consecutive elements a register, which no accumulator layout gives.
  a.a_from_accumulator = !eight;
  a.transposable_bytes = 2;
  a.operand_load = "ldmatrix";
  a.spelling = "mma.sync.aligned.m16n8k{k}.row.col.f32.{a}.{b}.f32";
  a.remark = "mma.sync.m16n8k{k}.{types}";
  a.type_names = ptx_types;
  return a;
}

/// wgmma.mma_async m64nNk16 (16-bit) and m64nNk32 (8-bit floats): 32 bytes of K an
/// instruction, N a multiple of 8 up to 256, operands through descriptors in the 128-, 64-
/// or 32-byte swizzle (codes 1, 2, 3), a also from registers (laid out as mma.sync's A, each
/// warp 16 rows) (targets/cuda/HOPPER-NOTES.md).
MmaAtom wgmma_atom(int warp) {
  MmaAtom a;
  a.family = "wgmma";
  a.warps = 4;
  a.m = 64;
  a.n_step = 8;
  a.max_n = 256;
  a.k_bytes = 32;
  a.operand_types = sixteen_bit;
  a.operand_types.insert(a.operand_types.end(), eight_bit.begin(), eight_bit.end());
  a.accumulator = mma_sync_accumulator(warp);
  a.read = OperandRead::Descriptor;
  a.a_from_accumulator = true;
  a.transposable_bytes = 2;
  a.swizzles = {{128, 1}, {64, 2}, {32, 3}};
  a.asynchronous = true;
  a.spelling = "wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{a}.{b}";
  a.remark = "wgmma.m64n{n}k{k}.{types}";
  a.type_names = ptx_types;
  return a;
}

/// v_mfma_f32_16x16x16{bf16_1k,f16} on 64 lanes: lane l holds of the 16 x 16 accumulator
/// the elements (4 (l / 16) + i, l % 16) in register i (AMD's CDNA2 and CDNA3 ISA, the
/// dense matrix layouts of MFMA). Its A operand holds the transpose, (l % 16, 4 (l / 16) +
/// i): a fragment a goes through shared memory.
MmaAtom mfma_atom(int warp) {
  AtomLayout acc;
  acc.rows = 16;
  acc.cols = 16;
  acc.lanes = warp;
  acc.digits = {Digit{0, 4, true, 16, ""}, Digit{0, 4, false, 1, "vi"}, Digit{1, 16, true, 1, ""}};
  MmaAtom a;
  a.family = "MFMA";
  a.warps = 1;
  a.m = 16;
  a.n = 16;
  a.k_bytes = 32;
  a.operand_types = sixteen_bit;
  a.accumulator = acc;
  a.read = OperandRead::LaneLoad;
  a.operand_row_bytes = 8;
  a.a_from_accumulator = false;
  a.transposable_bytes = 2;
  a.units = "matrix cores";
  a.operand_load = "ds_read";
  a.spelling = "__builtin_amdgcn_mfma_f32_16x16x16{a}";
  a.remark = "v_mfma_f32_16x16x16{a}";
  a.type_names = {{ScalarType::BF16, "bf16_1k"}, {ScalarType::F16, "f16"}};
  return a;
}

} // namespace

bool Target::has_warp_mma() const {
  return std::any_of(mma_atoms.begin(), mma_atoms.end(), [](const MmaAtomRef &a) { return a->warps == 1; });
}

bool Target::has_warpgroup_mma() const {
  return std::any_of(mma_atoms.begin(), mma_atoms.end(), [](const MmaAtomRef &a) { return a->warps > 1; });
}

MmaAtomRef Target::mma_atom(const std::string &family, ScalarType a, ScalarType b) const {
  for (const MmaAtomRef &atom : mma_atoms)
    if (atom->family == family && atom->takes(a, b))
      return atom;
  return nullptr;
}

std::vector<MmaAtomRef> Target::gemm_atoms(bool warpgroup) const {
  std::vector<MmaAtomRef> out;
  for (const MmaAtomRef &a : mma_atoms)
    if (warpgroup || a->warps == 1)
      out.push_back(a);
  return out;
}

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
  t.warpgroup_warps = 4;
  // wgmma (sm_90a only) first: where it takes a gemm, it is the faster.
  if (cc == 90 && specific) {
    t.mma_atoms.push_back(std::make_shared<const MmaAtom>(wgmma_atom(t.warp_size)));
    t.bulk_tensor_copy = true;
    t.bulk_copy_swizzles = {128, 64, 32};
    t.bulk_copy_row_bytes = 16;
    t.bulk_copy_box = 256;
    t.bulk_copy_alignment = 128;
    t.cluster_blocks = 2;
  }
  // mma.sync.m16n8k16 with bf16 and f16 operands, ldmatrix and cp.async: sm_80 and later;
  // m16n8k32 with 8-bit floats: sm_89 and later.
  if (cc >= 80) {
    t.mma_atoms.push_back(std::make_shared<const MmaAtom>(mma_sync_atom(t.warp_size, false)));
    t.async_copy = true;
  }
  if (cc >= 89)
    t.mma_atoms.push_back(std::make_shared<const MmaAtom>(mma_sync_atom(t.warp_size, true)));
  // Shared memory a multiprocessor has and reserves a block (CUDA programming guide,
  // compute capabilities table): sm_90 228 KiB, sm_80 and sm_87 164 KiB, sm_86 and sm_89 100
  // KiB, 1 KiB reserved a block.
  t.multiprocessor_shared_bytes = cc >= 120                 ? 100 * 1024
                                  : cc >= 90                ? 228 * 1024
                                  : cc == 80 || cc == 87    ? 164 * 1024
                                  : cc == 86 || cc == 89    ? 100 * 1024
                                  : cc == 75                ? 64 * 1024
                                                            : 0;
  t.block_reserved_shared_bytes = 1024;
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
  const bool mfma = arch == "gfx90a" || arch == "gfx940" || arch == "gfx941" || arch == "gfx942";
  if (mfma)
    t.mma_atoms.push_back(std::make_shared<const MmaAtom>(mfma_atom(t.warp_size)));
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
                                                       const GemmUse &gemms) {
  if (kind != "hip")
    return cuda_arch_classes(archs, gemms);
  return group_by_class(archs, [&](const std::string &arch) {
    std::string problem;
    auto t = hip_target(arch, problem);
    return t ? std::optional<std::string>(t->lowering_class(gemms)) : std::nullopt;
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
    // The atoms all of them have (by their spelling and types).
    std::vector<MmaAtomRef> shared;
    for (const MmaAtomRef &a : common->mma_atoms)
      if (std::any_of(t->mma_atoms.begin(), t->mma_atoms.end(),
                      [&](const MmaAtomRef &b) {
                        return b->spelling == a->spelling && b->operand_types == a->operand_types;
                      }))
        shared.push_back(a);
    common->mma_atoms = shared;
    common->async_copy &= t->async_copy;
    common->bulk_tensor_copy &= t->bulk_tensor_copy;
    if (!t->bulk_tensor_copy)
      common->bulk_copy_swizzles.clear();
    common->cluster_blocks = std::min(common->cluster_blocks, t->cluster_blocks);
    common->max_shared_bytes = std::min(common->max_shared_bytes, t->max_shared_bytes);
    common->multiprocessor_shared_bytes = std::min(common->multiprocessor_shared_bytes, t->multiprocessor_shared_bytes);
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

std::string Target::lowering_class(const GemmUse &gemms) const {
  std::string atoms;
  for (const MmaAtomRef &a : gemm_atoms(gemms.warpgroup))
    for (auto &[x, y] : gemms.operand_types)
      if (a->takes(x, y)) {
        atoms += " " + a->remark_name(x, y, 0);
        break;
      }
  return kind + " warp " + std::to_string(warp_size) + " vector " + std::to_string(max_vector_bytes) + " mma" +
         (atoms.empty() ? " none" : atoms) + " async " + (async_copy ? "yes" : "no");
}

std::vector<std::vector<std::string>> cuda_arch_classes(const std::vector<std::string> &archs, const GemmUse &gemms) {
  return group_by_class(archs, [&](const std::string &arch) {
    std::string problem;
    auto t = cuda_target(arch, problem);
    return t ? std::optional<std::string>(t->lowering_class(gemms)) : std::nullopt;
  });
}

} // namespace tile::ir
