#include "targets/cpu/CpuCodegen.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "ir/Visitor.h"

namespace tile::cpu {

using namespace ir;

namespace {

const char *type_name(ScalarType t) {
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
  case ScalarType::F16: return "tile_cpu::f16";
  case ScalarType::BF16: return "tile_cpu::bf16";
  case ScalarType::F32: return "float";
  case ScalarType::F64: return "double";
  case ScalarType::F8E4M3: return "tile_cpu::f8e4m3";
  case ScalarType::F8E5M2: return "tile_cpu::f8e5m2";
  case ScalarType::Void: return "void";
  }
  return "void";
}

// C++ operator precedence, higher binds tighter.
enum Prec { P_None = 0, P_Ternary = 2, P_LOr, P_LAnd, P_BOr, P_BXor, P_BAnd, P_Eq, P_Rel, P_Shift = 11, P_Add, P_Mul, P_Unary = 15, P_Primary };

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

/// A C++ string literal holding `s`.
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
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
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

/// Names of the generated code: every IR variable and buffer gets a C++ identifier that no
/// other one, no keyword and no name of the entry's own has; duplicates get "_1", "_2", ...
class Names {
public:
  Names() {
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
        // the entry's parameters and what the generated code refers to
        "args", "block", "grid", "ctx", "tile_cpu", "std", "printf", "main",
        "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t",
        // macros of <cmath>, <cstdio>, <climits>
        "INFINITY", "NAN", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "EOF", "BUFSIZ", "NULL", "stdin", "stdout",
        "stderr", "errno", "assert", "CHAR_BIT", "CHAR_MIN", "CHAR_MAX", "INT_MIN", "INT_MAX", "UINT_MAX",
        "LONG_MIN", "LONG_MAX", "SHRT_MIN", "SHRT_MAX", "FILENAME_MAX", "FOPEN_MAX", "TMP_MAX", "SEEK_SET",
        "SEEK_CUR", "SEEK_END", "MATH_ERRNO", "MATH_ERREXCEPT", "FP_NAN", "FP_INFINITE", "FP_ZERO",
        "FP_NORMAL", "FP_SUBNORMAL", "M_PI", "M_E"};
    for (const char *r : reserved)
      used_.insert(r);
  }

  /// The name of `key` (a variable or buffer), made on first use from `base`.
  std::string of(const void *key, const std::string &base) {
    auto it = names_.find(key);
    if (it != names_.end())
      return it->second;
    return names_[key] = fresh(base);
  }

  /// A name of its own, made from `base`.
  std::string fresh(const std::string &base) {
    std::string b = sanitize(base);
    if (used_.insert(b).second)
      return b;
    for (int n = 1;; ++n) {
      std::string s = b + "_" + std::to_string(n);
      if (used_.insert(s).second)
        return s;
    }
  }

private:
  static std::string sanitize(const std::string &base) {
    std::string s;
    for (char c : base)
      s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (s.empty())
      return "v";
    // Leading digits, "__" and "_X" are not ours to use.
    if (std::isdigit(static_cast<unsigned char>(s[0])) || (s[0] == '_' && s.size() > 1 && (s[1] == '_' || std::isupper(static_cast<unsigned char>(s[1])))))
      return "v" + s;
    return s;
  }
  std::map<const void *, std::string> names_;
  std::set<std::string> used_;
};

/// Collects the variables `s` declares and those it assigns.
struct Effects {
  std::set<const VarNode *> declared, assigned;
  bool loops = false, side_effects = false;
};
Effects effects_of(const Stmt &s) {
  Effects e;
  for_each_node(s, nullptr, [&](const Stmt &n) {
    switch (n->kind) {
    case StmtKind::Declare: e.declared.insert(n->as<DeclareNode>()->var.get()); break;
    case StmtKind::Assign: e.assigned.insert(n->as<AssignNode>()->var.get()); break;
    case StmtKind::For: e.loops = true; break;
    case StmtKind::Print:
    case StmtKind::Assert:
    case StmtKind::Atomic:
    case StmtKind::Gemm:
    case StmtKind::DeclBuffer:
    case StmtKind::Copy:
    case StmtKind::Fill:
    case StmtKind::Reduce:
    case StmtKind::Cumsum: e.side_effects = true; break;
    default: break;
    }
  });
  return e;
}

