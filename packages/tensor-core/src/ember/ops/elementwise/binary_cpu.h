// What the CPU kernels of the binary elementwise ops share (binary_cpu.cpp, compare_cpu.cpp,
// ternary_cpu.cpp): their operands converted to the promoted dtype.
#pragma once

#include <cmath>
#include <limits>

#include "ember/backends/cpu/elementwise.h"
#include "ember/ops/elementwise/binary_meta.h"

namespace ember::cpu {

// The dtype both operands are converted to, and the operands converted.
struct Promoted {
  Tensor a, b;
  ScalarType dtype;
};
inline Promoted promote(const Tensor& a, const Tensor& b) {
  ScalarType t = result_type(a, b);
  return {to_dtype(a, t), to_dtype(b, t), t};
}

// The operands of the comparisons, logical ops and maximum / minimum converted to
// binary_meta's dtype, and the result's dtype.
struct BinaryOperands {
  Tensor a, b;
  ScalarType dtype, result_dtype;
};
inline BinaryOperands binary_operands(const char* op, const Tensor& a, const Tensor& b, bool boolean_result) {
  const BinaryMeta M = binary_meta(op, a, b, boolean_result);
  return {to_dtype(a, M.dtype), to_dtype(b, M.dtype), M.dtype, M.result_dtype};
}

}  // namespace ember::cpu
