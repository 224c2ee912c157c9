// CUDA kernels of the accumulating reductions (sum, mean, prod, all, any, var, std, norm,
// logsumexp) on the engine of reduce.cuh, and of the scans cumsum and cumprod. Each mirrors its
// CPU kernel in reduce_cpu.cpp: the argument checks, dims, result shapes and dtypes come from the
// meta functions of reduce_meta.h that both call, and the values accumulate in the CPU's
// types:
//  - sum / mean / prod: int64 for bool and integers, float for float16 / bfloat16 / float32,
//    double for float64; mean divides the sum in double. An empty sum is 0, an empty product 1,
//    an empty mean NaN.
//  - var / std: count, mean and sum of squared deviations in double (Welford per thread,
//    partial results merged with Chan's formula), divided by the meta's degrees of freedom.
//  - norm, logsumexp: the opmath type (float for the 16-bit floats); logsumexp carries
//    (max, sum of exp(x - max)), and a non-finite max is the result by itself.
//  - all / any: bool (uint8 results for uint8 inputs).
//  - cumsum / cumprod: the CPU's scan accumulator: double for float32 / float64, float for the
//    16-bit floats, int64 for bool and integers.
// The values equal the CPU's up to the order of the floating-point operations (a tree here, a
// different tree there).
#include <cmath>
#include <limits>

#include "ember/backends/cuda/reduce.cuh"
#include "ember/ops/reduce/complex_parts.h"
#include "ember/ops/reduce/reduce_meta.h"
#include "ember/ops/reduce/reduce_functions.h"

namespace ember::cuda_engine {
namespace {

// ---------------------------------------------------------------------------------------------
// reducers: the math of reduce_functions.h (shared with the CPU), elements converted with cvt and
// results stored as reduce.cuh expects

template <typename T> using sum_acc_t = reducer::sum_acc_t<opmath_t<T>>;

// sum (Prod false) or product of T, stored as Out; Mean: divided by `divisor` in double.
template <typename T, typename Out, bool Prod, bool Mean> struct SumReducer : reducer::Sum<sum_acc_t<T>, Prod> {
  using M = reducer::Sum<sum_acc_t<T>, Prod>;
  using acc_t = typename M::acc_t;
  Out* out;
  double divisor;
  __device__ acc_t step(acc_t a, T x, int64_t) const { return M::step(a, cvt<acc_t>(x)); }
  __device__ void write(int64_t r, acc_t a) const {
    if constexpr (Mean) out[r] = cvt<Out>(M::mean(a, divisor));
    else out[r] = cvt<Out>(a);
  }
};

template <typename T, typename Out, bool All> struct AllAnyReducer : reducer::AllAny<All> {
  using M = reducer::AllAny<All>;
  using acc_t = bool;
  Out* out;
  __device__ acc_t step(acc_t a, T x, int64_t) const { return M::step(a, cvt<opmath_t<T>>(x) != opmath_t<T>(0)); }
  __device__ void write(int64_t r, acc_t a) const { out[r] = static_cast<Out>(a); }
};

template <typename T> struct VarReducer : reducer::Var {
  T* out;
  double dof;
  bool take_sqrt;
  __device__ acc_t step(acc_t a, T x, int64_t) const { return Var::step(a, cvt<double>(x)); }
  __device__ void write(int64_t r, acc_t a) const { out[r] = cvt<T>(result(a, dof, take_sqrt)); }
};

template <typename T, NormKind Kind> struct NormReducer : reducer::Norm<opmath_t<T>, Kind> {
  using M = reducer::Norm<opmath_t<T>, Kind>;
  using acc_t = opmath_t<T>;
  T* out;
  acc_t p;
  __device__ acc_t step(acc_t a, T x, int64_t) const { return M::step(a, cvt<acc_t>(x), p); }
  __device__ void write(int64_t r, acc_t a) const { out[r] = cvt<T>(M::result(a, p)); }
};

template <typename T> struct LogSumExpReducer : reducer::LogSumExp<opmath_t<T>> {
  using M = reducer::LogSumExp<opmath_t<T>>;
  using acc_t = typename M::acc_t;
  T* out;
  __device__ acc_t step(acc_t a, T x, int64_t) const { return M::step(a, cvt<opmath_t<T>>(x)); }
  __device__ void write(int64_t r, acc_t a) const { out[r] = cvt<T>(M::result(a)); }
};

// ---------------------------------------------------------------------------------------------
// the reductions

// self in dtype t (itself when it has it).

template <typename Out> Out* out_ptr(const Tensor& t) { return reinterpret_cast<Out*>(t->data_ptr()); }

// Calls f(Out{}) with Out the device type of a sum's, product's or scan's result: T when the
// result has the input's dtype, else int64 (integers summed without dtype=).
template <typename T, typename F> void with_result_type(ScalarType result, ScalarType input, F&& f) {
  if (result == input) f(T{});
  else f(int64_t{});
}

template <bool Prod> Tensor sum_prod(const char* op, const Tensor& self, const AccumulateMeta& M, const Tensor& out) {
  const Tensor x = to_dtype(self, M.input_dtype);
  const ReducePlan P = plan_reduce(x, M.dims, true);
  Tensor res = reduction_result(self, out, M.shape, M.dtype);
  dispatch_device_type(x->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    with_result_type<T>(M.dtype, x->dtype(), [&](auto otag) {
      using Out = decltype(otag);
      run_reduce<T>(op, P, SumReducer<T, Out, Prod, false>{{}, out_ptr<Out>(res), 0.0});
    });
  });
  return finish_out(op, out, res);
}

Tensor mean_impl(const Tensor& self, const AccumulateMeta& M, const Tensor& out) {
  const Tensor x = to_dtype(self, M.input_dtype);
  const ReducePlan P = plan_reduce(x, M.dims, true);
  Tensor res = reduction_result(self, out, M.shape, M.dtype);
  dispatch_device_float(M.dtype, "mean", [&](auto tag) {
    using T = decltype(tag);
    run_reduce<T>("mean", P, SumReducer<T, T, false, true>{{}, out_ptr<T>(res), static_cast<double>(P.g.K)});
  });
  return finish_out("mean", out, res);
}

template <bool All> Tensor all_any(const char* op, const Tensor& self, const std::optional<Shape>& dim, bool keepdim,
                                   const Tensor& out) {
  const AccumulateMeta M = all_any_meta(op, self, dim, keepdim, out);
  const ReducePlan P = plan_reduce(self, M.dims, true);
  Tensor res = reduction_result(self, out, M.shape, M.dtype);
  dispatch_device_type(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    if (M.dtype == ScalarType::UInt8) run_reduce<T>(op, P, AllAnyReducer<T, uint8_t, All>{{}, out_ptr<uint8_t>(res)});
    else run_reduce<T>(op, P, AllAnyReducer<T, bool, All>{{}, out_ptr<bool>(res)});
  });
  return finish_out(op, out, res);
}

