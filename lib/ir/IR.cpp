#include "ir/IR.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace tile::ir {

const char *name(Scope s) {
  switch (s) {
  case Scope::Global: return "global";
  case Scope::Shared: return "shared";
  case Scope::Fragment: return "fragment";
  case Scope::Local: return "local";
  }
  return "?";
}

const char *name(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::Mod: return "%";
  case BinaryOp::Min: return "min";
  case BinaryOp::Max: return "max";
  case BinaryOp::EQ: return "==";
  case BinaryOp::NE: return "!=";
  case BinaryOp::LT: return "<";
  case BinaryOp::LE: return "<=";
  case BinaryOp::GT: return ">";
  case BinaryOp::GE: return ">=";
  case BinaryOp::And: return "&&";
  case BinaryOp::Or: return "||";
  case BinaryOp::BitAnd: return "&";
  case BinaryOp::BitOr: return "|";
  case BinaryOp::BitXor: return "^";
  case BinaryOp::Shl: return "<<";
  case BinaryOp::Shr: return ">>";
  }
  return "?";
}

bool is_comparison(BinaryOp op) {
  switch (op) {
  case BinaryOp::EQ:
  case BinaryOp::NE:
  case BinaryOp::LT:
  case BinaryOp::LE:
  case BinaryOp::GT:
  case BinaryOp::GE:
    return true;
  default:
    return false;
  }
}

const char *name(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg: return "-";
  case UnaryOp::Not: return "!";
  case UnaryOp::BitNot: return "~";
  }
  return "?";
}

const char *name(Intrinsic f) {
  switch (f) {
  case Intrinsic::Abs: return "abs";
  case Intrinsic::Exp: return "exp";
  case Intrinsic::Exp2: return "exp2";
  case Intrinsic::Log: return "log";
  case Intrinsic::Log2: return "log2";
  case Intrinsic::Sqrt: return "sqrt";
  case Intrinsic::Rsqrt: return "rsqrt";
  case Intrinsic::Tanh: return "tanh";
  case Intrinsic::Sigmoid: return "sigmoid";
  case Intrinsic::ShuffleXor: return "shfl_xor";
  case Intrinsic::Pack2: return "pack2";
  case Intrinsic::BoundsCheck: return "bounds_check";
  case Intrinsic::Fma: return "fma";
  case Intrinsic::Round: return "round";
  case Intrinsic::Floor: return "floor";
  case Intrinsic::Ceil: return "ceil";
  case Intrinsic::Trunc: return "trunc";
  case Intrinsic::Sin: return "sin";
  case Intrinsic::Cos: return "cos";
  case Intrinsic::Erf: return "erf";
  case Intrinsic::Pow: return "pow";
  case Intrinsic::Log1p: return "log1p";
  case Intrinsic::Expm1: return "expm1";
  case Intrinsic::IsNan: return "isnan";
  case Intrinsic::IsInf: return "isinf";
  }
  return "?";
}

const char *name(ForKind k) {
  switch (k) {
  case ForKind::Serial: return "serial";
  case ForKind::Parallel: return "parallel";
  case ForKind::Pipelined: return "pipelined";
  case ForKind::Unrolled: return "unroll";
  case ForKind::Threads: return "threads";
  case ForKind::Slots: return "slots";
  case ForKind::Vectorized: return "vectorized";
  case ForKind::Rolled: return "rolled";
  }
  return "?";
}

const char *name(WarpPolicy p) {
  switch (p) {
  case WarpPolicy::Square: return "square";
  case WarpPolicy::FullRow: return "full_row";
  case WarpPolicy::FullCol: return "full_col";
  }
  return "?";
}

const char *name(ReduceKind k) {
  switch (k) {
  case ReduceKind::Sum: return "sum";
  case ReduceKind::Max: return "max";
  case ReduceKind::Min: return "min";
  case ReduceKind::AbsMax: return "absmax";
  case ReduceKind::AbsSum: return "abssum";
  }
  return "?";
}

const char *name(AtomicKind k) {
  switch (k) {
  case AtomicKind::Add: return "add";
  case AtomicKind::Max: return "max";
  case AtomicKind::Min: return "min";
  case AtomicKind::Exchange: return "exchange";
  case AtomicKind::CompareExchange: return "compare_exchange";
  }
  return "?";
}

