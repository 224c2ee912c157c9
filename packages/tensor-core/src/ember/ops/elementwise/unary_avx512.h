// AVX-512 kernels of unary functions over contiguous runs, for unary_float_cpu.cpp (through
// elementwise.h's avx512 hook): what the vectoriser does not emit from the scalar functions
// of vec_math.h, a table lookup by permutes and vscalefps. Call them only where
// simd_avx512() is true.
//
// - float64 sigmoid: exp(-|x|) by Tang's table-driven method (2^(j / 16) as hi + lo from
//   special_float_coeffs.h, looked up by permutes, times the degree-7 Taylor polynomial of
//   |r| <= ln2 / 32), half the operations of sigmoid_d (a degree-11 polynomial of
//   |r| <= ln2 / 2) and as precise (within 2 ulp). Each 8 elements run so when every
//   |x| < 708; any other 8 (subnormal results, infinities, nan) run sigmoid_d.
// - exp2, float32 and float64: 2^x = 2^n 2^r with n = x rounded, one polynomial of r
//   (float32: Exp2Reduced; float64: ExpReduced of r ln2) and vscalefps / vscalefpd for 2^n,
//   which also gives the overflows, the subnormal results and nan (the scalar kernels
//   clamp, split 2^n in two factors and select).
#pragma once

#include <cstdint>

#include "ember/runtime/simd.h"

namespace ember::cpu {

#if EMBER_SIMD_DISPATCH
// y[i] = 1 / (1 + exp(-x[i])) for i < n (y may be x).
void sigmoid_avx512(double* y, const double* x, int64_t n);
// y[i] = 2^x[i] for i < n (y may be x).
void exp2_avx512(float* y, const float* x, int64_t n);
void exp2_avx512(double* y, const double* x, int64_t n);
#endif

}  // namespace ember::cpu
