// CUDA kernels of cat, index_select, gather, scatter, scatter_add, index_add, index_put, _index,
// embedding (and its dense backward), nll_loss and native_layer_norm (and its backward). The
// argument checks, dim wrapping and result shapes and dtypes are the meta functions the CPU
// kernels (shape.cpp, index.cpp, nn_ops.cpp, norms.cpp) call too (index_nn_meta.h,
// index_put_meta.h); what is here is the compute.
//
// Indices are checked on the device before anything is written (a kernel finds the first
// bad one in flat order, whose value the error message names); reading that answer waits
// for the device, as reading any value does.
//
// - scatter / scatter_add / index_add: one thread per position of the other dims walks the
//   scattered dim in order, as one CPU thread does: the last write wins, and sums are added
//   in the CPU's order (with no fused multiply-add), so the results equal the CPU's.
// - embedding_dense_backward groups the positions by index on the host (the CPU kernel's
//   counting sort, from a copy of the indices) and sums each weight row's gradients on the
//   device in that same order: the result equals the CPU's bit for bit.
// - index_put and _index (its read side, a gather of the same positions) check all their
//   index tensors with one wait (each tensor's first bad position found on the device, the
//   answers read back together; bool masks were already turned into indices by nonzero,
//   which waits too). Without accumulate, repeated targets get one of their values (which
//   one is unspecified, as on the CPU and in PyTorch). With accumulate, repeated targets add
//   up with atomics (compare-and-swap on the enclosing 32-bit word for the 1- and 2-byte
//   types), each addition rounded as on the CPU, but in an unspecified order: floating sums
//   may differ from the CPU's in the last bits.
// - nll_loss sums its terms in double over the CPU's blocks of 4096, in the same order and
//   without fused multiply-adds: the result equals the CPU's bit for bit.
// - native_layer_norm(_backward) accumulate the row statistics and the parameter gradients
//   in double (the CPU uses float lanes combined in double): equal up to rounding.
#include <algorithm>
#include <cstring>
#include <vector>

#include "ember/cuda/elementwise.cuh"
#include "ember/index_nn_meta.h"
#include "ember/index_put_meta.h"
#include "ember/indexing.h"  // scalar_of, check_value_fits

namespace ember::cuda_engine {
namespace {

// The value of element i (flat, contiguous t) on the host.
template <typename H> H value_at(const Tensor& t, int64_t i) {
  return *to_host(make_view(t, {}, {}, t->offset() + i))->data<H>();
}

// The first i (flat) with p[i] outside [lo, hi) and p[i] != skip (when has_skip), or -1.
__global__ void first_out_of_range_kernel(const int64_t* p, int64_t n, int64_t lo, int64_t hi, bool has_skip,
                                          int64_t skip, unsigned long long* first) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t v = p[i];
    if ((v < lo || v >= hi) && !(has_skip && v == skip)) atomicMin(first, static_cast<unsigned long long>(i));
  }
}

int64_t first_out_of_range(const char* op, const Tensor& idx, int64_t lo, int64_t hi, bool has_skip = false,
                           int64_t skip = 0) {
  const int64_t n = idx->numel();
  if (n == 0) return -1;
  const Device dev = idx->device();
  Tensor first = ember::empty({}, ScalarType::Int64, dev);
  {
    CurrentDevice guard(dev.index);
    const cudaError_t err = cudaMemsetAsync(first->data_ptr(), 0xff, sizeof(int64_t), stream_of(dev));
    if (err != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error(message(op, ": cudaMemsetAsync failed: ", cudaGetErrorString(err)));
    }
    first_out_of_range_kernel<<<blocks_for(n), kThreads, 0, stream_of(dev)>>>(
        reinterpret_cast<const int64_t*>(idx->data_ptr()), n, lo, hi, has_skip, skip,
        reinterpret_cast<unsigned long long*>(first->data_ptr()));
    check_launch(op);
  }
  return *to_host(first)->data<int64_t>();
}

// An index tensor as contiguous int64 on device (int32 widened, a CPU 0-d one moved).
Tensor index_int64(const Tensor& idx, const Device& device) {
  return contiguous_in(to_device(idx, device), ScalarType::Int64);
}

// out[i] = *(src_i + idx[i] * step) over out's shape; src and idx are views of out's sizes
// (src's indexed dim with stride 0); step in bytes. Indices already checked.
template <typename U>
void gather_t(const char* op, const Tensor& out, const Tensor& src, const Tensor& idx, int64_t step) {
  launch_elementwise<3>(op, out->device(), out->sizes(), {out.get(), src.get(), idx.get()},
                        [step] __device__(char** base, const int64_t* off) {
                          const int64_t k = *reinterpret_cast<const int64_t*>(base[2] + off[2]);
                          *reinterpret_cast<U*>(base[0] + off[0]) =
                              *reinterpret_cast<const U*>(base[1] + off[1] + k * step);
                        });
}

