// AVX-512 kernels of the exact GELU and its derivative over contiguous float32 runs, for the
// CPU kernels of activation_cpu.cpp (through elementwise.h's avx512 hook). Phi(-|x|) and the
// standard normal density come from the piecewise polynomials of special_float_coeffs.h
// (NormalTailTable, NormalDensityTable: 32 intervals of [0, 4], degree 5), whose
// coefficients a permute picks per lane: about a third of the operations of the scalar
// kernel (special_float.h's exp and normal tail), and as precise (within 3 ulp of Phi).
// Each 16 elements run so when every one lies in (-4, 4) or in [7, inf) (gelu(x) = x and
// gelu'(x) = 1 in float there); any other 16 (the far tails, infinities, nan) run the
// scalar kernel. Call them only where simd_avx512() is true.
#pragma once

#include <cstdint>

#include "ember/runtime/simd.h"

namespace ember::cpu {

#if EMBER_SIMD_DISPATCH
// y[i] = gelu(x[i]) for i < n (y may be x).
void gelu_avx512(float* y, const float* x, int64_t n);
// y[i] = g[i] gelu'(x[i]) for i < n (y may be g or x).
void gelu_backward_avx512(float* y, const float* g, const float* x, int64_t n);
#endif

}  // namespace ember::cpu
