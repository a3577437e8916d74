#include "ir/Equality.h"

namespace tile::ir {

namespace {
bool equal_lists(const std::vector<Expr> &a, const std::vector<Expr> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!equal(a[i], b[i]))
      return false;
  return true;
}
} // namespace

bool equal(const Expr &a, const Expr &b) {
  if (a == b)
    return true;
  if (!a || !b || a->kind != b->kind || a->type != b->type)
    return false;
  switch (a->kind) {
  case ExprKind::IntImm:
    return a->as<IntImmNode>()->value == b->as<IntImmNode>()->value;
  case ExprKind::FloatImm: {
    double x = a->as<FloatImmNode>()->value, y = b->as<FloatImmNode>()->value;
    return x == y || (x != x && y != y);
  }
  case ExprKind::StringImm:
    return a->as<StringImmNode>()->value == b->as<StringImmNode>()->value;
  case ExprKind::Var:
    return false; // identity, checked above
  case ExprKind::Cast:
    return equal(a->as<CastNode>()->value, b->as<CastNode>()->value);
  case ExprKind::Binary: {
    auto x = a->as<BinaryNode>(), y = b->as<BinaryNode>();
    return x->op == y->op && equal(x->a, y->a) && equal(x->b, y->b);
  }
  case ExprKind::Unary: {
    auto x = a->as<UnaryNode>(), y = b->as<UnaryNode>();
    return x->op == y->op && equal(x->a, y->a);
  }
  case ExprKind::Select: {
    auto x = a->as<SelectNode>(), y = b->as<SelectNode>();
    return equal(x->cond, y->cond) && equal(x->t, y->t) && equal(x->f, y->f);
  }
  case ExprKind::Call: {
    auto x = a->as<CallNode>(), y = b->as<CallNode>();
    return x->fn == y->fn && equal_lists(x->args, y->args);
  }
  case ExprKind::Load: {
    auto x = a->as<LoadNode>(), y = b->as<LoadNode>();
    return x->buffer == y->buffer && equal_lists(x->indices, y->indices);
  }
  case ExprKind::TensorDim: {
    auto x = a->as<TensorDimNode>(), y = b->as<TensorDimNode>();
    return x->param_index == y->param_index && x->dim == y->dim && x->stride == y->stride;
  }
  case ExprKind::VectorFlag: {
    auto x = a->as<VectorFlagNode>(), y = b->as<VectorFlagNode>();
    return x->tensor == y->tensor && x->bytes == y->bytes;
  }
  case ExprKind::Aligned: {
    auto x = a->as<AlignedNode>(), y = b->as<AlignedNode>();
    return x->buffer == y->buffer && x->bytes == y->bytes && equal(x->offset, y->offset);
  }
  }
  return false;
}

} // namespace tile::ir
