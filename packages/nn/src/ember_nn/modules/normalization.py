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

__all__ = ["GroupNorm", "LayerNorm"]


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