void gather_bytes(const char* op, const Tensor& out, const Tensor& src, const Tensor& idx, int64_t step) {
  dispatch_itemsize(out->itemsize(), [&](auto tag) { gather_t<decltype(tag)>(op, out, src, idx, step); });
}

// ---------------------------------------------------------------------------------------------
// scatter, scatter_add, index_add: one thread per position of the other dims, walking the
// scattered dim in increasing order, as index.cpp's scatter_loop does on one CPU thread. The
// last write wins and sums are taken in the CPU's order: the results equal the CPU's.

// f(dst[col, idx[col, i]], src[col, i]) (as byte pointers) for i = 0 .. n-1 in order, one
// thread per column: the positions of `shape` with the scattered dim d set aside. dst is
// viewed with d's stride zeroed, step is the byte distance of one position along d in dst.
template <typename F>
void scatter_columns(const char* op, const Shape& shape, int64_t d, const Tensor& dst, const Tensor& idx,
                     const Tensor& src, int64_t step, F f) {
  const size_t ud = static_cast<size_t>(d);
  Shape cs = shape;  // the operands seen over shape with d of size 1: one element per column
  cs[ud] = 1;
  auto column = [&](const Tensor& t) { return make_view(t, cs, t->strides(), t->offset()); };
  Tensor cd = column(dst), ci = column(idx), cv = column(src);
  const int64_t n = shape[ud];
  const int64_t ids = idx->strides()[ud] * static_cast<int64_t>(sizeof(int64_t));
  const int64_t sds = src->strides()[ud] * static_cast<int64_t>(src->itemsize());
  launch_elementwise<3>(op, dst->device(), cs, {cd.get(), ci.get(), cv.get()},
                        [n, ids, sds, step, f] __device__(char** base, const int64_t* off) {
                          for (int64_t i = 0; i < n; ++i) {
                            const int64_t k = *reinterpret_cast<const int64_t*>(base[1] + off[1] + i * ids);
                            f(base[0] + off[0] + k * step, base[2] + off[2] + i * sds);
                          }
                        });
}

// *p = *v (or = value when has_value: v is not read).
template <typename U> struct CopyTo {
  bool has_value;
  U value;
  __device__ void operator()(char* p, const char* v) const {
    *reinterpret_cast<U*>(p) = has_value ? value : *reinterpret_cast<const U*>(v);
  }
};

// a + b and a * b rounded once each (no fused multiply-add: the CPU's arithmetic).
template <typename A> __device__ __forceinline__ A add_rn(A a, A b) {
  if constexpr (std::is_same_v<A, float>) return __fadd_rn(a, b);
  else if constexpr (std::is_same_v<A, double>) return __dadd_rn(a, b);
  else return static_cast<A>(a + b);
}
template <typename A> __device__ __forceinline__ A mul_rn(A a, A b) {
  if constexpr (std::is_same_v<A, float>) return __fmul_rn(a, b);
  else if constexpr (std::is_same_v<A, double>) return __dmul_rn(a, b);
  else return static_cast<A>(a * b);
}

// *p += al * *v (index.cpp's add_scaled; *p + *v when unit).
template <typename T> struct AddScaled {
  opmath_t<T> al;
  bool unit;
  __device__ void operator()(char* pp, const char* vp) const {
    using A = opmath_t<T>;
    T* p = reinterpret_cast<T*>(pp);
    const A v = cvt<A>(*reinterpret_cast<const T*>(vp));
    if constexpr (std::is_same_v<T, bool>) {
      *p = *p || (v && al);
    } else {
      const A t = cvt<A>(*p);
      *p = cvt<T>(unit ? add_rn(t, v) : add_rn(t, mul_rn(al, v)));
    }
  }
};

// What scatter and scatter_add write through: the indices (contiguous int64 on res's device,
// at least 1-d), res (at least 1-d) seen over their shape with dim d's stride zeroed, the
// byte distance of one position along d in res and the bound of the indices.
struct ScatterInto {
  Tensor ix, dst;
  int64_t step, size;
};

ScatterInto scatter_into(const Tensor& res, const Tensor& index, int64_t d) {
  const Tensor r1 = at_least_1d(res);
  const size_t ud = static_cast<size_t>(d);
  Tensor ix = index_int64(at_least_1d(index), res->device());
  Tensor dst = restride(r1, ix->sizes(), d);
  return {ix, dst, r1->strides()[ud] * static_cast<int64_t>(r1->itemsize()), r1->sizes()[ud]};
}

