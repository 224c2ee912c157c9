// CUDA kernels of native_layer_norm and its backward (checks from norm_meta.h): the row
// statistics and the parameter gradients accumulate in double (the CPU uses float lanes
// combined in double): equal up to rounding.
#include <algorithm>
#include <vector>
#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/norm/norm_meta.h"

namespace ember::cuda_engine {
namespace {

// ---------------------------------------------------------------------------------------------
// layer norm: one block per row

// Sum of v over the block (blockDim.x a multiple of 32); every thread gets it. sh: 33 slots.
__device__ double block_sum(double v, double* sh) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    double r = sh[0];
    for (int w = 1; w < nw; ++w) r += sh[w];
    sh[32] = r;
  }
  __syncthreads();
  const double r = sh[32];
  __syncthreads();
  return r;
}

// w, b: the parameters in the opmath type (null when absent).
template <typename T>
__global__ void layer_norm_kernel(const T* x, T* y, T* mean, T* rstd, const opmath_t<T>* w, const opmath_t<T>* b,
                                  int64_t R, int64_t K, double eps) {
  using A = opmath_t<T>;
  __shared__ double sh[33];
  for (int64_t r = blockIdx.x; r < R; r += gridDim.x) {
    const T* row = x + r * K;
    T* dst = y + r * K;
    double s = 0;
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) s += static_cast<double>(cvt<A>(row[k]));
    s = block_sum(s, sh);
    const double mu = K ? s / static_cast<double>(K) : 0.0;
    double m2 = 0;
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) {
      const double d = static_cast<double>(cvt<A>(row[k])) - mu;
      m2 += d * d;
    }
    m2 = block_sum(m2, sh);
    const double rs = 1.0 / ::sqrt(m2 / static_cast<double>(K) + eps);  // K = 0: NaN
    if (threadIdx.x == 0) {
      mean[r] = cvt<T>(static_cast<A>(mu));
      rstd[r] = cvt<T>(static_cast<A>(rs));
    }
    // the mean subtracted first: a row of equal values normalizes to exactly 0 (norm_cpu.cpp)
    const A a = static_cast<A>(rs), m = static_cast<A>(mu);
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) {
      A v = (cvt<A>(row[k]) - m) * a;
      if (w) v = v * w[k];
      if (b) v = v + b[k];
      dst[k] = cvt<T>(v);
    }
  }
}

// grad_input of one row per block: s * w * g + B * x + C with B = -s^3 sum(gy (x - m)) / K,
// C = -s sum(gy) / K - B m, gy = g * w (g without a weight).
template <typename T>
__global__ void layer_norm_backward_kernel(const T* g, const T* x, const double* mu, const double* rs,
                                           const opmath_t<T>* w, T* gi, int64_t R, int64_t K) {
  using A = opmath_t<T>;
  __shared__ double sh[33];
  for (int64_t r = blockIdx.x; r < R; r += gridDim.x) {
    const T* gr = g + r * K;
    const T* xr = x + r * K;
    T* orow = gi + r * K;
    const double m = mu[r], s = rs[r];
    const A am = static_cast<A>(m);
    double sg = 0, sgx = 0;
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) {
      if (w) {
        const A gy = cvt<A>(gr[k]) * w[k];
        sg += static_cast<double>(gy);
        sgx += static_cast<double>(gy * (cvt<A>(xr[k]) - am));
      } else {
        const double gv = static_cast<double>(cvt<A>(gr[k]));
        sg += gv;
        sgx += gv * (static_cast<double>(cvt<A>(xr[k])) - m);
      }
    }
    sg = block_sum(sg, sh);
    sgx = block_sum(sgx, sh);
    const double B = -s * s * s * sgx / static_cast<double>(K);
    const double Cc = -s * sg / static_cast<double>(K) - B * m;
    const A as = static_cast<A>(s), ab = static_cast<A>(B), ac = static_cast<A>(Cc);
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) {
      const A gk = cvt<A>(gr[k]), xk = cvt<A>(xr[k]);
      orow[k] = cvt<T>(w ? as * w[k] * gk + ab * xk + ac : as * gk + ab * xk + ac);
    }
  }
}

