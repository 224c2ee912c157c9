// CPU kernels of max / min (all and along a dim), amax / amin and argmax / argmin, on the engine
// of reduce_cpu.h: the first index of the extreme value; a NaN wins.
#include "ember/ops/reduce/reduce_cpu.h"

namespace ember {
namespace cpu {

// ---------------------------------------------------------------------------------------------
// max, min, amax, amin, argmax, argmin

namespace {

// The values of max / min / amax / amin (M from reduce_meta.h).
template <bool Max> Tensor extreme(const char* op, const Tensor& self, const ReductionMeta& M, bool keepdim,
                                   const Tensor& out) {
  Plan P = make_plan(self, M.dims, keepdim);
  Tensor res = result_for(op, self, out, M.shape, M.dtype);
  dispatch_all(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    run_reduction(ExtremeOp<T, Max>{{}, res->data<T>()}, P);
  });
  return finish_out(op, out, res);
}

template <bool Max>
std::tuple<Tensor, Tensor> extreme_dim(const char* op, const Tensor& self, int64_t dim, bool keepdim) {
  check_cpu(self, op);
  const ReductionMeta M = extreme_dim_meta(op, self, dim, keepdim);
  Plan P = make_plan(self, M.dims, keepdim);
  Tensor values = empty(M.shape, M.dtype);
  Tensor indices = empty(M.shape, ScalarType::Int64);
  dispatch_all(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    ArgOp<T, Max> a;
    a.values = values->data<T>();
    a.indices = indices->data<int64_t>();
    run_reduction(a, P);
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
    ArgOp<T, Max> a;
    a.indices = res->data<int64_t>();
    run_reduction(a, P);
  });
  return finish_out(op, out, res);
}

template <bool Max>
Tensor amax_amin(const char* op, const Tensor& self, const Shape& dim, bool keepdim, const Tensor& out) {
  check_cpu(self, op);
  return extreme<Max>(op, self, amax_amin_meta(op, self, dim, keepdim), keepdim, out);
}

}  // namespace

Tensor max_all(const Tensor& self) {
  check_cpu(self, "max");
  return extreme<true>("max", self, extreme_all_meta("max", self), false, Tensor());
}

Tensor min_all(const Tensor& self) {
  check_cpu(self, "min");
  return extreme<false>("min", self, extreme_all_meta("min", self), false, Tensor());
}

std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return extreme_dim<true>("max", self, dim, keepdim);
}

std::tuple<Tensor, Tensor> min_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return extreme_dim<false>("min", self, dim, keepdim);
}

Tensor amax(const Tensor& self, const Shape& dim, bool keepdim, const Tensor& out) {
  return amax_amin<true>("amax", self, dim, keepdim, out);
}

Tensor amin(const Tensor& self, const Shape& dim, bool keepdim, const Tensor& out) {
  return amax_amin<false>("amin", self, dim, keepdim, out);
}

Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  return arg_extreme<true>("argmax", self, dim, keepdim, out);
}

Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  return arg_extreme<false>("argmin", self, dim, keepdim, out);
}

}  // namespace cpu
}  // namespace ember
