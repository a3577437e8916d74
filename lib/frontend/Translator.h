// The kernel translator shared by the frontend's source files (internal to lib/frontend).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Sema/Sema.h"

#include "analysis/Bounds.h"
#include "frontend/Frontend.h"
#include "ir/IR.h"

namespace tile::frontend {

/// What a tile type of the kernel language is.
enum class TileTypeKind { None, Tensor, Shared, Fragment, Local, Stream, Region };

struct TileTypeInfo {
  TileTypeKind kind = TileTypeKind::None;
  ir::ScalarType elem = ir::ScalarType::Void;
  bool read_only = false;            // tensor<const T, R>
  int rank = 0;                      // tensors
  std::vector<std::int64_t> shape;   // shared / fragment / local
};

/// Classifies a Clang type (references and cv-qualifiers stripped).
TileTypeInfo classify_tile_type(clang::QualType t);
/// The IR scalar type of an arithmetic or extended-float Clang type.
std::optional<ir::ScalarType> scalar_type_of(clang::QualType t);
/// The fully qualified name of `d` ("tile::copy"), or "" when it has none.
std::string qualified_name(const clang::NamedDecl *d);

/// Raised through the translator when a construct cannot be translated; the diagnostic has
/// been reported already. (The frontend is compiled without exceptions, so this is a flag.)
struct TranslateError {};

class Translator {
public:
  Translator(clang::Sema &sema, const clang::FunctionDecl *kernel);

  std::optional<ir::Kernel> run(clang::Stmt *body);

  // Diagnostics ----------------------------------------------------------------------
  /// Reports `message` at `loc`, with `note` (what to write instead) when given, and marks
  /// the translation failed.
  void error(clang::SourceLocation loc, const std::string &message, const std::string &note = "",
             clang::SourceRange range = {});
  bool failed() const { return failed_; }

  // Expressions (TranslateExpr.cpp) --------------------------------------------------
  /// An rvalue scalar expression; null on error.
  ir::Expr expr(const clang::Expr *e);
  ir::Expr cast_expr(const clang::CastExpr *ce); // expr()'s conversions
  ir::Expr call_expr(const clang::CallExpr *call); // expr()'s calls
  /// The scalar type of `e`; an error at it where it has none.
  std::optional<ir::ScalarType> result_type(const clang::Expr *e);
  /// A compile-time integer, or an error saying `what` must be constant.
  std::optional<std::int64_t> const_int(const clang::Expr *e, const std::string &what);
  /// The value of `e` when it is a constant expression.
  std::optional<clang::APValue> evaluate(const clang::Expr *e);

  /// An element access `b(i, j)` of a tile buffer or tensor.
  struct ElementRef {
    ir::Buffer buffer;
    std::vector<ir::Expr> indices;
  };
  /// Recognizes `b(i, j, ...)`; nullopt (without error) when `e` is no element access.
  std::optional<ElementRef> element_ref(const clang::Expr *e, bool for_write);
  /// ir::binary, with an error for what has no value: integer division or remainder by a
  /// constant zero, shifts by a constant count outside the value's width. Null after an error.
  ir::Expr checked_binary(clang::SourceLocation loc, ir::BinaryOp op, const ir::Expr &a, const ir::Expr &b);
  /// Reports an index of dimension `dim` of tile buffer `b` that is provably outside it
  /// (`first` .. `first + span - 1` must lie in [0, extent)): always when no value of the
  /// index lies inside, and also when some do, but the code runs unconditionally (then
  /// some iteration is out of bounds). False after an error.
  bool check_index(clang::SourceLocation loc, const ir::Buffer &b, int dim, const ir::Expr &first,
                   std::int64_t span = 1);
  /// Ranges of the loop variables with constant bounds, for check_index.
  analysis::VarRanges ranges;
  /// Inside code that may not run: a branch of an if or ?:, the right operand of && or ||.
  int conditional = 0;
  /// Inside an expression's operand that may not be evaluated: a branch of ?:, the right
  /// operand of && or || (where statements made for it would run unconditionally).
  int lazy_operand = 0;

