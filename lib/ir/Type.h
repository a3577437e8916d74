// Scalar element types of the tile IR.
#pragma once

#include <cstdint>
#include <string>

namespace tile::ir {

enum class ScalarType : std::uint8_t {
  Bool,
  I8,
  U8,
  I16,
  U16,
  I32,
  U32,
  I64,
  U64,
  F16,
  BF16,
  F32,
  F64,
  F8E4M3,
  F8E5M2,
  Void, // statements, strings
};

/// Storage width in bits (Bool counts as 8: it is stored as a byte).
int bits(ScalarType t);
inline int bytes(ScalarType t) { return bits(t) / 8; }
/// True for every floating type, including the 8- and 16-bit ones.
bool is_float(ScalarType t);
/// True for f16, bf16 and the fp8 types: floats that compute in f32.
bool is_extended_float(ScalarType t);
bool is_integer(ScalarType t); // excludes Bool
bool is_signed(ScalarType t);
/// The type arithmetic on `t` happens in (extended floats compute in f32).
ScalarType arith_type(ScalarType t);
/// "f32", "bf16", "i32", ... as printed in the IR.
const char *name(ScalarType t);
/// The code of the same type in tile::dtype (include/tile/types.h), or -1 for Void.
int dtype_code(ScalarType t);

} // namespace tile::ir
