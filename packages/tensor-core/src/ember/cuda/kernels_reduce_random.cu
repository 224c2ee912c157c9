// CUDA kernels of softmax / log_softmax (and their backward), the max/min/argmax/argmin/
// amax/amin reductions, the random samplers and arange. Each mirrors its CPU kernel
// (reduce.cpp, random.cpp, creation.cpp): the same checks and messages, the same dtypes,
// the same NaN rules.
//
// The argument checks, dims, result shapes and dtypes come from reduce_random_meta.h, shared
// with the CPU kernels.
//
// - softmax: the max subtracted first; a row with a NaN gives NaN. Sums in the opmath type
//   (float for the 16-bit floats), in another order than the CPU's: equal up to rounding.
// - argmax / max(dim): the first index of the extreme value; a NaN wins (the first NaN).
// - random: the counter scheme of random.cpp exactly (generator.h's hash, the same counters
//   for the same elements, the same arithmetic with no fused multiply-adds), so that CUDA
//   and the CPU give the same numbers for the same generator state: bit for bit for rand,
//   uniform_ (up to the CPU's own FMA contraction at its AVX2 level), randint, bernoulli and
//   randperm; randn / normal_ go through log, sqrt, sin and cos, whose CUDA versions may
//   differ from the CPU's in the last bit or two. A call without a generator uses the CUDA
//   device's default generator (cuda_generator), a call with one uses that one.
// - randperm is serial Fisher-Yates: the CPU kernel draws it (from the CUDA generator) and
//   the result is copied over.
#include <cstring>
#include <limits>

#include "ember/cuda/elementwise.cuh"
#include "ember/generator.h"
#include "ember/reduce_random_meta.h"

namespace ember::cuda_engine {
namespace {

template <typename T> __device__ __forceinline__ bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

__device__ __forceinline__ float exp_of(float x) { return ::expf(x); }
__device__ __forceinline__ double exp_of(double x) { return ::exp(x); }
__device__ __forceinline__ float log_of(float x) { return ::logf(x); }
__device__ __forceinline__ double log_of(double x) { return ::log(x); }

template <typename A> __device__ __forceinline__ A shfl_down(A v, int o) {
  if constexpr (sizeof(A) < 4) {
    return static_cast<A>(__shfl_down_sync(0xffffffffu, static_cast<int>(v), o));
  } else {
    return __shfl_down_sync(0xffffffffu, v, o);
  }
}

// The larger of a running max a and b; a NaN sticks.
template <typename A> __device__ __forceinline__ A nan_max(A a, A b) { return (b > a || b != b) ? b : a; }

struct MaxOp {
  template <typename A> __device__ A operator()(A a, A b) const { return nan_max(a, b); }
};
struct SumOp {
  template <typename A> __device__ A operator()(A a, A b) const { return a + b; }
};

// Reduces v over the block (blockDim.x a multiple of 32, at most 1024); every thread gets
// the result. sh: 33 slots of shared memory.
template <typename A, typename Op> __device__ A block_reduce(A v, Op op, A* sh) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  for (int o = 16; o > 0; o >>= 1) v = op(v, shfl_down(v, o));
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    A r = sh[0];
    for (int w = 1; w < nw; ++w) r = op(r, sh[w]);
    sh[32] = r;
  }
  __syncthreads();
  const A r = sh[32];
  __syncthreads();  // sh is free again
  return r;
}

// Threads per block for a row of n elements: a multiple of 32, up to 256.
int row_threads(int64_t n) {
  if (n >= 256) return 256;
  return static_cast<int>(std::max<int64_t>(32, (n + 31) / 32 * 32));
}
int row_blocks(int64_t rows) { return static_cast<int>(std::min<int64_t>(std::max<int64_t>(rows, 1), 1 << 20)); }

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
  Tensor g = contiguous_in(moved_to(grad_output, dev), M.dtype);
  Tensor y = contiguous_in(moved_to(output, dev), M.dtype);
  const DimSplit L = split_around_dim(y->sizes(), M.dim);
  Tensor res = ember::empty(output->sizes(), M.dtype, dev);
  if (res->numel() == 0) return res;
  dispatch_device_float(M.dtype, op,
                        [&](auto tag) { softmax_backward_t<decltype(tag), Log>(g, y, res, L, op); });
  return res;
}

