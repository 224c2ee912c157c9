// CUDA kernels of native_batch_norm, native_group_norm and their fused backward ops. The
// checks and sizes are norm_meta.h's, shared with the CPU kernels (norm_cpu.cpp); what is here is
// the compute, which follows the CPU's:
// - statistics in double, two passes (the mean, then the squared deviations from it), the
//   output written as x * scale + shift with per-channel (per-plane) scale and shift in the
//   opmath type; 16-bit float inputs accumulate in float like the CPU (in double, here);
// - training batch norm updates running_mean / running_var in place with momentum and the
//   unbiased variance, without bumping their version counter (state, not a graph input);
// - the backward ops: the sums of g and g * (x - mean) per channel (batch norm) or per plane
//   (group norm), then grad_input = A g + B x + C; grad_weight / grad_bias from the same sums.
//
// The per-statistic sums are tree reductions in a fixed order (deterministic), chosen by the
// data's shape: one thread per statistic for short ones, one thread per column of the
// (rows, columns) layout of a batch norm with few values per plane (coalesced), else blocks
// over chunks of each statistic's contiguous segments; partial sums are then added per
// statistic by one block. Per-channel arithmetic that the CPU rounds after each operation is
// written with __dmul_rn / __dadd_rn, which the compiler does not fuse.
#include <algorithm>
#include <initializer_list>

#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/norm/norm_meta.h"

