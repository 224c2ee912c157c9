// The scalar functions of the fused activation kernels (gelu and its backward), written once
// for the CPU kernels (activation_cpu.cpp) and the CUDA kernels (activation_cuda.cu).
//
// Each functor works in the compute type A (float for float32 and the 16-bit floats, double
// for float64). On the host, special_float.h's vectorisable normal tails (float and double)
// and vec_math.h's tanh. In CUDA code (.cu files, whose
// host side never calls them), CUDA's own normcdf and tanh.
#pragma once

#include <cmath>
#include <type_traits>
#include "ember/core/host_device.h"
#include "ember/ops/elementwise/unary_functions.h"
#if !defined(__CUDACC__)
#include "ember/ops/elementwise/special_float.h"
#endif

namespace ember::activation_fn {

constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)
constexpr double kBeta = 0.79788456080286535588;  // sqrt(2 / pi), of the tanh approximation
constexpr double kKappa = 0.044715;

template <typename A> EMBER_HOST_DEVICE inline A tanh_of(A x) { return unary_fn::Tanh{}(x); }

// gelu(x) = x Phi(x).
struct Gelu {
  template <typename A> EMBER_HOST_DEVICE A operator()(A x) const {
#if defined(__CUDACC__)
    if constexpr (std::is_same_v<A, float>) return x * ::normcdff(x);
    else return x * ::normcdf(x);
#else
    if constexpr (std::is_same_v<A, float>) return special_float::gelu(x);
    else return special_float::gelu_d(x);
#endif
  }
};

// g * gelu'(x), gelu'(x) = Phi(x) + x phi(x).
struct GeluBackward {
  template <typename A> EMBER_HOST_DEVICE A operator()(A g, A x) const {
#if defined(__CUDACC__)
    A cdf;
    if constexpr (std::is_same_v<A, float>) cdf = ::normcdff(x);
    else cdf = ::normcdf(x);
    return g * (cdf + x * A(kInvSqrt2Pi) * ::exp(A(-0.5) * x * x));
#else
    if constexpr (std::is_same_v<A, float>) return g * special_float::gelu_derivative(x);
    else return g * special_float::gelu_derivative_d(x);
#endif
  }
};

// gelu's tanh approximation: x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2.
struct GeluTanh {
  template <typename A> EMBER_HOST_DEVICE A operator()(A x) const {
    const A inner = A(kBeta) * (x + A(kKappa) * x * x * x);
    return A(0.5) * x * (A(1) + tanh_of(inner));
  }
};

// g times the derivative of GeluTanh: (1 + T) / 2 + x (1 - T^2) beta (1 + 3 kappa x^2) / 2
// with T = tanh(beta (x + kappa x^3)).
struct GeluTanhBackward {
  template <typename A> EMBER_HOST_DEVICE A operator()(A g, A x) const {
    const A x2 = x * x;
    const A t = tanh_of(A(kBeta) * (x + A(kKappa) * x2 * x));
    const A left = A(0.5) * (A(1) + t);
    const A right = A(0.5) * x * (A(1) - t * t) * A(kBeta) * (A(1) + A(3 * kKappa) * x2);
    return g * (left + right);
  }
};

}  // namespace ember::activation_fn

