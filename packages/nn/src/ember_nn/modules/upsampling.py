"""``Upsample``, ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d``: modules over
``functional.interpolate``.

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> up = nn.Upsample(scale_factor=2, mode="bilinear")
>>> up
Upsample(scale_factor=2.0, mode='bilinear')
>>> tuple(up(et.ones(1, 1, 3, 4)).shape)
(1, 1, 6, 8)
"""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]


class Upsample(Module):
    """Resamples ``(N, C, d1[, d2[, d3]])`` inputs to ``size`` or by ``scale_factor`` with
    ``functional.interpolate``'s modes (``'nearest'``, ``'nearest-exact'``, ``'linear'``,
    ``'bilinear'``, ``'bicubic'``, ``'trilinear'``; ``align_corners`` for the interpolating
    ones)."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners=None, recompute_scale_factor=None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(s) for s in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode,
                             self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample(size, scale_factor, mode='nearest')`` for ``(N, C, H, W)`` inputs."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(size, scale_factor, mode='bilinear', align_corners=True)`` for ``(N, C,
    H, W)`` inputs."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