// ---------------------------------------------------------------------------------------------
// max / min / argmax / argmin / amax / amin: rows of a contiguous [M, K]

// Merges candidate (v2, i2) into (v, i): the extreme value, the first NaN over any number,
// the lower index between equals; i < 0 marks no candidate.
template <bool Max, typename A> __device__ __forceinline__ void arg_merge(A& v, int64_t& i, A v2, int64_t i2) {
  if (i2 < 0) return;
  bool take;
  if (i < 0) {
    take = true;
  } else {
    const bool n1 = is_nan(v), n2 = is_nan(v2);
    if (n1 || n2) take = n2 && (!n1 || i2 < i);
    else if (Max ? v2 > v : v2 < v) take = true;
    else take = v2 == v && i2 < i;
  }
  if (take) {
    v = v2;
    i = i2;
  }
}

template <typename T, bool Max>
__global__ void arg_rows_kernel(const T* in, int64_t M, int64_t K, T* values, int64_t* indices) {
  using A = opmath_t<T>;
  __shared__ A sv[32];
  __shared__ int64_t si[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  for (int64_t r = blockIdx.x; r < M; r += gridDim.x) {
    const T* x = in + r * K;
    A v = A(0);
    int64_t i = -1;
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) arg_merge<Max>(v, i, cvt<A>(x[k]), k);
    for (int o = 16; o > 0; o >>= 1) {
      const A v2 = shfl_down(v, o);
      const int64_t i2 = __shfl_down_sync(0xffffffffu, i, o);
      arg_merge<Max>(v, i, v2, i2);
    }
    if (lane == 0) {
      sv[warp] = v;
      si[warp] = i;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < nw; ++w) arg_merge<Max>(v, i, sv[w], si[w]);
      if (values) values[r] = cvt<T>(v);
      if (indices) indices[r] = i;
    }
    __syncthreads();
  }
}

// self's reduced dims moved last and made contiguous: rows of K elements.
struct Rows {
  Tensor src;
  int64_t M = 1, K = 1;
};
Rows rows_of(const Tensor& self, const std::vector<int64_t>& dims) {
  Rows R;
  Shape perm;
  std::vector<bool> red(static_cast<size_t>(self->dim()), false);
  for (int64_t d : dims) red[static_cast<size_t>(d)] = true;
  for (int64_t d = 0; d < self->dim(); ++d) {
    if (!red[static_cast<size_t>(d)]) {
      perm.push_back(d);
      R.M *= self->size(d);
    }
  }
  for (int64_t d : dims) {
    perm.push_back(d);
    R.K *= self->size(d);
  }
  R.src = contiguous_in(self->dim() > 0 ? ops::permute(self, perm) : self, self->dtype());
  return R;
}

// values (of self's dtype, may be null) and indices (int64, may be null), contiguous, of M elements.
template <bool Max> void run_arg(const char* op, const Rows& R, const Tensor& values, const Tensor& indices) {
  if (R.M == 0 || R.K == 0) return;
  const Device dev = R.src->device();
  dispatch_device_type(R.src->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    CurrentDevice guard(dev.index);
    arg_rows_kernel<T, Max><<<row_blocks(R.M), row_threads(R.K), 0, stream_of(dev)>>>(
        reinterpret_cast<const T*>(R.src->data_ptr()), R.M, R.K,
        values ? reinterpret_cast<T*>(values->data_ptr()) : nullptr,
        indices ? reinterpret_cast<int64_t*>(indices->data_ptr()) : nullptr);
    check_launch(op);
  });
}

// The result of a reduction: out itself when contiguous, of the shape and dtype, and not
// sharing self's storage; else a fresh tensor (finish_out copies).
Tensor reduce_result(const Tensor& self, const Tensor& out, const Shape& shape, ScalarType dtype) {
  if (out && out->storage() != self->storage() && out->sizes() == shape && out->dtype() == dtype &&
      out->is_contiguous()) {
    return out;
  }
  return ember::empty(shape, dtype, self->device());
}

// The values of max / min / amax / amin (M from reduce_random_meta.h).
template <bool Max>
Tensor extreme_values(const char* op, const Tensor& self, const ReductionMeta& M, const Tensor& out) {
  Tensor res = reduce_result(self, out, M.shape, M.dtype);
  run_arg<Max>(op, rows_of(self, M.dims), res, Tensor());
  return finish_out(op, out, res);
}

