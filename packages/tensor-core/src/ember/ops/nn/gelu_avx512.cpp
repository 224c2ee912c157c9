// AVX-512 kernels of the exact GELU and its derivative (see gelu_avx512.h).
#include "ember/ops/nn/gelu_avx512.h"

#if EMBER_SIMD_DISPATCH
#include "ember/backends/cpu/avx512_blocks.h"
#include "ember/ops/elementwise/special_float.h"

namespace ember::cpu {
namespace {

namespace sf = special_float;
constexpr int kRows = sizeof(sf::kNormalTailTable) / sizeof(sf::kNormalTailTable[0]);
static_assert(sizeof(sf::kNormalTailTable[0]) == 32 * sizeof(float) &&
              sizeof(sf::kNormalDensityTable) == sizeof(sf::kNormalTailTable) &&
              sf::kNormalTailTableSteps == 8 && sf::kNormalDensityTableSteps == 8 &&
              sf::kNormalTailTableEnd == sf::kNormalDensityTableEnd,
              "the kernels read 32 intervals of 1/8 (two registers per coefficient)");
// From here on gelu(x) = x and gelu'(x) = 1 in float (Phi(-7) and 7 phi(7) are below 2^-36).
constexpr float kIdentityFrom = 7.0f;

// One table's coefficients, each row in two registers (intervals 0-15 and 16-31).
struct Table {
  __m512 lo[kRows], hi[kRows];
};

EMBER_TARGET_AVX512 inline Table load_table(const float (&rows)[kRows][32]) {
  Table t;
  for (int k = 0; k < kRows; ++k) {
    t.lo[k] = _mm512_loadu_ps(rows[k]);
    t.hi[k] = _mm512_loadu_ps(rows[k] + 16);
  }
  return t;
}

// The table's polynomial of interval j at h, by Horner's rule.
EMBER_TARGET_AVX512 inline __m512 evaluate(const Table& t, __m512i j, __m512 h) {
  __m512 p = _mm512_permutex2var_ps(t.lo[kRows - 1], j, t.hi[kRows - 1]);
  for (int k = kRows - 2; k >= 0; --k)
    p = _mm512_fmadd_ps(p, h, _mm512_permutex2var_ps(t.lo[k], j, t.hi[k]));
  return p;
}

// Lanes of x that the tables serve (|x| < 4, or 7 <= x < inf), interval j of |x| and h = |x| - j / 8
// (exact: |x| rounded down to a multiple of 1/8 is subtracted).
struct Lanes {
  __mmask16 served, identity;
  __m512i j;
  __m512 h;
};
EMBER_TARGET_AVX512 inline Lanes lanes_of(__m512 x) {
  const __m512 a = _mm512_abs_ps(x);
  Lanes l;
  // inf runs the scalar kernel: gelu'(inf) is nan there, as in PyTorch (inf times 0)
  l.identity = _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(x, _mm512_set1_ps(kIdentityFrom), _CMP_GE_OQ),
                                       x, _mm512_set1_ps(INFINITY), _CMP_LT_OQ);
  l.served = _mm512_cmp_ps_mask(a, _mm512_set1_ps(sf::kNormalTailTableEnd), _CMP_LT_OQ) | l.identity;
  l.j = _mm512_cvttps_epi32(_mm512_mul_ps(a, _mm512_set1_ps(8.0f)));
  constexpr int kFloorEighth = (3 << 4) | _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
  l.h = _mm512_sub_ps(a, _mm512_roundscale_ps(a, kFloorEighth));
  return l;
}

EMBER_TARGET_AVX512 inline __mmask16 positive(__m512 x) {
  return _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ);
}

// gelu of the block of 16 from i (m: its lanes within the run).
EMBER_TARGET_AVX512 inline void gelu_block(float* y, const float* x, int64_t i, int64_t n,
                                           __mmask16 m, const Table& tail) {
  const __m512 v = avx512::load(x + i, m);
  const Lanes l = lanes_of(v);
  if (static_cast<__mmask16>(l.served | ~m) != 0xffff) {
    for (int64_t k = i; k < i + 16 && k < n; ++k) y[k] = sf::gelu(x[k]);
    return;
  }
  const __m512 below = _mm512_mul_ps(v, evaluate(tail, l.j, l.h));  // x Phi(-|x|)
  __m512 r = _mm512_mask_sub_ps(below, positive(v), v, below);      // x - that above 0
  r = _mm512_mask_mov_ps(r, l.identity, v);
  avx512::store(y + i, m, r);
}

// g gelu'(x) of the block of 16 from i.
EMBER_TARGET_AVX512 inline void gelu_backward_block(float* y, const float* g, const float* x,
                                                    int64_t i, int64_t n, __mmask16 m,
                                                    const Table& tail, const Table& density) {
  const __m512 v = avx512::load(x + i, m);
  const __m512 gv = avx512::load(g + i, m);
  const Lanes l = lanes_of(v);
  if (static_cast<__mmask16>(l.served | ~m) != 0xffff) {
    for (int64_t k = i; k < i + 16 && k < n; ++k) y[k] = g[k] * sf::gelu_derivative(x[k]);
    return;
  }
  const __m512 q = evaluate(tail, l.j, l.h);
  const __m512 cdf = _mm512_mask_sub_ps(q, positive(v), _mm512_set1_ps(1.0f), q);  // Phi(x)
  __m512 r = _mm512_mul_ps(gv, _mm512_fmadd_ps(v, evaluate(density, l.j, l.h), cdf));
  r = _mm512_mask_mov_ps(r, l.identity, gv);
  avx512::store(y + i, m, r);
}

}  // namespace

EMBER_TARGET_AVX512 void gelu_avx512(float* y, const float* x, int64_t n) {
  const Table tail = load_table(sf::kNormalTailTable);
  for (int64_t i = 0; i < n; i += 16) gelu_block(y, x, i, n, avx512::lanes16(i, n), tail);
}

EMBER_TARGET_AVX512 void gelu_backward_avx512(float* y, const float* g, const float* x, int64_t n) {
  const Table tail = load_table(sf::kNormalTailTable);
  const Table density = load_table(sf::kNormalDensityTable);
  for (int64_t i = 0; i < n; i += 16)
    gelu_backward_block(y, g, x, i, n, avx512::lanes16(i, n), tail, density);
}

}  // namespace ember::cpu
#endif
