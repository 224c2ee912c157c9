// The CUDA reduction engine. A reduction of a tensor over some of its dims sees the input as
// [O, K, I]: O the outer kept dims, K the reduced dims, I the inner kept dims, each group one
// strided dim (plan_reduce finds such a view of the tensor as it lies, and makes a contiguous
// copy only when there is none). Output element r = o * I + i; the result is contiguous.
//
// What is reduced is a "reducer", a small struct of __device__ const members:
//
//   using acc_t                           the accumulator: trivially copyable (it lives in
//                                         shared memory and moves through warp shuffles)
//   acc_t identity()                      the value of an empty reduction
//   acc_t step(acc_t a, In x, int64_t k)  folds element x, at position k along K, into a (the
//                                         per-element transform and the combine in one)
//   acc_t combine(acc_t a, acc_t b)       merges two partial results; the engine merges them
//                                         in any order and grouping, so combine must not
//                                         depend on it beyond rounding (argmax breaks ties by
//                                         the index it carries)
//   void write(int64_t r, acc_t a)        the final projection: stores output element r
//
// Launch strategies (launch_reduce chooses by shape and the device's SM count):
//  - I == 1 (rows) and K > 32: a warp per row up to K = 512, else a block per row, threads
//    striding along the row, merged by warp shuffles and a shared-memory tree.
//  - otherwise (columns, or rows of at most 32 elements): a block of bx x by threads, x over
//    consecutive outputs (coalesced along I), y splitting K; the by partials are merged in
//    shared memory. Thread-per-output when there are outputs enough.
//  - when both leave the GPU idle (few outputs, long K), K is split across G blocks as well:
//    the first pass writes G partial accumulators per output to a temporary, a second pass
//    (the column kernel over the [G, O * I] partials) combines them and writes the results.
// All on the current stream of the input's device, no synchronisation, int64 indexing.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <vector>

#include "ember/backends/cuda/elementwise.cuh"

namespace ember::cuda_engine {

constexpr unsigned kFullMask = 0xffffffffu;

template <typename T> __device__ __forceinline__ bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

// The larger (smaller) of a running result a and b; a NaN on either side sticks.
template <typename A> __device__ __forceinline__ A nan_max(A a, A b) { return (b > a || is_nan(b)) ? b : a; }
template <typename A> __device__ __forceinline__ A nan_min(A a, A b) { return (b < a || is_nan(b)) ? b : a; }

// Device math of float and double by overload (the opmath types).
__device__ __forceinline__ float exp_of(float x) { return ::expf(x); }
__device__ __forceinline__ double exp_of(double x) { return ::exp(x); }
__device__ __forceinline__ float log_of(float x) { return ::logf(x); }
__device__ __forceinline__ double log_of(double x) { return ::log(x); }
__device__ __forceinline__ float sqrt_of(float x) { return ::sqrtf(x); }
__device__ __forceinline__ double sqrt_of(double x) { return ::sqrt(x); }
__device__ __forceinline__ float abs_of(float x) { return ::fabsf(x); }
__device__ __forceinline__ double abs_of(double x) { return ::fabs(x); }
__device__ __forceinline__ float pow_of(float x, float y) { return ::powf(x, y); }
__device__ __forceinline__ double pow_of(double x, double y) { return ::pow(x, y); }
__device__ __forceinline__ bool finite(float x) { return ::isfinite(x); }
__device__ __forceinline__ bool finite(double x) { return ::isfinite(x); }

// Warp shuffles of any accumulator: arithmetic types directly, structs word by word.
template <typename A> __device__ __forceinline__ A shfl_down(A v, int o) {
  if constexpr (std::is_arithmetic_v<A>) {
    if constexpr (sizeof(A) < 4) return static_cast<A>(__shfl_down_sync(kFullMask, static_cast<int>(v), o));
    else return __shfl_down_sync(kFullMask, v, o);
  } else {
    static_assert(sizeof(A) % sizeof(int) == 0, "a struct accumulator must be a whole number of words");
    int w[sizeof(A) / sizeof(int)];
    memcpy(w, &v, sizeof(A));
#pragma unroll
    for (int j = 0; j < static_cast<int>(sizeof(A) / sizeof(int)); ++j) w[j] = __shfl_down_sync(kFullMask, w[j], o);
    A r;
    memcpy(&r, w, sizeof(A));
    return r;
  }
}
template <typename A> __device__ __forceinline__ A shfl_up(A v, int o) {
  if constexpr (sizeof(A) < 4) {
    return static_cast<A>(__shfl_up_sync(kFullMask, static_cast<int>(v), o));
  } else {
    return __shfl_up_sync(kFullMask, v, o);
  }
}

// Lane 0 gets the combination of the warp's 32 values.
template <typename A, typename Op> __device__ __forceinline__ A warp_reduce(A v, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, shfl_down(v, o));
  return v;
}

