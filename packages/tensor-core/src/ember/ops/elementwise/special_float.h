// float32 kernels of the special functions for the CPU (special_cpu.cpp): the double ones of
// special_functions.h are loops and library calls, which keep a loop scalar; these are
// straight-line code (vec_math.h's pick for every branch) that the compiler vectorises in
// simd_dispatch, so float32 (and float16 / bfloat16, computed in float) runs at SIMD speed.
//
// Each function is a Chebyshev series on a few pieces of its domain, fitted by
// tools/fit_special_float.py (special_float_coeffs.h, with each piece's measured error) to a
// relative error of a few float32 ulp; every piece is evaluated and the right one picked.
// The arguments are reduced so that no precision is lost before the series: erfinv's w is
// computed from (1 - y)(1 + y), exp(-x^2) from x^2 split exactly in two, lgamma's series
// carries its zeros at 1 and 2 as exact factors.
#pragma once

#include <cmath>
#include <cstddef>

#include "ember/ops/elementwise/special_float_coeffs.h"
#include "ember/ops/elementwise/vec_math.h"

namespace ember::special_float {

// sum_k c[k] T_k(s) by Clenshaw's recurrence (the same float operations as the fitting script;
// in double, with R = double, for the pieces the script marks wide).
template <typename R = float, size_t N> inline R chebyshev(const float (&c)[N], R s) {
  const R two_s = 2 * s;
  R b1 = 0, b2 = 0;
#pragma GCC unroll 32  // unrolled whole, so that the loop around the kernel vectorises
  for (size_t k = N - 1; k >= 1; --k) {
    const R b0 = two_s * b1 + (c[k] - b2);
    b2 = b1;
    b1 = b0;
  }
  return s * b1 + (c[0] - b2);
}

// Piece P of special_float_coeffs.h at t (horner: vec_math.h).
#define EMBER_FLOAT_PIECE(P, t) chebyshev(k##P, ((t) - k##P##Mid) * k##P##Scale)
#define EMBER_FLOAT_HORNER_PIECE(P, t) horner(k##P, ((t) - k##P##Mid) * k##P##Scale)

constexpr float kInf = INFINITY;
constexpr float kNan = NAN;
constexpr float kSqrt2 = 1.41421356f;
constexpr float kSqrtHalf = 0.707106781f;
constexpr float kInvSqrtPi = 0.564189584f;

// erfinv(y) given w = -log((1 - y)(1 + y)) >= 0, for |y| < 1.
inline float erfinv_of_w(float y, float w) {
  const float s = std::sqrt(w);
  const float central = EMBER_FLOAT_PIECE(ErfinvCentral, w);
  const float tail = EMBER_FLOAT_PIECE(ErfinvTail, s);
  const float far_tail = EMBER_FLOAT_PIECE(ErfinvFarTail, s);
  return y * pick(w < 6.25f, central, pick(s < 4.5f, tail, far_tail));
}

// erfinv(y) for |y| < kErfinvCentralLimit, where w < 6.25: the central piece alone (the
// tails' two series skipped), equal to erfinv(y) there.
constexpr float kErfinvCentralLimit = 0.9990f;  // w(0.999) = 6.21
inline float erfinv_central(float y) {
  return y * EMBER_FLOAT_PIECE(ErfinvCentral, -log_f((1.0f - y) * (1.0f + y)));
}

// erfinv(y): +-inf at +-1, nan beyond.
inline float erfinv(float y) {
  const float w = -log_f((1.0f - y) * (1.0f + y));
  float r = erfinv_of_w(y, w);
  r = pick(std::fabs(y) == 1.0f, std::copysign(kInf, y), r);
  return pick(std::fabs(y) > 1.0f || y != y, kNan, r);
}

// ndtri(p) = sqrt(2) erfinv(2p - 1), with w = -log(4 p (1 - p)) from p itself so that the
// tails keep their precision down to the smallest subnormal p. -inf at 0, inf at 1.
inline float ndtri(float p) {
  const float w = -log_f(4.0f * p * (1.0f - p));
  float r = kSqrt2 * erfinv_of_w(2.0f * p - 1.0f, w);
  r = pick(p == 0.0f, -kInf, r);
  r = pick(p == 1.0f, kInf, r);
  return pick(p < 0.0f || p > 1.0f || p != p, kNan, r);
}

// exp(-x^2 / 2^k) for k = 0 or 1 (halve = true), with x^2 = hi^2 + lo (x + hi) where hi keeps
// 12 significant bits of x, so that hi^2 is exact: the square's rounding would cost up to
// x^2 ulp of the result.
inline float exp_neg_square(float x, bool halve) {
  const float hi = bits_float(float_bits(x) & 0xfffff000u);
  const float lo = x - hi;
  const float scale = halve ? 0.5f : 1.0f;
  return exp_sum_f(-(hi * hi) * scale, -(lo * (x + hi)) * scale);
}

// erfcx(a) = exp(a^2) erfc(a) for 0 <= a <= 12.
inline float erfcx_piece(float a) {
  const float inv = 1.0f / (a + kErfcxK);
  return EMBER_FLOAT_PIECE(Erfcx, (a - kErfcxK) * inv) * (kErfcxK * inv);
}

// erfc(x): 2 at -inf, 0 from about 10.05 on (float's smallest subnormal).
inline float erfc(float x) {
  const float a = pick(std::fabs(x) < 12.0f, std::fabs(x), 12.0f);  // erfc(12) is 0 in float
  const float r = exp_neg_square(a, false) * erfcx_piece(a);
  return pick(x != x, x, pick(x < 0.0f, 2.0f - r, r));
}

// The standard normal distribution's upper tail Phi(-a) = erfc(a / sqrt 2) / 2 of a >= 0, and
// the density's exp(-a^2 / 2) on the way: Phi(-a) = t G(t) exp(-a^2 / 2) with t = K / (K + a)
// and G the NormalTail polynomial (within 3 float32 ulp over [0, 13.2], then subnormal
// tails; beyond 14.5, and for nan, a is taken as 14.5, where both are 0 in float). a^2 / 2 is
// split exactly in two, so the tail keeps its relative precision. One exp, one division.
// kFlush: both are 0 from a = 13.2 on (where Phi(-a) a falls below float's smallest normal
// number), and cheaper (no subnormal results).
struct NormalTail {
  float scaled;  // Phi(-a) / exp(-a^2 / 2) (a factor times `scaled` before `gauss` stays normal)
  float gauss;   // exp(-a^2 / 2)
  float tail() const { return scaled * gauss; }  // Phi(-a)
};
template <bool kFlush = false> inline NormalTail normal_tail(float a) {
  constexpr float kMax = kFlush ? 13.2f : kNormalTailMaxA;
  const float ac = pick(a < kMax, a, kMax);  // nan too
  // -a^2 / 2 = big + small exactly: a fused multiply-add gives the product's rounding error
  // (one instruction where simd_dispatch compiles for AVX2 or AVX-512, a library call at the
  // baseline level, which only CPUs older than 2013 run)
  const float half = -0.5f * ac;
  const float big = half * ac, small = __builtin_fmaf(half, ac, -big);
  float gauss;
  if constexpr (kFlush) gauss = pick(a < kMax, exp_sum_normal_f(big, small), 0.0f);
  else gauss = exp_sum_f(big, small);
  const float t = kNormalTailK / (kNormalTailK + ac);
  return {t * EMBER_FLOAT_HORNER_PIECE(NormalTail, t), gauss};
}

// erf(x): the odd Taylor series to x^13 below |x| = 0.5 (truncation below 1e-9 relative),
// 1 - 2 Phi(-|x| sqrt 2) above (no cancellation: the tail is below 0.24 there; the rounding
// of |x| sqrt 2 costs the tail relative precision that 1 - tail does not keep), with the
// sign of x.
inline float erf(float x) {
  const float tail = 1.0f - 2.0f * normal_tail<true>(std::fabs(x) * kSqrt2).tail();
  const float x2 = x * x;
  float p = 1.2055332981789664e-4f;  // 2 / sqrt(pi) * (-1)^k / (k! (2k + 1)), k = 6 .. 0
  p = p * x2 - 8.5483255082993380e-4f;
  p = p * x2 + 5.2239776254421878e-3f;
  p = p * x2 - 2.6866170645131252e-2f;
  p = p * x2 + 1.1283791670955126e-1f;
  p = p * x2 - 3.7612638903183754e-1f;
  p = p * x2 + 1.1283791670955126f;
  const float r = pick(std::fabs(x) < 0.5f, x * p, std::copysign(tail, x));
  return pick(x != x, x, r);
}

// ---- double: erf, erfc, the normal distribution function and gelu ----

// erfcx(a) = exp(a^2) erfc(a) for 0 <= a <= kErfcxMaxD: one series (ErfcxD) in
// t = (a - K) / (a + K), times K / (a + K). Within 3.5e-16 relative.
inline double erfcx_pos_d(double a) {
  const double inv = 1.0 / (a + kErfcxKD);
  return EMBER_FLOAT_HORNER_PIECE(ErfcxD, (a - kErfcxKD) * inv) * (kErfcxKD * inv);
}

// exp(-h a^2) for a >= 0 and h = 1 or 1/2, a^2 split exactly in two (a's high 26 bits squared,
// and the rest), so the result keeps its relative precision where it is tiny (an ulp of a^2
// would cost 700 ulp at erfc's end). 0 from a^2 h = 746 on, subnormal results as exp_d's.
inline double exp_neg_square_d(double a, double h) {
  const double hi = bits_double(double_bits(a) & 0xfffffffff8000000ull);
  return exp_sum_d(-(hi * hi) * h, -((a - hi) * (a + hi)) * h);
}

// erfc(a) for a >= 0 (nan-free): exp(-a^2) erfcx(a), no cancellation anywhere; 0 from
// a = 27.3 on (kErfcxMaxD: exp's argument below -745).
inline double erfc_pos_d(double a) {
  const double ac = pick(a < kErfcxMaxD, a, kErfcxMaxD);
  return exp_neg_square_d(ac, 1.0) * erfcx_pos_d(ac);
}

// erfc(x) of a double: 1 - x ErfSmall(x^2) below |x| = 1/2 (no cancellation there: erf is
// under 0.53; the series in t is least precise at x = 0), erfc_pos_d(|x|) above, 2 - that
// below -1/2. Within 4 ulp of the C library's (relative precision down to the subnormal
// results); 2 at -inf, 0 at inf, nan for nan.
inline double erfc_d(double x) {
  const double a = std::fabs(x);
  const double central = 1.0 - x * EMBER_FLOAT_HORNER_PIECE(ErfSmall, pick(a < 0.5, x * x, 0.0));
  const double r = erfc_pos_d(a);
  return pick(x != x, x, pick(a < 0.5, central, pick(x < 0.0, 2.0 - r, r)));
}

// erf(x) of a double: x ErfSmall(x^2) below |x| = 1, 1 - erfc(|x|) from 1 to 6 (erfc(6) is
// under half an ulp of 1 beyond), the sign of x. Within 2 ulp of the C library's.
inline double erf_d(double x) {
  const double a = std::fabs(x);
  const double small = x * EMBER_FLOAT_HORNER_PIECE(ErfSmall, pick(a < 1.0, x * x, 0.0));
  const double big = std::copysign(1.0 - erfc_pos_d(pick(a < 6.0, a, 6.0)), x);
  return pick(x != x, x, pick(a < 1.0, small, big));
}

// Phi(-b) for b >= 0 (nan-free) and the density's exp(-b^2 / 2) on the way:
// Phi(-b) = exp(-b^2 / 2) erfcx(b / sqrt 2) / 2, exp's argument split exactly from b itself
// (the rounding of b / sqrt 2 only moves erfcx, which changes slowly), so the tail keeps its
// relative precision down to the subnormal results (b = 37.5 on). Both 0 from b = 38.6 on.
struct NormalTailD {
  double gauss;   // exp(-b^2 / 2)
  double scaled;  // erfcx(b / sqrt 2) / 2 = Phi(-b) / gauss (a factor times it stays normal
                  // until gauss multiplies it)
  double tail() const { return scaled * gauss; }  // Phi(-b)
};
inline NormalTailD normal_tail_d(double b) {
  constexpr double kMax = kErfcxMaxD * 1.4142135623730951;  // 38.6: erfcx's end
  const double bc = pick(b < kMax, b, kMax);
  return {exp_neg_square_d(bc, 0.5), 0.5 * erfcx_pos_d(bc * 0.70710678118654752440)};
}

// Phi(x) of a double: 1 - Phi(-x) above 0, the tail below. Within 4 ulp; nan for nan.
inline double ndtr_d(double x) {
  const double r = normal_tail_d(std::fabs(x)).tail();
  return pick(x != x, x, pick(x > 0.0, 1.0 - r, r));
}

// gelu(x) = x Phi(x) of a double, within a few ulp down to x = -37.5 where it leaves the
// normal doubles (PyTorch's 0.5 x (1 + erf(x / sqrt 2)) loses the tail's relative precision
// from -6 on); -0 below -38.6, inf at inf, nan at -inf (as PyTorch's) and for nan.
inline double gelu_d(double x) {
  const NormalTailD n = normal_tail_d(std::fabs(x));
  // (x scaled) gauss: normal down to x = -37.5; nan at -inf, as PyTorch's
  return pick(x != x, x, x > 0.0 ? x * (1.0 - n.tail()) : (x * n.scaled) * n.gauss);
}

// gelu'(x) = Phi(x) + x phi(x) of a double (phi the standard normal density).
inline double gelu_derivative_d(double x) {
  const NormalTailD n = normal_tail_d(std::fabs(x));
  const double r = n.tail();
  return pick(x > 0.0, 1.0 - r, r) + x * (0.39894228040143267794 * n.gauss);
}

// ndtr(x) = Phi(x): 1 - Phi(-x) for x > 0, the tail itself below.
inline float ndtr(float x) {
  const float r = normal_tail(std::fabs(x)).tail();
  return pick(x != x, x, pick(x > 0.0f, 1.0f - r, r));
}

// gelu(x) = x Phi(x), exact (not the tanh approximation): within a few ulp, the negative tail
// included, down to x = -13.2, where x Phi(x) falls below float's smallest normal number
// (0 beyond).
inline float gelu(float x) {
  const NormalTail n = normal_tail<true>(std::fabs(x));
  // x Phi(-|x|) as (x scaled) gauss, normal down to x = -13.2; x - that above 0. x is taken
  // as at most 13.2 there (gauss is 0 from there on), so that inf gives inf, and -inf nan as
  // in PyTorch (-inf times 0); nan stays nan. Ternaries are masked operations and a minimum.
  const float tail = ((13.2f < x ? 13.2f : x) * n.scaled) * n.gauss;
  return x > 0.0f ? x - tail : tail;
}

// The derivative of gelu: Phi(x) + x phi(x), phi the standard normal density.
inline float gelu_derivative(float x) {
  const NormalTail n = normal_tail<true>(std::fabs(x));
  const float r = n.tail();
  return pick(x > 0.0f, 1.0f - r, r) + x * (0.398942280f * n.gauss);
}

// erfcx(x) = exp(x^2) erfc(x): the series up to 12, the asymptotic series
// (1 / (x sqrt(pi))) sum (-1)^k (2k - 1)!! / (2 x^2)^k beyond (its fifth term is below 5e-9
// there); 2 exp(x^2) - erfcx(-x) for negative x (inf below about -9.4).
inline float erfcx(float x) {
  const float a = std::fabs(x);
  const float series = erfcx_piece(pick(a < 12.0f, a, 12.0f));
  const float z = 1.0f / (2.0f * a * a);
  const float asymptotic =
      kInvSqrtPi / a * (1.0f - z * (1.0f - 3.0f * z * (1.0f - 5.0f * z * (1.0f - 7.0f * z))));
  const float positive = pick(a < 12.0f, series, asymptotic);
  const float am = pick(a < 10.0f, a, 10.0f);  // exp(100) overflows float: inf either way
  const float hi = bits_float(float_bits(am) & 0xfffff000u);
  const float lo = am - hi;
  const float twice_exp_square = 2.0f * exp_f(hi * hi) * exp_f(lo * (am + hi));
  return pick(x != x, x, pick(x < 0.0f, twice_exp_square - positive, positive));
}

// I0(x) e^-|x| and I1(x) e^-|x| for a = |x|: the [0, 8] series (scaled by 1 + a/2, or its
// square, in the fit) and the series in 1 / a beyond, where I(x) e^-x sqrt(x) is smooth.
inline float i0e_of_abs(float a) {
  const float small = EMBER_FLOAT_PIECE(I0eSmall, a) / (1.0f + 0.5f * a);
  const float large = EMBER_FLOAT_PIECE(I0eLarge, 1.0f / a) / std::sqrt(a);
  return pick(a <= 8.0f, small, large);
}
inline float i1e_of_abs(float a) {
  const float scale = 1.0f + 0.5f * a;
  const float small = a * EMBER_FLOAT_PIECE(I1eSmall, a) / (scale * scale);
  const float large = EMBER_FLOAT_PIECE(I1eLarge, 1.0f / a) / std::sqrt(a);
  return pick(a <= 8.0f, small, large);
}

inline float i0e(float x) { return pick(x != x, x, i0e_of_abs(std::fabs(x))); }
inline float i1e(float x) { return pick(x != x, x, std::copysign(i1e_of_abs(std::fabs(x)), x)); }

// e^a times a scaled Bessel value, as e^(a/2) (v e^(a/2)): the value stays finite up to where
// the product itself overflows (I0(x) to about 91.9, e^x to 88.7).
inline float times_exp(float v, float a) {
  const float half = exp_f(0.5f * a);
  return pick(a == kInf, kInf, half * (v * half));
}
inline float i0(float x) {
  const float a = std::fabs(x);
  return pick(x != x, x, times_exp(i0e_of_abs(a), a));
}
inline float i1(float x) {
  const float a = std::fabs(x);
  return pick(x != x, x, std::copysign(times_exp(i1e_of_abs(a), a), x));
}

// log|Gamma(z)| for z >= 0.5: the series on [0.5, 3] (with its zeros at 1 and 2 as exact
// factors) after z is brought below 3 by Gamma(z) = (z - 1) Gamma(z - 1) (five steps at most,
// the product of the factors kept), Stirling's series from 8 on (its first neglected term is
// below 3e-10 there).
inline float lgamma_from_half(float z) {
  float y = pick(z < 8.0f, z, 8.0f);
  float product = 1.0f;
  for (int i = 0; i < 5; ++i) {
    const bool step = y >= 3.0f;
    product = pick(step, product * (y - 1.0f), product);
    y = pick(step, y - 1.0f, y);
  }
  const float core = (y - 1.0f) * (y - 2.0f) * EMBER_FLOAT_PIECE(LgammaCore, y) + log_f(product);
  const float zs = pick(z < 8.0f, 8.0f, z);
  const float inv = 1.0f / zs;
  const float inv2 = inv * inv;
  const float correction = inv * (1.0f / 12 - inv2 * (1.0f / 360 - inv2 * (1.0f / 1260)));
  const float stirling = (zs - 0.5f) * log_f(zs) - zs + (0.918938533f + correction);  // log(2 pi) / 2
  return pick(z < 8.0f, core, stirling);
}

// log|Gamma(x)|: log Gamma(x + 1) - log x below 0.5, the reflection
// log(pi / |sin(pi x)|) - log Gamma(1 - x) below 0 (inf at the poles, the non-positive
// integers), inf at +-inf.
inline float lgamma(float x) {
  const bool negative = x < 0.0f;
  const float z = pick(negative, 1.0f - x, x);
  const bool small = z < 0.5f;
  float r = lgamma_from_half(pick(small, z + 1.0f, z)) - pick(small, log_f(z), 0.0f);
  const float frac = x - std::nearbyint(x);  // in [-0.5, 0.5], exact
  const float sin_pi = std::fabs(frac * EMBER_FLOAT_PIECE(SinPi, frac * frac));
  const float reflected = pick(sin_pi == 0.0f, kInf, log_f(3.14159265f / sin_pi) - r);
  r = pick(negative, reflected, r);
  r = pick(std::fabs(x) == kInf, kInf, r);
  return pick(x != x, x, r);
}

// sin(pi r) and cos(pi r) for |r| <= 0.5; r = x - nearbyint(x) is exact, so these give
// sin(pi x) and +-cos(pi x) without the rounding of pi x.
inline float sin_pi_reduced(float r) { return r * EMBER_FLOAT_PIECE(SinPi, r * r); }
inline float cos_pi_reduced(float r) { return EMBER_FLOAT_PIECE(CosPi, r * r); }

// psi(x) for x > 0: ten steps of psi(y) = psi(y + 1) - 1 / y bring y to 10 or beyond, then
// Stirling's series log y - 1 / (2y) - sum B_2k / (2k y^2k) (first neglected term below 1e-12).
inline float digamma_positive(float x) {
  float y = x, acc = 0.0f;
  for (int i = 0; i < 10; ++i) {
    const bool step = y < 10.0f;
    acc += pick(step, 1.0f / y, 0.0f);
    y = pick(step, y + 1.0f, y);
  }
  const float z = 1.0f / (y * y);
  const float tail = z * (1.0f / 12 - z * (1.0f / 120 - z * (1.0f / 252 - z * (1.0f / 240))));
  return log_f(y) - 0.5f / y - tail - acc;
}

// psi(x): -+inf at +-0, nan at the negative integers and -inf; psi(1 - x) - pi / tan(pi x)
// below 0.
inline float digamma(float x) {
  const bool negative = x < 0.0f;
  const float r = x - std::nearbyint(x);
  const float reflection = 3.14159265f * cos_pi_reduced(r) / sin_pi_reduced(r);
  float v = digamma_positive(pick(negative, 1.0f - x, x));
  v = pick(negative, v - reflection, v);
  v = pick(negative && r == 0.0f, kNan, v);
  v = pick(x == 0.0f, std::copysign(kInf, -x), v);
  return pick(x != x || x == -kInf, kNan, v);
}

// psi'(x) for x > 0: psi'(y) = psi'(y + 1) + 1 / y^2 up to 10, then
// 1/y + 1/(2y^2) + sum B_2k / y^(2k+1).
inline float trigamma_positive(float x) {
  float y = x, acc = 0.0f;
  for (int i = 0; i < 10; ++i) {
    const bool step = y < 10.0f;
    acc += pick(step, 1.0f / (y * y), 0.0f);
    y = pick(step, y + 1.0f, y);
  }
  const float inv = 1.0f / y;
  const float z = inv * inv;
  const float series = inv * (1.0f + 0.5f * inv + z * (1.0f / 6 - z * (1.0f / 30 - z * (1.0f / 42 - z * (1.0f / 30)))));
  return acc + series;
}

// psi'(x): inf at the non-positive integers; pi^2 / sin^2(pi x) - psi'(1 - x) below 0.
inline float trigamma(float x) {
  const bool negative = x < 0.0f;
  const float r = x - std::nearbyint(x);
  const float s = sin_pi_reduced(r);
  float v = trigamma_positive(pick(negative, 1.0f - x, x));
  v = pick(negative, 9.8696044f / (s * s) - v, v);
  v = pick(x <= 0.0f && r == 0.0f && x != -kInf, kInf, v);
  return pick(x != x, x, v);
}

// log(ndtr(x)): -x^2 / 2 + log(erfcx(-x / sqrt(2)) / 2) below -1 (no underflow),
// log(ndtr(x)) up to 0, log1p(-ndtr(-x)) above.
inline float log_ndtr(float x) {
  const float lower = -0.5f * x * x + log_f(0.5f * erfcx(-x * kSqrtHalf));
  const float q = ndtr(-std::fabs(x));
  const float v = pick(x < 0.0f, log_f(q), log1p_f(-q));
  return pick(x < -1.0f, lower, v);
}

// K0(x) and K1(x) for x > 0 (0 and nan below, inf at 0; 0 at inf), scaled by e^x or not:
// -log(x/2) I0(x) + A(x^2) and log(x/2) I1(x) + B(x^2) / x up to 2 (A, B fitted, entire),
// the series in 1 / x of K(x) e^x sqrt(x) beyond.
inline float bessel_k(bool order_one, bool scaled, float x) {
  const float xs = pick(x <= 2.0f, x, 2.0f);
  const float log_half = log_f(0.5f * xs);
  const float x2 = xs * xs;
  const float small_k0 = EMBER_FLOAT_PIECE(K0Small, x2) - log_half * i0(xs);
  const float small_k1 = log_half * i1(xs) + EMBER_FLOAT_PIECE(K1Small, x2) / xs;
  float small = order_one ? small_k1 : small_k0;
  small = scaled ? small * exp_f(xs) : small;
  const float xl = pick(x > 2.0f, x, 2.0f);
  const float inv = 1.0f / xl;
  const float large_scaled = (order_one ? EMBER_FLOAT_PIECE(K1eLarge, inv) : EMBER_FLOAT_PIECE(K0eLarge, inv)) /
                             std::sqrt(xl);
  const float large = scaled ? large_scaled : large_scaled * exp_f(-xl);
  float v = pick(x <= 2.0f, small, large);
  v = pick(x == 0.0f, kInf, v);
  v = pick(x == kInf, 0.0f, v);
  return pick(x < 0.0f || x != x, kNan, v);
}

// Wide piece P at t = x^2 for a float x, evaluated in double (x^2 is exact there); as a float.
#define EMBER_WIDE_PIECE_OF_SQUARE(P, x)                                                            \
  static_cast<float>(chebyshev<double>(                                                          \
      k##P, (static_cast<double>(x) * static_cast<double>(x) - static_cast<double>(k##P##Mid)) * \
                static_cast<double>(k##P##Scale)))

// x (2 / pi) - shift for x >= 0 (a float), as a quarter-turn count k (modulo 4) and a
// fraction u in [-1/2, 1/2]: x times each 24-bit chunk of 2 / pi is exact in double and is
// reduced modulo 4 exactly, so the fraction is right to double precision for every float x
// (the reduction of Payne and Hanek, with the chunks fixed for float inputs).
inline void quarter_turns(float x, double shift, int& k, float& u) {
  const double xd = static_cast<double>(x);
  double sum = -shift;
  for (double chunk : kTwoOverPiChunks) {
    const double t = xd * chunk;
    sum += t - 4.0 * std::floor(t * 0.25);
  }
  const double whole = std::nearbyint(sum);  // small: each chunk's term is below 4
  // through int32, not int64: double -> int64 has no AVX2 instruction, and the loop would
  // stay scalar there (5-7x slower)
  k = static_cast<int>(whole) & 3;
  u = static_cast<float>(sum - whole);
}

// sin and cos of (pi / 2)(k + u), |u| <= 1/2: sin(pi u / 2) and cos(pi u / 2) turned by k.
inline void sincos_quarter_turns(int k, float u, float& sin_v, float& cos_v) {
  const float h = 0.5f * u;
  const float sp = sin_pi_reduced(h), cp = cos_pi_reduced(h);
  const float s = pick((k & 1) != 0, cp, sp), c = pick((k & 1) != 0, sp, cp);
  sin_v = pick((k & 2) != 0, -s, s);
  cos_v = pick(((k + 1) & 2) != 0, -c, c);
}

// sin(x) and cos(x) of a float: |x| in quarter turns (quarter_turns: exact for every float),
// then sin and cos of the remaining fraction; sin(x) is x itself below 1e-4. Within 3 ulp of
// the C library's; nan at +-inf and nan.
inline void sincos_f(float x, float& sin_v, float& cos_v) {
  const bool finite = std::fabs(x) < kInf;
  int k;
  float u, s, c;
  quarter_turns(pick(finite, std::fabs(x), 0.0f), 0.0, k, u);
  sincos_quarter_turns(k, u, s, c);
  s = pick(std::fabs(x) < 1e-4f, x, std::copysign(1.0f, x) * s);
  sin_v = pick(finite, s, kNan);
  cos_v = pick(finite, c, kNan);
}
// sincos_f for |x| < kSinCosFastLimit (not NaN, not infinite), with Cody and Waite's
// reduction in double: k = nearest integer to x (2 / pi); x - k C1 is exact with C1 the
// double nearest pi / 2 (x is a float, k C1 a multiple of 2^-52 below 2^21); C2 = pi / 2 - C1
// to double precision leaves an error below k 2^-107, far under the 2^-30 that x can come
// to a multiple of pi / 2 at these scales. About a sixth of the operations of the exact
// quarter turns (same results within 3 ulp: tests/test_vec_math_kernels.py).
constexpr float kSinCosFastLimit = 1048576.0f;  // 2^20
inline void sincos_fast_f(float x, float& sin_v, float& cos_v) {
  constexpr double kTwoOverPi = 0.63661977236758134308, kC1 = 1.5707963267948965580,
                   kC2 = 6.1232339957367658e-17;
  const double xd = static_cast<double>(std::fabs(x));
  const double whole = std::nearbyint(xd * kTwoOverPi);
  const double r = std::fma(-whole, kC2, std::fma(-whole, kC1, xd));
  const int k = static_cast<int>(whole) & 3;  // whole < 2^20: int32, which AVX2 converts to
  float s, c;
  sincos_quarter_turns(k, static_cast<float>(r * kTwoOverPi), s, c);
  sin_v = pick(std::fabs(x) < 1e-4f, x, std::copysign(1.0f, x) * s);
  cos_v = c;
}

inline float sin_f(float x) {
  float s, c;
  sincos_f(x, s, c);
  return s;
}
inline float cos_f(float x) {
  float s, c;
  sincos_f(x, s, c);
  return c;
}
// tan(x) of a float: sin / cos of sincos_f (each computed with relative precision from the
// reduced fraction, so the quotient keeps it near the poles too).
inline float tan_f(float x) {
  float s, c;
  sincos_f(x, s, c);
  return s / c;
}
inline float tan_fast_f(float x) {
  float s, c;
  sincos_fast_f(x, s, c);
  return s / c;
}

// sin(r) and cos(r) of a double |r| <= pi / 4 (a little more where the quadrant rounded): the
// Taylor series to r^17 and r^18 (truncation below 1e-19 relative).
inline void sincos_reduced_d(double r, double& s, double& c) {
  const double r2 = r * r;
  double ps = 1.0 / 355687428096000.0;  // 1 / 17!
  ps = ps * r2 - 1.0 / 1307674368000.0;
  ps = ps * r2 + 1.0 / 6227020800.0;
  ps = ps * r2 - 1.0 / 39916800.0;
  ps = ps * r2 + 1.0 / 362880.0;
  ps = ps * r2 - 1.0 / 5040.0;
  ps = ps * r2 + 1.0 / 120.0;
  ps = ps * r2 - 1.0 / 6.0;
  s = r + (r * r2) * ps;
  double pc = 1.0 / 6402373705728000.0;  // 1 / 18!
  pc = pc * r2 - 1.0 / 20922789888000.0;
  pc = pc * r2 + 1.0 / 87178291200.0;
  pc = pc * r2 - 1.0 / 479001600.0;
  pc = pc * r2 + 1.0 / 3628800.0;
  pc = pc * r2 - 1.0 / 40320.0;
  pc = pc * r2 + 1.0 / 720.0;
  pc = pc * r2 - 1.0 / 24.0;
  pc = pc * r2 + 0.5;
  c = 1.0 - r2 * pc;
}

// sin, cos or tan of a double |x| < kTrigFastLimitD (not nan, not infinite), by Cody and
// Waite's reduction: k = the integer nearest |x| (2 / pi), r = |x| - k pi / 2 with pi / 2 in
// three parts C1 + C2 + C3 and fused multiply-adds. |x| - k C1 is exact (a multiple of 2^-52
// below 1, or Sterbenz's case), so r carries one rounding of its own size from the second
// step on: within 2 ulp of the C library's below 2^24. k's low bits come from the shifted
// sum (no conversion to an integer).
constexpr double kTrigFastLimitD = 16777216.0;  // 2^24
enum class Trig { Sin, Cos, Tan };
template <Trig kFn> inline double trig_fast_d(double x) {
  constexpr double kTwoOverPi = 0.6366197723675814;
  constexpr double kC1 = 1.5707963267948966, kC2 = 6.123233995736766e-17,
                   kC3 = -1.4973849048591698e-33;
  const double a = std::fabs(x);
  const double shifted = a * kTwoOverPi + kShiftD;
  const uint64_t q = double_bits(shifted) & 3;  // k mod 4
  const double k = shifted - kShiftD;
  const double r = std::fma(-k, kC3, std::fma(-k, kC2, std::fma(-k, kC1, a)));
  double s, c;
  sincos_reduced_d(r, s, c);
  const bool odd = (q & 1) != 0;
  if constexpr (kFn == Trig::Tan) {
    return std::copysign(1.0, x) * pick(odd, -c / s, s / c);
  } else if constexpr (kFn == Trig::Sin) {
    const double v = pick(odd, c, s);
    return std::copysign(1.0, x) * pick(q >= 2, -v, v);
  } else {
    const double v = pick(odd, s, c);
    return pick(q == 1 || q == 2, -v, v);
  }
}

// atan(x) of a float: |x| brought to |z| <= tan(pi / 8) by atan|x| = pi / 2 + atan(-1 / |x|)
// above tan(3 pi / 8) and pi / 4 + atan((|x| - 1) / (|x| + 1)) above tan(pi / 8) (one
// division, its terms picked), then z P(z^2) (AtanReduced); pi / 2 and pi / 4 in two parts;
// the sign of x. +-pi / 2 at +-inf, nan for nan. Within 2 ulp of the C library's.
inline float atan_f(float x) {
  const float a = std::fabs(x);
  const bool far = a > 2.41421356f, mid = a > 0.414213562f;
  const float z = pick(far, -1.0f, pick(mid, a - 1.0f, a)) / pick(far, a, pick(mid, a + 1.0f, 1.0f));
  const float base_hi = pick(far, 1.57079637f, pick(mid, 0.785398185f, 0.0f));
  const float base_lo = pick(far, -4.37113883e-8f, pick(mid, -2.18556941e-8f, 0.0f));
  return std::copysign(base_hi + (base_lo + z * EMBER_FLOAT_HORNER_PIECE(AtanReduced, z * z)), x);
}

// asin(z) for 0 <= z <= 1/2 given w = z^2 is z P(w) (AsinReduced). Above |x| = 1/2, asin
// and acos reduce to it: asin|x| = pi / 2 - 2 asin(z), acos|x| = 2 asin(z) with
// z = sqrt((1 - |x|) / 2) (1 - |x| exact there; nan beyond 1). asin_reduced(a, big) is
// asin(z) of a = |x| (big: a > 1/2). (A flag passed in, not returned: a returned struct with
// a bool keeps the loop around the kernel scalar.)
inline float asin_reduced(float a, bool big) {
  const float w = pick(big, 0.5f * (1.0f - a), a * a);
  return pick(big, std::sqrt(w), a) * EMBER_FLOAT_HORNER_PIECE(AsinReduced, w);
}
constexpr float kHalfPiHi = 1.57079637f, kHalfPiLo = -4.37113883e-8f;

// asin(x) of a float; nan beyond +-1 and for nan. Within 2 ulp of the C library's.
inline float asin_f(float x) {
  const float a = std::fabs(x);
  const bool big = a > 0.5f;
  const float q = asin_reduced(a, big);
  return std::copysign(pick(big, kHalfPiHi + (kHalfPiLo - 2.0f * q), q), x);
}
// acos(x) of a float: pi / 2 - asin(x) up to |x| = 1/2, 2 asin(z) above, pi - 2 asin(z) below
// -1/2; nan beyond +-1 and for nan. Within 2 ulp of the C library's.
inline float acos_f(float x) {
  const float a = std::fabs(x);
  const bool big = a > 0.5f;
  const float q = asin_reduced(a, big);
  const float small = kHalfPiHi + (kHalfPiLo - std::copysign(q, x));
  const float negative = 2.0f * kHalfPiHi + (2.0f * kHalfPiLo - 2.0f * q);
  return pick(big, pick(x > 0.0f, 2.0f * q, negative), small);
}

// atan(x) of a double: atan|x| = atan(c) + atan(z), z = (|x| - c) / (1 + |x| c), with c the
// double nearest tan(k pi / 8) for the k that brings |z| within tan(pi / 16) (c = 0 below
// tan(pi / 16); z = -1 / |x| and pi / 2 above tan(7 pi / 16)); atan(c) in two parts; atan(z)
// by its Taylor series to z^23 (truncation below 1e-18 relative). One division (its terms
// picked). The sign of x; +-pi / 2 at +-inf, nan for nan. Within 1 ulp of the C library's.
inline double atan_d(double x) {
  const double a = std::fabs(x);
  const bool k1 = a > 0.198912367379658, k2 = a > 0.6681786379192989,
             k3 = a > 1.496605762665489, k4 = a > 5.027339492125848;
  const double c = pick(k3, 2.414213562373095, pick(k2, 1.0, pick(k1, 0.41421356237309503, 0.0)));
  const double z = pick(k4, -1.0, a - c) / pick(k4, a, 1.0 + a * c);
  const double base_hi =
      pick(k4, 1.5707963267948966,
           pick(k3, 1.1780972450961724, pick(k2, 0.7853981633974483, pick(k1, 0.39269908169872414, 0.0))));
  const double base_lo =
      pick(k4, 6.123233995736766e-17,
           pick(k3, 2.7563998718653792e-17, pick(k2, 3.061616997868383e-17, pick(k1, 3.060132146563891e-18, 0.0))));
  const double t = z * z;
  double p = -1.0 / 23;
  p = p * t + 1.0 / 21;
  p = p * t - 1.0 / 19;
  p = p * t + 1.0 / 17;
  p = p * t - 1.0 / 15;
  p = p * t + 1.0 / 13;
  p = p * t - 1.0 / 11;
  p = p * t + 1.0 / 9;
  p = p * t - 1.0 / 7;
  p = p * t + 1.0 / 5;
  p = p * t - 1.0 / 3;
  return std::copysign(base_hi + (base_lo + (z + (z * t) * p)), x);
}
// asin(x) = atan(x / sqrt((1 - x)(1 + x))) and acos(x) = 2 atan(sqrt((1 - x) / (1 + x))) of a
// double (1 - x exact above 1/2, 1 + x below -1/2, where each matters): nan beyond +-1 and for
// nan, +-pi / 2 and pi, 0 at the ends. Within 2 ulp of the C library's.
inline double asin_d(double x) { return atan_d(x / std::sqrt((1.0 - x) * (1.0 + x))); }
inline double acos_d(double x) { return 2.0 * atan_d(std::sqrt((1.0 - x) / (1.0 + x))); }

// atan_, asin_, acos_: the float and double functions above (vec_math.h's macro).
EMBER_VEC_OR_LIBM(atan)
EMBER_VEC_OR_LIBM(asin)
EMBER_VEC_OR_LIBM(acos)

template <typename A> inline A sin_(A x) {
  if constexpr (std::is_same_v<A, float>) return sin_f(x);
  else return std::sin(x);
}
template <typename A> inline A cos_(A x) {
  if constexpr (std::is_same_v<A, float>) return cos_f(x);
  else return std::cos(x);
}

// J_nu(x) (first kind, first = true) or Y_nu(x) for x > 8, nu = 0 or 1, by Hankel's form
// sqrt(2 / (pi x)) (P cos chi - Q sin chi) (J) and sqrt(2 / (pi x)) (P sin chi + Q cos chi)
// (Y), chi = x - (2 nu + 1) pi / 4, P and Q x fitted as functions of 1 / x.
inline float bessel_large(bool order_one, bool first, float x) {
  int k;
  float u, sin_chi, cos_chi;
  quarter_turns(x, order_one ? 1.5 : 0.5, k, u);
  sincos_quarter_turns(k, u, sin_chi, cos_chi);
  const float inv = 1.0f / x;
  const float p = order_one ? EMBER_FLOAT_PIECE(P1, inv) : EMBER_FLOAT_PIECE(P0, inv);
  const float q = (order_one ? EMBER_FLOAT_PIECE(Q1, inv) : EMBER_FLOAT_PIECE(Q0, inv)) * inv;
  const float amplitude = 0.797884561f / std::sqrt(x);  // sqrt(2 / pi)
  const float v = first ? p * cos_chi - q * sin_chi : p * sin_chi + q * cos_chi;
  return pick(x == kInf, kNan, amplitude * v);  // NaN at infinity, as the double kernels and PyTorch
}

// J0(x), J1(x) of the first kind: the series in x^2 up to 8, Hankel's form beyond.
inline float bessel_j0(float x) {
  const float a = std::fabs(x);
  const float small = EMBER_WIDE_PIECE_OF_SQUARE(J0Small, pick(a <= 8.0f, a, 8.0f));
  const float v = pick(a <= 8.0f, small, bessel_large(false, true, pick(a > 8.0f, a, 8.0f)));
  return pick(x != x, x, v);
}
inline float bessel_j1(float x) {
  const float a = std::fabs(x);
  const float as = pick(a <= 8.0f, a, 8.0f);
  const float small = as * EMBER_WIDE_PIECE_OF_SQUARE(J1Small, as);
  const float v = pick(a <= 8.0f, small, bessel_large(true, true, pick(a > 8.0f, a, 8.0f)));
  return pick(x != x, x, pick(x < 0.0f, -v, v));  // odd
}

// Y0(x), Y1(x) of the second kind: (2 / pi) log(x / 2) J(x) plus a series in x^2 up to 8
// (minus 2 / (pi x) for Y1), Hankel's form beyond; -inf at 0, nan below.
inline float bessel_y(bool order_one, float x) {
  const float xs = pick(x <= 8.0f, x, 8.0f);
  const float log_half = 0.636619772f * log_f(0.5f * xs);  // (2 / pi) log(x / 2)
  const float small_y0 = log_half * bessel_j0(xs) + EMBER_WIDE_PIECE_OF_SQUARE(Y0Small, xs);
  const float small_y1 =
      log_half * bessel_j1(xs) - 0.636619772f / xs + xs * EMBER_WIDE_PIECE_OF_SQUARE(Y1Small, xs);
  const float large = bessel_large(order_one, false, pick(x > 8.0f, x, 8.0f));
  float v = pick(x <= 8.0f, order_one ? small_y1 : small_y0, large);
  v = pick(x == 0.0f, -kInf, v);
  return pick(x < 0.0f || x != x, kNan, v);
}

#undef EMBER_WIDE_PIECE_OF_SQUARE
#undef EMBER_FLOAT_PIECE

}  // namespace ember::special_float
