// CUDA kernels of cat, index_select, gather, scatter, scatter_add, index_add, embedding (and
// its dense backward), nll_loss and native_layer_norm (and its backward). Each mirrors its
// CPU kernel (shape.cpp, index.cpp, nn_ops.cpp, norms.cpp): the same checks, in the same
// order, with the same messages.
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
// - nll_loss sums its terms in double over the CPU's blocks of 4096, in the same order and
//   without fused multiply-adds: the result equals the CPU's bit for bit.
// - native_layer_norm(_backward) accumulate the row statistics and the parameter gradients
//   in double (the CPU uses float lanes combined in double): equal up to rounding.
#include <algorithm>
#include <cstring>
#include <vector>

#include "ember/cuda/elementwise.cuh"
#include "ember/indexing.h"  // scalar_of, check_value_fits

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
  return contiguous_as(on_device(idx, device), ScalarType::Int64);
}

// A 0-d tensor seen as shape [1] (gather/scatter treat 0-d tensors as 1-d).
Tensor at_least_1d(const Tensor& t) {
  if (t->dim() > 0) return t;
  return make_view(t, {1}, {1}, t->offset());
}

// t's data seen with `sizes` (each <= t's size) and t's strides, one dim's stride zeroed.
Tensor restride(const Tensor& t, const Shape& sizes, int64_t zero_dim) {
  Shape st = t->strides();
  if (zero_dim >= 0) st[static_cast<size_t>(zero_dim)] = 0;
  return make_view(t, sizes, std::move(st), t->offset());
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

// The tensor an op computes into: out when it is contiguous with the shape and dtype and
// shares storage with none of the inputs (index.cpp's result_for), else a fresh one.
Tensor result_for(const Tensor& out, const Shape& shape, ScalarType dtype, const Device& device,
                  std::initializer_list<const Tensor*> inputs) {
  if (out && out->sizes() == shape && out->dtype() == dtype && out->is_contiguous()) {
    bool aliases = false;
    for (const Tensor* t : inputs) aliases = aliases || (*t && (*t)->storage() == out->storage());
    if (!aliases) return out;
  }
  return ember::empty(shape, dtype, device);
}

void throw_out_of_bounds(const char* op, int64_t bad, int64_t dim, int64_t size) {
  throw std::runtime_error(message(op, ": index ", bad, " is out of bounds for dimension ", dim, " with size ", size));
}

// index.cpp's checks for gather/scatter: same number of dims (0-d counts as 1-d) and index
// sizes no larger than self's outside dim (and than src's everywhere, if given).
void scatter_gather_shape_check(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src,
                                bool is_gather) {
  const int64_t nd = std::max<int64_t>(self->dim(), 1);
  if (std::max<int64_t>(index->dim(), 1) != nd) {
    throw std::runtime_error(
        is_gather ? "gather(): Index tensor must have the same number of dimensions as input tensor"
                  : "scatter(): Index tensor must have the same number of dimensions as self tensor");
  }
  if (src && std::max<int64_t>((*src)->dim(), 1) != nd) {
    throw std::runtime_error("scatter(): Index tensor must have the same number of dimensions as src tensor");
  }
  auto size_of = [](const Tensor& t, int64_t d) { return t->dim() == 0 ? 1 : t->sizes()[static_cast<size_t>(d)]; };
  bool wrong = false;
  for (int64_t d = 0; d < nd; ++d) {
    if (d != dim && size_of(index, d) > size_of(self, d)) {
      if (is_gather) {
        throw std::runtime_error(message("gather(): Size does not match at dimension ", d, " expected index ",
                                         shape_str(index->sizes()), " to be no larger than self ",
                                         shape_str(self->sizes()), " apart from dimension ", dim));
      }
      wrong = true;
    }
    if (src && size_of(index, d) > size_of(*src, d)) wrong = true;
  }
  if (wrong) {
    std::string msg = message("scatter(): Expected index ", shape_str(index->sizes()), " to be no larger than self ",
                              shape_str(self->sizes()), " apart from dimension ", dim);
    if (src) msg += message(" and to be no larger size than src ", shape_str((*src)->sizes()));
    throw std::runtime_error(msg);
  }
}

void check_index_dtype(const char* what, const Tensor& index) {
  if (index->dtype() != ScalarType::Int64 && index->dtype() != ScalarType::Int32) {
    throw std::runtime_error(message(what, ": Expected dtype int32/int64 for index, got ", dtype_name(index->dtype())));
  }
}

// ---------------------------------------------------------------------------------------------
// scatter, scatter_add, index_add: one thread per position of the other dims, walking the
// scattered dim in increasing order, as index.cpp's scatter_loop does on one CPU thread. The
// last write wins and sums are taken in the CPU's order: the results equal the CPU's.

// The operands seen over `shape` with the scattered dim d of size 1 (one element per column).
Tensor column_view(const Tensor& t, const Shape& shape, int64_t d) {
  Shape cs = shape;
  cs[static_cast<size_t>(d)] = 1;
  return make_view(t, std::move(cs), t->strides(), t->offset());
}

// dst[col, idx[col, i]] = src[col, i] (or = value when has_value), i = 0 .. n-1 in order.
template <typename U>
void scatter_copy_t(const char* op, const Shape& shape, int64_t d, const Tensor& dst, const Tensor& idx,
                    const Tensor& src, int64_t step, bool has_value, U value) {
  const int64_t n = shape[static_cast<size_t>(d)];
  const int64_t ids = idx->strides()[static_cast<size_t>(d)] * static_cast<int64_t>(sizeof(int64_t));
  const int64_t sds = src->strides()[static_cast<size_t>(d)] * static_cast<int64_t>(src->itemsize());
  Tensor cd = column_view(dst, shape, d), ci = column_view(idx, shape, d), cs = column_view(src, shape, d);
  launch_elementwise<3>(op, dst->device(), cd->sizes(), {cd.get(), ci.get(), cs.get()},
                        [n, ids, sds, step, has_value, value] __device__(char** base, const int64_t* off) {
                          for (int64_t i = 0; i < n; ++i) {
                            const int64_t k = *reinterpret_cast<const int64_t*>(base[1] + off[1] + i * ids);
                            *reinterpret_cast<U*>(base[0] + off[0] + k * step) =
                                has_value ? value : *reinterpret_cast<const U*>(base[2] + off[2] + i * sds);
                          }
                        });
}

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

// dst[col, idx[col, i]] += alpha * src[col, i], i = 0 .. n-1 in order (index.cpp's add_scaled).
template <typename T>
void scatter_add_t(const char* op, const Shape& shape, int64_t d, const Tensor& dst, const Tensor& idx,
                   const Tensor& src, int64_t step, opmath_t<T> al, bool unit) {
  using A = opmath_t<T>;
  const int64_t n = shape[static_cast<size_t>(d)];
  const int64_t ids = idx->strides()[static_cast<size_t>(d)] * static_cast<int64_t>(sizeof(int64_t));
  const int64_t sds = src->strides()[static_cast<size_t>(d)] * static_cast<int64_t>(src->itemsize());
  Tensor cd = column_view(dst, shape, d), ci = column_view(idx, shape, d), cs = column_view(src, shape, d);
  launch_elementwise<3>(op, dst->device(), cd->sizes(), {cd.get(), ci.get(), cs.get()},
                        [n, ids, sds, step, al, unit] __device__(char** base, const int64_t* off) {
                          for (int64_t i = 0; i < n; ++i) {
                            const int64_t k = *reinterpret_cast<const int64_t*>(base[1] + off[1] + i * ids);
                            T* p = reinterpret_cast<T*>(base[0] + off[0] + k * step);
                            const A v = cvt<A>(*reinterpret_cast<const T*>(base[2] + off[2] + i * sds));
                            if constexpr (std::is_same_v<T, bool>) {
                              *p = *p || (v && al);
                            } else {
                              const A t = cvt<A>(*p);
                              *p = cvt<T>(unit ? add_rn(t, v) : add_rn(t, mul_rn(al, v)));
                            }
                          }
                        });
}

void scatter_accumulate(const char* op, const Shape& shape, int64_t d, const Tensor& dst, const Tensor& idx,
                        const Tensor& src, int64_t step, const Scalar& alpha) {
  if (shape_numel(shape) == 0) return;
  dispatch_all(dst->dtype(), op, [&](auto host_tag) {
    using H = decltype(host_tag);
    using T = std::conditional_t<std::is_same_v<H, Half>, __half,
                                 std::conditional_t<std::is_same_v<H, BFloat16>, __nv_bfloat16, H>>;
    const auto al = static_cast<opmath_t<T>>(alpha.to<::ember::opmath_t<H>>());
    scatter_add_t<T>(op, shape, d, dst, idx, src, step, al, alpha.to_double() == 1.0);
  });
}

// PyTorch's legacy type names ("torch.FloatTensor"), as its argument checks print them.
std::string legacy_type_name(ScalarType t) {
  const char* n = "";
  switch (t) {
    case ScalarType::Bool: n = "Bool"; break;
    case ScalarType::UInt8: n = "Byte"; break;
    case ScalarType::Int8: n = "Char"; break;
    case ScalarType::Int16: n = "Short"; break;
    case ScalarType::Int32: n = "Int"; break;
    case ScalarType::Int64: n = "Long"; break;
    case ScalarType::Float16: n = "Half"; break;
    case ScalarType::BFloat16: n = "BFloat16"; break;
    case ScalarType::Float32: n = "Float"; break;
    case ScalarType::Float64: n = "Double"; break;
    default: break;
  }
  return message("ember.", n, "Tensor");
}

void check_indices(const char* op, const Tensor& indices) {
  const ScalarType t = indices->dtype();
  if (t != ScalarType::Int64 && t != ScalarType::Int32) {
    throw std::runtime_error(message("Expected tensor for argument #1 'indices' to have one of the following scalar "
                                     "types: Long, Int; but got ", legacy_type_name(t),
                                     " instead (while checking arguments for ", op, ")"));
  }
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
  ops::copy(d, h, d);
  return d;
}

// ---------------------------------------------------------------------------------------------
// nll_loss

constexpr int64_t kBlock = 4096;  // elements per partial sum (nn_ops.cpp)

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

// Serial sums of each block of kBlock terms (and weights), in order.
__global__ void nll_block_sums_kernel(const double* terms, const double* wts, int64_t T, int64_t blocks, double* sums,
                                      double* wsums) {
  for (int64_t b = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; b < blocks;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double s = 0, ws = 0;
    const int64_t e = min(T, (b + 1) * kBlock);
    for (int64_t i = b * kBlock; i < e; ++i) {
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

// norms.cpp's checks of a parameter read as doubles (to_doubles): floating, unless empty.
void check_readable(const Tensor& t) {
  if (t && t->numel() > 0 && !is_floating(t->dtype())) {
    throw_dtype_unsupported("normalization", t->dtype(), "floating point");
  }
}

// Parameters (weight, bias) share the input's dtype, or are float32 for a 16-bit float input.
void check_param_dtype(const Tensor& input, const Tensor& p) {
  if (!p) return;
  const ScalarType it = input->dtype(), pt = p->dtype();
  const bool half = it == ScalarType::Float16 || it == ScalarType::BFloat16;
  if (pt != it && !(half && pt == ScalarType::Float32)) {
    throw std::runtime_error("mixed dtype (CPU): all inputs must share same datatype.");
  }
}

template <typename T> const opmath_t<T>* param_ptr(const Tensor& t) {
  return t ? reinterpret_cast<const opmath_t<T>*>(t->data_ptr()) : nullptr;
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out) {
  if (tensors.empty()) throw ValueError("cat(): expected a non-empty list of Tensors");
  // legacy: 1-d empty tensors are skipped whatever their shape along other dims
  std::vector<const Tensor*> used;
  ScalarType dtype = ScalarType::Undefined;
  Device device = out ? out->device() : Device{};
  bool have_device = static_cast<bool>(out);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t->dim() == 0) {
      throw std::runtime_error(message("cat(): zero-dimensional tensor (at position ", i, ") cannot be concatenated"));
    }
    if (!have_device && !on_host(t)) {
      device = t->device();
      have_device = true;
    }
    dtype = dtype == ScalarType::Undefined ? t->dtype() : promote_types(dtype, t->dtype());
    if (!(t->dim() == 1 && t->numel() == 0)) used.push_back(&t);
  }
  Shape shape;
  int64_t d = 0;
  if (used.empty()) {  // only skipped tensors: dim is not even checked
    shape = {0};
  } else {
    const Tensor& first = *used[0];
    const int64_t nd = first->dim();
    d = wrap_dim(dim, nd, "cat");
    shape = first->sizes();
    shape[static_cast<size_t>(d)] = 0;
    for (size_t k = 0; k < used.size(); ++k) {
      const Tensor& t = *used[k];
      if (t->dim() != nd) {
        throw std::runtime_error(
            message("cat(): Tensors must have same number of dimensions: got ", nd, " and ", t->dim()));
      }
      for (int64_t j = 0; j < nd; ++j) {
        if (j != d && t->sizes()[static_cast<size_t>(j)] != first->sizes()[static_cast<size_t>(j)]) {
          size_t pos = static_cast<size_t>(&t - tensors.data());  // the position in the caller's list
          throw std::runtime_error(message("cat(): Sizes of tensors must match except in dimension ", d,
                                           ". Expected size ", first->sizes()[static_cast<size_t>(j)],
                                           " but got size ", t->sizes()[static_cast<size_t>(j)], " for tensor number ",
                                           pos, " in the list."));
        }
      }
      shape[static_cast<size_t>(d)] += t->sizes()[static_cast<size_t>(d)];
    }
  }
  if (out && !can_cast(dtype, out->dtype())) {
    throw TypeError(message("cat(): input types can't be cast to the desired output type ", dtype_name(out->dtype())));
  }
  // write straight into out when it fits and does not alias an input
  Tensor res;
  if (out && out->sizes() == shape && out->dtype() == dtype) {
    bool aliases = false;
    for (const Tensor& t : tensors) aliases = aliases || t->storage() == out->storage();
    if (!aliases) res = out;
  }
  if (!res) res = ember::empty(shape, dtype, device);
  int64_t offset = 0;
  for (const Tensor* tp : used) {
    const Tensor& t = *tp;
    const int64_t len = t->sizes()[static_cast<size_t>(d)];
    if (len == 0) continue;
    Shape sz = res->sizes();
    sz[static_cast<size_t>(d)] = len;
    const int64_t start = res->offset() + offset * res->strides()[static_cast<size_t>(d)];
    Tensor slot = make_view(res, std::move(sz), res->strides(), start);
    ops::copy(slot, t, slot);
    offset += len;
  }
  return finish_out("cat", out, res);
}

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  const int64_t d = wrap_dim(dim, self->dim(), "gather");
  if (index->numel() > 0) {
    check_index_dtype("gather()", index);
    scatter_gather_shape_check(self, d, index, nullptr, true);
  }
  if (out && out->dtype() != self->dtype()) {
    throw std::runtime_error(message("gather(): Expected out tensor to have dtype ", dtype_name(self->dtype()),
                                     ", but got ", dtype_name(out->dtype()), " instead"));
  }
  const Device dev = on_host(self) ? index->device() : self->device();
  Tensor res = result_for(out, index->sizes(), self->dtype(), dev, {&self, &index});
  if (index->numel() > 0) {
    Tensor s1 = at_least_1d(on_device(self, dev));
    Tensor ix = index_int64(at_least_1d(index), dev);
    const int64_t size = s1->sizes()[static_cast<size_t>(d)];
    const int64_t bad = first_out_of_range("gather", ix, 0, size);
    if (bad >= 0) throw_out_of_bounds("gather()", value_at<int64_t>(ix, bad), d, size);
    Tensor r1 = at_least_1d(res);
    gather_bytes("gather", r1, restride(s1, ix->sizes(), d), ix,
                 s1->strides()[static_cast<size_t>(d)] * static_cast<int64_t>(s1->itemsize()));
  }
  return finish_out("gather", out, res);
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  const int64_t d = wrap_dim(dim, self->dim(), "index_select");
  if (index->dim() > 1) throw IndexError("index_select(): Index is supposed to be a vector");
  if (index->dtype() != ScalarType::Int64 && index->dtype() != ScalarType::Int32) {
    throw std::runtime_error("index_select(): Expected dtype int32 or int64 for index");
  }
  const int64_t n = index->numel();
  if (self->dim() == 0 && n != 1) {
    throw std::runtime_error(message("index_select(): Index to scalar can have only 1 value, got ", n, " value(s)"));
  }
  const Device dev = on_host(self) ? index->device() : self->device();
  Shape shape = self->sizes();
  if (self->dim() > 0) shape[static_cast<size_t>(d)] = n;
  Tensor ix = index_int64(index, dev);
  Tensor s1 = at_least_1d(on_device(self, dev));
  const int64_t size = s1->sizes()[static_cast<size_t>(d)];
  if (first_out_of_range("index_select", ix, 0, size) >= 0) {
    throw IndexError("index_select(): index out of range in self");
  }
  if (out && out->dtype() != self->dtype()) {
    throw std::runtime_error("index_select(): self and result must have the same scalar type");
  }
  Tensor res = result_for(out, shape, self->dtype(), dev, {&self});
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
  const int64_t d = wrap_dim(dim, self->dim(), "scatter");
  if (index->numel() > 0) check_index_dtype("scatter()", index);
  const bool is_value = src->wrapped_number;
  if (!is_value && src->dtype() != self->dtype()) {
    throw std::runtime_error("scatter(): Expected self.dtype to be equal to src.dtype");
  }
  if (index->numel() > 0) scatter_gather_shape_check(self, d, index, is_value ? nullptr : &src, false);
  const Device dev = self->device();
  Tensor res = out == self ? self : ops::clone(self);
  if (index->numel() == 0) return res;
  Tensor r1 = at_least_1d(res);
  Tensor ix = index_int64(at_least_1d(index), dev);
  const int64_t size = r1->sizes()[static_cast<size_t>(d)];
  // (the CPU checks the indices first in place, else the value first)
  const bool inplace = res == self;
  if (is_value && !inplace) check_value_fits("scatter", scalar_of(src), self->dtype(), true);
  const int64_t bad = first_out_of_range("scatter", ix, 0, size);
  if (bad >= 0) throw_out_of_bounds("scatter()", value_at<int64_t>(ix, bad), d, size);
  const int64_t step = r1->strides()[static_cast<size_t>(d)] * static_cast<int64_t>(r1->itemsize());
  Tensor dst = restride(r1, ix->sizes(), d);
  if (is_value) {
    if (inplace) check_value_fits("scatter", scalar_of(src), self->dtype(), true);
    const Tensor v = to_dtype(src, self->dtype());  // the value converted the CPU way
    dispatch_itemsize(res->itemsize(), [&](auto tag) {
      using U = decltype(tag);
      U bits;
      std::memcpy(&bits, v->data_ptr(), sizeof(U));
      scatter_copy_t<U>("scatter", ix->sizes(), d, dst, ix, ix, step, true, bits);
    });
  } else {
    Tensor s1 = at_least_1d(on_device(src, dev));
    Tensor sv = restride(s1, ix->sizes(), -1);
    if (s1->storage() == res->storage()) sv = ops::clone(sv);
    dispatch_itemsize(res->itemsize(), [&](auto tag) {
      using U = decltype(tag);
      scatter_copy_t<U>("scatter", ix->sizes(), d, dst, ix, sv, step, false, U(0));
    });
  }
  return res;
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Tensor& out) {
  const int64_t d = wrap_dim(dim, self->dim(), "scatter_add");
  if (index->numel() > 0) check_index_dtype("scatter_add()", index);
  if (src->dtype() != self->dtype()) {
    throw std::runtime_error("scatter(): Expected self.dtype to be equal to src.dtype");
  }
  if (index->numel() > 0) scatter_gather_shape_check(self, d, index, &src, false);
  const Device dev = self->device();
  Tensor res = out == self ? self : ops::clone(self);
  if (index->numel() == 0) return res;
  Tensor r1 = at_least_1d(res);
  Tensor ix = index_int64(at_least_1d(index), dev);
  const int64_t size = r1->sizes()[static_cast<size_t>(d)];
  const int64_t bad = first_out_of_range("scatter_add", ix, 0, size);
  if (bad >= 0) throw_out_of_bounds("scatter_add()", value_at<int64_t>(ix, bad), d, size);
  const int64_t step = r1->strides()[static_cast<size_t>(d)] * static_cast<int64_t>(r1->itemsize());
  Tensor s1 = at_least_1d(on_device(src, dev));
  Tensor sv = restride(s1, ix->sizes(), -1);
  if (s1->storage() == res->storage()) sv = ops::clone(sv);
  scatter_accumulate("scatter_add", ix->sizes(), d, restride(r1, ix->sizes(), d), ix, sv, step, Scalar::from_int(1));
  return res;
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha,
                 const Tensor& out) {
  const int64_t d = wrap_dim(dim, self->dim(), "index_add");
  if (index->dim() > 1) {
    throw IndexError(message("index_add_(): Index is supposed to be a vector, but got dim: ", index->dim(),
                             " with type: ", dtype_name(index->dtype()), " and size: ", shape_str(index->sizes())));
  }
  if (index->dtype() != ScalarType::Int64 && index->dtype() != ScalarType::Int32) {
    throw std::runtime_error("index_add_(): Expected dtype int32/int64 for index");
  }
  if (self->dtype() != source->dtype()) {
    throw std::runtime_error(message("index_add_(): self (", dtype_name(self->dtype()), ") and source (",
                                     dtype_name(source->dtype()), ") must have the same scalar type"));
  }
  const int64_t n = index->numel();
  const int64_t src_len = source->dim() == 0 ? 1 : source->sizes()[static_cast<size_t>(std::min(d, source->dim() - 1))];
  if (n != src_len) {
    if (source->dim() == 0) throw IndexError("index_add_(): Dimension specified as 0 but tensor has no dimensions");
    throw std::runtime_error(message("index_add_(): Number of indices (", n,
                                     ") should be equal to source.size(dim): (", src_len, "), for dim: ", d));
  }
  bool same = source->dim() == self->dim();
  for (int64_t k = 0; same && k < self->dim(); ++k) {
    same = k == d || source->sizes()[static_cast<size_t>(k)] == self->sizes()[static_cast<size_t>(k)];
  }
  if (!same) {
    throw std::runtime_error(message("index_add_(): source tensor shape must match self tensor shape, excluding the "
                                     "specified dimension. Got self.shape = ",
                                     shape_str(self->sizes()), " source.shape = ", shape_str(source->sizes())));
  }
  const Device dev = self->device();
  Tensor res = out == self ? self : ops::clone(self);
  // (PyTorch skips the index check for an empty self, except in its 1-d kernel with alpha)
  if (n == 0 || source->numel() == 0 || (res->numel() == 0 && !(self->dim() == 1 && alpha.to_double() != 1.0))) {
    return res;
  }
  Tensor r1 = at_least_1d(res);
  Tensor ix = index_int64(index, dev);
  const int64_t size = r1->sizes()[static_cast<size_t>(d)];
  const int64_t bad = first_out_of_range("index_add", ix, 0, size);
  if (bad >= 0) {
    // PyTorch's kernels differ in the error (index.cpp)
    if (alpha.to_double() == 1.0 && self->dtype() != ScalarType::Bool && self->dim() >= 2 &&
        (d == 0 || d == self->dim() - 1)) {
      throw_out_of_bounds("index_add_()", value_at<int64_t>(ix, bad), d, size);
    }
    throw IndexError("index_add_(): index out of range in self");
  }
  Tensor s1 = at_least_1d(on_device(source, dev));
  if (s1->storage() == res->storage()) s1 = ops::clone(s1);
  Shape ist(static_cast<size_t>(s1->dim()), 0);
  ist[static_cast<size_t>(d)] = 1;
  scatter_accumulate("index_add", s1->sizes(), d, restride(r1, s1->sizes(), d),
                     make_view(ix, s1->sizes(), std::move(ist), ix->offset()), s1,
                     r1->strides()[static_cast<size_t>(d)] * static_cast<int64_t>(r1->itemsize()), alpha);
  return res;
}

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  (void)padding_idx;
  (void)scale_grad_by_freq;
  (void)sparse;  // these shape the gradient only (derivatives.yaml)
  const char* op = "embedding";
  if (weight->dim() != 2) throw std::runtime_error("'weight' must be 2-D");
  check_indices(op, indices);
  const int64_t V = weight->size(0), D = weight->size(1);
  const Device dev = weight->device();
  Tensor ix = index_int64(indices, dev);
  if (first_out_of_range(op, ix, 0, V) >= 0) throw IndexError("index out of range in self");
  Shape shape = indices->sizes();
  shape.push_back(D);
  Tensor out = ember::empty(shape, weight->dtype(), dev);
  if (out->numel() == 0) return out;
  Tensor w = contiguous_as(weight, weight->dtype());
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
  check_indices(op, indices);
  if (num_weights < 0) {
    throw std::runtime_error(message(op, ": num_weights must be non-negative, but got ", num_weights));
  }
  if (grad_output->dim() != indices->dim() + 1 ||
      !std::equal(indices->sizes().begin(), indices->sizes().end(), grad_output->sizes().begin())) {
    throw std::runtime_error(message(op, ": expected grad_output of size indices.shape + (D,) = ",
                                     shape_str(indices->sizes()), " + (D,), but got ",
                                     shape_str(grad_output->sizes())));
  }
  const Device dev = on_host(grad_output) ? indices->device() : grad_output->device();
  const int64_t D = grad_output->size(-1);
  // the CPU kernel's grouping of positions by index, from a host copy of the indices
  Tensor hidx = to_host(contiguous_as(on_device(indices, dev), ScalarType::Int64));
  const int64_t n = hidx->numel();
  const int64_t* idx = hidx->data<int64_t>();
  std::vector<int64_t> start(static_cast<size_t>(num_weights) + 1, 0);
  for (int64_t p = 0; p < n; ++p) {
    const int64_t i = idx[p];
    if (i < 0 || i >= num_weights) throw IndexError("index out of range in self");
    ++start[static_cast<size_t>(i + 1)];
  }
  for (int64_t r = 0; r < num_weights; ++r) start[static_cast<size_t>(r + 1)] += start[static_cast<size_t>(r)];
  std::vector<int64_t> order(static_cast<size_t>(n)), fill(start.begin(), start.end() - 1);
  for (int64_t p = 0; p < n; ++p) order[static_cast<size_t>(fill[static_cast<size_t>(idx[p])]++)] = p;
  Tensor res = ember::empty({num_weights, D}, grad_output->dtype(), dev);
  if (res->numel() == 0) return res;
  if (!is_floating(grad_output->dtype())) throw_dtype_unsupported(op, grad_output->dtype(), "floating point");
  Tensor g = contiguous_as(on_device(grad_output, dev), grad_output->dtype());
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
  if (reduction < 0 || reduction > 2) {
    throw std::runtime_error(message(op, ": reduction must be 0 ('none'), 1 ('mean') or 2 ('sum'), but got ",
                                     reduction));
  }
  const int64_t nd = self->dim();
  if (nd < 1) throw std::runtime_error(message("Expected 1 or more dimensions (got ", nd, ")"));
  // self (C), (N, C) or (N, C, d1, ...); target (), (N) or (N, d1, ...)
  const int64_t C = nd == 1 ? self->size(0) : self->size(1);
  const int64_t N = nd == 1 ? 1 : self->size(0);
  if (nd <= 2) {
    if (target->dim() > 1) throw std::runtime_error("0D or 1D target tensor expected, multi-target not supported");
    const bool ok = nd == 1 ? target->dim() == 0 : target->dim() == 1 && target->size(0) == N;
    if (!ok) {
      throw std::runtime_error(message("size mismatch (got input: ", shape_str(self->sizes()), ", target: ",
                                       shape_str(target->sizes()), ")"));
    }
  } else {
    Shape expected = {N};
    expected.insert(expected.end(), self->sizes().begin() + 2, self->sizes().end());
    if (target->sizes() != expected) {
      throw std::runtime_error(message("Expected target size ", shape_str(expected), ", got ",
                                       shape_str(target->sizes())));
    }
  }
  const ScalarType tt = target->dtype();
  if (tt != ScalarType::Int64 && tt != ScalarType::UInt8) {
    throw std::runtime_error(message("expected target dtype to be Long or Byte, but got ", scalar_type_name(tt)));
  }
  if (weight && weight->numel() != C) {
    throw std::runtime_error(message("weight tensor should be defined either for all ", C,
                                     " classes or no classes but got weight tensor of shape: ",
                                     shape_str(weight->sizes())));
  }
  if (weight && weight->dtype() != self->dtype()) {
    throw std::runtime_error(message(op, ": expected weight of dtype ", dtype_name(self->dtype()), ", but got ",
                                     dtype_name(weight->dtype())));
  }
  const Device dev = self->device();
  const int64_t S = nd <= 2 ? 1 : self->numel() / std::max<int64_t>(N * C, 1);
  const int64_t T = target->numel();  // N * S
  Tensor t = contiguous_as(on_device(target, dev), ScalarType::Int64);
  const int64_t bad = first_out_of_range(op, t, 0, C, true, ignore_index);
  if (bad >= 0) throw IndexError(message("Target ", value_at<int64_t>(t, bad), " is out of bounds."));
  Tensor out = ember::empty(reduction == 0 ? target->sizes() : Shape{}, self->dtype(), dev);
  if (!is_floating(self->dtype())) throw_dtype_unsupported(op, self->dtype(), "floating point");
  Tensor x = contiguous_as(self, self->dtype());
  // the class weights as the CPU reads them: (double)(opmath)w[c]
  Tensor w = weight ? contiguous_as(on_device(weight, dev), ScalarType::Float64) : Tensor();
  const double* pw = w ? reinterpret_cast<const double*>(w->data_ptr()) : nullptr;
  const int64_t blocks = (T + kBlock - 1) / kBlock;
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
  const int64_t k = static_cast<int64_t>(normalized_shape.size()), nd = input->dim();
  if (k == 0) {
    throw std::runtime_error(message("Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                                     "least one element, but got normalized_shape = ", shape_str(normalized_shape)));
  }
  if (weight && weight->sizes() != normalized_shape) {
    throw std::runtime_error(message("Expected weight to be of same shape as normalized_shape, but got weight of ",
                                     "shape ", shape_str(weight->sizes()), " and normalized_shape = ",
                                     shape_str(normalized_shape)));
  }
  if (bias && bias->sizes() != normalized_shape) {
    throw std::runtime_error(message("Expected bias to be of same shape as normalized_shape, but got bias of shape ",
                                     shape_str(bias->sizes()), " and normalized_shape = ",
                                     shape_str(normalized_shape)));
  }
  bool ok = nd >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = input->size(nd - k + i) == normalized_shape[static_cast<size_t>(i)];
  if (!ok) {
    std::string expected = "[*";
    for (int64_t s : normalized_shape) expected += message(", ", s);
    throw std::runtime_error(message("Given normalized_shape=", shape_str(normalized_shape),
                                     ", expected input with shape ", expected, "], but got input of size",
                                     shape_str(input->sizes())));
  }
  check_param_dtype(input, weight);
  check_param_dtype(input, bias);
  check_readable(weight);
  check_readable(bias);
  const Device dev = input->device();
  const int64_t K = shape_numel(normalized_shape);
  const int64_t R = shape_numel(Shape(input->sizes().begin(), input->sizes().end() - k));
  Shape stat_shape(input->sizes().begin(), input->sizes().end() - k);
  stat_shape.insert(stat_shape.end(), static_cast<size_t>(k), 1);
  Tensor out = ember::empty(input->sizes(), input->dtype(), dev);
  Tensor mean = ember::empty(stat_shape, input->dtype(), dev), rstd = ember::empty(stat_shape, input->dtype(), dev);
  if (R == 0) return {out, mean, rstd};
  if (!is_floating(input->dtype())) throw_dtype_unsupported(op, input->dtype(), "floating point");
  const ScalarType pdt = opmath_dtype(input->dtype());
  Tensor w = weight ? contiguous_as(on_device(weight, dev), pdt) : Tensor();
  Tensor b = bias ? contiguous_as(on_device(bias, dev), pdt) : Tensor();
  Tensor x = contiguous_as(input, input->dtype());
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
  if (grad_out->sizes() != input->sizes()) {
    throw std::runtime_error(message(op, ": expected grad_out of the input's size ", shape_str(input->sizes()),
                                     ", but got ", shape_str(grad_out->sizes())));
  }
  if (grad_out->dtype() != input->dtype()) {
    throw std::runtime_error(message(op, ": expected grad_out of the input's dtype ", dtype_name(input->dtype()),
                                     ", but got ", dtype_name(grad_out->dtype())));
  }
  const int64_t k = static_cast<int64_t>(normalized_shape.size()), nd = input->dim();
  bool ok = k >= 1 && nd >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = input->size(nd - k + i) == normalized_shape[static_cast<size_t>(i)];
  if (!ok) {
    throw std::runtime_error(message(op, ": input of size ", shape_str(input->sizes()),
                                     " does not end with normalized_shape ", shape_str(normalized_shape)));
  }
  const int64_t K = shape_numel(normalized_shape);
  const int64_t R = shape_numel(Shape(input->sizes().begin(), input->sizes().end() - k));
  if (mean->numel() != R || rstd->numel() != R) {
    throw std::runtime_error(message(op, ": expected mean and rstd of ", R, " elements"));
  }
  if (weight && weight->numel() != K) throw std::runtime_error(message(op, ": expected a weight of ", K, " elements"));
  check_readable(mean);
  check_readable(rstd);
  check_readable(weight);
  const Device dev = on_host(input) ? grad_out->device() : input->device();
  const bool want_w = static_cast<bool>(weight), want_b = static_cast<bool>(bias);
  Tensor gi = ember::empty(input->sizes(), input->dtype(), dev);
  // the weight and bias gradients, in double, shaped like normalized_shape
  Tensor gw = ember::empty(normalized_shape, ScalarType::Float64, dev);
  Tensor gb = ember::empty(normalized_shape, ScalarType::Float64, dev);
  if (want_w) ops::zero(gw, gw);
  if (want_b) ops::zero(gb, gb);
  if (R > 0 && K > 0) {
    if (!is_floating(input->dtype())) throw_dtype_unsupported(op, input->dtype(), "floating point");
    Tensor g = contiguous_as(on_device(grad_out, dev), input->dtype());
    Tensor x = contiguous_as(on_device(input, dev), input->dtype());
    Tensor mu = contiguous_as(on_device(mean, dev), ScalarType::Float64);
    Tensor rs = contiguous_as(on_device(rstd, dev), ScalarType::Float64);
    Tensor w = weight ? contiguous_as(on_device(weight, dev), opmath_dtype(input->dtype())) : Tensor();
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
    ops::copy(r, v, r);
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
EMBER_REGISTER_CUDA_KERNEL(embedding);
EMBER_REGISTER_CUDA_KERNEL(embedding_dense_backward);
EMBER_REGISTER_CUDA_KERNEL(nll_loss);
EMBER_REGISTER_CUDA_KERNEL(native_layer_norm);
EMBER_REGISTER_CUDA_KERNEL(native_layer_norm_backward);
