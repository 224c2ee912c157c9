"""``ChannelShuffle``: interleaves the channels of ``groups`` groups (ShuffleNet).

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> nn.ChannelShuffle(2)(et.arange(4.).reshape(1, 4, 1)).flatten().tolist()
[0.0, 2.0, 1.0, 3.0]
"""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """``(N, g k, *) -> (N, k g, *)``: channel ``i k + j`` moves to ``j g + i``."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
