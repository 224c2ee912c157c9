// The scalar special functions of the special ops (lgamma, digamma, polygamma, erfinv,
// erfcx, the normal distribution's ndtr / ndtri / log_ndtr, the modified Bessel functions,
// the Bessel functions of the first and second kind, the Airy function Ai, the Hurwitz zeta
// function and the regularised incomplete gamma functions), written once for the CPU kernels
// (special_cpu.cpp) and the CUDA kernels (special_cuda.cu).
//
// Every function takes and returns double: the kernels compute float16, bfloat16 and float32
// in double as well, so every dtype gets the double result rounded once. The methods are
// textbook ones, each chosen so that its terms do not cancel where it is used:
//   - digamma, trigamma: recurrence up to x >= 10, then the asymptotic (Stirling) series;
//     reflection for negative x.
//   - zeta: the Euler-Maclaurin formula after summing the first terms directly.
//   - erfinv / ndtri: a closed-form first guess (Winitzki's), refined by Halley steps on
//     erf (central) or erfc (tails), so the tails keep their relative precision.
//   - erfcx: exp(x^2) erfc(x) with x^2 split exactly in two; its asymptotic series beyond 26.
//   - I0, I1: power series for |x| <= 30, the asymptotic series beyond.
//   - K0, K1: power series for x <= 1; the integral of exp(-x cosh t) cosh(nu t) by the
//     trapezoidal rule (exponentially accurate for this integrand) up to 18; the asymptotic
//     series beyond.
//   - Ai: its Maclaurin series on [-8, 2]; K_{1/3} for x > 2; the oscillatory asymptotic
//     expansion below -8.
//   - igamma / igammac: the series of P(a, x) below x = a + 1, Legendre's continued fraction
//     of Q(a, x) (modified Lentz) above.
// The Bessel functions of integer order J0, J1, Y0, Y1 are the C library's.
#pragma once

#include <cmath>

#include "ember/core/host_device.h"
#include "ember/ops/elementwise/unary_functions.h"  // EMBER_LIBM

namespace ember::special_fn {

constexpr double kPi = 3.14159265358979323846;
constexpr double kSqrtPi = 1.77245385090551602730;
constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kEulerGamma = 0.57721566490153286061;
constexpr double kEps = 1.1102230246251565e-16;  // 2^-53
// The truncation error of a series computed in double for a float result: 2^-32, far below
// float's rounding (2^-24), so the float result is the double one's rounding.
constexpr double kFloatResultEps = 2.3283064365386963e-10;

EMBER_HOST_DEVICE inline double nan_value() { return NAN; }
EMBER_HOST_DEVICE inline double inf_value() { return INFINITY; }
EMBER_HOST_DEVICE inline bool is_nan(double x) { return x != x; }

EMBER_HOST_DEVICE inline double lgamma(double x) { return EMBER_LIBM(lgamma)(x); }
EMBER_HOST_DEVICE inline double erfc(double x) { return EMBER_LIBM(erfc)(x); }

// psi(x) = d/dx log Gamma(x); psi(+-0) = -+inf, NaN at the negative integers.
EMBER_HOST_DEVICE inline double digamma(double x) {
  if (x == 0) return EMBER_LIBM(copysign)(inf_value(), -x);
  if (is_nan(x) || x == -inf_value()) return nan_value();
  double result = 0;
  if (x < 0) {
    const double fl = EMBER_LIBM(floor)(x);
    if (x == fl) return nan_value();
    // psi(x) = psi(1 - x) - pi / tan(pi x), tan of the fractional part (period 1)
    result = -kPi / EMBER_LIBM(tan)(kPi * (x - fl));
    x = 1 - x;
  }
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  if (x == inf_value()) return inf_value();
  const double z = 1 / (x * x);
  // Stirling: log x - 1/(2x) - sum B_2k / (2k x^2k)
  const double tail =
      z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12))))));
  return result + EMBER_LIBM(log)(x) - 0.5 / x - tail;
}

