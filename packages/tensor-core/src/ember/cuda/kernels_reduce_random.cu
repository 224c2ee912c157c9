// CUDA kernels of softmax / log_softmax (and their backward), the max/min/argmax/argmin/
// amax/amin reductions (on the engine of reduce.cuh), the random samplers, multinomial and
// arange. Each mirrors its CPU kernel (reduce.cpp, random.cpp, creation.cpp): the same checks
// and messages, the same dtypes, the same NaN rules.
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
// - multinomial: random.cpp's algorithm and counters (see its section below for where the
//   draws can differ from the CPU's).
#include <cstring>
#include <limits>

#include "ember/cuda/reduce.cuh"
#include "ember/generator.h"
#include "ember/reduce_random_meta.h"

namespace ember::cuda_engine {
namespace {

struct MaxOp {
  template <typename A> __device__ A operator()(A a, A b) const { return nan_max(a, b); }
};
struct SumOp {
  template <typename A> __device__ A operator()(A a, A b) const { return a + b; }
};

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
  Tensor g = contiguous_in(to_device(grad_output, dev), M.dtype);
  Tensor y = contiguous_in(to_device(output, dev), M.dtype);
  const DimSplit L = split_around_dim(y->sizes(), M.dim);
  Tensor res = ember::empty(output->sizes(), M.dtype, dev);
  if (res->numel() == 0) return res;
  dispatch_device_float(M.dtype, op,
                        [&](auto tag) { softmax_backward_t<decltype(tag), Log>(g, y, res, L, op); });
  return res;
}

// ---------------------------------------------------------------------------------------------
// max / min / argmax / argmin / amax / amin on the reduction engine

// max / min / amax / amin: the extreme value, a NaN winning (no index carried).
template <typename T, bool Max> struct ExtremeReducer {
  using acc_t = opmath_t<T>;
  T* out;
  __device__ acc_t identity() const {
    if constexpr (std::is_floating_point_v<acc_t>) {
      return Max ? -std::numeric_limits<acc_t>::infinity() : std::numeric_limits<acc_t>::infinity();
    } else {
      return Max ? std::numeric_limits<acc_t>::lowest() : std::numeric_limits<acc_t>::max();
    }
  }
  __device__ acc_t combine(acc_t a, acc_t b) const { return Max ? nan_max(a, b) : nan_min(a, b); }
  __device__ acc_t step(acc_t a, T x, int64_t) const { return combine(a, cvt<acc_t>(x)); }
  __device__ void write(int64_t r, acc_t a) const { out[r] = cvt<T>(a); }
};

template <typename V> struct ArgAcc {
  V v;
  int64_t i;  // -1: no element yet
};

// argmax / argmin and max / min along a dim: the first index of the extreme value; a NaN wins
// over any number, the first NaN over later ones. Merging by index makes the order in which
// partial results meet irrelevant.
template <typename T, bool Max> struct ArgReducer {
  using V = opmath_t<T>;
  using acc_t = ArgAcc<V>;
  T* values;  // may be null
  int64_t* indices;  // may be null
  __device__ acc_t identity() const { return acc_t{V(0), -1}; }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (b.i < 0) return a;
    if (a.i < 0) return b;
    const bool na = is_nan(a.v), nb = is_nan(b.v);
    bool take;
    if (na || nb) take = nb && (!na || b.i < a.i);
    else if (Max ? b.v > a.v : b.v < a.v) take = true;
    else take = b.v == a.v && b.i < a.i;
    return take ? b : a;
  }
  __device__ acc_t step(acc_t a, T x, int64_t k) const { return combine(a, acc_t{cvt<V>(x), k}); }
  __device__ void write(int64_t r, acc_t a) const {
    if (values) values[r] = cvt<T>(a.v);
    if (indices) indices[r] = a.i;
  }
};