bool reads_any(const Expr &e, const std::set<const VarNode *> &vars) {
  bool found = false;
  class Finder : public IRVisitor {
  public:
    const std::set<const VarNode *> &vars;
    bool &found;
    Finder(const std::set<const VarNode *> &v, bool &f) : vars(v), found(f) {}
    void visit_Var(const VarNode *n) override { found |= vars.count(n) > 0; }
  } finder(vars, found);
  finder.visit(e);
  return found;
}

class KernelEmitter {
public:
  KernelEmitter(const Kernel &k, std::ostringstream &os) : k_(k), os_(os) {}

  void run() {
    collect_tensor_dims();
    os_ << "// " << k_.display_name;
    if (!k_.location.empty())
      os_ << " (" << k_.location << ")";
    os_ << "\nextern \"C\" void " << kernel_symbol(k_)
        << "(const tile_cpu::kernel_arg *args, int64_t block, const int64_t *grid, tile_cpu::context *ctx) {\n";
    params();
    block_coordinates();
    stmt(k_.body);
    os_ << "}\n";
  }

private:
  const Kernel &k_;
  std::ostringstream &os_;
  int indent_ = 1;
  Names names_;
  std::string blk_;
  /// (parameter, dimension) -> the local holding that size / stride.
  std::map<std::pair<int, int>, std::string> sizes_, strides_;
  std::set<std::pair<int, int>> used_sizes_, used_strides_;

  void line(const std::string &s) { os_ << std::string(2 * indent_, ' ') << s << "\n"; }

  std::string var(const Var &v) { return names_.of(v.get(), v->name); }
  std::string var(const VarNode *v) { return names_.of(v, v->name); }
  std::string buffer(const Buffer &b) { return names_.of(b.get(), b->name); }

  // Parameters and block coordinates ----------------------------------------------------

