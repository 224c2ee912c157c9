"""Helpers shared by the distributions: broadcasting of parameters, probabilities and
logits, lazily computed attributes, the matrix/vector packing of triangular matrices."""

from __future__ import annotations

import math
from functools import update_wrapper
from numbers import Number

import ember_tensor as et

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni


def _size(shape=()) -> et.Size:
    """``shape`` as an ``ember_tensor.Size`` (slices and sums of Sizes are tuples)."""
    return shape if isinstance(shape, et.Size) else et.Size(tuple(int(s) for s in shape))


def _is_tensor(x) -> bool:
    return isinstance(x, et.Tensor)


def broadcast_all(*values):
    """Broadcasts tensors and numbers to one shape. Numbers become tensors of the dtype and
    device of the first tensor among ``values`` (the default dtype when there is none)."""
    if not all(_is_tensor(v) or isinstance(v, Number) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "ember_tensor.Tensor or objects implementing __ember_function__.")
    if not any(_is_tensor(v) for v in values):
        dtype = et.get_default_dtype()
        return tuple(et.tensor(float(v), dtype=dtype) for v in values)
    first = next(v for v in values if _is_tensor(v))
    opts = {"dtype": first.dtype, "device": first.device}
    values = [v if _is_tensor(v) else et.tensor(v, **opts) for v in values]
    return tuple(et.broadcast_tensors(*values))


def _standard_normal(shape, dtype, device):
    return et.randn(*_size(shape), dtype=dtype, device=device)


def _sum_rightmost(value, dim: int):
    """Sums out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary: bool = False):
    """Logits to probabilities: the sigmoid for binary logits, else a softmax over the last
    dimension."""
    if is_binary:
        return et.sigmoid(logits)
    return et.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamps probabilities to ``[eps, 1 - eps]`` of their dtype."""
    eps = et.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Probabilities to logits (log-odds for binary ones, log-probabilities otherwise)."""
    ps = clamp_probs(probs)
    if is_binary:
        return et.log(ps) - et.log1p(-ps)
    return et.log(ps)


class lazy_property:
    """A property computed once per instance on first access, then stored in the instance's
    ``__dict__``; computed without gradient tracking when accessed on the class."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property looks like on the class: a property too (for introspection)."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag: int = 0):
    """The lower triangle (below the ``diag``-th diagonal) of square matrices as vectors,
    row by row."""
    n = mat.shape[-1]
    if not (-n <= diag < n):
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = et.tril_indices(n, n, offset=diag)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag: int = 0):
    """The inverse of ``tril_matrix_to_vec``: vectors to lower-triangular square matrices."""
    size = vec.shape[-1]
    b = 1 + 2 * diag
    n = (-b + math.sqrt(b ** 2 + 8 * size + 4 * abs(diag) * (diag + 1))) / 2
    eps = et.finfo(vec.dtype).eps
    if not round(n) - n < eps:
        raise ValueError(f"The size of last dimension is {size} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    lead = tuple(vec.shape[:-1])
    flat = vec.reshape(-1, size)
    rows, cols = et.tril_indices(n, n, offset=diag)
    batch = et.arange(flat.shape[0], device=vec.device).reshape(-1, 1)
    mat = flat.new_zeros((flat.shape[0], n, n)).index_put((batch, rows, cols), flat)
    return mat.reshape(lead + (n, n))
