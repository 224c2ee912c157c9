// Direct depthwise convolution on the CPU: groups == C, each input channel convolved with its
// own multiplier M = O / C filters (conv_depthwise_cpu.cpp; the numbers behind it are in
// docs/conv-algorithms.md). conv_cpu.cpp's CPU kernels of conv2d, conv2d_backward_input and
// conv2d_backward_weight ask depthwise_suits() first and keep their other paths otherwise.
#pragma once

#include "ember/ops/conv/conv_meta.h"

namespace ember::cpu {

// Whether the depthwise kernels take this convolution: t (the input or grad_output) float32
// or float64, and groups == C. Any kernel size, stride, padding, dilation and multiplier.
// EMBER_CONV_DEPTHWISE=0 turns them off (im2col + GEMM then runs, as for other groups).
bool depthwise_suits(const Tensor& t, const Conv2dMeta& m);

// conv2d and its two derivatives for m (the op's meta function's result): arguments of any
// strides, a contiguous result; bias may be null. The backward-weight sum over the batch has
// a fixed order, so its result does not depend on the thread count.
Tensor depthwise_conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dMeta& m);
Tensor depthwise_conv2d_backward_input(const Tensor& grad_output, const Tensor& weight, const Conv2dMeta& m);
Tensor depthwise_conv2d_backward_weight(const Tensor& grad_output, const Tensor& input, const Conv2dMeta& m);

}  // namespace ember::cpu