namespace ember::cuda_engine {
namespace {

constexpr int kStatThreads = 256;

// Sums a and b over the block (blockDim.x a multiple of 32); thread 0 gets them.
__device__ void block_sum2(double& a, double& b) {
  __shared__ double sh[2][32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  for (int o = 16; o > 0; o >>= 1) {
    a += __shfl_down_sync(0xffffffffu, a, o);
    b += __shfl_down_sync(0xffffffffu, b, o);
  }
  __syncthreads();  // the previous use of sh is over
  if (lane == 0) {
    sh[0][warp] = a;
    sh[1][warp] = b;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    double ra = 0, rb = 0;
    for (int w = 0; w < nw; ++w) {
      ra += sh[0][w];
      rb += sh[1][w];
    }
    a = ra;
    b = rb;
  }
}

// What a statistic sums over its values: x; (x - center)^2; g and g * (x - center).
enum class StatMode { Sum, SqDev, Grad };

// nstat statistics; statistic s covers nseg segments of len contiguous values, segment i
// starting at element i * seg_stride + s * stat_stride; its center is center[s / center_div].
struct StatLayout {
  int64_t nstat, nseg, len, seg_stride, stat_stride, center_div;
};

template <StatMode kMode, typename T>
__device__ __forceinline__ void accumulate(const T* x, const T* g, int64_t o, double c, double& a, double& b) {
  using A = opmath_t<T>;
  const double xv = static_cast<double>(cvt<A>(x[o]));
  if constexpr (kMode == StatMode::Sum) {
    a += xv;
  } else if constexpr (kMode == StatMode::SqDev) {
    const double d = xv - c;
    a += d * d;
  } else {
    const double gv = static_cast<double>(cvt<A>(g[o]));
    a += gv;
    b += gv * (xv - c);
  }
}

template <StatMode kMode>
__device__ __forceinline__ double center_of(const double* center, const StatLayout& l, int64_t s) {
  return kMode == StatMode::Sum ? 0.0 : center[s / l.center_div];
}

// One thread per statistic: out1[s] = sum / div (out2[s] = second sum / div).
template <StatMode kMode, typename T>
__global__ void stat_thread_kernel(const T* x, const T* g, const double* center, StatLayout l, double div,
                                   double* out1, double* out2) {
  for (int64_t s = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; s < l.nstat;
       s += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double c = center_of<kMode>(center, l, s);
    double a = 0, b = 0;
    for (int64_t i = 0; i < l.nseg; ++i) {
      const int64_t base = i * l.seg_stride + s * l.stat_stride;
      for (int64_t t = 0; t < l.len; ++t) accumulate<kMode>(x, g, base + t, c, a, b);
    }
    out1[s] = a / div;
    if (out2) out2[s] = b / div;
  }
}

// Columns: statistic s owns the len columns s * len + t of a (nseg rows, nstat * len columns)
// matrix (seg_stride == nstat * len, stat_stride == len). Thread = column, blockIdx.y = chunk
// of rows_per_chunk rows; partial sums at p[(s * chunks + chunk) * len + t].
template <StatMode kMode, typename T>
__global__ void stat_columns_kernel(const T* x, const T* g, const double* center, StatLayout l, int64_t rows_per_chunk,
                                    double* p1, double* p2) {
  const int64_t cols = l.nstat * l.len;
  const int64_t col = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (col >= cols) return;
  const int64_t chunk = blockIdx.y, chunks = gridDim.y;
  const int64_t s = col / l.len, t = col % l.len;
  const double c = center_of<kMode>(center, l, s);
  const int64_t r0 = chunk * rows_per_chunk, r1 = min(l.nseg, r0 + rows_per_chunk);
  double a = 0, b = 0;
  for (int64_t r = r0; r < r1; ++r) accumulate<kMode>(x, g, r * l.seg_stride + col, c, a, b);
  const int64_t at = (s * chunks + chunk) * l.len + t;
  p1[at] = a;
  if (p2) p2[at] = b;
}

// Segments: block b = s * chunks + chunk sums values [chunk * per, (chunk + 1) * per) of
// statistic s (value j: segment j / len, position j % len) into p[b].
template <StatMode kMode, typename T>
__global__ void stat_segments_kernel(const T* x, const T* g, const double* center, StatLayout l, int64_t chunks,
                                     int64_t per, double* p1, double* p2) {
  const int64_t total = l.nseg * l.len;
  for (int64_t blk = blockIdx.x; blk < l.nstat * chunks; blk += gridDim.x) {
    const int64_t s = blk / chunks, chunk = blk % chunks;
    const double c = center_of<kMode>(center, l, s);
    const int64_t j0 = chunk * per, j1 = min(total, j0 + per);
    double a = 0, b = 0;
    // (segment, position) of j, advanced by blockDim.x without a division per value
    const int64_t di = blockDim.x / l.len, dt = blockDim.x % l.len;
    int64_t i = (j0 + threadIdx.x) / l.len, t = (j0 + threadIdx.x) % l.len;
    for (int64_t j = j0 + threadIdx.x; j < j1; j += blockDim.x) {
      accumulate<kMode>(x, g, i * l.seg_stride + s * l.stat_stride + t, c, a, b);
      i += di;
      t += dt;
      if (t >= l.len) {
        t -= l.len;
        ++i;
      }
    }
    block_sum2(a, b);
    if (threadIdx.x == 0) {
      p1[blk] = a;
      if (p2) p2[blk] = b;
    }
  }
}

// out[s] = (sum of p[s * P .. (s + 1) * P)) / div, one block per statistic.
__global__ void sum_partials_kernel(const double* p1, const double* p2, int64_t nstat, int64_t P, double div,
                                    double* out1, double* out2) {
  for (int64_t s = blockIdx.x; s < nstat; s += gridDim.x) {
    double a = 0, b = 0;
    for (int64_t q = threadIdx.x; q < P; q += blockDim.x) {
      a += p1[s * P + q];
      if (p2) b += p2[s * P + q];
    }
    block_sum2(a, b);
    if (threadIdx.x == 0) {
      out1[s] = a / div;
      if (out2) out2[s] = b / div;
    }
  }
}

int grid_for(int64_t n) { return static_cast<int>(std::clamp<int64_t>(n, 1, int64_t{1} << 20)); }

const double* dptr(const Tensor& t) { return t ? reinterpret_cast<const double*>(t->data_ptr()) : nullptr; }
double* dptr_mut(const Tensor& t) { return t ? reinterpret_cast<double*>(t->data_ptr()) : nullptr; }

// The sums (divided by div) of each statistic of l over x (and g for Grad) into out1 (out2):
// contiguous float64 tensors of l.nstat elements on x's device.
template <StatMode kMode, typename T>
void stat_sums(const char* op, const Device& dev, const T* x, const T* g, const Tensor& center, const StatLayout& l,
               double div, const Tensor& out1, const Tensor& out2) {
  if (l.nstat == 0) return;
  const int64_t total = l.nseg * l.len;
  if (total == 0) {
    ops::zero(out1, out1);
    if (out2) ops::zero(out2, out2);
    return;
  }
  CurrentDevice guard(dev.index);
  cudaStream_t stream = stream_of(dev);
  const double* c = dptr(center);
  if (total <= 64) {
    stat_thread_kernel<kMode, T><<<blocks_for(l.nstat), kThreads, 0, stream>>>(x, g, c, l, div, dptr_mut(out1),
                                                                              dptr_mut(out2));
    check_launch(op);
    return;
  }
  const int64_t cols = l.nstat * l.len;
  const bool columns = l.len < 32 && l.nseg > 1 && cols >= kStatThreads && l.stat_stride == l.len &&
                       l.seg_stride == cols;
  int64_t P;
  Tensor p1, p2;
  if (columns) {
    const int64_t chunks = std::clamp<int64_t>((int64_t{1} << 18) / cols, 1, std::min<int64_t>(l.nseg, 65535));
    const int64_t rows_per_chunk = (l.nseg + chunks - 1) / chunks;
    const int64_t used = (l.nseg + rows_per_chunk - 1) / rows_per_chunk;
    P = used * l.len;
    p1 = ember::empty({l.nstat * P}, ScalarType::Float64, dev);
    if (kMode == StatMode::Grad) p2 = ember::empty({l.nstat * P}, ScalarType::Float64, dev);
    const dim3 grid(static_cast<unsigned>((cols + kStatThreads - 1) / kStatThreads), static_cast<unsigned>(used));
    stat_columns_kernel<kMode, T><<<grid, kStatThreads, 0, stream>>>(x, g, c, l, rows_per_chunk, dptr_mut(p1),
                                                                     dptr_mut(p2));
  } else {
    const int64_t chunks = std::clamp<int64_t>((total + 2047) / 2048, 1, std::max<int64_t>(1, 2048 / l.nstat));
    const int64_t per = (total + chunks - 1) / chunks;
    P = chunks;
    p1 = ember::empty({l.nstat * P}, ScalarType::Float64, dev);
    if (kMode == StatMode::Grad) p2 = ember::empty({l.nstat * P}, ScalarType::Float64, dev);
    stat_segments_kernel<kMode, T><<<grid_for(l.nstat * chunks), kStatThreads, 0, stream>>>(
        x, g, c, l, chunks, per, dptr_mut(p1), dptr_mut(p2));
  }
  check_launch(op);
  sum_partials_kernel<<<grid_for(l.nstat), kStatThreads, 0, stream>>>(dptr(p1), dptr(p2), l.nstat, P, div,
                                                                      dptr_mut(out1), dptr_mut(out2));
  check_launch(op);
}

// ---- per-channel / per-row arithmetic (one thread each) ----

// Training batch norm: invstd, the affine scale and shift, the new running statistics.
template <typename A>
__global__ void bn_train_finalize_kernel(const double* mean, const double* m2, int64_t C, double M, double eps,
                                         const double* w, const double* b, const double* rm, const double* rv,
                                         double momentum, A* scale, A* shift, double* invstd, double* new_rm,
                                         double* new_rv) {
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < C;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double inv = 1.0 / ::sqrt(m2[c] / M + eps);
    const double var_unbiased = m2[c] / (M - 1);
    const double sc = __dmul_rn(inv, w ? w[c] : 1.0);
    scale[c] = static_cast<A>(sc);
    shift[c] = static_cast<A>(__dsub_rn(b ? b[c] : 0.0, __dmul_rn(mean[c], sc)));
    invstd[c] = inv;
    if (rm) {
      new_rm[c] = __dadd_rn(__dmul_rn(1 - momentum, rm[c]), __dmul_rn(momentum, mean[c]));
      new_rv[c] = __dadd_rn(__dmul_rn(1 - momentum, rv[c]), __dmul_rn(momentum, var_unbiased));
    }
  }
}

// Evaluation batch norm: scale and shift from the running statistics.
template <typename A>
__global__ void bn_eval_finalize_kernel(const double* rm, const double* rv, int64_t C, double eps, const double* w,
                                        const double* b, A* scale, A* shift) {
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < C;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double sc = (w ? w[c] : 1.0) / ::sqrt(rv[c] + eps);
    scale[c] = static_cast<A>(sc);
    shift[c] = static_cast<A>(__dsub_rn(b ? b[c] : 0.0, __dmul_rn(rm[c], sc)));
  }
}

// y = x * scale[p] + shift[p] with p = (i / S) % P: per channel (P = C) or per plane (P = N * C).
template <typename T>
__global__ void affine_kernel(const T* x, T* y, int64_t n, int64_t S, int64_t P, const opmath_t<T>* scale,
                              const opmath_t<T>* shift) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t p = (i / S) % P;
    y[i] = cvt<T>(cvt<opmath_t<T>>(x[i]) * scale[p] + shift[p]);
  }
}