// src (moved to the device) seen over the indices' shape; a copy when it shares t.dst's storage.
Tensor scatter_source(const Tensor& src, const ScatterInto& t) {
  Tensor s1 = at_least_1d(to_device(src, t.dst->device()));
  Tensor sv = restride(s1, t.ix->sizes(), -1);
  return s1->storage() == t.dst->storage() ? ops::clone(sv) : sv;
}

void scatter_accumulate(const char* op, const Shape& shape, int64_t d, const Tensor& dst, const Tensor& idx,
                        const Tensor& src, int64_t step, const Scalar& alpha) {
  if (shape_numel(shape) == 0) return;
  dispatch_all(dst->dtype(), op, [&](auto host_tag) {
    using H = decltype(host_tag);
    using T = std::conditional_t<std::is_same_v<H, Half>, __half,
                                 std::conditional_t<std::is_same_v<H, BFloat16>, __nv_bfloat16, H>>;
    const auto al = static_cast<opmath_t<T>>(alpha.to<::ember::opmath_t<H>>());
    scatter_columns(op, shape, d, dst, idx, src, step, AddScaled<T>{al, alpha.to_double() == 1.0});
  });
}

int row_threads(int64_t n) {
  if (n >= 256) return 256;
  return static_cast<int>(std::max<int64_t>(32, (n + 31) / 32 * 32));
}
int row_blocks(int64_t rows) { return static_cast<int>(std::min<int64_t>(std::max<int64_t>(rows, 1), 1 << 20)); }

// ---------------------------------------------------------------------------------------------
// embedding

// out[i * D + j] = w[idx[i] * D + j] (elements moved as U).
template <typename U> __global__ void embedding_kernel(const U* w, const int64_t* idx, U* out, int64_t n, int64_t D) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n * D;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[e] = w[idx[e / D] * D + e % D];
  }
}

// res[r, j] = sum over the positions p of row r (in order[start[r]..start[r+1]), increasing
// p) of g[p, j], in opmath; zero for padding_idx; divided by the count when scaling.
template <typename T>
__global__ void embedding_backward_kernel(const T* g, const int64_t* order, const int64_t* start, T* res,
                                          int64_t rows, int64_t D, int64_t padding_idx, bool scale) {
  using A = opmath_t<T>;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < rows * D;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = e / D, j = e % D;
    A acc = A(0);
    if (r != padding_idx) {
      const int64_t k0 = start[r], k1 = start[r + 1];
      for (int64_t k = k0; k < k1; ++k) acc += cvt<A>(g[order[k] * D + j]);
      const int64_t count = k1 - k0;
      if (scale && count > 1) acc /= static_cast<A>(count);
    }
    res[e] = cvt<T>(acc);
  }
}

// A host int64 vector as a tensor on device.
Tensor upload(const std::vector<int64_t>& v, const Device& device) {
  Tensor h = ember::empty({static_cast<int64_t>(v.size())}, ScalarType::Int64);
  if (!v.empty()) std::memcpy(h->data_ptr(), v.data(), v.size() * sizeof(int64_t));
  Tensor d = ember::empty(h->sizes(), ScalarType::Int64, device);
  ops::copy(d, h, false, d);
  return d;
}

// ---------------------------------------------------------------------------------------------
// nll_loss

// term[i] = -w[c] * x[n, c, s] (0 for ignore_index) and its weight, in double.
template <typename X>
__global__ void nll_terms_kernel(const X* x, const int64_t* t, const double* w, int64_t T, int64_t C, int64_t S,
                                 int64_t ignore_index, double* terms, double* wts, X* out) {
  using A = opmath_t<X>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < T;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = t[i];
    double v = 0.0, wt = 0.0;
    if (c != ignore_index) {
      const int64_t n = i / S, s = i % S;
      wt = w ? w[c] : 1.0;
      v = __dmul_rn(-wt, static_cast<double>(cvt<A>(x[(n * C + c) * S + s])));
    }
    if (out) {
      out[i] = cvt<X>(cvt<A>(v));
    } else {
      terms[i] = v;
      wts[i] = wt;
    }
  }
}

// Serial sums of each block of kNllLossBlock terms (and weights), in order.
__global__ void nll_block_sums_kernel(const double* terms, const double* wts, int64_t T, int64_t blocks, double* sums,
                                      double* wsums) {
  for (int64_t b = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; b < blocks;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double s = 0, ws = 0;
    const int64_t e = min(T, (b + 1) * kNllLossBlock);
    for (int64_t i = b * kNllLossBlock; i < e; ++i) {
      s = __dadd_rn(s, terms[i]);
      ws = __dadd_rn(ws, wts[i]);
    }
    sums[b] = s;
    wsums[b] = ws;
  }
}

