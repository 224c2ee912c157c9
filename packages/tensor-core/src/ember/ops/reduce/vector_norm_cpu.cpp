// CPU kernel of the vector norms (norm, linalg.vector_norm): one reducer per kind of p (2, 1,
// 0, inf, -inf, any other) from reduce_functions.h, on the engine of reduce_cpu.h.
#include "ember/ops/reduce/reduce_cpu.h"

namespace ember {
namespace cpu {

Tensor norm(const Tensor& self, const Scalar& p, const std::optional<Shape>& dim, bool keepdim,
            std::optional<ScalarType> dtype) {
  check_cpu(self, "norm");
  const VectorNormMeta M = vector_norm_meta(self, p, dim, keepdim, dtype);
  Tensor x = to_dtype(self, M.dtype);
  const double pv = M.p;
  Plan P = make_plan(x, M.dims, keepdim);
  Tensor res = empty(M.shape, x->dtype());
  dispatch_float(x->dtype(), "norm", [&](auto tag) {
    using T = decltype(tag);
    auto go = [&](auto op) {
      op.out = res->data<T>();
      op.p = static_cast<opmath_t<T>>(pv);
      run_reduction(op, P);
    };
    switch (M.kind) {
      case NormKind::L2: go(NormOp<T, NormKind::L2>{}); break;
      case NormKind::L1: go(NormOp<T, NormKind::L1>{}); break;
      case NormKind::L0: go(NormOp<T, NormKind::L0>{}); break;
      case NormKind::Inf: go(NormOp<T, NormKind::Inf>{}); break;
      case NormKind::NegInf: go(NormOp<T, NormKind::NegInf>{}); break;
      case NormKind::General: go(NormOp<T, NormKind::General>{}); break;
    }
  });
  return res;
}

}  // namespace cpu
}  // namespace ember
