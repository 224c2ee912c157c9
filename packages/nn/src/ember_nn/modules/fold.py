"""``Fold`` and ``Unfold``: sliding blocks of an image as columns and back (the core's
``im2col``/``col2im``).

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> cols = nn.Unfold(kernel_size=2, stride=2)(et.ones(1, 3, 4, 4))
>>> tuple(cols.shape)
(1, 12, 4)
>>> tuple(nn.Fold(output_size=(4, 4), kernel_size=2, stride=2)(cols).shape)
(1, 3, 4, 4)
"""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sums ``(N, C * prod(kernel_size), L)`` (or unbatched ``(C * prod(kernel_size), L)``)
    columns into ``(N, C, *output_size)`` images, the adjoint of ``Unfold``."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class Unfold(Module):
    """The sliding ``kernel_size`` blocks of ``(N, C, H, W)`` (or ``(C, H, W)``) inputs as
    the columns of ``(N, C * prod(kernel_size), L)``."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )
