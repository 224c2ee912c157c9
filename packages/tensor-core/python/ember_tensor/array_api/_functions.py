"""(array API) Statistical, searching, sorting, set, manipulation, indexing and utility
functions of the 2024.12 standard, written with the core's (PyTorch-shaped) ops.

Signatures are the standard's: positional-only and keyword-only parameters as specified,
``axis`` an int, a tuple of ints or None where the standard allows it, ``keepdims``.

Dtype rules (where the standard leaves room, the choice made here):

* Each function accepts the dtype category the standard names for its input ("numeric",
  "real-valued", "floating-point", ...), like the reference implementation array-api-strict;
  other dtypes raise TypeError. So ``sum``/``prod``/``cumulative_*``/``diff`` reject bool,
  ``max``/``min``/``argmax``/``argmin``/``sort``/``argsort``/``searchsorted`` reject bool
  and complex (complex numbers have no order), ``mean`` needs a floating-point dtype (real
  or complex) and ``std``/``var`` a real floating-point one (cast with ``astype`` first).
  float16 and bfloat16 count as real floating-point dtypes.
* ``sum``, ``prod``, ``cumulative_sum`` and ``cumulative_prod`` of int8/int16/int32 give the
  default integer dtype int64, and of uint8/uint16/uint32 the unsigned integer of the same
  width, uint64, as specified. Pass ``dtype=`` for another choice.
* uint16, uint32 and uint64: where the core has no kernel for them yet, the namespace
  computes through int64 where that is exact (``_dtypes.call_core``: any op for uint16 and
  uint32; sums, products and order-based ops for uint64) and raises TypeError otherwise.
* Functions that join arrays (``concat``, ``stack``, ``where``, ``diff``'s prepend/append)
  promote with the standard's table (``result_type``): no promotion between kinds.
* Index results (``argmax``, ``nonzero``, ``searchsorted``, ``count_nonzero``, ``unique_*``)
  are int64, the default index dtype.

Errors: TypeError for arguments of the wrong type or dtype; ValueError for wrong values and
shapes that do not fit together; an axis out of range raises ``AxisError``, a subclass of
both IndexError (what the standard names for ``expand_dims``) and ValueError (as NumPy's).

Behaviour the standard leaves unspecified, as chosen here: ``max``/``min``/``argmax``/
``argmin`` over zero elements raise ValueError (as NumPy); sorting puts NaN last (first when
``descending``), ``searchsorted`` and ``unique_*`` order NaN the same way; ``take`` and
``take_along_axis`` check bounds (IndexError) and accept negative indices;
``cumulative_sum``/``cumulative_prod`` treat a 0-d array as 1-d (as NumPy).
"""

from __future__ import annotations

import builtins as _builtins
import operator as _operator
from typing import NamedTuple

import ember_tensor as _et

from ._dtypes import (
    _UNSIGNED,
    _check_array,
    _check_dtype,
    call_core,
    default_int_dtype,
    dtype_name,
    iinfo,
    isdtype,
    promote_scalar,
    result_type,
)

__all__ = [
    # statistical
    "cumulative_prod",
    "cumulative_sum",
    "max",
    "mean",
    "min",
    "prod",
    "std",
    "sum",
    "var",
    # searching
    "argmax",
    "argmin",
    "count_nonzero",
    "nonzero",
    "searchsorted",
    "where",
    # sorting
    "argsort",
    "sort",
    # set
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    # manipulation
    "broadcast_arrays",
    "broadcast_to",
    "concat",
    "expand_dims",
    "flip",
    "moveaxis",
    "permute_dims",
    "repeat",
    "reshape",
    "roll",
    "squeeze",
    "stack",
    "tile",
    "unstack",
    # indexing
    "take",
    "take_along_axis",
    # utility
    "all",
    "any",
    "diff",
]

_Tensor = _et.Tensor
_int64 = _et.int64
_bool = _et.bool


class AxisError(IndexError, ValueError):
    """An axis out of range for the array's dimensions (catch it as IndexError or
    ValueError)."""


# ---------------------------------------------------------------------------------------
# argument checking

# the standard's dtype categories, as isdtype kinds
_CATEGORIES = {
    "numeric": "numeric",
    "real-valued": ("integral", "real floating"),
    "floating-point": ("real floating", "complex floating"),
    "real floating-point": "real floating",
    "complex floating-point": "complex floating",
    "integer": "integral",
    "boolean": "bool",
}


def _array(x, fn: str, name: str = "x", category: str | None = None):
    """x, after checking that it is an array (TypeError) of the dtype category."""
    _check_array(x, f"{fn}(): {name}")
    if category is not None and not isdtype(x.dtype, _CATEGORIES[category]):
        article = "an" if category[0] in "aeiou" else "a"
        raise TypeError(
            f"{fn}(): {name} must have {article} {category} data type, got "
            f"{dtype_name(x.dtype)}"
        )
    return x


def _int(value, fn: str, name: str) -> int:
    """value as a Python int (TypeError for bools, floats and other non-integers)."""
    if isinstance(value, (_builtins.bool, _Tensor)) or not hasattr(value, "__index__"):
        raise TypeError(f"{fn}(): {name} must be an int, got {type(value).__name__}")
    return _operator.index(value)


