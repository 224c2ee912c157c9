// CPU kernels of the accumulating reductions sum and mean, on the engine of reduce_cpu.h.
// (prod is in prod_cpu.cpp, all and any in all_any_cpu.cpp.)
#include "ember/ops/reduce/reduce_cpu.h"

namespace ember {
namespace cpu {

// ---------------------------------------------------------------------------------------------
// sum, mean

Tensor sum(const Tensor& self, const std::optional<Shape>& dim, bool keepdim,
           std::optional<ScalarType> dtype, const Tensor& out) {
  check_cpu(self, "sum");
  // uint16/32/64 sum in int64 (PyTorch's result dtype; the same bits modulo 2^64)
  if (is_wide_unsigned(self->dtype())) return sum(to_dtype(self, ScalarType::Int64), dim, keepdim, dtype, out);
  auto real_sum = [&](const Tensor& x, const std::optional<Shape>& d, std::optional<ScalarType> t, const Tensor& o) {
    return sum(x, d, keepdim, t, o);
  };
  if (auto z = complex_parts_route("sum", self, dim, dtype, out, real_sum)) return *z;
  return sum_or_prod<false>("sum", self, sum_meta(self, dim, keepdim, dtype), keepdim, out);
}

Tensor mean(const Tensor& self, const std::optional<Shape>& dim, bool keepdim,
            std::optional<ScalarType> dtype, const Tensor& out) {
  check_cpu(self, "mean");
  auto real_mean = [&](const Tensor& x, const std::optional<Shape>& d, std::optional<ScalarType> t, const Tensor& o) {
    return mean(x, d, keepdim, t, o);
  };
  if (auto z = complex_parts_route("mean", self, dim, dtype, out, real_mean)) return *z;
  const AccumulateMeta M = mean_meta(self, dim, keepdim, dtype);
  Tensor x = to_dtype(self, M.input_dtype);
  Plan P = make_plan(x, M.dims, keepdim);
  Tensor res = result_for("mean", self, out, M.shape, M.dtype);
  dispatch_float(M.dtype, "mean", [&](auto tag) {
    using T = decltype(tag);
    if (P.K == 0) {  // the mean of nothing is 0 / 0
      for (int64_t r = 0; r < P.M; ++r) res->data<T>()[r] = convert<T>(std::nan(""));
      return;
    }
    SumOp<T, T, false> op{{}, res->data<T>()};
    op.divisor = static_cast<double>(P.K);
    run_reduction(op, P);
  });
  return finish_out("mean", out, res);
}

}  // namespace cpu
}  // namespace ember