Tensor var_std(const char* op, const Tensor& self, const std::optional<Shape>& dim, std::optional<bool> unbiased,
               bool keepdim, std::optional<Scalar> correction, const Tensor& out, bool take_sqrt) {
  const VarStdMeta M = var_std_meta(op, self, dim, unbiased, keepdim, correction);
  const ReducePlan P = plan_reduce(self, M.dims, true);
  Tensor res = reduction_result(self, out, M.shape, M.dtype);
  dispatch_device_float(M.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    run_reduce<T>(op, P, VarReducer<T>{{}, out_ptr<T>(res), M.dof, take_sqrt});
  });
  return finish_out(op, out, res);
}

Tensor var_std_any(const char* op, const Tensor& self, const std::optional<Shape>& dim, std::optional<bool> unbiased,
                   bool keepdim, std::optional<Scalar> correction, const Tensor& out, bool take_sqrt) {
  if (!is_complex(self->dtype())) return var_std(op, self, dim, unbiased, keepdim, correction, out, take_sqrt);
  return complex_var_std(op, self, dim, take_sqrt, out,
                         [&](const Tensor& x, const std::optional<Shape>& d, bool sq, const Tensor& o) {
                           return var_std(op, x, d, unbiased, keepdim, correction, o, sq);
                         });
}

Tensor norm_impl(const Tensor& self, const VectorNormMeta& M) {
  const Tensor x = to_dtype(self, M.dtype);
  const ReducePlan P = plan_reduce(x, M.dims, true);
  Tensor res = ember::empty(M.shape, M.dtype, self->device());
  dispatch_device_float(M.dtype, "norm", [&](auto tag) {
    using T = decltype(tag);
    using A = opmath_t<T>;
    auto go = [&](auto reducer) {
      reducer.out = out_ptr<T>(res);
      reducer.p = static_cast<A>(M.p);
      run_reduce<T>("norm", P, reducer);
    };
    switch (M.kind) {
      case NormKind::L2: go(NormReducer<T, NormKind::L2>{}); break;
      case NormKind::L1: go(NormReducer<T, NormKind::L1>{}); break;
      case NormKind::L0: go(NormReducer<T, NormKind::L0>{}); break;
      case NormKind::Inf: go(NormReducer<T, NormKind::Inf>{}); break;
      case NormKind::NegInf: go(NormReducer<T, NormKind::NegInf>{}); break;
      case NormKind::General: go(NormReducer<T, NormKind::General>{}); break;
    }
  });
  return res;
}

