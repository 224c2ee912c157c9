// Unary elementwise ops.
#include <cmath>

#include "ember/elementwise.h"
#include "ember/vec_math.h"

namespace ember::cpu {
namespace {

// Ops defined on reals: integer and bool inputs are computed in the default float dtype.
template <typename MakeF>
Tensor float_unary(const char* op, const Tensor& self, const Tensor& out, MakeF make_f) {
  ScalarType t = is_floating(self->dtype()) ? self->dtype() : default_float_dtype();
  return map_unary(op, to_dtype(self, t), out, t, DispatchFloat{}, make_f);
}

}  // namespace

#define EMBER_FLOAT_UNARY(NAME, EXPR)                                             \
  Tensor NAME(const Tensor& self, const Tensor& out) {                            \
    return float_unary(#NAME, self, out, [](auto tag) {                           \
      using A = opmath_t<decltype(tag)>;                                          \
      return [](A x) -> A { return EXPR; };                                       \
    });                                                                           \
  }
EMBER_FLOAT_UNARY(exp, exp_(x))
EMBER_FLOAT_UNARY(log, std::log(x))
EMBER_FLOAT_UNARY(log1p, std::log1p(x))
EMBER_FLOAT_UNARY(expm1, std::expm1(x))
EMBER_FLOAT_UNARY(sqrt, std::sqrt(x))
EMBER_FLOAT_UNARY(rsqrt, A(1) / std::sqrt(x))
EMBER_FLOAT_UNARY(sin, std::sin(x))
EMBER_FLOAT_UNARY(cos, std::cos(x))
EMBER_FLOAT_UNARY(tan, std::tan(x))
EMBER_FLOAT_UNARY(tanh, tanh_(x))
EMBER_FLOAT_UNARY(sigmoid, sigmoid_(x))
EMBER_FLOAT_UNARY(erf, std::erf(x))
EMBER_FLOAT_UNARY(log2, std::log2(x))
EMBER_FLOAT_UNARY(log10, std::log10(x))
EMBER_FLOAT_UNARY(atan, std::atan(x))
EMBER_FLOAT_UNARY(reciprocal, A(1) / x)
#undef EMBER_FLOAT_UNARY

// Ops that keep the input dtype.
#define EMBER_SAME_UNARY(NAME, DISPATCH, EXPR)                                    \
  Tensor NAME(const Tensor& self, const Tensor& out) {                            \
    return map_unary(#NAME, self, out, self->dtype(), DISPATCH{}, [](auto tag) {  \
      using A = opmath_t<decltype(tag)>;                                          \
      return [](A x) -> A { return EXPR; };                                       \
    });                                                                           \
  }
EMBER_SAME_UNARY(abs, DispatchNumeric, x < A(0) ? static_cast<A>(A(0) - x) : (x == A(0) ? A(0) : x))
EMBER_SAME_UNARY(relu, DispatchNumeric, (x > A(0) || x != x) ? x : A(0))
EMBER_SAME_UNARY(square, DispatchNumeric, static_cast<A>(x * x))
#undef EMBER_SAME_UNARY

Tensor neg(const Tensor& self, const Tensor& out) {
  if (self->dtype() == ScalarType::Bool) {
    throw std::runtime_error(
        "neg: negation, the `-` operator, on a bool tensor is not supported; use the `~` or "
        "`logical_not()` operator instead");
  }
  return map_unary("neg", self, out, self->dtype(), DispatchNumeric{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x) -> A { return static_cast<A>(-x); };
  });
}

Tensor sign(const Tensor& self, const Tensor& out) {
  return map_unary("sign", self, out, self->dtype(), DispatchAll{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x) -> A {
      if constexpr (std::is_same_v<A, bool>) return x;
      else if constexpr (std::is_floating_point_v<A>) return x != x ? x : static_cast<A>((A(0) < x) - (x < A(0)));
      else return static_cast<A>((A(0) < x) - (x < A(0)));
    };
  });
}

#define EMBER_ROUNDING(NAME, FN)                                                    \
  Tensor NAME(const Tensor& self, const Tensor& out) {                              \
    if (!is_floating(self->dtype())) {                                              \
      return finish_out(#NAME, out, out == self ? self : ops::clone(self));         \
    }                                                                               \
    return map_unary(#NAME, self, out, self->dtype(), DispatchFloat{}, [](auto tag) { \
      using A = opmath_t<decltype(tag)>;                                            \
      return [](A x) -> A { return FN(x); };                                        \
    });                                                                             \
  }
EMBER_ROUNDING(floor, std::floor)
EMBER_ROUNDING(ceil, std::ceil)
EMBER_ROUNDING(round, std::nearbyint)
EMBER_ROUNDING(trunc, std::trunc)
#undef EMBER_ROUNDING

Tensor logical_not(const Tensor& self, const Tensor& out) {
  return map_unary("logical_not", self, out, ScalarType::Bool, DispatchAll{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x) -> bool { return x == A(0); };
  });
}

Tensor bitwise_not(const Tensor& self, const Tensor& out) {
  return map_unary("bitwise_not", self, out, self->dtype(), DispatchIntegral{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x) -> A {
      if constexpr (std::is_same_v<A, bool>) return !x;
      else return static_cast<A>(~x);
    };
  });
}

#define EMBER_CLASSIFY(NAME, FEXPR, IEXPR)                                          \
  Tensor NAME(const Tensor& self) {                                                 \
    return map_unary(#NAME, self, Tensor(), ScalarType::Bool, DispatchAll{}, [](auto tag) { \
      using A = opmath_t<decltype(tag)>;                                            \
      return [](A x) -> bool {                                                      \
        if constexpr (std::is_floating_point_v<A>) return FEXPR;                    \
        else { (void)x; return IEXPR; }                                             \
      };                                                                            \
    });                                                                             \
  }
EMBER_CLASSIFY(isnan, std::isnan(x), false)
EMBER_CLASSIFY(isinf, std::isinf(x), false)
EMBER_CLASSIFY(isfinite, std::isfinite(x), true)
#undef EMBER_CLASSIFY

}  // namespace ember::cpu