template <bool Max>
std::tuple<Tensor, Tensor> extreme_dim(const char* op, const Tensor& self, int64_t dim, bool keepdim) {
  const ReductionMeta M = extreme_dim_meta(op, self, dim, keepdim);
  Tensor values = ember::empty(M.shape, M.dtype, self->device());
  Tensor indices = ember::empty(M.shape, ScalarType::Int64, self->device());
  run_arg<Max>(op, rows_of(self, M.dims), values, indices);
  return {values, indices};
}

template <bool Max>
Tensor arg_extreme(const char* op, const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  const ReductionMeta M = arg_extreme_meta(op, self, dim, keepdim);
  Tensor res = reduce_result(self, out, M.shape, M.dtype);
  run_arg<Max>(op, rows_of(self, M.dims), Tensor(), res);
  return finish_out(op, out, res);
}

// ---------------------------------------------------------------------------------------------
// random numbers: generator.h's counter scheme, on the device

constexpr double kTwoPi = 6.283185307179586476925286766559;

// A host value of type HostOf<T> as the device type's bits.
template <typename T, typename H> T device_bits(H h) {
  static_assert(sizeof(T) == sizeof(H), "same size");
  T v;
  std::memcpy(static_cast<void*>(&v), static_cast<const void*>(&h), sizeof(T));
  return v;
}

// The generator a call on device uses: the one given, else the device's default.
Generator& generator_for(Generator* generator, const Device& device) {
  return generator ? *generator : cuda_generator(device.index);
}

// n freshly reserved counters of the generator a call on device uses.
RandomCounters reserve(Generator* generator, const Device& device, uint64_t n) {
  return reserve_counters(generator_for(generator, device), n);
}

// Runs fill(contiguous tensor) on t itself when contiguous, else on a temporary copied into t.
template <typename Fill> void fill_into(const Tensor& t, Fill fill) {
  if (t->is_contiguous()) {
    fill(t);
    return;
  }
  Tensor tmp = ember::empty(t->sizes(), t->dtype(), t->device());
  fill(tmp);
  ops::copy(t, tmp, t);
}

template <typename T>
__global__ void uniform_kernel(T* p, int64_t n, uint64_t seed, uint64_t start, double from, double span, double to,
                               bool clamp, T top) {
  using A = opmath_t<T>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t bits = random_bits(seed, start + static_cast<uint64_t>(i));
    const double u = std::is_same_v<T, double> ? uniform_double(bits) : static_cast<double>(uniform_float(bits));
    const T v = cvt<T>(__dadd_rn(from, __dmul_rn(span, u)));  // no FMA: as the CPU computes it
    p[i] = clamp && static_cast<double>(cvt<A>(v)) >= to ? top : v;
  }
}

template <typename T>
__global__ void normal_kernel(T* p, int64_t n, uint64_t seed, uint64_t start, double mean, double std) {
  const int64_t pairs = (n + 1) / 2;
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < pairs;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t k = start + 2 * static_cast<uint64_t>(j);
    const double u1 = 1.0 - uniform_double(random_bits(seed, k));  // (0, 1]: log is finite
    const double r = ::sqrt(-2.0 * ::log(u1));
    double z0, z1;
    if constexpr (std::is_same_v<T, double>) {
      const double theta = kTwoPi * uniform_double(random_bits(seed, k + 1));
      z0 = r * ::cos(theta);
      z1 = r * ::sin(theta);
    } else {
      const float theta = static_cast<float>(kTwoPi) * uniform_float(random_bits(seed, k + 1));
      z0 = r * static_cast<double>(::cosf(theta));
      z1 = r * static_cast<double>(::sinf(theta));
    }
    p[2 * j] = cvt<T>(__dadd_rn(mean, __dmul_rn(std, z0)));
    if (2 * j + 1 < n) p[2 * j + 1] = cvt<T>(__dadd_rn(mean, __dmul_rn(std, z1)));
  }
}

template <typename T>
__global__ void randint_kernel(T* p, int64_t n, uint64_t seed, uint64_t start, int64_t low, uint64_t range) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t bits = random_bits(seed, start + static_cast<uint64_t>(i));
    const uint64_t k = __umul64hi(bits, range);
    p[i] = cvt<T>(static_cast<int64_t>(static_cast<uint64_t>(low) + k));
  }
}

