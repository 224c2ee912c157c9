// Complex<T>: the element type of complex64 (T = float) and complex128 (T = double).
//
// Two T side by side, real part first: the layout of C99 `float _Complex`, std::complex<T>,
// NumPy's complex64/complex128, DLPack's kDLComplex and cuComplex, so storage is shared with
// all of them without a copy. Arithmetic is written out (host and device): the products use
// the textbook formula, as PyTorch's c10::complex does, so loops over them vectorise (no
// C99 Annex G recovery of infinities); division scales by the larger part of the divisor
// (Smith's method, as NumPy and PyTorch) so that |d|^2 does not overflow.
#pragma once

#include <cmath>
#include <type_traits>

#include "ember/core/host_device.h"

namespace ember {

template <typename T> struct Complex {
  T re = T(0), im = T(0);

  Complex() = default;
  EMBER_HOST_DEVICE constexpr Complex(T r, T i = T(0)) : re(r), im(i) {}  // NOLINT(implicit)
  template <typename U, typename = std::enable_if_t<!std::is_same_v<U, T>>>
  EMBER_HOST_DEVICE constexpr explicit Complex(const Complex<U>& o)
      : re(static_cast<T>(o.re)), im(static_cast<T>(o.im)) {}

  EMBER_HOST_DEVICE constexpr T real() const { return re; }
  EMBER_HOST_DEVICE constexpr T imag() const { return im; }

  EMBER_HOST_DEVICE Complex& operator+=(const Complex& o) { re += o.re; im += o.im; return *this; }
  EMBER_HOST_DEVICE Complex& operator-=(const Complex& o) { re -= o.re; im -= o.im; return *this; }
  EMBER_HOST_DEVICE Complex& operator*=(const Complex& o) { return *this = *this * o; }
  EMBER_HOST_DEVICE Complex& operator/=(const Complex& o) { return *this = *this / o; }

  friend EMBER_HOST_DEVICE constexpr Complex operator+(const Complex& a, const Complex& b) {
    return {a.re + b.re, a.im + b.im};
  }
  friend EMBER_HOST_DEVICE constexpr Complex operator-(const Complex& a, const Complex& b) {
    return {a.re - b.re, a.im - b.im};
  }
  friend EMBER_HOST_DEVICE constexpr Complex operator-(const Complex& a) { return {-a.re, -a.im}; }
  friend EMBER_HOST_DEVICE constexpr Complex operator*(const Complex& a, const Complex& b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  }
  friend EMBER_HOST_DEVICE Complex operator/(const Complex& a, const Complex& b) {
    const T ar = std::abs(b.re), ai = std::abs(b.im);
    if (ar >= ai) {
      if (ar == T(0) && ai == T(0)) return {a.re / ar, a.im / ai};  // x / 0: inf or nan parts
      const T r = b.im / b.re, s = T(1) / (b.re + b.im * r);
      return {(a.re + a.im * r) * s, (a.im - a.re * r) * s};
    }
    const T r = b.re / b.im, s = T(1) / (b.im + b.re * r);
    return {(a.re * r + a.im) * s, (a.im * r - a.re) * s};
  }
  friend EMBER_HOST_DEVICE constexpr bool operator==(const Complex& a, const Complex& b) {
    return a.re == b.re && a.im == b.im;
  }
  friend EMBER_HOST_DEVICE constexpr bool operator!=(const Complex& a, const Complex& b) { return !(a == b); }
};

template <typename T> struct is_complex_type : std::false_type {};
template <typename T> struct is_complex_type<Complex<T>> : std::true_type {};
template <typename T> constexpr bool is_complex_v = is_complex_type<T>::value;

// The real type of a complex type (the type itself otherwise).
template <typename T> struct RealOf { using type = T; };
template <typename T> struct RealOf<Complex<T>> { using type = T; };
template <typename T> using real_t = typename RealOf<T>::type;

template <typename T> EMBER_HOST_DEVICE constexpr Complex<T> complex_conj(const Complex<T>& z) { return {z.re, -z.im}; }

// |z| without overflow or underflow in the squares.
template <typename T> EMBER_HOST_DEVICE T complex_abs(const Complex<T>& z) { return std::hypot(z.re, z.im); }

}  // namespace ember