// The values of max / min / amax / amin (M from reduce_random_meta.h).
template <bool Max>
Tensor extreme_values(const char* op, const Tensor& self, const ReductionMeta& M, const Tensor& out) {
  Tensor res = reduction_result(self, out, M.shape, M.dtype);
  const ReducePlan P = plan_reduce(self, M.dims, true);
  dispatch_device_type(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    run_reduce<T>(op, P, ExtremeReducer<T, Max>{reinterpret_cast<T*>(res->data_ptr())});
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
                  ArgReducer<T, Max>{values ? reinterpret_cast<T*>(values->data_ptr()) : nullptr,
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
  ops::copy(t, tmp, false, t);
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
  ops::copy(probs, expand_to(p, shape, op), false, probs);  // (a CPU 0-d p is copied over)
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
// multinomial: random.cpp's algorithm on the device, the same counters for the same draws
//
// With replacement, draw (r, s) takes counter r * num_samples + s: a 53-bit uniform times the
// row's total, the first category whose cumulative weight exceeds it. The cumulative weights
// are summed in double in the CPU's order (a thread per row) up to kExactCategories categories,
// so the draws equal the CPU's bit for bit; longer rows are summed by cumsum's parallel scan,
// whose rounding can move a draw that falls within rounding of a boundary.
// Without replacement, category (r, k) takes counter r * categories + k for its key
// -log1p(-u) / w (zero weights after the others, by -log1p(-u)); a bitonic sort of each row's
// keys (ties by index) gives the draws in increasing key order.

constexpr int64_t kExactCategories = int64_t(1) << 16;

struct WeightCheck {
  int64_t first_bad;  // the first category that is negative, inf or NaN; INT64_MAX: none
  int32_t positive;   // whether a weight is > 0
  int32_t pad;
};

// Writes per row: the first bad category, else -1 for a valid row, -2 for one without a
// positive weight.
struct WeightCheckReducer {
  using acc_t = WeightCheck;
  int64_t* out;
  __device__ acc_t identity() const { return WeightCheck{std::numeric_limits<int64_t>::max(), 0, 0}; }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    return WeightCheck{min(a.first_bad, b.first_bad), a.positive | b.positive, 0};
  }
  __device__ acc_t step(acc_t a, double v, int64_t k) const {
    if (!(v >= 0.0) || ::isinf(v)) a.first_bad = min(a.first_bad, k);
    if (v > 0.0) a.positive = 1;
    return a;
  }
  __device__ void write(int64_t r, acc_t a) const {
    out[r] = a.first_bad != std::numeric_limits<int64_t>::max() ? a.first_bad : (a.positive ? -1 : -2);
  }
};

// w: contiguous float64 [rows, cats] on the device. Raises random.cpp's error for the first
// bad row (reading the codes synchronises: the error depends on the data).
void check_multinomial_weights(const Tensor& w, int64_t rows, int64_t cats) {
  Tensor codes = ember::empty({rows}, ScalarType::Int64, w->device());
  ReducePlan P;
  P.src = w;
  P.g = ReduceGeom{rows, cats, 1, cats, 1, 0};
  run_reduce<double>("multinomial", P, WeightCheckReducer{reinterpret_cast<int64_t*>(codes->data_ptr())});
  const Tensor h = to_host(codes);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t code = h->data<int64_t>()[r];
    if (code >= 0) {
      const Tensor v = to_host(make_view(w, {}, {}, w->offset() + r * cats + code));
      throw_bad_multinomial_weight(*v->data<double>(), r, code);
    }
    if (code == -2) throw_multinomial_zero_sum(r);
  }
}

// std::partial_sum of each row, a thread per row.
__global__ void row_partial_sums_kernel(const double* w, double* cum, int64_t rows, int64_t cats) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double s = 0;
    for (int64_t k = 0; k < cats; ++k) {
      s = __dadd_rn(s, w[r * cats + k]);
      cum[r * cats + k] = s;
    }
  }
}