// Partial weight / bias gradients of the rows of chunk blockIdx.y, per column (in double):
// pw[chunk, i] = sum g * ((x - m) * s), pb[chunk, i] = sum g.
template <typename T>
__global__ void layer_norm_param_grads_kernel(const T* g, const T* x, const double* mu, const double* rs, int64_t R,
                                              int64_t K, int64_t rows_per_chunk, double* pw, double* pb) {
  using A = opmath_t<T>;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= K) return;
  const int64_t chunk = blockIdx.y;
  const int64_t r0 = chunk * rows_per_chunk, r1 = min(R, r0 + rows_per_chunk);
  double sw = 0, sb = 0;
  for (int64_t r = r0; r < r1; ++r) {
    const A gk = cvt<A>(g[r * K + i]);
    if (pw) sw += static_cast<double>(gk * ((cvt<A>(x[r * K + i]) - static_cast<A>(mu[r])) * static_cast<A>(rs[r])));
    if (pb) sb += static_cast<double>(gk);
  }
  if (pw) pw[chunk * K + i] = sw;
  if (pb) pb[chunk * K + i] = sb;
}

// out[i] = sum over chunks of p[chunk, i], in chunk order.
__global__ void sum_chunks_kernel(const double* p, int64_t chunks, int64_t K, double* out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < K;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double s = 0;
    for (int64_t c = 0; c < chunks; ++c) s += p[c * K + i];
    out[i] = s;
  }
}

// The dtype the parameters are computed in: float64 for a float64 input, else float32.
ScalarType opmath_dtype(ScalarType input) {
  return input == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
}