  // Statements (TranslateStmt.cpp) ---------------------------------------------------
  void stmt(const clang::Stmt *s);
  // The statements stmt() hands on, one kind each.
  void declaration(const clang::DeclStmt *ds);
  void if_stmt(const clang::IfStmt *is);
  void range_for(const clang::CXXForRangeStmt *fr);
  void counted_for(const clang::ForStmt *fs);
  void expr_stmt(const clang::Expr *e);
  void emit(ir::Stmt s) {
    if (s && !s->loc)
      s->loc = loc_;
    blocks_.back().push_back(std::move(s));
  }
  /// The statement being translated (a clang::SourceLocation's raw encoding).
  std::uint32_t loc_ = 0;
  /// Translates `s` into a statement of its own.
  ir::Stmt sub_block(const clang::Stmt *s);

  // Tile operations (TranslateTileOps.cpp) -----------------------------------------
  /// Translates a call of a tile operation; false when `call` is none.
  bool tile_op(const clang::CallExpr *call);
  // The tile operations tile_op() hands on (`op` is the name after tile::).
  void copy_op(const clang::CallExpr *call, const std::string &op, clang::SourceLocation loc);
  void gemm_op(const clang::CallExpr *call, const std::string &op, clang::SourceLocation loc);
  void reduce_op(const clang::CallExpr *call, const std::string &op, clang::SourceLocation loc);
  /// reduce_argmax / reduce_argmin: the extreme by a max (min) reduction, then its first
  /// position by a min reduction of the positions that hold it.
  /// `x.rows(begin, end)` of tensor `base`: declares the view (its first row and row count,
  /// clipped to the tensor) and returns it; null after an error.
  ir::Buffer tensor_rows(const clang::CXXMemberCallExpr *call, const ir::Buffer &base);
  void arg_reduce_op(const clang::CallExpr *call, const std::string &op, clang::SourceLocation loc);
  /// Emits a parallel loop nest over `shape` whose body `body` makes from the loop indices.
  void emit_parallel(const std::vector<std::int64_t> &shape,
                     const std::function<ir::Stmt(const std::vector<ir::Expr> &)> &body);
  /// sort(keys[, values], dim, descending) and topk(src, values, indices, dim).
  void sort_op(const clang::CallExpr *call, const std::string &op, clang::SourceLocation loc);
  /// Sorts the rows along `dim` of shared buffer `keys` (and `values` alike, where given) in
  /// place by a sorting network; `tie` orders equal keys by `values` ascending.
  void sort_network(const ir::Buffer &keys, const ir::Buffer &values, int dim, bool descending, bool tie);
  void atomic_op(const clang::CallExpr *call, const std::string &op, clang::SourceLocation loc);
  /// An element atomic whose value is used (a declaration's initializer): emits it and
  /// returns the variable holding the element's value before it (the same in every thread
  /// outside parallel loops: one thread's, through a shared slot). Null after an error.
  ir::Expr atomic_value(const clang::CallExpr *call, const std::string &op);
  bool atomic_element(const clang::CallExpr *call, const std::string &op, const ElementRef &ref,
                      const ir::Var &result);
  // A tile operation's operand that must be a shared, fragment or local buffer.
  ir::Buffer whole_local(const clang::Expr *e, const char *what);
  ir::Buffer buffer_ref(const clang::Expr *e, const char *op, bool required = true);
  /// The shared, fragment or local buffer of a region `x.at(...)`; null for anything else.
  ir::Buffer buffer_at(const clang::Expr *e);
  /// Whether `e` is a region of a shared, fragment or local buffer with tile::slice marks
  /// (whose extent is its own: from the marks to the buffer's end).
  bool has_own_extent(const clang::Expr *e);
  /// tile::gemm_options, read field by field by name.
  struct GemmOptions {
    bool transpose_a = false, transpose_b = false;
    ir::Expr clear_accum = ir::bool_imm(false); // a constant, or a run-time condition
    ir::WarpPolicy policy = ir::WarpPolicy::Square;
  };
  std::optional<GemmOptions> gemm_options(const clang::Expr *e);
  /// `tile::print("label", b)`: the whole of buffer `b` (argument `arg`), one line per row.
  void print_buffer(const clang::CallExpr *call, unsigned arg, const ir::Buffer &b);
  /// A region operand: a whole buffer or `x.at(...)`; `other_shape` is the tile's shape
  /// when the operand's extent comes from the other operand.
  std::optional<ir::Region> region(const clang::Expr *e, const std::vector<std::int64_t> *other_shape,
                                   const char *op);