def _axis(axis, ndim: int, fn: str) -> int:
    """One axis in [-ndim, ndim), normalized to [0, ndim)."""
    a = _int(axis, fn, "axis")
    if not -ndim <= a < ndim:
        raise AxisError(f"{fn}(): axis {a} is out of bounds for an array of dimension {ndim}")
    return a % ndim


def _axes(axis, ndim: int, fn: str) -> tuple[int, ...]:
    """None (all axes), an int or a tuple of ints, as sorted distinct axes in [0, ndim)."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    out = [_axis(a, ndim, fn) for a in items]
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}(): duplicate value in axis={axis!r}")
    return tuple(sorted(out))


def _ints(values, fn: str, name: str) -> tuple[int, ...]:
    """A tuple (or list) of ints as a tuple of Python ints."""
    if not isinstance(values, (tuple, list)):
        raise TypeError(
            f"{fn}(): {name} must be a tuple of ints, got {type(values).__name__}"
        )
    return tuple(_int(v, fn, name) for v in values)


def _arrays(arrays, fn: str) -> list:
    """A non-empty tuple or list of arrays."""
    if isinstance(arrays, _Tensor) or not isinstance(arrays, (tuple, list)):
        raise TypeError(
            f"{fn}(): arrays must be a tuple or list of arrays, got {type(arrays).__name__}"
        )
    if len(arrays) == 0:
        raise ValueError(f"{fn}(): need at least one array")
    for i, a in enumerate(arrays):
        _check_array(a, f"{fn}(): arrays[{i}]")
    return list(arrays)


def _scalar_array(value, like, fn: str):
    """A Python scalar as a 0-d array of like's dtype (the standard's rules for mixing
    arrays with Python scalars: TypeError when the kinds do not fit, OverflowError for an
    int out of the range of an integer dtype)."""
    try:
        dtype = promote_scalar(like.dtype, value)
    except TypeError as e:
        raise TypeError(f"{fn}(): {e}") from None
    if isdtype(dtype, "integral"):
        info = iinfo(dtype)
        value = int(value)
        if not info.min <= value <= info.max:
            raise OverflowError(
                f"{fn}(): Python int {value} is out of bounds for {dtype_name(dtype)}"
            )
        if value > 2**63 - 1:  # uint64: the core reads ints as int64; the cast wraps back
            value -= 2**64
    return _et.tensor(value, dtype=dtype, device=like.device)


def _is_scalar(value) -> bool:
    return isinstance(value, (_builtins.bool, int, float, complex)) and not isinstance(
        value, _Tensor
    )


def _prod(values) -> int:
    n = 1
    for v in values:
        n *= v
    return n


# ---------------------------------------------------------------------------------------
# reductions


def _reduction(x, axis, keepdims, fn: str):
    """(x, axes, keepdims, out_shape, n): the array to reduce, the (non-empty) axes to
    reduce over, keepdims for the core op, the result's shape and the number of elements
    reduced into each result element. An empty tuple of axes (or a 0-d x with axis=None)
    reduces over a new axis of size 1, so every reduction keeps its dtype rules then."""
    axes = _axes(axis, x.ndim, fn)
    if keepdims:
        out_shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    else:
        out_shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
    n = _prod(x.shape[i] for i in axes)
    if not axes:
        x = x.unsqueeze(-1)
        axes, keepdims = (x.ndim - 1,), False
    return x, axes, _builtins.bool(keepdims), out_shape, n


def _sum_dtype(in_dtype, dtype, fn: str):
    """The standard's result dtype of sum/prod/cumulative_*: dtype if given; else signed
    integers widen to the default integer dtype (int64), unsigned ones to the unsigned
    integer of its width (uint64)."""
    if dtype is not None:
        _check_dtype(dtype)
        return dtype
    if isdtype(in_dtype, "unsigned integer"):
        return _et.uint64
    if isdtype(in_dtype, "integral"):
        return default_int_dtype()
    return in_dtype


def _accumulate(fn: str, core, x, *args, dtype, **kwargs):
    """core(x, *args, dtype=dtype, **kwargs) for sums and products; where the core has no
    kernel for an integer dtype, computed in int64 and cast to dtype (exact: integer sums
    and products wrap modulo 2**64, and the cast reduces modulo the width of dtype)."""
    try:
        return core(x, *args, dtype=dtype, **kwargs)
    except RuntimeError as e:
        if "is not supported" not in str(e) or not (
            isdtype(x.dtype, "integral") and isdtype(dtype, "integral")
        ):
            raise
    return core(x.to(_int64), *args, dtype=_int64, **kwargs).to(dtype)


def _check_keepdims(keepdims, fn: str) -> None:
    if not isinstance(keepdims, (_builtins.bool, int)):
        raise TypeError(f"{fn}(): keepdims must be a bool, got {type(keepdims).__name__}")


def sum(x, /, *, axis=None, dtype=None, keepdims=False):
    """Sum of the elements over axis (all axes if None; an empty tuple sums nothing).

    dtype: the result dtype (x is cast to it first); by default x's dtype, except that
    signed integers give int64 and unsigned ones uint64. An empty sum is 0."""
    _array(x, "sum", category="numeric")
    _check_keepdims(keepdims, "sum")
    dtype = _sum_dtype(x.dtype, dtype, "sum")
    x, axes, keep, _, _ = _reduction(x, axis, keepdims, "sum")
    return _accumulate("sum", _et.sum, x, dim=list(axes), keepdim=keep, dtype=dtype)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """Product of the elements over axis (all axes if None). dtype as for ``sum``; an empty
    product is 1."""
    _array(x, "prod", category="numeric")
    _check_keepdims(keepdims, "prod")
    dtype = _sum_dtype(x.dtype, dtype, "prod")
    x, axes, _, out_shape, n = _reduction(x, axis, keepdims, "prod")
    # the core's prod reduces one dim: move the reduced axes last and merge them
    kept = [i for i in range(x.ndim) if i not in axes]
    y = x.permute(kept + list(axes)).reshape([x.shape[i] for i in kept] + [n])
    return _accumulate("prod", _et.prod, y, dim=-1, dtype=dtype).reshape(list(out_shape))


def mean(x, /, *, axis=None, keepdims=False):
    """Arithmetic mean over axis; x must have a floating-point dtype (real or complex). NaN
    over zero elements."""
    _array(x, "mean", category="floating-point")
    _check_keepdims(keepdims, "mean")
    x, axes, keep, _, _ = _reduction(x, axis, keepdims, "mean")
    return _et.mean(x, dim=list(axes), keepdim=keep)


def _extremum(x, axis, keepdims, fn: str, op):
    _array(x, fn, category="real-valued")
    _check_keepdims(keepdims, fn)
    x, axes, keep, _, n = _reduction(x, axis, keepdims, fn)
    if n == 0:
        raise ValueError(
            f"{fn}(): zero-size reduction: the {fn}imum of no elements is undefined"
        )
    return call_core(fn, op, x, dim=list(axes), keepdim=keep, uint64="order")


def max(x, /, *, axis=None, keepdims=False):
    """Largest element over axis (NaN if any element is NaN). ValueError over zero
    elements. x must have a real-valued dtype."""
    return _extremum(x, axis, keepdims, "max", _et.amax)


def min(x, /, *, axis=None, keepdims=False):
    """Smallest element over axis (NaN if any element is NaN). ValueError over zero
    elements. x must have a real-valued dtype."""
    return _extremum(x, axis, keepdims, "min", _et.amin)


def _moment(x, axis, correction, keepdims, fn: str, op):
    _array(x, fn, category="real floating-point")
    _check_keepdims(keepdims, fn)
    if isinstance(correction, (_builtins.bool, _Tensor)) or not isinstance(
        correction, (int, float)
    ):
        raise TypeError(
            f"{fn}(): correction must be a Python int or float, got {type(correction).__name__}"
        )
    x, axes, keep, out_shape, n = _reduction(x, axis, keepdims, fn)
    if n - correction <= 0:  # the standard: NaN when N - correction <= 0
        return _et.full(list(out_shape), float("nan"), dtype=x.dtype, device=x.device)
    return op(x, dim=list(axes), keepdim=keep, correction=correction)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Variance over axis: sum((x - mean)**2) / (N - correction); NaN when
    N - correction <= 0. x must have a real floating-point dtype."""
    return _moment(x, axis, correction, keepdims, "var", _et.var)


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Standard deviation over axis: sqrt(var(x, axis=axis, correction=correction))."""
    return _moment(x, axis, correction, keepdims, "std", _et.std)


def _cumulative(x, axis, dtype, include_initial, fn: str, op, initial: int):
    _array(x, fn, category="numeric")
    dtype = _sum_dtype(x.dtype, dtype, fn)
    if x.ndim == 0:  # as NumPy: a 0-d array is taken as 1-d
        x = x.reshape([1])
    if axis is None:
        if x.ndim > 1:
            raise ValueError(
                f"{fn}(): axis must be given for an array of more than one dimension "
                f"(got {x.ndim} dimensions)"
            )
        axis = 0
    ax = _axis(axis, x.ndim, fn)
    out = _accumulate(fn, op, x, ax, dtype=dtype)
    if include_initial:
        shape = list(out.shape)
        shape[ax] = 1
        first = _et.full(shape, initial, dtype=dtype, device=x.device)
        out = _et.cat([first, out], dim=ax)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sum along axis (optional for 1-d x, required otherwise). dtype as for
    ``sum``. include_initial: start with the empty sum 0 (size along axis + 1)."""
    return _cumulative(x, axis, dtype, include_initial, "cumulative_sum", _et.cumsum, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative product along axis (optional for 1-d x, required otherwise). dtype as
    for ``prod``. include_initial: start with the empty product 1."""
    return _cumulative(x, axis, dtype, include_initial, "cumulative_prod", _et.cumprod, 1)


# ---------------------------------------------------------------------------------------
# searching


def _arg_extremum(x, axis, keepdims, fn: str, op):
    _array(x, fn, category="real-valued")
    _check_keepdims(keepdims, fn)
    if axis is None:
        if x.numel() == 0:
            raise ValueError(f"{fn}(): attempt to get {fn} of an empty array")
        out = call_core(fn, op, x.reshape([-1]), dim=0, same=False, uint64="order")
        return out.reshape([1] * x.ndim) if keepdims else out
    ax = _axis(axis, x.ndim, fn)
    if x.shape[ax] == 0:
        raise ValueError(f"{fn}(): attempt to get {fn} of an empty sequence (axis {ax})")
    return call_core(fn, op, x, dim=ax, keepdim=_builtins.bool(keepdims), same=False,
                     uint64="order")


def argmax(x, /, *, axis=None, keepdims=False):
    """Index of the first largest value along axis (of the flattened array if None); the
    first NaN counts as the largest. int64. ValueError over zero elements."""
    return _arg_extremum(x, axis, keepdims, "argmax", _et.argmax)


def argmin(x, /, *, axis=None, keepdims=False):
    """Index of the first smallest value along axis (of the flattened array if None); the
    first NaN counts as the smallest. int64. ValueError over zero elements."""
    return _arg_extremum(x, axis, keepdims, "argmin", _et.argmin)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """Number of nonzero elements over axis (NaN is nonzero), as int64."""
    _array(x, "count_nonzero")
    _check_keepdims(keepdims, "count_nonzero")
    x, axes, keep, _, _ = _reduction(x, axis, keepdims, "count_nonzero")
    return _et.sum(x.to(_bool), dim=list(axes), keepdim=keep, dtype=_int64)


def nonzero(x, /):
    """A tuple of ndim int64 arrays: the indices of the nonzero elements of x, in row-major
    order. ValueError for a 0-d array (as the standard requires)."""
    _array(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero(): x must have at least one dimension (got a 0-d array)")
    idx = _et.nonzero(_truth(x))
    return tuple(c.contiguous() for c in idx.unbind(1))


def _truth(x):
    """x, or x != 0 as bool where the core's truth-testing ops (nonzero, any, all) lack a
    kernel for x's dtype (complex, uint16/32/64)."""
    if isdtype(x.dtype, "complex floating") or x.dtype in _UNSIGNED[1:]:
        return x.to(_bool)
    return x


def _less(a, b):
    """a < b elementwise, with NaN larger than every number (the order ``sort`` uses)."""
    lt = call_core("searchsorted", _et.lt, a, b, same=False, uint64="order")
    if isdtype(a.dtype, "real floating"):
        lt = lt | (_et.isnan(b) & ~_et.isnan(a))
    return lt


def _compare_dtype(a, b):
    """A dtype in which values of dtypes a and b compare exactly enough: their promoted
    dtype, or float64 for integers against floating-point values."""
    try:
        return result_type(a, b)
    except TypeError:
        return _et.float64


def _take1d(x, indices, fn: str, name: str = "indices"):
    """x[indices] for 1-d x; indices an integer array (negative values count from the end;
    IndexError out of bounds)."""
    return _et.index_select(x, 0, _wrap_indices(indices, x.shape[0], fn, name, 0))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Indices where the elements of x2 would be inserted into the sorted 1-d x1 to keep
    it sorted: the first such index (side='left') or the last (side='right'). sorter: an
    integer array of indices that sort x1 (e.g. from argsort). int64, x2's shape.
    NaN sorts after every number, as in ``sort``."""
    _array(x1, "searchsorted", "x1", "real-valued")
    _array(x2, "searchsorted", "x2", "real-valued")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted(): x1 must be one-dimensional, got {x1.ndim} dimensions")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted(): side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        _array(sorter, "searchsorted", "sorter", "integer")
        if tuple(sorter.shape) != tuple(x1.shape):
            raise ValueError(
                f"searchsorted(): sorter must have x1's shape {tuple(x1.shape)}, got "
                f"{tuple(sorter.shape)}"
            )
        x1 = _take1d(x1, sorter, "searchsorted", "sorter")
    dtype = _compare_dtype(x1.dtype, x2.dtype)
    a = x1.to(dtype)
    v = x2.to(dtype).reshape([-1])
    n = a.shape[0]
    m = v.shape[0]
    lo = _et.zeros(m, dtype=_int64, device=x2.device)
    hi = _et.full([m], n, dtype=_int64, device=x2.device)
    # vectorized binary search: [lo, hi) holds the answer; n.bit_length() halvings end it
    for _ in range(n.bit_length() if m else 0):
        active = _et.lt(lo, hi)
        mid = _et.floor_divide(lo + hi, 2)
        val = _et.index_select(a, 0, _et.clamp(mid, max=n - 1))
        right = _less(val, v) if side == "left" else ~_less(v, val)
        lo = _et.where(active & right, mid + 1, lo)
        hi = _et.where(active & ~right, mid, hi)
    return lo.reshape(list(x2.shape))


def where(condition, x1, x2, /):
    """Elements of x1 where condition is true and of x2 elsewhere, broadcast together.
    condition must be a bool array; x1 and x2 arrays or Python scalars (2024.12, not both
    scalars). The dtype is result_type(x1, x2)."""
    _array(condition, "where", "condition", "boolean")
    s1, s2 = _is_scalar(x1), _is_scalar(x2)
    if s1 and s2:
        raise TypeError("where(): at least one of x1 and x2 must be an array")
    if not s1:
        _array(x1, "where", "x1")
    if not s2:
        _array(x2, "where", "x2")
    if s1:
        x1 = _scalar_array(x1, x2, "where")
    if s2:
        x2 = _scalar_array(x2, x1, "where")
    dtype = result_type(x1, x2)
    _broadcast_shapes([tuple(a.shape) for a in (condition, x1, x2)], "where")
    return _et.where(condition, x1.to(dtype), x2.to(dtype))


# ---------------------------------------------------------------------------------------
# sorting


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """Indices that sort x along axis (int64). stable (default): equal elements keep their
    order, also when descending. NaN sorts last (first when descending)."""
    _array(x, "argsort", category="real-valued")
    ax = _axis(axis, x.ndim, "argsort")
    return call_core(
        "argsort", _et.argsort, x, dim=ax, descending=_builtins.bool(descending),
        stable=_builtins.bool(stable), same=False, uint64="order",
    )


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """x sorted along axis. stable (default): equal elements keep their order, also when
    descending. NaN sorts last (first when descending)."""
    _array(x, "sort", category="real-valued")
    ax = _axis(axis, x.ndim, "sort")
    return call_core(
        "sort", _et.sort, x, dim=ax, descending=_builtins.bool(descending),
        stable=_builtins.bool(stable), uint64="order",
    )[0]


# ---------------------------------------------------------------------------------------
# set functions


class UniqueAllResult(NamedTuple):
    values: _Tensor
    indices: _Tensor
    inverse_indices: _Tensor
    counts: _Tensor


class UniqueCountsResult(NamedTuple):
    values: _Tensor
    counts: _Tensor


class UniqueInverseResult(NamedTuple):
    values: _Tensor
    inverse_indices: _Tensor


def _unique(x, fn: str, *, inverse=False, indices=False, counts=False):
    """The pieces of unique_*: values sorted ascending (NaN last; complex values by real
    part, then imaginary part); equality is ``==``, so every NaN is its own value and -0.0
    and 0.0 are one (the first occurring one)."""
    _array(x, fn)
    flat = x.reshape([-1])
    n = flat.shape[0]
    dev = x.device
    # a stable sort puts each value's first occurrence first among its equals
    if isdtype(x.dtype, "complex floating"):  # lexicographic: two stable sorts
        by_imag = _et.argsort(_et.imag(flat), dim=0, stable=True)
        by_real = _et.argsort(_et.index_select(_et.real(flat), 0, by_imag), dim=0,
                              stable=True)
        perm = _et.index_select(by_imag, 0, by_real)
    else:
        perm = call_core(fn, _et.argsort, flat, dim=0, stable=True, same=False,
                         uint64="order")
    s = _et.index_select(flat, 0, perm)
    starts = _et.ones(n, dtype=_bool, device=dev)
    if n > 1:
        starts[1:] = call_core(fn, _et.ne, s[1:], s[:-1], same=False, uint64="wrap")
    first = _et.nonzero(starts).reshape([-1])  # index_select takes every dtype
    out = {"values": _et.index_select(s, 0, first)}
    if indices:
        out["indices"] = _et.index_select(perm, 0, first)
    if counts:
        end = _et.full([1], n, dtype=_int64, device=dev)
        out["counts"] = _et.cat([first, end])[1:] - first
    if inverse:
        group = _et.cumsum(starts, 0) - 1  # the unique value each sorted element is
        inv = _et.zeros(n, dtype=_int64, device=dev).scatter(0, perm, group)
        out["inverse_indices"] = inv.reshape(list(x.shape))
    return out


def unique_all(x, /):
    """(values, indices, inverse_indices, counts) of the flattened x: the unique values
    sorted ascending, the index of each one's first occurrence, for each element of x the
    index of its value in values (x's shape) and how often each value occurs. Each NaN is a
    distinct value; -0.0 and 0.0 are one. Indices and counts are int64."""
    r = _unique(x, "unique_all", inverse=True, indices=True, counts=True)
    return UniqueAllResult(r["values"], r["indices"], r["inverse_indices"], r["counts"])


def unique_counts(x, /):
    """(values, counts): the unique values of x (as in ``unique_all``) and how often each
    occurs."""
    r = _unique(x, "unique_counts", counts=True)
    return UniqueCountsResult(r["values"], r["counts"])


def unique_inverse(x, /):
    """(values, inverse_indices): the unique values of x (as in ``unique_all``) and the
    indices into values that rebuild x (x's shape)."""
    r = _unique(x, "unique_inverse", inverse=True)
    return UniqueInverseResult(r["values"], r["inverse_indices"])


def unique_values(x, /):
    """The unique values of the flattened x, sorted ascending (each NaN distinct)."""
    return _unique(x, "unique_values")["values"]


# ---------------------------------------------------------------------------------------
# manipulation


def _broadcast_shapes(shapes, fn: str) -> tuple[int, ...]:
    ndim = _builtins.max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, s in enumerate(shape):
            j = ndim - len(shape) + i
            if out[j] == 1:
                out[j] = s
            elif s not in (1, out[j]):
                raise ValueError(
                    f"{fn}(): shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot "
                    f"be broadcast together (size {s} against {out[j]})"
                )
    return tuple(out)


def broadcast_arrays(*arrays):
    """The arrays broadcast to their common shape (views), as a list (2024.12)."""
    for i, a in enumerate(arrays):
        _check_array(a, f"broadcast_arrays(): argument {i}")
    shape = _broadcast_shapes([tuple(a.shape) for a in arrays], "broadcast_arrays")
    return [a if tuple(a.shape) == shape else a.broadcast_to(list(shape)) for a in arrays]


def broadcast_to(x, /, shape):
    """x broadcast to shape (a view). ValueError if x's shape does not broadcast to it."""
    _array(x, "broadcast_to")
    shape = _ints(shape, "broadcast_to", "shape")
    if _builtins.any(s < 0 for s in shape):
        raise ValueError(f"broadcast_to(): shape {shape} has a negative size")
    xs = tuple(x.shape)
    ok = len(shape) >= len(xs) and _builtins.all(
        a in (1, b) for a, b in zip(xs, shape[len(shape) - len(xs):])
    )
    if not ok:
        raise ValueError(f"broadcast_to(): an array of shape {xs} cannot be broadcast to {shape}")
    return x.broadcast_to(list(shape))


def concat(arrays, /, *, axis=0):
    """The arrays joined along an existing axis (flattened first if axis is None). They
    must have the same shape except along axis; the dtype is their result_type."""
    arrays = _arrays(arrays, "concat")
    dtype = result_type(*arrays)
    if axis is None:
        return _et.cat([a.reshape([-1]).to(dtype) for a in arrays], dim=0)
    ndim = arrays[0].ndim
    if ndim == 0:
        raise ValueError("concat(): zero-dimensional arrays cannot be concatenated")
    ax = _axis(axis, ndim, "concat")
    base = list(arrays[0].shape)
    for i, a in enumerate(arrays[1:], 1):
        shape = list(a.shape)
        if len(shape) != ndim or shape[:ax] + shape[ax + 1:] != base[:ax] + base[ax + 1:]:
            raise ValueError(
                f"concat(): arrays[{i}] has shape {tuple(shape)}, which does not match "
                f"{tuple(base)} outside axis {ax}"
            )
    return _et.cat([a.to(dtype) for a in arrays], dim=ax)


def expand_dims(x, /, axis=0):
    """x with a new axis of size 1 at position axis (a view). axis: an int in
    [-ndim - 1, ndim], or (an extension from the next standard) a tuple of distinct
    positions in the result. IndexError (``AxisError``) for positions out of range.

    The 2024.12 text shows ``axis`` keyword-only with default 0, but that was an editing
    regression (data-apis/array-api#988): ``expand_dims(x, 1)`` and ``expand_dims(x,
    axis=1)`` are both accepted here."""
    _array(x, "expand_dims")
    items = axis if isinstance(axis, tuple) else (axis,)
    out_ndim = x.ndim + len(items)
    pos = [_axis(a, out_ndim, "expand_dims") for a in items]
    if len(set(pos)) != len(pos):
        raise ValueError(f"expand_dims(): repeated axis in axis={axis!r}")
    dims = iter(x.shape)
    shape = [1 if i in pos else next(dims) for i in range(out_ndim)]
    return x.reshape(shape)


def flip(x, /, *, axis=None):
    """x with the order of elements reversed along axis (all axes if None)."""
    _array(x, "flip")
    axes = _axes(axis, x.ndim, "flip")
    if not axes:
        return x.clone()
    return _et.flip(x, list(axes))


def moveaxis(x, source, destination, /):
    """x with the axes source moved to positions destination (ints or tuples of one
    length); the other axes keep their order."""
    _array(x, "moveaxis")
    src = source if isinstance(source, tuple) else (source,)
    dst = destination if isinstance(destination, tuple) else (destination,)
    if len(src) != len(dst):
        raise ValueError(
            f"moveaxis(): source and destination must have the same number of axes, got "
            f"{len(src)} and {len(dst)}"
        )
    src = [_axis(a, x.ndim, "moveaxis") for a in src]
    dst = [_axis(a, x.ndim, "moveaxis") for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("moveaxis(): repeated axis in source or destination")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return x.permute(order)


def permute_dims(x, /, axes):
    """x with its axes permuted: axis i of the result is axis axes[i] of x (a view)."""
    _array(x, "permute_dims")
    axes = _ints(axes, "permute_dims", "axes")
    if len(axes) != x.ndim:
        raise ValueError(
            f"permute_dims(): axes {axes} must have one entry per dimension ({x.ndim})"
        )
    norm = [_axis(a, x.ndim, "permute_dims") for a in axes]
    if sorted(norm) != list(range(x.ndim)):
        raise ValueError(f"permute_dims(): axes {axes} is not a permutation of the dimensions")
    return x.permute(norm)


def repeat(x, repeats, /, *, axis=None):
    """Each element of x repeated along axis (x flattened first if axis is None). repeats:
    an int, or an integer array broadcast to x's size along axis; non-negative."""
    _array(x, "repeat")
    if axis is None:
        x = x.reshape([-1])
        ax = 0
    else:
        ax = _axis(axis, x.ndim, "repeat")
    n = x.shape[ax]
    if isinstance(repeats, _Tensor):
        _array(repeats, "repeat", "repeats", "integer")
        if repeats.ndim > 1 or (repeats.ndim == 1 and repeats.shape[0] not in (1, n)):
            raise ValueError(
                f"repeat(): repeats of shape {tuple(repeats.shape)} does not broadcast to "
                f"({n},), the size of axis {ax}"
            )
        counts = repeats.to(_int64).reshape([-1]).broadcast_to([n]) if n else None
        if counts is not None and _builtins.bool(_et.any(counts < 0)):
            raise ValueError("repeat(): repeats must be non-negative")
        if counts is None:
            return x.clone()
        ends = _et.cumsum(counts, 0)
        total = int(ends[-1].item())
        positions = _et.arange(total, dtype=_int64, device=x.device)
        index = searchsorted(ends, positions, side="right")
    else:
        r = _int(repeats, "repeat", "repeats")
        if r < 0:
            raise ValueError(f"repeat(): repeats must be non-negative, got {r}")
        index = _et.arange(n, dtype=_int64, device=x.device).unsqueeze(1).expand([n, r])
        index = index.reshape([-1])
    return _et.index_select(x, ax, index)


def reshape(x, /, shape, *, copy=None):
    """x with a new shape holding the same elements in row-major order; one size may be
    -1 (inferred). copy: True always copies; False never copies (ValueError where a copy
    is needed); None (default) copies only when a view cannot be made."""
    _array(x, "reshape")
    shape = _ints(shape, "reshape", "shape")
    if copy is not None and not isinstance(copy, _builtins.bool):
        raise TypeError(f"reshape(): copy must be a bool or None, got {type(copy).__name__}")
    if _builtins.sum(1 for s in shape if s == -1) > 1:
        raise ValueError(f"reshape(): only one size may be -1, got shape {shape}")
    if _builtins.any(s < -1 for s in shape):
        raise ValueError(f"reshape(): shape {shape} has a negative size")
    size = x.numel()
    known = _prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 or size % known:
            raise ValueError(f"reshape(): cannot reshape an array of size {size} into {shape}")
    elif known != size:
        raise ValueError(f"reshape(): cannot reshape an array of size {size} into {shape}")
    if copy is False:
        try:
            return x.view(list(shape))
        except RuntimeError:
            raise ValueError(
                f"reshape(): copy=False, but an array of shape {tuple(x.shape)} and strides "
                f"{tuple(x.stride())} cannot be viewed with shape {shape}"
            ) from None
    out = x.reshape(list(shape))
    return out.clone() if copy else out


def roll(x, /, shift, *, axis=None):
    """x with its elements shifted by shift positions along axis (elements leaving at one
    end come back at the other). axis None: over the flattened array, shape restored.
    shift and axis: ints, or tuples of one length (an int shift applies to every axis)."""
    _array(x, "roll")
    if axis is None:
        s = _int(shift, "roll", "shift") if not isinstance(shift, tuple) else None
        if s is None:
            raise ValueError("roll(): shift must be an int when axis is None")
        return roll(x.reshape([-1]), s, axis=0).reshape(list(x.shape))
    axes = axis if isinstance(axis, tuple) else (axis,)
    if isinstance(shift, tuple):
        if not isinstance(axis, tuple) or len(shift) != len(axes):
            raise ValueError(
                f"roll(): a tuple shift needs a tuple axis of the same length, got "
                f"shift={shift!r} and axis={axis!r}"
            )
        shifts = [_int(s, "roll", "shift") for s in shift]
    else:
        shifts = [_int(shift, "roll", "shift")] * len(axes)
    total = [0] * x.ndim
    for a, s in zip(axes, shifts):
        total[_axis(a, x.ndim, "roll")] += s
    out = x
    for ax, s in enumerate(total):
        n = x.shape[ax]
        k = s % n if n else 0
        if k:
            out = _et.cat([out.narrow(ax, n - k, k), out.narrow(ax, 0, n - k)], dim=ax)
    return out.clone() if out is x else out


def squeeze(x, /, axis):
    """x without the axes of size 1 named by axis (an int or a tuple; required by the
    standard). ValueError if one of them has another size."""
    _array(x, "squeeze")
    if axis is None:
        raise TypeError("squeeze(): axis must be an int or a tuple of ints, not None")
    axes = _axes(axis, x.ndim, "squeeze")
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(
                f"squeeze(): cannot remove axis {a} of size {x.shape[a]} (only size 1)"
            )
    return x.reshape([s for i, s in enumerate(x.shape) if i not in axes])


def stack(arrays, /, *, axis=0):
    """The arrays (all of one shape) joined along a new axis at position axis (in
    [-ndim - 1, ndim]). The dtype is their result_type."""
    arrays = _arrays(arrays, "stack")
    dtype = result_type(*arrays)
    shape = tuple(arrays[0].shape)
    for i, a in enumerate(arrays[1:], 1):
        if tuple(a.shape) != shape:
            raise ValueError(
                f"stack(): all arrays must have one shape; arrays[0] has {shape}, "
                f"arrays[{i}] has {tuple(a.shape)}"
            )
    ax = _axis(axis, len(shape) + 1, "stack")
    return _et.stack([a.to(dtype) for a in arrays], dim=ax)


def tile(x, repetitions, /):
    """x repeated repetitions[i] times along each axis i. With more repetitions than axes,
    x gains leading axes of size 1; with fewer, the leading axes repeat once."""
    _array(x, "tile")
    reps = _ints(repetitions, "tile", "repetitions")
    if _builtins.any(r < 0 for r in reps):
        raise ValueError(f"tile(): repetitions must be non-negative, got {reps}")
    reps = (1,) * (x.ndim - len(reps)) + reps
    if not reps:
        return x.clone()
    return x.repeat(list(reps))


def unstack(x, /, *, axis=0):
    """The slices of x along axis, as a tuple of views."""
    _array(x, "unstack")
    ax = _axis(axis, x.ndim, "unstack")
    return tuple(_et.unbind(x, ax))


# ---------------------------------------------------------------------------------------
# indexing


def _wrap_indices(indices, n: int, fn: str, name: str, axis: int):
    """Integer indices into an axis of size n as int64 in [0, n): negative ones count from
    the end; IndexError for any out of [-n, n)."""
    idx = indices.to(_int64)
    if idx.numel():
        lo, hi = int(_et.amin(idx).item()), int(_et.amax(idx).item())
        if lo < -n or hi >= n:
            bad = lo if lo < -n else hi
            raise IndexError(
                f"{fn}(): index {bad} in {name} is out of bounds for axis {axis} with size {n}"
            )
        if lo < 0:
            idx = _et.where(idx < 0, idx + n, idx)
    return idx


def take(x, indices, /, *, axis=None):
    """Elements of x at the one-dimensional integer indices along axis (optional for 1-d x).
    Negative indices count from the end; IndexError for indices out of bounds."""
    _array(x, "take")
    _array(indices, "take", "indices", "integer")
    if indices.ndim != 1:
        raise ValueError(f"take(): indices must be one-dimensional, got {indices.ndim} dimensions")
    if axis is None:
        if x.ndim != 1:
            raise ValueError(
                f"take(): axis must be given for an array of {x.ndim} dimensions (only "
                "1-d arrays may omit it)"
            )
        axis = 0
    ax = _axis(axis, x.ndim, "take")
    idx = _wrap_indices(indices, x.shape[ax], "take", "indices", ax)
    return _et.index_select(x, ax, idx)


def take_along_axis(x, indices, /, *, axis=-1):
    """Elements of x at indices along axis: out[..., j, ...] = x[..., indices[..., j, ...],
    ...]. indices: an integer array of x's rank, broadcast against x along the other axes.
    Negative indices count from the end; IndexError for indices out of bounds."""
    _array(x, "take_along_axis")
    _array(indices, "take_along_axis", "indices", "integer")
    ax = _axis(axis, x.ndim, "take_along_axis")
    if indices.ndim != x.ndim:
        raise ValueError(
            f"take_along_axis(): indices must have x's rank {x.ndim}, got {indices.ndim}"
        )
    xs, js = list(x.shape), list(indices.shape)
    other = _broadcast_shapes(
        [xs[:ax] + xs[ax + 1:], js[:ax] + js[ax + 1:]], "take_along_axis"
    )
    other = list(other)
    idx = _wrap_indices(indices, xs[ax], "take_along_axis", "indices", ax)
    x = x.broadcast_to(other[:ax] + [xs[ax]] + other[ax:])
    idx = idx.broadcast_to(other[:ax] + [js[ax]] + other[ax:])
    return _et.gather(x, ax, idx)


# ---------------------------------------------------------------------------------------
# utility


def all(x, /, *, axis=None, keepdims=False):
    """True where every element over axis is nonzero (NaN counts as nonzero); True over
    zero elements. bool result."""
    _array(x, "all")
    _check_keepdims(keepdims, "all")
    x, axes, keep, _, _ = _reduction(x, axis, keepdims, "all")
    out = _et.all(_truth(x), dim=list(axes), keepdim=keep)
    return out if out.dtype == _bool else out.to(_bool)  # the core keeps uint8 (as PyTorch)


def any(x, /, *, axis=None, keepdims=False):
    """True where some element over axis is nonzero (NaN counts as nonzero); False over
    zero elements. bool result."""
    _array(x, "any")
    _check_keepdims(keepdims, "any")
    x, axes, keep, _, _ = _reduction(x, axis, keepdims, "any")
    out = _et.any(_truth(x), dim=list(axes), keepdim=keep)
    return out if out.dtype == _bool else out.to(_bool)  # the core keeps uint8 (as PyTorch)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The n-th forward difference along axis: out[i] = x[i + 1] - x[i], applied n times
    (integers wrap around). prepend / append: arrays joined before / after x along axis
    first (x's shape elsewhere); the dtype is the result_type of the three."""
    _array(x, "diff", category="numeric")
    if x.ndim == 0:
        raise ValueError("diff(): x must have at least one dimension (got a 0-d array)")
    ax = _axis(axis, x.ndim, "diff")
    n = _int(n, "diff", "n")
    if n < 0:
        raise ValueError(f"diff(): n must be non-negative, got {n}")
    parts = [x]
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is None:
            continue
        _array(extra, "diff", name, "numeric")
        es, xs = list(extra.shape), list(x.shape)
        if len(es) != len(xs) or es[:ax] + es[ax + 1:] != xs[:ax] + xs[ax + 1:]:
            raise ValueError(
                f"diff(): {name} has shape {tuple(es)}, which does not match x's shape "
                f"{tuple(xs)} outside axis {ax}"
            )
        parts.insert(0 if name == "prepend" else len(parts), extra)
    dtype = result_type(*parts)
    out = _et.cat([p.to(dtype) for p in parts], dim=ax) if len(parts) > 1 else x
    for _ in range(n):
        size = out.shape[ax]
        if size == 0:
            break
        out = call_core("diff", _et.sub, out.narrow(ax, 1, size - 1),
                        out.narrow(ax, 0, size - 1), uint64="wrap")
    return out.clone() if out is x else out

