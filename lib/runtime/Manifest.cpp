#include "runtime/Manifest.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "tile/host.h"

namespace tile::runtime {

namespace {

constexpr const char *dtype_names[] = {
    "float",    "double",    "int8_t",     "uint8_t",      "int16_t",
    "uint16_t", "int32_t",   "uint32_t",   "int64_t",      "uint64_t",
    "bool",     "tile::f16", "tile::bf16", "tile::f8e4m3", "tile::f8e5m2",
};
constexpr int dtype_count = int(sizeof(dtype_names) / sizeof(dtype_names[0]));
static_assert(dtype_count == int(tile::dtype::f8e5m2) + 1, "dtype_names follows tile::dtype");

[[noreturn]] void malformed(int line, const std::string &cause) {
  throw tile::error("malformed tile image manifest, line " + std::to_string(line) + ": " + cause);
}

/// Parses all of `text` as a non-negative decimal int; false if it is anything else.
bool parse_int(std::string_view text, int &value) {
  if (text.empty() || text.front() < '0' || text.front() > '9')
    return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

/// Splits off the next space-separated field of `rest`; empty when there is none.
std::string_view next_field(std::string_view &rest) {
  size_t space = rest.find(' ');
  std::string_view field = rest.substr(0, space);
  rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  return field;
}

/// Splits off an entry's `<symbol> <threads> <shared bytes>` from `rest`; false where they are
/// not that.
bool parse_entry(std::string_view &rest, EntryInfo &e) {
  e.symbol = next_field(rest);
  const std::string_view threads = next_field(rest), shared = next_field(rest);
  auto [end, ec] = std::from_chars(shared.data(), shared.data() + shared.size(), e.shared_bytes);
  return !e.symbol.empty() && parse_int(threads, e.threads) && e.threads > 0 && !shared.empty() &&
         ec == std::errc() && end == shared.data() + shared.size() && e.shared_bytes >= 0;
}

ParamSignature parse_param(std::string_view text, int line) {
  ParamSignature p;
  auto bad = [&](const std::string &why) {
    malformed(line, "parameter '" + std::string(text) + "': " + why);
  };
  if (text.empty())
    bad("empty signature");
  if (text.front() == 's') {
    if (!parse_int(text.substr(1), p.dtype))
      bad("expected s<dtype>");
  } else if (text.front() == 't') {
    size_t x = text.find('x');
    if (x == std::string_view::npos || !parse_int(text.substr(1, x - 1), p.dtype) ||
        !parse_int(text.substr(x + 1), p.rank))
      bad("expected t<dtype>x<rank>");
    if (p.rank < 1 || p.rank > 4)
      bad("tensor rank must be 1 to 4");
    p.is_tensor = true;
  } else {
    bad("expected t<dtype>x<rank> or s<dtype>");
  }
  if (!is_dtype(p.dtype))
    bad("unknown dtype code " + std::to_string(p.dtype));
  return p;
}

KernelInfo parse_kernel(std::string_view rest, int line, int version) {
  KernelInfo k;
  std::string_view fields[4];
  const char *names[4] = {"key", "symbol", "threads", "parameters"};
  for (int i = 0; i < 4; ++i) {
    fields[i] = next_field(rest);
    if (fields[i].empty())
      malformed(line, std::string("kernel record without ") + names[i]);
    if (i == 2 && version >= 2) {
      std::string_view shared = next_field(rest);
      auto [end, ec] = std::from_chars(shared.data(), shared.data() + shared.size(), k.shared_bytes);
      if (shared.empty() || ec != std::errc() || end != shared.data() + shared.size() || k.shared_bytes < 0)
        malformed(line, "shared memory size '" + std::string(shared) + "' is not a non-negative integer");
    }
  }
  if (rest.empty())
    malformed(line, "kernel record without display name");
  k.key = fields[0];
  k.symbol = fields[1];
  if (!parse_int(fields[2], k.threads) || k.threads <= 0)
    malformed(line, "threads '" + std::string(fields[2]) + "' is not a positive integer");
  if (fields[3] != "-") {
    std::string_view params = fields[3];
    for (;;) {
      size_t comma = params.find(',');
      k.params.push_back(parse_param(params.substr(0, comma), line));
      if (comma == std::string_view::npos)
        break;
      params = params.substr(comma + 1);
    }
  }
  k.display_name = rest;
  return k;
}

} // namespace

bool KernelInfo::launches_paired(long long blocks, int multiprocessors) const {
  if (pair_dim < 0)
    return false;
  return !unpaired || blocks > static_cast<long long>(unpaired->blocks_per_sm) * std::max(1, multiprocessors);
}

Manifest parse_manifest(std::string_view text) {
  Manifest m;
  std::set<std::string, std::less<>> keys;
  int line = 0, version = 0;
  bool have_target = false;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view record = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++line;
    if (line == 1) {
      std::string_view rest = record;
      if (next_field(rest) != "tile-image")
        malformed(line, "expected 'tile-image 2'");
      if (!parse_int(rest, version))
        malformed(line, "expected 'tile-image 2'");
      if (version != 1 && version != 2)
        malformed(line, "unsupported manifest version " + std::to_string(version) +
                            " (this runtime reads versions 1 and 2)");
      continue;
    }
    if (record.empty())
      continue;
    std::string_view rest = record;
    std::string_view kind = next_field(rest);
    if (kind == "target") {
      if (have_target)
        malformed(line, "a second 'target' record");
      if (rest.empty() ||
          rest.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string_view::npos)
        malformed(line, "expected 'target <name>'");
      m.target = rest;
      have_target = true;
    } else if (kind == "archs") {
      if (!have_target || !m.kernels.empty() || !m.archs.empty())
        malformed(line, "an 'archs' record must follow the 'target' record, once");
      while (!rest.empty()) {
        std::string_view a = next_field(rest);
        if (a.empty() || a.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string_view::npos)
          malformed(line, "expected 'archs <architecture>...'");
        m.archs.emplace_back(a);
      }
      if (m.archs.empty())
        malformed(line, "expected 'archs <architecture>...'");
    } else if (kind == "kernel") {
      if (!have_target)
        malformed(line, "a 'kernel' record before the 'target' record");
      if (!m.kernels.empty() && !m.kernels.back().tensor_maps.empty() && !m.kernels.back().fallback)
        malformed(line, "kernel '" + m.kernels.back().key + "' has tensor maps but no 'fallback' record");
      KernelInfo k = parse_kernel(rest, line, version);
      if (!keys.insert(k.key).second)
        malformed(line, "kernel '" + k.key + "' is listed twice");
      m.kernels.push_back(std::move(k));
    } else if (kind == "tmap") {
      if (m.kernels.empty() || m.kernels.back().fallback)
        malformed(line, "a 'tmap' record must follow its kernel's record, before its 'fallback'");
      KernelInfo &k = m.kernels.back();
      TensorMapSpec spec;
      const std::string_view param = next_field(rest), swizzle = next_field(rest), box = next_field(rest);
      if (!parse_int(param, spec.param) || spec.param < 0 || spec.param >= int(k.params.size()) ||
          !k.params[size_t(spec.param)].is_tensor)
        malformed(line, "tensor map of '" + std::string(param) + "', which is not a tensor parameter of the kernel");
      if (!parse_int(swizzle, spec.swizzle_bytes) ||
          (spec.swizzle_bytes != 0 && spec.swizzle_bytes != 32 && spec.swizzle_bytes != 64 && spec.swizzle_bytes != 128))
        malformed(line, "tensor map swizzle '" + std::string(swizzle) + "' is not 0, 32, 64 or 128");
      std::string_view dims = box;
      if (box.empty() || box.back() == 'x')
        malformed(line, "tensor map box '" + std::string(box) + "' is not extents of 1 to 256 joined by 'x'");
      while (!dims.empty()) {
        const size_t x = dims.find('x');
        int extent = 0;
        if (!parse_int(dims.substr(0, x), extent) || extent < 1 || extent > 256)
          malformed(line, "tensor map box '" + std::string(box) + "' is not extents of 1 to 256 joined by 'x'");
        spec.box.push_back(extent);
        dims = x == std::string_view::npos ? std::string_view() : dims.substr(x + 1);
      }
      if (spec.box.size() != size_t(k.params[size_t(spec.param)].rank))
        malformed(line, "tensor map box '" + std::string(box) + "' does not have one extent per dimension of the tensor");
      if (const std::string_view flag = next_field(rest); flag == "optional")
        spec.optional = true;
      else if (!flag.empty())
        malformed(line, "unknown tensor map flag '" + std::string(flag) + "' (expected 'optional')");
      if (!rest.empty())
        malformed(line, "expected 'tmap <param> <swizzle> <box> [optional]'");
      k.tensor_maps.push_back(std::move(spec));
    } else if (kind == "persistent") {
      if (m.kernels.empty() || m.kernels.back().tensor_maps.empty() || m.kernels.back().fallback ||
          m.kernels.back().persistent || !rest.empty())
        malformed(line, "a 'persistent' record must follow a kernel's 'tmap' records, once, before its 'fallback'");
      m.kernels.back().persistent = true;
    } else if (kind == "cluster") {
      int n = 0;
      if (m.kernels.empty() || m.kernels.back().tensor_maps.empty() || m.kernels.back().fallback ||
          m.kernels.back().cluster || m.kernels.back().persistent || !parse_int(next_field(rest), n) || n < 2 ||
          n > 8 || !rest.empty())
        malformed(line, "expected 'cluster <2 to 8>' after a kernel's 'tmap' records, once, before its 'fallback' "
                        "(and not with 'persistent')");
      m.kernels.back().cluster = n;
    } else if (kind == "pair") {
      int d = -1;
      if (m.kernels.empty() || m.kernels.back().tensor_maps.empty() || m.kernels.back().fallback ||
          m.kernels.back().pair_dim >= 0 || m.kernels.back().persistent || m.kernels.back().cluster ||
          !parse_int(next_field(rest), d) || d < 0 || d > 2 || !rest.empty())
        malformed(line, "expected 'pair <0 to 2>' after a kernel's 'tmap' records, once, before its 'fallback' "
                        "(and not with 'persistent' or 'cluster')");
      m.kernels.back().pair_dim = d;
    } else if (kind == "unpaired") {
      if (m.kernels.empty() || m.kernels.back().pair_dim < 0 || m.kernels.back().unpaired ||
          m.kernels.back().fallback)
        malformed(line, "an 'unpaired' record must follow a kernel's 'pair' record, once, before its 'fallback'");
      EntryInfo e;
      if (!parse_entry(rest, e) || !parse_int(next_field(rest), e.blocks_per_sm) || e.blocks_per_sm <= 0 ||
          !rest.empty())
        malformed(line, "expected 'unpaired <symbol> <threads> <shared bytes> <blocks an SM>'");
      m.kernels.back().unpaired = std::move(e);
    } else if (kind == "fallback") {
      if (m.kernels.empty() || m.kernels.back().tensor_maps.empty() || m.kernels.back().fallback)
        malformed(line, "a 'fallback' record must follow a kernel's 'tmap' records, once");
      EntryInfo e;
      if (!parse_entry(rest, e) || !rest.empty())
        malformed(line, "expected 'fallback <symbol> <threads> <shared bytes>'");
      m.kernels.back().fallback = std::move(e);
    } else {
      malformed(line, "unknown record '" + std::string(kind) + "'");
    }
  }
  if (!m.kernels.empty() && !m.kernels.back().tensor_maps.empty() && !m.kernels.back().fallback)
    malformed(line, "kernel '" + m.kernels.back().key + "' has tensor maps but no 'fallback' record");
  if (line == 0)
    malformed(1, "the manifest is empty");
  if (!have_target)
    malformed(line, "no 'target' record");
  return m;
}

namespace {
/// The number after `prefix` in `arch` ("sm_90a" -> 90, with `specific`); -1 when none.
int arch_number(std::string_view arch, std::string_view prefix, bool *specific = nullptr) {
  if (arch.substr(0, prefix.size()) != prefix)
    return -1;
  std::string_view digits = arch.substr(prefix.size());
  if (specific)
    *specific = !digits.empty() && digits.back() == 'a';
  if (!digits.empty() && digits.back() == 'a')
    digits.remove_suffix(1);
  if (digits.empty() || digits.size() > 4 || digits.find_first_not_of("0123456789") != std::string_view::npos)
    return -1;
  return std::stoi(std::string(digits));
}
} // namespace

int arch_fit(const std::vector<std::string> &archs, std::string_view device_arch) {
  if (archs.empty() || device_arch.empty())
    return 1;
  const int device = arch_number(device_arch, "sm_");
  int best = 0;
  for (const std::string &a : archs) {
    if (int sm = arch_number(a, "sm_"); sm >= 0 && sm == device)
      best = 2;
    else if (int ptx = arch_number(a, "compute_"); ptx >= 0 && device >= 0 && ptx <= device && a.back() != 'a')
      best = std::max(best, 1);
  }
  return best;
}

bool is_dtype(int code) {
  return code >= 0 && code < dtype_count;
}

std::string dtype_name(int code) {
  return is_dtype(code) ? dtype_names[code] : "dtype " + std::to_string(code);
}

std::string to_string(const ParamSignature &p) {
  if (p.is_tensor)
    return "t" + std::to_string(p.dtype) + "x" + std::to_string(p.rank);
  return "s" + std::to_string(p.dtype);
}

std::string describe(const ParamSignature &p) {
  if (p.is_tensor)
    return "tensor<" + dtype_name(p.dtype) + ", " + std::to_string(p.rank) + ">";
  return dtype_name(p.dtype);
}

} // namespace tile::runtime
