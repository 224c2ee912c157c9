// The scalar function of every unary elementwise op, written once for the CPU kernels
// (unary_cpu.cpp) and the CUDA kernels (elementwise_cuda.cu).
//
// Each is a functor over the op's compute type A (opmath_t of the element type: float for the
// 16-bit floats, the type itself otherwise), callable on the host and on the device. The
// kernels choose the dtypes (which ops compute integers in the default float dtype, which
// refuse bool) and convert to and from A; the functor only says what one element becomes.
//
// Where the two devices use different implementations of one function, the functor says so:
// on the host exp, expm1, tanh, sigmoid, sinh, cosh, their inverses, the logarithms, sin, cos,
// tan, atan, asin and acos use vec_math.h's and special_float.h's branch-free versions (within 2-4 ulp
// of the C library, and vectorised by the compiler), on the device CUDA's own. Every other
// function is the C library's (std:: on the host, CUDA's overloads of the same names on the
// device).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ember/core/complex.h"
#include "ember/core/host_device.h"
#include "ember/ops/elementwise/vec_math.h"
#if !defined(__CUDACC__)
#include "ember/ops/elementwise/special_float.h"  // sin, cos, tan, atan, asin, acos
#endif

// The C library's function `fn` for the current side of the compilation.
#if defined(__CUDA_ARCH__)
#define EMBER_LIBM(fn) ::fn
#else
#define EMBER_LIBM(fn) std::fn
#endif

