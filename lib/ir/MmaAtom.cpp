#include "ir/MmaAtom.h"

#include <algorithm>

namespace tile::ir {

namespace {

/// `format` with each {key} replaced by its value.
std::string fill(std::string format, const std::vector<std::pair<std::string, std::string>> &values) {
  for (auto &[key, value] : values) {
    const std::string slot = "{" + key + "}";
    for (size_t at = format.find(slot); at != std::string::npos; at = format.find(slot, at + value.size()))
      format.replace(at, slot.size(), value);
  }
  return format;
}

} // namespace

bool MmaAtom::takes(ScalarType a, ScalarType b) const {
  return std::find(operand_types.begin(), operand_types.end(), std::pair{a, b}) != operand_types.end();
}

namespace {

std::string spelled(const MmaAtom &atom, const std::string &format, ScalarType a, ScalarType b, const std::string &n,
                    const std::string &k) {
  auto type_name = [&](ScalarType t) {
    for (auto &[type, name] : atom.type_names)
      if (type == t)
        return name;
    return std::string(name(t));
  };
  const std::string types = std::string(name(a)) + (a == b ? "" : "." + std::string(name(b)));
  return fill(format, {{"n", n}, {"k", k}, {"a", type_name(a)}, {"b", type_name(b)}, {"types", types}});
}

} // namespace

std::string MmaAtom::instruction(ScalarType a, ScalarType b, int cols) const {
  return spelled(*this, spelling, a, b, std::to_string(cols), std::to_string(k_for(a)));
}

std::string MmaAtom::remark_name(ScalarType a, ScalarType b, int cols) const {
  return spelled(*this, remark, a, b, std::to_string(cols), std::to_string(k_for(a)));
}

std::string MmaAtom::ir_name(ScalarType a, ScalarType b) const {
  return spelled(*this, remark, a, b, n ? std::to_string(n) : "N", std::to_string(k_for(a)));
}

int MmaAtom::swizzle_code(int swizzle) const {
  for (auto &[bytes, code] : swizzles)
    if (bytes == swizzle)
      return code;
  return 0;
}

} // namespace tile::ir