  void collect_tensor_dims() {
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
          else if (auto a = s->as<AtomicNode>())
            strides_of(a->dst.buffer);
          else if (auto g = s->as<GemmNode>()) {
            strides_of(g->a.buffer);
            strides_of(g->b.buffer);
            strides_of(g->c.buffer);
          }
        });
  }

  void params() {
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param &p = k_.params[i];
      const std::string arg = "args[" + std::to_string(i) + "]";
      if (!p.tensor) {
        const ScalarType t = p.scalar->type;
        std::string value = is_float(t) ? arg + ".value.f" : arg + ".value.i";
        if (t == ScalarType::Bool)
          value += " != 0";
        else
          value = "(" + std::string(type_name(t)) + ")" + value;
        line(std::string(type_name(t)) + " " + var(p.scalar) + " = " + value + ";");
        continue;
      }
      const Buffer &b = p.tensor;
      const std::string elem = std::string(b->read_only ? "const " : "") + type_name(b->dtype);
      const std::string name = buffer(b);
      line(elem + " *__restrict " + name + " = (" + elem + " *)" + arg + ".data;");
      for (int d = 0; d < b->rank(); ++d)
        if (used_sizes_.count({int(i), d})) {
          sizes_[{int(i), d}] = names_.fresh(name + "_size" + std::to_string(d));
          line("const int64_t " + sizes_[{int(i), d}] + " = " + arg + ".sizes[" + std::to_string(d) + "];");
        }
      for (int d = 0; d < b->rank(); ++d)
        if (used_strides_.count({int(i), d})) {
          strides_[{int(i), d}] = names_.fresh(name + "_stride" + std::to_string(d));
          line("const int64_t " + strides_[{int(i), d}] + " = " + arg + ".strides[" + std::to_string(d) + "];");
        }
    }
  }

  void block_coordinates() {
    blk_ = names_.fresh("blk");
    line("const tile_cpu::block3 " + blk_ + " = tile_cpu::block_index(block, grid, " +
         std::to_string(k_.swizzle_panel) + ");");
    static const char *axes[] = {"x", "y", "z"};
    for (int d = 0; d < 3; ++d)
      if (k_.block_index[d])
        line("const " + std::string(type_name(k_.block_index[d]->type)) + " " + var(k_.block_index[d]) + " = (" +
             type_name(k_.block_index[d]->type) + ")" + blk_ + "." + axes[d] + ";");
  }

  // Expressions ----------------------------------------------------------------------------

  std::string paren(const std::string &s, int prec, int min_prec) { return prec < min_prec ? "(" + s + ")" : s; }

  std::string int_literal(std::int64_t v, ScalarType t) {
    switch (t) {
    case ScalarType::Bool: return v ? "true" : "false";
    case ScalarType::I32:
      return v == std::int64_t(INT32_MIN) ? "(-2147483647 - 1)" : std::to_string(v);
    case ScalarType::U32: return std::to_string(std::uint32_t(v)) + "u";
    case ScalarType::I64:
      return v == INT64_MIN ? "(-9223372036854775807l - 1)" : std::to_string(v) + "l";
    case ScalarType::U64: return std::to_string(std::uint64_t(v)) + "ul";
    default: return "(" + std::string(type_name(t)) + ")" + std::to_string(v);
    }
  }

  std::string expr(const Expr &e, int min_prec = P_None) {
    switch (e->kind) {
    case ExprKind::IntImm: {
      std::string s = int_literal(e->as<IntImmNode>()->value, e->type);
      return paren(s, s[0] == '-' ? P_Unary : P_Primary, min_prec);
    }
    case ExprKind::FloatImm: {
      auto n = e->as<FloatImmNode>();
      if (is_extended_float(n->type))
        return paren("(" + std::string(type_name(n->type)) + ")" + float_literal(n->value, ScalarType::F32), P_Unary,
                     min_prec);
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
      return paren("args[" + std::to_string(n->param_index) + "]." + (n->stride ? "strides[" : "sizes[") +
                       std::to_string(n->dim) + "]",
                   P_Primary, min_prec);
    }
    case ExprKind::Cast: {
      auto n = e->as<CastNode>();
      ScalarType from = n->value->type;
      std::string inner = expr(n->value, P_Unary);
      // There is no conversion between two extended floats: go through float (exact).
      if (n->type == ScalarType::BF16)
        return "tile_cpu::detail::to_bf16(" + expr(n->value) + ")";
      if (is_extended_float(from) && is_extended_float(n->type))
        inner = "(float)" + inner;
      return paren("(" + std::string(type_name(n->type)) + ")" + inner, P_Unary, min_prec);
    }
    case ExprKind::Binary: {
      auto n = e->as<BinaryNode>();
      if (n->op == BinaryOp::Min || n->op == BinaryOp::Max)
        return std::string(n->op == BinaryOp::Min ? "tile_cpu::min(" : "tile_cpu::max(") + expr(n->a) + ", " +
               expr(n->b) + ")";
      if (n->op == BinaryOp::Mod && is_float(n->a->type))
        return "tile_cpu::fmod(" + expr(n->a) + ", " + expr(n->b) + ")";
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
      std::string s = std::string("tile_cpu::") + name(n->fn) + "(";
      for (size_t i = 0; i < n->args.size(); ++i)
        s += (i ? ", " : "") + expr(n->args[i]);
      return s + ")";
    }
    case ExprKind::Load: {
      auto n = e->as<LoadNode>();
      return element(n->buffer, n->indices);
    }
    }
    return "";
  }

  /// The offset of element `idx` of `b` in elements: stride-based (in int64) for tensors,
  /// row-major for tile buffers.
  Expr offset(const Buffer &b, const std::vector<Expr> &idx) {
    Expr off;
    if (b->scope == Scope::Global) {
      for (int d = 0; d < b->rank(); ++d) {
        Expr term = mul(cast(ScalarType::I64, idx[d]), b->strides[d]);
        off = off ? add(off, term) : term;
      }
      return off ? off : int_imm(0, ScalarType::I64);
    }
    std::int64_t stride = 1;
    for (int d = b->rank() - 1; d >= 0; --d) {
      Expr term = mul(idx[d], int_imm(stride, idx[d]->type));
      off = off ? add(term, off) : term;
      stride *= b->extent(d);
    }
    return off ? off : int_imm(0);
  }

  std::string element(const Buffer &b, const std::vector<Expr> &idx) {
    return buffer(b) + "[" + expr(offset(b, idx)) + "]";
  }

  // Statements -----------------------------------------------------------------------------

  void block(const Stmt &s) {
    ++indent_;
    stmt(s);
    --indent_;
  }

  void stmt(const Stmt &s) {
    if (!s)
      return;
    switch (s->kind) {
    case StmtKind::Seq:
      for (auto &c : s->as<SeqNode>()->stmts)
        stmt(c);
      return;
    case StmtKind::Declare: {
      auto n = s->as<DeclareNode>();
      std::string d = std::string(type_name(n->var->type)) + " " + var(n->var);
      line(n->init ? d + " = " + expr(n->init) + ";" : d + ";");
      return;
    }
    case StmtKind::Assign: {
      auto n = s->as<AssignNode>();
      line(var(n->var) + " = " + expr(n->value) + ";");
      return;
    }
    case StmtKind::Store: {
      auto n = s->as<StoreNode>();
      line(element(n->buffer, n->indices) + " = " + expr(n->value) + ";");
      return;
    }
    case StmtKind::For:
      return emit_for(s->as<ForNode>());
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
    case StmtKind::DeclBuffer: {
      auto n = s->as<DeclBufferNode>();
      std::string dims;
      for (int d = 0; d < n->buffer->rank(); ++d)
        dims += (d ? " * " : "") + std::to_string(n->buffer->extent(d));
      line("alignas(64) " + std::string(type_name(n->buffer->dtype)) + " " + buffer(n->buffer) + "[" + dims + "];");
      return;
    }
    case StmtKind::Gemm:
      return emit_gemm(s->as<GemmNode>());
    case StmtKind::Atomic: {
      auto n = s->as<AtomicNode>();
      if (n->src || !n->value || n->dst.buffer->scope != Scope::Global) {
        line("#error \"tile: a region atomic reached the CPU codegen; run lower-tile-ops first\"");
        return;
      }
      line(std::string("tile_cpu::atomic_") + name(n->atomic_kind) + "(&" + element(n->dst.buffer, n->dst.begin) +
           ", " + expr(n->value) + ");");
      return;
    }
    case StmtKind::Print:
      return emit_print(s->as<PrintNode>());
    case StmtKind::Assert: {
      auto n = s->as<AssertNode>();
      line("if (!" + expr(n->cond, P_Primary) + ") {");
      ++indent_;
      line("ctx->fail(ctx, " + c_string(n->message) + ");");
      line("return;");
      --indent_;
      line("}");
      return;
    }
    case StmtKind::AnnotateLayout:
      return; // layouts mean nothing on the CPU
    case StmtKind::Copy:
    case StmtKind::Fill:
    case StmtKind::Reduce:
    case StmtKind::Cumsum:
      line("#error \"tile: a tile operation reached the CPU codegen; run lower-tile-ops first\"");
      return;
    }
  }

  /// Innermost parallel loops that only compute elements get `#pragma omp simd`: it tells
  /// the vectorizer that iterations are independent, which it cannot prove through the
  /// stride-based indexing of tensors.
  bool simd_loop(const ForNode *n) {
    if (n->for_kind != ForKind::Parallel || !as_const_int(n->extent))
      return false;
    Effects e = effects_of(n->body);
    if (e.loops || e.side_effects)
      return false;
    for (auto *v : e.assigned)
      if (!e.declared.count(v))
        return false; // a value carried from one iteration to the next
    return true;
  }

  void emit_for(const ForNode *n) {
    const std::string v = var(n->var), t = type_name(n->var->type);
    Effects e = effects_of(n->body);
    // The IR evaluates begin, extent and step once; C++ re-evaluates the condition, which
    // is the same unless the body assigns a variable that they read.
    const bool stable = !reads_any(n->begin, e.assigned) && !reads_any(n->extent, e.assigned) &&
                        !reads_any(n->step, e.assigned);
    auto step = as_const_int(n->step);
    if (n->for_kind == ForKind::Unrolled)
      line("#pragma unroll");
    else if (simd_loop(n) && stable && step && *step == 1)
      line("#pragma omp simd");
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
      line("for (" + t + " " + v + " = " + begin + ", " + end + " = " + expr(add(n->begin, n->extent)) + "; " + v +
           " < " + end + "; ++" + v + ") {");
    } else {
      // A step whose sign is known only at run time: count the iterations.
      const std::string st = names_.fresh(v + "_step"), left = names_.fresh(v + "_left");
      line("for (" + t + " " + v + " = " + begin + ", " + st + " = " + expr(n->step) + ", " + left + " = " +
           expr(n->extent) + "; " + left + " > 0; --" + left + ", " + v + " += " + st + ") {");
    }
    block(n->body);
    line("}");
  }

  /// The pointer to a gemm operand's first element and its row stride, when the tile is the
  /// trailing two dimensions of a tile buffer (rows contiguous, row stride static).
  bool gemm_operand(const Region &r, std::string &ptr, std::string &ld) {
    const Buffer &b = r.buffer;
    const int rank = b->rank();
    if (b->scope == Scope::Global || rank < 2 || r.tile_dims.size() != 2 || r.tile_dims[0] != rank - 2 ||
        r.tile_dims[1] != rank - 1)
      return false;
    ld = std::to_string(b->extent(rank - 1));
    Expr off = offset(b, r.begin);
    ptr = is_const_int(off, 0) ? buffer(b) : "&" + buffer(b) + "[" + expr(off) + "]";
    return true;
  }

  void emit_gemm(const GemmNode *n) {
    auto a = n->a.tile_shape(), c = n->c.tile_shape();
    const std::int64_t M = c[0], N = c[1], K = n->transpose_a ? a[0] : a[1];
    std::string pa, lda, pb, ldb, pc, ldc;
    if (gemm_operand(n->a, pa, lda) && gemm_operand(n->b, pb, ldb) && gemm_operand(n->c, pc, ldc)) {
      line(std::string("tile_cpu::") + (n->clear_accum ? "gemm_clear<" : "gemm<") + std::to_string(M) + ", " +
           std::to_string(N) + ", " + std::to_string(K) + ", " + (n->transpose_a ? "true" : "false") + ", " +
           (n->transpose_b ? "true" : "false") + ">(" + pa + ", " + lda + ", " + pb + ", " + ldb + ", " + pc + ", " +
           ldc + ");");
      return;
    }
    // Any other operand shape: the definition, as loops.
    Var i = make_var("gi", ScalarType::I32), j = make_var("gj", ScalarType::I32), k = make_var("gk", ScalarType::I32);
    ScalarType at = arith_type(n->c.buffer->dtype);
    Var sum = make_var("sum", at);
    auto aidx = n->transpose_a ? n->a.index_of({k, i}) : n->a.index_of({i, k});
    auto bidx = n->transpose_b ? n->b.index_of({j, k}) : n->b.index_of({k, j});
    auto cidx = n->c.index_of({i, j});
    Expr init = n->clear_accum ? (is_float(at) ? float_imm(0, at) : int_imm(0, at)) : load(n->c.buffer, cidx);
    Expr product = mul(cast(at, load(n->a.buffer, aidx)), cast(at, load(n->b.buffer, bidx)));
    Stmt body = seq({declare(sum, init),
                     for_loop(k, int_imm(0), int_imm(K), ForKind::Serial, assign(sum, add(sum, product))),
                     store(n->c.buffer, cidx, sum)});
    stmt(for_loop(i, int_imm(0), int_imm(M), ForKind::Serial,
                  for_loop(j, int_imm(0), int_imm(N), ForKind::Parallel, body)));
  }

  void emit_print(const PrintNode *n) {
    std::string fmt = "[block %lld,%lld,%lld]";
    std::string values = "(long long)" + blk_ + ".x, (long long)" + blk_ + ".y, (long long)" + blk_ + ".z";
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
};

} // namespace

std::string kernel_symbol(const Kernel &kernel) {
  std::string s = "tile_cpu_";
  for (char c : kernel.key)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  // FNV-1a: stable across hosts and runs.
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : kernel.key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "_%08x", unsigned(h ^ (h >> 32)));
  return s + buf;
}

std::string emit_source(const std::vector<Kernel> &kernels) {
  std::ostringstream os;
  os << "// Generated by tile's CPU target (targets/cpu/CpuCodegen.cpp); do not edit.\n"
        "#include \"tile_cpu.h\"\n";
  for (auto &k : kernels) {
    os << "\n";
    KernelEmitter(k, os).run();
  }
  return os.str();
}

} // namespace tile::cpu
