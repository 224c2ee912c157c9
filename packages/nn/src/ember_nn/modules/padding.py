"""Padding layers over ``functional.pad``: ``ConstantPad1d/2d/3d``, ``ZeroPad1d/2d/3d``,
``ReflectionPad1d/2d/3d``, ``ReplicationPad1d/2d/3d`` and ``CircularPad1d/2d/3d``.

``padding`` is one int (every side) or ``2 * n`` ints ``(left, right, top, bottom, front,
back)``, last dim first, as in PyTorch; it is stored as a tuple. The n-d layers pad the last
``n`` dims of a batched or unbatched input.

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> nn.ReflectionPad2d((1, 1, 2, 0))
ReflectionPad2d((1, 1, 2, 0))
>>> tuple(nn.ZeroPad1d(2)(et.ones(1, 3, 4)).shape)
(1, 3, 8)
"""

from __future__ import annotations

from collections.abc import Iterable

from .. import functional as F
from .module import Module

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


def _sides(padding, n: int) -> tuple:
    """An int repeated for the ``2 n`` sides, or the given sequence as a tuple."""
    if isinstance(padding, Iterable):
        return tuple(padding)
    return (padding,) * (2 * n)


class _PadNd(Module):
    """Pads the last ``_dims`` dims by ``functional.pad`` in ``_mode``."""

    _dims = 1
    _mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _sides(padding, self._dims)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``: ``(N, C, L)`` or ``(C, L)``."""


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims with ``value``: ``(N, C, H, W)`` or ``(C, H, W)``."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dims with ``value``: ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""

    _dims = 3


class _ZeroPad:
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """Pads the last dim with zeros."""


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """Pads the last two dims with zeros."""


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """Pads the last three dims with zeros."""


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Pads the last dim with its reflection (the edge not repeated); each side must be
    smaller than the dim."""


class ReflectionPad2d(_ReflectionPadNd):
    """Pads the last two dims with their reflection."""

    _dims = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Pads the last three dims with their reflection."""

    _dims = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Pads the last dim by repeating its edge values."""


class ReplicationPad2d(_ReplicationPadNd):
    """Pads the last two dims by repeating their edge values."""

    _dims = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Pads the last three dims by repeating their edge values."""

    _dims = 3


class _CircularPadNd(_PadNd):
    """Periodic padding; an input of another rank than ``_dims + 1`` or ``_dims + 2`` is a
    ``ValueError``."""

    _mode = "circular"

    def forward(self, input):
        lo = self._dims + 1
        if input.dim() not in (lo, lo + 1):
            raise ValueError(f"expected {lo}D or {lo + 1}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pads the last dim periodically (wrap-around); input ``(N, C, L)`` or ``(C, L)``."""


class CircularPad2d(_CircularPadNd):
    """Pads the last two dims periodically; input ``(N, C, H, W)`` or ``(C, H, W)``."""

    _dims = 2


class CircularPad3d(_CircularPadNd):
    """Pads the last three dims periodically; input 4-D or 5-D."""

    _dims = 3
