// CUDA kernels of the random samplers, randperm and multinomial (checks from random_meta.h,
// as the CPU's).
//
// - random: the counter scheme of random_cpu.cpp exactly (generator.h's hash, the same counters
//   for the same elements, the same arithmetic with no fused multiply-adds), so that CUDA
//   and the CPU give the same numbers for the same generator state: bit for bit for rand,
//   uniform_ (up to the CPU's own FMA contraction at its AVX2 level), randint, bernoulli and
//   randperm; randn / normal_ go through log, sqrt, sin and cos, whose CUDA versions may
//   differ from the CPU's in the last bit or two. A call without a generator uses the CUDA
//   device's default generator (cuda_generator), a call with one uses that one.
// - randperm is serial Fisher-Yates: the CPU kernel draws it (from the CUDA generator) and
//   the result is copied over.
// - multinomial: random_cpu.cpp's algorithm and counters (see its section below for where the
//   draws can differ from the CPU's).
#include <cstring>
#include <limits>
#include "ember/backends/cuda/reduce.cuh"
#include "ember/core/generator.h"
#include "ember/ops/random/random_meta.h"

namespace ember::cuda_engine {
namespace {

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
// in [0, 1] (random_cpu.cpp's checked_probabilities).
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
// multinomial: random_cpu.cpp's algorithm on the device, the same counters for the same draws
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

// w: contiguous float64 [rows, cats] on the device. Raises random_cpu.cpp's error for the first
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

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

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

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(randint);
EMBER_REGISTER_CUDA_KERNEL(randint_high);
EMBER_REGISTER_CUDA_KERNEL(randperm);
EMBER_REGISTER_CUDA_KERNEL(normal);
EMBER_REGISTER_CUDA_KERNEL(uniform);
EMBER_REGISTER_CUDA_KERNEL(bernoulli);
EMBER_REGISTER_CUDA_KERNEL(bernoulli_p);
EMBER_REGISTER_CUDA_KERNEL(bernoulli_tensor);
EMBER_REGISTER_CUDA_KERNEL(multinomial);
