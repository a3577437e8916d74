// The tile IR: immutable expression and statement nodes, buffers, regions and kernels.
//
// Nodes are created through the `make` functions below (which fold constants) and shared
// through `Expr` / `Stmt` handles. Variables and buffers have identity: two Var nodes with
// the same name are different variables. The node kinds are listed once, in
// TILE_IR_EXPR_NODES / TILE_IR_STMT_NODES; the visitor, mutator, printer and equality are
// generated from those lists.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/Fragment.h"
#include "ir/MmaAtom.h"
#include "ir/SharedLayout.h"
#include "ir/Type.h"

namespace tile::ir {

#define TILE_IR_EXPR_NODES(X)                                                                      \
  X(IntImm)                                                                                        \
  X(FloatImm)                                                                                      \
  X(StringImm)                                                                                     \
  X(Var)                                                                                           \
  X(Cast)                                                                                          \
  X(Binary)                                                                                        \
  X(Unary)                                                                                         \
  X(Select)                                                                                        \
  X(Call)                                                                                          \
  X(Load)                                                                                          \
  X(TensorDim)                                                                                     \
  X(VectorFlag)                                                                                    \
  X(Aligned)

#define TILE_IR_STMT_NODES(X)                                                                      \
  X(Seq)                                                                                           \
  X(Declare)                                                                                       \
  X(Assign)                                                                                        \
  X(Store)                                                                                         \
  X(For)                                                                                           \
  X(If)                                                                                            \
  X(DeclBuffer)                                                                                    \
  X(Copy)                                                                                          \
  X(Gemm)                                                                                          \
  X(Fill)                                                                                          \
  X(Reduce)                                                                                        \
  X(Cumsum)                                                                                        \
  X(Atomic)                                                                                        \
  X(Print)                                                                                         \
  X(Assert)                                                                                        \
  X(AnnotateLayout)                                                                                \
  X(Barrier)                                                                                       \
  X(Async)                                                                                         \
  X(AsyncCommit)                                                                                   \
  X(AsyncWait)                                                                                     \
  X(VectorMove)                                                                                    \
  X(MatrixLoad)                                                                                    \
  X(Mma)                                                                                           \
  X(Wgmma)                                                                                         \
  X(WarpgroupSync)                                                                                 \
  X(ProxyFence)                                                                                    \
  X(Mbarrier)                                                                                      \
  X(BulkCopy)                                                                                      \
  X(BulkStore)                                                                                     \
  X(BulkStoreSync)                                                                                 \
  X(RegisterBudget)                                                                                \
  X(While)                                                                                         \
  X(TileFetch)                                                                                     \
  X(IterationSlot)                                                                                 \
  X(NamedBarrier)

enum class ExprKind {
#define X(N) N,
  TILE_IR_EXPR_NODES(X)
#undef X
};
enum class StmtKind {
#define X(N) N,
  TILE_IR_STMT_NODES(X)
#undef X
};

struct ExprNode {
  ExprKind kind;
  ScalarType type;
  ExprNode(ExprKind k, ScalarType t) : kind(k), type(t) {}
  virtual ~ExprNode() = default;
  template <class T> const T *as() const { return kind == T::static_kind ? static_cast<const T *>(this) : nullptr; }
};
struct StmtNode {
  StmtKind kind;
  /// Where the user wrote it, in the frontend's opaque encoding (0: unknown), for remarks.
  /// Set by the node's maker; mutators carry it to the nodes they rebuild.
  mutable std::uint32_t loc = 0;
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
  template <class T> const T *as() const { return kind == T::static_kind ? static_cast<const T *>(this) : nullptr; }
};
using Expr = std::shared_ptr<const ExprNode>;
using Stmt = std::shared_ptr<const StmtNode>;

// ---------------------------------------------------------------------------------------
// Buffers and regions
// ---------------------------------------------------------------------------------------

/// Where a buffer lives. Global buffers are the kernel's tensor parameters.
enum class Scope { Global, Shared, Fragment, Local };
const char *name(Scope s);

struct VarNode;
using Var = std::shared_ptr<const VarNode>;

struct BufferNode {
  std::string name;
  Scope scope;
  ScalarType dtype;
  /// Global: TensorDim expressions of itself; others: IntImm extents.
  std::vector<Expr> shape;
  /// Global: TensorDim strides; others: empty (dense row-major).
  std::vector<Expr> strides;
  bool read_only = false;
  /// Where the user declared it, in the frontend's opaque encoding (0: unknown).
  mutable std::uint32_t loc = 0;
  /// A view of a global tensor (`X.rows(begin, end)`): `view_of` is the tensor (a parameter
  /// or another view) whose element `origin + i` is the view's element `i`; the view's
  /// shape is its own (variables the kernel declared before it), its strides the tensor's.
  /// Declared by a DeclBuffer where the kernel makes it. Null for every other buffer.
  std::shared_ptr<const BufferNode> view_of;
  std::vector<Expr> origin;
  int rank() const { return int(shape.size()); }
  /// Static extent of dimension d (non-global buffers).
  std::int64_t extent(int d) const;
  std::int64_t num_elements() const;
};
using Buffer = std::shared_ptr<const BufferNode>;

/// The global tensor of kernel parameter `param_index`: its shape and strides are its
/// run-time sizes and strides.
Buffer make_tensor_buffer(const std::string &name, int param_index, ScalarType dtype, int rank,
                          bool read_only);
/// A shared / fragment / local buffer of static shape.
Buffer make_buffer(const std::string &name, Scope scope, ScalarType dtype,
                   const std::vector<std::int64_t> &shape);

/// A box of a buffer: `begin[d] .. begin[d] + extent[d]` in every dimension. The tile it
/// names has the dimensions listed in `tile_dims` (in order); the others have extent 1.
struct Region {
  Buffer buffer;
  std::vector<Expr> begin;
  std::vector<std::int64_t> extent;
  std::vector<int> tile_dims;
  /// The tile's shape: extent[tile_dims[i]].
  std::vector<std::int64_t> tile_shape() const;
  std::int64_t num_elements() const;
  /// The buffer index of the tile element `tile_index` (one index per tile dimension).
  std::vector<Expr> index_of(const std::vector<Expr> &tile_index) const;
  /// Whether it is the whole buffer (every dimension a tile dimension, from 0, whole).
  bool whole() const;
};
/// The whole of a non-global buffer.
Region full_region(const Buffer &b);

// ---------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------

struct IntImmNode : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::IntImm;
  std::int64_t value;
  IntImmNode(ScalarType t, std::int64_t v) : ExprNode(static_kind, t), value(v) {}
};
struct FloatImmNode : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::FloatImm;
  double value;
  FloatImmNode(ScalarType t, double v) : ExprNode(static_kind, t), value(v) {}
};
struct StringImmNode : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::StringImm;
  std::string value;
  explicit StringImmNode(std::string v) : ExprNode(static_kind, ScalarType::Void), value(std::move(v)) {}
};
struct VarNode : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Var;
  std::string name;
  VarNode(ScalarType t, std::string n) : ExprNode(static_kind, t), name(std::move(n)) {}
};
struct CastNode : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Cast;
  Expr value;
  CastNode(ScalarType t, Expr v) : ExprNode(static_kind, t), value(std::move(v)) {}
};

