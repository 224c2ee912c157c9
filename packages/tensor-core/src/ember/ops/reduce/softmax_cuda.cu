// CUDA kernels of softmax / log_softmax and their backward (checks from reduce_meta.h, as the
// CPU's): the max subtracted first; a row with a NaN gives NaN. Sums in the opmath type (float
// for the 16-bit floats), in another order than the CPU's: equal up to rounding.
#include <limits>
#include "ember/backends/cuda/reduce.cuh"
#include "ember/ops/reduce/reduce_meta.h"

namespace ember::cuda_engine {
namespace {

struct MaxOp {
  template <typename A> __device__ A operator()(A a, A b) const { return nan_max(a, b); }
};
struct SumOp {
  template <typename A> __device__ A operator()(A a, A b) const { return a + b; }
};


// ---------------------------------------------------------------------------------------------
// softmax / log_softmax along the middle dim of a contiguous [O, K, I]

constexpr double kInfinity = std::numeric_limits<double>::infinity();

template <typename T, bool Log> __global__ void softmax_rows_kernel(const T* in, T* out, int64_t O, int64_t K) {
  using A = opmath_t<T>;
  __shared__ A sh[33];
  for (int64_t r = blockIdx.x; r < O; r += gridDim.x) {
    const T* x = in + r * K;
    T* y = out + r * K;
    A m = static_cast<A>(-kInfinity);
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) m = nan_max(m, cvt<A>(x[k]));
    m = block_reduce(m, MaxOp{}, sh);
    A s = A(0);
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) s += exp_of(cvt<A>(x[k]) - m);
    s = block_reduce(s, SumOp{}, sh);
    if constexpr (Log) {
      const A ls = log_of(s);
      for (int64_t k = threadIdx.x; k < K; k += blockDim.x) y[k] = cvt<T>((cvt<A>(x[k]) - m) - ls);
    } else {
      const A inv = A(1) / s;
      for (int64_t k = threadIdx.x; k < K; k += blockDim.x) y[k] = cvt<T>(exp_of(cvt<A>(x[k]) - m) * inv);
    }
  }
}

template <typename T, bool Log>
__global__ void softmax_cols_kernel(const T* in, T* out, int64_t O, int64_t K, int64_t I) {
  using A = opmath_t<T>;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < O * I;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t base = (c / I) * K * I + c % I;
    A m = static_cast<A>(-kInfinity);
    for (int64_t k = 0; k < K; ++k) m = nan_max(m, cvt<A>(in[base + k * I]));
    A s = A(0);
    for (int64_t k = 0; k < K; ++k) s += exp_of(cvt<A>(in[base + k * I]) - m);
    if constexpr (Log) {
      const A ls = log_of(s);
      for (int64_t k = 0; k < K; ++k) out[base + k * I] = cvt<T>((cvt<A>(in[base + k * I]) - m) - ls);
    } else {
      const A inv = A(1) / s;
      for (int64_t k = 0; k < K; ++k) out[base + k * I] = cvt<T>(exp_of(cvt<A>(in[base + k * I]) - m) * inv);
    }
  }
}

// backward: softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g)
template <typename T, bool Log>
__global__ void softmax_backward_rows_kernel(const T* g, const T* y, T* out, int64_t O, int64_t K) {
  using A = opmath_t<T>;
  __shared__ A sh[33];
  for (int64_t r = blockIdx.x; r < O; r += gridDim.x) {
    const int64_t b = r * K;
    A s = A(0);
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) {
      s += Log ? cvt<A>(g[b + k]) : cvt<A>(g[b + k]) * cvt<A>(y[b + k]);
    }
    s = block_reduce(s, SumOp{}, sh);
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) {
      const A gk = cvt<A>(g[b + k]), yk = cvt<A>(y[b + k]);
      out[b + k] = cvt<T>(Log ? gk - exp_of(yk) * s : yk * (gk - s));
    }
  }
}

