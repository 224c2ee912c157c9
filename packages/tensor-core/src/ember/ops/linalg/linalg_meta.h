// Meta functions of addmm and dot: the argument checks (PyTorch's errors, in the CPU kernel's
// order), the result's shape and dtype and the scalars the product uses. linalg_meta.cpp defines
// them; the CPU kernels (linalg_cpu.cpp) and the CUDA kernels (blas_cuda.cu) call them.
// They read sizes and dtypes only, never element data or devices. Also here: what the products
// multiply natively, for device-generic bodies that choose an operand dtype.
#pragma once

#include "ember/core/tensor.h"

namespace ember {

struct AddmmMeta {
  Shape shape;     // (mat1.size(0), mat2.size(1))
  ScalarType dtype;  // mat1's (= mat2's = self's)
  Scalar alpha, beta;  // float for floating dtypes, else truncated to integers (PyTorch's rule)
  bool use_self;   // beta != 0: self (broadcast to shape) enters the sum; else it is ignored, NaN included
};

// addmm's checks: 2-d mat1 and mat2 of one dtype, self of that dtype and broadcastable to the
// product, not bool (NotImplementedError), multipliable shapes, out (if given) of the dtype.
AddmmMeta addmm_meta(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                     const Scalar& alpha, const Tensor& out);

// dot's checks (op: "dot", or "matmul" for two 1-d operands): 1-d tensors of one size and one
// dtype, not bool, out (if given) of that dtype. Returns the dtype of the 0-d result.
ScalarType dot_meta(const char* op, const Tensor& self, const Tensor& tensor, const Tensor& out);

// Whether the matrix products (ops::matmul and its family) on `device` multiply operands of
// `dtype` as they are, accumulating in float32 and rounding each result element once, where
// other 16-bit operands are multiplied as widened float32 copies: bfloat16 on a CPU whose BLAS
// or oneDNN computes it (backends/cpu/blas.h: bf16_gemm). float32, float64 and complex: true.
// CUDA devices answer false for 16-bit dtypes (cuBLAS multiplies them, but the convolution
// bodies' 16-bit path has not been tried there). linalg_cpu.cpp defines it.
bool products_native(ScalarType dtype, const Device& device);

namespace cpu {
// The checks of the matrix products, shared by their meta functions and CPU kernels:
// NotImplementedError for bool ("kernel" not implemented for 'Bool'); RuntimeError for m1 and
// m2 of different dtypes, for an out= of another dtype, for shapes that cannot be multiplied.
void check_not_bool(const char* kernel, ScalarType t);
void check_same_dtype(const char* op, const Tensor& m1, const Tensor& m2);
void check_out_dtype(const char* op, const Tensor& out, ScalarType dt);
[[noreturn]] void throw_cannot_multiply(const char* op, const Shape& a, const Shape& b);
}  // namespace cpu

}  // namespace ember
