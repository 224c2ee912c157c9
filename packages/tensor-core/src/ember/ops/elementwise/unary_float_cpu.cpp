// The unary functions of reals on the CPU (exp, log, the trigonometric and hyperbolic
// functions, ...): integer and bool inputs are computed in the default float dtype. The
// scalar functions are in unary_functions.h (shared with the CUDA kernels); the unary ops
// that keep their input's dtype are in unary_cpu.cpp.
#include <cmath>

#include "ember/backends/cpu/elementwise.h"
#include "ember/ops/elementwise/unary_functions.h"

namespace ember::cpu {
namespace {

// Ops defined on reals: integer and bool inputs are computed in the default float dtype.
template <typename MakeF>
Tensor float_unary(const char* op, const Tensor& self, const Tensor& out, MakeF make_f) {
  ScalarType t = is_floating(self->dtype()) ? self->dtype() : default_float_dtype();
  return map_unary(op, to_dtype(self, t), out, t, DispatchFloat{}, make_f);
}

}  // namespace

#define EMBER_FLOAT_UNARY(NAME, FN)                                               \
  Tensor NAME(const Tensor& self, const Tensor& out) {                            \
    return float_unary(#NAME, self, out, [](auto tag) {                           \
      using A = opmath_t<decltype(tag)>;                                          \
      return [](A x) -> A { return unary_fn::FN{}(x); };                          \
    });                                                                           \
  }
EMBER_FLOAT_UNARY(exp, Exp)
EMBER_FLOAT_UNARY(log, Log)
EMBER_FLOAT_UNARY(log1p, Log1p)
EMBER_FLOAT_UNARY(expm1, Expm1)
EMBER_FLOAT_UNARY(sqrt, Sqrt)
EMBER_FLOAT_UNARY(rsqrt, Rsqrt)
EMBER_FLOAT_UNARY(sin, Sin)
EMBER_FLOAT_UNARY(cos, Cos)
EMBER_FLOAT_UNARY(tan, Tan)
EMBER_FLOAT_UNARY(tanh, Tanh)
EMBER_FLOAT_UNARY(sigmoid, Sigmoid)
EMBER_FLOAT_UNARY(erf, Erf)
EMBER_FLOAT_UNARY(log2, Log2)
EMBER_FLOAT_UNARY(log10, Log10)
EMBER_FLOAT_UNARY(atan, Atan)
EMBER_FLOAT_UNARY(asin, Asin)
EMBER_FLOAT_UNARY(acos, Acos)
EMBER_FLOAT_UNARY(sinh, Sinh)
EMBER_FLOAT_UNARY(cosh, Cosh)
EMBER_FLOAT_UNARY(asinh, Asinh)
EMBER_FLOAT_UNARY(acosh, Acosh)
EMBER_FLOAT_UNARY(atanh, Atanh)
EMBER_FLOAT_UNARY(reciprocal, Reciprocal)
#undef EMBER_FLOAT_UNARY

}  // namespace ember::cpu
