// The meta functions declared in binary_meta.h.
#include "ember/ops/elementwise/binary_meta.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "ember/ops/index/indexing.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"

namespace ember {

// ---------------------------------------------------------------------------------------------
// binary ops

namespace {

Shape broadcast_pair(const char* op, const Tensor& a, const Tensor& b) {
  return a->sizes() == b->sizes() ? a->sizes() : broadcast_shapes(a->sizes(), b->sizes(), op);
}

}  // namespace

BinaryMeta binary_meta(const char* op, const Tensor& self, const Tensor& other, bool boolean_result) {
  const ScalarType t = result_type(self, other);
  return {t, boolean_result ? ScalarType::Bool : t, broadcast_pair(op, self, other)};
}

Tensor square_of_bool(const Tensor& self) {
  return self->dtype() == ScalarType::Bool ? to_dtype(self, ScalarType::Int64) : Tensor();
}

PowMeta pow_meta(const Tensor& self, const Tensor& exponent) {
  PowMeta M;
  M.dtype = result_type(self, exponent);
  if (M.dtype == ScalarType::Bool) {
    if (!exponent->wrapped_number) throw NotImplementedError("pow: not implemented for two bool operands");
    // bool ** True == self, bool ** False == True (a wrapped number is a CPU tensor)
    M.result = *exponent->data<bool>() ? ops::clone(self) : ops::ones_like(self, std::nullopt, std::nullopt, false);
    return M;
  }
  // a Python-number exponent in the result dtype, with PyTorch's overflow check for integer and 16-bit
  // float results (uint8 ** 256, bfloat16 ** -1e300: RuntimeError; float32 ** 1e300 is inf)
  const bool checked = !is_floating(M.dtype) || M.dtype == ScalarType::Float16 || M.dtype == ScalarType::BFloat16;
  if (exponent->wrapped_number && checked && !is_complex(M.dtype)) check_fill_value(M.dtype, scalar_of(exponent));
  if (!is_floating(M.dtype) && !is_complex(M.dtype) && !is_wide_unsigned(M.dtype) && exponent->wrapped_number) {
    // like PyTorch: a negative Python-number exponent of an integer tensor is an error (read
    // as the number it is, before an unsigned tensor's type would wrap it); negative tensor
    // exponents give 1, -1 or 0 as integer arithmetic does
    if (exponent->numel() == 1 && to_dtype(exponent, ScalarType::Int64)->data<int64_t>()[0] < 0) {
      throw std::runtime_error("pow: Integers to negative integer powers are not allowed.");
    }
  }
  M.shape = broadcast_pair("pow", self, exponent);
  return M;
}

WhereMeta where_meta(const Tensor& condition, const Tensor& input, const Tensor& other) {
  if (condition->dtype() != ScalarType::Bool && condition->dtype() != ScalarType::UInt8) {
    throw std::runtime_error(message("where: expected condition to be a bool tensor, got ",
                                     dtype_name(condition->dtype())));
  }
  const ScalarType t = result_type(input, other);
  // a Python number is converted to an integer result dtype with PyTorch's overflow check (a float
  // result rounds it, to inf beyond the range, as PyTorch's)
  for (const Tensor* operand : {&input, &other}) {
    if ((*operand)->wrapped_number && !is_floating(t) && !is_complex(t)) check_fill_value(t, scalar_of(*operand));
  }
  Shape shape = broadcast_shapes(condition->sizes(), input->sizes(), "where");
  shape = broadcast_shapes(shape, other->sizes(), "where");
  return {t, shape};
}

ClampMeta clamp_meta(const Tensor& self, const Tensor& min, const Tensor& max, const Tensor& out) {
  if (!min && !max) throw std::runtime_error("clamp: at least one of 'min' or 'max' must not be None");
  const ScalarType t = result_type({self.get(), min.get(), max.get()});
  if (out && !is_floating(out->dtype()) && is_floating(t) && out == self) {
    throw std::runtime_error(message("clamp_: result type ", dtype_name(t),
                                     " can't be cast to the desired output type ", dtype_name(self->dtype())));
  }
  // a Python number for a bound is converted to the result dtype with PyTorch's overflow check
  for (const Tensor* bound : {&min, &max}) {
    if (*bound && (*bound)->wrapped_number) check_fill_value(t, scalar_of(*bound));
  }
  Shape shape = self->sizes();
  if (min) shape = broadcast_shapes(shape, min->sizes(), "clamp");
  if (max) shape = broadcast_shapes(shape, max->sizes(), "clamp");
  return {t, shape};
}

// ---------------------------------------------------------------------------------------------
// division with integer checks

namespace {

// RuntimeError as in PyTorch (Python's ZeroDivisionError is not a RuntimeError).
void check_int_divisor(const char* op, const Tensor& b) {
  if (is_floating(b->dtype()) || is_complex(b->dtype())) return;
  bool zero = false;
  dispatch_any(b->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      Tensor c = as_contiguous(b);
      const T* p = c->data<T>();
      for (int64_t i = 0; i < c->numel() && !zero; ++i) zero = p[i] == T(0);
    }
  });
  if (zero) throw std::runtime_error(message("ZeroDivisionError: ", op, ": integer division by zero"));
}

}  // namespace

BinaryMeta division_meta(const char* op, const Tensor& self, const Tensor& other) {
  const ScalarType t = result_type(self, other);
  if (t == ScalarType::Bool) throw std::runtime_error(message(op, ": not implemented for two bool operands"));
  Shape shape = broadcast_pair(op, self, other);
  // a result without elements divides nothing: no division by zero (as PyTorch)
  if (other->device().type == DeviceType::CPU && shape_numel(shape) != 0) check_int_divisor(op, to_dtype(other, t));
  return {t, t, std::move(shape)};
}

void check_sub_operands(const Tensor& self, const Tensor& other) {
  const bool a = self->dtype() == ScalarType::Bool, b = other->dtype() == ScalarType::Bool;
  if (a && b) {
    throw std::runtime_error("Subtraction, the `-` operator, with two bool tensors is not supported. "
                             "Use the `^` or `logical_xor()` operator instead.");
  }
  if (a || b) {
    throw std::runtime_error("Subtraction, the `-` operator, with a bool tensor is not supported. "
                             "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  }
}

void check_alpha(const char* op, ScalarType dtype, const Scalar& alpha) {
  if (alpha.is_complex() && !is_complex(dtype)) {
    throw std::runtime_error("For non-complex input tensors, argument alpha must not be a complex number.");
  }
  if (dtype != ScalarType::Bool && alpha.is_bool()) {
    throw std::runtime_error("Boolean alpha only supported for Boolean results.");
  }
  if (dtype == ScalarType::Bool && alpha.is_float()) {
    throw std::runtime_error(message(op, ": for bool tensors alpha must be a bool or an integer"));
  }
  if (!is_floating(dtype) && !is_complex(dtype) && alpha.is_float()) {
    throw std::runtime_error(message(op, ": for integral input tensors (", dtype_name(dtype),
                                     "), argument alpha must not be a floating point number"));
  }
  check_fill_value(dtype, alpha);
}

}  // namespace ember