// Batch norm backward per channel: grad_input = a g + b x + c; grad_weight, grad_bias.
template <typename A>
__global__ void bn_backward_finalize_kernel(const double* mean, const double* var, const double* sg,
                                            const double* sgx, const double* w, int64_t C, double M, bool train,
                                            double eps, A* ca, A* cb, A* cc, double* gw, double* gb) {
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < C;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double inv = train ? var[c] : 1.0 / ::sqrt(var[c] + eps);
    const double k = __dmul_rn(w ? w[c] : 1.0, inv);
    double B = 0, Cc = 0;
    if (train) {
      B = __dmul_rn(__dmul_rn(__dmul_rn(-k, inv), inv), sgx[c]) / M;
      Cc = __dsub_rn(__dmul_rn(-k, sg[c]) / M, __dmul_rn(B, mean[c]));
    }
    ca[c] = static_cast<A>(k);
    cb[c] = static_cast<A>(B);
    cc[c] = static_cast<A>(Cc);
    gw[c] = __dmul_rn(sgx[c], inv);
    gb[c] = sg[c];
  }
}

// grad_input = a[p] g + b[q] x + c[q] with p = (i / S) % P and q = p / Q.
template <typename T>
__global__ void axpbypc_kernel(const T* g, const T* x, T* out, int64_t n, int64_t S, int64_t P, int64_t Q,
                               const opmath_t<T>* a, const opmath_t<T>* b, const opmath_t<T>* c) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t p = (i / S) % P, q = p / Q;
    out[i] = cvt<T>(a[p] * cvt<opmath_t<T>>(g[i]) + b[q] * cvt<opmath_t<T>>(x[i]) + c[q]);
  }
}

