// CPU kernels of softmax / log_softmax and their backward: contiguous input seen as [O, K, I],
// normalised along K.
#include "ember/ops/reduce/reduce_cpu.h"

namespace ember {
namespace cpu {

// ---------------------------------------------------------------------------------------------
// softmax, log_softmax: contiguous input seen as [O, K, I], normalised along K

namespace {

// softmax or log_softmax of one contiguous row, in the opmath type.
template <bool Log, typename A> void softmax_row(const A* x, A* y, int64_t K) {
  const A m = extreme_run<true>(x, K, [](A v) { return v; });
  if constexpr (Log) {
    const A ls = std::log(exp_sum<false>(x, K, m, static_cast<A*>(nullptr)));
    for (int64_t k = 0; k < K; ++k) y[k] = (x[k] - m) - ls;  // m + ls would round ls away
  } else {
    const A inv = A(1) / exp_sum<true>(x, K, m, y);
    for (int64_t k = 0; k < K; ++k) y[k] *= inv;
  }
}

// T: float or double (16-bit floats run through float32 copies, see compute_t).
template <typename T, bool Log>
void softmax_kernel(const T* in, T* out, int64_t O, int64_t K, int64_t I) {
  using A = T;
  if (I == 1) {
    parallel_for(0, O, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(K, 1)),
                 [&](int64_t b, int64_t e) {
      simd_dispatch([&] {
        for (int64_t o = b; o < e; ++o) softmax_row<Log>(in + o * K, out + o * K, K);
      });
    });
    return;
  }
  const int64_t tiles = (I + kTile - 1) / kTile;
  parallel_for(0, O * tiles, std::max<int64_t>(1, kParallelGrain / (K * std::min(I, kTile) + 1)),
               [&](int64_t b, int64_t e) {
    A m[kTile], s[kTile];
    simd_dispatch([&] { for (int64_t it = b; it < e; ++it) {
      const int64_t o = it / tiles, i0 = (it % tiles) * kTile, w = std::min(kTile, I - i0);
      const T* x = in + o * K * I + i0;
      T* y = out + o * K * I + i0;
      column_max_expsum(x, K, I, w, m, s);
      if constexpr (Log) {
        for (int64_t j = 0; j < w; ++j) s[j] = std::log(s[j]);
        for (int64_t k = 0; k < K; ++k)
          for (int64_t j = 0; j < w; ++j)
            y[k * I + j] = static_cast<T>((load<A>(x[k * I + j]) - m[j]) - s[j]);
      } else {
        for (int64_t j = 0; j < w; ++j) s[j] = A(1) / s[j];
        for (int64_t k = 0; k < K; ++k)
          for (int64_t j = 0; j < w; ++j)
            y[k * I + j] = static_cast<T>(exp_(load<A>(x[k * I + j]) - m[j]) * s[j]);
      }
    } });
  });
}

// 16-bit float rows (I == 1) through the float kernel, a few rows at a time in float buffers
// that stay in cache (a float32 copy of the whole input would double the op's memory traffic).
template <bool Log, typename T> void softmax_rows_16(const T* in, T* out, int64_t O, int64_t K) {
  const int64_t rows = std::max<int64_t>(1, kHalfBlock / K);
  parallel_for(0, O, std::max<int64_t>(1, kParallelGrain / K), [&](int64_t b, int64_t e) {
    std::vector<float> buf(static_cast<size_t>(2 * std::min(rows, e - b) * K));
    for (int64_t o = b; o < e; o += rows) {
      const int64_t n = std::min(rows, e - o) * K;
      widen_block(in + o * K, buf.data(), n);
      softmax_kernel<float, Log>(buf.data(), buf.data() + n, n / K, K, 1);
      narrow_block(buf.data() + n, out + o * K, n);
    }
  });
}

template <bool Log>
Tensor softmax_impl(const char* op, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  check_cpu(self, op);
  const SoftmaxMeta M = softmax_meta(op, self, dim, dtype);
  Tensor x = to_dtype(self, M.dtype);
  if (x->numel() == 0) return empty(x->sizes(), x->dtype());
  DimLayout L = dim_layout(x, M.dim);
  Tensor res = empty(x->sizes(), x->dtype());
  if (res->numel() == 0) return res;
  dispatch_float(x->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (!std::is_same_v<C, T>) {
      if (L.I == 1) {
        softmax_rows_16<Log>(L.src->data<T>(), res->data<T>(), L.O, L.K);
        return;
      }
    }
    with_result<T>(res, [&](C* o) {
      const Tensor in = to_dtype(L.src, scalar_type_of<C>());
      softmax_kernel<C, Log>(in->data<C>(), o, L.O, L.K, L.I);
    });
  });
  return res;
}

}  // namespace

Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl<false>("softmax", self, dim, dtype);
}

Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl<true>("log_softmax", self, dim, dtype);
}

