// Meta functions of batch and group normalization and their fused backward ops: the argument
// checks (PyTorch's errors, in the CPU kernel's order) and the sizes the kernels work with.
// norm_meta.cpp defines them; the CPU kernels (norm_cpu.cpp) and the CUDA kernels
// (norm_cuda.cu, layer_norm_cuda.cu) call them, so errors and result dtypes match on both devices.
// They read sizes, dtypes and presence only, never element data or devices.
#pragma once

#include <cstdint>

#include "ember/core/tensor.h"

namespace ember {

struct BatchNormMeta {
  int64_t N, C;
  int64_t S;            // values per (sample, channel): the product of the dims after C
  int64_t M;            // values per channel: N * S
  ScalarType stat_dtype;  // save_mean's / save_invstd's: the first parameter given, else input's
};

// native_batch_norm's checks: an input of >= 2 dims (IndexError), weight, bias and running
// statistics of C elements and a dtype check_norm_param_dtype accepts, both or neither
// running statistic (ValueError), running statistics in evaluation mode, and at least one
// value per channel in training.
BatchNormMeta native_batch_norm_meta(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                     const Tensor& running_mean, const Tensor& running_var, bool training);

// native_batch_norm_backward's checks: grad_out of the input's sizes and dtype, an (N, C, *)
// input, weight (if given) of C elements, the statistics it reads (train: save_mean and
// save_invstd, else running_mean and running_var) of C elements, all readable as floats.
// grad_weight / grad_bias have C elements of the weight's dtype, or are (0,) without a weight.
BatchNormMeta native_batch_norm_backward_meta(const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                                              const Tensor& running_mean, const Tensor& running_var,
                                              const Tensor& save_mean, const Tensor& save_invstd, bool train);

// native_group_norm's checks: group > 0 dividing C, weight and bias vectors of C elements, an
// (N, C, *) input of N * C * HxW elements, parameter dtypes (check_norm_param_dtype).
void native_group_norm_meta(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t N, int64_t C,
                            int64_t HxW, int64_t group);

// native_group_norm_backward's checks: grad_out as the input, group dividing C, N * C * HxW
// input elements, mean and rstd of N * group elements, weight (if given) of C, all readable.
void native_group_norm_backward_meta(const Tensor& grad_out, const Tensor& input, const Tensor& mean,
                                     const Tensor& rstd, const Tensor& weight, int64_t N, int64_t C, int64_t HxW,
                                     int64_t group);


// ---------------------------------------------------------------------------- layer norm

struct LayerNormMeta {
  int64_t K;         // elements per row: the product of normalized_shape
  int64_t R;         // rows: the product of the leading dims of input
  Shape stat_shape;  // mean's and rstd's shape: the leading dims, then one 1 per normalized dim
};

// Parameters of a normalization (weight, bias, running statistics) share the input's dtype,
// or are float32 for a 16-bit float input; RuntimeError "mixed dtype (CPU): ..." otherwise.
// A null p passes.
void check_norm_param_dtype(const Tensor& input, const Tensor& p);
// A parameter whose values are read (as doubles) must be of a floating dtype unless it is
// empty or null: throw_dtype_unsupported("normalization", ...) otherwise.
void check_norm_param_readable(const Tensor& t);
// A normalization backward's grad_out has the input's sizes and dtype (op names the op).
void check_norm_grad_out(const char* op, const Tensor& grad_out, const Tensor& input);

// native_layer_norm's checks: a non-empty normalized_shape, weight and bias (if given) of
// that shape, an input whose sizes end with it, the parameters' dtypes
// (check_norm_param_dtype) and readability. The output has input's shape and dtype, mean and
// rstd stat_shape and input's dtype.
LayerNormMeta native_layer_norm_meta(const Tensor& input, const Shape& normalized_shape, const Tensor& weight,
                                     const Tensor& bias);

// native_layer_norm_backward's checks: grad_out (check_norm_grad_out), an input ending with
// a non-empty normalized_shape, mean and rstd of R elements and weight (if given) of K, all
// readable. grad_input has input's shape and dtype; grad_weight / grad_bias have
// normalized_shape and the weight's / bias's dtype when those are given, else are (0,) of
// input's dtype.
LayerNormMeta native_layer_norm_backward_meta(const Tensor& grad_out, const Tensor& input,
                                              const Shape& normalized_shape, const Tensor& mean, const Tensor& rstd,
                                              const Tensor& weight);

}  // namespace ember