// Reduces v over the block (blockDim.x a multiple of 32, at most 1024, blockDim.y 1); every
// thread gets the result. sh: 33 slots of shared memory.
template <typename A, typename Op> __device__ A block_reduce(A v, Op op, A* sh) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warp_reduce(v, op);
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

// Exclusive scan of one value per thread over the block (blockDim.x a multiple of 32, at most
// 1024, blockDim.y 1): thread t gets op(v_0, ..., v_{t-1}) (identity for thread 0), `total`
// the whole block's. op need not commute; the values are combined in thread order. sh: 33
// slots of shared memory.
template <typename A, typename Op> __device__ A block_exclusive_scan(A v, Op op, A identity, A* sh, A& total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const A y = shfl_up(v, o);
    if (lane >= o) v = op(y, v);
  }
  A excl = shfl_up(v, 1);
  if (lane == 0) excl = identity;
  if (lane == 31) sh[warp] = v;
  __syncthreads();
  if (warp == 0) {
    A w = lane < nw ? sh[lane] : identity;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const A y = shfl_up(w, o);
      if (lane >= o) w = op(y, w);
    }
    sh[lane] = w;  // the inclusive prefix of the warps' totals
  }
  __syncthreads();
  if (warp > 0) excl = op(sh[warp - 1], excl);
  total = sh[nw - 1];
  __syncthreads();  // sh is free again
  return excl;
}

// ---- geometry ----

// The input as [O, K, I] with element strides; outputs O * I.
struct ReduceGeom {
  int64_t O = 1, K = 1, I = 1;
  int64_t so = 0, sk = 0, si = 0;
};

// The tensor the kernels read (x itself, or a contiguous copy) and its geometry.
struct ReducePlan {
  Tensor src;
  ReduceGeom g;
};

// x reduced over `dims` (wrapped, distinct). any_order: the reduction does not care in which
// order the reduced elements come (everything but the arg reductions, whose k is the flat
// index in the reduced dims' logical order), so the reduced dims may be taken by stride.
inline ReducePlan plan_reduce(const Tensor& x, const std::vector<int64_t>& dims, bool any_order) {
  struct Dim {
    int64_t size, stride;
  };
  const int64_t nd = x->dim();
  std::vector<char> red(static_cast<size_t>(nd), 0);
  for (int64_t d : dims) red[static_cast<size_t>(d)] = 1;
  std::vector<Dim> kept, reduced;  // size-1 dims left out: they do not move an index
  Shape perm_kept, perm_red;
  int64_t R = 1, K = 1;
  for (int64_t d = 0; d < nd; ++d) {
    const Dim v{x->size(d), x->strides()[static_cast<size_t>(d)]};
    if (red[static_cast<size_t>(d)]) {
      K *= v.size;
      perm_red.push_back(d);
      if (v.size != 1) reduced.push_back(v);
    } else {
      R *= v.size;
      perm_kept.push_back(d);
      if (v.size != 1) kept.push_back(v);
    }
  }
  ReducePlan P;
  P.src = x;
  P.g.O = R;
  P.g.K = K;
  if (R == 0 || K == 0) return P;
  if (any_order) {
    std::stable_sort(reduced.begin(), reduced.end(), [](const Dim& a, const Dim& b) { return a.stride > b.stride; });
  }
  // dims [b, e) as one strided dim, when they are
  auto collapse = [](const Dim* b, const Dim* e, int64_t& size, int64_t& stride) {
    size = 1;
    stride = 0;
    if (b == e) return true;
    for (const Dim* p = b; p + 1 < e; ++p) {
      if (p->stride != (p + 1)->stride * (p + 1)->size) return false;
    }
    for (const Dim* p = b; p < e; ++p) size *= p->size;
    stride = (e - 1)->stride;
    return true;
  };
  int64_t Kc, sk;
  if (collapse(reduced.data(), reduced.data() + reduced.size(), Kc, sk)) {
    // the kept dims split into outer and inner: prefer contiguous rows, then unit-stride columns
    // (the widest), then any strided view
    int best = 0;
    for (size_t s = 0; s <= kept.size(); ++s) {
      int64_t O, so, I, si;
      if (!collapse(kept.data(), kept.data() + s, O, so) ||
          !collapse(kept.data() + s, kept.data() + kept.size(), I, si)) {
        continue;
      }
      const int score = (I == 1 && sk == 1) ? 3 : (I > 1 && si == 1) ? 2 : 1;
      if (score > best || (score == best && I > P.g.I)) {
        best = score;
        P.g = ReduceGeom{O, K, I, so, sk, si};
      }
    }
    if (best > 0) return P;
  }
  Shape perm = perm_kept;
  perm.insert(perm.end(), perm_red.begin(), perm_red.end());
  P.src = contiguous_in(ops::permute(x, perm), x->dtype());
  P.g = ReduceGeom{R, K, 1, K, 1, 0};
  return P;
}