// Group norm per row r = (n, group): the statistics (in the input's dtype) and the per-plane
// scale and shift of its D channels.
template <typename T>
__global__ void gn_finalize_kernel(const double* mu, const double* m2, int64_t R, int64_t group, int64_t D, double K,
                                   double eps, const double* w, const double* b, T* mean, T* rstd,
                                   opmath_t<T>* scale, opmath_t<T>* shift) {
  using A = opmath_t<T>;
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < R;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double m = mu[r];
    const double rs = 1.0 / ::sqrt(m2[r] / K + eps);
    mean[r] = cvt<T>(static_cast<A>(m));
    rstd[r] = cvt<T>(static_cast<A>(rs));
    const int64_t c0 = (r % group) * D;
    for (int64_t j = 0; j < D; ++j) {
      const double sc = __dmul_rn(rs, w ? w[c0 + j] : 1.0);
      scale[r * D + j] = static_cast<A>(sc);
      shift[r * D + j] = static_cast<A>(__dsub_rn(b ? b[c0 + j] : 0.0, __dmul_rn(m, sc)));
    }
  }
}

// Group norm backward per row: the per-plane a = s w[c] and the row's b and c of grad_input.
template <typename A>
__global__ void gn_backward_rows_kernel(const double* mu, const double* rs, const double* sg, const double* sgx,
                                        const double* w, int64_t R, int64_t group, int64_t D, double K, A* ca, A* cb,
                                        A* cc) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < R;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c0 = (r % group) * D;
    const double m = mu[r], s = rs[r];
    double a = 0, b = 0;
    for (int64_t j = 0; j < D; ++j) {
      const double wj = w ? w[c0 + j] : 1.0;
      a = __dadd_rn(a, __dmul_rn(wj, sg[r * D + j]));
      b = __dadd_rn(b, __dmul_rn(wj, sgx[r * D + j]));
      ca[r * D + j] = static_cast<A>(__dmul_rn(s, wj));
    }
    const double B = __dmul_rn(__dmul_rn(__dmul_rn(-s, s), s), b) / K;
    cb[r] = static_cast<A>(B);
    cc[r] = static_cast<A>(__dsub_rn(__dmul_rn(-s, a) / K, __dmul_rn(B, m)));
  }
}