Tensor logsumexp_impl(const Tensor& self, const AccumulateMeta& M, const Tensor& out) {
  const Tensor x = to_dtype(self, M.input_dtype);
  const ReducePlan P = plan_reduce(x, M.dims, true);
  Tensor res = reduction_result(self, out, M.shape, M.dtype);
  dispatch_device_float(M.dtype, "logsumexp", [&](auto tag) {
    using T = decltype(tag);
    run_reduce<T>("logsumexp", P, LogSumExpReducer<T>{{}, out_ptr<T>(res)});
  });
  return finish_out("logsumexp", out, res);
}

// ---------------------------------------------------------------------------------------------
// cumsum / cumprod over the middle dim of a contiguous [O, K, I]
//
// Contiguous rows (I == 1, K > 64): a block scans a row in tiles of kScanTile elements, four
// consecutive ones per thread, carrying the total from tile to tile. Otherwise a thread scans
// a column (o, i) down K, neighbouring threads on neighbouring columns. When that leaves the
// device idle (few rows or columns, long K), K is cut into C chunks: the chunks' totals, their
// exclusive scan per line (the carries), then every chunk scanned from its carry.

template <typename T>
using scan_acc_t =
    std::conditional_t<is_low_float<T>, float, std::conditional_t<std::is_floating_point_v<T>, double, int64_t>>;

template <typename A, bool Prod> struct ScanOp {
  static constexpr A identity() { return A(Prod ? 1 : 0); }
  __device__ A operator()(A a, A b) const { return reducer::sum_or_product<Prod>(a, b); }
};

constexpr int kScanThreads = 256;
constexpr int kScanItems = 4;
constexpr int64_t kScanTile = kScanThreads * kScanItems;

// totals[o * C + c]: the combination of chunk c of row o.
template <typename T, typename A, bool Prod>
__global__ void scan_row_totals_kernel(const T* in, A* totals, int64_t O, int64_t K, int64_t C, int64_t chunk) {
  __shared__ A sh[33];
  const ScanOp<A, Prod> op;
  for (int64_t b = blockIdx.x; b < O * C; b += gridDim.x) {
    const int64_t o = b / C, k0 = (b % C) * chunk, k1 = min(K, k0 + chunk);
    A a = op.identity();
    for (int64_t k = k0 + threadIdx.x; k < k1; k += blockDim.x) a = op(a, cvt<A>(in[o * K + k]));
    a = block_reduce(a, op, sh);
    if (threadIdx.x == 0) totals[b] = a;
  }
}

// totals[line * C + c] for line = o * I + i: the combination of chunk c of column (o, i).
template <typename T, typename A, bool Prod>
__global__ void scan_column_totals_kernel(const T* in, A* totals, int64_t O, int64_t K, int64_t I, int64_t C,
                                          int64_t chunk) {
  const ScanOp<A, Prod> op;
  const int64_t lines = O * I;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < lines * C;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t line = t % lines, c = t / lines;
    const int64_t k0 = c * chunk, k1 = min(K, k0 + chunk);
    const T* p = in + (line / I) * K * I + line % I;
    A a = op.identity();
    for (int64_t k = k0; k < k1; ++k) a = op(a, cvt<A>(p[k * I]));
    totals[line * C + c] = a;
  }
}

// Each line's C totals replaced by their exclusive scan: the carry into each chunk.
template <typename A, bool Prod> __global__ void scan_carries_kernel(A* totals, int64_t lines, int64_t C) {
  const ScanOp<A, Prod> op;
  for (int64_t line = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; line < lines;
       line += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    A run = op.identity();
    for (int64_t c = 0; c < C; ++c) {
      const A t = totals[line * C + c];
      totals[line * C + c] = run;
      run = op(run, t);
    }
  }
}

template <typename T, typename Out, typename A, bool Prod>
__global__ void scan_rows_kernel(const T* in, Out* out, int64_t O, int64_t K, int64_t C, int64_t chunk,
                                 const A* carries) {
  __shared__ A sh[33];
  const ScanOp<A, Prod> op;
  for (int64_t b = blockIdx.x; b < O * C; b += gridDim.x) {
    const int64_t o = b / C, k0 = (b % C) * chunk, k1 = min(K, k0 + chunk);
    const T* x = in + o * K;
    Out* y = out + o * K;
    A carry = carries ? carries[b] : op.identity();
    for (int64_t t = k0; t < k1; t += kScanTile) {
      const int64_t kb = t + static_cast<int64_t>(threadIdx.x) * kScanItems;
      A e[kScanItems];
      A run = op.identity();
#pragma unroll
      for (int j = 0; j < kScanItems; ++j) {
        if (kb + j < k1) run = op(run, cvt<A>(x[kb + j]));
        e[j] = run;
      }
      A total;
      const A before = op(carry, block_exclusive_scan(run, op, op.identity(), sh, total));
#pragma unroll
      for (int j = 0; j < kScanItems; ++j) {
        if (kb + j < k1) y[kb + j] = cvt<Out>(op(before, e[j]));
      }
      carry = op(carry, total);
    }
  }
}

