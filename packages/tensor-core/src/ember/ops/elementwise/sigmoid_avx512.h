// An AVX-512 kernel of float64 sigmoid over contiguous runs, for unary_float_cpu.cpp
// (through elementwise.h's avx512 hook): exp(-|x|) by Tang's table-driven method (2^(j / 16)
// as hi + lo from special_float_coeffs.h, looked up by permutes, times the degree-7 Taylor
// polynomial of |r| <= ln2 / 32), half the operations of vec_math.h's sigmoid_d (a
// degree-11 polynomial of |r| <= ln2 / 2) and as precise (within 2.3 ulp). Each 8 elements
// run so when every |x| < 708; any other 8 (subnormal results, infinities, nan) run
// sigmoid_d. Call it only where simd_avx512() is true.
#pragma once

#include <cstdint>

#include "ember/runtime/simd.h"

namespace ember::cpu {

#if EMBER_SIMD_DISPATCH
// y[i] = 1 / (1 + exp(-x[i])) for i < n (y may be x).
void sigmoid_avx512(double* y, const double* x, int64_t n);
#endif

}  // namespace ember::cpu