enum class BinaryOp { Add, Sub, Mul, Div, Mod, Min, Max, EQ, NE, LT, LE, GT, GE, And, Or, BitAnd, BitOr, BitXor, Shl, Shr };
const char *name(BinaryOp op);
bool is_comparison(BinaryOp op);

struct BinaryNode : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Binary;
  BinaryOp op;
  Expr a, b;
  BinaryNode(ScalarType t, BinaryOp o, Expr x, Expr y)
      : ExprNode(static_kind, t), op(o), a(std::move(x)), b(std::move(y)) {}
};

enum class UnaryOp { Neg, Not, BitNot };
const char *name(UnaryOp op);

struct UnaryNode : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Unary;
  UnaryOp op;
  Expr a;
  UnaryNode(ScalarType t, UnaryOp o, Expr x) : ExprNode(static_kind, t), op(o), a(std::move(x)) {}
};
struct SelectNode : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Select;
  Expr cond, t, f;
  SelectNode(ScalarType ty, Expr c, Expr x, Expr y)
      : ExprNode(static_kind, ty), cond(std::move(c)), t(std::move(x)), f(std::move(y)) {}
};

/// Math intrinsics; arguments and result have the call's type (a float type), except that
/// IsNan and IsInf take a float and give a bool. ShuffleXor (GPU targets) is the value of
/// its first argument in the lane whose index differs from this thread's by the bits of
/// the second (an i32 constant); its type is the first's. Pack2 (GPU targets; made by
/// lower-mma) is the bits of its two 16-bit arguments in a u32, the first in the low half.
/// BoundsCheck (made by check-bounds) is its first argument, a bool that says an element
/// access is inside its tensor; where it is false, the launch fails with the second, a
/// StringImm whose `{}`s stand for the rest, i64 values (the index, then the sizes). It
/// is the one intrinsic with an effect: a pass may not drop or duplicate it.
enum class Intrinsic {
  Abs, Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Tanh, Sigmoid, Fma,
  Round, Floor, Ceil, Trunc, Sin, Cos, Erf, Pow, Log1p, Expm1, IsNan, IsInf,
  ShuffleXor, Pack2, BoundsCheck
};
const char *name(Intrinsic f);

struct CallNode : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Call;
  Intrinsic fn;
  std::vector<Expr> args;
  CallNode(ScalarType t, Intrinsic f, std::vector<Expr> a) : ExprNode(static_kind, t), fn(f), args(std::move(a)) {}
};
struct LoadNode : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Load;
  Buffer buffer;
  std::vector<Expr> indices;
  LoadNode(Buffer b, std::vector<Expr> i) : ExprNode(static_kind, b->dtype), buffer(std::move(b)), indices(std::move(i)) {}
};
/// The run-time size (or stride) of dimension `dim` of a global tensor; i64.
struct TensorDimNode : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::TensorDim;
  /// Held weakly in spirit: a tensor buffer's own shape refers to it by name and index.
  std::string tensor;
  int param_index;
  int dim;
  bool stride;
  TensorDimNode(std::string t, int p, int d, bool s)
      : ExprNode(static_kind, ScalarType::I64), tensor(std::move(t)), param_index(p), dim(d), stride(s) {}
};

/// Whether vectors of `bytes` bytes of global tensor `tensor` are aligned wherever they
/// start at a last index that is a multiple of that many bytes: the tensor's data is
/// aligned to `bytes`, its last stride is 1 and its other strides are multiples of the
/// vector's elements. Bool; it reads only the kernel's arguments, so a target tests it once
/// (made by lower-vector-access).
struct VectorFlagNode : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::VectorFlag;
  Buffer tensor;
  int bytes;
  VectorFlagNode(Buffer t, int b) : ExprNode(static_kind, ScalarType::Bool), tensor(std::move(t)), bytes(b) {}
};
/// Whether the address of element `offset` of `buffer`'s storage (counted in elements from
/// its start; i64 for tensors, i32 otherwise) is a multiple of `bytes`. Bool (made by
/// lower-vector-access).
struct AlignedNode : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Aligned;
  Buffer buffer;
  Expr offset;
  int bytes;
  AlignedNode(Buffer b, Expr o, int n)
      : ExprNode(static_kind, ScalarType::Bool), buffer(std::move(b)), offset(std::move(o)), bytes(n) {}
};

