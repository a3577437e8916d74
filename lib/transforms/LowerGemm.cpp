#include "transforms/LowerGemm.h"

#include "ir/Visitor.h"

namespace tile::transforms {

using namespace ir;

Stmt gemm_as_loops(const GemmNode *n) {
  auto a = n->a.tile_shape(), c = n->c.tile_shape();
  const std::int64_t M = c[0], N = c[1], K = n->transpose_a ? a[0] : a[1];
  Var i = make_var("gi", ScalarType::I32), j = make_var("gj", ScalarType::I32), k = make_var("gk", ScalarType::I32);
  ScalarType at = arith_type(n->c.buffer->dtype);
  Var sum = make_var("sum", at);
  auto aidx = n->transpose_a ? n->a.index_of({k, i}) : n->a.index_of({i, k});
  auto bidx = n->transpose_b ? n->b.index_of({j, k}) : n->b.index_of({k, j});
  auto cidx = n->c.index_of({i, j});
  Expr init = n->clear_accum ? (is_float(at) ? float_imm(0, at) : int_imm(0, at)) : cast(at, load(n->c.buffer, cidx));
  Expr product = mul(cast(at, load(n->a.buffer, aidx)), cast(at, load(n->b.buffer, bidx)));
  Stmt body = seq({declare(sum, init), for_loop(k, int_imm(0), int_imm(K), ForKind::Serial, assign(sum, add(sum, product))),
                   store(n->c.buffer, cidx, cast(n->c.buffer->dtype, sum))});
  return for_loop(i, int_imm(0), int_imm(M), ForKind::Parallel, for_loop(j, int_imm(0), int_imm(N), ForKind::Parallel, body));
}

namespace {
class GemmLowerer : public IRMutator {
public:
  explicit GemmLowerer(const LayoutMap &layouts) : layouts_(layouts) {}

private:
  const LayoutMap &layouts_;
  Stmt mutate_Gemm(const Stmt &self, const GemmNode *n) override {
    auto it = layouts_.find(n->c.buffer.get());
    if (it != layouts_.end() && it->second.mma)
      return self; // tensor cores: lower-fragments and the codegen
    return gemm_as_loops(n);
  }
};
} // namespace

Kernel lower_gemm(const Kernel &kernel) {
  Kernel k = kernel;
  k.body = GemmLowerer(kernel.layouts).mutate(kernel.body);
  return k;
}

} // namespace tile::transforms
