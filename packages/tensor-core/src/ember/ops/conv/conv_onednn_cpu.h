// float32 (and, on CPUs that compute it, bfloat16) convolutions through oneDNN on the CPU (conv_onednn_cpu.cpp; the study and the numbers
// behind it are in docs/conv-algorithms.md). conv_cpu.cpp asks these first, after the depthwise
// kernel: each returns the result, or an undefined Tensor when oneDNN does not take the call
// (not loaded, switched off, a dtype or shape it is not used for), and the caller goes on to
// Ember's own kernels.
#pragma once

#include <string>

#include "ember/core/tensor.h"
#include "ember/ops/conv/conv_meta.h"

namespace ember::cpu {

// conv2d of contiguous-or-not float32 operands: (N, O, oh, ow), bias added when defined.
Tensor onednn_conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dMeta& m);
// conv2d's gradient with respect to its (N, C, H, W) input; with float32_result, bfloat16
// operands give a float32 gradient (unrounded: conv_transpose2d adds its bias before rounding).
Tensor onednn_conv2d_backward_input(const Tensor& grad_output, const Tensor& weight, const Conv2dMeta& m,
                                    bool float32_result = false);
// conv2d's gradient with respect to its (O, C/groups, kh, kw) weight.
Tensor onednn_conv2d_backward_weight(const Tensor& grad_output, const Tensor& input, const Conv2dMeta& m);

}  // namespace ember::cpu