// Constructors. They fold constants and trivial identities (x + 0, x * 1, ...), and insert
// the casts C++'s usual arithmetic conversions would insert.
Expr int_imm(std::int64_t v, ScalarType t = ScalarType::I32);
Expr float_imm(double v, ScalarType t = ScalarType::F32);
Expr bool_imm(bool v);
Expr string_imm(std::string v);
Var make_var(const std::string &name, ScalarType t);
Expr cast(ScalarType t, Expr v);
/// Integer `e` as int64 for indexing a tensor, computed in 64 bits: signed arithmetic on
/// narrower types (a tile's corner b * 256 + i of ints) on operands converted first, so that
/// an index past 2^31 does not wrap around to a negative one. The IR's arithmetic is C++'s,
/// where signed overflow has no meaning, so the exact value is the one meant; unsigned
/// arithmetic, which wraps by definition, is converted as it is. A subexpression for which
/// `fits_32_bits` holds (every value it takes, known from the loops around it) is converted
/// whole: per-thread offsets keep their 32-bit arithmetic.
Expr index64(const Expr &e, const std::function<bool(const Expr &)> &fits_32_bits = {});
Expr binary(BinaryOp op, Expr a, Expr b);
Expr unary(UnaryOp op, Expr a);
Expr select(Expr c, Expr t, Expr f);
Expr call(Intrinsic f, std::vector<Expr> args);
Expr shuffle_xor(Expr value, int lane_mask);
/// Intrinsic::BoundsCheck: `in_range`, reporting `message` with `values` (cast to i64)
/// where it is false.
Expr bounds_check(Expr in_range, std::string message, std::vector<Expr> values);
Expr load(Buffer b, std::vector<Expr> indices);
Expr tensor_dim(int param_index, const std::string &tensor, int dim, bool stride);
inline Expr add(Expr a, Expr b) { return binary(BinaryOp::Add, std::move(a), std::move(b)); }
inline Expr sub(Expr a, Expr b) { return binary(BinaryOp::Sub, std::move(a), std::move(b)); }
inline Expr mul(Expr a, Expr b) { return binary(BinaryOp::Mul, std::move(a), std::move(b)); }
inline Expr div(Expr a, Expr b) { return binary(BinaryOp::Div, std::move(a), std::move(b)); }
inline Expr lt(Expr a, Expr b) { return binary(BinaryOp::LT, std::move(a), std::move(b)); }
inline Expr logical_and(Expr a, Expr b) { return binary(BinaryOp::And, std::move(a), std::move(b)); }

/// The value of `e` when it is an integer constant.
std::optional<std::int64_t> as_const_int(const Expr &e);
bool is_const_int(const Expr &e, std::int64_t v);

// ---------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------

struct SeqNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Seq;
  std::vector<Stmt> stmts;
  explicit SeqNode(std::vector<Stmt> s) : StmtNode(static_kind), stmts(std::move(s)) {}
};
/// Declares a mutable scalar; `init` may be null.
struct DeclareNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Declare;
  Var var;
  Expr init;
  DeclareNode(Var v, Expr i) : StmtNode(static_kind), var(std::move(v)), init(std::move(i)) {}
};
struct AssignNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Assign;
  Var var;
  Expr value;
  AssignNode(Var v, Expr e) : StmtNode(static_kind), var(std::move(v)), value(std::move(e)) {}
};
struct StoreNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Store;
  Buffer buffer;
  std::vector<Expr> indices;
  Expr value;
  StoreNode(Buffer b, std::vector<Expr> i, Expr v)
      : StmtNode(static_kind), buffer(std::move(b)), indices(std::move(i)), value(std::move(v)) {}
};

/// Serial, Pipelined and Unrolled loops run in order in every thread. Parallel loops are
/// element-wise over a tile (the frontend's `tile::parallel`). Threads loops are parallel
/// loops bound to the block's threads: thread t runs the iterations begin + t, begin + t +
/// threads, ... (made by bind-threads on GPU targets). Slots loops are unrolled loops over
/// a thread's share of a register layout (made by lower-fragments) or of a Threads loop of
/// constant extent (lower-thread-loops): the same trip count in every thread, but a body
/// that depends on the thread, so no barrier goes inside either.
/// Vectorized loops are unrolled loops over the lanes of a vector of consecutive elements
/// (made by lower-fragments): a target may run one as a single vector access where, at run
/// time, the elements are contiguous, aligned and all inside the tensor.
/// Rolled loops are Slots loops kept as loops (not unrolled) because they run only on a
/// rare fallback path and index no registers (made by roll-fallback-loops).
enum class ForKind { Serial, Parallel, Pipelined, Unrolled, Threads, Slots, Vectorized, Rolled };
const char *name(ForKind k);

/// `for var in begin, begin + step, ... (extent iterations)`.
struct ForNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::For;
  Var var;
  Expr begin, extent, step;
  ForKind for_kind;
  int stages; // pipelined loops
  Stmt body;
  ForNode(Var v, Expr b, Expr e, Expr s, ForKind k, int st, Stmt bd)
      : StmtNode(static_kind), var(std::move(v)), begin(std::move(b)), extent(std::move(e)),
        step(std::move(s)), for_kind(k), stages(st), body(std::move(bd)) {}
};
/// `rare_else`: the else side is a fallback that the fast then side leaves for uncommon
/// run-time cases (a tile on the tensor's edge, a tensor whose strides or alignment allow
/// no vector access); passes may then favour the then side (roll-fallback-loops).
struct IfNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::If;
  Expr cond;
  Stmt then_case, else_case; // else_case may be null
  bool rare_else;
  IfNode(Expr c, Stmt t, Stmt e, bool rare = false)
      : StmtNode(static_kind), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)), rare_else(rare) {}
};
/// Allocates a shared / fragment / local buffer from this point to the end of its block.
struct DeclBufferNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::DeclBuffer;
  Buffer buffer;
  explicit DeclBufferNode(Buffer b) : StmtNode(static_kind), buffer(std::move(b)) {}
};
/// Element-wise copy with conversion; src and dst tiles have the same shape.
struct CopyNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Copy;
  Region src, dst;
  CopyNode(Region s, Region d) : StmtNode(static_kind), src(std::move(s)), dst(std::move(d)) {}
};

