// The unary functions of reals on the CPU (exp, log, the trigonometric and hyperbolic
// functions, ...): integer and bool inputs are computed in the default float dtype. The
// scalar functions are in unary_functions.h (shared with the CUDA kernels); the unary ops
// that keep their input's dtype are in unary_cpu.cpp.
#include <cmath>

#include "ember/backends/cpu/elementwise.h"
#include "ember/ops/elementwise/complex_functions.h"
#include "ember/ops/elementwise/unary_avx512.h"
#include "ember/ops/elementwise/special_float.h"
#include "ember/ops/elementwise/unary_functions.h"

namespace ember::cpu {
namespace {

// Ops defined on reals: integer and bool inputs are computed in the default float dtype.
template <typename Dispatch, typename MakeF>
Tensor float_unary(const char* op, const Tensor& self, const Tensor& out, Dispatch dispatch, MakeF make_f) {
  const ScalarType dt = self->dtype();
  const ScalarType t = is_floating(dt) || is_complex(dt) ? dt : default_float_dtype();
  return map_unary(op, to_dtype(self, t), out, t, dispatch, make_f);
}

// A function of reals and of complex numbers: FN on reals, CFN on complex inputs.
template <typename FN, typename CFN> struct WithComplexFn {
  template <typename A> A operator()(A x) const {
    if constexpr (is_complex_v<A>) return CFN{}(x);
    else return FN{}(x);
  }
};

}  // namespace

#define EMBER_FLOAT_UNARY(NAME, FN, CFN)                                                  \
  Tensor NAME(const Tensor& self, const Tensor& out) {                                    \
    return float_unary(#NAME, self, out, WithComplex<DispatchFloat>{},                    \
                       [](auto) { return WithComplexFn<unary_fn::FN, complex_fn::CFN>{}; }); \
  }
EMBER_FLOAT_UNARY(exp, Exp, Exp)
EMBER_FLOAT_UNARY(log, Log, Log)
EMBER_FLOAT_UNARY(log1p, Log1p, Log1p)
EMBER_FLOAT_UNARY(expm1, Expm1, Expm1)
EMBER_FLOAT_UNARY(sqrt, Sqrt, Sqrt)
EMBER_FLOAT_UNARY(rsqrt, Rsqrt, Rsqrt)
EMBER_FLOAT_UNARY(tanh, Tanh, Tanh)
EMBER_FLOAT_UNARY(log2, Log2, Log2)
EMBER_FLOAT_UNARY(log10, Log10, Log10)
EMBER_FLOAT_UNARY(atan, Atan, Atan)
EMBER_FLOAT_UNARY(asin, Asin, Asin)
EMBER_FLOAT_UNARY(acos, Acos, Acos)
EMBER_FLOAT_UNARY(sinh, Sinh, Sinh)
EMBER_FLOAT_UNARY(cosh, Cosh, Cosh)
EMBER_FLOAT_UNARY(asinh, Asinh, Asinh)
EMBER_FLOAT_UNARY(acosh, Acosh, Acosh)
EMBER_FLOAT_UNARY(atanh, Atanh, Atanh)
EMBER_FLOAT_UNARY(reciprocal, Reciprocal, Reciprocal)
#undef EMBER_FLOAT_UNARY

namespace {

// Functions with AVX-512 kernels of contiguous runs (elementwise.h's avx512 hook;
// unary_avx512.h).
struct SigmoidCpu : WithComplexFn<unary_fn::Sigmoid, complex_fn::Sigmoid> {
#if EMBER_SIMD_DISPATCH
  void avx512(double* y, const double* x, int64_t n) const { sigmoid_avx512(y, x, n); }
#endif
};
struct Exp2Cpu : WithComplexFn<unary_fn::Exp2, complex_fn::Exp2> {
#if EMBER_SIMD_DISPATCH
  void avx512(float* y, const float* x, int64_t n) const { exp2_avx512(y, x, n); }
  void avx512(double* y, const double* x, int64_t n) const { exp2_avx512(y, x, n); }
#endif
};

}  // namespace

Tensor sigmoid(const Tensor& self, const Tensor& out) {
  return float_unary("sigmoid", self, out, WithComplex<DispatchFloat>{},
                     [](auto) { return SigmoidCpu{}; });
}

Tensor exp2(const Tensor& self, const Tensor& out) {
  return float_unary("exp2", self, out, WithComplex<DispatchFloat>{},
                     [](auto) { return Exp2Cpu{}; });
}

namespace {
using special_float::Trig;

// sin, cos or tan of a float or double: a cheap reduction on the common range as the fast
// form, which unary_loop takes block by block (special_float.h: Cody and Waite's below 2^20
// for float, 2^24 for double), and the exact one beyond (float: the quarter turns of every
// float; double: the C library's).
template <Trig kFn> struct TrigFloat {
  float operator()(float x) const {
    if constexpr (kFn == Trig::Tan) return special_float::tan_f(x);
    float s, c;
    special_float::sincos_f(x, s, c);
    return kFn == Trig::Cos ? c : s;
  }
  float fast(float x) const {
    if constexpr (kFn == Trig::Tan) return special_float::tan_fast_f(x);
    float s, c;
    special_float::sincos_fast_f(x, s, c);
    return kFn == Trig::Cos ? c : s;
  }
  bool in_fast_range(float x) const { return std::fabs(x) < special_float::kSinCosFastLimit; }
};
template <Trig kFn> struct TrigDouble {
  double operator()(double x) const {
    return kFn == Trig::Sin ? std::sin(x) : kFn == Trig::Cos ? std::cos(x) : std::tan(x);
  }
  double fast(double x) const { return special_float::trig_fast_d<kFn>(x); }
  bool in_fast_range(double x) const { return std::fabs(x) < special_float::kTrigFastLimitD; }
};

template <Trig kFn> Tensor trig(const char* op, const Tensor& self, const Tensor& out) {
  return float_unary(op, self, out, WithComplex<DispatchFloat>{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    if constexpr (std::is_same_v<A, float>) {
      return TrigFloat<kFn>{};
    } else if constexpr (std::is_same_v<A, double>) {
      return TrigDouble<kFn>{};
    } else {
      static_assert(is_complex_v<A>);
      return [](A x) -> A {
        if constexpr (kFn == Trig::Sin) return complex_fn::Sin{}(x);
        else if constexpr (kFn == Trig::Cos) return complex_fn::Cos{}(x);
        else return complex_fn::Tan{}(x);
      };
    }
  });
}
}  // namespace

Tensor sin(const Tensor& self, const Tensor& out) { return trig<Trig::Sin>("sin", self, out); }
Tensor cos(const Tensor& self, const Tensor& out) { return trig<Trig::Cos>("cos", self, out); }
Tensor tan(const Tensor& self, const Tensor& out) { return trig<Trig::Tan>("tan", self, out); }

// erf: special_float.h's vectorisable kernels (float for the 16-bit floats too).
Tensor erf(const Tensor& self, const Tensor& out) {
  return float_unary("erf", self, out, DispatchFloat{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x) -> A {
      if constexpr (std::is_same_v<A, float>) return special_float::erf(x);
      else if constexpr (std::is_same_v<A, double>) return special_float::erf_d(x);
      else return unary_fn::Erf{}(x);
    };
  });
}