// The result tensor of a reduction: out itself when contiguous, of the shape and dtype, and
// not sharing self's storage; else a fresh one (finish_out copies it into out).
inline Tensor reduction_result(const Tensor& self, const Tensor& out, const Shape& shape, ScalarType dtype) {
  if (out && out->device() == self->device() && out->storage() != self->storage() && out->sizes() == shape &&
      out->dtype() == dtype && out->is_contiguous()) {
    return out;
  }
  return ember::empty(shape, dtype, self->device());
}

// The number of SMs of a device (cached).
inline int sm_count(int device) {
  static std::atomic<int> cache[64];
  if (device < 0 || device >= 64) return 80;
  int n = cache[device].load(std::memory_order_relaxed);
  if (n > 0) return n;
  if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || n <= 0) {
    cudaGetLastError();
    n = 80;
  }
  cache[device].store(n, std::memory_order_relaxed);
  return n;
}

// ---- kernels ----

// Folds elements k, k + step, ... below k1 of p (stride sk) into a, four loads in flight.
// Partials: p holds accumulators, merged with combine.
template <bool Partials, typename Op, typename In>
__device__ __forceinline__ typename Op::acc_t fold_strided(const Op& op, typename Op::acc_t a, const In* p, int64_t sk,
                                                          int64_t k, int64_t k1, int64_t step) {
  for (; k + 3 * step < k1; k += 4 * step) {
    const In x0 = p[k * sk], x1 = p[(k + step) * sk], x2 = p[(k + 2 * step) * sk], x3 = p[(k + 3 * step) * sk];
    if constexpr (Partials) {
      a = op.combine(op.combine(a, x0), x1);
      a = op.combine(op.combine(a, x2), x3);
    } else {
      a = op.step(a, x0, k);
      a = op.step(a, x1, k + step);
      a = op.step(a, x2, k + 2 * step);
      a = op.step(a, x3, k + 3 * step);
    }
  }
  for (; k < k1; k += step) {
    if constexpr (Partials) a = op.combine(a, p[k * sk]);
    else a = op.step(a, p[k * sk], k);
  }
  return a;
}