enum class WarpPolicy { Square, FullRow, FullCol };
const char *name(WarpPolicy p);

/// c += op(a) * op(b), with c of shape [M, N], op(a) [M, K], op(b) [K, N].
struct GemmNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Gemm;
  Region a, b, c;
  bool transpose_a, transpose_b, clear_accum;
  WarpPolicy policy;
  /// The matrix instruction it runs on (infer-layout's choice; null: FMA). The accumulator's
  /// layout gives the grid of warps that issue it.
  MmaAtomRef atom;
  /// On an asynchronous atom (wgmma): issued without a wait for it; the pass that set this
  /// placed the WarpgroupSync Waits (warp-specialize, overlapping a gemm with the next
  /// iteration).
  bool deferred_wait = false;
  GemmNode(Region x, Region y, Region z, bool ta, bool tb, bool cl, WarpPolicy p)
      : StmtNode(static_kind), a(std::move(x)), b(std::move(y)), c(std::move(z)), transpose_a(ta),
        transpose_b(tb), clear_accum(cl), policy(p) {}
  /// This gemm with other operands (every other field kept).
  std::shared_ptr<GemmNode> with(Region x, Region y, Region z) const {
    auto g = std::make_shared<GemmNode>(std::move(x), std::move(y), std::move(z), transpose_a, transpose_b,
                                        clear_accum, policy);
    g->loc = loc;
    g->atom = atom;
    g->deferred_wait = deferred_wait;
    return g;
  }
};
struct FillNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Fill;
  Region dst;
  Expr value;
  FillNode(Region d, Expr v) : StmtNode(static_kind), dst(std::move(d)), value(std::move(v)) {}
};

enum class ReduceKind { Sum, Max, Min, AbsMax, AbsSum };
const char *name(ReduceKind k);

/// dst = reduce(src, dim) (combined with dst's values when !clear); dst has src's shape
/// without `dim`.
struct ReduceNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Reduce;
  ReduceKind reduce_kind;
  Buffer src, dst;
  int dim;
  bool clear;
  ReduceNode(ReduceKind k, Buffer s, Buffer d, int dm, bool c)
      : StmtNode(static_kind), reduce_kind(k), src(std::move(s)), dst(std::move(d)), dim(dm), clear(c) {}
};
/// Inclusive prefix sum of src along dim into dst (same shape).
struct CumsumNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Cumsum;
  Buffer src, dst;
  int dim;
  bool reverse;
  CumsumNode(Buffer s, Buffer d, int dm, bool r)
      : StmtNode(static_kind), src(std::move(s)), dst(std::move(d)), dim(dm), reverse(r) {}
};

enum class AtomicKind { Add, Max, Min, Exchange, CompareExchange };
const char *name(AtomicKind k);

/// Atomically combines into a tensor region: with `value` (dst one element), that value;
/// otherwise element-wise from `src` (same tile shape as dst). Exchange stores `value`;
/// CompareExchange stores `value` where the element's bits equal `compare`'s (element
/// forms only). With `result` (element forms only), the element's value before the
/// operation is assigned to that variable (declared before, of the element's type).
struct AtomicNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Atomic;
  AtomicKind atomic_kind;
  Region dst;
  Expr value;
  std::optional<Region> src;
  Expr compare;
  Var result;
  AtomicNode(AtomicKind k, Region d, Expr v, std::optional<Region> s, Expr c = nullptr, Var r = nullptr)
      : StmtNode(static_kind), atomic_kind(k), dst(std::move(d)), value(std::move(v)), src(std::move(s)),
        compare(std::move(c)), result(std::move(r)) {}
};
/// Prints `args` (StringImm for literal text) on a line that starts with the block's
/// indices: once per block outside parallel loops, once per iteration inside them.
struct PrintNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Print;
  std::vector<Expr> args;
  explicit PrintNode(std::vector<Expr> a) : StmtNode(static_kind), args(std::move(a)) {}
};
struct AssertNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Assert;
  Expr cond;
  std::string message;
  AssertNode(Expr c, std::string m) : StmtNode(static_kind), cond(std::move(c)), message(std::move(m)) {}
};

enum class LayoutKind { RowMajor, ColMajor, Swizzled };
const char *name(LayoutKind k);

/// A user's layout request for a buffer (tile::annotate_layout); read by layout inference.
struct AnnotateLayoutNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::AnnotateLayout;
  Buffer buffer;
  LayoutKind layout;
  int swizzle_bytes;
  AnnotateLayoutNode(Buffer b, LayoutKind l, int s)
      : StmtNode(static_kind), buffer(std::move(b)), layout(l), swizzle_bytes(s) {}
};

/// Waits until every thread of the block has reached it; shared-memory writes before it are
/// visible to every thread after it (made by insert-sync).
/// In a kernel with a producer warpgroup (Kernel::producer_threads, warp-specialize) a
/// barrier waits for the kernel's own `threads` only (a named barrier), unless
/// `whole_block`: then for the producer's threads too.
/// `cluster` (whole_block too; a kernel launched in clusters, Kernel::cluster): also until
/// every thread of the other blocks of its cluster has reached theirs, with the mbarriers
/// initialized before it ready for those blocks' arrivals and bulk copies.
struct BarrierNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Barrier;
  bool whole_block = false;
  bool cluster = false;
  explicit BarrierNode(bool whole = false, bool clustered = false)
      : StmtNode(static_kind), whole_block(whole || clustered), cluster(clustered) {}
};

