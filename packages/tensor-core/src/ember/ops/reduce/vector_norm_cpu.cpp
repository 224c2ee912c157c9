// CPU kernel of the vector norms (norm, linalg.vector_norm): one reducer per kind of p (2, 1,
// 0, inf, -inf, any other) from reduce_functions.h, on the engine of reduce_cpu.h.
#include "ember/ops/reduce/reduce_cpu.h"

namespace ember {
namespace cpu {

Tensor norm(const Tensor& self, const Scalar& p, const std::optional<Shape>& dim, bool keepdim,
            std::optional<ScalarType> dtype) {
  check_cpu(self, "norm");
  const VectorNormMeta M = vector_norm_meta(self, p, dim, keepdim, dtype);
  if (auto single = norm_of_single_elements(self, M)) return *single;
  Tensor x = to_dtype(self, M.dtype);
  const double pv = M.p;
  Plan P = make_plan(x, M.dims, keepdim);
  Tensor res = empty(M.shape, x->dtype());
  dispatch_float(x->dtype(), "norm", [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    with_result<T>(res, [&](C* o) {
      auto go = [&](auto op) {
        op.out = o;
        op.p = static_cast<opmath_t<C>>(pv);
        run_reduction(op, P);
      };
      switch (M.kind) {
        case NormKind::L2: go(NormOp<C, NormKind::L2>{}); break;
        case NormKind::L1: go(NormOp<C, NormKind::L1>{}); break;
        case NormKind::L0: go(NormOp<C, NormKind::L0>{}); break;
        case NormKind::Inf: go(NormOp<C, NormKind::Inf>{}); break;
        case NormKind::NegInf: go(NormOp<C, NormKind::NegInf>{}); break;
        case NormKind::General: go(NormOp<C, NormKind::General>{}); break;
      }
    });
  });
  return res;
}

}  // namespace cpu
}  // namespace ember
