// CPU kernel of prod, on the engine of reduce_cpu.h (its own file: a product per input dtype
// is as long to compile as the sums of reduce_cpu.cpp).
#include "ember/ops/reduce/reduce_cpu.h"

namespace ember {
namespace cpu {

Tensor prod(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
            std::optional<ScalarType> dtype, const Tensor& out) {
  check_cpu(self, "prod");
  const AccumulateMeta M = prod_meta(self, dim, keepdim, dtype);
  Tensor x = to_dtype(self, M.input_dtype);
  Plan P = make_plan(x, M.dims, keepdim);
  Tensor res = result_for("prod", self, out, M.shape, M.dtype);
  run_sum_or_prod<true>("prod", P, x->dtype(), res);
  return finish_out("prod", out, res);
}

}  // namespace cpu
}  // namespace ember