// psi'(x); inf at its poles, the non-positive integers (PyTorch's reflection gives a large
// finite 1 / sin^2(pi x) of a rounded pi x there).
EMBER_HOST_DEVICE inline double trigamma(double x) {
  if (is_nan(x)) return x;
  if (x <= 0 && x == EMBER_LIBM(floor)(x) && x != -inf_value()) return inf_value();
  double result = 0;
  double sign = 1;
  if (x < 0.5) {
    // psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x)
    const double s = EMBER_LIBM(sin)(kPi * x);
    result = kPi * kPi / (s * s);
    sign = -1;
    x = 1 - x;
  }
  double acc = 0;
  while (x < 10) {
    acc += 1 / (x * x);
    x += 1;
  }
  const double z = 1 / (x * x);
  // 1/x + 1/(2x^2) + sum B_2k / x^(2k+1)
  const double series =
      1 + 0.5 / x +
      z * (1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 - z * (1.0 / 30 - z * (5.0 / 66 - z * (691.0 / 2730 - z * (7.0 / 6 - z * 3617.0 / 510)))))));
  acc += series / x;
  return result + sign * acc;
}

// The Hurwitz zeta function sum_k (k + q)^-s, s > 1 (inf at s = 1, NaN below); at q <= 0:
// inf at the integers, NaN for a non-integer s (PyTorch's order of these cases, NaNs included).
EMBER_HOST_DEVICE inline double zeta(double s, double q) {
  if (s == 1) return inf_value();
  if (s < 1) return nan_value();
  if (q <= 0) {
    if (q == EMBER_LIBM(floor)(q)) return inf_value();
    if (s != EMBER_LIBM(floor)(s)) return nan_value();
    if (q < -1e7) return nan_value();  // the direct sum below would take ~|q| terms
  }
  if (q == inf_value()) return nan_value();  // as PyTorch (the limit would be 0)
  double a = q;
  double b = EMBER_LIBM(pow)(a, -s);
  double sum = b;
  int i = 0;
  while (i < 9 || a <= 9) {
    ++i;
    a += 1;
    b = EMBER_LIBM(pow)(a, -s);
    sum += b;
    if (EMBER_LIBM(fabs)(b / sum) < kEps) return sum;
  }
  // Euler-Maclaurin at w = a (its term b is in the sum in full; the formula wants half)
  const double w = a;
  sum += w * b / (s - 1) - 0.5 * b;
  // B_2j / (2j)! * s (s+1) ... (s+2j-2) * w^(-s-2j+1), j = 1, 2, ...
  const double bernoulli[12] = {1.0 / 6,      -1.0 / 30,      1.0 / 42,        -1.0 / 30,
                                5.0 / 66,     -691.0 / 2730,  7.0 / 6,         -3617.0 / 510,
                                43867.0 / 798, -174611.0 / 330, 854513.0 / 138, -236364091.0 / 2730};
  double rising = s * b / w;  // s * w^(-s-1)
  double factorial = 2;       // (2j)!
  for (int j = 1; j <= 12; ++j) {
    if (j > 1) {
      rising *= (s + 2 * j - 3) * (s + 2 * j - 2) / (w * w);
      factorial *= (2.0 * j - 1) * (2.0 * j);
    }
    const double term = bernoulli[j - 1] / factorial * rising;
    sum += term;
    if (EMBER_LIBM(fabs)(term) < kEps * EMBER_LIBM(fabs)(sum)) break;
  }
  return sum;
}

// The n-th derivative of digamma (n >= 0; the kernels refuse a negative n).
EMBER_HOST_DEVICE inline double polygamma(int64_t n, double x) {
  if (n == 0) return digamma(x);
  if (n == 1) return trigamma(x);
  double factorial = 1;
  for (int64_t k = 2; k <= n && factorial < inf_value(); ++k) factorial *= static_cast<double>(k);
  const double sign = n % 2 == 1 ? 1.0 : -1.0;
  const double s = static_cast<double>(n) + 1.0;
  const double r = sign * factorial * zeta(s, x);
  if (is_nan(r) && x > 0) {
    // n! overflowed and zeta(n + 1, x) underflowed: their product from logarithms, with
    // zeta(s, x) ~ x^-s (1 + x / (s - 1)) for such large s
    return sign * EMBER_LIBM(exp)(lgamma(s) - s * EMBER_LIBM(log)(x) + EMBER_LIBM(log1p)(x / (s - 1)));
  }
  return r;
}

