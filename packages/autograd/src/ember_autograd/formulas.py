"""Helpers the formulas of derivatives.yaml may call, written with ember_tensor ops only
(so that derivatives of derivatives come from the same table)."""

from __future__ import annotations

import ember_tensor as et

from .formulas_shape import *  # noqa: F403
from .formulas_shape import __all__ as _shape_all
from .saved import sum_to

__all__ = [*_shape_all, "et", "getitem_backward", "ones_like", "sum_to", "unsqueeze_dims", "zeros_like"]


def zeros_like(t):
    return et.zeros_like(t)


def ones_like(t):
    return et.ones_like(t)


def unsqueeze_dims(grad, dim, ndim: int):
    """``grad`` of a reduction over ``dim`` without keepdim, with the reduced dims put back
    as size 1 (so it broadcasts against the input of ``ndim`` dims)."""
    dims = [dim] if isinstance(dim, int) else list(dim)
    if ndim == 0:
        return grad
    for d in sorted(d % ndim for d in dims):
        grad = grad.unsqueeze(d)
    return grad


def getitem_backward(grad, shape, dtype, key):
    """A zero tensor of the input's shape with ``grad`` added at ``key`` (repeats add up)."""
    g = et.zeros(shape, dtype=dtype)
    g._index_add_key_(key, grad)
    return g
