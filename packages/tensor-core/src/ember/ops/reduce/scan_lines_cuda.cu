// CUDA kernels of logcumsumexp and of _cumextreme (behind cummax / cummin): one thread
// per line of the [O, K, I] layout around dim, walking its K elements in order with the CPU
// kernels' rules (scan_cpu.cpp): logcumsumexp accumulates PyTorch's log-add-exp in double
// for float32 / float64 (float for the 16-bit floats); the running extremes take the latest
// of equal extremes, and a NaN takes over and stays. Simple rather than fast: a long single
// row is one thread's walk (a blocked scan would replace it without changing callers).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/backends/cuda/reduce.cuh"
#include "ember/ops/reduce/reduce_meta.h"

namespace ember::cuda_engine {
namespace {

template <typename T> using line_acc_t = std::conditional_t<sizeof(opmath_t<T>) == 8 || std::is_same_v<T, float>,
                                                            double, float>;

template <typename A> __device__ A log_add_exp(A x, A y) {
  const A lo = isnan(y) ? y : (x < y ? x : y);
  const A hi = isnan(y) ? y : (x > y ? x : y);
  if (lo != hi || isfinite(lo)) return hi + log1p(exp(lo - hi));
  return x;
}

template <typename T>
__global__ void logcumsumexp_kernel(const T* in, T* out, int64_t O, int64_t K, int64_t I) {
  using A = line_acc_t<T>;
  for (int64_t l = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; l < O * I;
       l += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t base = (l / I) * K * I + l % I;
    A acc = -INFINITY;
    for (int64_t k = 0; k < K; ++k) {
      acc = log_add_exp(static_cast<A>(static_cast<opmath_t<T>>(in[base + k * I])), acc);
      out[base + k * I] = static_cast<T>(static_cast<opmath_t<T>>(acc));
    }
  }
}

template <typename T>
__global__ void cumextreme_kernel(const T* in, T* values, int64_t* out, int64_t O, int64_t K, int64_t I,
                                  bool maximum) {
  using A = opmath_t<T>;
  for (int64_t l = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; l < O * I;
       l += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t base = (l / I) * K * I + l % I;
    A best = static_cast<A>(in[base]);
    int64_t at = 0;
    for (int64_t k = 0; k < K; ++k) {
      const A v = static_cast<A>(in[base + k * I]);
      bool take = maximum ? v >= best : v <= best;
      if constexpr (std::is_floating_point_v<A>) take = isnan(v) || (!isnan(best) && take);
      if (take) {
        best = v;
        at = k;
      }
      values[base + k * I] = in[base + at * I];
      out[base + k * I] = at;
    }
  }
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

Tensor logcumsumexp(const Tensor& self, int64_t dim, const Tensor& out) {
  const char* op = "logcumsumexp";
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self->dim(), 1), op);  // 0-d: as 1-d
  const Tensor x = ops::contiguous(self);
  const DimSplit L = split_around_dim(x->sizes(), d);
  Tensor res = reduction_result(self, out, x->sizes(), self->dtype());
  if (res->numel() > 0) {
    CurrentDevice guard(self->device().index);
    dispatch_device_float(x->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      logcumsumexp_kernel<T><<<blocks_for(L.O * L.I), kThreads, 0, stream_of(self->device())>>>(
          x->data<T>(), res->data<T>(), L.O, L.K, L.I);
    });
    check_launch(op);
  }
  return finish_out(op, out, res);
}

std::tuple<Tensor, Tensor> _cumextreme(const Tensor& self, int64_t dim, bool maximum) {
  const char* op = maximum ? "cummax" : "cummin";
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self->dim(), 1), op);  // 0-d: as 1-d
  const Tensor x = ops::contiguous(self);
  const DimSplit L = split_around_dim(x->sizes(), d);
  Tensor values = ember::empty(self->sizes(), self->dtype(), self->device());
  Tensor res = ember::empty(self->sizes(), ScalarType::Int64, self->device());
  if (res->numel() > 0) {
    CurrentDevice guard(self->device().index);
    dispatch_device_any(x->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (is_complex_v<T>) {
        throw std::runtime_error(message(op, ": complex values have no order"));
      } else {
        cumextreme_kernel<T><<<blocks_for(L.O * L.I), kThreads, 0, stream_of(self->device())>>>(
            x->data<T>(), values->data<T>(), res->data<int64_t>(), L.O, L.K, L.I, maximum);
      }
    });
    check_launch(op);
  }
  return {values, res};
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(logcumsumexp);
EMBER_REGISTER_CUDA_KERNEL(_cumextreme);