/// The stores to shared memory in `body` may complete asynchronously (GPU targets: cp.async):
/// they belong to the group that the next AsyncCommit closes, and are complete in the
/// issuing thread once an AsyncWait lets that group finish (made by inject-pipeline).
///
/// `ahead` > 0: the stores fill the shared buffers' stages of the iteration that many
/// iterations after the current one of the enclosing loop (inject-pipeline's prefetch),
/// in a ring of `stages`: they never write the stages of the current iteration and the
/// `stages - 1 - ahead` before it. 0: not known.
struct AsyncNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Async;
  Stmt body;
  int ahead, stages;
  explicit AsyncNode(Stmt b, int a = 0, int s = 0)
      : StmtNode(static_kind), body(std::move(b)), ahead(a), stages(s) {}
};
/// Closes the group of asynchronous stores issued since the last one.
struct AsyncCommitNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::AsyncCommit;
  AsyncCommitNode() : StmtNode(static_kind) {}
};
/// Waits until at most `pending` of this thread's groups are unfinished.
struct AsyncWaitNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::AsyncWait;
  int pending;
  explicit AsyncWaitNode(int p) : StmtNode(static_kind), pending(p) {}
};

/// Copies `bytes` bytes from element `src_offset` of `src`'s storage to element `dst_offset`
/// of `dst`'s (offsets as AlignedNode's), as accesses of `chunk` bytes (a power of two that
/// divides `bytes`), both addresses multiples of `chunk`; the two buffers have one element
/// type. `async` (global to shared memory, inside an AsyncNode): without registers
/// (cp.async), completing as the Async statement's stores do. Made by lower-vector-access
/// from element loops whose elements are consecutive on both sides.
struct VectorMoveNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::VectorMove;
  Buffer dst;
  Expr dst_offset;
  Buffer src;
  Expr src_offset;
  int bytes, chunk;
  bool async;
  VectorMoveNode(Buffer d, Expr doff, Buffer s, Expr soff, int n, int c, bool a)
      : StmtNode(static_kind), dst(std::move(d)), dst_offset(std::move(doff)), src(std::move(s)),
        src_offset(std::move(soff)), bytes(n), chunk(c), async(a) {}
};

/// Loads matrices of 8 rows of 16 bytes (8 x 8 of 16-bit elements, 8 x 16 of 8-bit ones)
/// from shared memory into registers, a collective of a warp's lanes (ldmatrix; made by
/// lower-mma). Matrix i goes to 32-bit register `dst[dst_regs[i]]` of every lane (a U32
/// local buffer): lane l receives bytes 4 (l % 4) to 4 (l % 4) + 3 of row l / 4 (16-bit:
/// elements (l / 4, 2 (l % 4)) and (l / 4, 2 (l % 4) + 1), the first in the low half), or,
/// 16-bit elements only, with `transpose` the elements (2 (l % 4), l / 4) and (2 (l % 4) +
/// 1, l / 4). Lane l gives in `src_offset` the element offset in `src` (shared) of row l %
/// 8 of matrix l / 8, whose 16 bytes are consecutive there; the lanes past the matrices'
/// give an address that is not read. 1, 2 or 4 matrices.
struct MatrixLoadNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::MatrixLoad;
  Buffer dst;
  std::vector<Expr> dst_regs;
  Buffer src;
  Expr src_offset;
  bool transpose;
  MatrixLoadNode(Buffer d, std::vector<Expr> regs, Buffer s, Expr off, bool t)
      : StmtNode(static_kind), dst(std::move(d)), dst_regs(std::move(regs)), src(std::move(s)),
        src_offset(std::move(off)), transpose(t) {}
};

/// One tensor-core instruction of a warp (made by lower-mma): c += a b on an M x N x K
/// atom (the target's MmaAtom), operands of type `operand_type` (b's; bf16, f16 or 8-bit
/// floats), accumulators f32. Every lane passes its registers of each operand in the order
/// the instruction lists them, as offsets into local buffers: a register of a U32 buffer is
/// its element (two 16-bit or four 8-bit operand elements), of a 16-bit buffer the pair of
/// elements from the offset on (the first in the low half), of an f32 buffer (c) its
/// element.
struct MmaNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Mma;
  int m, n, k;
  ScalarType operand_type;
  /// The instruction as the target spells it (MmaAtom::instruction), which the codegen prints.
  std::string instruction;
  Buffer a;
  std::vector<Expr> a_regs;
  Buffer b;
  std::vector<Expr> b_regs;
  Buffer c;
  std::vector<Expr> c_regs;
  MmaNode(int m_, int n_, int k_, ScalarType t, Buffer a_, std::vector<Expr> ar, Buffer b_, std::vector<Expr> br,
          Buffer c_, std::vector<Expr> cr)
      : StmtNode(static_kind), m(m_), n(n_), k(k_), operand_type(t), a(std::move(a_)), a_regs(std::move(ar)),
        b(std::move(b_)), b_regs(std::move(br)), c(std::move(c_)), c_regs(std::move(cr)) {}
};

/// A shared-memory operand of a warpgroup instruction, as its matrix descriptor gives it:
/// the tile from element `offset` of `buffer`, in the hardware's 128-byte swizzle
/// (`swizzle_bytes`), with `lbo` and `sbo` the descriptor's leading and stride byte offsets
/// and `mn_major` whether its contiguous dimension is M (or N) rather than K
/// (targets/cuda/HOPPER-NOTES.md).
struct DescriptorOperand {
  Buffer buffer;
  Expr offset;
  int swizzle_bytes = 128;
  int swizzle_code = 1; // the descriptor's code of that swizzle (MmaAtom::swizzles)
  std::int64_t lbo = 0, sbo = 0;
  bool mn_major = false;
};

