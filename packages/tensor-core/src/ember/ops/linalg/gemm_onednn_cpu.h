// bfloat16 matrix products through oneDNN's matmul on CPUs that compute bfloat16 but have no
// AMX tiles (AVX512-BF16: AMD Zen 4 and later, Intel Cooper Lake), where MKL's bfloat16 GEMM
// is slower than float32 products of widened copies (gemm_onednn_cpu.cpp; docs/performance.md).
#pragma once

#include <cstdint>

#include "ember/core/dtype.h"

namespace ember::cpu {

// `batch` row-major products C = alpha op(A) op(B) + beta C on the calling thread: A (M x K)
// and B (K x N) bfloat16 with leading dims lda, ldb (ta, tb: stored transposed), C float32
// with leading dim ldc, accumulated in float32; product i reads A + i * a_bs and B + i * b_bs
// (0: the same matrix for every product) and writes C + i * c_bs. False (C untouched) when
// oneDNN does not take it: not loaded, switched off, a CPU without bfloat16 arithmetic, or no
// primitive for the layout.
bool onednn_gemm_bf16(bool ta, bool tb, int M, int N, int K, float alpha, const BFloat16* A, int lda,
                      const BFloat16* B, int ldb, float beta, float* C, int ldc, int64_t batch = 1,
                      int64_t a_bs = 0, int64_t b_bs = 0, int64_t c_bs = 0);
// The same with a bfloat16 C, rounded once from the float32 sum alpha op(A) op(B) + beta C.
bool onednn_gemm_bf16(bool ta, bool tb, int M, int N, int K, float alpha, const BFloat16* A, int lda,
                      const BFloat16* B, int ldb, float beta, BFloat16* C, int ldc, int64_t batch = 1,
                      int64_t a_bs = 0, int64_t b_bs = 0, int64_t c_bs = 0);

}  // namespace ember::cpu