// p[i] = 1 when a 53-bit uniform is below the probability (probs[i], or prob when probs is null).
template <typename T>
__global__ void bernoulli_kernel(T* p, int64_t n, uint64_t seed, uint64_t start, const double* probs, double prob) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double u = uniform_double(random_bits(seed, start + static_cast<uint64_t>(i)));
    p[i] = cvt<T>(static_cast<int64_t>(u < (probs ? probs[i] : prob)));
  }
}

void fill_uniform(const Tensor& t, Generator* generator, double from, double to) {
  fill_into(t, [&](const Tensor& r) {
    const Device dev = r->device();
    const RandomCounters c = reserve(generator, dev, static_cast<uint64_t>(r->numel()));
    dispatch_float(r->dtype(), "uniform", [&](auto host_tag) {
      using H = decltype(host_tag);
      using T = std::conditional_t<std::is_same_v<H, Half>, __half,
                                   std::conditional_t<std::is_same_v<H, BFloat16>, __nv_bfloat16, H>>;
      // a value that rounds up to `to` becomes the largest one below it (when that is >= from)
      const UniformRange<H> R = uniform_range<H>(from, to);
      if (r->numel() == 0) return;
      CurrentDevice guard(dev.index);
      uniform_kernel<T><<<blocks_for(r->numel()), kThreads, 0, stream_of(dev)>>>(
          reinterpret_cast<T*>(r->data_ptr()), r->numel(), c.seed, c.start, from, R.span, to, R.clamp,
          device_bits<T>(R.top));
      check_launch("uniform");
    });
  });
}

void fill_normal(const Tensor& t, Generator* generator, double mean, double std) {
  fill_into(t, [&](const Tensor& r) {
    const Device dev = r->device();
    const uint64_t n = static_cast<uint64_t>(r->numel());
    const RandomCounters c = reserve(generator, dev, n + (n & 1));
    dispatch_device_float(r->dtype(), "normal", [&](auto tag) {
      using T = decltype(tag);
      if (n == 0) return;
      CurrentDevice guard(dev.index);
      normal_kernel<T><<<blocks_for((r->numel() + 1) / 2), kThreads, 0, stream_of(dev)>>>(
          reinterpret_cast<T*>(r->data_ptr()), r->numel(), c.seed, c.start, mean, std);
      check_launch("normal");
    });
  });
}

// probs: null (use prob) or a contiguous float64 tensor of t's shape on t's device.
void fill_bernoulli(const Tensor& t, Generator* generator, const Tensor& probs, double prob) {
  fill_into(t, [&](const Tensor& r) {
    const Device dev = r->device();
    const int64_t n = r->numel();
    const RandomCounters c = reserve(generator, dev, static_cast<uint64_t>(n));
    dispatch_device_type(r->dtype(), "bernoulli", [&](auto tag) {
      using T = decltype(tag);
      if (n == 0) return;
      CurrentDevice guard(dev.index);
      bernoulli_kernel<T><<<blocks_for(n), kThreads, 0, stream_of(dev)>>>(
          reinterpret_cast<T*>(r->data_ptr()), n, c.seed, c.start,
          probs ? reinterpret_cast<const double*>(probs->data_ptr()) : nullptr, prob);
      check_launch("bernoulli");
    });
  });
}

// The first i in [0, n) with !(0 <= p[i] <= 1), or -1.
__global__ void bad_probability_kernel(const double* p, int64_t n, unsigned long long* first) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (!(p[i] >= 0.0 && p[i] <= 1.0)) atomicMin(first, static_cast<unsigned long long>(i));
  }
}

// p broadcast to `shape` as a contiguous float64 tensor on device, every value checked to be
// in [0, 1] (random.cpp's checked_probabilities).
Tensor checked_probabilities(const char* op, const Tensor& p, const Shape& shape, const Device& device) {
  check_probabilities_dtype(op, p);
  Tensor probs = ember::empty(shape, ScalarType::Float64, device);
  ops::copy(probs, expand_to(p, shape, op), probs);  // (a CPU 0-d p is copied over)
  const int64_t n = probs->numel();
  if (n == 0) return probs;
  Tensor first = ember::empty({}, ScalarType::Int64, device);
  {
    CurrentDevice guard(device.index);
    const cudaError_t err = cudaMemsetAsync(first->data_ptr(), 0xff, sizeof(int64_t), stream_of(device));
    if (err != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error(message(op, ": cudaMemsetAsync failed: ", cudaGetErrorString(err)));
    }
    bad_probability_kernel<<<blocks_for(n), kThreads, 0, stream_of(device)>>>(
        reinterpret_cast<const double*>(probs->data_ptr()), n,
        reinterpret_cast<unsigned long long*>(first->data_ptr()));
    check_launch(op);
  }
  const int64_t i = *to_host(first)->data<int64_t>();
  if (i >= 0) {
    throw_bad_probability(op, *to_host(make_view(probs, {}, {}, probs->offset() + i))->data<double>(), i);
  }
  return probs;
}



