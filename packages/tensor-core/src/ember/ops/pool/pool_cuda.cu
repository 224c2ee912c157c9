// 2-D pooling on CUDA: max_pool2d_with_indices, avg_pool2d, adaptive_avg_pool2d,
// adaptive_max_pool2d and their backward ops. The checks and window rules are pool_meta.h's,
// shared with the CPU kernels (pool_cpu.cpp); one thread per output element (forward) or per
// input element (the average pools' backward, a gather: no atomics, a fixed summing order).
// The max pools' backward scatters through the indices with atomicAdd, as PyTorch's does;
// an index outside its plane is skipped (the CPU raises for it).
#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/pool/pool_meta.h"

namespace ember::cuda_engine {
namespace {

template <typename T> __device__ __forceinline__ bool nan_of(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  return false;
}

template <typename A> __device__ __forceinline__ A lowest() {
  if constexpr (std::is_floating_point_v<A>) return -INFINITY;
  else return std::numeric_limits<A>::lowest();
}

// First maximum wins; a NaN wins and the last NaN's index is kept (the CPU's rule).
template <typename T>
__global__ void max_pool_kernel(int64_t total, const T* in, T* out, int64_t* idx, PoolGeometry g) {
  using A = opmath_t<T>;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < total;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ox = o % g.OW, oy = (o / g.OW) % g.OH, p = o / (g.OW * g.OH);
    const T* src = in + p * g.H * g.W;
    int64_t y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
    const int64_t y1 = min(y0 + (g.kh - 1) * g.dh + 1, g.H), x1 = min(x0 + (g.kw - 1) * g.dw + 1, g.W);
    while (y0 < 0) y0 += g.dh;
    while (x0 < 0) x0 += g.dw;
    A m = lowest<A>();
    int64_t at = y0 * g.W + x0;
    for (int64_t y = y0; y < y1; y += g.dh) {
      for (int64_t x = x0; x < x1; x += g.dw) {
        const A v = cvt<A>(src[y * g.W + x]);
        if (v > m || nan_of(v)) {
          m = v;
          at = y * g.W + x;
        }
      }
    }
    out[o] = cvt<T>(m);
    idx[o] = at;
  }
}

// The input window of output element o (flat over planes x OH x OW) of an adaptive pooling.
struct AdaptiveWindow {
  int64_t plane, y0, y1, x0, x1;
  __device__ AdaptiveWindow(int64_t o, int64_t H, int64_t W, int64_t OH, int64_t OW) {
    const int64_t ox = o % OW, oy = (o / OW) % OH;
    plane = o / (OW * OH);
    y0 = adaptive_start(oy, OH, H);
    y1 = adaptive_end(oy, OH, H);
    x0 = adaptive_start(ox, OW, W);
    x1 = adaptive_end(ox, OW, W);
  }
};

template <typename T>
__global__ void adaptive_max_kernel(int64_t total, const T* in, T* out, int64_t* idx, int64_t H, int64_t W, int64_t OH, int64_t OW) {
  using A = opmath_t<T>;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < total;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const AdaptiveWindow win(o, H, W, OH, OW);
    const int64_t y0 = win.y0, y1 = win.y1, x0 = win.x0, x1 = win.x1;
    const T* src = in + win.plane * H * W;
    A m = -INFINITY;
    int64_t at = y0 * W + x0;
    for (int64_t y = y0; y < y1; ++y) {
      for (int64_t x = x0; x < x1; ++x) {
        const A v = cvt<A>(src[y * W + x]);
        if (v > m || v != v) {
          m = v;
          at = y * W + x;
        }
      }
    }
    out[o] = cvt<T>(m);
    idx[o] = at;
  }
}

// grad_input[p, idx[p, l]] += grad[p, l] (grad_input zeroed before).
template <typename T>
__global__ void index_scatter_kernel(const T* grad, const int64_t* idx, T* gin, int64_t total, int64_t L,
                                     int64_t HW) {
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < total;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = idx[o];
    if (i < 0 || i >= HW) continue;
    atomicAdd(gin + (o / L) * HW + i, grad[o]);
  }
}