template <typename T, typename Out, typename A, bool Prod>
__global__ void scan_columns_kernel(const T* in, Out* out, int64_t O, int64_t K, int64_t I, int64_t C, int64_t chunk,
                                    const A* carries) {
  const ScanOp<A, Prod> op;
  const int64_t lines = O * I;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < lines * C;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t line = t % lines, c = t / lines;
    const int64_t k0 = c * chunk, k1 = min(K, k0 + chunk);
    const int64_t base = (line / I) * K * I + line % I;
    A a = carries ? carries[line * C + c] : op.identity();
    for (int64_t k = k0; k < k1; ++k) {
      a = op(a, cvt<A>(in[base + k * I]));
      out[base + k * I] = cvt<Out>(a);
    }
  }
}

template <typename T, typename Out, bool Prod>
void run_scan(const char* name, const Tensor& x, const Tensor& res, const DimSplit& L) {
  using A = scan_acc_t<T>;
  const Device dev = res->device();
  CurrentDevice guard(dev.index);
  const cudaStream_t stream = stream_of(dev);
  const T* in = reinterpret_cast<const T*>(x->data_ptr());
  Out* out = out_ptr<Out>(res);
  const int64_t target = static_cast<int64_t>(sm_count(dev.index)) * 2048;
  const bool rows = L.I == 1 && L.K > 64;
  const int64_t lines = L.O * L.I;
  const int64_t per_line = rows ? kScanThreads : 1;  // threads working on one chunk
  const int64_t min_chunk = rows ? 4 * kScanTile : 64;
  int64_t C = 1, chunk = L.K;
  if (lines * per_line < target && L.K >= 2 * min_chunk) {
    C = std::min({ceil_div(target, lines * per_line), ceil_div(L.K, min_chunk), kMaxGroups});
    chunk = ceil_div(ceil_div(L.K, C), rows ? kScanTile : 1) * (rows ? kScanTile : 1);
    C = ceil_div(L.K, chunk);
  }
  Tensor buffer;
  A* carries = nullptr;
  if (C > 1) {
    buffer = ember::empty({lines * C * static_cast<int64_t>(sizeof(A))}, ScalarType::UInt8, dev);
    carries = reinterpret_cast<A*>(buffer->data_ptr());
    if (rows) {
      scan_row_totals_kernel<T, A, Prod><<<grid_for(lines * C), kScanThreads, 0, stream>>>(in, carries, L.O, L.K, C,
                                                                                           chunk);
    } else {
      scan_column_totals_kernel<T, A, Prod>
          <<<blocks_for(lines * C), kThreads, 0, stream>>>(in, carries, L.O, L.K, L.I, C, chunk);
    }
    check_launch(name);
    scan_carries_kernel<A, Prod><<<blocks_for(lines), kThreads, 0, stream>>>(carries, lines, C);
    check_launch(name);
  }
  if (rows) {
    scan_rows_kernel<T, Out, A, Prod>
        <<<grid_for(lines * C), kScanThreads, 0, stream>>>(in, out, L.O, L.K, C, chunk, carries);
  } else {
    scan_columns_kernel<T, Out, A, Prod>
        <<<blocks_for(lines * C), kThreads, 0, stream>>>(in, out, L.O, L.K, L.I, C, chunk, carries);
  }
  check_launch(name);
}

template <bool Prod>
Tensor scan(const char* op, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, const Tensor& out) {
  const ScanMeta M = scan_meta(op, self, dim, dtype, out);
  const Tensor x = contiguous_in(self, M.input_dtype);
  const DimSplit L = split_around_dim(x->sizes(), M.dim);
  Tensor res = reduction_result(self, out, x->sizes(), M.dtype);
  if (res->numel() > 0) {
    dispatch_device_type(x->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      with_result_type<T>(M.dtype, x->dtype(), [&](auto otag) { run_scan<T, decltype(otag), Prod>(op, x, res, L); });
    });
  }
  return finish_out(op, out, res);
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

