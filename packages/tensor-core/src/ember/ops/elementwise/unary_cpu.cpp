// The unary elementwise ops on the CPU that keep their input's dtype (abs, neg, rounding, ...)
// or give bools (the classifications, logical_not); the functions of reals are in
// unary_float_cpu.cpp. The dtype rules here, the scalar functions in unary_functions.h
// (shared with the CUDA kernels).
#include <cmath>

#include "ember/backends/cpu/elementwise.h"
#include "ember/ops/elementwise/binary_meta.h"
#include "ember/ops/elementwise/unary_functions.h"

namespace ember::cpu {

// Ops that keep the input dtype.
#define EMBER_SAME_UNARY(NAME, DISPATCH, FN)                                      \
  Tensor NAME(const Tensor& self, const Tensor& out) {                            \
    return map_unary(#NAME, self, out, self->dtype(), DISPATCH{}, [](auto tag) {  \
      using A = opmath_t<decltype(tag)>;                                          \
      return [](A x) -> A { return unary_fn::FN{}(x); };                          \
    });                                                                           \
  }
EMBER_SAME_UNARY(relu, DispatchNumeric, Relu)
EMBER_SAME_UNARY(sign, WithUnsigned<DispatchAll>, Sign)
#undef EMBER_SAME_UNARY

Tensor square(const Tensor& self, const Tensor& out) {
  if (Tensor converted = square_of_bool(self)) return finish_out("square", out, converted);
  return map_unary("square", self, out, self->dtype(), WithUnsigned<WithComplex<DispatchNumeric>>{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x) -> A { return unary_fn::Square{}(x); };
  });
}

Tensor neg(const Tensor& self, const Tensor& out) {
  if (self->dtype() == ScalarType::Bool) {
    throw std::runtime_error(
        "neg: negation, the `-` operator, on a bool tensor is not supported; use the `~` or "
        "`logical_not()` operator instead");
  }
  return map_unary("neg", self, out, self->dtype(), WithUnsigned<WithComplex<DispatchNumeric>>{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x) -> A { return unary_fn::Neg{}(x); };
  });
}

// Integer inputs are returned unchanged (a copy, or self itself in place).
#define EMBER_ROUNDING(NAME, FN)                                                    \
  Tensor NAME(const Tensor& self, const Tensor& out) {                              \
    if (!is_floating(self->dtype())) {                                              \
      return finish_out(#NAME, out, out == self ? self : ops::clone(self));         \
    }                                                                               \
    return map_unary(#NAME, self, out, self->dtype(), DispatchFloat{}, [](auto tag) { \
      using A = opmath_t<decltype(tag)>;                                            \
      return [](A x) -> A { return unary_fn::FN{}(x); };                            \
    });                                                                             \
  }
EMBER_ROUNDING(floor, Floor)
EMBER_ROUNDING(ceil, Ceil)
EMBER_ROUNDING(round, Round)
EMBER_ROUNDING(trunc, Trunc)
#undef EMBER_ROUNDING

Tensor logical_not(const Tensor& self, const Tensor& out) {
  return map_unary("logical_not", self, out, ScalarType::Bool, WithComplex<DispatchAll>{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x) -> bool { return x == A(0); };
  });
}

Tensor bitwise_not(const Tensor& self, const Tensor& out) {
  return map_unary("bitwise_not", self, out, self->dtype(), WithUnsigned<DispatchIntegral>{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x) -> A {
      if constexpr (std::is_same_v<A, bool>) return !x;
      else return static_cast<A>(~x);
    };
  });
}

#define EMBER_CLASSIFY(NAME, FN)                                                    \
  Tensor NAME(const Tensor& self) {                                                 \
    return map_unary(#NAME, self, Tensor(), ScalarType::Bool, WithComplex<WithUnsigned<DispatchAll>>{}, \
                     [](auto tag) {                                                 \
      using A = opmath_t<decltype(tag)>;                                            \
      return [](A x) -> bool { return unary_fn::FN{}(x); };                         \
    });                                                                             \
  }
EMBER_CLASSIFY(isnan, IsNan)
EMBER_CLASSIFY(isinf, IsInf)
EMBER_CLASSIFY(isfinite, IsFinite)
EMBER_CLASSIFY(signbit, SignBit)
#undef EMBER_CLASSIFY

}  // namespace ember::cpu