// Halley steps on erf(x) = y (central, |y| <= 0.5) or erfc(x) = w (tail, x > 0): f'(x) is
// 2/sqrt(pi) exp(-x^2), f''/f' = -2x.
EMBER_HOST_DEVICE inline double erfinv_central(double y) {
  double x;
  if (EMBER_LIBM(fabs)(y) < 1e-3) {
    x = 0.5 * kSqrtPi * y * (1 + kPi / 12 * y * y);  // the series' first two terms
  } else {
    const double l = EMBER_LIBM(log1p)(-y * y);
    const double b = 2 / (kPi * 0.147) + 0.5 * l;
    x = EMBER_LIBM(copysign)(EMBER_LIBM(sqrt)(EMBER_LIBM(sqrt)(b * b - l / 0.147) - b), y);
  }
  for (int it = 0; it < 2; ++it) {  // the guess is within 2e-3: Halley triples the digits
    const double f = EMBER_LIBM(erf)(x) - y;
    const double d = kTwoOverSqrtPi * EMBER_LIBM(exp)(-x * x);
    x -= f / (d + x * f);
  }
  return x;
}

// x > 0 with erfc(x) = w, for 0 < w <= 0.5.
EMBER_HOST_DEVICE inline double erfc_inverse_tail(double w) {
  const double l = EMBER_LIBM(log)(w * (2 - w));  // log(1 - (1 - w)^2) without cancellation
  const double b = 2 / (kPi * 0.147) + 0.5 * l;
  double x = EMBER_LIBM(sqrt)(EMBER_LIBM(sqrt)(b * b - l / 0.147) - b);
  for (int it = 0; it < 3; ++it) {
    const double f = w - EMBER_LIBM(erfc)(x);  // erf(x) - (1 - w)
    const double d = kTwoOverSqrtPi * EMBER_LIBM(exp)(-x * x);
    if (d == 0) break;
    x -= f / (d + x * f);
  }
  return x;
}

// erf^-1(y): +-inf at +-1, NaN outside [-1, 1].
EMBER_HOST_DEVICE inline double erfinv(double y) {
  if (is_nan(y) || y < -1 || y > 1) return nan_value();
  if (y == 1 || y == -1) return EMBER_LIBM(copysign)(inf_value(), y);
  if (EMBER_LIBM(fabs)(y) <= 0.5) return erfinv_central(y);
  return EMBER_LIBM(copysign)(erfc_inverse_tail(1 - EMBER_LIBM(fabs)(y)), y);  // 1 - |y| is exact
}

// erfc^-1(w) for 0 <= w <= 2.
EMBER_HOST_DEVICE inline double erfc_inverse(double w) {
  if (is_nan(w) || w < 0 || w > 2) return nan_value();
  if (w == 0) return inf_value();
  if (w == 2) return -inf_value();
  if (w <= 0.5) return erfc_inverse_tail(w);
  if (w < 1.5) return erfinv_central(1 - w);  // exact
  return -erfc_inverse_tail(2 - w);            // exact
}

// exp(x^2) erfc(x).
EMBER_HOST_DEVICE inline double erfcx(double x) {
  if (is_nan(x)) return x;
  if (x < -26.7) return inf_value();  // 2 exp(x^2) overflows
  if (x < 26) {
    const double x2 = x * x;
    const double lo = EMBER_LIBM(fma)(x, x, -x2);  // x^2 = x2 + lo exactly; exp(lo) = 1 + lo
    return EMBER_LIBM(exp)(x2) * (1 + lo) * EMBER_LIBM(erfc)(x);
  }
  // 1 / (x sqrt(pi)) * sum_k (-1)^k (2k-1)!! / (2x^2)^k
  const double inv = 1 / x;
  const double z = 0.5 * inv * inv;
  double term = 1, sum = 1;
  for (int k = 1; k < 20; ++k) {
    term *= -(2 * k - 1) * z;
    sum += term;
    if (EMBER_LIBM(fabs)(term) < kEps * sum) break;
  }
  return sum * inv / kSqrtPi;
}