// A block per (output, group of K): items O * I * G; group g covers [g * chunk, (g + 1) * chunk).
// G > 1: partial[g * R + r] gets the accumulator, else the reducer writes r.
template <typename Op, typename In>
__global__ void reduce_block_rows_kernel(Op op, const In* in, ReduceGeom g, int64_t G, int64_t chunk,
                                         typename Op::acc_t* partial) {
  using A = typename Op::acc_t;
  __shared__ A sh[33];
  const int64_t R = g.O * g.I;
  for (int64_t b = blockIdx.x; b < R * G; b += gridDim.x) {
    const int64_t r = b / G, grp = b % G;
    const int64_t k0 = grp * chunk, k1 = min(g.K, k0 + chunk);
    const In* p = in + (r / g.I) * g.so + (r % g.I) * g.si;
    A a = fold_strided<false>(op, op.identity(), p, g.sk, k0 + threadIdx.x, k1, blockDim.x);
    a = block_reduce(a, [&](A x, A y) { return op.combine(x, y); }, sh);
    if (threadIdx.x == 0) {
      if (G > 1) partial[grp * R + r] = a;
      else op.write(r, a);
    }
  }
}

// A warp per output (blockDim (32, W)), for rows of up to a few hundred elements.
template <typename Op, typename In> __global__ void reduce_warp_rows_kernel(Op op, const In* in, ReduceGeom g) {
  using A = typename Op::acc_t;
  const int64_t R = g.O * g.I;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.y;
  for (int64_t base = first; base < R; base += static_cast<int64_t>(gridDim.x) * blockDim.y) {
    const int64_t r = base + threadIdx.y;
    if (r >= R) break;  // whole warps leave together
    const In* p = in + (r / g.I) * g.so + (r % g.I) * g.si;
    A a = fold_strided<false>(op, op.identity(), p, g.sk, threadIdx.x, g.K, 32);
    a = warp_reduce(a, [&](A x, A y) { return op.combine(x, y); });
    if (threadIdx.x == 0) op.write(r, a);
  }
}

// Blocks of (bx, by) threads: x over consecutive outputs, y over K (power of two), merged in
// dynamic shared memory of bx * by accumulators. Items: ceil(R / bx) * G. Partials: `in` holds
// accumulators (the second pass).
template <typename Op, typename In, bool Partials>
__global__ void reduce_columns_kernel(Op op, const In* in, ReduceGeom g, int64_t G, int64_t chunk,
                                      typename Op::acc_t* partial) {
  using A = typename Op::acc_t;
  extern __shared__ __align__(16) unsigned char reduce_smem[];
  A* sh = reinterpret_cast<A*>(reduce_smem);
  const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  const int64_t R = g.O * g.I;
  const int64_t rblocks = (R + bx - 1) / bx;
  for (int64_t b = blockIdx.x; b < rblocks * G; b += gridDim.x) {
    const int64_t grp = b / rblocks, r = (b % rblocks) * bx + tx;
    const int64_t k0 = grp * chunk, k1 = min(g.K, k0 + chunk);
    A a = op.identity();
    if (r < R) {
      const In* p = in + (r / g.I) * g.so + (r % g.I) * g.si;
      a = fold_strided<Partials>(op, a, p, g.sk, k0 + ty, k1, by);
    }
    if (by > 1) {
      sh[ty * bx + tx] = a;
      __syncthreads();
      for (int s = by / 2; s > 0; s >>= 1) {
        if (ty < s) sh[ty * bx + tx] = op.combine(sh[ty * bx + tx], sh[(ty + s) * bx + tx]);
        __syncthreads();
      }
      a = sh[tx];
      __syncthreads();  // sh is free again
    }
    if (ty == 0 && r < R) {
      if (G > 1) partial[grp * R + r] = a;
      else op.write(r, a);
    }
  }
}

// Every output of an empty reduction (K == 0): the identity, projected.
template <typename Op> __global__ void reduce_identity_kernel(Op op, int64_t R) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < R;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    op.write(r, op.identity());
  }
}

// ---- launching ----

constexpr int64_t kMinPerThread = 32;  // elements a thread folds at least before K is split across blocks
constexpr int64_t kMaxGroups = 1024;
constexpr int64_t kMaxGrid = int64_t(1) << 20;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int next_pow2(int64_t n) {
  int p = 1;
  while (p < n && p < (1 << 30)) p <<= 1;
  return p;
}
inline unsigned grid_for(int64_t items) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(items, kMaxGrid)));
}

