// CUDA kernels of max / min (all and along a dim), amax / amin and argmax / argmin on the
// reduction engine of reduce.cuh (checks from reduce_meta.h, as the CPU's): the first index of
// the extreme value; a NaN wins (the first NaN).
#include <limits>
#include "ember/backends/cuda/reduce.cuh"
#include "ember/ops/reduce/reduce_meta.h"
#include "ember/ops/reduce/reduce_functions.h"

namespace ember::cuda_engine {
namespace {

// ---------------------------------------------------------------------------------------------
// max / min / argmax / argmin / amax / amin on the reduction engine

// max / min / amax / amin: the extreme value, a NaN winning (no index carried).
template <typename T, bool Max> struct ExtremeReducer : reducer::Extreme<opmath_t<T>, Max> {
  using M = reducer::Extreme<opmath_t<T>, Max>;
  using acc_t = opmath_t<T>;
  T* out;
  __device__ acc_t step(acc_t a, T x, int64_t) const { return M::step(a, cvt<acc_t>(x)); }
  __device__ void write(int64_t r, acc_t a) const { out[r] = cvt<T>(a); }
};

// argmax / argmin and max / min along a dim (reducer::Arg: merged by index, so the order in
// which partial results meet is irrelevant).
template <typename T, bool Max> struct ArgReducer : reducer::Arg<opmath_t<T>, Max> {
  using M = reducer::Arg<opmath_t<T>, Max>;
  using acc_t = typename M::acc_t;
  T* values;  // may be null
  int64_t* indices;  // may be null
  __device__ acc_t step(acc_t a, T x, int64_t k) const { return M::combine(a, acc_t{cvt<opmath_t<T>>(x), k}); }
  __device__ void write(int64_t r, acc_t a) const {
    if (values) values[r] = cvt<T>(a.v);
    if (indices) indices[r] = a.i;
  }
};

// The values of max / min / amax / amin (M from reduce_meta.h).
template <bool Max>
Tensor extreme_values(const char* op, const Tensor& self, const ReductionMeta& M, const Tensor& out) {
  Tensor res = reduction_result(self, out, M.shape, M.dtype);
  const ReducePlan P = plan_reduce(self, M.dims, true);
  dispatch_device_type(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    run_reduce<T>(op, P, ExtremeReducer<T, Max>{{}, reinterpret_cast<T*>(res->data_ptr())});
  });
  return finish_out(op, out, res);
}

// values (of self's dtype) and indices (int64), either may be null, contiguous of M.shape.
template <bool Max>
void run_arg(const char* op, const Tensor& self, const ReductionMeta& M, const Tensor& values, const Tensor& indices) {
  const ReducePlan P = plan_reduce(self, M.dims, false);  // k: the flat index in the reduced dims
  dispatch_device_type(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    run_reduce<T>(op, P,
                  ArgReducer<T, Max>{{}, values ? reinterpret_cast<T*>(values->data_ptr()) : nullptr,
                                     indices ? reinterpret_cast<int64_t*>(indices->data_ptr()) : nullptr});
  });
}

template <bool Max>
std::tuple<Tensor, Tensor> extreme_dim(const char* op, const Tensor& self, int64_t dim, bool keepdim) {
  const ReductionMeta M = extreme_dim_meta(op, self, dim, keepdim);
  Tensor values = ember::empty(M.shape, M.dtype, self->device());
  Tensor indices = ember::empty(M.shape, ScalarType::Int64, self->device());
  run_arg<Max>(op, self, M, values, indices);
  return {values, indices};
}

template <bool Max>
Tensor arg_extreme(const char* op, const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  const ReductionMeta M = arg_extreme_meta(op, self, dim, keepdim);
  Tensor res = reduction_result(self, out, M.shape, M.dtype);
  run_arg<Max>(op, self, M, Tensor(), res);
  return finish_out(op, out, res);
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

Tensor max_all(const Tensor& self) { return extreme_values<true>("max", self, extreme_all_meta("max", self), Tensor()); }
Tensor min_all(const Tensor& self) { return extreme_values<false>("min", self, extreme_all_meta("min", self), Tensor()); }
std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return extreme_dim<true>("max", self, dim, keepdim);
}
std::tuple<Tensor, Tensor> min_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return extreme_dim<false>("min", self, dim, keepdim);
}
Tensor amax(const Tensor& self, const Shape& dim, bool keepdim, const Tensor& out) {
  return extreme_values<true>("amax", self, amax_amin_meta("amax", self, dim, keepdim), out);
}
Tensor amin(const Tensor& self, const Shape& dim, bool keepdim, const Tensor& out) {
  return extreme_values<false>("amin", self, amax_amin_meta("amin", self, dim, keepdim), out);
}
Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  return arg_extreme<true>("argmax", self, dim, keepdim, out);
}
Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  return arg_extreme<false>("argmin", self, dim, keepdim, out);
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(max_all);
EMBER_REGISTER_CUDA_KERNEL(min_all);
EMBER_REGISTER_CUDA_KERNEL(max_dim);
EMBER_REGISTER_CUDA_KERNEL(min_dim);
EMBER_REGISTER_CUDA_KERNEL(amax);
EMBER_REGISTER_CUDA_KERNEL(amin);
EMBER_REGISTER_CUDA_KERNEL(argmax);
EMBER_REGISTER_CUDA_KERNEL(argmin);