const char *name(LayoutKind k) {
  switch (k) {
  case LayoutKind::RowMajor: return "row_major";
  case LayoutKind::ColMajor: return "col_major";
  case LayoutKind::Swizzled: return "swizzled";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------
// Buffers and regions
// ---------------------------------------------------------------------------------------

std::int64_t BufferNode::extent(int d) const {
  auto v = as_const_int(shape[d]);
  assert(v && "extent() of a buffer with a run-time shape");
  return *v;
}

std::int64_t BufferNode::num_elements() const {
  std::int64_t n = 1;
  for (int d = 0; d < rank(); ++d)
    n *= extent(d);
  return n;
}

Buffer make_tensor_buffer(const std::string &name, int param_index, ScalarType dtype, int rank,
                          bool read_only) {
  auto b = std::make_shared<BufferNode>();
  b->name = name;
  b->scope = Scope::Global;
  b->dtype = dtype;
  b->read_only = read_only;
  for (int d = 0; d < rank; ++d) {
    b->shape.push_back(tensor_dim(param_index, name, d, false));
    b->strides.push_back(tensor_dim(param_index, name, d, true));
  }
  return b;
}

Buffer make_buffer(const std::string &name, Scope scope, ScalarType dtype,
                   const std::vector<std::int64_t> &shape) {
  auto b = std::make_shared<BufferNode>();
  b->name = name;
  b->scope = scope;
  b->dtype = dtype;
  for (auto e : shape)
    b->shape.push_back(int_imm(e, ScalarType::I32));
  return b;
}

std::vector<std::int64_t> Region::tile_shape() const {
  std::vector<std::int64_t> s;
  for (int d : tile_dims)
    s.push_back(extent[d]);
  return s;
}

std::int64_t Region::num_elements() const {
  std::int64_t n = 1;
  for (auto e : extent)
    n *= e;
  return n;
}

std::vector<Expr> Region::index_of(const std::vector<Expr> &tile_index) const {
  std::vector<Expr> idx = begin;
  for (size_t i = 0; i < tile_dims.size(); ++i)
    idx[tile_dims[i]] = add(begin[tile_dims[i]], tile_index[i]);
  return idx;
}

bool Region::whole() const {
  if (int(tile_dims.size()) != buffer->rank())
    return false;
  for (int d = 0; d < buffer->rank(); ++d)
    if (!is_const_int(begin[d], 0) || extent[d] != buffer->extent(d))
      return false;
  return true;
}

Region full_region(const Buffer &b) {
  Region r;
  r.buffer = b;
  for (int d = 0; d < b->rank(); ++d) {
    r.begin.push_back(int_imm(0));
    r.extent.push_back(b->extent(d));
    r.tile_dims.push_back(d);
  }
  return r;
}

// ---------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------

namespace {

#define TILE_SCALAR_FN inline
#include "tile/detail/tile_scalar.h"
#undef TILE_SCALAR_FN

std::int64_t wrap(std::int64_t v, ScalarType t) {
  int n = bits(t);
  if (t == ScalarType::Bool)
    return v != 0;
  if (n >= 64)
    return v;
  std::uint64_t mask = (std::uint64_t(1) << n) - 1;
  std::uint64_t u = std::uint64_t(v) & mask;
  if (is_signed(t) && (u >> (n - 1)))
    u |= ~mask;
  return std::int64_t(u);
}

/// v rounded to nearest even in type t, once (as the targets convert a double at run time):
/// a constant of an extended float type holds a value of that type, so that folding its
/// conversion to float gives what the conversion gives at run time.
double round_to(double v, ScalarType t) {
  if (t == ScalarType::F32)
    return double(float(v));
  if (!is_extended_float(t) || std::isnan(v) || v == 0)
    return v;
  // Significand bits, smallest normal exponent, largest finite value; e4m3 has no infinity
  // (overflow gives NaN).
  int p = 8, emin = -126;
  double max = 0x1.fep127;
  bool has_inf = true;
  if (t == ScalarType::F16)
    p = 11, emin = -14, max = 65504;
  else if (t == ScalarType::F8E4M3)
    p = 4, emin = -6, max = 448, has_inf = false;
  else if (t == ScalarType::F8E5M2)
    p = 3, emin = -14, max = 57344;
  if (std::isinf(v))
    return has_inf ? v : std::numeric_limits<double>::quiet_NaN();
  const int e = std::max(std::ilogb(v), emin);
  const double r = std::ldexp(std::nearbyint(std::ldexp(v, p - 1 - e)), e - (p - 1));
  if (std::fabs(r) > max)
    return has_inf ? std::copysign(std::numeric_limits<double>::infinity(), v)
                   : std::numeric_limits<double>::quiet_NaN();
  return r;
}

/// C++'s integral promotion.
ScalarType promote(ScalarType t) {
  t = arith_type(t);
  if (t == ScalarType::Bool || (is_integer(t) && bits(t) < 32))
    return ScalarType::I32;
  return t;
}

ScalarType unsigned_of(ScalarType t) {
  switch (t) {
  case ScalarType::I8: return ScalarType::U8;
  case ScalarType::I16: return ScalarType::U16;
  case ScalarType::I32: return ScalarType::U32;
  case ScalarType::I64: return ScalarType::U64;
  default: return t;
  }
}

/// The usual arithmetic conversions.
ScalarType common_type(ScalarType a, ScalarType b) {
  a = promote(a);
  b = promote(b);
  if (a == b)
    return a;
  if (is_float(a) || is_float(b)) {
    if (!is_float(a))
      return b;
    if (!is_float(b))
      return a;
    return bits(a) >= bits(b) ? a : b;
  }
  if (is_signed(a) == is_signed(b))
    return bits(a) >= bits(b) ? a : b;
  ScalarType s = is_signed(a) ? a : b, u = is_signed(a) ? b : a;
  if (bits(u) >= bits(s))
    return u;
  if (bits(s) > bits(u))
    return s;
  return unsigned_of(s);
}


/// The kernel language's float -> integer conversion (include/tile/detail/tile_scalar.h) of
/// `v` to integer type `t`, as the int64 bits of the result.
std::int64_t saturate(double v, ScalarType t) {
  switch (t) {
  case ScalarType::I8: return saturate_cast<std::int8_t>(v);
  case ScalarType::U8: return saturate_cast<std::uint8_t>(v);
  case ScalarType::I16: return saturate_cast<std::int16_t>(v);
  case ScalarType::U16: return saturate_cast<std::uint16_t>(v);
  case ScalarType::I32: return saturate_cast<std::int32_t>(v);
  case ScalarType::U32: return saturate_cast<std::uint32_t>(v);
  case ScalarType::I64: return saturate_cast<std::int64_t>(v);
  default: return std::int64_t(saturate_cast<std::uint64_t>(v));
  }
}

} // namespace

Expr int_imm(std::int64_t v, ScalarType t) {
  if (is_float(t))
    return float_imm(double(v), t);
  return std::make_shared<IntImmNode>(t, wrap(v, t));
}
Expr float_imm(double v, ScalarType t) { return std::make_shared<FloatImmNode>(t, round_to(v, t)); }
Expr bool_imm(bool v) { return std::make_shared<IntImmNode>(ScalarType::Bool, v ? 1 : 0); }
Expr string_imm(std::string v) { return std::make_shared<StringImmNode>(std::move(v)); }
Var make_var(const std::string &name, ScalarType t) { return std::make_shared<VarNode>(t, name); }

std::optional<std::int64_t> as_const_int(const Expr &e) {
  if (!e)
    return std::nullopt;
  if (auto i = e->as<IntImmNode>())
    return i->value;
  return std::nullopt;
}
bool is_const_int(const Expr &e, std::int64_t v) {
  auto c = as_const_int(e);
  return c && *c == v;
}

Expr cast(ScalarType t, Expr v) {
  if (v->type == t)
    return v;
  if (auto i = v->as<IntImmNode>()) {
    if (is_float(t))
      return float_imm(is_signed(v->type) ? double(i->value) : double(std::uint64_t(i->value)), t);
    return int_imm(i->value, t);
  }
  if (auto f = v->as<FloatImmNode>()) {
    if (is_float(t))
      return float_imm(f->value, t);
    if (t == ScalarType::Bool)
      return bool_imm(f->value != 0);
    return int_imm(saturate(f->value, t), t);
  }
  return std::make_shared<CastNode>(t, std::move(v));
}

Expr index64(const Expr &e, const std::function<bool(const Expr &)> &fits_32_bits) {
  constexpr ScalarType I64 = ScalarType::I64;
  if (e->type == I64 || !is_integer(e->type) || !is_signed(e->type) || (fits_32_bits && fits_32_bits(e)))
    return cast(I64, e);
  auto index64 = [&](const Expr &x) { return ir::index64(x, fits_32_bits); };
  if (auto b = e->as<BinaryNode>()) {
    switch (b->op) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Min:
    case BinaryOp::Max: return binary(b->op, index64(b->a), index64(b->b));
    case BinaryOp::Div:
    case BinaryOp::Mod:
      // By a positive constant only: division by 0 and MIN / -1 have results of their own
      // in 32 bits (the targets' checked division), which 64 bits would not give.
      if (auto d = as_const_int(b->b); d && *d > 0)
        return binary(b->op, index64(b->a), index64(b->b));
      break;
    default: break; // shifts wrap by definition since C++20; bitwise operators gain nothing
    }
  } else if (auto u = e->as<UnaryNode>(); u && u->op == UnaryOp::Neg) {
    return unary(UnaryOp::Neg, index64(u->a));
  } else if (auto s = e->as<SelectNode>()) {
    return select(s->cond, index64(s->t), index64(s->f));
  } else if (auto c = e->as<CastNode>()) {
    // A widening conversion of a signed value (not a truncation, not from unsigned).
    const ScalarType from = c->value->type;
    if (is_integer(from) && is_signed(from) && bits(from) <= bits(e->type))
      return index64(c->value);
  }
  return cast(I64, e);
}

namespace {

std::optional<double> as_const_float(const Expr &e) {
  if (auto f = e->as<FloatImmNode>())
    return f->value;
  return std::nullopt;
}

Expr fold_int(BinaryOp op, std::int64_t x, std::int64_t y, ScalarType t, ScalarType result) {
  bool u = !is_signed(t);
  auto ux = std::uint64_t(x), uy = std::uint64_t(y);
  switch (op) {
  case BinaryOp::Add: return int_imm(std::int64_t(ux + uy), t);
  case BinaryOp::Sub: return int_imm(std::int64_t(ux - uy), t);
  case BinaryOp::Mul: return int_imm(std::int64_t(ux * uy), t);
  case BinaryOp::Div:
    if (y == 0 || (!u && x == INT64_MIN && y == -1))
      return nullptr;
    return int_imm(u ? std::int64_t(ux / uy) : x / y, t);
  case BinaryOp::Mod:
    if (y == 0 || (!u && x == INT64_MIN && y == -1))
      return nullptr;
    return int_imm(u ? std::int64_t(ux % uy) : x % y, t);
  case BinaryOp::Min: return int_imm(u ? std::int64_t(std::min(ux, uy)) : std::min(x, y), t);
  case BinaryOp::Max: return int_imm(u ? std::int64_t(std::max(ux, uy)) : std::max(x, y), t);
  case BinaryOp::EQ: return bool_imm(x == y);
  case BinaryOp::NE: return bool_imm(x != y);
  case BinaryOp::LT: return bool_imm(u ? ux < uy : x < y);
  case BinaryOp::LE: return bool_imm(u ? ux <= uy : x <= y);
  case BinaryOp::GT: return bool_imm(u ? ux > uy : x > y);
  case BinaryOp::GE: return bool_imm(u ? ux >= uy : x >= y);
  case BinaryOp::And: return bool_imm(x && y);
  case BinaryOp::Or: return bool_imm(x || y);
  case BinaryOp::BitAnd: return int_imm(x & y, t);
  case BinaryOp::BitOr: return int_imm(x | y, t);
  case BinaryOp::BitXor: return int_imm(x ^ y, t);
  case BinaryOp::Shl:
    if (y < 0 || y >= bits(t))
      return nullptr;
    return int_imm(std::int64_t(ux << y), t);
  case BinaryOp::Shr:
    if (y < 0 || y >= bits(t))
      return nullptr;
    return int_imm(u ? std::int64_t(ux >> y) : (x >> y), t);
  }
  (void)result;
  return nullptr;
}

Expr fold_float(BinaryOp op, double x, double y, ScalarType t) {
  switch (op) {
  case BinaryOp::Add: return float_imm(x + y, t);
  case BinaryOp::Sub: return float_imm(x - y, t);
  case BinaryOp::Mul: return float_imm(x * y, t);
  case BinaryOp::Div: return float_imm(x / y, t);
  case BinaryOp::Min: return float_imm(std::fmin(x, y), t);
  case BinaryOp::Max: return float_imm(std::fmax(x, y), t);
  case BinaryOp::EQ: return bool_imm(x == y);
  case BinaryOp::NE: return bool_imm(x != y);
  case BinaryOp::LT: return bool_imm(x < y);
  case BinaryOp::LE: return bool_imm(x <= y);
  case BinaryOp::GT: return bool_imm(x > y);
  case BinaryOp::GE: return bool_imm(x >= y);
  default: return nullptr;
  }
}

} // namespace

Expr binary(BinaryOp op, Expr a, Expr b) {
  ScalarType t;
  if (op == BinaryOp::And || op == BinaryOp::Or) {
    t = ScalarType::Bool;
    a = cast(t, std::move(a));
    b = cast(t, std::move(b));
    if (auto x = as_const_int(a))
      return *x ? (op == BinaryOp::And ? b : a) : (op == BinaryOp::And ? a : b);
  } else if (op == BinaryOp::Shl || op == BinaryOp::Shr) {
    t = promote(a->type);
    a = cast(t, std::move(a));
    b = cast(promote(b->type), std::move(b));
  } else {
    t = common_type(a->type, b->type);
    a = cast(t, std::move(a));
    b = cast(t, std::move(b));
  }
  ScalarType result = is_comparison(op) ? ScalarType::Bool : t;
  auto ca = as_const_int(a), cb = as_const_int(b);
  if (ca && cb)
    if (auto f = fold_int(op, *ca, *cb, t, result))
      return f;
  auto fa = as_const_float(a), fb = as_const_float(b);
  if (fa && fb)
    if (auto f = fold_float(op, *fa, *fb, t))
      return f;
  // Identities that hold for every value of the other operand (integers only for 0 * x,
  // since 0 * NaN is NaN).
  if (is_integer(t)) {
    if (op == BinaryOp::Add && ca && *ca == 0)
      return b;
    if ((op == BinaryOp::Add || op == BinaryOp::Sub) && cb && *cb == 0)
      return a;
    if (op == BinaryOp::Mul && ca && *ca == 1)
      return b;
    if ((op == BinaryOp::Mul || op == BinaryOp::Div) && cb && *cb == 1)
      return a;
    if (op == BinaryOp::Mul && ((ca && *ca == 0) || (cb && *cb == 0)))
      return int_imm(0, t);
    if (op == BinaryOp::Mod && cb && (*cb == 1 || *cb == -1))
      return int_imm(0, t);
  }
  return std::make_shared<BinaryNode>(result, op, std::move(a), std::move(b));
}

Expr unary(UnaryOp op, Expr a) {
  if (op == UnaryOp::Not) {
    a = cast(ScalarType::Bool, std::move(a));
    if (auto c = as_const_int(a))
      return bool_imm(!*c);
    return std::make_shared<UnaryNode>(ScalarType::Bool, op, std::move(a));
  }
  ScalarType t = promote(a->type);
  a = cast(t, std::move(a));
  if (auto c = as_const_int(a))
    return int_imm(op == UnaryOp::Neg ? std::int64_t(0 - std::uint64_t(*c)) : ~*c, t);
  if (op == UnaryOp::Neg)
    if (auto f = as_const_float(a))
      return float_imm(-*f, t);
  return std::make_shared<UnaryNode>(t, op, std::move(a));
}

Expr select(Expr c, Expr t, Expr f) {
  c = cast(ScalarType::Bool, std::move(c));
  ScalarType ty = t->type == f->type ? t->type : common_type(t->type, f->type);
  t = cast(ty, std::move(t));
  f = cast(ty, std::move(f));
  if (auto v = as_const_int(c))
    return *v ? t : f;
  return std::make_shared<SelectNode>(ty, std::move(c), std::move(t), std::move(f));
}

Expr call(Intrinsic fn, std::vector<Expr> args) {
  ScalarType t = args.at(0)->type;
  for (auto &a : args)
    t = common_type(t, a->type);
  if (fn != Intrinsic::Abs && !is_float(t))
    t = ScalarType::F32;
  for (auto &a : args)
    a = cast(t, std::move(a));
  if (fn == Intrinsic::IsNan || fn == Intrinsic::IsInf)
    return std::make_shared<CallNode>(ScalarType::Bool, fn, std::move(args));
  return std::make_shared<CallNode>(t, fn, std::move(args));
}

Expr shuffle_xor(Expr value, int lane_mask) {
  ScalarType t = value->type;
  return std::make_shared<CallNode>(t, Intrinsic::ShuffleXor, std::vector<Expr>{std::move(value), int_imm(lane_mask)});
}

Expr bounds_check(Expr in_range, std::string message, std::vector<Expr> values) {
  std::vector<Expr> args{cast(ScalarType::Bool, std::move(in_range)), string_imm(std::move(message))};
  for (auto &v : values)
    args.push_back(cast(ScalarType::I64, std::move(v)));
  return std::make_shared<CallNode>(ScalarType::Bool, Intrinsic::BoundsCheck, std::move(args));
}

Expr load(Buffer b, std::vector<Expr> indices) {
  for (auto &i : indices)
    if (!is_integer(i->type))
      i = cast(ScalarType::I64, std::move(i));
  return std::make_shared<LoadNode>(std::move(b), std::move(indices));
}

Expr tensor_dim(int param_index, const std::string &tensor, int dim, bool stride) {
  return std::make_shared<TensorDimNode>(tensor, param_index, dim, stride);
}

// ---------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------

Stmt seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto &s : stmts) {
    if (!s)
      continue;
    if (auto q = s->as<SeqNode>())
      flat.insert(flat.end(), q->stmts.begin(), q->stmts.end());
    else
      flat.push_back(s);
  }
  if (flat.size() == 1)
    return flat[0];
  return std::make_shared<SeqNode>(std::move(flat));
}

