// 16-bit floats in and out of float blocks: the elementwise loops (elementwise.h) and dtype
// conversions (ops_util.cpp) of float16, and the reductions of float16 and bfloat16
// (reduce_cpu.h), run their float32 code between these.
#pragma once

#include <cstdint>

#include "ember/core/dtype.h"

namespace ember {

// Elements per block: three float blocks of this size fit in a 32 KiB L1 data cache.
constexpr int64_t kHalfBlock = 2048;

// n strided float16 values to n floats, and back (round to nearest even, as Half(float)).
void widen_half_block(const char* src, int64_t stride, float* dst, int64_t n);
void narrow_half_block(const float* src, char* dst, int64_t stride, int64_t n);

// n contiguous float16 or bfloat16 values to n floats (exact), and back (to nearest even).
void widen_block(const Half* src, float* dst, int64_t n);
void widen_block(const BFloat16* src, float* dst, int64_t n);
void narrow_block(const float* src, Half* dst, int64_t n);
void narrow_block(const float* src, BFloat16* dst, int64_t n);

}  // namespace ember