template <typename X>
__global__ void nll_total_kernel(const double* sums, const double* wsums, int64_t blocks, bool sum_only, X* out) {
  using A = opmath_t<X>;
  double total = 0, total_w = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    total = __dadd_rn(total, sums[b]);
    total_w = __dadd_rn(total_w, wsums[b]);
  }
  const double res = sum_only ? total : __ddiv_rn(total, total_w);  // mean over nothing: NaN
  out[0] = cvt<X>(cvt<A>(res));
}

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
    const A a = static_cast<A>(rs);
    if (!w && !b) {
      const A sh_ = static_cast<A>(-mu * rs);
      for (int64_t k = threadIdx.x; k < K; k += blockDim.x) dst[k] = cvt<T>(cvt<A>(row[k]) * a + sh_);
    } else {
      const A m = static_cast<A>(mu);
      for (int64_t k = threadIdx.x; k < K; k += blockDim.x) {
        A v = (cvt<A>(row[k]) - m) * a;
        if (w) v = v * w[k];
        if (b) v = v + b[k];
        dst[k] = cvt<T>(v);
      }
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

// ---------------------------------------------------------------------------------------------
// index_put

// *p += v as index.cpp's add_scaled does (in opmath, rounded once; bool: or), atomically.
template <typename T> __device__ __forceinline__ T add_opmath(T a, T b) {
  using A = opmath_t<T>;
  return cvt<T>(static_cast<A>(add_rn(cvt<A>(a), cvt<A>(b))));
}

template <typename T> __device__ void atomic_accumulate(T* p, T v) {
  if constexpr (std::is_same_v<T, bool>) {
    if (v) *p = true;  // every writer stores the same byte
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t>) {
    atomicAdd(p, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {  // 1- and 2-byte types: compare-and-swap on the aligned 32-bit word holding *p
    static_assert(sizeof(T) == 1 || sizeof(T) == 2, "unexpected element size");
    using U = std::conditional_t<sizeof(T) == 1, uint8_t, uint16_t>;
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    unsigned int* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t(3));
    const unsigned int shift = static_cast<unsigned int>(addr & 3) * 8;
    const unsigned int mask = (sizeof(T) == 1 ? 0xFFu : 0xFFFFu) << shift;
    unsigned int old = *word, assumed;
    do {
      assumed = old;
      const U bits = static_cast<U>((assumed & mask) >> shift);
      T cur;
      memcpy(&cur, &bits, sizeof(T));
      const T sum = add_opmath(cur, v);
      U nb;
      memcpy(&nb, &sum, sizeof(T));
      old = atomicCAS(word, assumed, (assumed & ~mask) | (static_cast<unsigned int>(nb) << shift));
    } while (old != assumed);
  }
}

// Operands over the indexing result's shape: 0 the target (zero strides on the index dims),
// 1 the element offsets of the index positions, 2 the values. step: the target's itemsize.
template <typename U> struct PutValue {
  int64_t step;
  __device__ void operator()(char** base, const int64_t* off) const {
    const int64_t k = *reinterpret_cast<const int64_t*>(base[1] + off[1]);
    *reinterpret_cast<U*>(base[0] + off[0] + k * step) = *reinterpret_cast<const U*>(base[2] + off[2]);
  }
};
template <typename T> struct AccumulateValue {
  int64_t step;
  __device__ void operator()(char** base, const int64_t* off) const {
    const int64_t k = *reinterpret_cast<const int64_t*>(base[1] + off[1]);
    atomic_accumulate(reinterpret_cast<T*>(base[0] + off[0] + k * step), *reinterpret_cast<const T*>(base[2] + off[2]));
  }
};

// off += (v < 0 ? v + size : v) * stride (operand 0 the offsets, 1 an index tensor).
struct AddIndexOffset {
  int64_t size, stride;
  __device__ void operator()(char** base, const int64_t* off) const {
    int64_t v = *reinterpret_cast<const int64_t*>(base[1] + off[1]);
    if (v < 0) v += size;
    *reinterpret_cast<int64_t*>(base[0] + off[0]) += v * stride;
  }
};

// The element offsets into target of the broadcast index positions (int64 of shape A.B),
// after checking every index value against its dim (one wait for the device, then the CPU's
// error for the first bad value of the first dim that has one).
Tensor advanced_offsets(const char* op, const Tensor& target, const std::vector<Tensor>& adv, const AdvancedMeta& A) {
  const Device dev = target->device();
  Tensor off = ember::empty(A.B, ScalarType::Int64, dev);
  ops::zero(off, off);
  const size_t npos = A.pos.size();
  std::vector<Tensor> ixs;
  Tensor firsts = ember::empty({static_cast<int64_t>(npos)}, ScalarType::Int64, dev);
  {
    CurrentDevice guard(dev.index);
    cudaStream_t stream = stream_of(dev);
    const cudaError_t err = cudaMemsetAsync(firsts->data_ptr(), 0xff, npos * sizeof(int64_t), stream);
    if (err != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error(message(op, ": cudaMemsetAsync failed: ", cudaGetErrorString(err)));
    }
    for (size_t j = 0; j < npos; ++j) {
      ixs.push_back(index_int64(adv[static_cast<size_t>(A.pos[j])], dev));
      const int64_t n = ixs[j]->numel();
      if (n == 0) continue;
      const int64_t size = target->sizes()[static_cast<size_t>(A.pos[j])];
      first_out_of_range_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
          reinterpret_cast<const int64_t*>(ixs[j]->data_ptr()), n, -size, size, false, 0,
          reinterpret_cast<unsigned long long*>(firsts->data_ptr()) + j);
      check_launch(op);
    }
  }
  const Tensor h = to_host(firsts);
  for (size_t j = 0; j < npos; ++j) {
    const int64_t bad = h->data<int64_t>()[j];
    if (bad < 0) continue;
    const int64_t d = A.pos[j];
    throw_advanced_index_out_of_bounds(value_at<int64_t>(ixs[j], bad), d, target->sizes()[static_cast<size_t>(d)]);
  }
  for (size_t j = 0; j < npos; ++j) {
    const size_t d = static_cast<size_t>(A.pos[j]);
    const Tensor ex = expand_to(ixs[j], A.B, "index");
    launch_elementwise<2>(op, dev, A.B, {off.get(), ex.get()}, AddIndexOffset{target->sizes()[d], target->strides()[d]});
  }
  return off;
}

// What index_put writes through and _index reads through, over the indexing result's shape:
// target with zero strides on the index dims, and the element offsets of the index positions
// (null when the result is empty: like the CPU, index values are only checked when some
// element is read or written). Element p is at target's data + its offset + offsets[p].
struct AdvancedOperands {
  Tensor target, offsets;
};

AdvancedOperands advanced_operands(const char* op, const Tensor& target, const std::vector<Tensor>& adv,
                                   const AdvancedMeta& A) {
  AdvancedOperands r;
  r.target = make_view(target, A.shape, A.src_strides, target->offset());
  if (shape_numel(A.shape) > 0) {
    const Tensor off = advanced_offsets(op, target, adv, A);
    r.offsets = make_view(off, A.shape, A.off_strides, off->offset());
  }
  return r;
}

// index_put's and _index's error for a CPU (0-d) self with `what` (index tensors, values) on a
// device.
[[noreturn]] void throw_indices_on_device(const char* op, const char* what, const Tensor& self) {
  throw std::runtime_error(message(op, ": ", what, " should be either on cpu or on the same device as the indexed "
                                   "tensor (", self->device().str(), ")"));
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out) {
  const CatMeta m = cat_meta(tensors, dim, out);
  const int64_t d = m.dim;
  // out's device, else the first input's that is not on the host (CPU 0-d tensors may join)
  Device device = out ? out->device() : Device{};
  for (size_t i = 0; !out && i < tensors.size(); ++i) {
    if (!is_on_cpu(tensors[i])) {
      device = tensors[i]->device();
      break;
    }
  }
  // write straight into out when it fits and does not alias an input
  Tensor res = cat_result(tensors, out, m, device);
  int64_t offset = 0;
  for (const Tensor* tp : m.used) {
    const Tensor& t = *tp;
    const int64_t len = t->sizes()[static_cast<size_t>(d)];
    if (len == 0) continue;
    Shape sz = res->sizes();
    sz[static_cast<size_t>(d)] = len;
    const int64_t start = res->offset() + offset * res->strides()[static_cast<size_t>(d)];
    Tensor slot = make_view(res, std::move(sz), res->strides(), start);
    ops::copy(slot, t, false, slot);
    offset += len;
  }
  return finish_out("cat", out, res);
}

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  const int64_t d = gather_meta(self, dim, index, out);
  const Device dev = is_on_cpu(self) ? index->device() : self->device();
  Tensor res = out_or_fresh(out, index->sizes(), self->dtype(), dev, {&self, &index});
  if (index->numel() > 0) {
    Tensor s1 = at_least_1d(to_device(self, dev));
    Tensor ix = index_int64(at_least_1d(index), dev);
    const int64_t size = s1->sizes()[static_cast<size_t>(d)];
    const int64_t bad = first_out_of_range("gather", ix, 0, size);
    if (bad >= 0) throw_index_out_of_bounds("gather()", value_at<int64_t>(ix, bad), d, size);
    Tensor r1 = at_least_1d(res);
    gather_bytes("gather", r1, restride(s1, ix->sizes(), d), ix,
                 s1->strides()[static_cast<size_t>(d)] * static_cast<int64_t>(s1->itemsize()));
  }
  return finish_out("gather", out, res);
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  const IndexSelectMeta m = index_select_meta(self, dim, index);
  const int64_t d = m.dim, n = index->numel();
  const Device dev = is_on_cpu(self) ? index->device() : self->device();
  Tensor ix = index_int64(index, dev);
  Tensor s1 = at_least_1d(to_device(self, dev));
  if (first_out_of_range("index_select", ix, 0, m.size) >= 0) throw_index_select_out_of_range();
  check_index_select_out(self, out);
  Tensor res = out_or_fresh(out, m.shape, self->dtype(), dev, {&self});
  if (n > 0 && res->numel() > 0) {
    Tensor r1 = at_least_1d(res);
    Shape ist(static_cast<size_t>(r1->dim()), 0);
    ist[static_cast<size_t>(d)] = 1;
    Tensor iv = make_view(ix, r1->sizes(), std::move(ist), ix->offset());
    gather_bytes("index_select", r1, restride(s1, r1->sizes(), d), iv,
                 s1->strides()[static_cast<size_t>(d)] * static_cast<int64_t>(s1->itemsize()));
  }
  return finish_out("index_select", out, res);
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Tensor& out) {
  const bool is_value = src->wrapped_number;
  const int64_t d = scatter_meta("scatter", self, dim, index, src, is_value);
  Tensor res = out == self ? self : ops::clone(self);
  if (index->numel() == 0) return res;
  const ScatterInto t = scatter_into(res, index, d);
  // (the CPU checks the indices first in place, else the value first)
  const bool inplace = res == self;
  if (is_value && !inplace) check_value_fits("scatter", scalar_of(src), self->dtype(), true);
  const int64_t bad = first_out_of_range("scatter", t.ix, 0, t.size);
  if (bad >= 0) throw_index_out_of_bounds("scatter()", value_at<int64_t>(t.ix, bad), d, t.size);
  const Shape& shape = t.ix->sizes();
  if (is_value) {
    if (inplace) check_value_fits("scatter", scalar_of(src), self->dtype(), true);
    const Tensor v = to_dtype(src, self->dtype());  // the value converted the CPU way
    dispatch_itemsize(res->itemsize(), [&](auto tag) {
      using U = decltype(tag);
      U bits;
      std::memcpy(&bits, v->data_ptr(), sizeof(U));
      scatter_columns("scatter", shape, d, t.dst, t.ix, t.ix, t.step, CopyTo<U>{true, bits});
    });
  } else {
    const Tensor sv = scatter_source(src, t);
    dispatch_itemsize(res->itemsize(), [&](auto tag) {
      using U = decltype(tag);
      scatter_columns("scatter", shape, d, t.dst, t.ix, sv, t.step, CopyTo<U>{false, U(0)});
    });
  }
  return res;
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Tensor& out) {
  const int64_t d = scatter_meta("scatter_add", self, dim, index, src, false);
  Tensor res = out == self ? self : ops::clone(self);
  if (index->numel() == 0) return res;
  const ScatterInto t = scatter_into(res, index, d);
  const int64_t bad = first_out_of_range("scatter_add", t.ix, 0, t.size);
  if (bad >= 0) throw_index_out_of_bounds("scatter_add()", value_at<int64_t>(t.ix, bad), d, t.size);
  scatter_accumulate("scatter_add", t.ix->sizes(), d, t.dst, t.ix, scatter_source(src, t), t.step,
                     Scalar::from_int(1));
  return res;
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha,
                 const Tensor& out) {
  const int64_t d = index_add_meta(self, dim, index, source);
  const Device dev = self->device();
  Tensor res = out == self ? self : ops::clone(self);
  if (index_add_is_noop(self, index, source, alpha)) return res;
  Tensor r1 = at_least_1d(res);
  Tensor ix = index_int64(index, dev);
  const int64_t size = r1->sizes()[static_cast<size_t>(d)];
  const int64_t bad = first_out_of_range("index_add", ix, 0, size);
  if (bad >= 0) throw_index_add_out_of_range(self, d, alpha, value_at<int64_t>(ix, bad), size);
  Tensor s1 = at_least_1d(to_device(source, dev));
  if (s1->storage() == res->storage()) s1 = ops::clone(s1);
  Shape ist(static_cast<size_t>(s1->dim()), 0);
  ist[static_cast<size_t>(d)] = 1;
  scatter_accumulate("index_add", s1->sizes(), d, restride(r1, s1->sizes(), d),
                     make_view(ix, s1->sizes(), std::move(ist), ix->offset()), s1,
                     r1->strides()[static_cast<size_t>(d)] * static_cast<int64_t>(r1->itemsize()), alpha);
  return res;
}

Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate,
                 const Tensor& out) {
  const char* op = "index_put";
  if (is_on_cpu(self)) throw_indices_on_device(op, "indices and values", self);  // a CPU 0-d self
  const Device dev = self->device();
  Tensor target = out ? out : ops::clone(self);
  const std::vector<Tensor> adv = index_put_indices(target, indices, values);
  const Tensor vals = to_device(values, dev);
  bool any = false;
  for (const Tensor& t : adv) any |= static_cast<bool>(t);
  if (!any) {  // only full slices: the whole tensor
    Tensor v = ops::expand(vals, target->sizes());
    if (accumulate) ops::add(target, v, Scalar::from_int(1), target);
    else ops::copy(target, v->storage() == target->storage() ? ops::clone(v) : v, false, target);
    return target;
  }
  const AdvancedMeta A = advanced_index_meta(target, adv, false);
  const AdvancedOperands P = advanced_operands(op, target, adv, A);
  Tensor v = advanced_index_values(vals, A.shape);
  if (!P.offsets) return target;
  if (v->storage() == target->storage()) v = ops::clone(v);
  const int64_t step = static_cast<int64_t>(target->itemsize());
  if (!accumulate) {
    dispatch_itemsize(target->itemsize(), [&](auto tag) {
      using U = decltype(tag);
      launch_elementwise<3>(op, dev, A.shape, {P.target.get(), P.offsets.get(), v.get()}, PutValue<U>{step});
    });
  } else {
    dispatch_device_type(target->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      launch_elementwise<3>(op, dev, A.shape, {P.target.get(), P.offsets.get(), v.get()}, AccumulateValue<T>{step});
    });
  }
  return target;
}

