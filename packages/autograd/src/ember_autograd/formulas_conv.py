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
    """col2im(W^T @ grad) per group: the gradient of conv2d with respect to its input."""
    n, c, h, w = input_shape
    o, cg, kh, kw = weight.shape
    g = grad.reshape(n, groups, o // groups, -1)
    wt = weight.reshape(groups, o // groups, cg * kh * kw).transpose(1, 2)
    cols = wt.matmul(g).reshape(n, c * kh * kw, -1)
    return et.col2im(cols, [h, w], [kh, kw], dilation, padding, stride)


def conv2d_backward_weight(grad, input, weight_shape, stride, padding, dilation, groups):
    """sum over the batch of grad @ im2col(input)^T, per group."""
    o, cg, kh, kw = weight_shape
    n = input.shape[0]
    cols = et.im2col(input, [kh, kw], dilation, padding, stride)
    cols = cols.reshape(n, groups, cg * kh * kw, -1)
    g = grad.reshape(n, groups, o // groups, -1)
    return g.matmul(cols.transpose(2, 3)).sum(0).reshape(o, cg, kh, kw)


def conv_transpose2d_backward_weight(grad, input, weight_shape, stride, padding, dilation,
                                     groups):
    """sum over the batch of input @ im2col(grad)^T, per group (conv_transpose2d's output
    is col2im(W^T @ input))."""
    c, og, kh, kw = weight_shape
    n = input.shape[0]
    cols = et.im2col(grad, [kh, kw], dilation, padding, stride)
    cols = cols.reshape(n, groups, og * kh * kw, -1)
    x = input.reshape(n, groups, c // groups, -1)
    return x.matmul(cols.transpose(2, 3)).sum(0).reshape(c, og, kh, kw)