__global__ void multinomial_draw_kernel(const double* w, const double* cum, int64_t* out, int64_t rows, int64_t cats,
                                        int64_t samples, uint64_t seed, uint64_t start) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < rows * samples;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = t / samples;
    const double* acc = cum + r * cats;
    const double* row = w + r * cats;
    const double target = __dmul_rn(uniform_double(random_bits(seed, start + static_cast<uint64_t>(t))), acc[cats - 1]);
    int64_t lo = 0, hi = cats;  // upper_bound: the first k with acc[k] > target
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (acc[mid] > target) hi = mid;
      else lo = mid + 1;
    }
    int64_t k = min(lo, cats - 1);
    while (k > 0 && row[k] == 0.0) --k;  // target rounded onto the last cumulative weight
    out[t] = k;
  }
}

struct SortKey {
  uint64_t key;  // a non-negative double's bits (ordered as the double), top bit: zero weight
  int64_t index;
};

__device__ __forceinline__ bool key_before(const SortKey& a, const SortKey& b) {
  return a.key < b.key || (a.key == b.key && a.index < b.index);
}

// keys[r * npad + k] for k < npad; the padding sorts last.
__global__ void multinomial_keys_kernel(const double* w, SortKey* keys, int64_t rows, int64_t cats, int64_t npad,
                                        uint64_t seed, uint64_t start) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < rows * npad;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = t / npad, k = t % npad;
    if (k >= cats) {
      keys[t] = SortKey{~uint64_t(0), k};
      continue;
    }
    const double u = uniform_double(random_bits(seed, start + static_cast<uint64_t>(r * cats + k)));
    const double e = -::log1p(-u);  // an exponential draw, >= 0
    const double v = w[r * cats + k];
    const double key = v > 0 ? __ddiv_rn(e, v) : e;
    uint64_t bits = static_cast<uint64_t>(__double_as_longlong(key));
    if (!(v > 0)) bits |= uint64_t(1) << 63;
    keys[t] = SortKey{bits, k};
  }
}

// The bitonic network over each row of npad (a power of two) keys, ascending: at stage k, the
// pair (i, i + j) (i with bit j clear) is ordered ascending when bit k of i is clear.
__device__ __forceinline__ void bitonic_pair(SortKey& a, SortKey& b, bool ascending) {
  if (key_before(b, a) == ascending) {
    const SortKey t = a;
    a = b;
    b = t;
  }
}

constexpr int kSortSegment = 1024;  // keys a block orders in shared memory (two per thread)

// One global step (k, j), j >= the segment size.
__global__ void bitonic_step_kernel(SortKey* keys, int64_t rows, int64_t npad, int64_t k, int64_t j) {
  const int64_t half = npad / 2;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < rows * half;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = t / half, h = t % half;
    const int64_t i = (h / j) * 2 * j + h % j;
    SortKey* row = keys + r * npad;
    bitonic_pair(row[i], row[i + j], (i & k) == 0);
  }
}

// Within segments of `seg` keys (a power of two dividing npad, at most kSortSegment): every
// stage k <= seg with all its steps (Full), or the steps j < seg of stage k (a merge).
template <bool Full>
__global__ void bitonic_segment_kernel(SortKey* keys, int64_t rows, int64_t npad, int64_t seg, int64_t k) {
  __shared__ SortKey sh[kSortSegment];
  const int64_t segments = rows * npad / seg;
  const int half = static_cast<int>(seg / 2);
  for (int64_t s = blockIdx.x; s < segments; s += gridDim.x) {
    SortKey* p = keys + s * seg;
    const int64_t first = (s * seg) % npad;  // the segment's offset in its row
    for (int64_t x = threadIdx.x; x < seg; x += blockDim.x) sh[x] = p[x];
    __syncthreads();
    auto steps = [&](int64_t kk, int64_t j0) {
      for (int64_t j = j0; j > 0; j >>= 1) {
        if (threadIdx.x < half) {
          const int64_t h = threadIdx.x;
          const int64_t i = (h / j) * 2 * j + h % j;
          bitonic_pair(sh[i], sh[i + j], ((first + i) & kk) == 0);
        }
        __syncthreads();
      }
    };
    if (Full) {
      for (int64_t kk = 2; kk <= seg; kk <<= 1) steps(kk, kk / 2);
    } else {
      steps(k, seg / 2);
    }
    for (int64_t x = threadIdx.x; x < seg; x += blockDim.x) p[x] = sh[x];
    __syncthreads();
  }
}