template <typename T> const opmath_t<T>* param_ptr(const Tensor& t) {
  return t ? reinterpret_cast<const opmath_t<T>*>(t->data_ptr()) : nullptr;
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, const Shape& normalized_shape,
                                                     const Tensor& weight, const Tensor& bias, double eps) {
  const char* op = "native_layer_norm";
  const LayerNormMeta m = native_layer_norm_meta(input, normalized_shape, weight, bias);
  const int64_t K = m.K, R = m.R;
  const Device dev = input->device();
  Tensor out = ember::empty(input->sizes(), input->dtype(), dev);
  Tensor mean = ember::empty(m.stat_shape, input->dtype(), dev);
  Tensor rstd = ember::empty(m.stat_shape, input->dtype(), dev);
  if (R == 0) return {out, mean, rstd};
  if (!is_floating(input->dtype())) throw_dtype_unsupported(op, input->dtype(), "floating point");
  const ScalarType pdt = opmath_dtype(input->dtype());
  Tensor w = weight ? contiguous_in(to_device(weight, dev), pdt) : Tensor();
  Tensor b = bias ? contiguous_in(to_device(bias, dev), pdt) : Tensor();
  Tensor x = contiguous_in(input, input->dtype());
  dispatch_device_float(input->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    CurrentDevice guard(dev.index);
    layer_norm_kernel<T><<<row_blocks(R), row_threads(K), 0, stream_of(dev)>>>(
        reinterpret_cast<const T*>(x->data_ptr()), reinterpret_cast<T*>(out->data_ptr()),
        reinterpret_cast<T*>(mean->data_ptr()), reinterpret_cast<T*>(rstd->data_ptr()), param_ptr<T>(w),
        param_ptr<T>(b), R, K, eps);
    check_launch(op);
  });
  return {out, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Shape& normalized_shape, const Tensor& mean,
                                                              const Tensor& rstd, const Tensor& weight,
                                                              const Tensor& bias) {
  const char* op = "native_layer_norm_backward";
  const LayerNormMeta m = native_layer_norm_backward_meta(grad_out, input, normalized_shape, mean, rstd, weight);
  const int64_t K = m.K, R = m.R;
  const Device dev = is_on_cpu(input) ? grad_out->device() : input->device();
  const bool want_w = static_cast<bool>(weight), want_b = static_cast<bool>(bias);
  Tensor gi = ember::empty(input->sizes(), input->dtype(), dev);
  // the weight and bias gradients, in double, shaped like normalized_shape
  Tensor gw = ember::empty(normalized_shape, ScalarType::Float64, dev);
  Tensor gb = ember::empty(normalized_shape, ScalarType::Float64, dev);
  if (want_w) ops::zero(gw, gw);
  if (want_b) ops::zero(gb, gb);
  if (R > 0 && K > 0) {
    if (!is_floating(input->dtype())) throw_dtype_unsupported(op, input->dtype(), "floating point");
    Tensor g = contiguous_in(to_device(grad_out, dev), input->dtype());
    Tensor x = contiguous_in(to_device(input, dev), input->dtype());
    Tensor mu = contiguous_in(to_device(mean, dev), ScalarType::Float64);
    Tensor rs = contiguous_in(to_device(rstd, dev), ScalarType::Float64);
    Tensor w = weight ? contiguous_in(to_device(weight, dev), opmath_dtype(input->dtype())) : Tensor();
    // parameter gradients: partial sums over chunks of rows (as many as the CPU's blocks,
    // at most 2^22 / K partials and 65535 chunks), then added in chunk order
    const int64_t want_chunks = std::min<int64_t>(
        {R, std::max<int64_t>(32, R / 256), std::max<int64_t>(1, (int64_t{1} << 22) / K), 65535});
    const int64_t rows_per_chunk = (R + want_chunks - 1) / want_chunks;
    const int64_t chunks = (R + rows_per_chunk - 1) / rows_per_chunk;
    Tensor pw = want_w ? ember::empty({chunks, K}, ScalarType::Float64, dev) : Tensor();
    Tensor pb = want_b ? ember::empty({chunks, K}, ScalarType::Float64, dev) : Tensor();
    dispatch_device_float(input->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      CurrentDevice guard(dev.index);
      cudaStream_t stream = stream_of(dev);
      const T* pg = reinterpret_cast<const T*>(g->data_ptr());
      const T* px = reinterpret_cast<const T*>(x->data_ptr());
      const double* pmu = reinterpret_cast<const double*>(mu->data_ptr());
      const double* prs = reinterpret_cast<const double*>(rs->data_ptr());
      layer_norm_backward_kernel<T><<<row_blocks(R), row_threads(K), 0, stream>>>(
          pg, px, pmu, prs, param_ptr<T>(w), reinterpret_cast<T*>(gi->data_ptr()), R, K);
      check_launch(op);
      if (want_w || want_b) {
        double* ppw = want_w ? reinterpret_cast<double*>(pw->data_ptr()) : nullptr;
        double* ppb = want_b ? reinterpret_cast<double*>(pb->data_ptr()) : nullptr;
        const dim3 grid(static_cast<unsigned>((K + kThreads - 1) / kThreads), static_cast<unsigned>(chunks));
        layer_norm_param_grads_kernel<T><<<grid, kThreads, 0, stream>>>(pg, px, pmu, prs, R, K, rows_per_chunk, ppw,
                                                                        ppb);
        check_launch(op);
        if (want_w) {
          sum_chunks_kernel<<<blocks_for(K), kThreads, 0, stream>>>(ppw, chunks, K,
                                                                    reinterpret_cast<double*>(gw->data_ptr()));
          check_launch(op);
        }
        if (want_b) {
          sum_chunks_kernel<<<blocks_for(K), kThreads, 0, stream>>>(ppb, chunks, K,
                                                                    reinterpret_cast<double*>(gb->data_ptr()));
          check_launch(op);
        }
      }
    });
  }
  auto as_dtype = [&](const Tensor& v, ScalarType dt) {
    if (!is_floating(dt)) throw_dtype_unsupported("normalization", dt, "floating point");
    Tensor r = ember::empty(normalized_shape, dt, dev);
    ops::copy(r, v, false, r);
    return r;
  };
  Tensor tw = want_w ? as_dtype(gw, weight->dtype()) : ember::empty({0}, input->dtype(), dev);
  Tensor tb = want_b ? as_dtype(gb, bias->dtype()) : ember::empty({0}, input->dtype(), dev);
  return {gi, tw, tb};
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(native_layer_norm);
EMBER_REGISTER_CUDA_KERNEL(native_layer_norm_backward);