// The standard normal distribution function.
EMBER_HOST_DEVICE inline double ndtr(double x) {
  const double t = x * kSqrtHalf;
  if (EMBER_LIBM(fabs)(t) < kSqrtHalf) return 0.5 + 0.5 * EMBER_LIBM(erf)(t);
  const double tail = 0.5 * EMBER_LIBM(erfc)(EMBER_LIBM(fabs)(t));
  return t > 0 ? 1 - tail : tail;
}

// log(ndtr(x)), accurate in both tails.
EMBER_HOST_DEVICE inline double log_ndtr(double x) {
  const double t = x * kSqrtHalf;
  if (x < -1) return EMBER_LIBM(log)(0.5 * erfcx(-t)) - t * t;
  return EMBER_LIBM(log1p)(-0.5 * EMBER_LIBM(erfc)(t));
}

// ndtr^-1(p): -inf at 0, inf at 1, NaN outside [0, 1].
EMBER_HOST_DEVICE inline double ndtri(double p) { return -kSqrt2 * erfc_inverse(2 * p); }

// ---- modified Bessel functions of orders 0 and 1 ----

// I_nu(x) for 0 <= x <= 30 by its power series (positive terms).
EMBER_HOST_DEVICE inline double bessel_i_series(int nu, double x) {
  const double q = 0.25 * x * x;
  double term = nu == 0 ? 1.0 : 0.5 * x;
  double sum = term;
  for (int k = 1; k < 200; ++k) {
    term *= q / (static_cast<double>(k) * (k + nu));
    sum += term;
    if (term <= kEps * sum) break;
  }
  return sum;
}

// sqrt(2 pi x) exp(-x) I_nu(x) for x > 30 by the asymptotic series (stopped at its smallest term).
EMBER_HOST_DEVICE inline double bessel_i_asymptotic(int nu, double x) {
  const double mu = 4.0 * nu * nu;
  double term = 1, sum = 1;
  for (int k = 1; k < 200; ++k) {
    const double next = -term * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k * x);
    if (EMBER_LIBM(fabs)(next) >= EMBER_LIBM(fabs)(term)) break;
    term = next;
    sum += term;
    if (EMBER_LIBM(fabs)(term) < kEps * EMBER_LIBM(fabs)(sum)) break;
  }
  return sum;
}

// I_nu(x) (scaled: exp(-|x|) I_nu(x)) for nu = 0, 1; I_1 is odd.
EMBER_HOST_DEVICE inline double bessel_i(int nu, double x, bool scaled) {
  if (is_nan(x)) return x;
  const double ax = EMBER_LIBM(fabs)(x);
  double r;
  if (ax <= 30) {
    r = bessel_i_series(nu, ax);
    if (scaled) r *= EMBER_LIBM(exp)(-ax);
  } else if (ax == inf_value()) {
    r = scaled ? 0 : inf_value();
  } else {
    r = bessel_i_asymptotic(nu, ax) / (EMBER_LIBM(sqrt)(2 * kPi) * EMBER_LIBM(sqrt)(ax));
    if (!scaled) {
      const double half = EMBER_LIBM(exp)(0.5 * ax);  // exp(x) in two halves: finite up to ~713
      r = r * half * half;
    }
  }
  return nu == 1 && x < 0 ? -r : r;
}

// exp(x) K_nu(x) by the trapezoidal rule on its integral over t > 0 of
// exp(-x (cosh t - 1)) cosh(nu t), for 1 <= x <= 18 (cosh t - 1 as 2 sinh^2(t/2)).
EMBER_HOST_DEVICE inline double bessel_k_scaled_integral(double nu, double x) {
  const double h = 0.125;
  double sum = 0.5;
  for (int k = 1; k < 1000; ++k) {
    const double t = k * h;
    const double s = EMBER_LIBM(sinh)(0.5 * t);
    const double f = EMBER_LIBM(exp)(-2 * x * s * s) * EMBER_LIBM(cosh)(nu * t);
    sum += f;
    if (f < 1e-3 * kEps * sum) break;
  }
  return h * sum;
}

