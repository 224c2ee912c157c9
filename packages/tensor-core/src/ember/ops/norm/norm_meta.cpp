// The layer norm meta functions declared in norm_meta.h.
#include "ember/ops/norm/norm_meta.h"

#include <algorithm>
#include <cstddef>
#include <string>

namespace ember {
namespace {

// Whether input's sizes end with normalized_shape.
bool ends_with(const Tensor& input, const Shape& normalized_shape) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size()), nd = input->dim();
  bool ok = nd >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = input->size(nd - k + i) == normalized_shape[static_cast<size_t>(i)];
  return ok;
}

// K, R and the statistics' shape of an input that ends with normalized_shape.
LayerNormMeta layer_norm_rows(const Tensor& input, const Shape& normalized_shape) {
  const size_t k = normalized_shape.size();
  LayerNormMeta m;
  m.K = shape_numel(normalized_shape);
  m.stat_shape = Shape(input->sizes().begin(), input->sizes().end() - static_cast<std::ptrdiff_t>(k));
  m.R = shape_numel(m.stat_shape);
  m.stat_shape.insert(m.stat_shape.end(), k, 1);
  return m;
}

}  // namespace

// ---------------------------------------------------------------------------- layer norm

void check_norm_param_dtype(const Tensor& input, const Tensor& p) {
  if (!p) return;
  const ScalarType it = input->dtype(), pt = p->dtype();
  const bool half = it == ScalarType::Float16 || it == ScalarType::BFloat16;
  if (pt != it && !(half && pt == ScalarType::Float32)) {
    throw std::runtime_error("mixed dtype (CPU): all inputs must share same datatype.");
  }
}

void check_norm_param_readable(const Tensor& t) {
  if (t && t->numel() > 0 && !is_floating(t->dtype())) {
    throw_dtype_unsupported("normalization", t->dtype(), "floating point");
  }
}

void check_norm_grad_out(const char* op, const Tensor& grad_out, const Tensor& input) {
  if (grad_out->sizes() != input->sizes()) {
    throw std::runtime_error(message(op, ": expected grad_out of the input's size ", shape_str(input->sizes()),
                                     ", but got ", shape_str(grad_out->sizes())));
  }
  if (grad_out->dtype() != input->dtype()) {
    throw std::runtime_error(message(op, ": expected grad_out of the input's dtype ", dtype_name(input->dtype()),
                                     ", but got ", dtype_name(grad_out->dtype())));
  }
}

