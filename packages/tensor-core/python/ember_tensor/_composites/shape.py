"""Shape and small linear-algebra composites (``composite: python`` in ops.yaml): moves,
stacks and products written once with other ops, PyTorch's names, defaults and errors.
Autograd records the ops they call; they run on every device those ops run on."""

from __future__ import annotations

import ember_tensor as _et

__all__ = [
    "fliplr",
    "flipud",
    "hstack",
    "outer",
    "ravel",
    "trace",
    "vstack",
]


def _need_dims(op: str, t, n: int, what: str) -> None:
    if t.dim() < n:
        raise RuntimeError(f"{op}: Input must be >= {n}-d{what}")


def ravel(self):
    """self flattened to 1-d (a view when the layout allows, else a copy)."""
    return self.reshape(-1)


def fliplr(self):
    """self reversed along dim 1 (columns); at least 2-d."""
    _need_dims("fliplr", self, 2, ".")
    return _et.flip(self, [1])


def flipud(self):
    """self reversed along dim 0 (rows); at least 1-d."""
    _need_dims("flipud", self, 1, ".")
    return _et.flip(self, [0])


def hstack(tensors):
    """1-d tensors joined along dim 0, the others along dim 1."""
    ts = [t if t.dim() > 0 else t.reshape(1) for t in tensors]
    if not ts:
        raise RuntimeError("hstack expects a non-empty TensorList")
    return _et.cat(ts, 0 if ts[0].dim() == 1 else 1)


def vstack(tensors):
    """The tensors, each viewed as at least 2-d, joined along dim 0."""
    if not len(tensors):
        raise RuntimeError("vstack expects a non-empty TensorList")
    return _et.cat([t.reshape(1, -1) if t.dim() < 2 else t for t in tensors], 0)


def trace(self):
    """The sum of a matrix's main diagonal (integers sum to int64, as sum does)."""
    if self.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.dim()}")
    return _et.diagonal(self, 0, 0, 1).sum()


def outer(self, vec2):
    """The outer product of two 1-d tensors: (n, m) with element (i, j) self[i] * vec2[j]."""
    if self.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"outer: expected 1-D tensors, but got {self.dim()}-D and "
                           f"{vec2.dim()}-D tensors")
    return self.unsqueeze(1) * vec2.unsqueeze(0)
