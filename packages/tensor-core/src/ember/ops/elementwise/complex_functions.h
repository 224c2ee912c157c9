// The scalar functions of the unary ops on complex numbers (exp, log, sqrt, the trigonometric
// and hyperbolic functions and their inverses, sigmoid, reciprocal, sgn) and pow, one functor
// each, for the CPU kernels (unary_float_cpu.cpp, binary_cpu.cpp) and the CUDA ones
// (elementwise_cuda.cu, binary_cuda.cu): the same formulas on both devices.
//
// The transcendental functions are the C++ library's complex ones: std::complex on the host
// (C99 Annex G branch cuts, signed zeros and infinities, as NumPy and PyTorch's CPU kernels),
// libcu++'s cuda::std::complex in CUDA code (the same special values, as PyTorch's CUDA
// kernels, which use thrust's); Complex<T> shares their layout. log1p and expm1 are written
// from their real parts so that they keep their precision near zero, where log(1 + z) and
// exp(z) - 1 lose it.
#pragma once

#include <cmath>

#include "ember/core/complex.h"

#if defined(__CUDACC__)
#include <cuda/std/complex>
#else
#include <complex>
#endif

namespace ember::complex_fn {

#if defined(__CUDACC__)
namespace lib = ::cuda::std;
#else
namespace lib = ::std;
#endif

template <typename T> EMBER_HOST_DEVICE inline lib::complex<T> to_std(Complex<T> z) { return {z.re, z.im}; }
template <typename T> EMBER_HOST_DEVICE inline Complex<T> from_std(lib::complex<T> z) { return {z.real(), z.imag()}; }

#define EMBER_STD_COMPLEX(NAME, FN)                                                   \
  struct NAME {                                                                       \
    template <typename T> EMBER_HOST_DEVICE Complex<T> operator()(Complex<T> z) const { \
      return from_std(lib::FN(to_std(z)));                                            \
    }                                                                                 \
  };
EMBER_STD_COMPLEX(Exp, exp)
EMBER_STD_COMPLEX(Log, log)
EMBER_STD_COMPLEX(Log10, log10)
EMBER_STD_COMPLEX(Sqrt, sqrt)
EMBER_STD_COMPLEX(Sin, sin)
EMBER_STD_COMPLEX(Cos, cos)
EMBER_STD_COMPLEX(Tan, tan)
EMBER_STD_COMPLEX(Sinh, sinh)
EMBER_STD_COMPLEX(Cosh, cosh)
EMBER_STD_COMPLEX(Tanh, tanh)
EMBER_STD_COMPLEX(Asin, asin)
EMBER_STD_COMPLEX(Acos, acos)
EMBER_STD_COMPLEX(Atan, atan)
EMBER_STD_COMPLEX(Asinh, asinh)
EMBER_STD_COMPLEX(Acosh, acosh)
EMBER_STD_COMPLEX(Atanh, atanh)
#undef EMBER_STD_COMPLEX

struct Log2 {
  template <typename T> EMBER_HOST_DEVICE Complex<T> operator()(Complex<T> z) const {
    const lib::complex<T> l = lib::log(to_std(z));
    const T inv_ln2 = T(1.4426950408889634);
    return {l.real() * inv_ln2, l.imag() * inv_ln2};
  }
};
// log(1 + z) = log|1 + z| + i arg(1 + z), with |1 + z|^2 - 1 = x(2 + x) + y^2 formed exactly
// enough for small z.
struct Log1p {
  template <typename T> EMBER_HOST_DEVICE Complex<T> operator()(Complex<T> z) const {
    const T x = z.re, y = z.im;
    if (std::abs(x) > T(0.5) || std::abs(y) > T(0.5)) return from_std(lib::log(T(1) + to_std(z)));
    return {T(0.5) * std::log1p(x * (T(2) + x) + y * y), std::atan2(y, T(1) + x)};
  }
};
// 2^z = exp(z ln2).
struct Exp2 {
  template <typename T> EMBER_HOST_DEVICE Complex<T> operator()(Complex<T> z) const {
    const T ln2 = T(0.69314718055994530942);
    const lib::complex<T> e = lib::exp(lib::complex<T>(z.re * ln2, z.im * ln2));
    return {e.real(), e.imag()};
  }
};
// exp(z) - 1 = (expm1(x) cos y - 2 sin^2(y/2)) + i e^x sin y; infinite and NaN parts through
// exp(z) - 1, whose special cases (C99 Annex G) the formula would turn into NaN.
struct Expm1 {
  template <typename T> EMBER_HOST_DEVICE Complex<T> operator()(Complex<T> z) const {
    const T x = z.re, y = z.im, s = std::sin(y / T(2));
    if (!std::isfinite(x) || !std::isfinite(y)) {
      const lib::complex<T> e = lib::exp(to_std(z));
      return {e.real() - T(1), e.imag()};
    }
    // + 0 makes the real part of expm1(-0 + 0i) +0, as exp(z) - 1 gives
    return {std::expm1(x) * std::cos(y) - T(2) * s * s + T(0), std::exp(x) * std::sin(y)};
  }
};
struct Reciprocal {
  template <typename T> EMBER_HOST_DEVICE Complex<T> operator()(Complex<T> z) const { return Complex<T>(T(1)) / z; }
};
struct Rsqrt {
  template <typename T> EMBER_HOST_DEVICE Complex<T> operator()(Complex<T> z) const {
    return Complex<T>(T(1)) / from_std(lib::sqrt(to_std(z)));
  }
};
struct Sigmoid {
  template <typename T> EMBER_HOST_DEVICE Complex<T> operator()(Complex<T> z) const {
    return Complex<T>(T(1)) / (Complex<T>(T(1)) + from_std(lib::exp(to_std(-z))));
  }
};
// z / |z|, and 0 at 0 (PyTorch's sgn).
struct Sgn {
  template <typename T> EMBER_HOST_DEVICE Complex<T> operator()(Complex<T> z) const {
    const T a = complex_abs(z);
    return a == T(0) ? Complex<T>() : Complex<T>(z.re / a, z.im / a);
  }
};

// x ** y on the principal branch.
struct Pow {
  template <typename T> EMBER_HOST_DEVICE Complex<T> operator()(Complex<T> x, Complex<T> y) const {
    return from_std(lib::pow(to_std(x), to_std(y)));
  }
};

}  // namespace ember::complex_fn
