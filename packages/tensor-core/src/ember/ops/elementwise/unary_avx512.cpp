// AVX-512 kernels of unary functions (see unary_avx512.h).
#include "ember/ops/elementwise/unary_avx512.h"

#if EMBER_SIMD_DISPATCH
#include "ember/backends/cpu/avx512_blocks.h"
#include "ember/ops/elementwise/vec_math.h"

namespace ember::cpu {
namespace {

namespace sf = special_float;
// exp(-a) for a below this is a normal double (exp(-708.4) is the smallest normal number)
constexpr double kTableBelow = 708.0;
// ln2 / 16 in two parts (vec_math.h's split divided by 16, exactly): k * kLn2Hi16 is exact
constexpr double kLn2Hi16 = kLn2Hi / 16;
constexpr double kLn2Lo16 = kLn2Lo / 16;

struct Tables {
  __m512d hi_lo, hi_hi, lo_lo, lo_hi;  // 2^(j / 16) (hi, lo), entries 0-7 and 8-15
};

// sigmoid of the block of 8 from i (m: its lanes within the run).
EMBER_TARGET_AVX512 inline void sigmoid_block(double* y, const double* x, int64_t i, int64_t n,
                                              __mmask8 m, const Tables& t) {
  const __m512d v = avx512::load(x + i, m);
  const __m512d a = _mm512_abs_pd(v);
  if (static_cast<__mmask8>(_mm512_cmp_pd_mask(a, _mm512_set1_pd(kTableBelow), _CMP_LT_OQ) | ~m) != 0xff) {
    for (int64_t k = i; k < i + 8 && k < n; ++k) y[k] = sigmoid_d(x[k]);
    return;
  }
  // -a = k ln2 / 16 + r, |r| <= ln2 / 32; k = 16 m + j, j in [0, 16)
  const __m512d shifted = _mm512_fmadd_pd(a, _mm512_set1_pd(-16 * kLog2eD), _mm512_set1_pd(kShiftD));
  const __m512d k = _mm512_sub_pd(shifted, _mm512_set1_pd(kShiftD));
  __m512d r = _mm512_fnmsub_pd(k, _mm512_set1_pd(kLn2Hi16), a);  // -a - k hi (exact)
  r = _mm512_fnmadd_pd(k, _mm512_set1_pd(kLn2Lo16), r);
  // exp(r) - 1 by the degree-7 Taylor polynomial (truncation below 2e-18)
  __m512d q = _mm512_set1_pd(1.0 / 5040);
  q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(1.0 / 720));
  q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(1.0 / 120));
  q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(1.0 / 24));
  q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(1.0 / 6));
  q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(0.5));
  q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(1.0));
  q = _mm512_mul_pd(q, r);
  // the shifted sum's low bits hold k in two's complement: j its low 4 bits (the permutes
  // read no more), m = k >> 4 added to the exponent field
  const __m512i bits = _mm512_castpd_si512(shifted);
  const __m512d hi = _mm512_permutex2var_pd(t.hi_lo, bits, t.hi_hi);
  const __m512d lo = _mm512_permutex2var_pd(t.lo_lo, bits, t.lo_hi);
  const __m512d table_exp = _mm512_add_pd(hi, _mm512_fmadd_pd(hi, q, lo));  // 2^(j / 16) exp(r)
  const __m512i scale = _mm512_slli_epi64(
      _mm512_srai_epi64(_mm512_sub_epi64(bits, _mm512_castpd_si512(_mm512_set1_pd(kShiftD))), 4), 52);
  const __m512d e = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(table_exp), scale));
  // 1 / (1 + e) for x >= 0, e / (1 + e) below
  const __mmask8 nonnegative = _mm512_cmp_pd_mask(v, _mm512_setzero_pd(), _CMP_GE_OQ);
  const __m512d num = _mm512_mask_mov_pd(e, nonnegative, _mm512_set1_pd(1.0));
  avx512::store(y + i, m, _mm512_div_pd(num, _mm512_add_pd(_mm512_set1_pd(1.0), e)));
}

// 2^x of 16 floats: x clamped to [-200, 200] (2^n is inf or 0 beyond either way; the
// minimum and maximum keep nan, being its second operands), n = x rounded, r = x - n exact.
EMBER_TARGET_AVX512 inline __m512 exp2_of(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-200.0f), _mm512_min_ps(_mm512_set1_ps(200.0f), x));
  const __m512 n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 r = _mm512_sub_ps(x, n);
  __m512 p = _mm512_set1_ps(sf::kExp2Reduced[6]);
  for (int k = 5; k >= 0; --k) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(sf::kExp2Reduced[k]));
  return _mm512_scalef_ps(p, n);
}

// 2^x of 8 doubles: x clamped to [-1100, 1100], 2^r = exp(r ln2) with r ln2 in two parts.
EMBER_TARGET_AVX512 inline __m512d exp2_of(__m512d x) {
  x = _mm512_max_pd(_mm512_set1_pd(-1100.0), _mm512_min_pd(_mm512_set1_pd(1100.0), x));
  const __m512d n = _mm512_roundscale_pd(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512d r = _mm512_sub_pd(x, n);
  const __m512d rl = _mm512_fmadd_pd(r, _mm512_set1_pd(kLn2D), _mm512_mul_pd(r, _mm512_set1_pd(kLn2TailD)));
  constexpr int kTerms = sizeof(sf::kExpReduced) / sizeof(sf::kExpReduced[0]);
  __m512d p = _mm512_set1_pd(sf::kExpReduced[kTerms - 1]);
  for (int k = kTerms - 2; k >= 0; --k) p = _mm512_fmadd_pd(p, rl, _mm512_set1_pd(sf::kExpReduced[k]));
  return _mm512_scalef_pd(p, n);
}

}  // namespace

EMBER_TARGET_AVX512 void exp2_avx512(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = avx512::lanes16(i, n);
    avx512::store(y + i, m, exp2_of(avx512::load(x + i, m)));
  }
}

EMBER_TARGET_AVX512 void exp2_avx512(double* y, const double* x, int64_t n) {
  for (int64_t i = 0; i < n; i += 8) {
    const __mmask8 m = avx512::lanes8(i, n);
    avx512::store(y + i, m, exp2_of(avx512::load(x + i, m)));
  }
}

EMBER_TARGET_AVX512 void sigmoid_avx512(double* y, const double* x, int64_t n) {
  const Tables t{_mm512_loadu_pd(sf::kExp2Sixteenths), _mm512_loadu_pd(sf::kExp2Sixteenths + 8),
                 _mm512_loadu_pd(sf::kExp2SixteenthsLo), _mm512_loadu_pd(sf::kExp2SixteenthsLo + 8)};
  for (int64_t i = 0; i < n; i += 8) sigmoid_block(y, x, i, n, avx512::lanes8(i, n), t);
}

}  // namespace ember::cpu
#endif