// self[indices] (index.cpp's cpu::_index): the gather of index_put's positions.
Tensor _index(const Tensor& self, const std::vector<Tensor>& indices) {
  const char* op = "index";
  if (is_on_cpu(self)) throw_indices_on_device(op, "indices", self);  // a CPU 0-d self
  const std::vector<Tensor> adv = advanced_indices(op, self, indices);
  bool any = false;
  for (const Tensor& t : adv) any |= static_cast<bool>(t);
  if (!any) return ops::clone(self);  // only full slices: a copy of self
  const AdvancedMeta A = advanced_index_meta(self, adv, false);
  const AdvancedOperands P = advanced_operands(op, self, adv, A);
  Tensor out = ember::empty(A.shape, self->dtype(), self->device());
  if (P.offsets) gather_bytes(op, out, P.target, P.offsets, static_cast<int64_t>(self->itemsize()));
  return out;
}

// (padding_idx, scale_grad_by_freq and sparse shape the gradient only: derivatives.yaml)
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t /*padding_idx*/, bool /*scale_grad_by_freq*/,
                 bool /*sparse*/) {
  const char* op = "embedding";
  const Shape shape = embedding_meta(weight, indices);
  const int64_t V = weight->size(0), D = weight->size(1);
  const Device dev = weight->device();
  Tensor ix = index_int64(indices, dev);
  if (first_out_of_range(op, ix, 0, V) >= 0) throw_embedding_index_out_of_range();
  Tensor out = ember::empty(shape, weight->dtype(), dev);
  if (out->numel() == 0) return out;
  Tensor w = contiguous_in(weight, weight->dtype());
  const int64_t n = ix->numel();
  dispatch_itemsize(w->itemsize(), [&](auto tag) {
    using U = decltype(tag);
    CurrentDevice guard(dev.index);
    embedding_kernel<U><<<blocks_for(n * D), kThreads, 0, stream_of(dev)>>>(
        reinterpret_cast<const U*>(w->data_ptr()), reinterpret_cast<const int64_t*>(ix->data_ptr()),
        reinterpret_cast<U*>(out->data_ptr()), n, D);
    check_launch(op);
  });
  return out;
}

Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                int64_t padding_idx, bool scale_grad_by_freq) {
  const char* op = "embedding_dense_backward";
  const Shape shape = embedding_dense_backward_meta(grad_output, indices, num_weights);
  const Device dev = is_on_cpu(grad_output) ? indices->device() : grad_output->device();
  const int64_t D = shape[1];
  // the positions grouped by index as the CPU kernel does, from a host copy of the indices
  Tensor hidx = to_host(contiguous_in(to_device(indices, dev), ScalarType::Int64));
  std::vector<int64_t> start, order;
  group_positions_by_index(hidx->data<int64_t>(), hidx->numel(), num_weights, start, order);
  Tensor res = ember::empty(shape, grad_output->dtype(), dev);
  if (res->numel() == 0) return res;
  if (!is_floating(grad_output->dtype())) throw_dtype_unsupported(op, grad_output->dtype(), "floating point");
  Tensor g = contiguous_in(to_device(grad_output, dev), grad_output->dtype());
  Tensor dorder = upload(order, dev), dstart = upload(start, dev);
  dispatch_device_float(grad_output->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    CurrentDevice guard(dev.index);
    embedding_backward_kernel<T><<<blocks_for(num_weights * D), kThreads, 0, stream_of(dev)>>>(
        reinterpret_cast<const T*>(g->data_ptr()), reinterpret_cast<const int64_t*>(dorder->data_ptr()),
        reinterpret_cast<const int64_t*>(dstart->data_ptr()), reinterpret_cast<T*>(res->data_ptr()), num_weights, D,
        padding_idx, scale_grad_by_freq);
    check_launch(op);
  });
  return res;
}

