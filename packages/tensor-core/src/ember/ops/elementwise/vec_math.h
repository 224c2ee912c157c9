// Float math in straight-line, branch-free code that the compiler vectorises (std::exp and
// friends are scalar library calls, which keep a loop scalar). Used by elementwise ops and
// reductions for float32 (and float16/bfloat16, computed in float) and, for exp, expm1, tanh
// and sigmoid, for double.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "ember/core/dtype.h"  // float_bits, bits_float
#include "ember/ops/elementwise/special_float_coeffs.h"  // ExpReduced

namespace ember {

// c ? a : b as bit operations: a plain selection can get one side sunk into a branch, and
// the loop then stays scalar.
inline float pick(bool c, float a, float b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return bits_float((float_bits(a) & m) | (float_bits(b) & ~m));
}
template <typename A> inline A pick(bool c, A a, A b) { return c ? a : b; }

// sum_k c[k] s^k by Horner's rule, as straight-line code (a loop inside an elementwise
// kernel would keep the kernel's own loop from vectorising): the polynomials of
// tools/fit_special_float.py that are kept as monomials (special_float.h too).
template <typename R, size_t N, size_t... K>
inline R horner_steps(const R (&c)[N], R s, std::index_sequence<K...>) {
  R p = c[N - 1];
  ((p = p * s + c[N - 2 - K]), ...);
  return p;
}
template <typename R, size_t N> inline R horner(const R (&c)[N], R s) {
  return horner_steps(c, s, std::make_index_sequence<N - 1>{});
}

// exp(r) for |r| <= ln2 / 2, and up to 0.45 with the small corrections some kernels add:
// the degree-6 Chebyshev fit of tools/fit_special_float.py (ExpReducedF, monomials; within
// 1.25 ulp as evaluated, one multiply-add fewer than the degree-7 Taylor polynomial's 1.05).
inline float exp_reduced_f(float r) { return horner(special_float::kExpReducedF, r); }

// exp(x + dx): x = n ln2 + r with |r| <= ln2 / 2, exp(r + dx) by exp_reduced_f, 2^n applied
// in two factors so that results in the subnormal range come out right. dx, a small
// correction (|dx| < 0.1), is added after the reduction, so none of its bits are lost to x's
// magnitude (exp_f(x) is exp_f(x, 0)). Within 2 ulp of std::exp (1.2 ulp at most over a
// sweep of float bit patterns); inf, -inf and nan behave as in std::exp.
template <bool kCorrection = false> inline float exp_f(float x, float dx = 0.0f) {
  // Below -104 exp is 0 in float (-inf too: masked softmax scores). Such lanes compute at 0
  // and are replaced by 0 at the end: computing them at -104 or below would underflow
  // through denormals, which Intel CPUs handle in microcode (2.4x slower masked softmax).
  const bool zero = x < -104.0f;
  float xc = pick(zero, 0.0f, x);
  xc = pick(xc < 89.0f, xc, 89.0f);  // exp(89) is inf
  const float t = xc * 1.44269504088896341f + 12582912.0f;  // 1.5 * 2^23 rounds to an integer
  const float n = t - 12582912.0f;
  float r = (xc - n * 0.693359375f) + n * 2.12194440e-4f;  // ln2 in two parts
  if constexpr (kCorrection) r += dx;
  const float p = exp_reduced_f(r);
  const int32_t ni = static_cast<int32_t>(n);
  const int32_t n1 = ni / 2, n2 = ni - n1;
  const float s1 = bits_float(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = bits_float(static_cast<uint32_t>(n2 + 127) << 23);
  return pick(x != x, x, pick(zero, 0.0f, p * s1 * s2));
}

// exp(x + dx) for an x that carries the large part exactly and a small correction dx.
inline float exp_sum_f(float x, float dx) { return exp_f<true>(x, dx); }

// exp(x + dx) as exp_sum_f, for x in [-87, 0] only (no clamping, no nan: normal results, 2^n
// in one factor), where a kernel has bounded its argument itself.
inline float exp_sum_normal_f(float x, float dx) {
  const float t = x * 1.44269504088896341f + 12582912.0f;
  const float n = t - 12582912.0f;
  const float r = ((x - n * 0.693359375f) + n * 2.12194440e-4f) + dx;
  // t's low mantissa bits hold n (two's complement over the shift): 2^n from them directly
  return exp_reduced_f(r) * bits_float((float_bits(t) + (127u - 0x4b400000u)) << 23);
}

// 2^x: x = n + r with n the nearest integer and |r| <= 1/2 exact, 2^r = exp(r ln2)
// (exp_reduced_f), 2^n in two factors (subnormal results come out right). inf from 128 on, 0
// below -151 (computed at 0: no denormals on the way), nan for nan. Within 1 ulp of
// std::exp2.
inline float exp2_f(float x) {
  const bool zero = x < -151.0f;
  float xc = pick(zero, 0.0f, x);
  xc = pick(xc < 129.0f, xc, 129.0f);
  const float n = std::nearbyint(xc);
  const float p = exp_reduced_f((xc - n) * 0.693147181f);
  const int32_t ni = static_cast<int32_t>(n);
  const int32_t n1 = ni / 2, n2 = ni - n1;
  const float s1 = bits_float(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = bits_float(static_cast<uint32_t>(n2 + 127) << 23);
  return pick(x != x, x, pick(zero, 0.0f, p * s1 * s2));
}

// exp(x) - 1 without the cancellation near 0: the degree-9 Taylor polynomial for |x| < 0.5
// (truncation below 1e-8 relative there), exp_f(x) - 1 elsewhere (no cancellation beyond
// a factor of 2.6 there). Within a few ulp.
inline float expm1_f(float x) {
  const float xs = pick(std::fabs(x) < 0.5f, x, 0.0f);
  float p = 1.0f / 362880;
  p = p * xs + 1.0f / 40320;
  p = p * xs + 1.0f / 5040;
  p = p * xs + 1.0f / 720;
  p = p * xs + 1.0f / 120;
  p = p * xs + 1.0f / 24;
  p = p * xs + 1.0f / 6;
  p = p * xs + 0.5f;
  p = p * xs * xs + xs;
  return std::copysign(pick(std::fabs(x) < 0.5f, p, exp_f(x) - 1.0f), x);  // expm1(-0) = -0
}

// tanh(x) = -expm1(-2|x|) / (2 + expm1(-2|x|)) with the sign of x: accurate near 0 (no
// cancellation), exactly +-1 for |x| > 9, nan for nan.
inline float tanh_f(float x) {
  const float u = expm1_f(-2.0f * std::fabs(x));
  const float t = -u / (2.0f + u);
  return pick(x != x, x, std::copysign(t, x));
}

// x = 2^n m with m in [sqrt(1/2), sqrt(2)) for a positive finite x, and log m = 2 atanh(f)
// with f = (m - 1) / (m + 1) (|f| <= 0.172) by its odd series to f^9 (truncation below 3e-9
// relative). Subnormals are scaled by 2^23 first. (Other arguments give meaningless parts:
// log_special_f gives their logarithm.)
struct LogParts {
  float n;      // the exponent
  float log_m;  // log m, |log m| <= 0.347
};
inline LogParts log_parts_f(float x) {
  const bool subnormal = x < 1.17549435e-38f;
  const float xs = pick(subnormal, x * 8388608.0f, x);
  const uint32_t v = float_bits(xs) - 0x3f3504f3u;  // float_bits(sqrt(1/2))
  const int32_t e = static_cast<int32_t>(v) >> 23;
  const float m = bits_float((v & 0x007fffffu) + 0x3f3504f3u);
  const float f = (m - 1.0f) / (m + 1.0f);
  const float f2 = f * f;
  float p = 2.0f / 9;
  p = p * f2 + 2.0f / 7;
  p = p * f2 + 2.0f / 5;
  p = p * f2 + 2.0f / 3;
  return {static_cast<float>(e) - pick(subnormal, 23.0f, 0.0f), p * f2 * f + 2.0f * f};
}

// r, the logarithm (in any base) computed from x's parts, or the value at the arguments that
// have none: -inf at 0, inf at inf, nan for negative numbers and nan.
inline float log_special_f(float x, float r) {
  r = pick(x == INFINITY, x, r);
  r = pick(x == 0.0f, -INFINITY, r);
  return pick(x < 0.0f || x != x, NAN, r);
}

// log(x) = n ln2 + log m, ln2 in two parts. Within 2 ulp of std::log.
inline float log_f(float x) {
  const LogParts p = log_parts_f(x);
  return log_special_f(x, p.n * 0.693359375f + (p.log_m - p.n * 2.12194440e-4f));
}

// log2(x) = n + log m / ln2: exact at powers of two. Within 3 ulp of std::log2.
inline float log2_f(float x) {
  const LogParts p = log_parts_f(x);
  return log_special_f(x, p.n + p.log_m * 1.44269504088896341f);
}

// log10(x) = n log10(2) + log m log10(e), log10(2) in two parts. Within 3.5 ulp of
// std::log10.
inline float log10_f(float x) {
  const LogParts p = log_parts_f(x);
  return log_special_f(x, p.n * 0.30102539f + (p.log_m * 0.434294482f + p.n * 4.60503907e-6f));
}

// 1 / (1 + e) for x >= 0 and e / (1 + e) below, e = exp(-|x|) in (0, 1]: one division, and
// an exp of normal results only (exp_sum_normal_f: no clamps, one scale factor). Below
// -87.33 the result is subnormal: 0 there, as PyTorch's. Within 2 ulp; 1 at inf, nan for nan.
inline float sigmoid_f(float x) {
  constexpr float kMinNormalLog = 87.3365402f;  // -log(float's smallest normal number)
  const float a = std::fabs(x);
  const float e = exp_sum_normal_f(-pick(a < kMinNormalLog, a, kMinNormalLog), 0.0f);
  const float r = pick(x >= 0.0f, 1.0f, e) / (1.0f + e);
  return pick(x != x, x, pick(x < -kMinNormalLog, 0.0f, r));
}

// ---- double: the same constructions with double's constants ----

inline uint64_t double_bits(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
inline double bits_double(uint64_t u) {
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}
constexpr double kInfD = std::numeric_limits<double>::infinity();
constexpr double kNanD = std::numeric_limits<double>::quiet_NaN();
inline double pick(bool c, double a, double b) {
  const uint64_t m = 0ull - static_cast<uint64_t>(c);
  return bits_double((double_bits(a) & m) | (double_bits(b) & ~m));
}

// The double constants of the exp and log kernels (the AVX-512 ones too).
// 1.5 * 2^52: y + kShiftD rounds y to an integer held in the sum's low mantissa bits.
constexpr double kShiftD = 6755399441055744.0;
constexpr double kLog2eD = 1.4426950408889634;  // 1 / ln2
// ln2 in two parts (fdlibm's): e kLn2Hi is exact for |e| < 2^20, and kLn2Hi + kLn2Lo is ln2
// to 2^-86 (the reductions x - n ln2 of exp, the exponents of log)
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
// ln2 as the nearest double and its remainder (a product r ln2 in two parts, exp2)
constexpr double kLn2D = 6.93147180559945286e-01;
constexpr double kLn2TailD = 2.31904681384629956e-17;

// 2^k for an integer-valued double k in [-1022, 1023], with integer ops that AVX2 has (no
// double -> int64 conversion): k + 1.5 * 2^52 holds k + 1023 in its low mantissa bits.
inline double pow2_d(double k) {
  const uint64_t biased = double_bits((k + 1023.0) + kShiftD) - double_bits(kShiftD);
  return bits_double(biased << 52);
}

// exp(r) for |r| <= ln2 / 2 (and a correction of under 1e-4 beyond): the degree-11
// Chebyshev interpolant of tools/fit_special_float.py (ExpReduced, in r's monomials; within
// 1.5e-16 relative with Horner's rounding, as close as the degree-13 Taylor polynomial with
// two multiply-adds fewer).
inline double exp_reduced_d(double r) { return horner(special_float::kExpReduced, r); }

// exp(x): x = n ln2 + r with |r| <= ln2 / 2, exp(r) by exp_reduced_d, 2^n in two factors
// (subnormal results come out right). Within 1 ulp of std::exp over random arguments; inf,
// -inf and nan as std::exp. kCorrection: exp(x + dx) for an x that carries the large part
// exactly and a small dx (|dx| < 1e-4) added after the reduction (exp_sum_d).
template <bool kCorrection = false> inline double exp_d(double x, double dx = 0.0) {
  const bool zero = x < -746.0;  // exp is 0 there; computed at 0 to keep denormals out (exp_f)
  double xc = pick(zero, 0.0, x);
  xc = pick(xc < 710.0, xc, 710.0);  // exp(710) is inf
  const double n = (xc * kLog2eD + kShiftD) - kShiftD;
  double r = (xc - n * kLn2Hi) - n * kLn2Lo;
  if constexpr (kCorrection) r += dx;
  const double n1 = std::floor(n * 0.5);
  return pick(x != x, x, pick(zero, 0.0, exp_reduced_d(r) * pow2_d(n1) * pow2_d(n - n1)));
}

// exp(x + dx) for an x that carries the large part exactly and a small correction dx.
inline double exp_sum_d(double x, double dx) { return exp_d<true>(x, dx); }

// 2^x: x = n + r with n the nearest integer and |r| <= 1/2 exact, 2^r = exp(r ln2) (ln2 in two
// parts), 2^n in two factors (subnormal results come out right). inf from 1024 on, 0 below
// -1075 (computed at 0: no denormals on the way), nan for nan. Within 1 ulp of std::exp2.
inline double exp2_d(double x) {
  const bool zero = x < -1076.0;
  double xc = pick(zero, 0.0, x);
  xc = pick(xc < 1025.0, xc, 1025.0);
  const double n = std::nearbyint(xc);
  const double r = xc - n;
  const double p = exp_reduced_d(r * kLn2D + r * kLn2TailD);
  const double n1 = std::floor(n * 0.5);
  return pick(x != x, x, pick(zero, 0.0, p * pow2_d(n1) * pow2_d(n - n1)));
}

// exp(x) - 1: the degree-15 Taylor polynomial for |x| < 0.5 (truncation below 3e-17
// relative there), exp_d(x) - 1 elsewhere.
inline double expm1_d(double x) {
  const double xs = pick(std::fabs(x) < 0.5, x, 0.0);
  double p = 1.0 / 1307674368000.0;
  p = p * xs + 1.0 / 87178291200.0;
  p = p * xs + 1.0 / 6227020800.0;
  p = p * xs + 1.0 / 479001600.0;
  p = p * xs + 1.0 / 39916800.0;
  p = p * xs + 1.0 / 3628800.0;
  p = p * xs + 1.0 / 362880.0;
  p = p * xs + 1.0 / 40320.0;
  p = p * xs + 1.0 / 5040.0;
  p = p * xs + 1.0 / 720.0;
  p = p * xs + 1.0 / 120.0;
  p = p * xs + 1.0 / 24.0;
  p = p * xs + 1.0 / 6.0;
  p = p * xs + 0.5;
  p = p * xs * xs + xs;
  return std::copysign(pick(std::fabs(x) < 0.5, p, exp_d(x) - 1.0), x);  // expm1(-0) = -0
}

// tanh(x) = -expm1(-2|x|) / (2 + expm1(-2|x|)) with the sign of x (exactly +-1 for large
// |x|, nan for nan).
inline double tanh_d(double x) {
  const double u = expm1_d(-2.0 * std::fabs(x));
  const double t = -u / (2.0 + u);
  return pick(x != x, x, std::copysign(t, x));
}

// 1 / (1 + e) for x >= 0 and e / (1 + e) below, e = exp(-|x|) in (0, 1]: one division and
// an exp without overflow. 2^n (n in [-1075, 0]) comes from the shifted sum's low bits in one
// factor, and in two (2^(n + 600) 2^-600) where the result is subnormal (|x| > 708); 0 below
// -709.78, as 1 / (1 + exp(-x)). 1 at inf, 0 at -inf, nan for nan. Within 2 ulp.
inline double sigmoid_d(double x) {
  const double a = std::fabs(x);
  const double ac = pick(a < 746.0, a, 746.0);  // nan too (replaced at the end)
  const double t = ac * -kLog2eD + kShiftD;  // the sum's low bits hold n
  const double n = t - kShiftD;
  const double r = (-ac - n * kLn2Hi) - n * kLn2Lo;
  const bool tiny = n < -1000.0;
  // n + 1023 (+ 600 where tiny) in the exponent field: t's bits minus the shift's, plus the bias
  const uint64_t biased = double_bits(t) - double_bits(kShiftD) + (tiny ? 1623ull : 1023ull);
  const double e = exp_reduced_d(r) * bits_double(biased << 52) * pick(tiny, 0x1p-600, 1.0);
  const double v = pick(x >= 0.0, 1.0, e) / (1.0 + e);
  // 0 where exp(-x) overflows, as 1 / (1 + exp(-x)) gives (PyTorch's, the C library's)
  return pick(x != x, x, pick(x < -709.782712893384, 0.0, v));
}

// x = 2^e m with m in [sqrt(1/2), sqrt(2)) for a positive normal double x.
struct MantExpD {
  double m, e;
};
inline MantExpD mant_exp_d(double x) {
  // biased = x's bits plus (1.0's bits - sqrt(1/2)'s): its exponent field is e + 1023 where
  // x = m 2^e with m in [sqrt(1/2), sqrt(2)) (logical shifts only: AVX2 has no 64-bit
  // arithmetic shift)
  const uint64_t bits = double_bits(x);
  const uint64_t eb = (bits + 0x00095f619980c433ull) >> 52;
  const double m = bits_double(bits - (eb << 52) + (1023ull << 52));
  constexpr double kTwo52 = 4503599627370496.0;  // 2^52: eb in its low mantissa bits
  const double e = (bits_double(double_bits(kTwo52) | eb) - kTwo52) - 1023.0;
  return {m, e};
}

// log(1 + g) + small for g = m - 1 in [-0.293, 0.415] (exact) and a small addend: with
// s = g / (2 + g), log(1 + g) = 2 atanh(s) = 2s + s R, R = 2 (z / 3 + z^2 / 5 + ...) (z = s^2,
// to z^11: truncation below 1e-18 relative), and 2s = g - s g = g - (h - s h) with h = g^2 / 2,
// so log(1 + g) = g - (h - s (h + R)): g enters exactly and the division's rounding only
// touches the small correction. Within 1 ulp (fdlibm's construction of log).
inline double log_one_plus_d(double g, double small) {
  const double s = g / (2.0 + g);
  const double z = s * s;
  double p = 1.0 / 23;
  p = p * z + 1.0 / 21;
  p = p * z + 1.0 / 19;
  p = p * z + 1.0 / 17;
  p = p * z + 1.0 / 15;
  p = p * z + 1.0 / 13;
  p = p * z + 1.0 / 11;
  p = p * z + 1.0 / 9;
  p = p * z + 1.0 / 7;
  p = p * z + 1.0 / 5;
  p = p * z + 1.0 / 3;
  const double r = 2.0 * z * p;
  const double h = 0.5 * g * g;
  return g - (h - (s * (h + r) + small));
}

// log(x) of a positive normal double within 1 ulp of std::log; used where the argument is
// known to be such (random number transforms): zero, negative, subnormal, inf and nan
// arguments are not handled.
inline double log_pos_d(double x) {
  const MantExpD me = mant_exp_d(x);
  return me.e * kLn2Hi + log_one_plus_d(me.m - 1.0, me.e * kLn2Lo);
}

// x's parts for the logarithms of any double (subnormals scaled by 2^52 first; arguments
// without a logarithm taken at 1), and the value at those arguments: -inf at 0, inf at inf,
// nan for negative numbers and nan.
inline MantExpD log_parts_of_any_d(double x) {
  const bool subnormal = x < 2.2250738585072014e-308;
  const double xs = pick(subnormal, x * 4503599627370496.0, x);  // 2^52
  const MantExpD me = mant_exp_d(pick(xs > 0.0 && xs < kInfD, xs, 1.0));
  return {me.m, me.e - pick(subnormal, 52.0, 0.0)};
}
inline double log_special_d(double x, double r) {
  r = pick(x == kInfD, x, r);
  r = pick(x == 0.0, -kInfD, r);
  return pick(x < 0.0 || x != x, kNanD, r);
}
// Within 1 ulp of std::log.
inline double log_d(double x) {
  const MantExpD me = log_parts_of_any_d(x);
  return log_special_d(x, me.e * kLn2Hi + log_one_plus_d(me.m - 1.0, me.e * kLn2Lo));
}
// log2(x) = e + log m / ln2, 1 / ln2 in two parts: exact at powers of two. Within 2 ulp.
inline double log2_d(double x) {
  const MantExpD me = log_parts_of_any_d(x);
  const double log_m = log_one_plus_d(me.m - 1.0, 0.0);
  return log_special_d(x, me.e + (log_m * 1.4426950408889634 + log_m * 2.0355273740931033e-17));
}
// log10(x) = e log10(2) + log m log10(e), both constants in two parts (e times log10(2)'s
// high part, of 32 bits, is exact). Within 2 ulp.
inline double log10_d(double x) {
  const MantExpD me = log_parts_of_any_d(x);
  const double log_m = log_one_plus_d(me.m - 1.0, 0.0);
  const double small = log_m * 0.4342944819032518 + (me.e * 5.630334806675098e-11 +
                                                     log_m * 1.098319650216765e-17);
  return log_special_d(x, me.e * 0.30102999560767785 + small);
}

// log(1 + x): u = 1 + x rounded = 2^e m, and the rounding's error c = x - (u - 1) (exact:
// Sterbenz for |x| < 1, 0 from 2^53 on, negligible between) at m's scale, c' = c 2^-e, so
// that 1 + x = 2^e (m + c'): log1p(x) = e ln2 + log m + c' / m, where c' / m is taken as
// c' (1 - s)(1 - s + s^2) (1 / m = (1 - s) / (1 + s) with log_one_plus_d's s; the dropped s^3
// costs under 1% of a correction below half an ulp). x itself below 2^-54 (u = 1), -inf at
// -1, nan below. Within 1 ulp of std::log1p.
inline double log1p_d(double x) {
  const double u = 1.0 + x;
  const bool usable = u > 0.0 && u < kInfD;
  const MantExpD me = mant_exp_d(pick(usable, u, 2.0));
  const double e_clamped = pick(me.e < 1000.0, pick(me.e > -1000.0, me.e, -1000.0), 1000.0);
  const double c = (x - (u - 1.0)) * pow2_d(-e_clamped);
  const double g = me.m - 1.0;
  const double s = g / (2.0 + g);
  const double correction = c * ((1.0 - s) * (1.0 - s + s * s));
  const double r = me.e * kLn2Hi + log_one_plus_d(g, me.e * kLn2Lo + correction);
  double v = pick(std::fabs(x) < 5.551115123125783e-17, x, r);  // 2^-54; keeps -0
  v = pick(x == kInfD, x, v);
  v = pick(x == -1.0, -kInfD, v);
  return pick(x < -1.0 || x != x, kNanD, v);
}

// log(1 + x) of a float, by log1p_d's construction in float: u = 1 + x rounded = 2^e m,
// c = x - (u - 1) (exact; negligible from 2^24 on) at m's scale, g = m - 1 exact, and
// log(1 + g) = g - (h - s (h + R)) with s = g / (2 + g), h = g^2 / 2, R = 2 (z / 3 + ... +
// z^5 / 11), z = s^2 (truncation below 4e-9 relative): g enters exactly, the roundings touch
// only the small terms. Within 1 ulp of std::log1p, so that the cancellations of the ops
// built on it (logaddexp, softplus) stay small. x itself below 2^-29, -inf at -1, inf at inf,
// nan below -1.
inline float log1p_f(float x) {
  const float u = 1.0f + x;
  const float uc = pick(u > 0.0f && u < INFINITY, u, 2.0f);
  const uint32_t v = float_bits(uc) - 0x3f3504f3u;  // float_bits(sqrt(1/2))
  const int32_t e = static_cast<int32_t>(v) >> 23;
  const float m = bits_float((v & 0x007fffffu) + 0x3f3504f3u);
  const int32_t e_clamped = e < -126 ? -126 : (e > 126 ? 126 : e);
  const float c = (x - (uc - 1.0f)) * bits_float(static_cast<uint32_t>(127 - e_clamped) << 23);
  const float g = m - 1.0f;
  const float s = g / (2.0f + g);
  const float z = s * s;
  float p = 1.0f / 11;
  p = p * z + 1.0f / 9;
  p = p * z + 1.0f / 7;
  p = p * z + 1.0f / 5;
  p = p * z + 1.0f / 3;
  const float r2 = 2.0f * z * p;
  const float h = 0.5f * g * g;
  const float correction = c * ((1.0f - s) * (1.0f - s + s * s));
  const float ef = static_cast<float>(e);
  const float r = ef * 0.693359375f + (g - (h - (s * (h + r2) + (correction - ef * 2.12194440e-4f))));
  float w = pick(std::fabs(x) < 1.86264515e-9f, x, r);  // 2^-29
  w = pick(x == INFINITY, x, w);
  w = pick(x == -1.0f, -INFINITY, w);
  return pick(x < -1.0f || x != x, NAN, w);
}

// sin(2 pi u) and cos(2 pi u) for a float u in [0, 1) (a turn): no large-argument reduction,
// since u itself is exact; the quarter turn it falls in, then Taylor series of sin and cos
// on [-pi/4, pi/4] (truncation below 2e-9). Within 2 ulp of std::sin/cos(2 pi u).
inline void sincos_turn_f(float u, float& s, float& c) {
  const float w = 4.0f * (u - std::nearbyint(u));  // in [-2, 2]
  const float n = std::nearbyint(w);
  const float t = (w - n) * 1.57079632679489662f;  // in [-pi/4, pi/4]
  const float t2 = t * t;
  float ps = 1.0f / 362880;
  ps = ps * t2 - 1.0f / 5040;
  ps = ps * t2 + 1.0f / 120;
  ps = ps * t2 - 1.0f / 6;
  const float st = t + t * t2 * ps;
  float pc = -1.0f / 3628800;
  pc = pc * t2 + 1.0f / 40320;
  pc = pc * t2 - 1.0f / 720;
  pc = pc * t2 + 1.0f / 24;
  pc = pc * t2 - 0.5f;
  const float ct = 1.0f + t2 * pc;
  // rotate by n quarter turns: n mod 4 = 0: (st, ct), 1: (ct, -st), 2: (-st, -ct), 3: (-ct, st)
  const int32_t q = static_cast<int32_t>(n) & 3;
  const bool odd = (q & 1) != 0;
  const float s0 = pick(odd, ct, st);
  const float c0 = pick(odd, st, ct);
  s = pick(q >= 2, -s0, s0);
  c = pick(q == 1 || q == 2, -c0, c0);
}

// FN_(x): the float and double functions FN_f / FN_d above, the C library's std::FN for the
// other types (special_float.h uses it for its own functions).
#define EMBER_VEC_OR_LIBM(FN)                                       \
  template <typename A> inline A FN##_(A x) {                       \
    if constexpr (std::is_same_v<A, float>) return FN##_f(x);       \
    else if constexpr (std::is_same_v<A, double>) return FN##_d(x); \
    else return std::FN(x);                                          \
  }
EMBER_VEC_OR_LIBM(exp)
EMBER_VEC_OR_LIBM(exp2)
EMBER_VEC_OR_LIBM(expm1)
EMBER_VEC_OR_LIBM(log)
EMBER_VEC_OR_LIBM(log2)
EMBER_VEC_OR_LIBM(log10)
EMBER_VEC_OR_LIBM(log1p)

// sinh and cosh from the half argument, so that nothing overflows before the result does
// (sinh(89) is finite in float, exp(89) is not) and nothing cancels near 0. sinh: with
// v = expm1(|x| / 2), e^|x| - 1 = u = v (v + 2) and sinh|x| = (u / 2)(1 + 1 / (u + 1)), u / 2
// taken as (v / 2)(v + 2) (u may overflow where the result does not: 1 / inf is 0); the sign
// of x. cosh: w = exp(|x| / 2), cosh x = (w / 2) w + (1 / 2) / w^2. Within a few ulp; +-inf
// at +-inf, nan for nan.
template <typename A> inline A sinh_(A x) {
  if constexpr (std::is_same_v<A, float> || std::is_same_v<A, double>) {
    const A v = expm1_(A(0.5) * std::fabs(x));
    const A u = v * (v + A(2));
    return std::copysign((A(0.5) * v) * (v + A(2)) * (A(1) + A(1) / (u + A(1))), x);
  } else {
    return std::sinh(x);
  }
}
template <typename A> inline A cosh_(A x) {
  if constexpr (std::is_same_v<A, float> || std::is_same_v<A, double>) {
    const A w = exp_(A(0.5) * std::fabs(x));
    return (A(0.5) * w) * w + A(0.5) / (w * w);
  } else {
    return std::cosh(x);
  }
}

EMBER_VEC_OR_LIBM(tanh)

// The inverse hyperbolic functions from log1p / log (fdlibm's forms), each with the form
// that neither cancels nor overflows on its range picked (the others are computed too and
// may be inf or nan there). kBig: beyond it a^2 is dropped beside 4 a^2 (below an ulp).
template <typename A> constexpr A kInvHyperbolicBig = std::is_same_v<A, float> ? A(4096) : A(268435456);
template <typename A> constexpr A kLn2Of = A(0.69314718055994530942);

// asinh(x) = log1p(a + a^2 / (1 + sqrt(1 + a^2))) up to a = |x| = 2, log(2a + 1 / (sqrt(a^2 + 1)
// + a)) above, log(a) + ln2 beyond kBig; the sign of x.
template <typename A> inline A asinh_(A x) {
  if constexpr (std::is_same_v<A, float> || std::is_same_v<A, double>) {
    const A a = std::fabs(x), a2 = a * a;
    const A root = std::sqrt(a2 + A(1));
    const A small = log1p_(a + a2 / (A(1) + root));
    const A mid = log_(A(2) * a + A(1) / (root + a));
    const A large = log_(a) + kLn2Of<A>;
    return std::copysign(pick(a <= A(2), small, pick(a <= kInvHyperbolicBig<A>, mid, large)), x);
  } else {
    return std::asinh(x);
  }
}
// acosh(x) = log1p(t + sqrt(2t + t^2)) with t = x - 1 (exact) up to 2, log(2x - 1 / (x +
// sqrt(x^2 - 1))) above, log(x) + ln2 beyond kBig; nan below 1.
template <typename A> inline A acosh_(A x) {
  if constexpr (std::is_same_v<A, float> || std::is_same_v<A, double>) {
    const A t = x - A(1);
    const A small = log1p_(t + std::sqrt(A(2) * t + t * t));
    const A mid = log_(A(2) * x - A(1) / (x + std::sqrt(x * x - A(1))));
    const A large = log_(x) + kLn2Of<A>;
    const A r = pick(x <= A(2), small, pick(x <= kInvHyperbolicBig<A>, mid, large));
    return pick(x < A(1), std::numeric_limits<A>::quiet_NaN(), r);
  } else {
    return std::acosh(x);
  }
}
// atanh(x) = log1p(2a + 2a a / (1 - a)) / 2 below a = |x| = 1/2, log1p(2a / (1 - a)) / 2
// from there (inf at 1, nan beyond); the sign of x.
template <typename A> inline A atanh_(A x) {
  if constexpr (std::is_same_v<A, float> || std::is_same_v<A, double>) {
    const A a = std::fabs(x), twice = a + a;
    const A arg = pick(a < A(0.5), twice + twice * a / (A(1) - a), twice / (A(1) - a));
    return std::copysign(A(0.5) * log1p_(arg), x);
  } else {
    return std::atanh(x);
  }
}
template <typename A> inline A sigmoid_(A x) {
  if constexpr (std::is_same_v<A, float>) return sigmoid_f(x);
  else if constexpr (std::is_same_v<A, double>) return sigmoid_d(x);
  else return A(1) / (A(1) + std::exp(-x));
}

}  // namespace ember
