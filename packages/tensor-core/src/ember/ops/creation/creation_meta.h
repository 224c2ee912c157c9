// Meta functions of arange, linspace, eye and tril / triu.
//
// A meta function is the part of an op that does not depend on the device: its argument
// checks (PyTorch's errors, types and messages, in PyTorch's order), dim wrapping, and the
// shape and dtype of its result. The CPU kernels (creation_cpu.cpp, shape_cpu.cpp) and the CUDA kernels (creation_cuda.cu) call
// them first and differ only in how they compute the values; creation_meta.cpp defines them.
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
// arange

struct ArangeMeta {
  ScalarType dtype;      // dtype=, else out's, else int64 (all integers) or the default float dtype
  int64_t n;             // the length, >= 0
  bool all_int;          // start, end and step all integers: element i is a0 + i * si
  int64_t a0 = 0, si = 0;  // (all_int) the integer start and step
  double a, s;           // the start and step as doubles: else element i is a + i * s
};
// arange(start, end, step), or arange(end) when end is absent (start 0): RuntimeError for a
// zero step, a non-finite start or end, an end on the wrong side of start for the step's
// sign, or more than 2^62 (integers) / 4.6e18 (floats) elements. With an integer dtype,
// start, end and step are truncated to integers first, as in PyTorch (ValueError when the step
// becomes 0). The dtype is not checked (bool: the kernels raise throw_dtype_unsupported's
// error after allocating the result).
ArangeMeta arange_meta(const Scalar& start, std::optional<Scalar> end, const Scalar& step,
                       std::optional<ScalarType> dtype, const Tensor& out);


// tril / triu (op): RuntimeError unless self has at least 2 dims, then unless out (when given)
// has self's dtype. Returns diagonal clamped to [-rows, cols]: an offset beyond those keeps or
// zeroes every entry alike, and row + offset must not overflow.
int64_t triangle_meta(const char* op, const Tensor& self, const Tensor& out, int64_t diagonal);

struct LinspaceMeta {
  ScalarType dtype;  // dtype=, else out's, else the default float dtype
  double a, b;       // the endpoints, truncated to integers first for an integer dtype
};
// linspace: RuntimeError for steps < 0, and PyTorch's "value cannot be converted to type <T>
// without overflow" for an endpoint the dtype cannot hold. With an integer dtype the endpoints
// are converted to it before the steps are computed, as in PyTorch (linspace(0, -1.5, 4) in
// int16: 0, 0, 0, -1). The dtype is not checked (bool raises in the kernels, after the
// result is allocated).
LinspaceMeta linspace_meta(const Scalar& start, const Scalar& end, int64_t steps,
                           std::optional<ScalarType> dtype, const Tensor& out);

struct EyeMeta {
  int64_t cols;      // m, else n
  ScalarType dtype;  // dtype=, else out's, else the default float dtype
};
// eye(n, m): RuntimeError unless n and m are non-negative.
EyeMeta eye_meta(int64_t n, std::optional<int64_t> m, std::optional<ScalarType> dtype, const Tensor& out);

}  // namespace ember
