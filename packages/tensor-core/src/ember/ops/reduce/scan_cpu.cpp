// CPU kernels of the scans cumsum / cumprod / logcumsumexp, and of the running extremes
// behind cummax / cummin (values and indices).
#include "ember/ops/reduce/reduce_cpu.h"

namespace ember {
namespace cpu {

// ---------------------------------------------------------------------------------------------
// cumsum, cumprod

namespace {

// Scan accumulator, as PyTorch's CPU kernels: double for float32/float64, float for the 16-bit
// floats, int64 for integers, complex128 for the complex types (cumprod).
template <typename T> struct ScanAcc {
  using type = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float,
                                  std::conditional_t<is_float_v<T>, double, int64_t>>;
};
template <typename R> struct ScanAcc<Complex<R>> { using type = Complex<double>; };
template <typename T> using scan_acc_t = typename ScanAcc<T>::type;

// Calls f(Out{}) with Out the C++ type of `out_dtype`, which is T or int64.
template <typename T, typename F> void with_out_type(ScalarType out_dtype, F&& f) {
  if (out_dtype == scalar_type_of<T>()) f(T{});
  else f(int64_t{});
}

template <typename T, typename Out, bool Prod>
void scan_kernel(const T* in, Out* out, int64_t O, int64_t K, int64_t I) {
  using A = scan_acc_t<T>;
  auto op = [](A a, A b) -> A { return reducer::sum_or_product<Prod>(a, b); };
  const A init = A(Prod ? 1 : 0);
  if (I == 1) {
    parallel_for(0, O, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(K, 1)),
                 [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        A a = init;
        const T* x = in + o * K;
        Out* y = out + o * K;
        for (int64_t k = 0; k < K; ++k) {
          a = op(a, static_cast<A>(static_cast<opmath_t<T>>(x[k])));
          y[k] = convert<Out>(a);
        }
      }
    });
    return;
  }
  const int64_t tiles = (I + kTile - 1) / kTile;
  parallel_for(0, O * tiles, std::max<int64_t>(1, kParallelGrain / (K * std::min(I, kTile) + 1)),
               [&](int64_t b, int64_t e) {
    A acc[kTile];
    for (int64_t it = b; it < e; ++it) {
      const int64_t o = it / tiles, i0 = (it % tiles) * kTile, w = std::min(kTile, I - i0);
      const T* x = in + o * K * I + i0;
      Out* y = out + o * K * I + i0;
      for (int64_t j = 0; j < w; ++j) acc[j] = init;
      for (int64_t k = 0; k < K; ++k) {
        for (int64_t j = 0; j < w; ++j) {
          acc[j] = op(acc[j], static_cast<A>(static_cast<opmath_t<T>>(x[k * I + j])));
          y[k * I + j] = convert<Out>(acc[j]);
        }
      }
    }
  });
}

template <bool Prod>
Tensor scan(const char* op, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype,
            const Tensor& out) {
  check_cpu(self, op);
  const ScanMeta M = scan_meta(op, self, dim, dtype, out);
  const ScalarType out_dt = M.dtype;
  Tensor x = to_dtype(self, M.input_dtype);
  DimLayout L = dim_layout(x, M.dim);
  Tensor res = result_for(op, self, out, x->sizes(), out_dt);
  if (res->numel() > 0) {
    auto run = [&](auto tag) {
      using T = decltype(tag);
      with_out_type<T>(out_dt, [&](auto otag) {
        using Out = decltype(otag);
        scan_kernel<T, Out, Prod>(L.src->data<T>(), res->data<Out>(), L.O, L.K, L.I);
      });
    };
    // complex products (cumprod; cumsum adds the parts apart, complex_parts.h)
    if (Prod && is_complex(x->dtype())) dispatch_complex(x->dtype(), op, run);
    else dispatch_all(x->dtype(), op, run);
  }
  return finish_out(op, out, res);
}

// Runs line(x, y, K, step) for every line of an [O, K, I] layout: x the line's first input
// element, y its first output element, consecutive elements `step` apart. Lines of a row
// (I == 1) are parallel over rows; otherwise parallel over (o, i).
template <typename T, typename Out, typename F>
void each_line(const T* in, Out* out, int64_t O, int64_t K, int64_t I, F&& line) {
  const int64_t lines = O * I;
  parallel_for(0, lines, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(K, 1)), [&](int64_t b, int64_t e) {
    for (int64_t l = b; l < e; ++l) {
      const int64_t o = l / I, i = l % I;
      line(in + o * K * I + i, out + o * K * I + i, K, I);
    }
  });
}