LayerNormMeta native_layer_norm_meta(const Tensor& input, const Shape& normalized_shape, const Tensor& weight,
                                     const Tensor& bias) {
  if (normalized_shape.empty()) {
    throw std::runtime_error(message("Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                                     "least one element, but got normalized_shape = ", shape_str(normalized_shape)));
  }
  if (weight && weight->sizes() != normalized_shape) {
    throw std::runtime_error(message("Expected weight to be of same shape as normalized_shape, but got weight of shape ",
                                     shape_str(weight->sizes()), " and normalized_shape = ",
                                     shape_str(normalized_shape)));
  }
  if (bias && bias->sizes() != normalized_shape) {
    throw std::runtime_error(message("Expected bias to be of same shape as normalized_shape, but got bias of shape ",
                                     shape_str(bias->sizes()), " and normalized_shape = ",
                                     shape_str(normalized_shape)));
  }
  if (!ends_with(input, normalized_shape)) {
    std::string expected = "[*";
    for (int64_t s : normalized_shape) expected += message(", ", s);
    throw std::runtime_error(message("Given normalized_shape=", shape_str(normalized_shape),
                                     ", expected input with shape ", expected, "], but got input of size",
                                     shape_str(input->sizes())));
  }
  check_norm_param_dtype(input, weight);
  check_norm_param_dtype(input, bias);
  check_norm_param_readable(weight);
  check_norm_param_readable(bias);
  return layer_norm_rows(input, normalized_shape);
}

LayerNormMeta native_layer_norm_backward_meta(const Tensor& grad_out, const Tensor& input,
                                              const Shape& normalized_shape, const Tensor& mean, const Tensor& rstd,
                                              const Tensor& weight) {
  const char* op = "native_layer_norm_backward";
  check_norm_grad_out(op, grad_out, input);
  if (normalized_shape.empty() || !ends_with(input, normalized_shape)) {
    throw std::runtime_error(message(op, ": input of size ", shape_str(input->sizes()),
                                     " does not end with normalized_shape ", shape_str(normalized_shape)));
  }
  const LayerNormMeta m = layer_norm_rows(input, normalized_shape);
  if (mean->numel() != m.R || rstd->numel() != m.R) {
    throw std::runtime_error(message(op, ": expected mean and rstd of ", m.R, " elements"));
  }
  if (weight && weight->numel() != m.K) {
    throw std::runtime_error(message(op, ": expected a weight of ", m.K, " elements"));
  }
  check_norm_param_readable(mean);
  check_norm_param_readable(rstd);
  check_norm_param_readable(weight);
  return m;
}

namespace {

void check_numel(const char* what, const Tensor& t, int64_t C) {
  if (t && t->numel() != C) {
    throw std::runtime_error(message(what, " should contain ", C, " elements not ", t->numel()));
  }
}

ScalarType param_dtype(const Tensor& input, std::initializer_list<const Tensor*> params) {
  for (const Tensor* p : params) {
    if (*p) return (*p)->dtype();
  }
  return input->dtype();
}

}  // namespace

BatchNormMeta native_batch_norm_meta(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                     const Tensor& running_mean, const Tensor& running_var, bool training) {
  const int64_t nd = input->dim();
  if (nd < 2) {
    throw IndexError(nd == 0 ? std::string("Dimension specified as 1 but tensor has no dimensions")
                             : message("Dimension out of range (expected to be in range of [-1, 0], but got 1)"));
  }
  const int64_t N = input->size(0), C = input->size(1);
  const int64_t S = N * C != 0 ? input->numel() / (N * C) : 0;
  const int64_t M = N * S;  // values per channel
  check_numel("running_mean", running_mean, C);
  check_numel("running_var", running_var, C);
  check_numel("weight", weight, C);
  check_numel("bias", bias, C);
  for (const Tensor* p : {&weight, &bias, &running_mean, &running_var}) check_norm_param_dtype(input, *p);
  if (static_cast<bool>(running_mean) != static_cast<bool>(running_var)) {
    throw ValueError("running_mean and running_var must either both be None or neither be None");
  }
  if (!training && !running_mean) throw std::runtime_error("running_mean must be defined in evaluation mode");
  if (training && M == 0) {
    throw std::runtime_error(message("input tensor must have at least one element, but got input_sizes = ",
                                     shape_str(input->sizes())));
  }
  return {N, C, S, M, param_dtype(input, {&weight, &bias, &running_mean, &running_var})};
}

BatchNormMeta native_batch_norm_backward_meta(const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                                              const Tensor& running_mean, const Tensor& running_var,
                                              const Tensor& save_mean, const Tensor& save_invstd, bool train) {
  const char* op = "native_batch_norm_backward";
  check_norm_grad_out(op, grad_out, input);
  if (input->dim() < 2) throw std::runtime_error(message(op, ": expected an (N, C, *) input"));
  const int64_t N = input->size(0), C = input->size(1);
  const int64_t S = N * C != 0 ? input->numel() / (N * C) : 0, M = N * S;
  check_numel("weight", weight, C);
  const Tensor& mean_t = train ? save_mean : running_mean;
  const Tensor& var_t = train ? save_invstd : running_var;
  if (!mean_t || !var_t || mean_t->numel() != C || var_t->numel() != C) {
    throw std::runtime_error(message(op, train ? ": save_mean and save_invstd" : ": running_mean and running_var",
                                     " of ", C, " elements are required"));
  }
  check_norm_param_readable(mean_t);
  check_norm_param_readable(var_t);
  check_norm_param_readable(weight);
  return {N, C, S, M, weight ? weight->dtype() : input->dtype()};
}

void native_group_norm_meta(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t N, int64_t C,
                            int64_t HxW, int64_t group) {
  const char* op = "native_group_norm";
  if (group <= 0) {
    throw std::runtime_error(message(op, ": expected a positive number of groups, but got group=", group));
  }
  if (C % group != 0) {
    throw std::runtime_error(message("Expected number of channels in input to be divisible by num_groups, but got "
                                     "input of shape ", shape_str(input->sizes()), " and num_groups=", group));
  }
  if (weight && (weight->dim() != 1 || weight->numel() != C)) {
    throw std::runtime_error(message("Expected weight to be a vector of size equal to the number of channels in "
                                     "input, but got weight of shape ", shape_str(weight->sizes()),
                                     " and input of shape ", shape_str(input->sizes())));
  }
  if (bias && (bias->dim() != 1 || bias->numel() != C)) {
    throw std::runtime_error(message("Expected bias to be a vector of size equal to the number of channels in "
                                     "input, but got bias of shape ", shape_str(bias->sizes()),
                                     " and input of shape ", shape_str(input->sizes())));
  }
  int64_t NC = 0, NCH = 0;
  const bool fits = N >= 0 && C >= 0 && HxW >= 0 && !__builtin_mul_overflow(N, C, &NC) &&
                    !__builtin_mul_overflow(NC, HxW, &NCH);
  if (!fits || input->numel() != NCH) {  // (any shape holding them: the kernel reads (N, C, HxW))
    throw std::runtime_error(message(op, ": expected an input of N * C * HxW = ", N, " * ", C, " * ", HxW,
                                     " elements, but got input of size ", shape_str(input->sizes())));
  }
  check_norm_param_dtype(input, weight);
  check_norm_param_dtype(input, bias);
}

void native_group_norm_backward_meta(const Tensor& grad_out, const Tensor& input, const Tensor& mean,
                                     const Tensor& rstd, const Tensor& weight, int64_t N, int64_t C, int64_t HxW,
                                     int64_t group) {
  const char* op = "native_group_norm_backward";
  check_norm_grad_out(op, grad_out, input);
  if (group <= 0 || C % group != 0 || input->numel() != N * C * HxW) {
    throw std::runtime_error(message(op, ": expected an input of N * C * HxW = ", N, " * ", C, " * ", HxW,
                                     " elements and C divisible by group=", group, ", but got input of size ",
                                     shape_str(input->sizes())));
  }
  if (mean->numel() != N * group || rstd->numel() != N * group) {
    throw std::runtime_error(message(op, ": expected mean and rstd of N * group = ", N * group, " elements"));
  }
  check_numel("weight", weight, C);
  check_norm_param_readable(mean);
  check_norm_param_readable(rstd);
  check_norm_param_readable(weight);
}

}  // namespace ember
