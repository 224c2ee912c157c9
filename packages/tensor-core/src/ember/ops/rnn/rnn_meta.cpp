// The meta functions declared in rnn_meta.h: checks, shapes and dtypes shared by
// the CPU and CUDA kernels.
#include "ember/ops/rnn/rnn_meta.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"
#include "ember/runtime/simd.h"
#include "ember/ops/elementwise/vec_math.h"

namespace ember {
namespace {

void expect(const char* op, const char* name, const Tensor& t, const Shape& shape, ScalarType dtype) {
  if (t->sizes() != shape || t->dtype() != dtype || !t->is_contiguous()) {
    throw std::runtime_error(message(op, ": expected ", name, " to be a contiguous ", dtype_name(dtype),
                                     " tensor of shape ", shape_str(shape), ", got ", dtype_name(t->dtype()),
                                     " of shape ", shape_str(t->sizes()),
                                     t->is_contiguous() ? "" : " (not contiguous)"));
  }
}

// (T, N, H) from a (T, N, 4H) gates tensor of a float dtype.
std::array<int64_t, 3> gates_shape(const char* op, const char* name, const Tensor& g) {
  if (g->dim() != 3 || g->size(2) % 4 != 0) {
    throw std::runtime_error(message(op, ": expected ", name, " of shape (T, N, 4 * H), got ",
                                     shape_str(g->sizes())));
  }
  if (g->dtype() != ScalarType::Float32 && g->dtype() != ScalarType::Float64) {
    throw NotImplementedError(message(op, ": expected float32 or float64 tensors, got ", dtype_name(g->dtype())));
  }
  return {g->size(0), g->size(1), g->size(2) / 4};
}

}  // namespace

LstmDims lstm_forward_meta(const Tensor& x_proj, const Tensor& h0, const Tensor& c0, const Tensor& w_hh,
                           const Tensor& acts, const Tensor& cells, const Tensor& outs) {
  const char* op = "_lstm_forward_";
  const auto [steps, N, H] = gates_shape(op, "x_proj", x_proj);
  const ScalarType dt = x_proj->dtype();
  expect(op, "h0", h0, {N, H}, dt);
  expect(op, "c0", c0, {N, H}, dt);
  expect(op, "w_hh", w_hh, {4 * H, H}, dt);
  expect(op, "x_proj", x_proj, {steps, N, 4 * H}, dt);
  expect(op, "acts", acts, {steps, N, 4 * H}, dt);
  expect(op, "cells", cells, {steps, N, H}, dt);
  expect(op, "outs", outs, {steps, N, H}, dt);
  return {steps, N, H};
}

LstmDims lstm_backward_meta(const Tensor& acts, const Tensor& cells, const Tensor& c0, const Tensor& w_hh,
                            const Tensor& d_outs, const Tensor& dh, const Tensor& dc, const Tensor& d_gates) {
  const char* op = "_lstm_backward_";
  const auto [steps, N, H] = gates_shape(op, "acts", acts);
  const ScalarType dt = acts->dtype();
  expect(op, "acts", acts, {steps, N, 4 * H}, dt);
  expect(op, "cells", cells, {steps, N, H}, dt);
  expect(op, "c0", c0, {N, H}, dt);
  expect(op, "w_hh", w_hh, {4 * H, H}, dt);
  if (d_outs) expect(op, "d_outs", d_outs, {steps, N, H}, dt);
  expect(op, "dh", dh, {N, H}, dt);
  expect(op, "dc", dc, {N, H}, dt);
  expect(op, "d_gates", d_gates, {steps, N, 4 * H}, dt);
  return {steps, N, H};
}

}  // namespace ember
