// Meta functions of batch and group normalization and their fused backward ops: the argument
// checks (PyTorch's errors, in the CPU kernel's order) and the sizes the kernels work with.
// norms.cpp defines them and its CPU kernels call them; the CUDA kernels
// (cuda/kernels_norm.cu) call them too, so errors and result dtypes match on both devices.
// They read sizes, dtypes and presence only, never element data or devices.
#pragma once

#include <cstdint>

#include "ember/tensor.h"

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

}  // namespace ember