// ---------------------------------------------------------------------------------------------
// arange

// creation.cpp's convert<T>(double): NaN -> 0, saturation at the int64 range, then a wrap.
template <typename T> __device__ __forceinline__ T from_double(double d) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (d != d) return T(0);
    if constexpr (std::is_same_v<T, uint8_t>) {
      return static_cast<T>(static_cast<int64_t>(d));
    } else {
      if (d >= 9.2233720368547758e18) return std::numeric_limits<T>::max();
      if (d <= -9.2233720368547758e18) return std::numeric_limits<T>::min();
      return static_cast<T>(static_cast<int64_t>(d));
    }
  } else {
    return cvt<T>(d);
  }
}

template <typename T>
__global__ void arange_kernel(T* p, int64_t n, bool all_int, int64_t a0, int64_t si, double a, double s) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (all_int) {
      const uint64_t v = static_cast<uint64_t>(a0) + static_cast<uint64_t>(i) * static_cast<uint64_t>(si);  // wraps
      p[i] = cvt<T>(static_cast<int64_t>(v));
    } else {
      p[i] = from_double<T>(__dadd_rn(a, __dmul_rn(static_cast<double>(i), s)));
    }
  }
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

Tensor rand(const Shape& size, Generator* generator, std::optional<ScalarType> dtype, std::optional<Device> device,
            bool requires_grad, const Tensor& out) {
  const ScalarType dt = rand_meta("rand", dtype, out);
  return create("rand", size, dt, device, requires_grad, out,
                [&](const Tensor& r) { fill_uniform(r, generator, 0.0, 1.0); });
}

Tensor randn(const Shape& size, Generator* generator, std::optional<ScalarType> dtype, std::optional<Device> device,
             bool requires_grad, const Tensor& out) {
  const ScalarType dt = rand_meta("randn", dtype, out);
  return create("randn", size, dt, device, requires_grad, out,
                [&](const Tensor& r) { fill_normal(r, generator, 0.0, 1.0); });
}



Tensor randint(int64_t low, int64_t high, const Shape& size, Generator* generator, std::optional<ScalarType> dtype,
               std::optional<Device> device, bool requires_grad) {
  const RandintMeta M = randint_meta(low, high, dtype);
  const uint64_t range = M.range;
  return create("randint", size, M.dtype, device, requires_grad, Tensor(), [&](const Tensor& r) {
    const Device dev = r->device();
    const int64_t n = r->numel();
    const RandomCounters c = reserve(generator, dev, static_cast<uint64_t>(n));
    dispatch_device_type(M.dtype, "randint", [&](auto tag) {
      using T = decltype(tag);
      if (n == 0) return;
      CurrentDevice guard(dev.index);
      randint_kernel<T><<<blocks_for(n), kThreads, 0, stream_of(dev)>>>(reinterpret_cast<T*>(r->data_ptr()), n,
                                                                         c.seed, c.start, low, range);
      check_launch("randint");
    });
  });
}

Tensor randint_high(int64_t high, const Shape& size, Generator* generator, std::optional<ScalarType> dtype,
                    std::optional<Device> device, bool requires_grad) {
  return randint(0, high, size, generator, dtype, device, requires_grad);
}

Tensor randperm(int64_t n, Generator* generator, std::optional<ScalarType> dtype, std::optional<Device> device,
                bool requires_grad) {
  // serial Fisher-Yates: drawn by the CPU kernel from this device's generator, then moved
  const Device dev = creation_device(device, Tensor());
  Tensor host = cpu::randperm(n, &generator_for(generator, dev), dtype, std::nullopt, false);
  Tensor res = ember::empty(host->sizes(), host->dtype(), dev);
  ops::copy(res, host, res);
  if (requires_grad) set_requires_grad(res, true);
  return res;
}