/// One warpgroup instruction (wgmma.mma_async m64nNk16; made by lower-mma): the 128
/// threads of a warpgroup compute c (+)= a b for a 64 x N x 16 tile, b read from shared
/// memory through a descriptor, a too (`a.buffer` set) or from registers: then
/// `a_regs` are the thread's four 32-bit registers of the 64 x 16 tile (the mma.sync
/// m16n8k16 A fragment of each warp's 16 rows) in the u32 local buffer `a_reg_buffer`,
/// each a pair of 16-bit elements (the lower k in the low half). c is the thread's N / 2 f32
/// registers `c_regs` (of a local buffer) in the instruction's order. `accumulate` (i32, 0
/// or not): whether c's values are added to (else overwritten). Asynchronous: between a
/// WarpgroupSync Fence before and a Commit and Wait after, nothing else touches c or a's
/// registers.
struct WgmmaNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Wgmma;
  int n;
  ScalarType operand_type;
  DescriptorOperand a, b;
  Buffer a_reg_buffer;        // a from registers (else null)
  std::vector<Expr> a_regs;   // its four registers' first slots
  Buffer c;
  std::vector<Expr> c_regs;
  Expr accumulate;
  int k = 16; // K of the instruction: 32 bytes of an operand's row (16 bf16 or f16, 32 fp8)
  /// The instruction as the target spells it (MmaAtom::instruction), which the codegen prints.
  std::string instruction;
  WgmmaNode(int n_, ScalarType t, DescriptorOperand a_, DescriptorOperand b_, Buffer c_, std::vector<Expr> cr, Expr acc,
            Buffer ar = nullptr, std::vector<Expr> ars = {})
      : StmtNode(static_kind), n(n_), operand_type(t), a(std::move(a_)), b(std::move(b_)), a_reg_buffer(std::move(ar)),
        a_regs(std::move(ars)), c(std::move(c_)), c_regs(std::move(cr)), accumulate(std::move(acc)) {}
};

/// Orders a warpgroup's asynchronous instructions (wgmma): Fence before the first of a
/// batch (after other writes of its registers), Commit to close the batch, Wait until at
/// most `pending` batches are unfinished.
enum class WarpgroupSyncKind { Fence, Commit, Wait };
/// A Wait's `registers`: the local (rank-1) buffers the instructions it waits for write
/// (accumulators); no access of them may move across it (a C++ compiler sees the asm
/// instruction that wrote them as done: the codegen pins them after the wait).
struct WarpgroupSyncNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::WarpgroupSync;
  WarpgroupSyncKind sync_kind;
  int pending;
  std::vector<Buffer> registers;
  WarpgroupSyncNode(WarpgroupSyncKind k, int p, std::vector<Buffer> r = {})
      : StmtNode(static_kind), sync_kind(k), pending(p), registers(std::move(r)) {}
};

/// Makes this thread's earlier shared-memory writes visible to the asynchronous proxy (the
/// tensor cores' and the copy engine's reads) once a barrier has passed (made by lower-mma
/// before each barrier of a kernel with wgmma).
struct ProxyFenceNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::ProxyFence;
  ProxyFenceNode() : StmtNode(static_kind) {}
};

/// An mbarrier of shared memory (sm_90; made by warp-specialize): barrier `index` of the
/// U64 buffer `barriers`, which counts arrivals and bytes of bulk copies; a phase completes
/// when both reach zero. Init (one thread, before a whole-block barrier): `value` arrivals a
/// phase. ArriveExpectTx: arrives once and adds `value` bytes the phase waits for. Arrive:
/// arrives once. Wait: until the phase of parity `value` (0 or 1) has completed.
/// ArriveCluster (a kernel launched in clusters): the warp, which reaches it together once
/// its reads of the shared memory the barrier guards are done, arrives once for each of its
/// 32 threads on the barrier at the same place in the block of rank `value` of its cluster.
enum class MbarrierOp { Init, ArriveExpectTx, Arrive, Wait, ArriveCluster };
struct MbarrierNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Mbarrier;
  MbarrierOp op;
  Buffer barriers;
  Expr index, value;
  MbarrierNode(MbarrierOp o, Buffer b, Expr i, Expr v)
      : StmtNode(static_kind), op(o), barriers(std::move(b)), index(std::move(i)), value(std::move(v)) {}
};

/// A bulk tensor copy (TMA, sm_90; made by warp-specialize), issued by one thread: the box of
/// the kernel's tensor map `map` (Kernel::tensor_maps) whose first element is at `coords`
/// (one per tensor dimension, outermost first; elements past the tensor's edges, on either
/// side, arrive as zeros) into shared buffer `dst` from element `dst_offset` of its storage,
/// in the map's swizzle; completes on mbarrier `barrier_index` of `barriers` with the box's
/// bytes. `multicast` (a kernel launched in clusters; null: this block alone): an i32 mask of
/// the blocks of the cluster (bit r: rank r) that each receive the box at the same place of
/// their shared memory, completing on their barrier at the same place.
struct BulkCopyNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::BulkCopy;
  int map;
  std::vector<Expr> coords;
  Buffer dst;
  Expr dst_offset;
  Buffer barriers;
  Expr barrier_index;
  Expr multicast;
  BulkCopyNode(int m, std::vector<Expr> c, Buffer d, Expr doff, Buffer b, Expr bi, Expr mc = nullptr)
      : StmtNode(static_kind), map(m), coords(std::move(c)), dst(std::move(d)), dst_offset(std::move(doff)),
        barriers(std::move(b)), barrier_index(std::move(bi)), multicast(std::move(mc)) {}
};