template <typename T, bool Log>
__global__ void softmax_backward_cols_kernel(const T* g, const T* y, T* out, int64_t O, int64_t K, int64_t I) {
  using A = opmath_t<T>;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < O * I;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t base = (c / I) * K * I + c % I;
    A s = A(0);
    for (int64_t k = 0; k < K; ++k) {
      const A gk = cvt<A>(g[base + k * I]);
      s += Log ? gk : gk * cvt<A>(y[base + k * I]);
    }
    for (int64_t k = 0; k < K; ++k) {
      const A gk = cvt<A>(g[base + k * I]), yk = cvt<A>(y[base + k * I]);
      out[base + k * I] = cvt<T>(Log ? gk - exp_of(yk) * s : yk * (gk - s));
    }
  }
}

template <typename T, bool Log> void softmax_t(const Tensor& x, const Tensor& res, const DimSplit& L, const char* op) {
  const Device dev = res->device();
  CurrentDevice guard(dev.index);
  const T* in = reinterpret_cast<const T*>(x->data_ptr());
  T* out = reinterpret_cast<T*>(res->data_ptr());
  if (L.I == 1) {
    softmax_rows_kernel<T, Log><<<row_blocks(L.O), row_threads(L.K), 0, stream_of(dev)>>>(in, out, L.O, L.K);
  } else {
    softmax_cols_kernel<T, Log><<<blocks_for(L.O * L.I), kThreads, 0, stream_of(dev)>>>(in, out, L.O, L.K, L.I);
  }
  check_launch(op);
}

template <typename T, bool Log>
void softmax_backward_t(const Tensor& g, const Tensor& y, const Tensor& res, const DimSplit& L, const char* op) {
  const Device dev = res->device();
  CurrentDevice guard(dev.index);
  const T* pg = reinterpret_cast<const T*>(g->data_ptr());
  const T* py = reinterpret_cast<const T*>(y->data_ptr());
  T* out = reinterpret_cast<T*>(res->data_ptr());
  if (L.I == 1) {
    softmax_backward_rows_kernel<T, Log>
        <<<row_blocks(L.O), row_threads(L.K), 0, stream_of(dev)>>>(pg, py, out, L.O, L.K);
  } else {
    softmax_backward_cols_kernel<T, Log>
        <<<blocks_for(L.O * L.I), kThreads, 0, stream_of(dev)>>>(pg, py, out, L.O, L.K, L.I);
  }
  check_launch(op);
}

template <bool Log>
Tensor softmax_impl(const char* op, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  const SoftmaxMeta M = softmax_meta(op, self, dim, dtype);
  if (self->numel() == 0) return ember::empty(self->sizes(), M.dtype, self->device());
  const Tensor x = contiguous_in(self, M.dtype);
  const DimSplit L = split_around_dim(x->sizes(), M.dim);
  Tensor res = ember::empty(x->sizes(), M.dtype, x->device());
  dispatch_device_float(M.dtype, op, [&](auto tag) { softmax_t<decltype(tag), Log>(x, res, L, op); });
  return res;
}

template <bool Log>
Tensor softmax_backward_impl(const char* op, const Tensor& grad_output, const Tensor& output, int64_t dim) {
  const SoftmaxMeta M = softmax_backward_meta(op, grad_output, output, dim);
  const Device dev = is_on_cpu(output) ? grad_output->device() : output->device();
  Tensor g = contiguous_in(to_device(grad_output, dev), M.dtype);
  Tensor y = contiguous_in(to_device(output, dev), M.dtype);
  const DimSplit L = split_around_dim(y->sizes(), M.dim);
  Tensor res = ember::empty(output->sizes(), M.dtype, dev);
  if (res->numel() == 0) return res;
  dispatch_device_float(M.dtype, op,
                        [&](auto tag) { softmax_backward_t<decltype(tag), Log>(g, y, res, L, op); });
  return res;
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl<false>("softmax", self, dim, dtype);
}
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl<true>("log_softmax", self, dim, dtype);
}
Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim) {
  return softmax_backward_impl<false>("_softmax_backward_data", grad_output, output, dim);
}
Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim) {
  return softmax_backward_impl<true>("_log_softmax_backward_data", grad_output, output, dim);
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(softmax);
EMBER_REGISTER_CUDA_KERNEL(log_softmax);
EMBER_REGISTER_CUDA_KERNEL(_softmax_backward_data);
EMBER_REGISTER_CUDA_KERNEL(_log_softmax_backward_data);