__global__ void multinomial_take_kernel(const SortKey* keys, int64_t* out, int64_t rows, int64_t npad,
                                        int64_t samples) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < rows * samples;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[t] = keys[(t / samples) * npad + t % samples].index;
  }
}

// Sorts each row of npad keys (a power of two) ascending.
void sort_rows(SortKey* keys, int64_t rows, int64_t npad, cudaStream_t stream) {
  const int64_t seg = std::min<int64_t>(npad, kSortSegment);
  const unsigned grid = grid_for(rows * npad / seg);
  const unsigned threads = static_cast<unsigned>(std::max<int64_t>(seg / 2, 32));
  bitonic_segment_kernel<true><<<grid, threads, 0, stream>>>(keys, rows, npad, seg, 0);
  check_launch("multinomial");
  for (int64_t k = 2 * seg; k <= npad; k <<= 1) {
    for (int64_t j = k / 2; j >= seg; j >>= 1) {
      bitonic_step_kernel<<<blocks_for(rows * npad / 2), kThreads, 0, stream>>>(keys, rows, npad, k, j);
      check_launch("multinomial");
    }
    bitonic_segment_kernel<false><<<grid, threads, 0, stream>>>(keys, rows, npad, seg, k);
    check_launch("multinomial");
  }
}

Tensor multinomial_impl(const Tensor& self, int64_t samples, bool replacement, Generator* generator) {
  const MultinomialMeta M = multinomial_meta(self, samples, replacement);
  const int64_t rows = M.rows, cats = M.cats;
  const Device dev = self->device();
  const Tensor w = contiguous_in(self, ScalarType::Float64);
  check_multinomial_weights(w, rows, cats);
  Tensor res = ember::empty(M.shape, ScalarType::Int64, dev);
  const RandomCounters c = reserve(generator, dev, static_cast<uint64_t>(rows * (replacement ? samples : cats)));
  const double* wp = reinterpret_cast<const double*>(w->data_ptr());
  int64_t* out = reinterpret_cast<int64_t*>(res->data_ptr());
  CurrentDevice guard(dev.index);
  const cudaStream_t stream = stream_of(dev);
  if (replacement) {
    Tensor cum;
    if (cats <= kExactCategories) {
      cum = ember::empty({rows, cats}, ScalarType::Float64, dev);
      row_partial_sums_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(wp, reinterpret_cast<double*>(cum->data_ptr()),
                                                                         rows, cats);
      check_launch("multinomial");
    } else {
      cum = ops::cumsum(w, -1, std::nullopt, Tensor());
    }
    multinomial_draw_kernel<<<blocks_for(rows * samples), kThreads, 0, stream>>>(
        wp, reinterpret_cast<const double*>(cum->data_ptr()), out, rows, cats, samples, c.seed, c.start);
    check_launch("multinomial");
    return res;
  }
  int64_t npad = 1;
  while (npad < cats) npad <<= 1;
  Tensor buffer = ember::empty({rows * npad * static_cast<int64_t>(sizeof(SortKey))}, ScalarType::UInt8, dev);
  SortKey* keys = reinterpret_cast<SortKey*>(buffer->data_ptr());
  multinomial_keys_kernel<<<blocks_for(rows * npad), kThreads, 0, stream>>>(wp, keys, rows, cats, npad, c.seed,
                                                                          c.start);
  check_launch("multinomial");
  sort_rows(keys, rows, npad, stream);
  multinomial_take_kernel<<<blocks_for(rows * samples), kThreads, 0, stream>>>(keys, out, rows, npad, samples);
  check_launch("multinomial");
  return res;
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
  ops::copy(res, host, false, res);
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

Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement, Generator* generator) {
  return multinomial_impl(self, num_samples, replacement, generator);
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
EMBER_REGISTER_CUDA_KERNEL(multinomial);
EMBER_REGISTER_CUDA_KERNEL(arange);
