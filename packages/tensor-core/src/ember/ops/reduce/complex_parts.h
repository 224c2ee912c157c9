// The reductions of complex numbers that act on the real and imaginary parts separately (sum,
// mean, the cumulative sum, var / std), written once over the ops they call so that the CPU
// and CUDA kernels share them: each reduces view_as_real(z), the same dims of a (..., 2) real
// tensor whose last dim holds the parts, with the device's real kernel.
#pragma once

#include <optional>

#include "ember/ops/ops_util.h"

namespace ember {

// reduce(parts, dims) of view_as_real(z): `dims` (nullopt or empty: every dim) wrapped against
// z's dims, so that it never names the parts' dim.
template <typename Reduce>
Tensor reduce_complex_parts(const char* op, const Tensor& z, const std::optional<Shape>& dims, Reduce reduce) {
  const int64_t nd = z->dim();
  Shape wrapped;
  if (dims && !dims->empty()) {
    for (int64_t d : *dims) wrapped.push_back(wrap_dim(d, nd, op));
  } else {
    for (int64_t d = 0; d < nd; ++d) wrapped.push_back(d);
  }
  return reduce(ops::view_as_real(z), wrapped);
}

// The complex cases of sum, mean and cumsum, or nullopt where there is none (the real
// kernel's case). kernel(x, dims, dtype, out) is the device's op with its other arguments
// bound. A complex self with a real dtype= reduces the real parts (PyTorch's rule); with a
// complex dtype (given or self's) the parts of self in it are reduced, and a 0-d self is its
// own result.
template <typename Kernel>
std::optional<Tensor> complex_parts_route(const char* op, const Tensor& self, const std::optional<Shape>& dims,
                                          std::optional<ScalarType> dtype, const Tensor& out, Kernel kernel) {
  if (is_complex(self->dtype()) && dtype && !is_complex(*dtype)) {
    return kernel(to_dtype(self, *dtype), dims, dtype, out);
  }
  if (!is_complex(dtype.value_or(self->dtype()))) return std::nullopt;
  const Tensor z = to_dtype(self, dtype.value_or(self->dtype()));
  if (z->dim() == 0) return finish_out(op, out, z == self ? ops::clone(z) : z);
  const Tensor parts = reduce_complex_parts(op, z, dims, [&](const Tensor& p, const Shape& d) {
    return kernel(p, std::optional<Shape>(d), std::optional<ScalarType>(), Tensor());
  });
  return finish_out(op, out, ops::view_as_complex(parts));
}

// var / std of complex self: the mean squared distance from the mean, the parts' variances
// added (a real result). kernel(x, dims, take_sqrt, out) is the device's real var / std.
template <typename Kernel>
Tensor complex_var_std(const char* op, const Tensor& self, const std::optional<Shape>& dims, bool take_sqrt,
                       const Tensor& out, Kernel kernel) {
  if (self->dim() == 0) return kernel(ops::real(self), dims, take_sqrt, out);
  Tensor v = reduce_complex_parts(op, self, dims, [&](const Tensor& parts, const Shape& d) {
    return kernel(parts, std::optional<Shape>(d), false, Tensor());
  });
  v = ops::sum(v, Shape{-1}, false, std::nullopt, Tensor());
  return finish_out(op, out, take_sqrt ? ops::sqrt(v, Tensor()) : v);
}

}  // namespace ember
