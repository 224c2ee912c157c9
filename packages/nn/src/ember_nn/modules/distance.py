"""Distance modules: ``PairwiseDistance`` and ``CosineSimilarity``.

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> [round(v, 6) for v in nn.CosineSimilarity(dim=1)(et.ones(2, 3), et.ones(2, 3)).tolist()]
[1.0, 1.0]
"""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class PairwiseDistance(Module):
    """``||x1 - x2 + eps||_p`` over the last dim (``functional.pairwise_distance``)."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcast), each
    norm clamped to ``eps``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