Tensor nll_loss(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index) {
  const char* op = "nll_loss";
  const NllLossMeta m = nll_loss_meta(self, target, weight, reduction);
  const int64_t C = m.C, S = m.S, T = m.T;
  const Device dev = self->device();
  Tensor t = contiguous_in(to_device(target, dev), ScalarType::Int64);
  const int64_t bad = first_out_of_range(op, t, 0, C, true, ignore_index);
  if (bad >= 0) throw_nll_loss_target_out_of_bounds(value_at<int64_t>(t, bad));
  Tensor out = ember::empty(m.out_shape, self->dtype(), dev);
  if (!is_floating(self->dtype())) throw_dtype_unsupported(op, self->dtype(), "floating point");
  Tensor x = contiguous_in(self, self->dtype());
  // the class weights as the CPU reads them: (double)(opmath)w[c]
  Tensor w = weight ? contiguous_in(to_device(weight, dev), ScalarType::Float64) : Tensor();
  const double* pw = w ? reinterpret_cast<const double*>(w->data_ptr()) : nullptr;
  const int64_t blocks = (T + kNllLossBlock - 1) / kNllLossBlock;
  Tensor terms, wts, sums, wsums;
  if (reduction != 0) {
    terms = ember::empty({T}, ScalarType::Float64, dev);
    wts = ember::empty({T}, ScalarType::Float64, dev);
    sums = ember::empty({blocks}, ScalarType::Float64, dev);
    wsums = ember::empty({blocks}, ScalarType::Float64, dev);
  }
  dispatch_device_float(self->dtype(), op, [&](auto tag) {
    using X = decltype(tag);
    CurrentDevice guard(dev.index);
    cudaStream_t stream = stream_of(dev);
    const X* px = reinterpret_cast<const X*>(x->data_ptr());
    const int64_t* pt = reinterpret_cast<const int64_t*>(t->data_ptr());
    X* po = reinterpret_cast<X*>(out->data_ptr());
    if (reduction == 0) {
      if (T == 0) return;
      nll_terms_kernel<X><<<blocks_for(T), kThreads, 0, stream>>>(px, pt, pw, T, C, S, ignore_index, nullptr, nullptr,
                                                                   po);
      check_launch(op);
      return;
    }
    double* pterms = reinterpret_cast<double*>(terms->data_ptr());
    double* pwts = reinterpret_cast<double*>(wts->data_ptr());
    double* psums = reinterpret_cast<double*>(sums->data_ptr());
    double* pwsums = reinterpret_cast<double*>(wsums->data_ptr());
    if (T > 0) {
      nll_terms_kernel<X><<<blocks_for(T), kThreads, 0, stream>>>(px, pt, pw, T, C, S, ignore_index, pterms, pwts,
                                                                   nullptr);
      check_launch(op);
      nll_block_sums_kernel<<<blocks_for(blocks), kThreads, 0, stream>>>(pterms, pwts, T, blocks, psums, pwsums);
      check_launch(op);
    }
    nll_total_kernel<X><<<1, 1, 0, stream>>>(psums, pwsums, blocks, reduction == 2, po);
    check_launch(op);
  });
  return out;
}

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

EMBER_REGISTER_CUDA_KERNEL(cat);
EMBER_REGISTER_CUDA_KERNEL(gather);
EMBER_REGISTER_CUDA_KERNEL(index_select);
EMBER_REGISTER_CUDA_KERNEL(scatter);
EMBER_REGISTER_CUDA_KERNEL(scatter_add);
EMBER_REGISTER_CUDA_KERNEL(index_add);
EMBER_REGISTER_CUDA_KERNEL(index_put);
EMBER_REGISTER_CUDA_KERNEL(_index);
EMBER_REGISTER_CUDA_KERNEL(embedding);
EMBER_REGISTER_CUDA_KERNEL(embedding_dense_backward);
EMBER_REGISTER_CUDA_KERNEL(nll_loss);
EMBER_REGISTER_CUDA_KERNEL(native_layer_norm);
EMBER_REGISTER_CUDA_KERNEL(native_layer_norm_backward);