template <typename T>
__global__ void avg_pool_kernel(int64_t total, const T* in, T* out, PoolGeometry g, bool count_include_pad, int64_t divisor) {
  using A = opmath_t<T>;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < total;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ox = o % g.OW, oy = (o / g.OW) % g.OH, p = o / (g.OW * g.OH);
    int64_t y0, y1, ey, x0, x1, ex;
    avg_window(oy, g.H, g.kh, g.sh, g.ph, count_include_pad, &y0, &y1, &ey);
    avg_window(ox, g.W, g.kw, g.sw, g.pw, count_include_pad, &x0, &x1, &ex);
    const T* src = in + p * g.H * g.W;
    A sum(0);
    for (int64_t y = y0; y < y1; ++y) {
      for (int64_t x = x0; x < x1; ++x) sum += cvt<A>(src[y * g.W + x]);
    }
    const A scale = static_cast<A>(1.0 / static_cast<double>(divisor ? divisor : ey * ex));
    out[o] = cvt<T>(sum * scale);
  }
}

// Each input pixel sums the scaled gradients of the windows that cover it.
template <typename T>
__global__ void avg_pool_backward_kernel(int64_t total, const T* grad, T* gin, PoolGeometry g, bool count_include_pad, int64_t divisor) {
  using A = opmath_t<T>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t x = i % g.W, y = (i / g.W) % g.H, p = i / (g.W * g.H);
    const T* go = grad + p * g.OH * g.OW;
    // outputs o whose window start o*s - pad <= coordinate < start + k
    const int64_t ny = (y + g.ph - g.kh + g.sh) / g.sh, oy_lo = ny > 0 ? ny : 0;
    const int64_t oy_hi = min(g.OH - 1, (y + g.ph) / g.sh);
    const int64_t nx = (x + g.pw - g.kw + g.sw) / g.sw, ox_lo = nx > 0 ? nx : 0;
    const int64_t ox_hi = min(g.OW - 1, (x + g.pw) / g.sw);
    A acc(0);
    for (int64_t oy = oy_lo; oy <= oy_hi; ++oy) {
      int64_t y0, y1, ey;
      avg_window(oy, g.H, g.kh, g.sh, g.ph, count_include_pad, &y0, &y1, &ey);
      if (y < y0 || y >= y1) continue;
      for (int64_t ox = ox_lo; ox <= ox_hi; ++ox) {
        int64_t x0, x1, ex;
        avg_window(ox, g.W, g.kw, g.sw, g.pw, count_include_pad, &x0, &x1, &ex);
        if (x < x0 || x >= x1) continue;
        const A scale = static_cast<A>(1.0 / static_cast<double>(divisor ? divisor : ey * ex));
        acc += cvt<A>(go[oy * g.OW + ox]) * scale;
      }
    }
    gin[i] = cvt<T>(acc);
  }
}

template <typename T>
__global__ void adaptive_avg_kernel(int64_t total, const T* in, T* out, int64_t H, int64_t W, int64_t OH, int64_t OW) {
  using A = opmath_t<T>;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < total;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const AdaptiveWindow win(o, H, W, OH, OW);
    const int64_t y0 = win.y0, y1 = win.y1, x0 = win.x0, x1 = win.x1;
    const T* src = in + win.plane * H * W;
    double sum = 0;
    for (int64_t y = y0; y < y1; ++y) {
      for (int64_t x = x0; x < x1; ++x) sum += static_cast<double>(cvt<A>(src[y * W + x]));
    }
    out[o] = cvt<T>(static_cast<A>(sum / static_cast<double>((y1 - y0) * (x1 - x0))));
  }
}

template <typename T>
__global__ void adaptive_avg_backward_kernel(int64_t total, const T* grad, T* gin, int64_t H, int64_t W, int64_t OH, int64_t OW) {
  using A = opmath_t<T>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t x = i % W, y = (i / W) % H, p = i / (W * H);
    const T* go = grad + p * OH * OW;
    A acc(0);
    // the outputs whose windows [start, end) hold y: a few around y * OH / H
    const int64_t oy_lo = (y * OH) / H, ox_lo = (x * OW) / W;
    for (int64_t oy = oy_lo > 0 ? oy_lo - 1 : 0; oy < OH && adaptive_start(oy, OH, H) <= y; ++oy) {
      const int64_t y0 = adaptive_start(oy, OH, H), y1 = adaptive_end(oy, OH, H);
      if (y < y0 || y >= y1) continue;
      for (int64_t ox = ox_lo > 0 ? ox_lo - 1 : 0; ox < OW && adaptive_start(ox, OW, W) <= x; ++ox) {
        const int64_t x0 = adaptive_start(ox, OW, W), x1 = adaptive_end(ox, OW, W);
        if (x < x0 || x >= x1) continue;
        acc += cvt<A>(go[oy * OW + ox]) / static_cast<A>((y1 - y0) * (x1 - x0));
      }
    }
    gin[i] = cvt<T>(acc);
  }
}

