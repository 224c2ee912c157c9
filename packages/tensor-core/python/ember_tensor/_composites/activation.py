"""Activation functions and the elementwise binary cross-entropy, written once in terms of
other ops (``composite: python`` in ops.yaml): the ops behind ``ember.nn.functional``, with
PyTorch's names, signatures and defaults (``torch.nn.functional`` / ``torch._C._nn``).

Autograd records the ops they call, except for the ops that derivatives.yaml gives a fused
formula of their own (``hardtanh``: PyTorch's gradient, none at or beyond the bounds;
``binary_cross_entropy``: PyTorch's derivatives, finite at 0 and 1): those are recorded as
one node. The formulas are written so that the gradient through their ops is PyTorch's
everywhere, kinks included (``softplus`` and the log-sigmoid terms never overflow nor give
NaN gradients).

Precision: float16 and bfloat16 inputs are computed in float32 and rounded once, as PyTorch's
kernels do, except by the ops that are exact in any dtype (hardtanh, relu6, threshold,
leaky_relu) and by softsign and tanhshrink, which PyTorch composes in the input's dtype;
float32 and float64 in their own dtype. One special value differs from PyTorch's CPU kernels:
hardswish(-inf) is 0 (PyTorch: NaN, from -inf * 0). ``gelu`` is a fused kernel (ops.yaml).
"""

from __future__ import annotations

import math

import ember_tensor as _et

from . import _check_scalar
from . import _tensor_arg as _tensor

