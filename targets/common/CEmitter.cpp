#include "targets/common/CEmitter.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "ir/Visitor.h"

namespace tile::targets {

using namespace ir;

namespace {

int precedence(BinaryOp op) {
  switch (op) {
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Mod: return P_Mul;
  case BinaryOp::Add:
  case BinaryOp::Sub: return P_Add;
  case BinaryOp::Shl:
  case BinaryOp::Shr: return P_Shift;
  case BinaryOp::LT:
  case BinaryOp::LE:
  case BinaryOp::GT:
  case BinaryOp::GE: return P_Rel;
  case BinaryOp::EQ:
  case BinaryOp::NE: return P_Eq;
  case BinaryOp::BitAnd: return P_BAnd;
  case BinaryOp::BitXor: return P_BXor;
  case BinaryOp::BitOr: return P_BOr;
  case BinaryOp::And: return P_LAnd;
  case BinaryOp::Or: return P_LOr;
  case BinaryOp::Min:
  case BinaryOp::Max: return P_Primary; // calls
  }
  return P_None;
}

/// Operators whose mixing readers (and clang's -Wparentheses) want parenthesized.
bool wants_parens_when_mixed(BinaryOp op) {
  switch (op) {
  case BinaryOp::And:
  case BinaryOp::Or:
  case BinaryOp::BitAnd:
  case BinaryOp::BitOr:
  case BinaryOp::BitXor:
  case BinaryOp::Shl:
  case BinaryOp::Shr: return true;
  default: return false;
  }
}

std::string float_literal(double v, ScalarType t) {
  const bool f64 = t == ScalarType::F64;
  if (std::isnan(v))
    return f64 ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")";
  if (std::isinf(v))
    return std::string(v < 0 ? "-" : "") + (f64 ? "__builtin_inf()" : "__builtin_inff()");
  char buf[64];
  std::snprintf(buf, sizeof buf, f64 ? "%.17g" : "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return f64 ? s : s + "f";
}

std::string paren(const std::string &s, int prec, int min_prec) { return prec < min_prec ? "(" + s + ")" : s; }

/// Collects the variables `s` declares and those it assigns.
struct Assignments {
  std::set<const VarNode *> declared, assigned;
};
Assignments assignments_of(const Stmt &s) {
  Assignments a;
  for_each_node(s, nullptr, [&](const Stmt &n) {
    if (auto d = n->as<DeclareNode>())
      a.declared.insert(d->var.get());
    else if (const VarNode *v = assigned_var(n.get()))
      a.assigned.insert(v);
  });
  return a;
}


} // namespace

std::string c_string(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '?') {
      out += "\\?";
    } else if (c < 0x20 || c >= 0x7f) { // also bytes of UTF-8: the literal holds them as written
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

std::string comment_text(const std::string &s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '?') {
      out += char(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::string kernel_comment(const Kernel &k) {
  std::string s = "// " + comment_text(k.display_name);
  if (!k.location.empty())
    s += " (" + comment_text(k.location) + ")";
  return s + "\n";
}

std::string entry_symbol(const std::string &prefix, const std::string &key) {
  std::string s = prefix;
  for (char c : key)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  std::uint64_t h = 1469598103934665603ull; // FNV-1a: stable across hosts and runs
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "_%08x", unsigned(h ^ (h >> 32)));
  return s + buf;
}

// Names ----------------------------------------------------------------------------------

Names::Names(const std::set<std::string> &reserved_by_target) : used_(reserved_by_target) {
  static const char *reserved[] = {
      // C++ keywords and alternative tokens
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
      "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
      "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
      "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      // what generated code of every target refers to
      "std", "printf", "main", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t",
      "uint64_t",
      // macros of <cmath>, <cstdio>, <climits>
      "INFINITY", "NAN", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "EOF", "BUFSIZ", "NULL", "stdin", "stdout",
      "stderr", "errno", "assert", "CHAR_BIT", "CHAR_MIN", "CHAR_MAX", "INT_MIN", "INT_MAX", "UINT_MAX",
      "LONG_MIN", "LONG_MAX", "SHRT_MIN", "SHRT_MAX", "FILENAME_MAX", "FOPEN_MAX", "TMP_MAX", "SEEK_SET",
      "SEEK_CUR", "SEEK_END", "MATH_ERRNO", "MATH_ERREXCEPT", "FP_NAN", "FP_INFINITE", "FP_ZERO",
      "FP_NORMAL", "FP_SUBNORMAL", "M_PI", "M_E"};
  for (const char *r : reserved)
    used_.insert(r);
}

std::string Names::of(const void *key, const std::string &base) {
  auto it = names_.find(key);
  if (it != names_.end())
    return it->second;
  return names_[key] = fresh(base);
}

std::string Names::fresh(const std::string &base) {
  std::string b;
  for (char c : base)
    b += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (b.empty())
    b = "v";
  // Leading digits, "__" and "_X" are not ours to use.
  if (std::isdigit(static_cast<unsigned char>(b[0])) ||
      (b[0] == '_' && b.size() > 1 && (b[1] == '_' || std::isupper(static_cast<unsigned char>(b[1])))))
    b = "v" + b;
  if (used_.insert(b).second)
    return b;
  for (int n = 1;; ++n) {
    std::string s = b + "_" + std::to_string(n);
    if (used_.insert(s).second)
      return s;
  }
}

// CEmitter ---------------------------------------------------------------------------------

CEmitter::CEmitter(const Kernel &k, std::ostringstream &os, std::string lib, const std::set<std::string> &reserved)
    : k_(k), os_(os), lib_(std::move(lib)), names_(reserved) {}

void CEmitter::line(const std::string &s) { os_ << std::string(2 * indent_, ' ') << s << "\n"; }

void CEmitter::block(const Stmt &s) {
  ++indent_;
  stmt(s);
  --indent_;
}

std::string CEmitter::type_name(ScalarType t) const {
  switch (t) {
  case ScalarType::Bool: return "bool";
  case ScalarType::I8: return "int8_t";
  case ScalarType::U8: return "uint8_t";
  case ScalarType::I16: return "int16_t";
  case ScalarType::U16: return "uint16_t";
  case ScalarType::I32: return "int32_t";
  case ScalarType::U32: return "uint32_t";
  case ScalarType::I64: return "int64_t";
  case ScalarType::U64: return "uint64_t";
  case ScalarType::F16: return lib_ + "::f16";
  case ScalarType::BF16: return lib_ + "::bf16";
  case ScalarType::F32: return "float";
  case ScalarType::F64: return "double";
  case ScalarType::F8E4M3: return lib_ + "::f8e4m3";
  case ScalarType::F8E5M2: return lib_ + "::f8e5m2";
  case ScalarType::Void: return "void";
  }
  return "void";
}

std::string CEmitter::int_literal(std::int64_t v, ScalarType t) const {
  switch (t) {
  case ScalarType::Bool: return v ? "true" : "false";
  case ScalarType::I32: return v == std::int64_t(INT32_MIN) ? "(-2147483647 - 1)" : std::to_string(v);
  case ScalarType::U32: return std::to_string(std::uint32_t(v)) + "u";
  case ScalarType::I64: return v == INT64_MIN ? "(-9223372036854775807l - 1)" : std::to_string(v) + "l";
  case ScalarType::U64: return std::to_string(std::uint64_t(v)) + "ul";
  default: return "(" + type_name(t) + ")" + std::to_string(v);
  }
}

void CEmitter::collect_tensor_dims() {
  auto strides_of = [&](const Buffer &b) {
    if (b->scope != Scope::Global)
      return;
    for (auto &s : b->strides)
      if (auto t = s->as<TensorDimNode>())
        used_strides_.insert({t->param_index, t->dim});
  };
  for_each_node(
      k_.body,
      [&](const Expr &e) {
        if (auto t = e->as<TensorDimNode>())
          (t->stride ? used_strides_ : used_sizes_).insert({t->param_index, t->dim});
        else if (auto l = e->as<LoadNode>())
          strides_of(l->buffer);
      },
      [&](const Stmt &s) {
        if (auto st = s->as<StoreNode>())
          strides_of(st->buffer);
        else if (auto db = s->as<DeclBufferNode>(); db && db->buffer->view_of)
          strides_of(db->buffer); // (its first element's offset)
        else if (auto a = s->as<AtomicNode>())
          strides_of(a->dst.buffer);
        else if (auto g = s->as<GemmNode>()) {
          strides_of(g->a.buffer);
          strides_of(g->b.buffer);
          strides_of(g->c.buffer);
        }
      });
}

void CEmitter::unpack_tensor(int i, const Buffer &b, const std::string &arg, const std::string &restrict_kw) {
  const std::string elem = std::string(b->read_only ? "const " : "") + type_name(b->dtype);
  const std::string name = buffer(b);
  line(elem + " *" + restrict_kw + " " + name + " = (" + elem + " *)" + arg + ".data;");
  for (int d = 0; d < b->rank(); ++d)
    if (used_sizes_.count({i, d})) {
      sizes_[{i, d}] = names_.fresh(name + "_size" + std::to_string(d));
      line("const int64_t " + sizes_[{i, d}] + " = " + arg + ".sizes[" + std::to_string(d) + "];");
    }
  for (int d = 0; d < b->rank(); ++d)
    if (used_strides_.count({i, d})) {
      strides_[{i, d}] = names_.fresh(name + "_stride" + std::to_string(d));
      line("const int64_t " + strides_[{i, d}] + " = " + arg + ".strides[" + std::to_string(d) + "];");
    }
}

void CEmitter::emit_view(const Buffer &b) {
  // The tensor's pointer moved to the view's first element (no __restrict: it aliases the tensor).
  const std::string elem = std::string(b->read_only ? "const " : "") + type_name(b->dtype);
  Expr off;
  for (int d = 0; d < b->rank(); ++d)
    if (!is_const_int(b->origin[d], 0)) {
      Expr term = mul(ir::cast(ScalarType::I64, b->origin[d]), b->strides[d]);
      off = off ? add(off, term) : term;
    }
  line(elem + " *" + buffer(b) + " = " + address(b->view_of, off ? off : int_imm(0, ScalarType::I64)) + ";");
}

std::string CEmitter::cast(ScalarType to, const Expr &value) {
  if (is_float(value->type) && is_integer(to)) {
    // Truncating, saturating, NaN to 0 (the device library's saturate_cast).
    std::string x = is_extended_float(value->type) ? "(float)" + expr(value, P_Unary) : expr(value);
    return lib_ + "::saturate_cast<" + type_name(to) + ">(" + x + ")";
  }
  std::string inner = expr(value, P_Unary);
  // There is no conversion between two extended floats: go through float (exact).
  if (is_extended_float(value->type) && is_extended_float(to))
    inner = "(float)" + inner;
  return "(" + type_name(to) + ")" + inner;
}

std::string CEmitter::expr(const Expr &e, int min_prec) {
  switch (e->kind) {
  case ExprKind::IntImm: {
    std::string s = int_literal(e->as<IntImmNode>()->value, e->type);
    return paren(s, s[0] == '-' ? P_Unary : P_Primary, min_prec);
  }
  case ExprKind::FloatImm: {
    auto n = e->as<FloatImmNode>();
    if (is_extended_float(n->type))
      return paren("(" + type_name(n->type) + ")" + float_literal(n->value, ScalarType::F32), P_Unary, min_prec);
    std::string s = float_literal(n->value, n->type);
    return paren(s, s[0] == '-' ? P_Unary : P_Primary, min_prec);
  }
  case ExprKind::StringImm:
    return c_string(e->as<StringImmNode>()->value);
  case ExprKind::Var:
    return var(e->as<VarNode>());
  case ExprKind::TensorDim: {
    auto n = e->as<TensorDimNode>();
    auto &names = n->stride ? strides_ : sizes_;
    auto it = names.find({n->param_index, n->dim});
    if (it != names.end())
      return it->second;
    unlowered("a tensor size that was not collected");
    return "0";
  }
  case ExprKind::Cast: {
    auto n = e->as<CastNode>();
    return paren(cast(n->type, n->value), P_Unary, min_prec);
  }
  case ExprKind::Binary: {
    auto n = e->as<BinaryNode>();
    if (n->op == BinaryOp::Min || n->op == BinaryOp::Max)
      return lib_ + (n->op == BinaryOp::Min ? "::min(" : "::max(") + expr(n->a) + ", " + expr(n->b) + ")";
    if (n->op == BinaryOp::Mod && is_float(n->a->type))
      return lib_ + "::fmod(" + expr(n->a) + ", " + expr(n->b) + ")";
    // Integer division by a divisor that may be 0 or -1 has a defined value in the language
    // (the device library's checked_div / checked_mod); other divisors divide plainly.
    if ((n->op == BinaryOp::Div || n->op == BinaryOp::Mod) && is_integer(n->a->type)) {
      auto d = as_const_int(n->b);
      if (!d || *d == 0 || (*d == -1 && is_signed(n->b->type)))
        return lib_ + (n->op == BinaryOp::Div ? "::checked_div(" : "::checked_mod(") + expr(n->a) + ", " +
               expr(n->b) + ")";
    }
    const int p = precedence(n->op);
    // a + -3 reads better as a - 3 (same value, same type).
    if (n->op == BinaryOp::Add || n->op == BinaryOp::Sub)
      if (auto c = n->b->as<IntImmNode>(); c && is_signed(c->type) && c->value < 0 && c->value != INT64_MIN &&
                                            !(c->type == ScalarType::I32 && c->value == INT32_MIN))
        return paren(expr(n->a, p) + (n->op == BinaryOp::Add ? " - " : " + ") + expr(int_imm(-c->value, c->type), p + 1),
                     p, min_prec);
    auto operand = [&](const Expr &x, int min) {
      auto b = x->as<BinaryNode>();
      if (b && b->op != n->op && wants_parens_when_mixed(n->op) && wants_parens_when_mixed(b->op))
        return "(" + expr(x) + ")";
      return expr(x, min);
    };
    std::string s = operand(n->a, p) + " " + name(n->op) + " " + operand(n->b, p + 1);
    return paren(s, p, min_prec);
  }
  case ExprKind::Unary: {
    auto n = e->as<UnaryNode>();
    std::string inner = expr(n->a, P_Unary);
    if (!inner.empty() && (inner[0] == '-' || inner[0] == '+'))
      inner = "(" + inner + ")"; // never "--x"
    return paren(std::string(name(n->op)) + inner, P_Unary, min_prec);
  }
  case ExprKind::Select: {
    auto n = e->as<SelectNode>();
    return "(" + expr(n->cond, P_LOr) + " ? " + expr(n->t, P_LOr) + " : " + expr(n->f, P_Ternary) + ")";
  }
  case ExprKind::Call: {
    auto n = e->as<CallNode>();
    if (n->fn == Intrinsic::BoundsCheck)
      return bounds_check(n);
    std::string s = lib_ + "::" + name(n->fn) + "(";
    for (size_t i = 0; i < n->args.size(); ++i)
      s += (i ? ", " : "") + expr(n->args[i]);
    return s + ")";
  }
  case ExprKind::Load: {
    auto n = e->as<LoadNode>();
    return element(n->buffer, n->indices);
  }
  case ExprKind::VectorFlag:
    return paren(vector_flag(e->as<VectorFlagNode>()), P_Primary, min_prec);
  case ExprKind::Aligned: {
    auto n = e->as<AlignedNode>();
    return paren("reinterpret_cast<uintptr_t>(" + address(n->buffer, n->offset) + ") % " + std::to_string(n->bytes) +
                     " == 0",
                 P_Eq, min_prec);
  }
  }
  return "";
}

namespace {
/// Whether every value of `e` and of each part of it lies in 32 bits.
bool fits_32_bits(const Expr &e, const analysis::VarRanges &ranges) {
  if (!is_integer(e->type))
    return false;
  auto r = analysis::bounds_of(e, ranges);
  if (!r || r->lo < INT32_MIN || r->hi > INT32_MAX)
    return false;
  if (auto b = e->as<BinaryNode>())
    return fits_32_bits(b->a, ranges) && fits_32_bits(b->b, ranges);
  if (auto u = e->as<UnaryNode>())
    return fits_32_bits(u->a, ranges);
  if (auto s = e->as<SelectNode>())
    return fits_32_bits(s->t, ranges) && fits_32_bits(s->f, ranges);
  if (auto c = e->as<CastNode>())
    return fits_32_bits(c->value, ranges);
  return true;
}
} // namespace

Expr CEmitter::index64(const Expr &e) const {
  if (!wide_indices_)
    return ir::cast(ScalarType::I64, e);
  return ir::index64(e, [&](const Expr &x) { return fits_32_bits(x, ranges_); });
}

Expr CEmitter::offset(const Buffer &b, const std::vector<Expr> &idx) {
  Expr off;
  if (b->scope == Scope::Global) {
    for (int d = 0; d < b->rank(); ++d) {
      Expr term = mul(index64(idx[d]), b->strides[d]);
      off = off ? add(off, term) : term;
    }
    return off ? off : int_imm(0, ScalarType::I64);
  }
  return ir::shared_offset(*b, shared_layout(b), idx);
}

const ir::SharedLayout *CEmitter::shared_layout(const Buffer &b) const {
  auto it = k_.shared_layouts.find(b.get());
  return it == k_.shared_layouts.end() ? nullptr : &it->second;
}

std::int64_t CEmitter::storage_elements(const Buffer &b) const { return k_.storage_elements(b.get()); }

std::string CEmitter::element(const Buffer &b, const std::vector<Expr> &idx) {
  return buffer(b) + "[" + expr(offset(b, idx)) + "]";
}

std::string CEmitter::address(const Buffer &b, const Expr &offset) {
  return is_const_int(offset, 0) ? buffer(b) : buffer(b) + " + " + expr(offset, P_Add + 1);
}

std::string CEmitter::vector_flag(const VectorFlagNode *) {
  unlowered("a vector flag");
  return "false";
}

void CEmitter::emit_vector_move(const VectorMoveNode *) { unlowered("a vector move"); }
void CEmitter::emit_matrix_load(const MatrixLoadNode *) { unlowered("a matrix load"); }
void CEmitter::emit_mma(const MmaNode *) { unlowered("a tensor-core instruction"); }
void CEmitter::emit_wgmma(const WgmmaNode *) { unlowered("a warpgroup tensor-core instruction"); }
void CEmitter::emit_warpgroup_sync(const WarpgroupSyncNode *) { unlowered("a warpgroup fence"); }
void CEmitter::emit_proxy_fence() { unlowered("an async-proxy fence"); }
void CEmitter::emit_mbarrier(const MbarrierNode *) { unlowered("an mbarrier"); }
void CEmitter::emit_bulk_copy(const BulkCopyNode *) { unlowered("a bulk tensor copy"); }
void CEmitter::emit_register_budget(const RegisterBudgetNode *) { unlowered("a register budget"); }
void CEmitter::emit_bulk_store(const BulkStoreNode *) { unlowered("a bulk tensor store"); }
void CEmitter::emit_bulk_store_sync(const BulkStoreSyncNode *) { unlowered("a bulk tensor store's commit or wait"); }
void CEmitter::emit_tile_fetch(const TileFetchNode *) { unlowered("a persistent grid's tile fetch"); }
void CEmitter::emit_iteration_slot(const IterationSlotNode *) { unlowered("a warp-specialized loop's iteration slot"); }
void CEmitter::emit_named_barrier(const NamedBarrierNode *) { unlowered("a named barrier"); }

void CEmitter::unlowered(const std::string &what) {
  line("#error \"tile: " + what + " reached the codegen; a pass is missing from the pipeline\"");
}

void CEmitter::stmt(const Stmt &s) {
  if (!s)
    return;
  switch (s->kind) {
  case StmtKind::Seq:
    for (auto &c : s->as<SeqNode>()->stmts)
      stmt(c);
    return;
  case StmtKind::Declare: {
    auto n = s->as<DeclareNode>();
    std::string d = type_name(n->var->type) + " " + var(n->var);
    line(n->init ? d + " = " + expr(n->init) + ";" : d + ";");
    return;
  }
  case StmtKind::Assign: {
    auto n = s->as<AssignNode>();
    line(var(n->var) + " = " + expr(n->value) + ";");
    return;
  }
  case StmtKind::Store:
    return emit_store(s->as<StoreNode>());
  case StmtKind::For: {
    // The loop variable's range, while its body is emitted, where the bounds are constants.
    auto n = s->as<ForNode>();
    auto begin = as_const_int(n->begin), extent = as_const_int(n->extent), step = as_const_int(n->step);
    const bool ranged = begin && extent && step && *extent > 0 && *step > 0 && *extent < (std::int64_t(1) << 31) &&
                        *step < (std::int64_t(1) << 31) && !ranges_.count(n->var.get());
    if (ranged)
      ranges_[n->var.get()] = {*begin, *begin + (*extent - 1) * *step};
    emit_for(n);
    if (ranged)
      ranges_.erase(n->var.get());
    return;
  }
  case StmtKind::If: {
    auto n = s->as<IfNode>();
    line("if (" + expr(n->cond) + ") {");
    block(n->then_case);
    if (n->else_case) {
      line("} else {");
      block(n->else_case);
    }
    line("}");
    return;
  }
  case StmtKind::DeclBuffer:
    if (s->as<DeclBufferNode>()->buffer->view_of)
      return emit_view(s->as<DeclBufferNode>()->buffer);
    return emit_decl_buffer(s->as<DeclBufferNode>());
  case StmtKind::Gemm:
    return emit_gemm(s->as<GemmNode>());
  case StmtKind::Atomic:
    return emit_atomic(s->as<AtomicNode>());
  case StmtKind::Print:
    return emit_print(s->as<PrintNode>());
  case StmtKind::Assert:
    return emit_assert(s->as<AssertNode>());
  case StmtKind::Barrier:
    return emit_barrier(s->as<BarrierNode>());
  case StmtKind::Async:
    return emit_async(s->as<AsyncNode>());
  case StmtKind::AsyncCommit:
  case StmtKind::AsyncWait:
    return emit_async_sync(s.get());
  case StmtKind::VectorMove:
    return emit_vector_move(s->as<VectorMoveNode>());
  case StmtKind::MatrixLoad:
    return emit_matrix_load(s->as<MatrixLoadNode>());
  case StmtKind::Mma:
    return emit_mma(s->as<MmaNode>());
  case StmtKind::Wgmma:
    return emit_wgmma(s->as<WgmmaNode>());
  case StmtKind::WarpgroupSync:
    return emit_warpgroup_sync(s->as<WarpgroupSyncNode>());
  case StmtKind::ProxyFence:
    return emit_proxy_fence();
  case StmtKind::Mbarrier:
    return emit_mbarrier(s->as<MbarrierNode>());
  case StmtKind::BulkCopy:
    return emit_bulk_copy(s->as<BulkCopyNode>());
  case StmtKind::RegisterBudget:
    return emit_register_budget(s->as<RegisterBudgetNode>());
  case StmtKind::While: {
    auto n = s->as<WhileNode>();
    line("while (" + expr(n->cond) + ") {");
    block(n->body);
    line("}");
    return;
  }
  case StmtKind::BulkStore:
    return emit_bulk_store(s->as<BulkStoreNode>());
  case StmtKind::BulkStoreSync:
    return emit_bulk_store_sync(s->as<BulkStoreSyncNode>());
  case StmtKind::TileFetch:
    return emit_tile_fetch(s->as<TileFetchNode>());
  case StmtKind::IterationSlot:
    return emit_iteration_slot(s->as<IterationSlotNode>());
  case StmtKind::NamedBarrier:
    return emit_named_barrier(s->as<NamedBarrierNode>());
  case StmtKind::AnnotateLayout:
    return; // consumed by layout inference where a target has one
  case StmtKind::Copy:
  case StmtKind::Fill:
  case StmtKind::Reduce:
  case StmtKind::Cumsum:
    return unlowered("a tile operation");
  }
}

void CEmitter::emit_store(const StoreNode *n) {
  line(element(n->buffer, n->indices) + " = " + expr(n->value) + ";");
}

void CEmitter::emit_atomic(const AtomicNode *n) {
  if (n->src || !n->value || n->dst.buffer->scope != Scope::Global)
    return unlowered("a region atomic");
  std::string call = lib_ + "::atomic_" + name(n->atomic_kind) + "(&" + element(n->dst.buffer, n->dst.begin) + ", " +
                     (n->compare ? expr(n->compare) + ", " : "") + expr(n->value) + ")";
  line((n->result ? var(n->result) + " = " : "") + call + ";");
}

std::string CEmitter::loop_pragma(const ForNode *n, bool) {
  const bool unrolled =
      n->for_kind == ForKind::Unrolled || n->for_kind == ForKind::Slots || n->for_kind == ForKind::Vectorized;
  if (n->for_kind == ForKind::Rolled)
    return "#pragma unroll 1";
  return unrolled ? "#pragma unroll" : "";
}

void CEmitter::emit_for(const ForNode *n) {
  const std::string v = var(n->var), t = type_name(n->var->type);
  Assignments a = assignments_of(n->body);
  // The IR evaluates begin, extent and step once; C++ re-evaluates the condition, which
  // is the same unless the body assigns a variable that they read.
  const bool stable =
      !reads_any(n->begin, a.assigned) && !reads_any(n->extent, a.assigned) && !reads_any(n->step, a.assigned);
  auto step = as_const_int(n->step);
  if (std::string pragma = loop_pragma(n, stable); !pragma.empty())
    line(pragma);
  const std::string begin = expr(n->begin);
  if (step && *step != 0 && stable) {
    Expr end = add(n->begin, mul(n->extent, n->step));
    std::string inc = *step == 1    ? "++" + v
                      : *step == -1 ? "--" + v
                      : *step > 0   ? v + " += " + std::to_string(*step)
                                    : v + " -= " + std::to_string(-*step);
    line("for (" + t + " " + v + " = " + begin + "; " + v + (*step > 0 ? " < " : " > ") + expr(end, P_Rel + 1) + "; " +
         inc + ") {");
  } else if (step && *step == 1) {
    const std::string end = names_.fresh(v + "_end");
    line("for (" + t + " " + v + " = " + begin + ", " + end + " = " + expr(add(n->begin, n->extent)) + "; " + v + " < " +
         end + "; ++" + v + ") {");
  } else {
    // A step whose sign is known only at run time: count the iterations.
    const std::string st = names_.fresh(v + "_step"), left = names_.fresh(v + "_left");
    line("for (" + t + " " + v + " = " + begin + ", " + st + " = " + expr(n->step) + ", " + left + " = " +
         expr(n->extent) + "; " + left + " > 0; --" + left + ", " + v + " += " + st + ") {");
  }
  block(n->body);
  line("}");
}

void CEmitter::emit_print(const PrintNode *n) {
  auto [fmt, values] = print_prefix();
  for (auto &a : n->args) {
    fmt += " ";
    if (auto s = a->as<StringImmNode>()) {
      for (char c : s->value)
        fmt += c == '%' ? std::string("%%") : std::string(1, c);
      continue;
    }
    const ScalarType t = a->type;
    std::string v = expr(a, P_Unary);
    if (is_float(t)) {
      fmt += "%g";
      values += ", (double)" + std::string(is_extended_float(t) ? "(float)" : "") + v;
    } else if (t == ScalarType::Bool || (is_signed(t) && bits(t) <= 32)) {
      fmt += "%d";
      values += ", (int)" + v;
    } else if (bits(t) <= 32) {
      fmt += "%u";
      values += ", (unsigned)" + v;
    } else if (is_signed(t)) {
      fmt += "%lld";
      values += ", (long long)" + v;
    } else {
      fmt += "%llu";
      values += ", (unsigned long long)" + v;
    }
  }
  line("printf(" + c_string(fmt + "\n") + ", " + values + ");");
}

} // namespace tile::targets
