// Float math in straight-line, branch-free code that the compiler vectorises (std::exp and
// friends are scalar library calls, which keep a loop scalar). Used by elementwise ops and
// reductions for float32 (and float16/bfloat16, computed in float) and, for exp, expm1, tanh
// and sigmoid, for double.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ember/core/dtype.h"  // float_bits, bits_float

namespace ember {

// c ? a : b as bit operations: a plain selection can get one side sunk into a branch, and
// the loop then stays scalar.
inline float pick(bool c, float a, float b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return bits_float((float_bits(a) & m) | (float_bits(b) & ~m));
}
template <typename A> inline A pick(bool c, A a, A b) { return c ? a : b; }

// exp(r) for |r| <= ln2 / 2 (a little more with a correction added): the degree-7 Taylor
// polynomial, truncation error below 1e-8 relative.
inline float exp_reduced_f(float r) {
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  return p * r + 1.0f;
}

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
  return pick(std::fabs(x) < 0.5f, p, exp_f(x) - 1.0f);
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

// 1 / (1 + exp(-x)); 0 and 1 at the ends, nan for nan.
inline float sigmoid_f(float x) { return 1.0f / (1.0f + exp_f(-x)); }

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
inline double pick(bool c, double a, double b) {
  const uint64_t m = 0ull - static_cast<uint64_t>(c);
  return bits_double((double_bits(a) & m) | (double_bits(b) & ~m));
}

// 2^k for an integer-valued double k in [-1022, 1023], with integer ops that AVX2 has (no
// double -> int64 conversion): k + 1.5 * 2^52 holds k + 1023 in its low mantissa bits.
inline double pow2_d(double k) {
  constexpr double kShift = 6755399441055744.0;  // 1.5 * 2^52
  const uint64_t biased = double_bits((k + 1023.0) + kShift) - double_bits(kShift);
  return bits_double(biased << 52);
}

// exp(x): x = n ln2 + r with |r| <= ln2 / 2, exp(r) by its degree-13 Taylor polynomial
// (truncation below 5e-18 relative), 2^n in two factors (subnormal results come out
// right). Within 1 ulp of std::exp over random arguments; inf, -inf and nan as std::exp.
inline double exp_d(double x) {
  const bool zero = x < -746.0;  // exp is 0 there; computed at 0 to keep denormals out (exp_f)
  double xc = pick(zero, 0.0, x);
  xc = pick(xc < 710.0, xc, 710.0);  // exp(710) is inf
  constexpr double kShift = 6755399441055744.0;
  const double n = (xc * 1.4426950408889634 + kShift) - kShift;
  // ln2 in two parts (fdlibm's): n * kLn2Hi is exact for |n| < 2^11
  const double r = (xc - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
  double p = 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
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
  return pick(std::fabs(x) < 0.5, p, exp_d(x) - 1.0);
}

// tanh(x) = -expm1(-2|x|) / (2 + expm1(-2|x|)) with the sign of x (exactly +-1 for large
// |x|, nan for nan).
inline double tanh_d(double x) {
  const double u = expm1_d(-2.0 * std::fabs(x));
  const double t = -u / (2.0 + u);
  return pick(x != x, x, std::copysign(t, x));
}

inline double sigmoid_d(double x) { return 1.0 / (1.0 + exp_d(-x)); }

// log(x) of a positive normal double: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log m =
// 2 atanh(f), f = (m - 1) / (m + 1), by its odd series to f^23 (truncation below 1e-18
// relative), e ln2 added in two parts. Within 1 ulp of std::log on (2^-1022, inf); used
// where the argument is known to be such (random number transforms), so zero, negative,
// subnormal, inf and nan arguments are not handled.
// x = 2^e m with m in [sqrt(1/2), sqrt(2)) for a positive normal double x: e, and
// f = (m - 1) / (m + 1), where log m = 2 atanh(f), |f| <= 0.172.
struct LogPartsD {
  double e, f;
};
inline LogPartsD log_parts_d(double x) {
  // biased = x's bits plus (1.0's bits - sqrt(1/2)'s): its exponent field is e + 1023 where
  // x = m 2^e with m in [sqrt(1/2), sqrt(2)) (logical shifts only: AVX2 has no 64-bit
  // arithmetic shift)
  const uint64_t bits = double_bits(x);
  const uint64_t eb = (bits + 0x00095f619980c433ull) >> 52;
  const double m = bits_double(bits - (eb << 52) + (1023ull << 52));
  constexpr double kTwo52 = 4503599627370496.0;  // 2^52: eb in its low mantissa bits
  const double e = (bits_double(double_bits(kTwo52) | eb) - kTwo52) - 1023.0;
  return {e, (m - 1.0) / (m + 1.0)};
}

inline double log_pos_d(double x) {
  const LogPartsD lp = log_parts_d(x);
  const double f = lp.f, e = lp.e;
  const double f2 = f * f;
  double p = 1.0 / 23;
  p = p * f2 + 1.0 / 21;
  p = p * f2 + 1.0 / 19;
  p = p * f2 + 1.0 / 17;
  p = p * f2 + 1.0 / 15;
  p = p * f2 + 1.0 / 13;
  p = p * f2 + 1.0 / 11;
  p = p * f2 + 1.0 / 9;
  p = p * f2 + 1.0 / 7;
  p = p * f2 + 1.0 / 5;
  p = p * f2 + 1.0 / 3;
  p = p * f2 + 1.0;
  return (2.0 * f * p + e * 1.90821492927058770002e-10) + e * 6.93147180369123816490e-01;
}

// log(1 + x) of a float, computed in double: 1 + x is exact there for |x| >= 2^-29 (below,
// log1p(x) is x to float precision), and the series to f^11 (truncation below 1e-10
// relative) leaves only the final rounding: within 1 ulp of std::log1p, so that the
// cancellations of the ops built on it (logaddexp, softplus) stay small. -inf at -1, inf at
// inf, nan below -1.
inline float log1p_f(float x) {
  const double u = 1.0 + static_cast<double>(x);
  const LogPartsD lp = log_parts_d(pick(u > 0.0 && u < 1e300, u, 1.0));
  const double f2 = lp.f * lp.f;
  double p = 1.0 / 11;
  p = p * f2 + 1.0 / 9;
  p = p * f2 + 1.0 / 7;
  p = p * f2 + 1.0 / 5;
  p = p * f2 + 1.0 / 3;
  const double r = 2.0 * lp.f + (2.0 * lp.f) * f2 * p + lp.e * 6.93147180559945309417e-01;
  float v = pick(std::fabs(x) < 1.86264515e-9f, x, static_cast<float>(r));  // 2^-29
  v = pick(x == INFINITY, x, v);
  v = pick(x == -1.0f, -INFINITY, v);
  return pick(x < -1.0f || x != x, NAN, v);
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

template <typename A> inline A exp_(A x) {
  if constexpr (std::is_same_v<A, float>) return exp_f(x);
  else if constexpr (std::is_same_v<A, double>) return exp_d(x);
  else return std::exp(x);
}
// The float functions above for float, the C library's for the other types.
#define EMBER_FLOAT_OR_LIBM(NAME, FN)                             \
  template <typename A> inline A NAME##_(A x) {                   \
    if constexpr (std::is_same_v<A, float>) return FN##_f(x);     \
    else return std::FN(x);                                        \
  }
EMBER_FLOAT_OR_LIBM(log, log)
EMBER_FLOAT_OR_LIBM(log2, log2)
EMBER_FLOAT_OR_LIBM(log10, log10)
EMBER_FLOAT_OR_LIBM(log1p, log1p)
#undef EMBER_FLOAT_OR_LIBM

template <typename A> inline A tanh_(A x) {
  if constexpr (std::is_same_v<A, float>) return tanh_f(x);
  else if constexpr (std::is_same_v<A, double>) return tanh_d(x);
  else return std::tanh(x);
}
template <typename A> inline A sigmoid_(A x) {
  if constexpr (std::is_same_v<A, float>) return sigmoid_f(x);
  else if constexpr (std::is_same_v<A, double>) return sigmoid_d(x);
  else return A(1) / (A(1) + std::exp(-x));
}

}  // namespace ember
