"""Derivative helpers of the convolution ops (im2col, col2im, conv2d, conv_transpose2d),
written with those ops and matmul, so that derivatives of derivatives come from the same
table. Shapes: input (N, C, H, W); conv2d weight (O, C/G, kh, kw); conv_transpose2d weight
(C, O/G, kh, kw); G = groups."""

from __future__ import annotations

import ember_tensor as et

__all__ = [
    "conv2d_backward_input",
    "conv2d_backward_weight",
    "conv_bias_backward",
    "conv_transpose2d_backward_weight",
]


def conv_bias_backward(grad):
    """The bias gradient of both convolutions: grad summed over batch and positions."""
    return grad.sum((0, 2, 3))


def conv2d_backward_input(grad, input_shape, weight, stride, padding, dilation, groups):
    """The gradient of conv2d with respect to its input (core op: col2im(W^T @ grad), or
    the direct kernel for float32 stride-1 convolutions)."""
    return et.conv2d_backward_input(grad, weight, list(input_shape), stride, padding, dilation,
                                    groups)


def conv2d_backward_weight(grad, input, weight_shape, stride, padding, dilation, groups):
    """The gradient of conv2d with respect to its weight (core op: the batch sum of
    grad @ im2col(input)^T, or the direct kernel for float32 stride-1 convolutions)."""
    return et.conv2d_backward_weight(grad, input, list(weight_shape), stride, padding, dilation,
                                     groups)


def conv_transpose2d_backward_weight(grad, input, weight_shape, stride, padding, dilation,
                                     groups):
    """conv_transpose2d(input, W) is conv2d_backward_input(input, W), so its weight gradient
    is conv2d_backward_weight with input in grad_output's place and grad in input's."""
    return et.conv2d_backward_weight(input, grad, list(weight_shape), stride, padding, dilation,
                                     groups)
