// The AVX-512 kernel of float64 sigmoid (see sigmoid_avx512.h).
#include "ember/ops/elementwise/sigmoid_avx512.h"

#if EMBER_SIMD_DISPATCH
#include <immintrin.h>

#include "ember/ops/elementwise/vec_math.h"

namespace ember::cpu {
namespace {

namespace sf = special_float;
// exp(-a) for a below this is a normal double (exp(-708.4) is the smallest normal number)
constexpr double kTableBelow = 708.0;
constexpr double kShift = 6755399441055744.0;  // 1.5 * 2^52: the sum's low bits hold k
// ln2 / 16 in two parts (fdlibm's ln2 split, divided by 16 exactly): k * kLn2Hi16 is exact
constexpr double kLn2Hi16 = 6.93147180369123816490e-01 / 16;
constexpr double kLn2Lo16 = 1.90821492927058770002e-10 / 16;

struct Tables {
  __m512d hi_lo, hi_hi, lo_lo, lo_hi;  // 2^(j / 16) (hi, lo), entries 0-7 and 8-15
};

inline __mmask8 block_mask(int64_t i, int64_t n) {
  return n - i >= 8 ? static_cast<__mmask8>(0xff) : static_cast<__mmask8>((1u << (n - i)) - 1);
}

// sigmoid of the block of 8 from i (masked by m at the end of the run).
EMBER_TARGET_AVX512 inline void sigmoid_block(double* y, const double* x, int64_t i, int64_t n,
                                              __mmask8 m, const Tables& t) {
  const __m512d v = _mm512_maskz_loadu_pd(m, x + i);
  const __m512d a = _mm512_abs_pd(v);
  if (static_cast<__mmask8>(_mm512_cmp_pd_mask(a, _mm512_set1_pd(kTableBelow), _CMP_LT_OQ) | ~m) != 0xff) {
    for (int64_t k = i; k < i + 8 && k < n; ++k) y[k] = sigmoid_d(x[k]);
    return;
  }
  // -a = k ln2 / 16 + r, |r| <= ln2 / 32; k = 16 m + j, j in [0, 16)
  const __m512d shifted = _mm512_fmadd_pd(a, _mm512_set1_pd(-16 * 1.4426950408889634), _mm512_set1_pd(kShift));
  const __m512d k = _mm512_sub_pd(shifted, _mm512_set1_pd(kShift));
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
      _mm512_srai_epi64(_mm512_sub_epi64(bits, _mm512_castpd_si512(_mm512_set1_pd(kShift))), 4), 52);
  const __m512d e = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(table_exp), scale));
  // 1 / (1 + e) for x >= 0, e / (1 + e) below
  const __mmask8 nonnegative = _mm512_cmp_pd_mask(v, _mm512_setzero_pd(), _CMP_GE_OQ);
  const __m512d num = _mm512_mask_mov_pd(e, nonnegative, _mm512_set1_pd(1.0));
  _mm512_mask_storeu_pd(y + i, m, _mm512_div_pd(num, _mm512_add_pd(_mm512_set1_pd(1.0), e)));
}

}  // namespace

EMBER_TARGET_AVX512 void sigmoid_avx512(double* y, const double* x, int64_t n) {
  const Tables t{_mm512_loadu_pd(sf::kExp2Sixteenths), _mm512_loadu_pd(sf::kExp2Sixteenths + 8),
                 _mm512_loadu_pd(sf::kExp2SixteenthsLo), _mm512_loadu_pd(sf::kExp2SixteenthsLo + 8)};
  for (int64_t i = 0; i < n; i += 8) sigmoid_block(y, x, i, n, block_mask(i, n), t);
}

}  // namespace ember::cpu
#endif