// sqrt(2x / pi) exp(x) K_nu(x) for x > 18 by the asymptotic series.
EMBER_HOST_DEVICE inline double bessel_k_asymptotic(double nu, double x) {
  const double mu = 4.0 * nu * nu;
  double term = 1, sum = 1;
  for (int k = 1; k < 200; ++k) {
    const double next = term * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k * x);
    if (EMBER_LIBM(fabs)(next) >= EMBER_LIBM(fabs)(term)) break;
    term = next;
    sum += term;
    if (EMBER_LIBM(fabs)(term) < kEps * EMBER_LIBM(fabs)(sum)) break;
  }
  return sum;
}

// K_nu(x) for 0 < x <= 1 and nu = 0, 1 by the power series (Abramowitz & Stegun 9.6.11):
// K0 = -(log(x/2) + gamma) I0(x) + sum H_k q^k / k!^2,
// K1 = 1/x + log(x/2) I1(x) - x/4 sum (psi(k+1) + psi(k+2)) q^k / (k! (k+1)!), q = x^2/4.
EMBER_HOST_DEVICE inline double bessel_k_series(int nu, double x) {
  const double q = 0.25 * x * x;
  const double l = EMBER_LIBM(log)(0.5 * x);
  double coef = 1;      // q^k / (k! (k+nu)!)
  double harmonic = 0;  // H_k
  double sum = 0;
  if (nu == 0) {
    for (int k = 1; k < 100; ++k) {
      coef *= q / (static_cast<double>(k) * k);
      harmonic += 1.0 / k;
      sum += harmonic * coef;
      if (harmonic * coef < kEps * sum) break;
    }
    return -(l + kEulerGamma) * bessel_i_series(0, x) + sum;
  }
  sum = 1 - 2 * kEulerGamma;  // k = 0: psi(1) + psi(2) = -2 gamma + 1
  for (int k = 1; k < 100; ++k) {
    coef *= q / (static_cast<double>(k) * (k + 1));
    harmonic += 1.0 / k;
    const double term = (2 * harmonic + 1.0 / (k + 1) - 2 * kEulerGamma) * coef;
    sum += term;
    if (EMBER_LIBM(fabs)(term) < kEps * EMBER_LIBM(fabs)(sum)) break;
  }
  return 1 / x + l * bessel_i_series(1, x) - 0.25 * x * sum;
}

// K_nu(x) (scaled: exp(x) K_nu(x)) for nu = 0, 1: inf at 0, NaN for x < 0.
EMBER_HOST_DEVICE inline double bessel_k(int nu, double x, bool scaled) {
  if (is_nan(x) || x < 0) return nan_value();
  if (x == 0) return inf_value();
  if (x == inf_value()) return 0;
  if (x <= 1) return bessel_k_series(nu, x) * (scaled ? EMBER_LIBM(exp)(x) : 1.0);
  double r;
  if (x <= 18) r = bessel_k_scaled_integral(nu, x);
  else r = bessel_k_asymptotic(nu, x) * EMBER_LIBM(sqrt)(0.5 * kPi) / EMBER_LIBM(sqrt)(x);
  return scaled ? r : r * EMBER_LIBM(exp)(-x);
}

// ---- Bessel functions of the first and second kind: the C library's (POSIX, global) ----

// NaN at +-inf, as PyTorch (the C library's limit is 0)
EMBER_HOST_DEVICE inline double bessel_j0(double x) { return x - x != 0 ? nan_value() : ::j0(x); }
EMBER_HOST_DEVICE inline double bessel_j1(double x) { return x - x != 0 ? nan_value() : ::j1(x); }
EMBER_HOST_DEVICE inline double bessel_y(int nu, double x) {
  if (is_nan(x) || x < 0 || x == inf_value()) return nan_value();  // NaN at inf as PyTorch
  if (x == 0) return -inf_value();
  return nu == 0 ? ::y0(x) : ::y1(x);
}

// ---- the Airy function Ai ----

