// What the CPU and CUDA kernels of the special functions share: their dtype rule and their
// argument checks (special_cpu.cpp, special_cuda.cu).
#pragma once

#include <stdexcept>

#include "ember/core/tensor.h"
#include "ember/ops/ops_util.h"

namespace ember {

// Floating inputs keep their dtype; integer and bool inputs compute in the default float dtype.
inline ScalarType special_dtype(ScalarType dt) { return is_floating(dt) ? dt : default_float_dtype(); }

// The dtype of a binary special function (igamma, zeta): the promoted one, made floating.
inline ScalarType special_dtype(const Tensor& a, const Tensor& b) { return special_dtype(result_type(a, b)); }

// polygamma's order: PyTorch's RuntimeError for a negative one.
inline void check_polygamma_order(int64_t n) {
  if (n < 0) throw std::runtime_error("polygamma(n, x) does not support negative n.");
}

}  // namespace ember