Tensor normal(const Tensor& self, double mean, double std, Generator* generator, const Tensor& out) {
  Tensor target = normal_meta(self, std, out);
  fill_normal(target, generator, mean, std);
  return target;
}

Tensor uniform(const Tensor& self, double from, double to, Generator* generator, const Tensor& out) {
  Tensor target = uniform_meta(self, from, to, out);
  fill_uniform(target, generator, from, to);
  return target;
}

Tensor bernoulli_p(const Tensor& self, double p, Generator* generator, const Tensor& out) {
  Tensor target = bernoulli_p_meta(self, p, out);
  fill_bernoulli(target, generator, Tensor(), p);
  return target;
}

Tensor bernoulli(const Tensor& self, std::optional<double> p, Generator* generator) {
  if (p) return bernoulli_p(self, *p, generator, Tensor());  // a new tensor shaped like self
  check_sampler_dtype("bernoulli", self->dtype());
  Tensor probs = checked_probabilities("bernoulli", self, self->sizes(), self->device());
  Tensor res = ember::empty(self->sizes(), self->dtype(), self->device());
  fill_bernoulli(res, generator, probs, 0.0);
  return res;
}

Tensor bernoulli_tensor(const Tensor& self, const Tensor& p, Generator* generator, const Tensor& out) {
  const Device dev = is_on_cpu(out ? out : self) ? p->device() : (out ? out : self)->device();
  Tensor target = out ? out : ember::empty(self->sizes(), self->dtype(), dev);
  Tensor probs = checked_probabilities("bernoulli_", p, target->sizes(), target->device());
  fill_bernoulli(target, generator, probs, 0.0);
  return target;
}

Tensor arange(const Scalar& start, std::optional<Scalar> end, const Scalar& step, std::optional<ScalarType> dtype,
              std::optional<Device> device, bool requires_grad, const Tensor& out) {
  const ArangeMeta M = arange_meta(start, end, step, dtype, out);
  const ScalarType t = M.dtype;
  const int64_t n = M.n;
  Tensor res = creation_result({n}, t, device, out);
  if (t == ScalarType::Bool) throw_dtype_unsupported("arange", t, "numeric");
  dispatch_device_type(t, "arange", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      if (n == 0) return;
      const Device dev = res->device();
      CurrentDevice guard(dev.index);
      arange_kernel<T><<<blocks_for(n), kThreads, 0, stream_of(dev)>>>(reinterpret_cast<T*>(res->data_ptr()), n,
                                                                        M.all_int, M.a0, M.si, M.a, M.s);
      check_launch("arange");
    }
  });
  res = finish_out("arange", out, res);
  if (requires_grad) set_requires_grad(res, true);
  return res;
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(softmax);
EMBER_REGISTER_CUDA_KERNEL(log_softmax);
EMBER_REGISTER_CUDA_KERNEL(_softmax_backward_data);
EMBER_REGISTER_CUDA_KERNEL(_log_softmax_backward_data);
EMBER_REGISTER_CUDA_KERNEL(max_all);
EMBER_REGISTER_CUDA_KERNEL(min_all);
EMBER_REGISTER_CUDA_KERNEL(max_dim);
EMBER_REGISTER_CUDA_KERNEL(min_dim);
EMBER_REGISTER_CUDA_KERNEL(amax);
EMBER_REGISTER_CUDA_KERNEL(amin);
EMBER_REGISTER_CUDA_KERNEL(argmax);
EMBER_REGISTER_CUDA_KERNEL(argmin);
EMBER_REGISTER_CUDA_KERNEL(rand);
EMBER_REGISTER_CUDA_KERNEL(randn);
EMBER_REGISTER_CUDA_KERNEL(randint);
EMBER_REGISTER_CUDA_KERNEL(randint_high);
EMBER_REGISTER_CUDA_KERNEL(randperm);
EMBER_REGISTER_CUDA_KERNEL(normal);
EMBER_REGISTER_CUDA_KERNEL(uniform);
EMBER_REGISTER_CUDA_KERNEL(bernoulli);
EMBER_REGISTER_CUDA_KERNEL(bernoulli_p);
EMBER_REGISTER_CUDA_KERNEL(bernoulli_tensor);
EMBER_REGISTER_CUDA_KERNEL(arange);
