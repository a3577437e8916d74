#include "ir/Type.h"

namespace tile::ir {

int bits(ScalarType t) {
  switch (t) {
  case ScalarType::Bool:
  case ScalarType::I8:
  case ScalarType::U8:
  case ScalarType::F8E4M3:
  case ScalarType::F8E5M2:
    return 8;
  case ScalarType::I16:
  case ScalarType::U16:
  case ScalarType::F16:
  case ScalarType::BF16:
    return 16;
  case ScalarType::I32:
  case ScalarType::U32:
  case ScalarType::F32:
    return 32;
  case ScalarType::I64:
  case ScalarType::U64:
  case ScalarType::F64:
    return 64;
  case ScalarType::Void:
    return 0;
  }
  return 0;
}

bool is_float(ScalarType t) {
  switch (t) {
  case ScalarType::F16:
  case ScalarType::BF16:
  case ScalarType::F32:
  case ScalarType::F64:
  case ScalarType::F8E4M3:
  case ScalarType::F8E5M2:
    return true;
  default:
    return false;
  }
}

bool is_extended_float(ScalarType t) { return is_float(t) && t != ScalarType::F32 && t != ScalarType::F64; }

bool is_integer(ScalarType t) { return !is_float(t) && t != ScalarType::Bool && t != ScalarType::Void; }

bool is_signed(ScalarType t) {
  switch (t) {
  case ScalarType::I8:
  case ScalarType::I16:
  case ScalarType::I32:
  case ScalarType::I64:
    return true;
  default:
    return is_float(t);
  }
}

ScalarType arith_type(ScalarType t) { return is_extended_float(t) ? ScalarType::F32 : t; }

const char *name(ScalarType t) {
  switch (t) {
  case ScalarType::Bool: return "bool";
  case ScalarType::I8: return "i8";
  case ScalarType::U8: return "u8";
  case ScalarType::I16: return "i16";
  case ScalarType::U16: return "u16";
  case ScalarType::I32: return "i32";
  case ScalarType::U32: return "u32";
  case ScalarType::I64: return "i64";
  case ScalarType::U64: return "u64";
  case ScalarType::F16: return "f16";
  case ScalarType::BF16: return "bf16";
  case ScalarType::F32: return "f32";
  case ScalarType::F64: return "f64";
  case ScalarType::F8E4M3: return "f8e4m3";
  case ScalarType::F8E5M2: return "f8e5m2";
  case ScalarType::Void: return "void";
  }
  return "?";
}

int dtype_code(ScalarType t) {
  // Must match enum class tile::dtype in include/tile/types.h.
  switch (t) {
  case ScalarType::F32: return 0;
  case ScalarType::F64: return 1;
  case ScalarType::I8: return 2;
  case ScalarType::U8: return 3;
  case ScalarType::I16: return 4;
  case ScalarType::U16: return 5;
  case ScalarType::I32: return 6;
  case ScalarType::U32: return 7;
  case ScalarType::I64: return 8;
  case ScalarType::U64: return 9;
  case ScalarType::Bool: return 10;
  case ScalarType::F16: return 11;
  case ScalarType::BF16: return 12;
  case ScalarType::F8E4M3: return 13;
  case ScalarType::F8E5M2: return 14;
  case ScalarType::Void: return -1;
  }
  return -1;
}

} // namespace tile::ir
