// The blocks of the AVX-512 kernels over contiguous runs (ops/nn/gelu_avx512.cpp,
// ops/elementwise/unary_avx512.cpp): 16 floats or 8 doubles from element i of a run of n.
//
// Whole blocks take plain loads and stores; only the run's last, partial block takes masked
// ones. Masked stores are slow on AMD CPUs when the page's accessed and dirty bits must be
// set again (a microcode assist), which happens whenever something clears them, as a
// virtual machine's memory monitor does while a process idles: a 1M float64 exp2 with
// masked blocks ran 457 us back to back and 1052 us after 20 ms of idling, with plain ones
// 373 and 415 (AMD EPYC Zen 5).
#pragma once

#include <cstdint>

#include "ember/runtime/simd.h"

#if EMBER_SIMD_DISPATCH
#include <immintrin.h>

namespace ember::avx512 {

// The lanes of the block from i that lie in the run: all of them but in a last, partial block.
inline __mmask16 lanes16(int64_t i, int64_t n) {
  return n - i >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (n - i)) - 1);
}
inline __mmask8 lanes8(int64_t i, int64_t n) {
  return n - i >= 8 ? static_cast<__mmask8>(0xff) : static_cast<__mmask8>((1u << (n - i)) - 1);
}

EMBER_TARGET_AVX512 inline __m512 load(const float* p, __mmask16 m) {
  return m == 0xffff ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p);
}
EMBER_TARGET_AVX512 inline __m512d load(const double* p, __mmask8 m) {
  return m == 0xff ? _mm512_loadu_pd(p) : _mm512_maskz_loadu_pd(m, p);
}
EMBER_TARGET_AVX512 inline void store(float* p, __mmask16 m, __m512 v) {
  if (m == 0xffff) _mm512_storeu_ps(p, v);
  else _mm512_mask_storeu_ps(p, m, v);
}
EMBER_TARGET_AVX512 inline void store(double* p, __mmask8 m, __m512d v) {
  if (m == 0xff) _mm512_storeu_pd(p, v);
  else _mm512_mask_storeu_pd(p, m, v);
}

}  // namespace ember::avx512
#endif