Stmt declare(Var v, Expr init) {
  if (init)
    init = cast(v->type, std::move(init));
  return std::make_shared<DeclareNode>(std::move(v), std::move(init));
}
Stmt assign(Var v, Expr value) {
  value = cast(v->type, std::move(value));
  return std::make_shared<AssignNode>(std::move(v), std::move(value));
}
Stmt store(Buffer b, std::vector<Expr> indices, Expr value) {
  value = cast(b->dtype, std::move(value));
  for (auto &i : indices)
    if (!is_integer(i->type))
      i = cast(ScalarType::I64, std::move(i));
  return std::make_shared<StoreNode>(std::move(b), std::move(indices), std::move(value));
}
Stmt for_loop(Var v, Expr begin, Expr extent, ForKind k, Stmt body, Expr step, int stages) {
  begin = cast(v->type, std::move(begin));
  extent = cast(v->type, std::move(extent));
  step = step ? cast(v->type, std::move(step)) : int_imm(1, v->type);
  return std::make_shared<ForNode>(std::move(v), std::move(begin), std::move(extent), std::move(step), k,
                                   stages, body ? std::move(body) : seq({}));
}
Stmt if_then_else(Expr c, Stmt t, Stmt e, bool rare_else) {
  c = cast(ScalarType::Bool, std::move(c));
  return std::make_shared<IfNode>(std::move(c), t ? std::move(t) : seq({}), std::move(e), rare_else && e);
}
Stmt decl_buffer(Buffer b) { return std::make_shared<DeclBufferNode>(std::move(b)); }
Stmt barrier() { return std::make_shared<BarrierNode>(); }
Stmt while_loop(Expr cond, Stmt body) { return std::make_shared<WhileNode>(std::move(cond), std::move(body)); }

std::int64_t Kernel::storage_elements(const BufferNode *b) const {
  auto it = shared_layouts.find(b);
  return shared_storage_elements(*b, it == shared_layouts.end() ? nullptr : &it->second);
}

bool Kernel::warpgroup_gemm(const GemmNode &g) const { return g.atom && g.atom->asynchronous; }

} // namespace tile::ir
