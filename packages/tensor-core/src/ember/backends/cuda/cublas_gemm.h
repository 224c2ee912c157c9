// The row-major GEMM of the CUDA kernels, on cuBLAS (matmul_cublas.cpp defines it): plain C++
// declarations, so that .cu files can call it without cuBLAS's headers.
#pragma once

#include <cstdint>

#include "ember/core/complex.h"
#include "ember/core/tensor.h"

namespace ember::cuda {

// One operand of a GEMM, row-major: element (i, j) of the m x k matrix op(A) is
// data[i * ld + j], or data[j * ld + i] when trans.
struct GemmOperand {
  const void* data;
  int64_t ld;
  bool trans;
};

// For b < batch, on the current stream of `device`:
//   C_b (m x n, row-major, leading dim ldc) = alpha * op(A_b) @ op(B_b) + beta * C_b
// with A_b = a.data + b * stride_a elements (likewise B, C). dtype float16, bfloat16 (both
// accumulating in float32), float32 (TF32 when ember.backends.cuda.matmul.allow_tf32 is set,
// as mm), float64, complex64 or complex128; alpha and beta are rounded to the compute type
// (their imaginary parts count only for the complex dtypes). beta == 0 ignores C's
// values (NaN included). Needs k > 0 and alpha != 0 (callers scale C themselves otherwise);
// nothing to do when m, n or batch is 0. NotImplementedError without cuBLAS in the build,
// RuntimeError when it cannot be loaded or a size exceeds cuBLAS's int range.
void gemm(const char* op, const Device& device, ScalarType dtype, int64_t m, int64_t n, int64_t k,
          Complex<double> alpha, const GemmOperand& a, int64_t stride_a, const GemmOperand& b, int64_t stride_b,
          Complex<double> beta, void* c,
          int64_t ldc, int64_t stride_c, int64_t batch);

// How a 2-d tensor (on the device) enters gemm without a copy: row-major or transposed, from
// its strides; `keep` is a contiguous copy made when neither fits (else t itself).
struct GemmMatrix {
  Tensor keep;
  GemmOperand operand;
};
GemmMatrix gemm_matrix(const Tensor& t);

}  // namespace ember::cuda
