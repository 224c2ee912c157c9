// CPU kernels of the special functions: the scalar functions of special_functions.h applied
// elementwise (special_meta.h: the dtype rule). float64 computes in double; float32 and the
// 16-bit floats compute in float with special_float.h's vectorised kernels where the op has
// one (the third column of EMBER_SPECIAL_UNARY_OPS), else in double.
#include "ember/backends/cpu/elementwise.h"
#include "ember/ops/elementwise/special_float.h"
#include "ember/ops/elementwise/special_functions.h"
#include "ember/ops/elementwise/special_meta.h"

namespace ember::cpu {
namespace {

// The cheaper float form of op Op on part of its domain (elementwise.h's fast forms: blocks
// wholly inside the range take it): none, unless specialised below.
template <typename Op> struct FloatFastForm {};

// Op's float kernel f32, with its fast form.
template <typename Op, typename F32> struct FloatKernel : FloatFastForm<Op> {
  F32 f32;
  float operator()(float x) const { return static_cast<float>(f32(x)); }
};

// f64 computes double, f32 float (float32, float16, bfloat16); Op names the op for its fast
// form.
template <typename Op = void, typename F64, typename F32>
Tensor special_unary(const char* op, const Tensor& self, const Tensor& out, F64 f64, F32 f32) {
  const ScalarType t = special_dtype(self->dtype());
  return map_unary(op, to_dtype(self, t), out, t, DispatchFloat{}, [f64, f32](auto tag) {
    using A = opmath_t<decltype(tag)>;
    if constexpr (std::is_same_v<A, float>) {
      return FloatKernel<Op, F32>{{}, f32};
    } else {
      return [f64](A x) -> A { return static_cast<A>(f64(static_cast<double>(x))); };
    }
  });
}

template <typename F> Tensor special_unary(const char* op, const Tensor& self, const Tensor& out, F f) {
  return special_unary(op, self, out, f, f);
}

struct erfinv_op;
// erfinv's two tail series are needed only near +-1 (the inputs of trunc_normal_ and the
// like never reach them)
template <> struct FloatFastForm<erfinv_op> {
  float fast(float y) const { return special_float::erfinv_central(y); }
  bool in_fast_range(float y) const { return std::fabs(y) < special_float::kErfinvCentralLimit; }
};

// f(x, y, eps) in double, eps the truncation error that the result's dtype needs.
template <typename F>
Tensor special_binary(const char* op, const Tensor& self, const Tensor& other, const Tensor& out, F f) {
  const ScalarType t = special_dtype(self, other);
  return map_binary(op, to_dtype(self, t), to_dtype(other, t), out, t, DispatchFloat{}, [f](auto tag) {
    using A = opmath_t<decltype(tag)>;
    constexpr double eps = std::is_same_v<A, double> ? special_fn::kEps : special_fn::kFloatResultEps;
    return [f](A x, A y) -> A { return static_cast<A>(f(static_cast<double>(x), static_cast<double>(y), eps)); };
  });
}

}  // namespace

namespace sf = special_fn;
namespace sff = special_float;

#define EMBER_SPECIAL_UNARY(NAME, EXPR, FLOAT_EXPR)                                                    \
  namespace {                                                                                          \
  struct NAME##_op; /* the op's tag (FloatFastForm) */                                                 \
  }                                                                                                    \
  Tensor NAME(const Tensor& self, const Tensor& out) {                                                 \
    return special_unary<NAME##_op>(                                                                   \
        #NAME, self, out, [](double x) { return EXPR; }, [](float x) { return FLOAT_EXPR; });         \
  }
EMBER_SPECIAL_UNARY_OPS(EMBER_SPECIAL_UNARY)
#undef EMBER_SPECIAL_UNARY

Tensor polygamma(int64_t n, const Tensor& self, const Tensor& out) {
  check_polygamma_order(n);
  // orders 0 and 1 have float kernels; the others (Hurwitz zeta) compute in double
  if (n == 0) {
    return special_unary(
        "polygamma", self, out, [](double x) { return sf::digamma(x); }, [](float x) { return sff::digamma(x); });
  }
  if (n == 1) {
    return special_unary(
        "polygamma", self, out, [](double x) { return sf::trigamma(x); }, [](float x) { return sff::trigamma(x); });
  }
  return special_unary("polygamma", self, out, [n](double x) { return sf::polygamma(n, x); });
}

Tensor igamma(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary("igamma", self, other, out, [](double a, double x, double eps) { return sf::igamma(a, x, false, eps); });
}

Tensor igammac(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary("igammac", self, other, out, [](double a, double x, double eps) { return sf::igamma(a, x, true, eps); });
}

Tensor special_zeta(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary("special_zeta", self, other, out, [](double s, double q, double) { return sf::zeta(s, q); });
}

}  // namespace ember::cpu
