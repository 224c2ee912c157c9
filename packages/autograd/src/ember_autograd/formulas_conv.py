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
    "conv_transpose2d_backward_input",
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


def _grid_excess(grad, input, weight_shape, stride, padding, dilation):
    """How many rows and columns the conv2d grid of blocks over ``grad`` (conv_transpose2d's
    output) has beyond ``input``'s (H, W): positive when output_padding >= stride (allowed
    while it is below the dilation), 0 otherwise."""
    stride, padding, dilation = (tuple(v) * 2 if len(v) == 1 else tuple(v)
                                 for v in (stride, padding, dilation))  # one int means both
    excess = []
    for axis in (0, 1):
        out = grad.shape[2 + axis]
        k = weight_shape[2 + axis]
        grid = (out + 2 * padding[axis] - dilation[axis] * (k - 1) - 1) // stride[axis] + 1
        excess.append(grid - input.shape[2 + axis])
    return excess


def conv_transpose2d_backward_input(grad, input, weight, stride, padding, dilation, groups):
    """conv_transpose2d is the adjoint of conv2d, so its input gradient is conv2d of grad,
    cut to the input's (H, W) when output_padding gave grad more blocks than that."""
    out = et.conv2d(grad, weight, None, stride, padding, dilation, groups)
    h, w = input.shape[2], input.shape[3]
    if out.shape[2] != h or out.shape[3] != w:
        out = out[:, :, :h, :w]
    return out


def conv_transpose2d_backward_weight(grad, input, weight_shape, stride, padding, dilation,
                                     groups):
    """conv_transpose2d(input, W) is conv2d_backward_input(input, W), so its weight gradient
    is conv2d_backward_weight with input in grad_output's place and grad in input's (input
    padded with zeros to grad's grid of blocks when output_padding made that larger)."""
    eh, ew = _grid_excess(grad, input, weight_shape, stride, padding, dilation)
    if eh > 0 or ew > 0:
        input = et.constant_pad_nd(input, [0, max(ew, 0), 0, max(eh, 0)])
    return et.conv2d_backward_weight(input, grad, list(weight_shape), stride, padding, dilation,
                                     groups)