  // Calls of macros and lambdas -------------------------------------------------------
  /// Inlines a macro or lambda call; returns its value (null for void) and sets `handled`.
  ir::Expr inline_call(const clang::CallExpr *call, bool &handled);

  // State ------------------------------------------------------------------------------
  struct Binding {
    ir::Var var;                        // a scalar variable
    ir::Expr value;                     // an immutable value (constants, macro arguments)
    ir::Buffer buffer;                  // a tensor or tile buffer
    const clang::CXXMethodDecl *lambda = nullptr; // a lambda's call operator
  };
  std::map<const clang::ValueDecl *, Binding> env;
  const Binding *lookup(const clang::ValueDecl *d) const;

  clang::Sema &sema;
  clang::ASTContext &ctx;
  const clang::FunctionDecl *kernel_decl;
  ir::Kernel kernel;
  int parallel_depth = 0;
  int loop_depth = 0;
  int pipelined_depth = 0; // inside tile::pipelined loops (their copies may run iterations early)
  std::string view_name;   // the variable a view being made is declared as (empty: none)
  /// Macros and lambdas being inlined (recursion check, the "called from" notes of
  /// diagnostics) and where their value goes.
  struct InlineFrame {
    const clang::FunctionDecl *fn;
    ir::Var result;
    bool returned = false;
    clang::SourceLocation call_loc; // the call being inlined
    std::string shown;              // "[[tile::macro]] 'name'" or "lambda"
  };
  std::vector<InlineFrame> inline_stack;

  std::string unique_name(const std::string &base);

  /// Limits of nesting, so that hostile input (a chain of thousands of macro calls, an
  /// expression nested thousands deep) is an error instead of a stack overflow in the
  /// translator or the passes after it, which all recurse over the IR.
  static constexpr int max_nesting = 1000; // statements and expressions, inlined bodies included
  static constexpr int max_inline_depth = 100;
  /// Copies of a body that nested tile::unroll loops may make.
  static constexpr std::int64_t max_unroll = 1024;
  std::int64_t unrolled_iterations = 1;
  /// Counts one level of nesting while it lives; `ok()` is false (and the error reported)
  /// past max_nesting.
  class Nesting {
  public:
    Nesting(Translator &t, clang::SourceLocation loc);
    ~Nesting() { --t_.nesting_; }
    bool ok() const { return !t_.failed(); }

  private:
    Translator &t_;
  };

private:
  int nesting_ = 0;
  bool failed_ = false;
  std::vector<std::vector<ir::Stmt>> blocks_;
  std::map<std::string, int> names_;
  friend class StmtBuilderScope;

public:
  /// Collects the statements emitted while it lives into one statement.
  class Block {
  public:
    explicit Block(Translator &t) : t_(t) { t_.blocks_.emplace_back(); }
    ir::Stmt finish() {
      auto s = ir::seq(std::move(t_.blocks_.back()));
      t_.blocks_.pop_back();
      done_ = true;
      return s;
    }
    ~Block() {
      if (!done_)
        t_.blocks_.pop_back();
    }

  private:
    Translator &t_;
    bool done_ = false;
  };
};

} // namespace tile::frontend