// PyTorch's log-add-exp of a running logcumsumexp: NaN propagates, equal infinities stay.
template <typename A> A log_add_exp(A x, A y) {
  const A lo = std::isnan(y) ? y : std::min(x, y);
  const A hi = std::isnan(y) ? y : std::max(x, y);
  if (lo != hi || std::isfinite(lo)) return hi + std::log1p(std::exp(lo - hi));
  return x;
}

}  // namespace

Tensor logcumsumexp(const Tensor& self, int64_t dim, const Tensor& out) {
  const char* op = "logcumsumexp";
  check_cpu(self, op);
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self->dim(), 1), op);  // 0-d: as 1-d
  DimLayout L = dim_layout(self, d);
  Tensor res = result_for(op, self, out, self->sizes(), self->dtype());
  if (res->numel() > 0) {
    dispatch_float(self->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      using A = scan_acc_t<T>;  // double for float32 / float64, as PyTorch's CPU kernel
      each_line(L.src->data<T>(), res->data<T>(), L.O, L.K, L.I, [](const T* x, T* y, int64_t K, int64_t step) {
        A acc = -std::numeric_limits<A>::infinity();
        for (int64_t k = 0; k < K; ++k) {
          acc = log_add_exp(static_cast<A>(static_cast<opmath_t<T>>(x[k * step])), acc);
          y[k * step] = static_cast<T>(acc);
        }
      });
    });
  }
  return finish_out(op, out, res);
}

