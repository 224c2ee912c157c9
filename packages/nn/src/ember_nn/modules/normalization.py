"""``LayerNorm`` and ``GroupNorm``: PyTorch's parameters (``weight`` ones, ``bias`` zeros),
options and reprs, on ``F.layer_norm`` and ``F.group_norm``.

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> nn.LayerNorm((3, 4))
LayerNorm((3, 4), eps=1e-05, elementwise_affine=True, bias=True)
>>> tuple(nn.GroupNorm(2, 6)(et.ones(2, 6, 5)).shape)
(2, 6, 5)
"""

from __future__ import annotations

import ember_tensor as et

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["CrossMapLRN2d", "GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"]


class LayerNorm(Module):
    """Normalizes over the last ``len(normalized_shape)`` dimensions of the input (mean and
    biased variance), then ``* weight + bias`` elementwise (``elementwise_affine``; ``bias``
    False keeps the weight only)."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(et.empty(self.normalized_shape, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(et.empty(self.normalized_shape, dtype=dtype,
                                               device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class GroupNorm(Module):
    """Splits the ``num_channels`` channels of an ``(N, C, *)`` input into ``num_groups``
    groups and normalizes each over its channels and positions, then ``* weight + bias`` per
    channel (``affine``; keyword ``bias=False`` keeps the weight only)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(et.empty((num_channels,), dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(et.empty((num_channels,), dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class RMSNorm(Module):
    """Divides by the root mean square over the last ``len(normalized_shape)`` dims (plus
    ``eps``; None: the dtype's machine epsilon), then ``* weight`` (``elementwise_affine``)."""

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(et.empty(self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class _LRNBase(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LocalResponseNorm(_LRNBase):
    """Divides each element by ``(k + alpha / size * sum of squares over size neighbouring
    channels) ** beta`` (``functional.local_response_norm``); input ``(N, C, *)``."""

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)


class CrossMapLRN2d(_LRNBase):
    """The legacy (Lua Torch) cross-channel LRN of 4-D input, as PyTorch computes it: channel
    ``c`` is scaled by ``(k + alpha / size * s_c) ** -beta`` where ``s_c`` sums the squares
    of channels ``max(1, c - p + 1) .. c + p - 1`` (``p = (size - 1) // 2 + 1``) and, for
    every ``c``, channel 0 (the legacy window never drops it). Differentiated by autograd."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        c = input.shape[1]
        p = int((self.size - 1) / 2 + 1)
        sq = input * input
        # cum[:, j] = sum of squares of channels < j
        cum = et.cat([et.zeros_like(sq[:, :1]), sq.cumsum(1)], 1)
        ch = et.arange(c, device=input.device)
        lo = et.clamp(ch - p + 1, min=1)
        hi = et.clamp(ch + p, max=c)  # exclusive
        window = cum.index_select(1, hi) - cum.index_select(1, lo)
        scale = (window + sq[:, :1]) * (self.alpha / self.size) + self.k
        return input * scale.pow(-self.beta)