template <typename Kernel, typename... Args>
void launch(const char* op, const Device& d, int64_t total, Kernel kernel, Args... args) {
  if (total == 0) return;
  CurrentDevice guard(d.index);
  kernel<<<blocks_for(total), kThreads, 0, stream_of(d)>>>(total, args...);
  check_launch(op);
}

// The floating dtypes pooling takes (max pooling also takes integers).
template <typename F> void dispatch_pool_float(ScalarType t, const char* op, F&& f) {
  dispatch_device_float(t, op, std::forward<F>(f));
}

// max pools' backward: zeros, then the scatter (float32/float64/16-bit floats via atomicAdd).
template <typename T>
void scatter_t(const Tensor& go, const Tensor& ind, const Tensor& res, int64_t L, int64_t HW) {
  const int64_t total = go->numel();
  if (total == 0) return;
  CurrentDevice guard(res->device().index);
  index_scatter_kernel<T><<<blocks_for(total), kThreads, 0, stream_of(res->device())>>>(
      go->data<T>(), ind->data<int64_t>(), res->data<T>(), total, L, HW);
  check_launch("max_pool2d_backward");
}

Tensor scatter_by_indices(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
  const int64_t H = self->size(-2), W = self->size(-1);
  const int64_t L = grad_output->size(-2) * grad_output->size(-1);
  Tensor go = ops::contiguous(grad_output), ind = ops::contiguous(indices);
  Tensor res = ops::zeros(self->sizes(), self->dtype(), self->device(), false, Tensor());
  if (res->numel() == 0) return res;
  dispatch_device_float(self->dtype(), "max_pool2d_backward", [&](auto tag) {
    scatter_t<decltype(tag)>(go, ind, res, L, H * W);
  });
  return res;
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, const Shape& kernel_size, const Shape& stride,
                                                   const Shape& padding, const Shape& dilation, bool ceil_mode) {
  const PoolGeometry g = max_pool_meta(self, kernel_size, stride, padding, dilation, ceil_mode);
  const Shape shape = pooled_shape(self, g.OH, g.OW);
  Tensor src = ops::contiguous(self);
  Tensor out = ember::empty(shape, self->dtype(), self->device());
  Tensor idx = ember::empty(shape, ScalarType::Int64, self->device());
  if (self->dtype() == ScalarType::Bool) {
    throw NotImplementedError("\"max_pool2d\" not implemented for 'Bool'");
  }
  dispatch_device_type(self->dtype(), "max_pool2d", [&](auto tag) {
    using T = decltype(tag);
    launch("max_pool2d", self->device(), out->numel(), max_pool_kernel<T>, src->data<T>(), out->data<T>(),
           idx->data<int64_t>(), g);
  });
  return {out, idx};
}

Tensor max_pool2d_with_indices_backward(const Tensor& grad_output, const Tensor& self, const Shape& kernel_size,
                                        const Shape& stride, const Shape& padding, const Shape& dilation,
                                        bool ceil_mode, const Tensor& indices) {
  max_pool_backward_meta(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices);
  return scatter_by_indices(grad_output, self, indices);
}

Tensor avg_pool2d(const Tensor& self, const Shape& kernel_size, const Shape& stride, const Shape& padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  const PoolGeometry g = avg_pool_meta(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  if (self->dtype() == ScalarType::Int64) {  // as PyTorch's CUDA kernel (the CPU one takes int64)
    throw NotImplementedError("\"avg_pool2d\" not implemented for 'Long' on CUDA (floating types only)");
  }
  Tensor src = ops::contiguous(self);
  Tensor out = ember::empty(pooled_shape(self, g.OH, g.OW), self->dtype(), self->device());
  dispatch_pool_float(self->dtype(), "avg_pool2d", [&](auto tag) {
    using T = decltype(tag);
    launch("avg_pool2d", self->device(), out->numel(), avg_pool_kernel<T>, src->data<T>(), out->data<T>(), g,
           count_include_pad, divisor_override.value_or(0));
  });
  return out;
}

Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, const Shape& kernel_size,
                           const Shape& stride, const Shape& padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  const PoolGeometry g =
      avg_pool_backward_meta(grad_output, self, kernel_size, stride, padding, ceil_mode, divisor_override);
  Tensor go = ops::contiguous(grad_output);
  Tensor res = ember::empty(self->sizes(), self->dtype(), self->device());
  dispatch_pool_float(self->dtype(), "avg_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    launch("avg_pool2d_backward", self->device(), res->numel(), avg_pool_backward_kernel<T>, go->data<T>(),
           res->data<T>(), g, count_include_pad, divisor_override.value_or(0));
  });
  return res;
}