__all__ = [
    "binary_cross_entropy",
    "celu",
    "elu",
    "glu",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "leaky_relu",
    "log_sigmoid",
    "mish",
    "relu6",
    "selu",
    "silu",
    "softplus",
    "softsign",
    "tanhshrink",
    "threshold",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT1_2 = 1 / math.sqrt(2)


def _number_arg(op: str, name: str, v):
    """A Number argument as PyTorch's parser reads it: a 0-d tensor that does not require grad
    is its value; any other tensor is a TypeError."""
    if isinstance(v, _et.Tensor):
        if v.dim() or v.requires_grad:
            raise TypeError(f"{op}(): argument '{name}' must be Number, not Tensor")
        return v.item()
    return v


def _integral_scalars(self, *values):
    """The scalar arguments as an integer ``self`` takes them: truncated towards zero, as
    PyTorch converts them to the tensor's dtype (with its error for a value out of its
    range)."""
    for v in values:
        _et._C._check_scalar(self.dtype, v)
    return tuple(int(v) for v in values)



_HALVES = frozenset({_et.float16, _et.bfloat16})


def _compute(self):
    """(the tensor the formula runs on, the dtype of the op's result): float16 and bfloat16
    in float32, others as they are."""
    return (self.float() if self.dtype in _HALVES else self), self.dtype


def _rounded(out, dtype):
    """The result in the input's dtype, for a float16 or bfloat16 input computed in float32
    (others keep the formula's dtype: integer inputs give the default float dtype)."""
    return out.to(dtype) if dtype in _HALVES else out


def _softplus0(z):
    """log(1 + exp(z)) without overflow, accurate for every z (``log1p(exp(z))`` for z < 0,
    ``z + log1p(exp(-z))`` elsewhere) and with the gradient sigmoid(z) everywhere: each
    branch reads z clamped to its own side, so the branch ``where`` drops never overflows nor
    sends a NaN into the gradient."""
    neg = _et.log1p(_et.exp(z.clamp(max=0)))
    pos = z + _et.log1p(_et.exp(-z.clamp(min=0)))
    return _et.where(z < 0, neg, pos)


# ----------------------------------------------------------------------------- piecewise linear


def hardtanh(self, min_val=-1, max_val=1):
    """``self`` clamped to ``[min_val, max_val]``; the gradient is PyTorch's: none at or
    beyond the bounds (derivatives.yaml). Integer inputs keep their dtype (the bounds
    truncated to integers, as PyTorch converts them)."""
    _tensor("hardtanh", self)
    for name, bound in (("min_val", min_val), ("max_val", max_val)):
        if bound is None:  # (clamp would read None as no bound)
            raise TypeError(f"hardtanh(): argument '{name}' must be Number, not NoneType")
    if not self.is_floating_point():
        min_val, max_val = int(min_val), int(max_val)
        if self.dtype == _et.uint8 and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        min_val, max_val = _integral_scalars(self, min_val, max_val)
    return self.clamp(min_val, max_val)


def relu6(self):
    """``min(max(self, 0), 6)``: ``hardtanh(self, 0, 6)``."""
    _tensor("relu6", self)
    return _et.hardtanh(self, 0.0, 6.0)


def leaky_relu(self, negative_slope=0.01):
    """``self`` where positive, ``negative_slope * self`` elsewhere."""
    _tensor("leaky_relu", self)
    _check_scalar(self.dtype, negative_slope)  # PyTorch's overflow check in the compute type
    return _et.where(self > 0, self, self * negative_slope)


def threshold(self, threshold, value):
    """``value`` where ``self <= threshold``, ``self`` elsewhere (NaN included). Integer
    inputs keep their dtype (``threshold`` and ``value`` truncated to integers)."""
    _tensor("threshold", self)
    # numbers: a 0-d tensor that does not require grad is read as one, as PyTorch's parser does
    threshold, value = (_number_arg("threshold", name, v)
                        for name, v in (("threshold", threshold), ("value", value)))
    if not self.is_floating_point():
        threshold, value = _integral_scalars(self, threshold, value)
    else:  # PyTorch's kernel: the threshold in the compute type, the value in the dtype
        _check_scalar(self.dtype, threshold)
        _et._C._check_scalar(self.dtype, value)
    return _et.where(self <= threshold, value, self)  # NaN stays NaN, as in PyTorch


def hardsigmoid(self):
    """``relu6(self + 3) / 6``; no gradient at or beyond -3 and 3."""
    _tensor("hardsigmoid", self)
    x, dt = _compute(self)
    return _rounded(_et.hardtanh(x + 3, 0.0, 6.0) / 6, dt)


def hardswish(self):
    """``self * relu6(self + 3) / 6`` (MobileNetV3): -0.0 at and below -3, as PyTorch's
    ``x * 0`` gives there (its -inf gives NaN; Ember keeps the limit, -0.0)."""
    _tensor("hardswish", self)
    x, dt = _compute(self)
    return _rounded(_et.where(x <= -3, -0.0, _et.where(x < 3, x * (x + 3) / 6, x)), dt)


# ----------------------------------------------------------------------------- exponential


def elu(self, alpha=1, scale=1, input_scale=1):
    """``scale * self`` where positive, ``scale * alpha * (exp(input_scale * self) - 1)``
    elsewhere."""
    _tensor("elu", self)
    for v in (alpha, scale, input_scale):  # PyTorch's overflow check in the compute type
        _check_scalar(self.dtype, v)
    x, dt = _compute(self)
    neg = x.clamp(max=0)
    if input_scale != 1:
        neg = neg * input_scale
    neg = alpha * _et.expm1(neg)
    pos = x
    if scale != 1:
        pos, neg = x * scale, neg * scale
    return _rounded(_et.where(x > 0, pos, neg), dt)


def selu(self):
    """``scale * elu(self, alpha)`` with the self-normalising constants (Klambauer et
    al. 2017)."""
    _tensor("selu", self)
    x, dt = _compute(self)
    out = _SELU_SCALE * _et.where(x > 0, x, _SELU_ALPHA * _et.expm1(x.clamp(max=0)))
    return _rounded(out, dt)


def celu(self, alpha=1.0):
    """``self`` where positive, ``alpha * (exp(self / alpha) - 1)`` elsewhere."""
    _tensor("celu", self)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    x, dt = _compute(self)
    return _rounded(_et.where(x > 0, x, alpha * _et.expm1(x.clamp(max=0) / alpha)), dt)


def softplus(self, beta=1, threshold=20):
    """``log(1 + exp(beta * self)) / beta``, and ``self`` itself where ``beta * self >
    threshold``."""
    _tensor("softplus", self)
    for v in (beta, threshold):  # converted to the compute type, as PyTorch's kernel
        _check_scalar(self.dtype, v)
    x, dt = _compute(self)
    z = x * beta
    smooth = _et.log1p(_et.exp(z.clamp(max=threshold))) / beta
    return _rounded(_et.where(z > threshold, x, smooth), dt)


def log_sigmoid(self):
    """``log(sigmoid(self))``, computed without overflow."""
    _tensor("log_sigmoid", self)
    x, dt = _compute(self)
    return _rounded(-_softplus0(-x), dt)


def mish(self):
    """``self * tanh(softplus(self))``."""
    _tensor("mish", self)
    x, dt = _compute(self)
    return _rounded(x * _et.tanh(_softplus0(x)), dt)


def silu(self):
    """``self * sigmoid(self)`` (also called swish)."""
    _tensor("silu", self)
    x, dt = _compute(self)
    return _rounded(x * _et.sigmoid(x), dt)


# ----------------------------------------------------------------------------- others


def softsign(self):
    """``self / (1 + |self|)``; integer inputs give the default float dtype."""
    _tensor("softsign", self)
    return self / (1 + self.abs())


def tanhshrink(self):
    """``self - tanh(self)``; integer inputs give the default float dtype."""
    _tensor("tanhshrink", self)
    return self - _et.tanh(self)


def glu(self, dim=-1):
    """Gated linear unit: ``a * sigmoid(b)`` for the two halves ``a, b`` of ``dim``."""
    _tensor("glu", self)
    if self.dim() == 0:
        raise RuntimeError("glu does not support 0-dimensional tensors")
    size = self.shape[dim]
    if size % 2:
        d = dim % self.dim()
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    x, dt = _compute(self)
    a, b = x.chunk(2, dim)
    return _rounded(a * _et.sigmoid(b), dt)


# ----------------------------------------------------------------------------- losses


def binary_cross_entropy(self, target, weight=None, reduction=1):
    """``-weight * (target * log(self) + (1 - target) * log(1 - self))`` for probabilities
    ``self`` and targets in [0, 1], each log clamped at -100; reduction 0 none, 1 mean,
    2 sum. The derivatives are PyTorch's (derivatives.yaml): ``(self - target) /
    max(self (1 - self), 1e-12)`` for ``self``, finite at 0 and 1."""
    op = "binary_cross_entropy"
    _tensor(op, self)
    _tensor(op, target, "target", 2)
    if reduction not in (0, 1, 2):
        raise RuntimeError(
            f"{op}: reduction must be 0 ('none'), 1 ('mean') or 2 ('sum'), but got {reduction}"
        )
    if target.dtype != self.dtype:  # PyTorch's kernel wants one dtype for both
        raise RuntimeError(f"Found dtype {target.dtype._scalar_type_name} but expected "
                           f"{self.dtype._scalar_type_name}")
    if bool(_et.logical_or(self < 0, self > 1).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if bool(_et.logical_or(target < 0, target > 1).any()):
        raise RuntimeError("all elements of target should be between 0 and 1")
    x, dt = _compute(self)
    t = target.float() if target.dtype in _HALVES else target
    loss = (t - 1) * _et.log1p(-x).clamp(min=-100) - t * _et.log(x).clamp(min=-100)
    if weight is not None:
        loss = loss * (weight.float() if weight.dtype in _HALVES else weight)
    if reduction == 1:
        loss = loss.mean()
    elif reduction == 2:
        loss = loss.sum()
    return _rounded(loss, dt)
