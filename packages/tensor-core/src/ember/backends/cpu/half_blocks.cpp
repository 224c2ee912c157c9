// 16-bit floats to and from float blocks (half_blocks.h), each loop compiled for the three SIMD
// levels.
#include "ember/backends/cpu/half_blocks.h"

#include "ember/core/dtype.h"
#include "ember/runtime/simd.h"

namespace ember {

void widen_half_block(const char* src, int64_t stride, float* dst, int64_t n) {
  if (stride == static_cast<int64_t>(sizeof(Half))) {
    const Half* s = reinterpret_cast<const Half*>(src);
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
