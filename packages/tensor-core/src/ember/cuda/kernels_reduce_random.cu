// CUDA kernels of softmax / log_softmax (and their backward), the max/min/argmax/argmin/
// amax/amin reductions, the random samplers and arange. Each mirrors its CPU kernel
// (reduce.cpp, random.cpp, creation.cpp): the same checks and messages, the same dtypes,
// the same NaN rules.
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

namespace ember::cuda_engine {
namespace {

bool on_host(const Tensor& t) { return t && t->device().type == DeviceType::CPU; }

// t on `device`: itself, or a copy of a CPU (0-d) tensor moved there.
Tensor on_device(const Tensor& t, const Device& device) {
  if (!t || t->device() == device) return t;
  Tensor r = ember::empty(t->sizes(), t->dtype(), device);
  ops::copy(r, t, r);
  return r;
}

// A contiguous tensor on t's device with t's values in dtype (t itself when it is one).
Tensor contiguous_as(const Tensor& t, ScalarType dtype) {
  if (t->is_contiguous() && t->dtype() == dtype) return t;
  Tensor r = ember::empty(t->sizes(), dtype, t->device());
  ops::copy(r, t, r);
  return r;
}

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

// O, K, I of a tensor around dim d.
struct DimLayout {
  int64_t O = 1, K = 1, I = 1;
};
DimLayout dim_layout(const Tensor& x, int64_t d) {
  DimLayout L;
  for (int64_t i = 0; i < x->dim(); ++i) {
    if (i < d) L.O *= x->sizes()[i];
    else if (i == d) L.K = x->sizes()[i];
    else L.I *= x->sizes()[i];
  }
  return L;
}

template <typename T, bool Log> void softmax_t(const Tensor& x, const Tensor& res, const DimLayout& L, const char* op) {
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
void softmax_backward_t(const Tensor& g, const Tensor& y, const Tensor& res, const DimLayout& L, const char* op) {
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
  const int64_t d = wrap_dim(dim, self->dim(), op);
  Tensor x = dtype ? contiguous_as(self, *dtype) : self;
  if (x->numel() == 0) return ember::empty(x->sizes(), x->dtype(), x->device());
  if (!is_floating(x->dtype())) {
    throw NotImplementedError(message(op, ": not implemented for dtype ", dtype_name(x->dtype()),
                                      " (pass a floating dtype= to convert the input)"));
  }
  x = contiguous_as(x, x->dtype());
  const DimLayout L = dim_layout(x, self->dim() == 0 ? 0 : d);
  Tensor res = ember::empty(x->sizes(), x->dtype(), x->device());
  dispatch_device_float(x->dtype(), op, [&](auto tag) { softmax_t<decltype(tag), Log>(x, res, L, op); });
  return res;
}

template <bool Log>
Tensor softmax_backward_impl(const char* op, const Tensor& grad_output, const Tensor& output, int64_t dim) {
  if (grad_output->sizes() != output->sizes() || grad_output->dtype() != output->dtype()) {
    throw std::runtime_error(message(op, ": expected grad_output and output of one shape and dtype, got ",
                                     shape_str(grad_output->sizes()), " ", dtype_name(grad_output->dtype()), " and ",
                                     shape_str(output->sizes()), " ", dtype_name(output->dtype())));
  }
  if (!is_floating(output->dtype())) {
    throw NotImplementedError(message(op, ": not implemented for dtype ", dtype_name(output->dtype())));
  }
  const int64_t d = wrap_dim(dim, output->dim(), op);
  const Device dev = on_host(output) ? grad_output->device() : output->device();
  Tensor g = contiguous_as(on_device(grad_output, dev), grad_output->dtype());
  Tensor y = contiguous_as(on_device(output, dev), output->dtype());
  const DimLayout L = dim_layout(y, output->dim() == 0 ? 0 : d);
  Tensor res = ember::empty(output->sizes(), output->dtype(), dev);
  if (res->numel() == 0) return res;
  dispatch_device_float(output->dtype(), op,
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
  R.src = contiguous_as(self->dim() > 0 ? ops::permute(self, perm) : self, self->dtype());
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

std::vector<int64_t> all_dims(int64_t ndim) {
  std::vector<int64_t> d(static_cast<size_t>(ndim));
  for (int64_t i = 0; i < ndim; ++i) d[static_cast<size_t>(i)] = i;
  return d;
}

// max/min/argmax style reductions have no identity: reject empty reduced dims (reduce.cpp).
void check_nonempty(const char* op, const Tensor& self, const std::vector<int64_t>& dims, bool dims_given,
                    bool index_error_when_unspecified) {
  if (self->numel() != 0) return;
  if (!dims_given) {
    std::string m = message(op, "(): Expected reduction dim to be specified for input.numel() == 0.");
    if (index_error_when_unspecified) throw IndexError(m);
    throw std::runtime_error(m + " Specify the reduction dim with the 'dim' argument.");
  }
  for (int64_t d : dims) {
    if (self->sizes()[d] == 0) {
      throw IndexError(message(op, "(): Expected reduction dim ", d, " to have non-zero size."));
    }
  }
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

template <bool Max> Tensor extreme_values(const char* op, const Tensor& self, const std::vector<int64_t>& dims,
                                          bool keepdim, const Tensor& out) {
  const Shape shape = reduced_shape(self->sizes(), dims, keepdim);
  Tensor res = reduce_result(self, out, shape, self->dtype());
  run_arg<Max>(op, rows_of(self, dims), res, Tensor());
  return finish_out(op, out, res);
}

template <bool Max>
std::tuple<Tensor, Tensor> extreme_dim(const char* op, const Tensor& self, int64_t dim, bool keepdim) {
  const int64_t d = wrap_dim(dim, self->dim(), op);
  std::vector<int64_t> dims;
  if (self->dim() > 0) dims.push_back(d);
  check_nonempty(op, self, dims, true, false);
  const Shape shape = reduced_shape(self->sizes(), dims, keepdim);
  Tensor values = ember::empty(shape, self->dtype(), self->device());
  Tensor indices = ember::empty(shape, ScalarType::Int64, self->device());
  run_arg<Max>(op, rows_of(self, dims), values, indices);
  return {values, indices};
}

template <bool Max>
Tensor arg_extreme(const char* op, const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  if (self->dtype() == ScalarType::Bool) throw std::runtime_error(message(op, "(): does not support bool input"));
  std::vector<int64_t> dims;
  if (dim) {
    const int64_t d = wrap_dim(*dim, self->dim(), op);
    if (self->dim() > 0) dims.push_back(d);
  } else {
    dims = all_dims(self->dim());
  }
  check_nonempty(op, self, dims, dim.has_value(), true);
  const Shape shape = reduced_shape(self->sizes(), dims, keepdim);
  Tensor res = reduce_result(self, out, shape, ScalarType::Int64);
  run_arg<Max>(op, rows_of(self, dims), Tensor(), res);
  return finish_out(op, out, res);
}

template <bool Max>
Tensor amax_amin(const char* op, const Tensor& self, const Shape& dim, bool keepdim, const Tensor& out) {
  std::vector<int64_t> dims = reduce_dims(op, dim, self->dim());
  check_nonempty(op, self, dims, !dim.empty(), false);
  return extreme_values<Max>(op, self, dims, keepdim, out);
}

// ---------------------------------------------------------------------------------------------
// random numbers: generator.h's counter scheme, on the device

// random_bits of generator.h, for host and device.
__host__ __device__ __forceinline__ uint64_t bits_at(uint64_t seed, uint64_t counter) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ULL + counter * 0xbf58476d1ce4e5b9ULL + 0x94d049bb133111ebULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  z += seed ^ 0x2545f4914f6cdd1dULL;
  z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdULL;
  z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ULL;
  return z ^ (z >> 33);
}
// generator.h's uniform_double / uniform_float, for host and device.
__host__ __device__ __forceinline__ double unit_double(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}
__host__ __device__ __forceinline__ float unit_float(uint64_t bits) {
  return static_cast<float>(bits >> 40) * 0x1.0p-24f;
}

constexpr double kTwoPi = 6.283185307179586476925286766559;

// The host (CPU kernel) type of a device storage type.
template <typename T> struct HostOf { using type = T; };
template <> struct HostOf<__half> { using type = Half; };
template <> struct HostOf<__nv_bfloat16> { using type = BFloat16; };

// A host value of type HostOf<T> as the device type's bits.
template <typename T, typename H> T device_bits(H h) {
  static_assert(sizeof(T) == sizeof(H), "same size");
  T v;
  std::memcpy(static_cast<void*>(&v), static_cast<const void*>(&h), sizeof(T));
  return v;
}

// The next representable value below v (random.cpp's step_down).
template <typename T> T step_down(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    T r = v;
    if ((r.bits & 0x7fffu) == 0) {
      r.bits = 0x8001u;
    } else if (r.bits & 0x8000u) {
      r.bits = static_cast<uint16_t>(r.bits + 1);
    } else {
      r.bits = static_cast<uint16_t>(r.bits - 1);
    }
    return r;
  } else {
    return std::nextafter(v, -std::numeric_limits<T>::infinity());
  }
}

// The seed and the first of n freshly reserved counters.
struct Counters {
  uint64_t seed, start;
};
Counters reserve(Generator& g, uint64_t n) {
  const uint64_t start = g.reserve(n);
  return {g.initial_seed(), start};
}

// The generator a call on device uses: the one given, else the device's default.
Generator& generator_for(Generator* generator, const Device& device) {
  return generator ? *generator : cuda_generator(device.index);
}

void check_floating(const char* op, ScalarType t) {
  if (!is_floating(t)) {
    throw NotImplementedError(message("\"", op, "\" not implemented for '", scalar_type_name(t), "'"));
  }
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
    const uint64_t bits = bits_at(seed, start + static_cast<uint64_t>(i));
    const double u = std::is_same_v<T, double> ? unit_double(bits) : static_cast<double>(unit_float(bits));
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
    const double u1 = 1.0 - unit_double(bits_at(seed, k));  // (0, 1]: log is finite
    const double r = ::sqrt(-2.0 * ::log(u1));
    double z0, z1;
    if constexpr (std::is_same_v<T, double>) {
      const double theta = kTwoPi * unit_double(bits_at(seed, k + 1));
      z0 = r * ::cos(theta);
      z1 = r * ::sin(theta);
    } else {
      const float theta = static_cast<float>(kTwoPi) * unit_float(bits_at(seed, k + 1));
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
    const uint64_t bits = bits_at(seed, start + static_cast<uint64_t>(i));
    const uint64_t k = __umul64hi(bits, range);
    p[i] = cvt<T>(static_cast<int64_t>(static_cast<uint64_t>(low) + k));
  }
}

// p[i] = 1 when a 53-bit uniform is below the probability (probs[i], or prob when probs is null).
template <typename T>
__global__ void bernoulli_kernel(T* p, int64_t n, uint64_t seed, uint64_t start, const double* probs, double prob) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double u = unit_double(bits_at(seed, start + static_cast<uint64_t>(i)));
    p[i] = cvt<T>(static_cast<int64_t>(u < (probs ? probs[i] : prob)));
  }
}

void fill_uniform(const Tensor& t, Generator* generator, double from, double to) {
  fill_into(t, [&](const Tensor& r) {
    const Device dev = r->device();
    const Counters c = reserve(generator_for(generator, dev), static_cast<uint64_t>(r->numel()));
    dispatch_float(r->dtype(), "uniform", [&](auto host_tag) {
      using H = decltype(host_tag);
      using T = std::conditional_t<std::is_same_v<H, Half>, __half,
                                   std::conditional_t<std::is_same_v<H, BFloat16>, __nv_bfloat16, H>>;
      // a value that rounds up to `to` becomes the largest one below it (when that is >= from)
      const H top = step_down(convert<H>(to));
      const double span = to - from;
      const bool clamp = span > 0 && static_cast<double>(static_cast<::ember::opmath_t<H>>(top)) >= from;
      if (r->numel() == 0) return;
      CurrentDevice guard(dev.index);
      uniform_kernel<T><<<blocks_for(r->numel()), kThreads, 0, stream_of(dev)>>>(
          reinterpret_cast<T*>(r->data_ptr()), r->numel(), c.seed, c.start, from, span, to, clamp,
          device_bits<T>(top));
      check_launch("uniform");
    });
  });
}

void fill_normal(const Tensor& t, Generator* generator, double mean, double std) {
  fill_into(t, [&](const Tensor& r) {
    const Device dev = r->device();
    const uint64_t n = static_cast<uint64_t>(r->numel());
    const Counters c = reserve(generator_for(generator, dev), n + (n & 1));
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
    const Counters c = reserve(generator_for(generator, dev), static_cast<uint64_t>(n));
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
  if (p->dtype() == ScalarType::Bool || !is_floating(p->dtype())) {
    throw NotImplementedError(message("\"", op, "\" not implemented for '", scalar_type_name(p->dtype()),
                                      "' probabilities"));
  }
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
    const double v = *to_host(make_view(probs, {}, {}, probs->offset() + i))->data<double>();
    throw std::runtime_error(message(op, ": expected all probabilities p to satisfy 0 <= p <= 1, but got ", v,
                                     " at flat index ", i));
  }
  return probs;
}

// The range of integers a dtype holds exactly: PyTorch's bounds check for random_(from, to).
void check_random_bounds(ScalarType t, int64_t low, int64_t high) {
  double lo, hi;  // inclusive limits
  switch (t) {
    case ScalarType::Bool: lo = 0; hi = 1; break;
    case ScalarType::UInt8: lo = 0; hi = 255; break;
    case ScalarType::Int8: lo = -128; hi = 127; break;
    case ScalarType::Int16: lo = -32768; hi = 32767; break;
    case ScalarType::Int32: lo = -2147483648.0; hi = 2147483647.0; break;
    case ScalarType::Int64: return;
    case ScalarType::Float16: lo = -2048; hi = 2048; break;
    case ScalarType::BFloat16: lo = -256; hi = 256; break;
    case ScalarType::Float32: lo = -16777216.0; hi = 16777216.0; break;
    case ScalarType::Float64: lo = -9007199254740992.0; hi = 9007199254740992.0; break;
    default: throw_dtype_unsupported("randint", t, "any");
  }
  if (static_cast<double>(low) < lo || static_cast<double>(low) > hi) {
    throw std::runtime_error(message("randint: from is out of bounds for ", dtype_name(t), " (from=", low, ")"));
  }
  if (static_cast<double>(high - 1) < lo || static_cast<double>(high - 1) > hi) {
    throw std::runtime_error(message("randint: to - 1 is out of bounds for ", dtype_name(t), " (to=", high, ")"));
  }
}

// The device a creation op makes its result on: device= (made concrete), else out's.
Device creation_device(const std::optional<Device>& device, const Tensor& out) {
  if (device) return concrete_device(*device);
  if (out) return out->device();
  return Device{DeviceType::CUDA, cuda_hooks().current_device()};
}

// The tensor a creation op fills: out itself when it is on that device, contiguous, with the
// shape and dtype (random.cpp's prepare_out), else a fresh one that finish_out copies into out.
Tensor creation_result(const Shape& size, ScalarType dtype, const std::optional<Device>& device, const Tensor& out) {
  const Device dev = creation_device(device, out);
  if (out && out->device() == dev && out->sizes() == size && out->dtype() == dtype && out->is_contiguous()) return out;
  return ember::empty(size, dtype, dev);
}

// random.cpp's create: the result filled, moved into out, requires_grad set.
template <typename Fill>
Tensor create(const char* op, const Shape& size, ScalarType dtype, const std::optional<Device>& device,
              bool requires_grad, const Tensor& out, Fill fill) {
  Tensor res = creation_result(size, dtype, device, out);
  fill(res);
  res = finish_out(op, out, res);
  if (requires_grad) set_requires_grad(res, true);
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

Tensor max_all(const Tensor& self) {
  check_nonempty("max", self, {}, false, false);
  return extreme_values<true>("max", self, all_dims(self->dim()), false, Tensor());
}
Tensor min_all(const Tensor& self) {
  check_nonempty("min", self, {}, false, false);
  return extreme_values<false>("min", self, all_dims(self->dim()), false, Tensor());
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

Tensor rand(const Shape& size, Generator* generator, std::optional<ScalarType> dtype, std::optional<Device> device,
            bool requires_grad, const Tensor& out) {
  const ScalarType dt = dtype.value_or(out ? out->dtype() : default_float_dtype());
  check_floating("rand", dt);
  return create("rand", size, dt, device, requires_grad, out,
                [&](const Tensor& r) { fill_uniform(r, generator, 0.0, 1.0); });
}

Tensor randn(const Shape& size, Generator* generator, std::optional<ScalarType> dtype, std::optional<Device> device,
             bool requires_grad, const Tensor& out) {
  const ScalarType dt = dtype.value_or(out ? out->dtype() : default_float_dtype());
  check_floating("randn", dt);
  return create("randn", size, dt, device, requires_grad, out,
                [&](const Tensor& r) { fill_normal(r, generator, 0.0, 1.0); });
}



Tensor randint(int64_t low, int64_t high, const Shape& size, Generator* generator, std::optional<ScalarType> dtype,
               std::optional<Device> device, bool requires_grad) {
  if (low >= high) {
    throw std::runtime_error(
        message("random_ expects 'from' to be less than 'to', but got from=", low, " >= to=", high));
  }
  const ScalarType dt = dtype.value_or(ScalarType::Int64);
  check_random_bounds(dt, low, high);
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  return create("randint", size, dt, device, requires_grad, Tensor(), [&](const Tensor& r) {
    const Device dev = r->device();
    const int64_t n = r->numel();
    const Counters c = reserve(generator_for(generator, dev), static_cast<uint64_t>(n));
    dispatch_device_type(dt, "randint", [&](auto tag) {
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
  if (!(std >= 0.0)) throw std::runtime_error(message("normal expects std >= 0.0, but found std ", std));
  Tensor target = out ? out : ember::empty(self->sizes(), self->dtype(), self->device());
  check_floating("normal", target->dtype());
  fill_normal(target, generator, mean, std);
  return target;
}

Tensor uniform(const Tensor& self, double from, double to, Generator* generator, const Tensor& out) {
  if (!(from <= to)) {
    throw std::runtime_error(
        message("uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to));
  }
  Tensor target = out ? out : ember::empty(self->sizes(), self->dtype(), self->device());
  check_floating("uniform", target->dtype());
  fill_uniform(target, generator, from, to);
  return target;
}

Tensor bernoulli_p(const Tensor& self, double p, Generator* generator, const Tensor& out) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw std::runtime_error(message("bernoulli_ expects p to be in [0, 1], but got p=", p));
  }
  Tensor target = out ? out : ember::empty(self->sizes(), self->dtype(), self->device());
  fill_bernoulli(target, generator, Tensor(), p);
  return target;
}

Tensor bernoulli(const Tensor& self, std::optional<double> p, Generator* generator) {
  if (p) return bernoulli_p(self, *p, generator, Tensor());  // a new tensor shaped like self
  check_floating("bernoulli", self->dtype());
  Tensor probs = checked_probabilities("bernoulli", self, self->sizes(), self->device());
  Tensor res = ember::empty(self->sizes(), self->dtype(), self->device());
  fill_bernoulli(res, generator, probs, 0.0);
  return res;
}

Tensor bernoulli_tensor(const Tensor& self, const Tensor& p, Generator* generator, const Tensor& out) {
  const Device dev = on_host(out ? out : self) ? p->device() : (out ? out : self)->device();
  Tensor target = out ? out : ember::empty(self->sizes(), self->dtype(), dev);
  Tensor probs = checked_probabilities("bernoulli_", p, target->sizes(), target->device());
  fill_bernoulli(target, generator, probs, 0.0);
  return target;
}

Tensor arange(const Scalar& start, std::optional<Scalar> end, const Scalar& step, std::optional<ScalarType> dtype,
              std::optional<Device> device, bool requires_grad, const Tensor& out) {
  Scalar lo = end ? start : Scalar::from_int(0);
  Scalar hi = end ? *end : start;
  const bool all_int = !lo.is_float() && !hi.is_float() && !step.is_float();
  ScalarType t = dtype.value_or(out ? out->dtype() : (all_int ? ScalarType::Int64 : default_float_dtype()));
  const double s = step.to_double(), a = lo.to_double(), b = hi.to_double();
  if (s == 0) throw std::runtime_error("arange: step must be nonzero");
  if (!std::isfinite(a) || !std::isfinite(b)) {
    throw std::runtime_error("arange: unsupported range: start and end must be finite");
  }
  if ((s > 0 && b < a) || (s < 0 && b > a)) {
    throw std::runtime_error(message("arange: upper bound and larger bound inconsistent with step sign (start=", a,
                                     ", end=", b, ", step=", s, ")"));
  }
  int64_t n;
  if (all_int) {
    const __int128 si = step.to_int(), d = static_cast<__int128>(hi.to_int()) - lo.to_int();
    __int128 n128 = si > 0 ? (d + si - 1) / si : (d + si + 1) / si;
    if (n128 > (__int128(1) << 62)) throw std::runtime_error("arange: the range has too many elements");
    n = static_cast<int64_t>(n128);
  } else {
    const double nd = std::ceil((b - a) / s);
    if (!(nd < 4.6e18)) throw std::runtime_error("arange: the range has too many elements");
    n = static_cast<int64_t>(nd);
  }
  n = std::max<int64_t>(n, 0);
  const int64_t a0 = lo.to_int(), si = step.to_int();
  Tensor res = creation_result({n}, t, device, out);
  if (t == ScalarType::Bool) throw_dtype_unsupported("arange", t, "numeric");
  dispatch_device_type(t, "arange", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      if (n == 0) return;
      const Device dev = res->device();
      CurrentDevice guard(dev.index);
      arange_kernel<T><<<blocks_for(n), kThreads, 0, stream_of(dev)>>>(reinterpret_cast<T*>(res->data_ptr()), n,
                                                                        all_int, a0, si, a, s);
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
