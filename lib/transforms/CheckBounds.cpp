#include "transforms/CheckBounds.h"

#include "ir/Visitor.h"

namespace tile::transforms {

using namespace ir;

namespace {

class Checker : public IRMutator {
public:
  explicit Checker(const CheckBoundsOptions &o) : options_(o) {}
  using IRMutator::mutate;

  /// Statements carry the user's line; expressions take their statement's.
  Stmt mutate(const Stmt &s) override {
    const std::uint32_t outer = loc_;
    if (s && s->loc)
      loc_ = s->loc;
    Stmt r = IRMutator::mutate(s);
    loc_ = outer;
    return r;
  }

protected:
  Expr mutate_Load(const Expr &self, const LoadNode *n) override {
    Expr load = IRMutator::mutate_Load(self, n);
    if (n->buffer->scope != Scope::Global)
      return load;
    const std::vector<Expr> &indices = load->as<LoadNode>()->indices;
    return select(check(n->buffer, indices), load, cast(n->buffer->dtype, int_imm(0)));
  }

  Stmt mutate_Store(const Stmt &self, const StoreNode *n) override {
    Stmt store = IRMutator::mutate_Store(self, n);
    if (n->buffer->scope != Scope::Global)
      return store;
    return if_then_else(check(n->buffer, store->as<StoreNode>()->indices), store);
  }

  Stmt mutate_Atomic(const Stmt &self, const AtomicNode *n) override {
    Stmt atomic = IRMutator::mutate_Atomic(self, n);
    // Element forms only: a region's atomic is clipped to the tensor when it is lowered.
    if (n->src || !n->dst.tile_dims.empty() || n->dst.buffer->scope != Scope::Global)
      return atomic;
    auto a = atomic->as<AtomicNode>();
    Stmt skipped = a->result ? assign(a->result, cast(a->result->type, int_imm(0))) : nullptr;
    return if_then_else(check(a->dst.buffer, a->dst.begin), atomic, skipped);
  }

private:
  /// The check of element `indices` of tensor `b`.
  Expr check(const Buffer &b, const std::vector<Expr> &indices) {
    Expr inside;
    std::vector<Expr> values;
    std::string list;
    for (size_t d = 0; d < indices.size(); ++d) {
      // One unsigned comparison (a negative index is a large one): the index, which may
      // read tensors itself, is written once less.
      Expr i = index64(indices[d]);
      Expr in_dim = lt(cast(ScalarType::U64, i), cast(ScalarType::U64, b->shape[d]));
      inside = inside ? logical_and(inside, in_dim) : in_dim;
      values.push_back(i);
      list += d ? ", {}" : "{}";
    }
    for (auto &size : b->shape)
      values.push_back(size);
    std::string message = "element (" + list + ") of tensor '" + b->name + "' is outside its sizes (" + list + ")";
    if (options_.where && loc_)
      if (std::string at = options_.where(loc_); !at.empty())
        message += " (" + at + ")";
    return bounds_check(inside, message, values);
  }

  const CheckBoundsOptions &options_;
  std::uint32_t loc_ = 0;
};

} // namespace

Kernel check_bounds(const Kernel &kernel, const CheckBoundsOptions &options) {
  if (!options.on)
    return kernel;
  Kernel k = kernel;
  Checker c(options);
  k.body = c.mutate(k.body);
  return k;
}

} // namespace tile::transforms
