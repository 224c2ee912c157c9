"""(array API) Linear algebra functions of the main namespace (2024.12): matmul,
matrix_transpose, tensordot, vecdot. The ``linalg`` extension (``xp.linalg``) exports the
same function objects.

Dtypes: ``matmul``, ``tensordot`` and ``vecdot`` take numeric arrays (bool is a TypeError,
as in array-api-strict) and promote the two arguments with the standard's table
(``result_type``: int32 with float32 is a TypeError, uint8 with int8 gives int16). Integer
results wrap around on overflow, as NumPy's. ``matrix_transpose`` takes any dtype.
The standard says vecdot's arguments "should" be floating-point; integer arrays are
accepted here (as by NumPy and array-api-strict) and keep their dtype. For complex arrays
vecdot is sum(conj(x1) * x2), as specified. uint16/uint32/uint64 are multiplied in int64
where the core lacks their kernels (exact: integer products wrap modulo 2**64).

Shapes: every shape mismatch is a ValueError (NumPy's type; the standard names none):
a 0-d argument to ``matmul``, contracted axes of different sizes, batch axes that do not
broadcast, ``matrix_transpose`` of fewer than two dimensions. Contracted axes never
broadcast (size 1 against size 3 is an error), as specified. Axes out of range raise
``AxisError`` (an IndexError and a ValueError).

``vecdot``'s axis: the standard specifies negative axes in [-N, -1] (N the smaller rank),
counted from the end of each array. A non-negative axis is taken as NumPy takes it: that
axis of each array, counted from its front (the same vectors as ``axis - ndim`` when the
ranks are equal).
"""

from __future__ import annotations

import ember_tensor as _et

from ._dtypes import _COMPLEX, call_core, result_type
from ._functions import (
    AxisError,
    _array,
    _axis,
    _broadcast_shapes,
    _int,
    _prod,
)

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]

_Tensor = _et.Tensor


def _shape(x) -> tuple[int, ...]:
    return tuple(x.shape)


def _operands(x1, x2, fn: str):
    """The two arrays (numeric, TypeError otherwise) cast to their result_type."""
    _array(x1, fn, "x1", "numeric")
    _array(x2, fn, "x2", "numeric")
    try:
        dtype = result_type(x1, x2)
    except TypeError as e:
        raise TypeError(f"{fn}(): {e}") from None
    return x1.to(dtype), x2.to(dtype)


def matmul(x1, x2, /):
    """Matrix product of x1 and x2 (numeric; promoted to their result_type).

    Stacks of matrices (..., M, K) @ (..., K, N) -> (..., M, N) with the batch axes
    broadcast. A 1-d x1 of shape (K,) is a row vector and a 1-d x2 a column vector; the
    added axis is removed from the result (1-d @ 1-d is the 0-d dot product). ValueError
    for a 0-d argument, inner sizes that differ or batch shapes that do not broadcast."""
    a, b = _operands(x1, x2, "matmul")
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul(): both arguments must have at least one dimension, got shapes "
            f"{_shape(a)} and {_shape(b)}"
        )
    k1 = a.shape[-1]
    k2 = b.shape[-2] if b.ndim >= 2 else b.shape[0]
    if k1 != k2:
        where = "second-to-last" if b.ndim >= 2 else "only"
        raise ValueError(
            f"matmul(): the last axis of x1 (size {k1}) must match the {where} axis of x2 "
            f"(size {k2}); shapes {_shape(a)} and {_shape(b)}"
        )
    if a.ndim > 2 or b.ndim > 2:
        _broadcast_shapes([_shape(a)[:-2], _shape(b)[:-2]], "matmul")
    return call_core("matmul", _et.matmul, a, b, uint64="wrap")


def matrix_transpose(x, /):
    """x with its last two axes swapped: (..., M, N) -> (..., N, M) (a view). ValueError
    for fewer than two dimensions."""
    _array(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(
            f"matrix_transpose(): x must have at least two dimensions, got shape {_shape(x)}"
        )
    return x.mT


def _axis_list(seq, ndim: int, fn: str, name: str) -> list[int]:
    if isinstance(seq, (str, bytes, _Tensor)) or not hasattr(seq, "__iter__"):
        raise TypeError(
            f"{fn}(): {name} must be a sequence of ints, got {type(seq).__name__}"
        )
    out = [_axis(_int(a, fn, name), ndim, fn) for a in seq]
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}(): {name} has a repeated axis: {list(seq)!r}")
    return out


