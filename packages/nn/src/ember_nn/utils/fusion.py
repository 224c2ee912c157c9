"""``ember.nn.utils.fusion``: folding an eval-mode batch norm into the convolution or
linear layer before it (PyTorch's ``torch.nn.utils.fusion``).

With ``bn(conv(x)) = (conv(x) - mean) / sqrt(var + eps) * gamma + beta``, the fused layer
has ``W' = W * gamma / sqrt(var + eps)`` (per output channel) and
``b' = (b - mean) * gamma / sqrt(var + eps) + beta``.

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> from ember_nn.utils import fuse_conv_bn_eval
>>> conv, bn = nn.Conv2d(3, 4, 3).eval(), nn.BatchNorm2d(4).eval()
>>> x = et.randn(1, 3, 8, 8)
>>> fused = fuse_conv_bn_eval(conv, bn)
>>> bool(et.allclose(fused(x), bn(conv(x)), atol=1e-5))
True
"""

from __future__ import annotations

import copy

import ember_tensor as et

from ..parameter import Parameter

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of the convolution ``conv`` with the batch norm ``bn`` folded in (both in
    eval mode; ``conv`` is unchanged). ``transpose=True`` for a transposed convolution
    (output channels on the weight's dim 1).

    Raises ``AssertionError`` when either module is in training mode or ``bn`` has no
    running statistics.

    >>> import ember_nn as nn
    >>> from ember_nn.utils import fuse_conv_bn_eval
    >>> fuse_conv_bn_eval(nn.Conv1d(2, 2, 1), nn.BatchNorm1d(2))
    Traceback (most recent call last):
    ...
    AssertionError: Fusion only for eval!
    """
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_conv = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_conv.weight, fused_conv.bias = fuse_conv_bn_weights(
        fused_conv.weight, fused_conv.bias, bn.running_mean, bn.running_var, bn.eps,
        bn.weight, bn.bias, transpose,
    )
    return fused_conv


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps: float, bn_w, bn_b,
                         transpose: bool = False):
    """The fused ``(weight, bias)`` Parameters of a convolution followed by a batch norm:
    ``conv_w`` ``(out, in/groups, *k)`` (``(in, out/groups, *k)`` with ``transpose``),
    ``conv_b`` ``(out,)`` or None (zeros), the running mean and variance ``(out,)``,
    ``bn_eps``, and the affine ``bn_w``, ``bn_b`` ``(out,)`` or None (ones, zeros). The
    results keep the dtypes of ``conv_w`` and ``conv_b``.

    >>> import ember_tensor as et
    >>> from ember_nn.utils import fuse_conv_bn_weights
    >>> w, b = fuse_conv_bn_weights(et.ones(2, 1, 1), None, et.zeros(2), et.full((2,), 3.0),
    ...                             1.0, None, et.ones(2))
    >>> w.flatten().tolist(), b.tolist()
    ([0.5, 0.5], [1.0, 1.0])
    """
    conv_weight_dtype = conv_w.dtype
    conv_bias_dtype = conv_b.dtype if conv_b is not None else conv_weight_dtype
    if conv_b is None:
        conv_b = et.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = et.ones_like(bn_rm)
    if bn_b is None:
        bn_b = et.zeros_like(bn_rm)
    bn_var_rsqrt = et.rsqrt(bn_rv + bn_eps)
    if transpose:
        shape = [1, -1] + [1] * (len(conv_w.shape) - 2)
    else:
        shape = [-1, 1] + [1] * (len(conv_w.shape) - 2)
    fused_conv_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(dtype=conv_weight_dtype)
    fused_conv_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(dtype=conv_bias_dtype)
    return (Parameter(fused_conv_w, conv_w.requires_grad),
            Parameter(fused_conv_b, conv_b.requires_grad))


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` with the batch norm ``bn`` after it folded in (both in eval
    mode; ``linear`` is unchanged). ``bn.num_features`` is ``linear.out_features`` or 1.

    Raises ``AssertionError`` when either module is in training mode, the sizes do not
    match or ``bn`` has no running statistics.

    >>> import ember_tensor as et
    >>> import ember_nn as nn
    >>> from ember_nn.utils import fuse_linear_bn_eval
    >>> lin, bn = nn.Linear(3, 4).eval(), nn.BatchNorm1d(4).eval()
    >>> x = et.randn(5, 3)
    >>> bool(et.allclose(fuse_linear_bn_eval(lin, bn)(x), bn(lin(x)), atol=1e-5))
    True
    """
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_linear = copy.deepcopy(linear)
    # a batch norm of one feature broadcasts over every output feature
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
            f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}"
        )
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_linear.weight, fused_linear.bias = fuse_linear_bn_weights(
        fused_linear.weight, fused_linear.bias, bn.running_mean, bn.running_var, bn.eps,
        bn.weight, bn.bias,
    )
    return fused_linear


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps: float, bn_w, bn_b):
    """The fused ``(weight, bias)`` Parameters of a linear layer followed by a batch norm:
    ``linear_w`` ``(out, in)``, ``linear_b`` ``(out,)`` or None (zeros), the running mean
    and variance, ``bn_eps`` and the affine ``bn_w``, ``bn_b`` (``(out,)`` or ``(1,)``).

    >>> import ember_tensor as et
    >>> from ember_nn.utils import fuse_linear_bn_weights
    >>> w, b = fuse_linear_bn_weights(et.ones(2, 3), None, et.ones(2), et.full((2,), 3.0),
    ...                               1.0, et.ones(2), et.zeros(2))
    >>> w.tolist(), b.tolist()
    ([[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]], [-0.5, -0.5])
    """
    linear_weight_dtype = linear_w.dtype
    linear_bias_dtype = linear_b.dtype if linear_b is not None else linear_weight_dtype
    if linear_b is None:
        linear_b = et.zeros_like(bn_rm)
    bn_scale = bn_w * et.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=linear_weight_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(dtype=linear_bias_dtype)
    return (Parameter(fused_w, linear_w.requires_grad),
            Parameter(fused_b, linear_b.requires_grad))
