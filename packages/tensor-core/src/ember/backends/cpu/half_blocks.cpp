// 16-bit floats to and from float blocks (half_blocks.h), each loop compiled for the three SIMD
// levels.
#include "ember/backends/cpu/half_blocks.h"

#include "ember/core/dtype.h"
#include "ember/runtime/simd.h"

#ifdef EMBER_SIMD_DISPATCH
#include <immintrin.h>
#endif

namespace ember {

#ifdef EMBER_SIMD_DISPATCH
namespace {

// float16 <-> float32 by F16C's conversions, 8 lanes per instruction, on CPUs of the AVX2 and
// AVX-512 levels (simd.cpp checks F16C): exact widening, and narrowing rounded to nearest
// even as Half(float), infinities and NaNs kept. The vectorised software conversion took
// 4-7x PyTorch's time (262K elements, one thread, AMD Zen 3).
EMBER_TARGET_AVX2 void widen_f16c(const Half* s, float* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
  }
  for (; i < n; ++i) d[i] = static_cast<float>(s[i]);
}

EMBER_TARGET_AVX2 void narrow_f16c(const float* s, Half* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; ++i) d[i] = Half(s[i]);
}

}  // namespace
#endif

void widen_half_block(const char* src, int64_t stride, float* dst, int64_t n) {
  if (stride == static_cast<int64_t>(sizeof(Half))) {
    const Half* s = reinterpret_cast<const Half*>(src);
#ifdef EMBER_SIMD_DISPATCH
    if (cpu_level() != CpuLevel::Default) return widen_f16c(s, dst, n);
#endif
    simd_dispatch([&] {
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(s[i]);
    });
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(*reinterpret_cast<const Half*>(src + i * stride));
}

void narrow_half_block(const float* src, char* dst, int64_t stride, int64_t n) {
  if (stride == static_cast<int64_t>(sizeof(Half))) {
    Half* d = reinterpret_cast<Half*>(dst);
#ifdef EMBER_SIMD_DISPATCH
    if (cpu_level() != CpuLevel::Default) return narrow_f16c(src, d, n);
#endif
    simd_dispatch([&] {
      for (int64_t i = 0; i < n; ++i) d[i] = Half(src[i]);
    });
    return;
  }
  for (int64_t i = 0; i < n; ++i) *reinterpret_cast<Half*>(dst + i * stride) = Half(src[i]);
}

void widen_block(const Half* src, float* dst, int64_t n) {
  widen_half_block(reinterpret_cast<const char*>(src), sizeof(Half), dst, n);
}

void widen_block(const BFloat16* src, float* dst, int64_t n) {
  simd_dispatch([&] {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
  });
}

void narrow_block(const float* src, Half* dst, int64_t n) {
  narrow_half_block(src, reinterpret_cast<char*>(dst), sizeof(Half), n);
}

void narrow_block(const float* src, BFloat16* dst, int64_t n) {
  simd_dispatch([&] {
    for (int64_t i = 0; i < n; ++i) dst[i] = BFloat16(src[i]);
  });
}

}  // namespace ember