Tensor adaptive_avg_pool2d(const Tensor& self, const Shape& output_size) {
  const auto out_size = adaptive_pool_meta("adaptive_avg_pool2d", self, output_size, false);
  const int64_t OH = out_size.first, OW = out_size.second;
  const int64_t H = self->size(-2), W = self->size(-1);
  if (H == 0 || W == 0) {  // the mean of an empty plane: NaN, as PyTorch's
    return ops::full(pooled_shape(self, OH, OW), Scalar::from_double(NAN), self->dtype(), self->device(), false,
                     Tensor());
  }
  Tensor src = ops::contiguous(self);
  Tensor out = ember::empty(pooled_shape(self, OH, OW), self->dtype(), self->device());
  dispatch_pool_float(self->dtype(), "adaptive_avg_pool2d", [&](auto tag) {
    using T = decltype(tag);
    launch("adaptive_avg_pool2d", self->device(), out->numel(), adaptive_avg_kernel<T>, src->data<T>(),
           out->data<T>(), H, W, OH, OW);
  });
  return out;
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self) {
  adaptive_avg_pool_backward_meta(grad_output, self);
  const int64_t H = self->size(-2), W = self->size(-1), OH = grad_output->size(-2), OW = grad_output->size(-1);
  if (OH == 0 || OW == 0) return ops::zeros(self->sizes(), self->dtype(), self->device(), false, Tensor());
  Tensor go = ops::contiguous(grad_output);
  Tensor res = ember::empty(self->sizes(), self->dtype(), self->device());
  dispatch_pool_float(self->dtype(), "adaptive_avg_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    launch("adaptive_avg_pool2d_backward", self->device(), res->numel(), adaptive_avg_backward_kernel<T>,
           go->data<T>(), res->data<T>(), H, W, OH, OW);
  });
  return res;
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& self, const Shape& output_size) {
  const auto out_size = adaptive_pool_meta("adaptive_max_pool2d", self, output_size, true);
  const int64_t OH = out_size.first, OW = out_size.second;
  const int64_t H = self->size(-2), W = self->size(-1);
  Tensor src = ops::contiguous(self);
  const Shape shape = pooled_shape(self, OH, OW);
  Tensor out = ember::empty(shape, self->dtype(), self->device());
  Tensor idx = ember::empty(shape, ScalarType::Int64, self->device());
  dispatch_pool_float(self->dtype(), "adaptive_max_pool2d", [&](auto tag) {
    using T = decltype(tag);
    launch("adaptive_max_pool2d", self->device(), out->numel(), adaptive_max_kernel<T>, src->data<T>(),
           out->data<T>(), idx->data<int64_t>(), H, W, OH, OW);
  });
  return {out, idx};
}

Tensor adaptive_max_pool2d_backward(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
  adaptive_max_pool_backward_meta(grad_output, self, indices);
  return scatter_by_indices(grad_output, self, indices);
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(max_pool2d_with_indices);
EMBER_REGISTER_CUDA_KERNEL(max_pool2d_with_indices_backward);
EMBER_REGISTER_CUDA_KERNEL(avg_pool2d);
EMBER_REGISTER_CUDA_KERNEL(avg_pool2d_backward);
EMBER_REGISTER_CUDA_KERNEL(adaptive_avg_pool2d);
EMBER_REGISTER_CUDA_KERNEL(adaptive_avg_pool2d_backward);
EMBER_REGISTER_CUDA_KERNEL(adaptive_max_pool2d);
EMBER_REGISTER_CUDA_KERNEL(adaptive_max_pool2d_backward);