// Group norm's parameter gradients per channel: sums over the batch of the plane sums.
__global__ void gn_param_grads_kernel(const double* sg, const double* sgx, const double* rs, int64_t N, int64_t C,
                                      int64_t group, int64_t D, double* gw, double* gb) {
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < C;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double w = 0, b = 0;
    for (int64_t n = 0; n < N; ++n) {
      w = __dadd_rn(w, __dmul_rn(sgx[n * C + c], rs[n * group + c / D]));
      b = __dadd_rn(b, sg[n * C + c]);
    }
    gw[c] = w;
    gb[c] = b;
  }
}

// ---- host helpers ----

// The device of the first argument not on the CPU (CPU 0-d tensors may join a CUDA op).
Device device_of(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    if (*t && (*t)->device().type != DeviceType::CPU) return (*t)->device();
  }
  return (**ts.begin())->device();
}

// t's values as a contiguous float64 tensor on dev (null stays null).
Tensor doubles_on(const Tensor& t, const Device& dev) {
  return t ? contiguous_in(to_device(t, dev), ScalarType::Float64) : Tensor();
}

// dst (any float dtype, any strides) = src (contiguous float64 of dst's numel), each value
// rounded through the opmath type as the CPU's from_doubles does.
template <typename T> void store_doubles_t(const char* op, const Tensor& src, const Tensor& dst) {
  Tensor s = make_view(src, dst->sizes(), contiguous_strides(dst->sizes()), src->offset());
  launch_elementwise<2>(op, dst->device(), dst->sizes(), {dst.get(), s.get()},
                        [] __device__(char** base, const int64_t* off) {
                          const double v = *reinterpret_cast<const double*>(base[1] + off[1]);
                          *reinterpret_cast<T*>(base[0] + off[0]) = cvt<T>(static_cast<opmath_t<T>>(v));
                        });
}
void store_doubles(const char* op, const Tensor& src, const Tensor& dst) {
  if (dst->numel() == 0) return;
  if (dst->device().type == DeviceType::CPU) {  // a CPU 0-d running statistic
    Tensor tmp = ember::empty(dst->sizes(), dst->dtype(), src->device());
    store_doubles(op, src, tmp);
    ops::copy(dst, tmp, false, dst);
    return;
  }
  dispatch_device_float(dst->dtype(), op, [&](auto tag) { store_doubles_t<decltype(tag)>(op, src, dst); });
}
// A new (n,) tensor of dtype on dev with src's values.
Tensor from_doubles(const char* op, const Tensor& src, int64_t n, ScalarType dtype, const Device& dev) {
  Tensor t = ember::empty({n}, dtype, dev);
  store_doubles(op, src, t);
  return t;
}

ScalarType opmath_dtype(ScalarType input) {
  return input == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
}