namespace {

// The backward of (log_)softmax along the middle dim of (O, K, I) contiguous buffers, in
// one pass per row after its sum: softmax: y * (g - sum(g * y)); log_softmax:
// g - exp(y) * sum(g). Sums in the opmath type, as the forward's.
// sum(g) (Log) or sum(g * y) over one contiguous row, in 16 lanes the vectoriser keeps in
// registers.
template <bool Log, typename T>
inline opmath_t<T> row_sum(const T* __restrict__ g, const T* __restrict__ y, int64_t K) {
  using A = opmath_t<T>;
  constexpr int L = 16;
  A acc[L] = {};
  int64_t k = 0;
  for (; k + L <= K; k += L) {
    for (int j = 0; j < L; ++j) acc[j] += Log ? load<A>(g[k + j]) : load<A>(g[k + j]) * load<A>(y[k + j]);
  }
  A sum = 0;
  for (; k < K; ++k) sum += Log ? load<A>(g[k]) : load<A>(g[k]) * load<A>(y[k]);
  for (int j = 0; j < L; ++j) sum += acc[j];
  return sum;
}

template <bool Log, typename T>
inline void softmax_backward_row(const T* __restrict__ g, const T* __restrict__ y, T* __restrict__ out, int64_t K) {
  using A = opmath_t<T>;
  const A sum = row_sum<Log>(g, y, K);
  for (int64_t k = 0; k < K; ++k) {
    const A gk = load<A>(g[k]), yk = load<A>(y[k]);
    out[k] = static_cast<T>(Log ? gk - exp_(yk) * sum : yk * (gk - sum));
  }
}

template <typename T, bool Log>
void softmax_backward_kernel(const T* g, const T* y, T* out, int64_t O, int64_t K, int64_t I) {
  using A = opmath_t<T>;
  if (I == 1) {  // rows along the last dim: contiguous
    parallel_for(0, O, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(K, 1)), [&](int64_t b, int64_t e) {
      simd_dispatch([&] {
        for (int64_t o = b; o < e; ++o) softmax_backward_row<Log>(g + o * K, y + o * K, out + o * K, K);
      });
    });
    return;
  }
  parallel_for(0, O * I, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(K, 1)), [&](int64_t b, int64_t e) {
    simd_dispatch([&] {
      for (int64_t row = b; row < e; ++row) {
        const int64_t o = row / I, i = row % I, base = o * K * I + i;
        A sum = 0;
        for (int64_t k = 0; k < K; ++k) {
          const A gk = load<A>(g[base + k * I]);
          sum += Log ? gk : gk * load<A>(y[base + k * I]);
        }
        for (int64_t k = 0; k < K; ++k) {
          const A gk = load<A>(g[base + k * I]), yk = load<A>(y[base + k * I]);
          out[base + k * I] = static_cast<T>(Log ? gk - exp_(yk) * sum : yk * (gk - sum));
        }
      }
    });
  });
}

template <bool Log>
Tensor softmax_backward_impl(const char* op, const Tensor& grad_output, const Tensor& output, int64_t dim) {
  check_cpu(grad_output, op);
  const SoftmaxMeta M = softmax_backward_meta(op, grad_output, output, dim);
  DimLayout G = dim_layout(grad_output, M.dim);
  DimLayout Y = dim_layout(output, M.dim);
  Tensor res = empty(output->sizes(), M.dtype);
  if (res->numel() == 0) return res;
  dispatch_float(output->dtype(), op, [&](auto tag) {
    using C = compute_t<decltype(tag)>;
    with_result<decltype(tag)>(res, [&](C* o) {
      const Tensor g = to_dtype(G.src, scalar_type_of<C>()), y = to_dtype(Y.src, scalar_type_of<C>());
      softmax_backward_kernel<C, Log>(g->data<C>(), y->data<C>(), o, Y.O, Y.K, Y.I);
    });
  });
  return res;
}

}  // namespace

Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim) {
  return softmax_backward_impl<false>("_softmax_backward_data", grad_output, output, dim);
}

Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim) {
  return softmax_backward_impl<true>("_log_softmax_backward_data", grad_output, output, dim);
}

}  // namespace cpu
}  // namespace ember