EMBER_HOST_DEVICE inline double airy_ai(double x) {
  if (is_nan(x)) return x;
  if (x == inf_value()) return 0;
  if (x == -inf_value()) return nan_value();
  if (x > 2) {
    // Ai(x) = sqrt(x/3) / pi * K_{1/3}(zeta), zeta = 2/3 x^(3/2)
    const double zeta = 2.0 / 3.0 * x * EMBER_LIBM(sqrt)(x);
    const double nu = 1.0 / 3.0;
    const double k = zeta <= 18 ? bessel_k_scaled_integral(nu, zeta)
                                : bessel_k_asymptotic(nu, zeta) * EMBER_LIBM(sqrt)(kPi / (2 * zeta));
    return EMBER_LIBM(sqrt)(x / 3) / kPi * k * EMBER_LIBM(exp)(-zeta);
  }
  if (x >= -8) {
    // Ai(x) = Ai(0) f(x) + Ai'(0) g(x), f = sum 3^k (1/3)_k x^(3k) / (3k)!,
    // g = sum 3^k (2/3)_k x^(3k+1) / (3k+1)!
    const double ai0 = 0.35502805388781723926;   // 3^(-2/3) / Gamma(2/3)
    const double dai0 = -0.25881940379280679840;  // -3^(-1/3) / Gamma(1/3)
    const double x3 = x * x * x;
    double tf = 1, tg = x, f = 1, g = x;
    for (int k = 1; k < 200; ++k) {
      tf *= x3 / ((3.0 * k - 1) * (3.0 * k));
      tg *= x3 / ((3.0 * k) * (3.0 * k + 1));
      f += tf;
      g += tg;
      if (EMBER_LIBM(fabs)(tf) + EMBER_LIBM(fabs)(tg) < 1e-3 * kEps * (EMBER_LIBM(fabs)(f) + EMBER_LIBM(fabs)(g))) break;
    }
    return ai0 * f + dai0 * g;
  }
  // x < -8: Ai(-z) = z^(-1/4) / sqrt(pi) (cos(zeta - pi/4) P + sin(zeta - pi/4) Q) with
  // P = sum (-1)^k u_2k zeta^-2k, Q = sum (-1)^k u_(2k+1) zeta^-(2k+1) (DLMF 9.7.9)
  const double z = -x;
  const double zeta = 2.0 / 3.0 * z * EMBER_LIBM(sqrt)(z);
  double u = 1, p = 1, q = 0, power = 1;
  for (int k = 1; k < 60; ++k) {
    const double next_u = u * (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216.0 * k);
    const double next_power = power / zeta;
    if (next_u * next_power >= u * power) break;
    u = next_u;
    power = next_power;
    const double term = u * power * ((k / 2) % 2 == 0 ? 1.0 : -1.0);
    if (k % 2 == 0) p += term;
    else q += term;
    if (u * power < kEps) break;
  }
  const double phase = zeta - 0.25 * kPi;
  return (EMBER_LIBM(cos)(phase) * p + EMBER_LIBM(sin)(phase) * q) / (kSqrtPi * EMBER_LIBM(sqrt)(EMBER_LIBM(sqrt)(z)));
}

// ---- the regularised incomplete gamma functions ----

// P(a, x) by its series, for x < a + 1, to a relative error of about eps.
EMBER_HOST_DEVICE inline double igamma_series(double a, double x, double eps) {
  double term = 1 / a, sum = term;
  for (int k = 1; k < 100000; ++k) {
    term *= x / (a + k);
    sum += term;
    if (term < eps * sum) break;
  }
  return sum * EMBER_LIBM(exp)(a * EMBER_LIBM(log)(x) - x - lgamma(a));
}

// Q(a, x) by Legendre's continued fraction (modified Lentz), for x >= a + 1, to a relative
// error of about eps.
EMBER_HOST_DEVICE inline double igammac_fraction(double a, double x, double eps) {
  const double tiny = 1e-300;
  double b = x + 1 - a;
  double c = 1 / tiny;
  double d = 1 / b;
  double h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (EMBER_LIBM(fabs)(d) < tiny) d = tiny;
    c = b + an / c;
    if (EMBER_LIBM(fabs)(c) < tiny) c = tiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (EMBER_LIBM(fabs)(delta - 1) < eps) break;
  }
  return h * EMBER_LIBM(exp)(a * EMBER_LIBM(log)(x) - x - lgamma(a));
}