def tensordot(x1, x2, /, *, axes=2):
    """Tensor contraction of x1 and x2 (numeric; promoted to their result_type).

    axes: an int N >= 0 contracts the last N axes of x1 with the first N of x2 (0: the
    outer product, 1: the dot product, 2: the double contraction); or a pair of sequences
    (x1_axes, x2_axes) of one length, contracting x1_axes[i] with x2_axes[i] (distinct
    axes; negative ones count from the end). The result's shape is x1's remaining axes,
    then x2's. Contracted axes must have equal sizes (ValueError: no broadcasting)."""
    a, b = _operands(x1, x2, "tensordot")
    if isinstance(axes, (tuple, list)):
        if len(axes) != 2:
            raise ValueError(
                f"tensordot(): axes must be an int or a pair of sequences, got {axes!r}"
            )
        ax1 = _axis_list(axes[0], a.ndim, "tensordot", "axes[0]")
        ax2 = _axis_list(axes[1], b.ndim, "tensordot", "axes[1]")
        if len(ax1) != len(ax2):
            raise ValueError(
                f"tensordot(): axes[0] and axes[1] must have the same length, got {axes!r}"
            )
    else:
        n = _int(axes, "tensordot", "axes")
        if n < 0:
            raise ValueError(f"tensordot(): axes must be non-negative, got {n}")
        if n > a.ndim or n > b.ndim:
            raise ValueError(
                f"tensordot(): cannot contract {n} axes of arrays of shapes {_shape(a)} "
                f"and {_shape(b)}"
            )
        ax1 = list(range(a.ndim - n, a.ndim))
        ax2 = list(range(n))
    for i, j in zip(ax1, ax2):
        if a.shape[i] != b.shape[j]:
            raise ValueError(
                f"tensordot(): contracted axis {i} of x1 (size {a.shape[i]}) does not match "
                f"axis {j} of x2 (size {b.shape[j]}); shapes {_shape(a)} and {_shape(b)}"
            )
    free1 = [i for i in range(a.ndim) if i not in ax1]
    free2 = [j for j in range(b.ndim) if j not in ax2]
    shape1 = [a.shape[i] for i in free1]
    shape2 = [b.shape[j] for j in free2]
    k = _prod(a.shape[i] for i in ax1)
    m = a.permute(free1 + ax1).reshape([_prod(shape1), k])
    n_ = b.permute(ax2 + free2).reshape([k, _prod(shape2)])
    return call_core("tensordot", _et.matmul, m, n_, uint64="wrap").reshape(shape1 + shape2)


def _vector_axis(x, axis: int, fn: str, name: str) -> int:
    """axis of x as in [0, ndim): negative counts from the end of x, non-negative from its
    front (NumPy's reading); AxisError out of range."""
    if x.ndim == 0:
        raise ValueError(f"{fn}(): {name} must have at least one dimension (got a 0-d array)")
    try:
        return _axis(axis, x.ndim, fn)
    except AxisError:
        raise AxisError(
            f"{fn}(): axis {axis} is out of bounds for {name} of dimension {x.ndim}"
        ) from None


def vecdot(x1, x2, /, *, axis=-1):
    """Dot products of the vectors of x1 and x2 along axis: sum(x1 * x2) over that axis,
    the other axes broadcast. Numeric arrays, promoted to their result_type.

    axis: a negative int in [-N, -1], N the smaller rank (the standard); a non-negative one
    is read as NumPy does (that axis of each array). Both arrays must have the same size
    along it (ValueError; it does not broadcast). The result has the broadcast shape
    without that axis (0-d for two 1-d arrays)."""
    a, b = _operands(x1, x2, "vecdot")
    axis = _int(axis, "vecdot", "axis")
    ia = _vector_axis(a, axis, "vecdot", "x1")
    ib = _vector_axis(b, axis, "vecdot", "x2")
    if a.shape[ia] != b.shape[ib]:
        raise ValueError(
            f"vecdot(): x1 and x2 must have the same size along axis {axis}, got "
            f"{a.shape[ia]} and {b.shape[ib]} (shapes {_shape(a)} and {_shape(b)})"
        )
    a = a.movedim(ia, -1)
    b = b.movedim(ib, -1)
    _broadcast_shapes([_shape(a)[:-1], _shape(b)[:-1]], "vecdot")
    # not ember_tensor.linalg.vecdot, PyTorch's, which takes floating-point tensors of one
    # dtype and broadcasts the vector axis; (..., 1, n) @ (..., n, 1) keeps the dtype of
    # integers too (a sum would widen them)
    if a.dtype in _COMPLEX:  # the standard's vecdot conjugates x1
        a = _et.conj_physical(a)
    out = call_core("vecdot", _et.matmul, a.unsqueeze(-2), b.unsqueeze(-1), uint64="wrap")
    return out.squeeze(-1).squeeze(-1)