template <typename T> const T* cptr(const Tensor& t) { return reinterpret_cast<const T*>(t->data_ptr()); }
template <typename T> T* mptr(const Tensor& t) { return reinterpret_cast<T*>(t->data_ptr()); }

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     const Tensor& running_mean, const Tensor& running_var,
                                                     bool training, double momentum, double eps) {
  const char* op = "native_batch_norm";
  const BatchNormMeta bm = native_batch_norm_meta(input, weight, bias, running_mean, running_var, training);
  const int64_t N = bm.N, C = bm.C, S = bm.S, M = bm.M;
  const Device dev = device_of({&input, &weight, &bias, &running_mean, &running_var});
  const ScalarType dt = input->dtype(), adt = opmath_dtype(dt);
  Tensor x = contiguous_in(to_device(input, dev), dt);
  Tensor out = ember::empty(input->sizes(), dt, dev);
  Tensor w = doubles_on(weight, dev), b = doubles_on(bias, dev);
  Tensor scale = ember::empty({C}, adt, dev), shift = ember::empty({C}, adt, dev);
  Tensor mean = ember::empty({C}, ScalarType::Float64, dev), invstd = ember::empty({C}, ScalarType::Float64, dev);
  dispatch_device_float(dt, op, [&](auto tag) {
    using T = decltype(tag);
    using A = cuda_engine::opmath_t<T>;
    const T* px = cptr<T>(x);
    if (training) {
      // statistic c: N segments of S values, segment n at (n * C + c) * S
      const StatLayout l{C, N, S, C * S, S, 1};
      Tensor m2 = ember::empty({C}, ScalarType::Float64, dev);
      stat_sums<StatMode::Sum, T>(op, dev, px, nullptr, Tensor(), l, static_cast<double>(M), mean, Tensor());
      stat_sums<StatMode::SqDev, T>(op, dev, px, nullptr, mean, l, 1.0, m2, Tensor());
      Tensor rm = doubles_on(running_mean, dev), rv = doubles_on(running_var, dev);
      Tensor new_rm = rm ? ember::empty({C}, ScalarType::Float64, dev) : Tensor();
      Tensor new_rv = rv ? ember::empty({C}, ScalarType::Float64, dev) : Tensor();
      if (C > 0) {
        CurrentDevice guard(dev.index);
        bn_train_finalize_kernel<A><<<blocks_for(C), kThreads, 0, stream_of(dev)>>>(
            dptr(mean), dptr(m2), C, static_cast<double>(M), eps, dptr(w), dptr(b), dptr(rm), dptr(rv), momentum,
            mptr<A>(scale), mptr<A>(shift), dptr_mut(invstd), dptr_mut(new_rm), dptr_mut(new_rv));
        check_launch(op);
      }
      if (running_mean) store_doubles(op, new_rm, running_mean);
      if (running_var) store_doubles(op, new_rv, running_var);
    } else if (C > 0) {
      Tensor rm = doubles_on(running_mean, dev), rv = doubles_on(running_var, dev);
      CurrentDevice guard(dev.index);
      bn_eval_finalize_kernel<A><<<blocks_for(C), kThreads, 0, stream_of(dev)>>>(
          dptr(rm), dptr(rv), C, eps, dptr(w), dptr(b), mptr<A>(scale), mptr<A>(shift));
      check_launch(op);
    }
    const int64_t n = out->numel();
    if (n > 0) {
      CurrentDevice guard(dev.index);
      affine_kernel<T><<<blocks_for(n), kThreads, 0, stream_of(dev)>>>(px, mptr<T>(out), n, S, C, cptr<A>(scale),
                                                                       cptr<A>(shift));
      check_launch(op);
    }
  });
  const ScalarType sdt = bm.stat_dtype;
  if (!training) return {out, ember::empty({0}, sdt, dev), ember::empty({0}, sdt, dev)};
  return {out, from_doubles(op, mean, C, sdt, dev), from_doubles(op, invstd, C, sdt, dev)};
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& weight, const Tensor& running_mean,
                                                              const Tensor& running_var, const Tensor& save_mean,
                                                              const Tensor& save_invstd, bool train, double eps) {
  const char* op = "native_batch_norm_backward";
  const BatchNormMeta bm = native_batch_norm_backward_meta(grad_out, input, weight, running_mean, running_var,
                                                           save_mean, save_invstd, train);
  const int64_t N = bm.N, C = bm.C, S = bm.S, M = bm.M;
  const Device dev = device_of({&input, &grad_out, &weight, &running_mean, &running_var, &save_mean, &save_invstd});
  const ScalarType dt = input->dtype(), adt = opmath_dtype(dt);
  Tensor mean = doubles_on(train ? save_mean : running_mean, dev);
  Tensor var = doubles_on(train ? save_invstd : running_var, dev);
  Tensor w = doubles_on(weight, dev);
  Tensor gi = ember::empty(input->sizes(), dt, dev);
  Tensor sg = ember::empty({C}, ScalarType::Float64, dev), sgx = ember::empty({C}, ScalarType::Float64, dev);
  Tensor gw = ember::empty({C}, ScalarType::Float64, dev), gb = ember::empty({C}, ScalarType::Float64, dev);
  Tensor ca = ember::empty({C}, adt, dev), cb = ember::empty({C}, adt, dev), cc = ember::empty({C}, adt, dev);
  dispatch_device_float(dt, op, [&](auto tag) {
    using T = decltype(tag);
    using A = cuda_engine::opmath_t<T>;
    Tensor g = contiguous_in(to_device(grad_out, dev), dt), x = contiguous_in(to_device(input, dev), dt);
    const int64_t n = gi->numel();
    if (n > 0) {
      const StatLayout l{C, N, S, C * S, S, 1};
      stat_sums<StatMode::Grad, T>(op, dev, cptr<T>(x), cptr<T>(g), mean, l, 1.0, sg, sgx);
    } else {
      ops::zero(sg, sg);
      ops::zero(sgx, sgx);
    }
    CurrentDevice guard(dev.index);
    cudaStream_t stream = stream_of(dev);
    if (C > 0) {
      bn_backward_finalize_kernel<A><<<blocks_for(C), kThreads, 0, stream>>>(
          dptr(mean), dptr(var), dptr(sg), dptr(sgx), dptr(w), C, static_cast<double>(M), train, eps, mptr<A>(ca),
          mptr<A>(cb), mptr<A>(cc), dptr_mut(gw), dptr_mut(gb));
      check_launch(op);
    }
    if (n > 0) {
      axpbypc_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(cptr<T>(g), cptr<T>(x), mptr<T>(gi), n, S, C, 1,
                                                                cptr<A>(ca), cptr<A>(cb), cptr<A>(cc));
      check_launch(op);
    }
  });
  const ScalarType pdt = bm.stat_dtype;
  if (!weight) return {gi, ember::empty({0}, pdt, dev), ember::empty({0}, pdt, dev)};
  return {gi, from_doubles(op, gw, C, pdt, dev), from_doubles(op, gb, C, pdt, dev)};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     int64_t N, int64_t C, int64_t HxW, int64_t group, double eps) {
  const char* op = "native_group_norm";
  native_group_norm_meta(input, weight, bias, N, C, HxW, group);
  const int64_t D = C / group, K = D * HxW, R = N * group;
  const Device dev = device_of({&input, &weight, &bias});
  const ScalarType dt = input->dtype(), adt = opmath_dtype(dt);
  Tensor out = ember::empty(input->sizes(), dt, dev);
  Tensor mean = ember::empty({N, group}, dt, dev), rstd = ember::empty({N, group}, dt, dev);
  if (R == 0) return {out, mean, rstd};
  Tensor w = doubles_on(weight, dev), b = doubles_on(bias, dev);
  Tensor x = contiguous_in(to_device(input, dev), dt);
  Tensor mu = ember::empty({R}, ScalarType::Float64, dev), m2 = ember::empty({R}, ScalarType::Float64, dev);
  Tensor scale = ember::empty({N * C}, adt, dev), shift = ember::empty({N * C}, adt, dev);
  dispatch_device_float(dt, op, [&](auto tag) {
    using T = decltype(tag);
    using A = cuda_engine::opmath_t<T>;
    const T* px = cptr<T>(x);
    const StatLayout l{R, 1, K, 0, K, 1};  // row r: K contiguous values at r * K
    stat_sums<StatMode::Sum, T>(op, dev, px, nullptr, Tensor(), l, K ? static_cast<double>(K) : 1.0, mu, Tensor());
    stat_sums<StatMode::SqDev, T>(op, dev, px, nullptr, mu, l, 1.0, m2, Tensor());
    CurrentDevice guard(dev.index);
    cudaStream_t stream = stream_of(dev);
    gn_finalize_kernel<T><<<blocks_for(R), kThreads, 0, stream>>>(dptr(mu), dptr(m2), R, group, D,
                                                                  static_cast<double>(K), eps, dptr(w), dptr(b),
                                                                  mptr<T>(mean), mptr<T>(rstd), mptr<A>(scale),
                                                                  mptr<A>(shift));
    check_launch(op);
    const int64_t n = out->numel();
    if (n > 0) {
      affine_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(px, mptr<T>(out), n, HxW, N * C, cptr<A>(scale),
                                                               cptr<A>(shift));
      check_launch(op);
    }
  });
  return {out, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& mean, const Tensor& rstd,
                                                              const Tensor& weight, int64_t N, int64_t C,
                                                              int64_t HxW, int64_t group) {
  const char* op = "native_group_norm_backward";
  native_group_norm_backward_meta(grad_out, input, mean, rstd, weight, N, C, HxW, group);
  const int64_t D = C / group, K = D * HxW, R = N * group;
  const Device dev = device_of({&input, &grad_out, &mean, &rstd, &weight});
  const ScalarType dt = input->dtype(), adt = opmath_dtype(dt);
  Tensor mu = doubles_on(mean, dev), rs = doubles_on(rstd, dev), w = doubles_on(weight, dev);
  Tensor gi = ember::empty(input->sizes(), dt, dev);
  // per plane (n, c): sum(g), sum(g * (x - mean))
  Tensor sg = ember::empty({N * C}, ScalarType::Float64, dev), sgx = ember::empty({N * C}, ScalarType::Float64, dev);
  Tensor gw = ember::empty({C}, ScalarType::Float64, dev), gb = ember::empty({C}, ScalarType::Float64, dev);
  dispatch_device_float(dt, op, [&](auto tag) {
    using T = decltype(tag);
    using A = cuda_engine::opmath_t<T>;
    Tensor g = contiguous_in(to_device(grad_out, dev), dt), x = contiguous_in(to_device(input, dev), dt);
    const int64_t n = gi->numel();
    if (n > 0) {
      const StatLayout l{N * C, 1, HxW, 0, HxW, D};  // plane p: HxW values at p * HxW, row p / D
      stat_sums<StatMode::Grad, T>(op, dev, cptr<T>(x), cptr<T>(g), mu, l, 1.0, sg, sgx);
    } else if (N * C > 0) {
      ops::zero(sg, sg);
      ops::zero(sgx, sgx);
    }
    CurrentDevice guard(dev.index);
    cudaStream_t stream = stream_of(dev);
    if (n > 0) {
      Tensor ca = ember::empty({N * C}, adt, dev), cb = ember::empty({R}, adt, dev), cc = ember::empty({R}, adt, dev);
      gn_backward_rows_kernel<A><<<blocks_for(R), kThreads, 0, stream>>>(dptr(mu), dptr(rs), dptr(sg), dptr(sgx),
                                                                         dptr(w), R, group, D, static_cast<double>(K),
                                                                         mptr<A>(ca), mptr<A>(cb), mptr<A>(cc));
      check_launch(op);
      axpbypc_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(cptr<T>(g), cptr<T>(x), mptr<T>(gi), n, HxW, N * C,
                                                                D, cptr<A>(ca), cptr<A>(cb), cptr<A>(cc));
      check_launch(op);
    }
    if (weight && C > 0) {
      gn_param_grads_kernel<<<blocks_for(C), kThreads, 0, stream>>>(dptr(sg), dptr(sgx), dptr(rs), N, C, group, D,
                                                                    dptr_mut(gw), dptr_mut(gb));
      check_launch(op);
    }
  });
  const ScalarType pdt = weight ? weight->dtype() : dt;
  if (!weight) return {gi, ember::empty({0}, pdt, dev), ember::empty({0}, pdt, dev)};
  return {gi, from_doubles(op, gw, C, pdt, dev), from_doubles(op, gb, C, pdt, dev)};
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(native_batch_norm);
EMBER_REGISTER_CUDA_KERNEL(native_batch_norm_backward);
EMBER_REGISTER_CUDA_KERNEL(native_group_norm);
EMBER_REGISTER_CUDA_KERNEL(native_group_norm_backward);