// P(a, x) (upper: Q(a, x) = 1 - P), PyTorch's values at the edges, tested in its order (so
// that P(NaN, 0) = 0): NaN for a < 0 or x < 0 and at a = x = 0; P = 1 for a = 0 < x or
// x = inf; P = 0 at x = 0 or a = inf. The series and the fraction stop at a relative error of
// about eps: 2^-53 for a double result, less for a float one (kFloatResultEps).
EMBER_HOST_DEVICE inline double igamma(double a, double x, bool upper, double eps = kEps) {
  if (a < 0 || x < 0) return nan_value();
  double p;
  if (a == 0) {
    if (!(x > 0)) return nan_value();
    p = 1;
  } else if (x == 0) {
    p = 0;
  } else if (a == inf_value()) {
    if (x == inf_value()) return nan_value();
    p = 0;
  } else if (x == inf_value()) {
    p = 1;
  } else if (is_nan(a) || is_nan(x)) {
    return nan_value();
  } else if (x < a + 1) {
    const double lower = igamma_series(a, x, eps);
    return upper ? 1 - lower : lower;
  } else {
    const double q = igammac_fraction(a, x, eps);
    return upper ? q : 1 - q;
  }
  return upper ? 1 - p : p;
}

}  // namespace ember::special_fn

// The special unary ops, X(op, its value at the double x, its value at the float x): one list
// for the CPU and the CUDA kernels (special_fn abbreviated sf, special_float sff). The CPU
// computes float32 and the 16-bit floats with the third column (special_float.h's vectorised
// kernels where there is one, else the double function); CUDA computes every dtype in double.
// EMBER_HOST_VEC(V, E): special_float.h's vectorised double kernel V in CPU code, E in CUDA.
#if defined(__CUDACC__)
#define EMBER_HOST_VEC(V, E) E
#else
#define EMBER_HOST_VEC(V, E) V
#endif
#define EMBER_SPECIAL_UNARY_OPS(X)                                                       \
  X(lgamma, sf::lgamma(x), sff::lgamma(x))                                               \
  X(digamma, sf::digamma(x), sff::digamma(x))                                            \
  X(erfinv, sf::erfinv(x), sff::erfinv(x))                                               \
  X(erfc, EMBER_HOST_VEC(sff::erfc_d(x), sf::erfc(x)), sff::erfc(x))                    \
  X(i0, sf::bessel_i(0, x, false), sff::i0(x))                                           \
  X(special_i0e, sf::bessel_i(0, x, true), sff::i0e(x))                                  \
  X(special_i1, sf::bessel_i(1, x, false), sff::i1(x))                                   \
  X(special_i1e, sf::bessel_i(1, x, true), sff::i1e(x))                                  \
  X(special_ndtr, EMBER_HOST_VEC(sff::ndtr_d(x), sf::ndtr(x)), sff::ndtr(x))            \
  X(special_ndtri, sf::ndtri(x), sff::ndtri(x))                                          \
  X(special_log_ndtr, sf::log_ndtr(x), sff::log_ndtr(x))                                 \
  X(special_erfcx, sf::erfcx(x), sff::erfcx(x))                                          \
  X(special_bessel_j0, sf::bessel_j0(x), sff::bessel_j0(x))                              \
  X(special_bessel_j1, sf::bessel_j1(x), sff::bessel_j1(x))                              \
  X(special_bessel_y0, sf::bessel_y(0, x), sff::bessel_y(false, x))                      \
  X(special_bessel_y1, sf::bessel_y(1, x), sff::bessel_y(true, x))                       \
  X(special_modified_bessel_k0, sf::bessel_k(0, x, false), sff::bessel_k(false, false, x)) \
  X(special_modified_bessel_k1, sf::bessel_k(1, x, false), sff::bessel_k(true, false, x)) \
  X(special_scaled_modified_bessel_k0, sf::bessel_k(0, x, true), sff::bessel_k(false, true, x)) \
  X(special_scaled_modified_bessel_k1, sf::bessel_k(1, x, true), sff::bessel_k(true, true, x)) \
  X(special_airy_ai, sf::airy_ai(x), sf::airy_ai(x))