// z / |z| for complex (0 at 0); sign for everything else, as PyTorch.
Tensor sgn(const Tensor& self, const Tensor& out) {
  if (!is_complex(self->dtype())) return ops::sign(self, out);
  return map_unary("sgn", self, out, self->dtype(), DispatchComplex{}, [](auto tag) {
    using A = decltype(tag);
    return [](A z) -> A { return complex_fn::Sgn{}(z); };
  });
}

// |z| of complex numbers (a real result); the absolute value of reals.
Tensor abs(const Tensor& self, const Tensor& out) {
  if (is_complex(self->dtype())) {
    return map_complex_to_real("abs", self, out, [](auto z) { return complex_abs(z); });
  }
  return map_unary("abs", self, out, self->dtype(), WithUnsigned<DispatchNumeric>{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x) -> A { return unary_fn::Abs{}(x); };
  });
}

// The argument of complex numbers; pi for negative reals, 0 otherwise (NaN stays NaN);
// integers give the default float dtype.
Tensor angle(const Tensor& self, const Tensor& out) {
  if (is_complex(self->dtype())) {
    return map_complex_to_real("angle", self, out, [](auto z) { return std::atan2(z.im, z.re); });
  }
  return float_unary("angle", self, out, DispatchFloat{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x) -> A { return x != x ? x : (x < A(0) ? A(3.14159265358979323846) : A(0)); };
  });
}

// The conjugate, computed; a real tensor is its own conjugate (copied, or self in place).
Tensor conj_physical(const Tensor& self, const Tensor& out) {
  if (!is_complex(self->dtype())) return finish_out("conj_physical", out, out == self ? self : ops::clone(self));
  return map_unary("conj_physical", self, out, self->dtype(), DispatchComplex{}, [](auto tag) {
    using A = decltype(tag);
    return [](A z) -> A { return complex_conj(z); };
  });
}

}  // namespace ember::cpu
