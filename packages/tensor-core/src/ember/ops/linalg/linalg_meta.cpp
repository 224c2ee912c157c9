// The meta functions declared in linalg_meta.h: checks, shapes and dtypes shared by
// the CPU and CUDA kernels.
#include "ember/ops/linalg/linalg_meta.h"

#include <algorithm>
#include <climits>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"

namespace ember::cpu {
namespace {

// PyTorch's names in its messages: C++ type names ("float") and ScalarType names ("Float").
const char* cpp_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::UInt8: return "unsigned char";
    case ScalarType::Int8: return "signed char";
    case ScalarType::Int16: return "short int";
    case ScalarType::Int32: return "int";
    case ScalarType::Int64: return "long int";
    case ScalarType::Float16: return "c10::Half";
    case ScalarType::BFloat16: return "c10::BFloat16";
    case ScalarType::Float32: return "float";
    case ScalarType::Float64: return "double";
    case ScalarType::ComplexFloat: return "c10::complex<float>";
    case ScalarType::ComplexDouble: return "c10::complex<double>";
    case ScalarType::UInt16: return "unsigned short";
    case ScalarType::UInt32: return "unsigned int";
    case ScalarType::UInt64: return "unsigned long";
    default: return "undefined";
  }
}

}  // namespace

// PyTorch has no bool matrix products (NotImplementedError, a RuntimeError in Python).
void check_not_bool(const char* kernel, ScalarType t) {
  if (t == ScalarType::Bool) {
    throw NotImplementedError(message("\"", kernel, "\" not implemented for '", scalar_type_name(t), "'"));
  }
}

void check_same_dtype(const char* op, const Tensor& m1, const Tensor& m2) {
  if (m1->dtype() != m2->dtype()) {
    throw std::runtime_error(message(op, ": expected m1 and m2 to have the same dtype, but got: ",
                                     cpp_type_name(m1->dtype()), " != ", cpp_type_name(m2->dtype())));
  }
}

// out= of a matrix product must have the result's dtype (PyTorch does not cast here).
void check_out_dtype(const char* op, const Tensor& out, ScalarType dt) {
  if (out && out->dtype() != dt) {
    throw std::runtime_error(message(op, ": expected out tensor to have dtype ", cpp_type_name(dt), ", but got ",
                                     cpp_type_name(out->dtype()), " instead"));
  }
}

[[noreturn]] void throw_cannot_multiply(const char* op, const Shape& a, const Shape& b) {
  auto dims = [](const Shape& s) {  // "2x3", as PyTorch prints matrices in this message
    std::string r;
    for (size_t d = 0; d < s.size(); ++d) r += (d ? "x" : "") + std::to_string(s[d]);
    return r;
  };
  throw std::runtime_error(message(op, ": mat1 and mat2 shapes cannot be multiplied (", dims(a), " and ", dims(b),
                                   "): shapes ", shape_str(a), " and ", shape_str(b)));
}

}  // namespace ember::cpu

namespace ember {

ScalarType dot_meta(const char* op, const Tensor& self, const Tensor& tensor, const Tensor& out) {
  if (self->dim() != 1 || tensor->dim() != 1) {
    throw std::runtime_error(message(op, ": 1D tensors expected, but got ", self->dim(), "D and ", tensor->dim(),
                                     "D tensors (shapes ", shape_str(self->sizes()), " and ",
                                     shape_str(tensor->sizes()), ")"));
  }
  if (self->numel() != tensor->numel()) {
    throw std::runtime_error(message(op, ": inconsistent tensor size, expected tensor [", self->numel(),
                                     "] and src [", tensor->numel(),
                                     "] to have the same number of elements, but got ", self->numel(), " and ",
                                     tensor->numel(), " elements respectively"));
  }
  if (self->dtype() != tensor->dtype()) {
    throw std::runtime_error(message(op, ": expected both vectors to have same dtype, but found ",
                                     scalar_type_name(self->dtype()), " and ", scalar_type_name(tensor->dtype())));
  }
  const ScalarType dt = self->dtype();
  cpu::check_not_bool(op, dt);
  cpu::check_out_dtype(op, out, dt);
  return dt;
}

AddmmMeta addmm_meta(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                     const Scalar& alpha, const Tensor& out) {
  if (mat1->dim() != 2) {
    throw std::runtime_error(message("addmm: mat1 must be a matrix, got a ", mat1->dim(), "-D tensor of shape ",
                                     shape_str(mat1->sizes())));
  }
  if (mat2->dim() != 2) {
    throw std::runtime_error(message("addmm: mat2 must be a matrix, got a ", mat2->dim(), "-D tensor of shape ",
                                     shape_str(mat2->sizes())));
  }
  cpu::check_same_dtype("addmm", mat1, mat2);
  if (self->dtype() != mat2->dtype()) {
    throw std::runtime_error(message("addmm: self and mat2 must have the same dtype, but got ",
                                     scalar_type_name(self->dtype()), " and ", scalar_type_name(mat2->dtype())));
  }
  const ScalarType dt = mat1->dtype();
  cpu::check_not_bool("addmm", dt);
  if (mat1->size(1) != mat2->size(0)) cpu::throw_cannot_multiply("addmm", mat1->sizes(), mat2->sizes());
  const Shape shape{mat1->size(0), mat2->size(1)};
  expand_to(self, shape, "addmm");  // validates the broadcast
  // alpha and beta converted to the product's dtype with PyTorch's overflow check (uint8 and beta -0.5:
  // RuntimeError); integer products take them truncated to integers, as PyTorch does; complex products
  // keep them whole
  check_fill_value(dt, alpha);
  check_fill_value(dt, beta);
  auto coefficient = [dt](const Scalar& s) {
    if (is_complex(dt)) return s;
    return is_floating(dt) ? Scalar::from_double(s.to_double()) : Scalar::from_int(s.to_int());
  };
  const Scalar a = coefficient(alpha), b = coefficient(beta);
  const bool use_self = b.to_double() != 0.0 || b.im != 0.0;  // beta == 0: self is ignored, NaN included
  cpu::check_out_dtype("addmm", out, dt);
  return {shape, dt, a, b, use_self};
}

}  // namespace ember