namespace ember::unary_fn {

// ---- real functions: the kernels compute integers and bool in the default float dtype ----

#define EMBER_LIBM_FUNCTOR(NAME, FN)                                      \
  struct NAME {                                                           \
    template <typename A> EMBER_HOST_DEVICE A operator()(A x) const {     \
      return EMBER_LIBM(FN)(x);                                           \
    }                                                                     \
  };
EMBER_LIBM_FUNCTOR(Sqrt, sqrt)
EMBER_LIBM_FUNCTOR(Tan, tan)
EMBER_LIBM_FUNCTOR(Erf, erf)
// the rounding ops (the kernels copy integer inputs unchanged)
EMBER_LIBM_FUNCTOR(Floor, floor)
EMBER_LIBM_FUNCTOR(Ceil, ceil)
EMBER_LIBM_FUNCTOR(Round, nearbyint)  // half to even, as PyTorch
EMBER_LIBM_FUNCTOR(Trunc, trunc)
#undef EMBER_LIBM_FUNCTOR

// The logarithms, expm1, the hyperbolic and trigonometric functions: vec_math.h's and
// special_float.h's (float and double vectorised, the C library's for the other types) on the
// host, CUDA's on the device. In .cu files (whose host
// side never calls them) CUDA's on both sides, so that special_float.h stays out of nvcc.
#if defined(__CUDACC__)
#define EMBER_HOST_FUNCTOR(NAME, FN, HOST) EMBER_LIBM_FUNCTOR(NAME, FN)
#else
#define EMBER_HOST_FUNCTOR(NAME, FN, HOST)                                       \
  struct NAME {                                                                \
    template <typename A> A operator()(A x) const { return HOST(x); }          \
  };
#endif
#define EMBER_LIBM_FUNCTOR(NAME, FN)                                      \
  struct NAME {                                                           \
    template <typename A> EMBER_HOST_DEVICE A operator()(A x) const {     \
      return EMBER_LIBM(FN)(x);                                           \
    }                                                                     \
  };
EMBER_HOST_FUNCTOR(Log, log, log_)
EMBER_HOST_FUNCTOR(Log2, log2, log2_)
EMBER_HOST_FUNCTOR(Log10, log10, log10_)
EMBER_HOST_FUNCTOR(Log1p, log1p, log1p_)
EMBER_HOST_FUNCTOR(Expm1, expm1, expm1_)
EMBER_HOST_FUNCTOR(Sinh, sinh, sinh_)
EMBER_HOST_FUNCTOR(Cosh, cosh, cosh_)
EMBER_HOST_FUNCTOR(Asinh, asinh, asinh_)
EMBER_HOST_FUNCTOR(Acosh, acosh, acosh_)
EMBER_HOST_FUNCTOR(Atanh, atanh, atanh_)
EMBER_HOST_FUNCTOR(Sin, sin, special_float::sin_)
EMBER_HOST_FUNCTOR(Cos, cos, special_float::cos_)
EMBER_HOST_FUNCTOR(Atan, atan, special_float::atan_)
EMBER_HOST_FUNCTOR(Asin, asin, special_float::asin_)
EMBER_HOST_FUNCTOR(Acos, acos, special_float::acos_)
#undef EMBER_LIBM_FUNCTOR
#undef EMBER_HOST_FUNCTOR

struct Exp {
  template <typename A> EMBER_HOST_DEVICE A operator()(A x) const {
#if defined(__CUDA_ARCH__)
    return ::exp(x);
#else
    return exp_(x);
#endif
  }
};
struct Exp2 {
  template <typename A> EMBER_HOST_DEVICE A operator()(A x) const {
#if defined(__CUDA_ARCH__)
    return ::exp2(x);
#else
    return exp2_(x);
#endif
  }
};
struct Tanh {
  template <typename A> EMBER_HOST_DEVICE A operator()(A x) const {
#if defined(__CUDA_ARCH__)
    return ::tanh(x);
#else
    return tanh_(x);
#endif
  }
};
struct Sigmoid {
  template <typename A> EMBER_HOST_DEVICE A operator()(A x) const {
#if defined(__CUDA_ARCH__)
    return A(1) / (A(1) + ::exp(-x));
#else
    return sigmoid_(x);
#endif
  }
};
struct Rsqrt {
  template <typename A> EMBER_HOST_DEVICE A operator()(A x) const { return A(1) / EMBER_LIBM(sqrt)(x); }
};
struct Reciprocal {
  template <typename A> EMBER_HOST_DEVICE A operator()(A x) const { return A(1) / x; }
};

// ---- functions that keep the dtype: every numeric type (sign also bool) ----

// Signed integers wrap around, as in PyTorch (-(-2^31) is -2^31 in int32), computed in the
// unsigned type: the signed overflow would be undefined behaviour.
template <typename A> EMBER_HOST_DEVICE A wrapping_neg(A x) {
  if constexpr (std::is_integral_v<A> && std::is_signed_v<A>) {
    return static_cast<A>(-static_cast<std::make_unsigned_t<A>>(x));
  } else {
    return static_cast<A>(-x);
  }
}
// x * y, x + y and x - y wrapping around for the integers (signed overflow is undefined in
// C++; the machine wraps, and so do PyTorch's results): computed in an unsigned type at least
// as wide as unsigned int (uint16 * uint16 would multiply as int).
template <typename A> constexpr bool kWraps = std::is_integral_v<A> && !std::is_same_v<A, bool>;
template <typename A> using wrap_t = std::common_type_t<std::make_unsigned_t<A>, unsigned>;
template <typename A> EMBER_HOST_DEVICE A wrapping_mul(A x, A y) {
  if constexpr (kWraps<A>) return static_cast<A>(static_cast<wrap_t<A>>(x) * static_cast<wrap_t<A>>(y));
  else return static_cast<A>(x * y);
}
template <typename A> EMBER_HOST_DEVICE A wrapping_add(A x, A y) {
  if constexpr (kWraps<A>) return static_cast<A>(static_cast<wrap_t<A>>(x) + static_cast<wrap_t<A>>(y));
  else return static_cast<A>(x + y);
}
template <typename A> EMBER_HOST_DEVICE A wrapping_sub(A x, A y) {
  if constexpr (kWraps<A>) return static_cast<A>(static_cast<wrap_t<A>>(x) - static_cast<wrap_t<A>>(y));
  else return static_cast<A>(x - y);
}

struct Neg {
  template <typename A> EMBER_HOST_DEVICE A operator()(A x) const { return wrapping_neg(x); }
};
// -0 becomes +0; unsigned values are their own absolute value; abs(INT_MIN) is INT_MIN.
struct Abs {
  template <typename A> EMBER_HOST_DEVICE A operator()(A x) const {
    return x < A(0) ? wrapping_neg(x) : (x == A(0) ? A(0) : x);
  }
};
// NaN stays NaN.
struct Relu {
  template <typename A> EMBER_HOST_DEVICE A operator()(A x) const { return (x > A(0) || x != x) ? x : A(0); }
};
struct Square {
  template <typename A> EMBER_HOST_DEVICE A operator()(A x) const { return wrapping_mul(x, x); }
};
// -1, 0 or 1 (NaN stays NaN; bool is itself).
struct Sign {
  template <typename A> EMBER_HOST_DEVICE A operator()(A x) const {
    if constexpr (std::is_same_v<A, bool>) {
      return x;
    } else if constexpr (std::is_floating_point_v<A>) {
      return x != x ? x : static_cast<A>((A(0) < x) - (x < A(0)));
    } else {
      return static_cast<A>((A(0) < x) - (x < A(0)));
    }
  }
};

// ---- classification: bool results (bool and the integers are finite numbers) ----

struct IsNan {
  template <typename A> EMBER_HOST_DEVICE bool operator()(A x) const {
    if constexpr (is_complex_v<A>) return (*this)(x.re) || (*this)(x.im);
    else if constexpr (std::is_floating_point_v<A>) return x != x;
    else return false;
  }
};
struct IsInf {
  template <typename A> EMBER_HOST_DEVICE bool operator()(A x) const {
    if constexpr (is_complex_v<A>) {
      return (*this)(x.re) || (*this)(x.im);
    } else if constexpr (std::is_floating_point_v<A>) {
      return x == std::numeric_limits<A>::infinity() || x == -std::numeric_limits<A>::infinity();
    } else {
      return false;
    }
  }
};
struct IsFinite {
  template <typename A> EMBER_HOST_DEVICE bool operator()(A x) const { return !IsNan{}(x) && !IsInf{}(x); }
};
// The sign bit: set for -0.0 and for NaNs that carry it; x < 0 for the integers. (On the host
// the bits are read directly: GCC 12 fails on std::signbit inlined into an AVX-512 loop.)
struct SignBit {
  template <typename A> EMBER_HOST_DEVICE bool operator()(A x) const {
    if constexpr (std::is_floating_point_v<A>) {
#if defined(__CUDA_ARCH__)
      return ::signbit(x);
#else
      using U = std::conditional_t<sizeof(A) == 4, uint32_t, uint64_t>;
      U u;
      std::memcpy(&u, &x, sizeof(A));
      return (u >> (8 * sizeof(A) - 1)) != 0;
#endif
    } else if constexpr (std::is_signed_v<A>) {
      return x < A(0);
    } else {
      return false;
    }
  }
};

}  // namespace ember::unary_fn
