// CPU kernels of the extremes that give indices: max / min along a dim (values and indices)
// and argmax / argmin, on the engine of reduce_cpu.h: the first index of the extreme value; a
// NaN wins.
#include "ember/ops/reduce/reduce_cpu.h"

namespace ember {
namespace cpu {

namespace {

template <bool Max>
std::tuple<Tensor, Tensor> extreme_dim(const char* op, const Tensor& self, int64_t dim, bool keepdim) {
  check_cpu(self, op);
  const ReductionMeta M = extreme_dim_meta(op, self, dim, keepdim);
  Plan P = make_plan(self, M.dims, keepdim);
  Tensor values = empty(M.shape, M.dtype);
  Tensor indices = empty(M.shape, ScalarType::Int64);
  dispatch_all(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    with_result<T>(values, [&](auto* v) {
      ArgOp<compute_t<T>, Max> a;
      a.values = v;
      a.indices = indices->data<int64_t>();
      run_reduction(a, P);
    });
  });
  return {values, indices};
}

template <bool Max>
Tensor arg_extreme(const char* op, const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                   const Tensor& out) {
  check_cpu(self, op);
  const ReductionMeta M = arg_extreme_meta(op, self, dim, keepdim);
  Plan P = make_plan(self, M.dims, keepdim);
  Tensor res = result_for(op, self, out, M.shape, M.dtype);
  dispatch_all(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    ArgOp<compute_t<T>, Max> a;
    a.indices = res->data<int64_t>();
    run_reduction(a, P);
  });
  return finish_out(op, out, res);
}

}  // namespace

std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return extreme_dim<true>("max", self, dim, keepdim);
}

std::tuple<Tensor, Tensor> min_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return extreme_dim<false>("min", self, dim, keepdim);
}

Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  return arg_extreme<true>("argmax", self, dim, keepdim, out);
}

Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  return arg_extreme<false>("argmin", self, dim, keepdim, out);
}

}  // namespace cpu
}  // namespace ember