/// A bulk tensor store (TMA, sm_90; made by warp-specialize for an epilogue's copy into a
/// tensor), issued by one thread: shared buffer `src` from element `src_offset` of its
/// storage, in the map's swizzle, into the box of the kernel's tensor map `map` whose first
/// element is at `coords` (one per tensor dimension, outermost first); the box's elements
/// past the tensor's edges are not written. It reads `src` asynchronously, until a
/// BulkStoreSync Wait of the thread that issued it.
struct BulkStoreNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::BulkStore;
  int map;
  std::vector<Expr> coords;
  Buffer src;
  Expr src_offset;
  BulkStoreNode(int m, std::vector<Expr> c, Buffer s, Expr soff)
      : StmtNode(static_kind), map(m), coords(std::move(c)), src(std::move(s)), src_offset(std::move(soff)) {}
};

/// The issuing thread's bulk stores: Commit closes a group of those issued since the last
/// one; Wait returns once every committed group has read its shared memory, `buffer` (the
/// shared tile they read: a read of it, for the passes that order shared accesses), which
/// may then be written again. Their writes to global memory complete by the kernel's end.
enum class BulkStoreSyncOp { Commit, Wait };
struct BulkStoreSyncNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::BulkStoreSync;
  BulkStoreSyncOp op;
  Buffer buffer;
  BulkStoreSyncNode(BulkStoreSyncOp o, Buffer b) : StmtNode(static_kind), op(o), buffer(std::move(b)) {}
};

/// The warpgroup's registers per thread become `registers` (setmaxnreg, sm_90a; made by
/// warp-specialize): `increase` to take what the other warpgroups gave back, else to give.
struct RegisterBudgetNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::RegisterBudget;
  int registers;
  bool increase;
  RegisterBudgetNode(int r, bool inc) : StmtNode(static_kind), registers(r), increase(inc) {}
};

/// `while (cond) body` (made by warp-specialize: a persistent block's loop over its tiles).
struct WhileNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::While;
  Expr cond;
  Stmt body;
  WhileNode(Expr c, Stmt b) : StmtNode(static_kind), cond(std::move(c)), body(std::move(b)) {}
};

/// Sets `tile` to a tile of a persistent grid (made by warp-specialize): First, the block's
/// first tile (its index in the launched grid); Publish (the producer's issuing thread), the
/// next tile of the launch's shared count, taken atomically and stored into the one-element
/// shared `slot`; Receive (the consumers, after the mbarrier the producer arrives on once
/// it published), the tile in `slot`. Tiles past the last mean that the block is done.
enum class TileFetchOp { First, Publish, Receive };
struct TileFetchNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::TileFetch;
  TileFetchOp op;
  Var tile;
  Buffer slot; // null for First
  TileFetchNode(TileFetchOp o, Var t, Buffer s) : StmtNode(static_kind), op(o), tile(std::move(t)), slot(std::move(s)) {}
};

/// The iteration a stage of a warp-specialized loop holds, where the producer alone decides
/// which iterations run (a loop whose body is under a condition): Put (the producer's issuing
/// thread, before it arrives on the stage's full barrier) stores `value` into element `index`
/// of the shared `slots`; Get (the consumers, after their wait on that barrier) sets `var` to
/// that element.
enum class IterationSlotOp { Put, Get };
struct IterationSlotNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::IterationSlot;
  IterationSlotOp op;
  Buffer slots;
  Expr index;
  Expr value; // Put
  Var var;    // Get
  IterationSlotNode(IterationSlotOp o, Buffer s, Expr i, Expr v, Var x)
      : StmtNode(static_kind), op(o), slots(std::move(s)), index(std::move(i)), value(std::move(v)), var(std::move(x)) {}
};

/// Hardware barrier `id` (an i32 expression, 1 to 15) of `threads` threads (a multiple of
/// 32): sync waits until that many have arrived or synced on it, this thread included;
/// arrive counts this thread and goes on (made by warp-specialize: the consumer warpgroups'
/// turns at the tensor cores). Not a synchronization of shared memory for insert-sync.
struct NamedBarrierNode : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::NamedBarrier;
  Expr id;
  int threads;
  bool arrive;
  NamedBarrierNode(Expr i, int t, bool a) : StmtNode(static_kind), id(std::move(i)), threads(t), arrive(a) {}
};

Stmt seq(std::vector<Stmt> stmts); // flattens nested Seqs; one statement stays itself
Stmt declare(Var v, Expr init);
Stmt assign(Var v, Expr value);
Stmt store(Buffer b, std::vector<Expr> indices, Expr value);
Stmt for_loop(Var v, Expr begin, Expr extent, ForKind k, Stmt body, Expr step = nullptr, int stages = 0);
Stmt if_then_else(Expr c, Stmt t, Stmt e = nullptr, bool rare_else = false);
Stmt decl_buffer(Buffer b);
Stmt barrier();
Stmt while_loop(Expr cond, Stmt body);

// ---------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------

struct Param {
  std::string name;
  /// Exactly one is set.
  Buffer tensor;
  Var scalar;
};