namespace {

// PyTorch's rule of a running extreme: a NaN always takes over (the latest NaN), nothing
// replaces a NaN, and an equal value takes over too (the latest of equal extremes).
template <typename A> bool takes_over(A v, A best, bool maximum) {
  bool take = maximum ? v >= best : v <= best;
  if constexpr (std::is_floating_point_v<A>) take = std::isnan(v) || (!std::isnan(best) && take);
  return take;
}

// True when no element of x[0, n) can take over from `best`: all strictly below a maximum /
// above a minimum (a NaN compares false, so it is never passed over), or, when best is a
// NaN, no NaN among them. Branch-free, so the compiler vectorizes it.
template <typename T, typename A> bool none_takes_over(const T* x, int64_t n, A best, bool maximum) {
  int takers = 0;
  if constexpr (std::is_floating_point_v<A>) {
    if (std::isnan(best)) {
      for (int64_t k = 0; k < n; ++k) takers |= std::isnan(static_cast<A>(x[k])) ? 1 : 0;
      return takers == 0;
    }
  }
  if (maximum) {
    for (int64_t k = 0; k < n; ++k) takers |= static_cast<A>(x[k]) < best ? 0 : 1;
  } else {
    for (int64_t k = 0; k < n; ++k) takers |= static_cast<A>(x[k]) > best ? 0 : 1;
  }
  return takers == 0;
}

// Values and indices of one contiguous line. A new extreme is rare after the first elements,
// so blocks are first checked for any taker at memory speed and filled with the current one.
template <typename T> void cumextreme_line(const T* x, T* values, int64_t* y, int64_t K, bool maximum) {
  using A = opmath_t<T>;
  constexpr int64_t kBlock = 64;
  A best = static_cast<A>(x[0]);
  int64_t at = 0;
  for (int64_t k0 = 0; k0 < K; k0 += kBlock) {
    const int64_t n = std::min(kBlock, K - k0);
    if (none_takes_over(x + k0, n, best, maximum)) {
      std::fill(values + k0, values + k0 + n, x[at]);
      std::fill(y + k0, y + k0 + n, at);
      continue;
    }
    for (int64_t k = k0; k < k0 + n; ++k) {
      const A v = static_cast<A>(x[k]);
      if (takes_over(v, best, maximum)) {
        best = v;
        at = k;
      }
      values[k] = x[at];
      y[k] = at;
    }
  }
}

// Values and indices of the lines of an [O, K, I] layout with I > 1: up to kTile neighbouring
// lines advance together, so each step along K reads one contiguous run.
template <typename T>
void cumextreme_tiles(const T* in, T* vals, int64_t* out, int64_t O, int64_t K, int64_t I, bool maximum) {
  using A = opmath_t<T>;
  const int64_t tiles = (I + kTile - 1) / kTile;
  parallel_for(0, O * tiles, std::max<int64_t>(1, kParallelGrain / (K * std::min(I, kTile) + 1)),
               [&](int64_t b, int64_t e) {
    A best[kTile];
    int64_t at[kTile];
    for (int64_t it = b; it < e; ++it) {
      const int64_t o = it / tiles, i0 = (it % tiles) * kTile, w = std::min(kTile, I - i0);
      const T* x = in + o * K * I + i0;
      T* values = vals + o * K * I + i0;
      int64_t* y = out + o * K * I + i0;
      for (int64_t j = 0; j < w; ++j) {
        best[j] = static_cast<A>(x[j]);
        at[j] = 0;
      }
      for (int64_t k = 0; k < K; ++k) {
        for (int64_t j = 0; j < w; ++j) {
          const A v = static_cast<A>(x[k * I + j]);
          const bool take = takes_over(v, best[j], maximum);
          best[j] = take ? v : best[j];
          at[j] = take ? k : at[j];
          values[k * I + j] = static_cast<T>(best[j]);  // exact: best holds an element of x
          y[k * I + j] = at[j];
        }
      }
    }
  });
}

}  // namespace

std::tuple<Tensor, Tensor> _cumextreme(const Tensor& self, int64_t dim, bool maximum) {
  const char* op = maximum ? "cummax" : "cummin";
  check_cpu(self, op);
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self->dim(), 1), op);  // 0-d: as 1-d
  DimLayout L = dim_layout(self, d);
  Tensor values = empty(self->sizes(), self->dtype());
  Tensor res = empty(self->sizes(), ScalarType::Int64);
  if (res->numel() == 0) return {values, res};
  dispatch_all_and_unsigned(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* x = L.src->data<T>();
    T* v = values->data<T>();
    int64_t* y = res->data<int64_t>();
    if (L.I > 1) {
      cumextreme_tiles(x, v, y, L.O, L.K, L.I, maximum);
      return;
    }
    parallel_for(0, L.O, std::max<int64_t>(1, kParallelGrain / L.K), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        cumextreme_line(x + o * L.K, v + o * L.K, y + o * L.K, L.K, maximum);
      }
    });
  });
  return {values, res};
}

Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, const Tensor& out) {
  if (is_wide_unsigned(self->dtype())) return cumsum(to_dtype(self, ScalarType::Int64), dim, dtype, out);
  auto real_cumsum = [](const Tensor& x, const std::optional<Shape>& d, std::optional<ScalarType> t, const Tensor& o) {
    return cumsum(x, (*d)[0], t, o);
  };
  if (auto z = complex_parts_route("cumsum", self, Shape{dim}, dtype, out, real_cumsum)) return *z;
  return scan<false>("cumsum", self, dim, dtype, out);
}

Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, const Tensor& out) {
  // as cumsum: int64 (wrapping) products of the wide unsigned types, PyTorch's result dtype
  if (is_wide_unsigned(self->dtype())) return cumprod(to_dtype(self, ScalarType::Int64), dim, dtype, out);
  return scan<true>("cumprod", self, dim, dtype, out);
}

}  // namespace cpu
}  // namespace ember