// Complex sums, means, cumulative sums and variances reduce the real and imaginary parts
// (complex_parts.h, shared with the CPU); complex products run on the host for now.

Tensor sum(const Tensor& self, const std::optional<Shape>& dim, bool keepdim, std::optional<ScalarType> dtype,
           const Tensor& out) {
  auto real_sum = [&](const Tensor& x, const std::optional<Shape>& d, std::optional<ScalarType> t, const Tensor& o) {
    return sum(x, d, keepdim, t, o);
  };
  if (auto z = complex_parts_route("sum", self, dim, dtype, out, real_sum)) return *z;
  return sum_prod<false>("sum", self, sum_meta(self, dim, keepdim, dtype), out);
}

Tensor mean(const Tensor& self, const std::optional<Shape>& dim, bool keepdim, std::optional<ScalarType> dtype,
            const Tensor& out) {
  auto real_mean = [&](const Tensor& x, const std::optional<Shape>& d, std::optional<ScalarType> t, const Tensor& o) {
    return mean(x, d, keepdim, t, o);
  };
  if (auto z = complex_parts_route("mean", self, dim, dtype, out, real_mean)) return *z;
  return mean_impl(self, mean_meta(self, dim, keepdim, dtype), out);
}

Tensor prod(const Tensor& self, std::optional<int64_t> dim, bool keepdim, std::optional<ScalarType> dtype,
            const Tensor& out) {
  if (is_complex(self->dtype()) || (dtype && is_complex(*dtype))) {
    return finish_out("prod", out, to_device(cpu::prod(to_host(self), dim, keepdim, dtype, Tensor()), self->device()));
  }
  return sum_prod<true>("prod", self, prod_meta(self, dim, keepdim, dtype), out);
}

Tensor all(const Tensor& self, const std::optional<Shape>& dim, bool keepdim, const Tensor& out) {
  return all_any<true>("all", self, dim, keepdim, out);
}

Tensor any(const Tensor& self, const std::optional<Shape>& dim, bool keepdim, const Tensor& out) {
  return all_any<false>("any", self, dim, keepdim, out);
}

Tensor var(const Tensor& self, const std::optional<Shape>& dim, std::optional<bool> unbiased, bool keepdim,
           std::optional<Scalar> correction, const Tensor& out) {
  return var_std_any("var", self, dim, unbiased, keepdim, correction, out, false);
}

Tensor std(const Tensor& self, const std::optional<Shape>& dim, std::optional<bool> unbiased, bool keepdim,
           std::optional<Scalar> correction, const Tensor& out) {
  return var_std_any("std", self, dim, unbiased, keepdim, correction, out, true);
}

Tensor norm(const Tensor& self, const Scalar& p, const std::optional<Shape>& dim, bool keepdim,
            std::optional<ScalarType> dtype) {
  const VectorNormMeta M = vector_norm_meta(self, p, dim, keepdim, dtype);
  if (auto single = norm_of_single_elements(self, M)) return *single;
  return norm_impl(self, M);
}

Tensor logsumexp(const Tensor& self, const Shape& dim, bool keepdim, const Tensor& out) {
  return logsumexp_impl(self, logsumexp_meta(self, dim, keepdim), out);
}

Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, const Tensor& out) {
  auto real_cumsum = [](const Tensor& x, const std::optional<Shape>& d, std::optional<ScalarType> t, const Tensor& o) {
    return cumsum(x, (*d)[0], t, o);
  };
  if (auto z = complex_parts_route("cumsum", self, Shape{dim}, dtype, out, real_cumsum)) return *z;
  return scan<false>("cumsum", self, dim, dtype, out);
}

Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, const Tensor& out) {
  if (is_complex(self->dtype()) || (dtype && is_complex(*dtype))) {  // on the host, as prod
    return finish_out("cumprod", out, to_device(cpu::cumprod(to_host(self), dim, dtype, Tensor()), self->device()));
  }
  return scan<true>("cumprod", self, dim, dtype, out);
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(sum);
EMBER_REGISTER_CUDA_KERNEL(mean);
EMBER_REGISTER_CUDA_KERNEL(prod);
EMBER_REGISTER_CUDA_KERNEL(all);
EMBER_REGISTER_CUDA_KERNEL(any);
EMBER_REGISTER_CUDA_KERNEL(var);
EMBER_REGISTER_CUDA_KERNEL(std);
EMBER_REGISTER_CUDA_KERNEL(norm);
EMBER_REGISTER_CUDA_KERNEL(logsumexp);
EMBER_REGISTER_CUDA_KERNEL(cumsum);
EMBER_REGISTER_CUDA_KERNEL(cumprod);