struct Kernel {
  std::string key;          // mangled name: the runtime's key
  std::string display_name; // as the user wrote it, with template arguments
  std::string location;     // file:line of the definition, for messages
  std::vector<Param> params;
  int grid_rank = 1;
  Expr grid[3];      // extents (i32); unused dimensions are 1
  Var block_index[3]; // bx, by, bz
  int threads = 128;
  int swizzle_panel = 0; // tile::use_swizzle; 0 = none
  /// tile::warp_specialize(on): Auto (not called) and On: warp-specialize takes the loops
  /// it can; Off: none.
  enum class WarpSpecialization { Auto, On, Off };
  WarpSpecialization warp_specialize = WarpSpecialization::Auto;
  /// Threads launched past `threads` (warp-specialize's producer warpgroup, which runs the
  /// bulk copies): the block has threads + producer_threads; every loop over threads, and
  /// every barrier but a whole-block one, is the first `threads`' alone.
  int producer_threads = 0;
  /// > 0: the blocks an SM the kernel is built for (warp-specialize's occupancy: its
  /// registers are divided for that many; CUDA's launch bounds).
  int blocks_per_sm = 0;
  /// The tensor maps the kernel's bulk copies read (warp-specialize): each describes tensor
  /// parameter `param` copied in boxes of `box` (per dimension, outermost first) into a
  /// shared tile of `swizzle_bytes` swizzle. They are passed after the parameters, encoded
  /// by the runtime at launch; where it cannot encode one (the tensor's alignment or
  /// strides), it launches the kernel's fallback (`fallback_of`) instead.
  struct TensorMap {
    int param = 0;
    std::vector<std::int64_t> box;
    int swizzle_bytes = 0;
    /// A map the kernel can run without (a bulk store's output): where the runtime cannot
    /// encode it, the entry still runs, with its bit set in `maps_missing`.
    bool optional = false;
  };
  std::vector<TensorMap> tensor_maps;
  /// With optional tensor maps: the launch's bit mask (i32) of those it could not encode
  /// (bit m: tensor map m), passed after the maps; the kernel tests it where it would use one.
  Var maps_missing;
  /// The key of the kernel this one is the fallback of (the same program without tensor maps:
  /// its symbol gets a suffix, and the manifest lists it under that kernel); empty if none.
  std::string fallback_of;
  /// The key of the paired kernel (pair_dim) this one is the entry without pairs of (the
  /// same program warp-specialized without pairing, the same tensor maps): its symbol gets a
  /// suffix, the manifest lists it under that kernel, and the runtime launches it where the
  /// grid has too few blocks for pairs to pay (its blocks_per_sm on every SM at once); empty
  /// if none.
  std::string unpaired_of;
  /// tile::persistent(on): Auto (not called) and Off: one block a tile; On: warp-specialize
  /// makes the grid persistent where it specializes the kernel.
  enum class Persistence { Auto, On, Off };
  Persistence persistence = Persistence::Auto;
  /// A persistent grid (warp-specialize): the runtime launches at most one block an SM and
  /// passes a zeroed tile count after the tensor maps; each block takes tiles (TileFetch) in
  /// a While loop and computes its tile's block indices (no block_index of the launch).
  bool persistent = false;
  /// > 1 (warp-specialize's multicast): the runtime launches blocks in clusters of this many
  /// neighbours along the launch's x where its x extent is a multiple of it (else one by
  /// one). The codegen declares `cluster_rank` (the block's rank in its cluster, 0 to
  /// cluster - 1), `cluster_blocks` (the blocks of its cluster at this launch: 1 or
  /// `cluster`) and `partner_index` (the block indices, as block_index, of the block of the
  /// cluster whose rank differs in bit 0; the block's own where its cluster has one block).
  int cluster = 0;
  Var cluster_rank, cluster_blocks;
  Var partner_index[3];
  /// >= 0 (warp-specialize's paired blocks): each launched block runs two of the grid's
  /// blocks, neighbours 2i and 2i + 1 along dimension `pair_dim`, with a consumer group of
  /// `threads` threads each and one producer warpgroup for both: the runtime launches
  /// ceil(grid / 2) blocks along that dimension. The codegen declares `pair_group` (0 or 1
  /// for the consumer groups, 2 for the producer: the launch's thread index / threads),
  /// `thread_index` as the thread's index in its group (the launch's index % threads), and
  /// block index `pair_dim` as 2 i + the group (2 i for the producer), so that each group
  /// runs the kernel's code as a block of its own. Its barriers are hardware barrier
  /// 4 + pair_group (2 and 3 are the turns'); each block-shared buffer not in `pair_common` has a copy per group,
  /// `pair_stride` bytes apart (plan-shared-memory), that group's at its address.
  int pair_dim = -1;
  Var pair_group;
  std::set<const BufferNode *> pair_common;
  std::map<const BufferNode *, std::int64_t> pair_stride;
  /// Threads a launched block has: the consumers (both groups of a paired kernel) and the
  /// producer warpgroup.
  int launch_threads() const { return threads * (pair_dim >= 0 ? 2 : 1) + producer_threads; }
  Stmt body;
  /// The thread's index in its block (GPU targets; made by the passes that need it).
  Var thread_index;
  /// Layouts of the fragments kept in registers (infer-layout; GPU targets).
  LayoutMap layouts;
  /// Whether `g` runs on an asynchronous warpgroup instruction (wgmma; its atom says so).
  bool warpgroup_gemm(const GemmNode &g) const;
  /// The layouts parallel nests over register fragments run by, keyed by the variable of
  /// the nest's outermost loop (infer-layout; lower-fragments binds threads by them).
  std::map<const VarNode *, Fragment> bindings;
  /// Shared buffers not stored dense and row-major: their rows padded or their chunks
  /// swizzled (ir/SharedLayout.h; infer-layout, from annotate_layout or against the bank
  /// conflicts of tensor-core operands).
  std::map<const BufferNode *, SharedLayout> shared_layouts;
  /// What the passes chose and why, for -fplugin-arg-tile-remarks: at `loc` (0: the kernel).
  struct Remark {
    std::uint32_t loc;
    std::string text;
  };
  std::vector<Remark> remarks;
  /// Where each block-shared buffer lives in the block's shared memory, in bytes from its
  /// start, and the bytes the block needs (plan-shared-memory; -1: not planned).
  std::map<const BufferNode *, std::int64_t> shared_offsets;
  std::int64_t shared_bytes = -1;
  /// The block-shared buffers that share bytes with another (in turn, a barrier between).
  std::set<const BufferNode *> shared_reused;

  /// Elements a buffer's storage holds: its shape, the last dimension padded to its row
  /// pitch where it has one.
  std::int64_t storage_elements(const BufferNode *b) const;
};

} // namespace tile::ir
