// Meta functions of the binary ops: comparisons, logical and/or/xor, maximum / minimum,
// pow, where, clamp, the divisions with their integer checks.
//
// A meta function is the part of an op that does not depend on the device: its argument
// checks (PyTorch's errors, types and messages, in PyTorch's order), dim wrapping, and the
// shape and dtype of its result. The CPU kernels (binary_cpu.cpp, index_cpu.cpp) and the CUDA kernels (binary_cuda.cu, creation_cuda.cu) call
// them first and differ only in how they compute the values; binary_meta.cpp defines them.
// Each raises in the order its comment lists the checks.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

// ---------------------------------------------------------------------------------------------
// binary ops: comparisons, logical and/or/xor, maximum / minimum, pow, where, clamp

struct BinaryMeta {
  ScalarType dtype;         // result_type(self, other): both operands are converted to it
  ScalarType result_dtype;  // dtype, or bool for the comparisons and logical ops
  Shape shape;              // the broadcast shape (RuntimeError naming op when none)
};
// eq / ne / lt / le / gt / ge / logical_and / logical_or / logical_xor (boolean_result) and
// maximum / minimum / max_other / min_other.
BinaryMeta binary_meta(const char* op, const Tensor& self, const Tensor& other, bool boolean_result);

struct PowMeta {
  ScalarType dtype;  // result_type(self, exponent): operands and result
  Shape shape;       // the broadcast shape (not set when result is)
  Tensor result;     // two bool operands: the result itself (self ** True == self, ** False == True)
};
// pow(self, exponent): for two bool operands NotImplementedError unless exponent is a wrapped
// Python number, which gives the result; an integer dtype with a negative Python-number
// exponent is a RuntimeError; then the broadcast shape.
PowMeta pow_meta(const Tensor& self, const Tensor& exponent);

// square(self) for a bool self: square is pow(self, 2), which promotes bool to int64, and
// True * True is 1, so the result is self converted to int64 (as in PyTorch). A null tensor
// for every other dtype, whose square the kernels compute.
Tensor square_of_bool(const Tensor& self);

struct WhereMeta {
  ScalarType dtype;  // result_type(input, other)
  Shape shape;       // condition, input and other broadcast together
};
// where: RuntimeError unless condition is bool (or uint8), then dtype and shape.
WhereMeta where_meta(const Tensor& condition, const Tensor& input, const Tensor& other);

struct ClampMeta {
  ScalarType dtype;  // result_type(self, min, max): operands and result
  Shape shape;       // self broadcast with the bounds given
};
// clamp(self, min, max): RuntimeError unless a bound is given; clamp_ (out is self) of an
// integer self with a floating bound is a RuntimeError; then dtype and shape.
ClampMeta clamp_meta(const Tensor& self, const Tensor& min, const Tensor& max, const Tensor& out);


// ---------------------------------------------------------------------------------------------
// division with integer checks

// floor_divide, div with a rounding mode (op "floor_divide" or "div"), remainder and fmod:
// dtype result_type(self, other), which both operands are converted to; RuntimeError naming op
// for two bool operands; for an integer dtype, RuntimeError "ZeroDivisionError: op: integer
// division by zero" when `other` converted to it holds a zero; then the broadcast shape
// (RuntimeError naming op). Only a CPU `other` is read for the zero check: on the CPU every
// operand, among CUDA operands a Python number or a CPU 0-d tensor. A divisor on a device is
// not read (that would synchronise): its zeros give 0 (binary_cuda.cu).
BinaryMeta division_meta(const char* op, const Tensor& self, const Tensor& other);

// sub / rsub: PyTorch's RuntimeError when an operand is bool (two bool tensors: use ^; one:
// use ~ to invert a mask).
void check_sub_operands(const Tensor& self, const Tensor& other);

// add / sub (op) with alpha in result dtype `dtype`: PyTorch's RuntimeErrors for a float
// alpha with bool or integer tensors, and for an alpha the dtype cannot hold ("value cannot be
// converted to type float without overflow").
void check_alpha(const char* op, ScalarType dtype, const Scalar& alpha);

}  // namespace ember