// K split into groups of `chunk` elements (a multiple of `align`) when R * threads_per_output
// threads leave the device idle; G == 1 otherwise.
inline void split_k(int64_t K, int64_t R, int64_t threads_per_output, int64_t target, int64_t align, int64_t& G,
                    int64_t& chunk) {
  G = 1;
  chunk = K;
  const int64_t busy = R * threads_per_output;
  if (busy >= target) return;
  const int64_t want = std::min({ceil_div(target, busy), ceil_div(K, threads_per_output * kMinPerThread), kMaxGroups});
  if (want <= 1) return;
  chunk = ceil_div(ceil_div(K, want), align) * align;
  G = ceil_div(K, chunk);
}

// The column kernel's block shape for R outputs of K elements.
inline void column_block(int64_t R, int64_t K, int64_t target, int& bx, int& by) {
  bx = R >= 32 ? 32 : next_pow2(R);
  by = 1;
  while (bx * by * 2 <= 512 && R * by * 2 <= target && K >= by * 2 * 4) by *= 2;
  if (by == 1) bx = std::min(256, next_pow2(R));
}

template <typename Op, typename In, bool Partials>
void launch_columns(const Op& op, const In* in, const ReduceGeom& g, int64_t G, int64_t chunk,
                    typename Op::acc_t* partial, int bx, int by, cudaStream_t stream) {
  const int64_t items = ceil_div(g.O * g.I, bx) * G;
  const size_t smem = by > 1 ? static_cast<size_t>(bx) * by * sizeof(typename Op::acc_t) : 0;
  reduce_columns_kernel<Op, In, Partials>
      <<<grid_for(items), dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by)), smem, stream>>>(op, in, g, G,
                                                                                                     chunk, partial);
}

// Reduces in (of device type In, laid out as g) with op on device's current stream.
template <typename Op, typename In>
void launch_reduce(const char* name, const Device& device, const Op& op, const In* in, const ReduceGeom& g) {
  using A = typename Op::acc_t;
  const int64_t R = g.O * g.I;
  if (R == 0) return;
  CurrentDevice guard(device.index);
  const cudaStream_t stream = stream_of(device);
  if (g.K == 0) {
    reduce_identity_kernel<<<blocks_for(R), kThreads, 0, stream>>>(op, R);
    check_launch(name);
    return;
  }
  const int64_t target = static_cast<int64_t>(sm_count(device.index)) * 2048;  // threads that fill the device
  int64_t G = 1, chunk = g.K;
  Tensor buffer;
  A* partial = nullptr;
  auto make_partials = [&] {
    buffer = ember::empty({G * R * static_cast<int64_t>(sizeof(A))}, ScalarType::UInt8, device);
    partial = reinterpret_cast<A*>(buffer->data_ptr());
  };
  if (g.I == 1 && g.K > 32 && g.K <= 512) {
    constexpr int W = 8;
    reduce_warp_rows_kernel<<<grid_for(ceil_div(R, W)), dim3(32, W), 0, stream>>>(op, in, g);
  } else if (g.I == 1 && g.K > 32) {
    constexpr int T = 256;
    split_k(g.K, R, T, target, T, G, chunk);
    if (G > 1) make_partials();
    reduce_block_rows_kernel<<<grid_for(R * G), T, 0, stream>>>(op, in, g, G, chunk, partial);
  } else {
    int bx, by;
    column_block(R, g.K, target, bx, by);
    split_k(g.K, R, by, target, by, G, chunk);
    if (G > 1) make_partials();
    launch_columns<Op, In, false>(op, in, g, G, chunk, partial, bx, by, stream);
  }
  check_launch(name);
  if (G > 1) {  // combine the [G, R] partials
    const ReduceGeom pg{1, G, R, 0, R, 1};
    int bx, by;
    column_block(R, G, target, bx, by);
    launch_columns<Op, A, true>(op, partial, pg, 1, G, nullptr, bx, by, stream);
    check_launch(name);
  }
}

// Runs op over a plan whose source has device type In.
template <typename In, typename Op> void run_reduce(const char* name, const ReducePlan& P, const Op& op) {
  launch_reduce(name, P.src->device(), op, reinterpret_cast<const In*>(P.src->data_ptr()), P.g);
}

}  // namespace ember::cuda_engine
