// CPU kernels of the scans cumsum / cumprod.
#include "ember/ops/reduce/reduce_cpu.h"

namespace ember {
namespace cpu {

// ---------------------------------------------------------------------------------------------
// cumsum, cumprod

namespace {

// Scan accumulator, as PyTorch's CPU kernels: double for float32/float64, float for the 16-bit
// floats, int64 for integers.
template <typename T>
using scan_acc_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float,
                                      std::conditional_t<is_float_v<T>, double, int64_t>>;

// Calls f(Out{}) with Out the C++ type of `out_dtype`, which is T or int64.
template <typename T, typename F> void with_out_type(ScalarType out_dtype, F&& f) {
  if (out_dtype == scalar_type_of<T>()) f(T{});
  else f(int64_t{});
}

template <typename T, typename Out, bool Prod>
void scan_kernel(const T* in, Out* out, int64_t O, int64_t K, int64_t I) {
  using A = scan_acc_t<T>;
  auto op = [](A a, A b) -> A {
    if constexpr (Prod) return a * b;
    else return a + b;
  };
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
  const ScanMeta M = scan_meta(op, self, dim, dtype);
  const ScalarType out_dt = M.dtype;
  Tensor x = to_dtype(self, M.input_dtype);
  DimLayout L = dim_layout(x, M.dim);
  Tensor res = result_for(op, self, out, x->sizes(), out_dt);
  if (res->numel() > 0) {
    dispatch_all(x->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      with_out_type<T>(out_dt, [&](auto otag) {
        using Out = decltype(otag);
        scan_kernel<T, Out, Prod>(L.src->data<T>(), res->data<Out>(), L.O, L.K, L.I);
      });
    });
  }
  return finish_out(op, out, res);
}

}  // namespace

Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, const Tensor& out) {
  if (is_wide_unsigned(self->dtype())) return cumsum(to_dtype(self, ScalarType::Int64), dim, dtype, out);
  if (is_complex(self->dtype()) && dtype && !is_complex(*dtype)) {  // PyTorch: the real parts
    return cumsum(to_dtype(self, *dtype), dim, dtype, out);
  }
  if (is_complex(dtype.value_or(self->dtype()))) {
    return complex_parts_result("cumsum", self, Shape{dim}, dtype, out, [&](const Tensor& parts, const Shape& d) {
      return scan<false>("cumsum", parts, d[0], std::nullopt, Tensor());
    });
  }
  return scan<false>("cumsum", self, dim, dtype, out);
}

Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, const Tensor& out) {
  // as cumsum: int64 (wrapping) products of the wide unsigned types, PyTorch's result dtype
  if (is_wide_unsigned(self->dtype())) return cumprod(to_dtype(self, ScalarType::Int64), dim, dtype, out);
  return scan<true>("cumprod", self, dim, dtype, out);
}

}  // namespace cpu
}  // namespace ember
