"""ember_tensor.array_api: statistical, searching, sorting, set, manipulation, indexing and
utility functions (array_api/_functions.py), against NumPy 2 as the reference.

NumPy gives the values; the result dtypes are the standard's (sums of signed integers give
int64, of unsigned ones uint64). Errors are checked by type (TypeError, ValueError,
IndexError) and message.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember_tensor as et
from conftest import (
    FLOAT_DTYPES,
    INT_DTYPES,
    IS_TORCH,
    assert_close,
    rand_array,
    ref_input,
    round_to,
    tensor,
    to_np,
)

xp = pytest.importorskip("ember_tensor.array_api")

pytestmark = pytest.mark.skipif(IS_TORCH, reason="the array API namespace is ember's own")

ALL = FLOAT_DTYPES + INT_DTYPES + ["bool"]
REAL = FLOAT_DTYPES + INT_DTYPES  # the standard's "real-valued" (and "numeric") dtypes
SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def arr(a, name=None, layout="contig"):
    """An ember tensor holding the NumPy array a (dtype name as in conftest)."""
    return tensor(et, np.asarray(a), name, layout)


def check(out, expected, name, scale=1.0):
    """out (ember tensor) has expected's shape and values and dtype `name`."""
    assert isinstance(out, et.Tensor), type(out)
    assert_close(out, np.asarray(expected), name, scale=scale)


def quiet(fn, *args, **kwargs):
    """fn(*args, **kwargs) with NumPy's warnings (mean of nothing, ...) silenced."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# ---------------------------------------------------------------------------------------------
# signatures


SIGNATURES = {
    "cumulative_prod": "(x, /, *, axis=None, dtype=None, include_initial=False)",
    "cumulative_sum": "(x, /, *, axis=None, dtype=None, include_initial=False)",
    "max": "(x, /, *, axis=None, keepdims=False)",
    "mean": "(x, /, *, axis=None, keepdims=False)",
    "min": "(x, /, *, axis=None, keepdims=False)",
    "prod": "(x, /, *, axis=None, dtype=None, keepdims=False)",
    "std": "(x, /, *, axis=None, correction=0.0, keepdims=False)",
    "sum": "(x, /, *, axis=None, dtype=None, keepdims=False)",
    "var": "(x, /, *, axis=None, correction=0.0, keepdims=False)",
    "argmax": "(x, /, *, axis=None, keepdims=False)",
    "argmin": "(x, /, *, axis=None, keepdims=False)",
    "count_nonzero": "(x, /, *, axis=None, keepdims=False)",
    "nonzero": "(x, /)",
    "searchsorted": "(x1, x2, /, *, side='left', sorter=None)",
    "where": "(condition, x1, x2, /)",
    "argsort": "(x, /, *, axis=-1, descending=False, stable=True)",
    "sort": "(x, /, *, axis=-1, descending=False, stable=True)",
    "unique_all": "(x, /)",
    "unique_counts": "(x, /)",
    "unique_inverse": "(x, /)",
    "unique_values": "(x, /)",
    "broadcast_arrays": "(*arrays)",
    "broadcast_to": "(x, /, shape)",
    "concat": "(arrays, /, *, axis=0)",
    # 2024.12 prints (x, /, *, axis=0), an editing regression (data-apis/array-api#988) of
    # (x, /, axis); this signature accepts both spellings
    "expand_dims": "(x, /, axis=0)",
    "flip": "(x, /, *, axis=None)",
    "moveaxis": "(x, source, destination, /)",
    "permute_dims": "(x, /, axes)",
    "repeat": "(x, repeats, /, *, axis=None)",
    "reshape": "(x, /, shape, *, copy=None)",
    "roll": "(x, /, shift, *, axis=None)",
    "squeeze": "(x, /, axis)",
    "stack": "(arrays, /, *, axis=0)",
    "tile": "(x, repetitions, /)",
    "unstack": "(x, /, *, axis=0)",
    "take": "(x, indices, /, *, axis=None)",
    "take_along_axis": "(x, indices, /, *, axis=-1)",
    "all": "(x, /, *, axis=None, keepdims=False)",
    "any": "(x, /, *, axis=None, keepdims=False)",
    "diff": "(x, /, *, axis=-1, n=1, prepend=None, append=None)",
}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signature(name):
    fn = getattr(xp, name)
    assert str(inspect.signature(fn)) == SIGNATURES[name]
    assert fn.__doc__


def test_all_exported():
    from ember_tensor.array_api import _functions

    assert sorted(_functions.__all__) == sorted(SIGNATURES)
    for name in SIGNATURES:
        assert name in xp.__all__


def test_keyword_only_and_positional_only():
    x = arr(np.arange(6.0).reshape(2, 3), "float32")
    with pytest.raises(TypeError):
        xp.sum(x, 0)  # axis is keyword-only
    with pytest.raises(TypeError):
        xp.sum(x=x)  # x is positional-only
    with pytest.raises(TypeError):
        xp.where(condition=x > 1, x1=x, x2=x)


# ---------------------------------------------------------------------------------------------
# reductions: sum, prod, mean, max, min, var, std, all, any, count_nonzero

# (shape, axis) cases: 0-d, 0-size, negative and tuple axes, the empty tuple
REDUCE_CASES = [
    ((), None), ((), ()), ((5,), None), ((5,), 0), ((5,), -1), ((5,), ()),
    ((3, 4), None), ((3, 4), 1), ((3, 4), -2), ((3, 4), (0, 1)), ((3, 4), (-1, 0)),
    ((3, 4), ()), ((2, 3, 4), (0, 2)), ((2, 3, 4), -2), ((2, 3, 4), (1,)),
    ((0,), None), ((0, 3), 0), ((0, 3), 1), ((2, 0, 3), (0, 2)), ((2, 0, 3), 1),
]


def _sum_dtype(name):
    if name in INT_DTYPES:
        return "uint64" if name.startswith("u") else "int64"
    return name


def _numpy_reduce(np_fn):
    return lambda a, axis, keepdims: np_fn(a, axis=axis, keepdims=keepdims)


# name -> (NumPy reference, accepted dtypes, result dtype, input domain)
REDUCTIONS = {
    "sum": (_numpy_reduce(np.sum), REAL, _sum_dtype, "any"),
    "prod": (_numpy_reduce(np.prod), REAL, _sum_dtype, "unit"),
    "mean": (_numpy_reduce(np.mean), FLOAT_DTYPES, lambda n: n, "any"),
    "max": (_numpy_reduce(np.max), REAL, lambda n: n, "any"),
    "min": (_numpy_reduce(np.min), REAL, lambda n: n, "any"),
    "all": (_numpy_reduce(np.all), ALL, lambda n: "bool", "any"),
    "any": (_numpy_reduce(np.any), ALL, lambda n: "bool", "any"),
    "count_nonzero": (_numpy_reduce(np.count_nonzero), ALL, lambda n: "int64", "any"),
}


def _reduced_count(shape, axis):
    if axis is None:
        axis = tuple(range(len(shape)))
    axis = axis if isinstance(axis, tuple) else (axis,)
    return int(np.prod([shape[a] for a in axis])) if axis else 1


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("fn", sorted(REDUCTIONS))
def test_reductions(fn, name, rng):
    ref, accepted, result_dtype, domain = REDUCTIONS[fn]
    for shape, axis in REDUCE_CASES:
        a = rand_array(rng, shape, name, domain)
        if name in INT_DTYPES and fn == "all" and a.ndim:
            a[..., :1] = 0  # some false results
        for keepdims in (False, True):
            for layout in ("contig", "transposed"):
                x = arr(a, name, layout)
                call = lambda: getattr(xp, fn)(x, axis=axis, keepdims=keepdims)  # noqa: E731,B023
                case = (fn, name, shape, axis, keepdims, layout)
                if name not in accepted:
                    msg = f"{fn}\\(\\): x must have an? [a-z -]+ data type, got {name}"
                    with pytest.raises(TypeError, match=msg):
                        call()
                    continue
                n = _reduced_count(shape, axis)
                if fn in ("max", "min") and n == 0:
                    with pytest.raises(ValueError, match="zero-size reduction"):
                        call()
                    with pytest.raises(ValueError):  # NumPy agrees
                        ref(ref_input(a), axis, keepdims)
                    continue
                out = call()
                expected = quiet(ref, ref_input(a), axis, keepdims)
                assert tuple(out.shape) == np.shape(expected), case
                check(out, expected, result_dtype(name), scale=max(n, 1))


@pytest.mark.parametrize("name", FLOAT_DTYPES)
@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("correction", [0, 1, 0.5, 2.0])
def test_var_std(fn, name, correction, rng):
    ref = getattr(np, fn)
    for shape, axis in REDUCE_CASES:
        a = rand_array(rng, shape, name)
        for keepdims in (False, True):
            out = getattr(xp, fn)(arr(a, name, "transposed"), axis=axis,
                                  correction=correction, keepdims=keepdims)
            n = _reduced_count(shape, axis)
            if n - correction <= 0:  # the standard: NaN (NumPy gives inf for some)
                expected = np.full(np.shape(quiet(np.sum, a, axis=axis, keepdims=keepdims)),
                                   np.nan)
            else:
                expected = quiet(ref, ref_input(a), axis=axis, ddof=correction,
                                 keepdims=keepdims)
            check(out, expected, name, scale=4)


@pytest.mark.parametrize("fn", ["var", "std", "mean"])
@pytest.mark.parametrize("name", INT_DTYPES + ["bool"])
def test_floating_only_reductions_reject(fn, name):
    with pytest.raises(TypeError, match="floating-point data type"):
        getattr(xp, fn)(arr(np.ones(3), name))


def test_var_correction_type():
    x = arr(np.ones(3), "float32")
    with pytest.raises(TypeError, match="correction"):
        xp.var(x, correction=True)
    with pytest.raises(TypeError, match="correction"):
        xp.std(x, correction="1")


def test_reduction_nan_propagates():
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], np.float32)
    for fn in ("sum", "prod", "mean", "max", "min", "var", "std"):
        out = getattr(xp, fn)(arr(a), axis=1)
        assert np.isnan(to_np(out)[0]) and not np.isnan(to_np(out)[1]), fn
    check(xp.all(arr(np.array([np.nan, 1.0]))), True, "bool")
    check(xp.count_nonzero(arr(np.array([np.nan, 0.0, -0.0]))), 1, "int64")


def test_sum_prod_dtypes():
    i8 = arr(np.array([100, 100, 100], np.int8))
    check(xp.sum(i8), 300, "int64")  # int8 widens to the default integer dtype
    check(xp.prod(i8), 10**6, "int64")
    u8 = arr(np.array([200, 200], np.uint8))
    check(xp.sum(u8), 400, "uint64")  # unsigned integers widen to uint64
    check(xp.prod(u8), 40000, "uint64")
    i32 = arr(np.array([2**31 - 1, 2**31 - 1], np.int32))
    check(xp.sum(i32), 2 * (2**31 - 1), "int64")
    check(xp.sum(i8, dtype=xp.int8), np.int8(44), "int8")  # wraps around, as asked
    check(xp.sum(i8, dtype=xp.float32), 300.0, "float32")
    check(xp.prod(arr(np.array([1.5, 2.0], np.float32)), dtype=xp.float64), 3.0, "float64")
    check(xp.sum(arr(np.array([1.5], np.float16))), 1.5, "float16")
    check(xp.cumulative_sum(i8), [100, 200, 300], "int64")
    check(xp.cumulative_prod(u8, dtype=xp.float32), [200.0, 40000.0], "float32")
    with pytest.raises(TypeError, match="dtype must be a dtype"):
        xp.sum(i8, dtype="int64")
    for fn in ("sum", "prod", "cumulative_sum", "cumulative_prod"):
        with pytest.raises(TypeError, match="numeric data type"):
            getattr(xp, fn)(arr(np.array([True, False])))


@pytest.mark.parametrize("fn", sorted(REDUCTIONS) + ["var", "std"])
def test_reduction_axis_errors(fn):
    x = arr(np.ones((2, 3)), "float32")
    f = getattr(xp, fn)
    with pytest.raises(IndexError, match="axis 2 is out of bounds"):
        f(x, axis=2)
    with pytest.raises(ValueError, match="out of bounds"):  # AxisError is both
        f(x, axis=(0, -3))
    with pytest.raises(ValueError, match="duplicate"):
        f(x, axis=(1, -1))
    with pytest.raises(TypeError, match="axis must be an int"):
        f(x, axis=1.0)
    with pytest.raises(TypeError, match="axis must be an int"):
        f(x, axis=[0])
    with pytest.raises(IndexError):
        f(arr(np.float32(1.0)), axis=0)  # a 0-d array has no axis 0
    with pytest.raises(TypeError, match="must be an array"):
        f(np.ones(3))


# ---------------------------------------------------------------------------------------------
# cumulative_sum, cumulative_prod

CUMULATIVE_CASES = [
    ((5,), None), ((5,), 0), ((5,), -1), ((0,), None), ((3, 4), 1), ((3, 4), -2),
    ((2, 0, 3), 1), ((2, 3, 4), 2), ((), None),
]


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("fn", ["cumulative_sum", "cumulative_prod"])
def test_cumulative(fn, name, rng):
    ref = getattr(np, fn)
    for shape, axis in CUMULATIVE_CASES:
        a = rand_array(rng, shape, name, "unit" if fn == "cumulative_prod" else "any")
        for include_initial in (False, True):
            out = getattr(xp, fn)(arr(a, name, "transposed"), axis=axis,
                                  include_initial=include_initial)
            expected = ref(ref_input(a), axis=axis, include_initial=include_initial)
            n = shape[axis if axis is not None else 0] if shape else 1
            check(out, expected, _sum_dtype(name), scale=max(n, 1))


def test_cumulative_errors():
    x = arr(np.ones((2, 3)), "float32")
    for fn in (xp.cumulative_sum, xp.cumulative_prod):
        with pytest.raises(ValueError, match="axis must be given"):
            fn(x)
        with pytest.raises(IndexError, match="out of bounds"):
            fn(x, axis=2)
        with pytest.raises(TypeError, match="axis must be an int"):
            fn(x, axis=(0,))
        with pytest.raises(TypeError, match="must be an array"):
            fn([1, 2])


# ---------------------------------------------------------------------------------------------
# argmax, argmin


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("fn", ["argmax", "argmin"])
def test_argmax_argmin(fn, name, rng):
    ref = getattr(np, fn)
    cases = [((), None), ((7,), None), ((7,), 0), ((7,), -1), ((3, 4), None), ((3, 4), 0),
             ((3, 4), -1), ((2, 3, 4), 1), ((0, 3), 1), ((2, 0, 3), 2)]
    for shape, axis in cases:
        # few distinct values: ties, where the first index must win
        a = rand_array(rng, shape, name, "small")
        for keepdims in (False, True):
            out = getattr(xp, fn)(arr(a, name, "transposed"), axis=axis, keepdims=keepdims)
            check(out, ref(ref_input(a), axis=axis, keepdims=keepdims), "int64")


@pytest.mark.parametrize("fn", ["argmax", "argmin"])
def test_argmax_argmin_special(fn):
    f = getattr(xp, fn)
    a = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 2.0, -1.0, -1.0]], np.float32)
    check(f(arr(a), axis=1), getattr(np, fn)(a, axis=1), "int64")  # the first NaN wins
    with pytest.raises(ValueError, match="empty"):
        f(arr(np.zeros((3, 0), np.float32)), axis=1)
    with pytest.raises(ValueError, match="empty"):
        f(arr(np.zeros((0,), np.float32)))
    with pytest.raises(TypeError, match="real-valued data type"):
        f(arr(np.array([True, False])))
    with pytest.raises(TypeError, match="axis must be an int"):
        f(arr(np.ones((2, 2), np.float32)), axis=(0,))
    with pytest.raises(IndexError, match="out of bounds"):
        f(arr(np.ones((2, 2), np.float32)), axis=-3)


# ---------------------------------------------------------------------------------------------
# nonzero, where


@pytest.mark.parametrize("name", ALL)
def test_nonzero(name, rng):
    for shape in [(6,), (3, 4), (2, 3, 4), (0,), (2, 0), (1, 1, 1)]:
        a = rand_array(rng, shape, name, "small")
        if a.size:
            a.flat[0] = 0
        out = xp.nonzero(arr(a, name, "transposed"))
        expected = np.nonzero(a)
        assert isinstance(out, tuple) and len(out) == len(expected)
        for o, e in zip(out, expected):
            check(o, e, "int64")


def test_nonzero_rejects_0d():
    with pytest.raises(ValueError, match="at least one dimension"):
        xp.nonzero(arr(np.float32(1.0)))
    check(xp.nonzero(arr(np.array([np.nan, 0.0, -0.0])))[0], [0], "int64")


WHERE_PAIRS = [
    ("float32", "float32", "float32"), ("float32", "float64", "float64"),
    ("float16", "float32", "float32"), ("int8", "int16", "int16"),
    ("uint8", "int8", "int16"), ("uint8", "int64", "int64"), ("bool", "bool", "bool"),
    ("bfloat16", "float16", "float32"),
]


@pytest.mark.parametrize("n1,n2,want", WHERE_PAIRS)
def test_where(n1, n2, want, rng):
    for sc, s1, s2 in [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), ()), ((), (2,), (3, 1)),
                       ((0, 2), (2,), ())]:
        c = rng.random(sc) < 0.5
        a, b = rand_array(rng, s1, n1), rand_array(rng, s2, n2)
        out = xp.where(arr(c, "bool"), arr(a, n1), arr(b, n2))
        check(out, np.where(c, ref_input(a), ref_input(b)), want)


def test_where_scalars():
    c = arr(np.array([True, False, True]))
    i8 = arr(np.array([1, 2, 3], np.int8))
    f32 = arr(np.array([1.5, 2.5, 3.5], np.float32))
    check(xp.where(c, i8, -1), [1, -1, 3], "int8")
    check(xp.where(c, 7, i8), [7, 2, 7], "int8")
    check(xp.where(c, f32, 0), [1.5, 0.0, 3.5], "float32")
    check(xp.where(c, 0.25, f32), [0.25, 2.5, 0.25], "float32")
    check(xp.where(c, arr(np.array([False] * 3)), True), [False, True, False], "bool")
    # shapes broadcast with the 0-d scalar
    check(xp.where(arr(np.array([[True], [False]])), f32, 9), [[1.5, 2.5, 3.5], [9, 9, 9]],
          "float32")
    with pytest.raises(TypeError, match="at least one of x1 and x2 must be an array"):
        xp.where(c, 1, 2)
    with pytest.raises(TypeError, match="where\\(\\): a Python float cannot"):
        xp.where(c, i8, 1.5)
    with pytest.raises(TypeError, match="cannot"):
        xp.where(c, True, i8)
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        xp.where(c, i8, 300)
    # a complex scalar with a real floating array: the complex dtype of its precision
    check(xp.where(c, 1j, f32), [1j, 2.5, 1j], "complex64")
    with pytest.raises(TypeError):
        xp.where(c, 1j, i8)


def test_where_errors():
    x = arr(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="condition must have a boolean data type"):
        xp.where(arr(np.ones(3, np.int8)), x, x)
    with pytest.raises(TypeError, match="condition must be an array"):
        xp.where([True, False, True], x, x)
    with pytest.raises(TypeError, match="cannot be promoted"):
        xp.where(arr(np.ones(3, bool)), x, arr(np.ones(3, np.int32)))
    with pytest.raises(TypeError, match="x2 must be an array"):
        xp.where(arr(np.ones(3, bool)), x, np.ones(3))
    with pytest.raises(ValueError, match="cannot be broadcast together"):
        xp.where(arr(np.ones(3, bool)), x, arr(np.ones(4, np.float32)))
    with pytest.raises(ValueError, match="cannot be broadcast together"):
        xp.where(arr(np.ones((2, 1), bool)), x, arr(np.ones((3, 1), np.float32)))


# ---------------------------------------------------------------------------------------------
# searchsorted


def _as_dtype(values, name):
    """Integers (a NumPy int array) as dtype `name`: floats halve them (so .5 steps appear),
    uint8 takes their absolute values."""
    values = np.asarray(values)
    if name in FLOAT_DTYPES:
        return round_to(values / 2, name)
    if name == "uint8":
        return np.abs(values).astype(np.uint8)
    return values.astype(name)


@SETTINGS
@given(
    name=st.sampled_from(REAL),
    name2=st.sampled_from(REAL),
    values=st.lists(st.integers(-6, 6), max_size=12),
    queries=hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0,
                                                   max_side=4), elements=st.integers(-8, 8)),
    side=st.sampled_from(["left", "right"]),
    use_sorter=st.booleans(),
    nans=st.integers(0, 2),
)
def test_searchsorted(name, name2, values, queries, side, use_sorter, nans):
    a = np.sort(_as_dtype(np.array(values, np.int64), name))
    q = _as_dtype(queries, name2)
    if name in FLOAT_DTYPES and nans:
        a = np.concatenate([a, np.full(nans, np.nan, a.dtype)])
        if name2 in FLOAT_DTYPES and q.size:
            q = q.copy()
            q.flat[0] = np.nan
    a64, q64 = a.astype(np.float64), q.astype(np.float64)
    if use_sorter:
        perm = np.random.default_rng(len(a)).permutation(len(a))
        shuffled = a[perm]
        sorter = np.argsort(shuffled, kind="stable")
        out = xp.searchsorted(arr(shuffled, name), arr(q, name2), side=side,
                              sorter=arr(sorter.astype(np.int32)))
    else:
        out = xp.searchsorted(arr(a, name), arr(q, name2), side=side)
    check(out, np.searchsorted(a64, q64, side=side), "int64")


def test_searchsorted_errors():
    x1 = arr(np.array([1.0, 2.0, 3.0], np.float32))
    with pytest.raises(ValueError, match="x1 must be one-dimensional"):
        xp.searchsorted(arr(np.ones((2, 2), np.float32)), x1)
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        xp.searchsorted(x1, x1, side="middle")
    with pytest.raises(TypeError, match="real-valued data type"):
        xp.searchsorted(arr(np.array([True])), x1)
    with pytest.raises(TypeError, match="x2 must be an array"):
        xp.searchsorted(x1, 2.0)  # scalar x2 arrives in 2025.12
    with pytest.raises(TypeError, match="sorter must have an integer data type, got float32"):
        xp.searchsorted(x1, x1, sorter=x1)
    with pytest.raises(ValueError, match="sorter must have x1's shape"):
        xp.searchsorted(x1, x1, sorter=arr(np.array([0, 1])))
    with pytest.raises(IndexError, match="out of bounds"):
        xp.searchsorted(x1, x1, sorter=arr(np.array([0, 1, 3])))


# ---------------------------------------------------------------------------------------------
# sort, argsort


def _np_argsort(a, axis, descending):
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    # a stable descending sort: equal elements keep their order (as array-api-strict does it)
    flipped = np.flip(np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable"), axis=axis)
    return a.shape[axis] - 1 - flipped


@pytest.mark.parametrize("name", REAL)
def test_sort_argsort(name, rng):
    for shape, axis in [((9,), -1), ((9,), 0), ((3, 5), 0), ((3, 5), -1), ((2, 3, 4), 1),
                        ((0, 3), 0), ((2, 0), -1)]:
        a = rand_array(rng, shape, name, "small")  # many ties
        if name in FLOAT_DTYPES and a.size > 2:
            a.flat[1] = np.nan
            a.flat[-1] = np.nan
        for descending in (False, True):
            x = arr(a, name, "transposed")
            idx = _np_argsort(ref_input(a), axis, descending)
            check(xp.argsort(x, axis=axis, descending=descending), idx, "int64")
            check(xp.sort(x, axis=axis, descending=descending, stable=False),
                  np.take_along_axis(a, idx, axis), name)
            check(xp.sort(x, axis=axis, descending=descending),
                  np.take_along_axis(a, idx, axis), name)


def test_sort_errors():
    with pytest.raises(TypeError, match="real-valued data type"):
        xp.sort(arr(np.array([True, False])))
    with pytest.raises(TypeError, match="real-valued data type"):
        xp.argsort(arr(np.array([True, False])))
    with pytest.raises(IndexError, match="out of bounds for an array of dimension 0"):
        xp.sort(arr(np.float32(1.0)))
    with pytest.raises(IndexError, match="axis 2"):
        xp.argsort(arr(np.ones((2, 2), np.float32)), axis=2)
    with pytest.raises(TypeError, match="axis must be an int"):
        xp.sort(arr(np.ones((2, 2), np.float32)), axis=None)


# ---------------------------------------------------------------------------------------------
# unique_all, unique_counts, unique_inverse, unique_values


def _unique_cases(name, rng):
    cases = [rand_array(rng, (12,), name, "small"), rand_array(rng, (3, 4), name, "small"),
             rand_array(rng, (0,), name), rand_array(rng, (), name),
             rand_array(rng, (2, 0, 3), name), rand_array(rng, (2, 2, 2), name, "small")]
    if name in FLOAT_DTYPES:
        special = np.array([np.nan, 1.0, -0.0, np.nan, 0.0, 1.0, np.inf, -np.inf, np.nan])
        cases.append(round_to(special, name))
    return cases


@pytest.mark.parametrize("name", ALL)
def test_unique(name, rng):
    for a in _unique_cases(name, rng):
        x = arr(a, name, "transposed")
        values, index, inverse, counts = np.unique(
            a, return_index=True, return_inverse=True, return_counts=True, equal_nan=False
        )
        inverse = inverse.reshape(a.shape)
        r = xp.unique_all(x)
        assert type(r).__name__ == "UniqueAllResult"
        assert r._fields == ("values", "indices", "inverse_indices", "counts")
        check(r.values, values, name)
        check(r.indices, index, "int64")
        check(r.inverse_indices, inverse, "int64")
        check(r.counts, counts, "int64")
        r = xp.unique_counts(x)
        assert r._fields == ("values", "counts")
        check(r.values, values, name)
        check(r.counts, counts, "int64")
        r = xp.unique_inverse(x)
        assert r._fields == ("values", "inverse_indices")
        check(r.values, values, name)
        check(r.inverse_indices, inverse, "int64")
        check(xp.unique_values(x), values, name)
        # the inverse rebuilds x (up to the sign of zeros)
        if a.size:
            rebuilt = to_np(r.values)[to_np(r.inverse_indices)]
            np.testing.assert_array_equal(rebuilt, a.astype(rebuilt.dtype))


def test_unique_nan_each_distinct():
    r = xp.unique_all(arr(np.array([np.nan, 2.0, np.nan, -0.0, 0.0], np.float32)))
    v = to_np(r.values)
    assert v.shape == (4,) and np.isnan(v[-2:]).all()
    check(r.counts, [2, 1, 1, 1], "int64")  # the signed zeros are one value
    check(r.indices, [3, 1, 0, 2], "int64")
    check(r.inverse_indices, [2, 1, 3, 0, 0], "int64")
    with pytest.raises(TypeError, match="must be an array"):
        xp.unique_values([1, 2])


# ---------------------------------------------------------------------------------------------
# manipulation


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=4,
                                                 min_side=0, max_side=3))
def test_broadcast_arrays(shapes):
    arrays = [np.arange(int(np.prod(s)), dtype=np.float32).reshape(s)
              for s in shapes.input_shapes]
    out = xp.broadcast_arrays(*[arr(a) for a in arrays])
    assert isinstance(out, list)  # 2024.12 (a tuple from 2025.12)
    for o, e in zip(out, np.broadcast_arrays(*arrays)):
        check(o, e, "float32")
    for a in arrays:
        check(xp.broadcast_to(arr(a), shapes.result_shape),
              np.broadcast_to(a, shapes.result_shape), "float32")


def test_broadcast_errors():
    x = arr(np.ones((2, 3), np.float32))
    assert xp.broadcast_arrays() == []
    with pytest.raises(ValueError, match="cannot be broadcast together"):
        xp.broadcast_arrays(x, arr(np.ones(4, np.float32)))
    with pytest.raises(TypeError, match="must be an array"):
        xp.broadcast_arrays(x, np.ones(3))
    with pytest.raises(ValueError, match="cannot be broadcast to"):
        xp.broadcast_to(x, (3, 3))
    with pytest.raises(ValueError, match="cannot be broadcast to"):
        xp.broadcast_to(x, (3,))
    with pytest.raises(ValueError, match="negative"):
        xp.broadcast_to(x, (-1, 3))
    with pytest.raises(TypeError, match="shape must be a tuple"):
        xp.broadcast_to(x, 3)
    check(xp.broadcast_to(arr(np.float32(2.0)), (2, 0)), np.zeros((2, 0)), "float32")


@pytest.mark.parametrize("n1,n2,want", WHERE_PAIRS)
def test_concat_stack(n1, n2, want, rng):
    a, b = rand_array(rng, (2, 3), n1), rand_array(rng, (2, 3), n2)
    c = rand_array(rng, (2, 0), n2)
    ta, tb, tc = arr(a, n1, "transposed"), arr(b, n2), arr(c, n2)
    ra, rb, rc = ref_input(a), ref_input(b), ref_input(c)
    for axis in (0, 1, -1, -2):
        check(xp.concat([ta, tb], axis=axis), np.concatenate([ra, rb], axis=axis), want)
    check(xp.concat((ta, tc), axis=1), np.concatenate([ra, rc], axis=1), want)
    check(xp.concat([ta, tb, tc], axis=None), np.concatenate([ra, rb, rc], axis=None), want)
    check(xp.concat([ta]), ra, n1)
    for axis in (0, 1, 2, -1, -3):
        check(xp.stack([ta, tb], axis=axis), np.stack([ra, rb], axis=axis), want)
    check(xp.stack((arr(a[0, 0], n1), arr(b[0, 0], n2))), np.stack([ra[0, 0], rb[0, 0]]), want)


def test_concat_stack_errors():
    x = arr(np.ones((2, 3), np.float32))
    for f in (xp.concat, xp.stack):
        with pytest.raises(ValueError, match="at least one array"):
            f([])
        with pytest.raises(TypeError, match="tuple or list of arrays"):
            f(x)
        with pytest.raises(TypeError, match="must be an array"):
            f([x, np.ones((2, 3))])
        with pytest.raises(TypeError, match="cannot be promoted"):
            f([x, arr(np.ones((2, 3), np.int32))])
    with pytest.raises(ValueError, match="does not match"):
        xp.concat([x, arr(np.ones((3, 2), np.float32))], axis=1)
    with pytest.raises(ValueError, match="does not match"):
        xp.concat([x, arr(np.ones(3, np.float32))])
    with pytest.raises(ValueError, match="zero-dimensional"):
        xp.concat([arr(np.float32(1)), arr(np.float32(2))])
    with pytest.raises(IndexError, match="out of bounds"):
        xp.concat([x, x], axis=2)
    with pytest.raises(ValueError, match="one shape"):
        xp.stack([x, arr(np.ones((3, 2), np.float32))])
    with pytest.raises(IndexError, match="out of bounds"):
        xp.stack([x, x], axis=3)


def test_expand_dims():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    x = arr(a)
    for axis in range(-3, 3):
        check(xp.expand_dims(x, axis=axis), np.expand_dims(a, axis), "float32")
        check(xp.expand_dims(x, axis), np.expand_dims(a, axis), "float32")
    check(xp.expand_dims(x), np.expand_dims(a, 0), "float32")
    for axis in [(0, 1), (0, -1), (3, 1), (-4, 2, -1)]:  # tuples: the 2025.12 extension
        check(xp.expand_dims(x, axis=axis), np.expand_dims(a, axis), "float32")
    check(xp.expand_dims(arr(np.float32(1.0)), axis=-1), [1.0], "float32")
    with pytest.raises(IndexError, match="axis 3 is out of bounds"):
        xp.expand_dims(x, axis=3)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.expand_dims(x, axis=-4)
    with pytest.raises(ValueError, match="repeated axis"):
        xp.expand_dims(x, axis=(0, -4))
    with pytest.raises(TypeError, match="axis must be an int"):
        xp.expand_dims(x, axis=None)


@pytest.mark.parametrize("name", ALL)
def test_flip(name, rng):
    for shape in [(), (5,), (3, 4), (2, 3, 4), (0, 2)]:
        a = rand_array(rng, shape, name)
        x = arr(a, name, "transposed")
        axes = [None, ()] + list(range(-len(shape), len(shape)))
        if len(shape) >= 2:
            axes += [(0, -1), (1, 0)]
        for axis in axes:
            check(xp.flip(x, axis=axis), np.flip(a, axis=axis) if axis != () else a, name)
    with pytest.raises(ValueError, match="duplicate"):
        xp.flip(arr(np.ones((2, 2))), axis=(0, -2))
    with pytest.raises(IndexError):
        xp.flip(arr(np.float32(1)), axis=0)


@SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3))
def test_moveaxis_permute_dims(data, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    x = arr(a)
    nd = len(shape)
    perm = data.draw(st.permutations(range(nd)))
    signs = data.draw(st.lists(st.booleans(), min_size=nd, max_size=nd))
    axes = tuple(p - nd if s else p for p, s in zip(perm, signs))
    check(xp.permute_dims(x, axes), np.transpose(a, axes), "int32")
    if nd:
        k = data.draw(st.integers(1, nd))
        src = data.draw(st.permutations(range(-nd, 0) if signs[0] else range(nd)))[:k]
        dst = data.draw(st.permutations(range(nd)))[:k]
        check(xp.moveaxis(x, tuple(src), tuple(dst)), np.moveaxis(a, src, dst), "int32")
        check(xp.moveaxis(x, src[0], dst[0]), np.moveaxis(a, src[0], dst[0]), "int32")


def test_moveaxis_permute_dims_errors():
    x = arr(np.ones((2, 3, 4), np.float32))
    with pytest.raises(ValueError, match="one entry per dimension"):
        xp.permute_dims(x, (0, 1))
    with pytest.raises(ValueError, match="not a permutation"):
        xp.permute_dims(x, (0, 1, 1))
    with pytest.raises(IndexError, match="out of bounds"):
        xp.permute_dims(x, (0, 1, 3))
    with pytest.raises(TypeError, match="axes must be a tuple"):
        xp.permute_dims(x, 0)
    with pytest.raises(ValueError, match="same number of axes"):
        xp.moveaxis(x, (0, 1), (0,))
    with pytest.raises(ValueError, match="repeated axis"):
        xp.moveaxis(x, (0, -3), (1, 2))
    with pytest.raises(IndexError, match="out of bounds"):
        xp.moveaxis(x, 3, 0)


@pytest.mark.parametrize("name", ALL)
def test_repeat(name, rng):
    a = rand_array(rng, (2, 3), name)
    x = arr(a, name, "transposed")
    for r in (0, 1, 3):
        check(xp.repeat(x, r), np.repeat(a, r), name)
        check(xp.repeat(x, r, axis=1), np.repeat(a, r, axis=1), name)
        check(xp.repeat(x, r, axis=-2), np.repeat(a, r, axis=-2), name)
    counts = np.array([2, 0, 1])
    for rname in ("int64", "int32", "uint8"):
        check(xp.repeat(x, arr(counts, rname), axis=1), np.repeat(a, counts, axis=1), name)
    check(xp.repeat(x, arr(np.array([3])), axis=0), np.repeat(a, [3], axis=0), name)
    check(xp.repeat(x, arr(np.array(2))), np.repeat(a, 2), name)
    flat_counts = np.arange(6) % 3
    check(xp.repeat(x, arr(flat_counts)), np.repeat(a, flat_counts), name)
    check(xp.repeat(arr(a[:0], name), arr(np.array([], np.int64)), axis=0),
          np.repeat(a[:0], np.array([], np.int64), axis=0), name)
    check(xp.repeat(arr(a[0, 0], name), 2), np.repeat(a[0, 0], 2), name)


def test_repeat_errors():
    x = arr(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="non-negative"):
        xp.repeat(x, -1)
    with pytest.raises(ValueError, match="non-negative"):
        xp.repeat(x, arr(np.array([1, -1, 1])), axis=1)
    with pytest.raises(ValueError, match="does not broadcast"):
        xp.repeat(x, arr(np.array([1, 2])), axis=1)
    with pytest.raises(TypeError, match="integer data type"):
        xp.repeat(x, arr(np.array([1.0, 2.0, 1.0])), axis=1)
    with pytest.raises(TypeError, match="repeats must be an int"):
        xp.repeat(x, 2.0)
    with pytest.raises(TypeError, match="repeats must be an int"):
        xp.repeat(x, True)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.repeat(x, 2, axis=2)


@pytest.mark.parametrize("name", ALL)
def test_reshape(name, rng):
    a = rand_array(rng, (2, 3, 4), name)
    for shape in [(24,), (-1,), (4, -1), (2, 12), (1, 2, 1, 12), (4, 3, 2), (-1, 1)]:
        for layout in ("contig", "transposed"):
            check(xp.reshape(arr(a, name, layout), shape), a.reshape(shape), name)
    check(xp.reshape(arr(a[:0], name), (0, 5)), a[:0].reshape(0, 5), name)
    check(xp.reshape(arr(a[0, 0, 0], name), (1, 1)), a[0, 0, 0].reshape(1, 1), name)
    check(xp.reshape(arr(a[:1, :1, :1], name), ()), a[:1, :1, :1].reshape(()), name)


def test_reshape_copy():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    x = arr(a)
    view = xp.reshape(x, (3, 2), copy=False)
    view[0, 0] = 100.0
    assert to_np(x)[0, 0] == 100.0  # shares memory
    copied = xp.reshape(x, (3, 2), copy=True)
    copied[0, 0] = -1.0
    assert to_np(x)[0, 0] == 100.0
    same = xp.reshape(x, (2, 3), copy=True)
    same[0, 1] = -1.0
    assert to_np(x)[0, 1] == 1.0
    t = arr(a, layout="transposed")
    with pytest.raises(ValueError, match="copy=False"):
        xp.reshape(xp.permute_dims(x, (1, 0)), (6,), copy=False)
    check(xp.reshape(t, (6,), copy=None), a.reshape(6), "float32")
    with pytest.raises(ValueError, match="only one size may be -1"):
        xp.reshape(x, (-1, -1))
    with pytest.raises(ValueError, match="cannot reshape"):
        xp.reshape(x, (4,))
    with pytest.raises(ValueError, match="cannot reshape"):
        xp.reshape(x, (4, -1))
    with pytest.raises(ValueError, match="cannot reshape"):
        xp.reshape(arr(a[:0]), (0, -1))  # -1 is ambiguous with no elements
    with pytest.raises(ValueError, match="negative"):
        xp.reshape(x, (-2, -3))
    with pytest.raises(TypeError, match="shape must be a tuple"):
        xp.reshape(x, 6)
    with pytest.raises(TypeError, match="copy must be a bool"):
        xp.reshape(x, (6,), copy=1)


@SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
def test_roll(data, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.int16).reshape(shape)
    x = arr(a, "int16", "transposed")
    nd = len(shape)
    shift = data.draw(st.integers(-9, 9))
    check(xp.roll(x, shift), np.roll(a, shift), "int16")
    if nd:
        axis = data.draw(st.integers(-nd, nd - 1))
        check(xp.roll(x, shift, axis=axis), np.roll(a, shift, axis=axis), "int16")
        axes = tuple(data.draw(st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=3)))
        shifts = tuple(data.draw(st.lists(st.integers(-9, 9), min_size=len(axes),
                                          max_size=len(axes))))
        check(xp.roll(x, shifts, axis=axes), np.roll(a, shifts, axis=axes), "int16")
        check(xp.roll(x, shift, axis=axes), np.roll(a, shift, axis=axes), "int16")


def test_roll_errors():
    x = arr(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="shift must be an int when axis is None"):
        xp.roll(x, (1, 2))
    with pytest.raises(ValueError, match="tuple shift needs a tuple axis"):
        xp.roll(x, (1, 2), axis=0)
    with pytest.raises(ValueError, match="tuple shift needs a tuple axis"):
        xp.roll(x, (1, 2), axis=(0,))
    with pytest.raises(TypeError, match="shift must be an int"):
        xp.roll(x, 1.5)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.roll(x, 1, axis=2)
    out = xp.roll(x, 3, axis=1)
    out[0, 0] = 5.0
    assert to_np(x)[0, 0] == 1.0  # a new array, also when nothing moves


def test_squeeze():
    a = np.arange(6.0, dtype=np.float32).reshape(1, 2, 1, 3, 1)
    x = arr(a)
    for axis in [0, 2, -1, (0, 2), (0, 2, 4), (-5, -3), ()]:
        check(xp.squeeze(x, axis), np.squeeze(a, axis=axis), "float32")
        check(xp.squeeze(x, axis=axis), np.squeeze(a, axis=axis), "float32")
    check(xp.squeeze(arr(np.ones((1, 0, 1))), (0, 2)), np.ones(0), "float64")
    with pytest.raises(ValueError, match="cannot remove axis 1 of size 2"):
        xp.squeeze(x, 1)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.squeeze(x, 5)
    with pytest.raises(ValueError, match="duplicate"):
        xp.squeeze(x, (0, -5))
    with pytest.raises(TypeError, match="not None"):
        xp.squeeze(x, None)
    with pytest.raises(TypeError, match="missing"):
        xp.squeeze(x)


@pytest.mark.parametrize("name", ALL)
def test_tile(name, rng):
    for shape in [(), (3,), (2, 3), (2, 0, 1)]:
        a = rand_array(rng, shape, name)
        x = arr(a, name, "transposed")
        for reps in [(), (2,), (1, 3), (2, 1, 2), (0, 2), (3, 1, 1, 2)]:
            check(xp.tile(x, reps), np.tile(a, reps), name)
    with pytest.raises(ValueError, match="non-negative"):
        xp.tile(arr(np.ones(2)), (-1,))
    with pytest.raises(TypeError, match="repetitions must be a tuple"):
        xp.tile(arr(np.ones(2)), 2)


@pytest.mark.parametrize("name", ALL)
def test_unstack(name, rng):
    a = rand_array(rng, (2, 3, 4), name)
    x = arr(a, name, "transposed")
    for axis in range(-3, 3):
        out = xp.unstack(x, axis=axis)
        expected = np.unstack(a, axis=axis)
        assert isinstance(out, tuple) and len(out) == len(expected)
        for o, e in zip(out, expected):
            check(o, e, name)
    assert xp.unstack(arr(np.ones((0, 2))), axis=0) == ()
    with pytest.raises(IndexError, match="out of bounds"):
        xp.unstack(x, axis=3)
    with pytest.raises(IndexError, match="dimension 0"):
        xp.unstack(arr(np.float32(1.0)))


# ---------------------------------------------------------------------------------------------
# take, take_along_axis


@pytest.mark.parametrize("name", ALL)
def test_take(name, rng):
    a = rand_array(rng, (3, 4, 5), name)
    x = arr(a, name, "transposed")
    for iname in ("int64", "int32", "int8", "uint8"):
        for axis in range(-3, 3):
            n = a.shape[axis]
            idx = np.array([0, n - 1, 1, 0])
            if iname != "uint8":
                idx = np.concatenate([idx, [-1, -n]])
            check(xp.take(x, arr(idx, iname), axis=axis), np.take(a, idx, axis=axis), name)
        check(xp.take(x, arr(np.array([], np.int64), iname), axis=1),
              np.take(a, np.array([], np.int64), axis=1), name)
    v = a[0, 0]
    check(xp.take(arr(v, name), arr(np.array([4, -5, 2]))), np.take(v, [4, -5, 2]), name)


def test_take_errors():
    x = arr(np.ones((2, 3), np.float32))
    i = arr(np.array([0, 1]))
    with pytest.raises(ValueError, match="axis must be given"):
        xp.take(x, i)
    with pytest.raises(ValueError, match="axis must be given"):
        xp.take(arr(np.float32(1.0)), i)
    with pytest.raises(ValueError, match="indices must be one-dimensional"):
        xp.take(x, arr(np.array([[0]])), axis=0)
    with pytest.raises(TypeError, match="integer data type"):
        xp.take(x, arr(np.array([0.0])), axis=0)
    with pytest.raises(TypeError, match="indices must be an array"):
        xp.take(x, [0], axis=0)
    with pytest.raises(IndexError, match="index 3 in indices is out of bounds for axis 1"):
        xp.take(x, arr(np.array([3])), axis=1)
    with pytest.raises(IndexError, match="index -4"):
        xp.take(x, arr(np.array([-4])), axis=1)
    with pytest.raises(IndexError, match="axis 2 is out of bounds"):
        xp.take(x, i, axis=2)


@pytest.mark.parametrize("name", ALL)
def test_take_along_axis(name, rng):
    a = rand_array(rng, (3, 4, 5), name)
    x = arr(a, name, "transposed")
    for axis in range(-3, 3):
        n = a.shape[axis]
        for ishape in [a.shape, (1, 1, 1), (2, 2, 2)]:
            ishape = list(a.shape if ishape == a.shape else ishape)
            ishape[axis] = 6
            ishape = [s if s in (1, a.shape[d]) or d == axis % 3 else 1
                      for d, s in enumerate(ishape)]
            idx = rng.integers(-n, n, size=ishape)
            for iname in ("int64", "int32"):
                check(xp.take_along_axis(x, arr(idx, iname), axis=axis),
                      np.take_along_axis(a, idx, axis=axis), name)
    check(xp.take_along_axis(arr(a[0, 0], name), arr(np.array([2, -1]))),
          a[0, 0][[2, -1]], name)


def test_take_along_axis_errors():
    x = arr(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="must have x's rank 2"):
        xp.take_along_axis(x, arr(np.array([0])), axis=1)
    with pytest.raises(TypeError, match="integer data type"):
        xp.take_along_axis(x, arr(np.array([[0.0]])), axis=1)
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 3"):
        xp.take_along_axis(x, arr(np.array([[3]])), axis=1)
    with pytest.raises(IndexError, match="axis 2 is out of bounds"):
        xp.take_along_axis(x, arr(np.array([[0]])), axis=2)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        xp.take_along_axis(x, arr(np.zeros((3, 1), np.int64)), axis=1)
    with pytest.raises(IndexError):
        xp.take_along_axis(arr(np.float32(1.0)), arr(np.int64(0)), axis=0)


# ---------------------------------------------------------------------------------------------
# diff


@pytest.mark.parametrize("name", REAL)
def test_diff(name, rng):
    a = rand_array(rng, (3, 5, 4), name)
    x = arr(a, name, "transposed")
    ra = ref_input(a)
    for axis in range(-3, 3):
        for n in range(0, 6):
            out = xp.diff(x, axis=axis, n=n)
            if name in INT_DTYPES:  # integers wrap around in their own dtype, as NumPy's
                expected = np.diff(a, axis=axis, n=n)
            else:
                expected = np.diff(ra, axis=axis, n=n)
            check(out, expected, name, scale=2**n)
    pre, app = rand_array(rng, (3, 2, 4), name), rand_array(rng, (3, 1, 4), name)
    for kw in ({"prepend": pre}, {"append": app}, {"prepend": pre, "append": app}):
        out = xp.diff(x, axis=1, **{k: arr(v, name) for k, v in kw.items()})
        expected = np.diff(a if name in INT_DTYPES else ra, axis=1,
                           **{k: (v if name in INT_DTYPES else ref_input(v))
                              for k, v in kw.items()})
        check(out, expected, name, scale=2)
    check(xp.diff(x, n=1), np.diff(a if name in INT_DTYPES else ra), name, scale=2)


def test_diff_dtypes_and_errors():
    i8 = arr(np.array([1, 5, 2], np.int8))
    check(xp.diff(i8, prepend=arr(np.array([0], np.int16))), [1, 4, -3], "int16")
    check(xp.diff(arr(np.array([1, 0], np.uint8))), [255], "uint8")
    x = arr(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="numeric data type"):
        xp.diff(arr(np.array([True, False])))
    with pytest.raises(ValueError, match="at least one dimension"):
        xp.diff(arr(np.float32(1.0)))
    with pytest.raises(ValueError, match="non-negative"):
        xp.diff(x, n=-1)
    with pytest.raises(TypeError, match="n must be an int"):
        xp.diff(x, n=1.0)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.diff(x, axis=2)
    with pytest.raises(ValueError, match="prepend has shape"):
        xp.diff(x, axis=1, prepend=arr(np.ones((3, 1), np.float32)))
    with pytest.raises(ValueError, match="append has shape"):
        xp.diff(x, append=arr(np.ones(2, np.float32)))
    with pytest.raises(TypeError, match="cannot be promoted"):
        xp.diff(x, append=arr(np.ones((2, 1), np.int32)))
    with pytest.raises(TypeError, match="append must be an array"):
        xp.diff(x, append=1.0)


# ---------------------------------------------------------------------------------------------
# keepdims and results are fresh arrays


@pytest.mark.parametrize("fn", ["sum", "prod", "mean", "max", "min", "all", "any",
                                "count_nonzero", "var", "std"])
def test_keepdims_broadcasts_back(fn):
    a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4) + 1
    x = arr(a)
    for axis in (None, 0, (0, 2), -1, ()):
        out = getattr(xp, fn)(x, axis=axis, keepdims=True)
        assert out.ndim == 3
        np.broadcast_shapes(tuple(out.shape), a.shape)  # raises if not broadcastable
    out = getattr(xp, fn)(x, axis=())
    out_np = to_np(out)
    if out.dtype == x.dtype:
        out[0, 0, 0] = -7
        assert to_np(x)[0, 0, 0] == a[0, 0, 0], "axis=() must not return x itself"
    assert out_np.shape == a.shape


# ---------------------------------------------------------------------------------------------
# complex64/complex128 and uint16/uint32/uint64, against NumPy


@pytest.mark.parametrize("name", ["complex64", "complex128"])
def test_complex_reductions_and_searching(name):
    a = np.array([[1 + 2j, -3 + 0.5j, 0j], [2.5 - 1.5j, 0.25j, 1 + 0j]], dtype=name)
    x = et.from_numpy(a)
    check(xp.sum(x), a.sum(), name)
    check(xp.sum(x, axis=1), a.sum(axis=1), name)
    check(xp.prod(x, axis=0), a.prod(axis=0), name)
    check(xp.mean(x, axis=1), a.mean(axis=1), name)
    check(xp.cumulative_sum(x, axis=1), np.cumsum(a, axis=1), name)
    check(xp.any(x, axis=1), a.any(axis=1), "bool")
    check(xp.all(x, axis=1), a.all(axis=1), "bool")
    check(xp.count_nonzero(x), 5, "int64")
    check(xp.nonzero(x)[1], np.nonzero(a)[1], "int64")
    check(xp.unique_values(xp.concat([x, x], axis=0)), np.unique(a), name)
    check(xp.vecdot(x, x), np.vecdot(a, a), name)  # conjugates x1
    check(xp.matmul(x, xp.matrix_transpose(x)), a @ a.T, name)
    check(xp.linalg.vector_norm(x), np.linalg.vector_norm(a),
          "float32" if name == "complex64" else "float64")
    for fn in (xp.max, xp.min, xp.argmax, xp.sort, xp.var):
        with pytest.raises(TypeError):
            fn(x)


@pytest.mark.parametrize("name", ["uint8", "uint16", "uint32", "uint64"])
def test_unsigned_reductions_and_sorting(name):
    top = int(np.iinfo(name).max)
    a = np.array([[3, top, 0], [top - 1, 7, 7]], dtype=name)
    x = et.from_numpy(a)
    check(xp.sum(x, axis=1), a.sum(axis=1, dtype=np.uint64), "uint64")
    check(xp.prod(x, axis=0), a.prod(axis=0, dtype=np.uint64), "uint64")
    check(xp.cumulative_sum(x, axis=1), np.cumsum(a, axis=1, dtype=np.uint64), "uint64")
    check(xp.max(x, axis=0), a.max(axis=0), name)
    check(xp.min(x), a.min(), name)
    check(xp.argmax(x, axis=1), a.argmax(axis=1), "int64")
    check(xp.sort(x, axis=1), np.sort(a, axis=1), name)
    check(xp.argsort(x, axis=0, descending=True), np.argsort(-a.astype(float), axis=0,
                                                             stable=True), "int64")
    check(xp.unique_values(x), np.unique(a), name)
    check(xp.searchsorted(xp.sort(xp.reshape(x, (-1,))), x), np.searchsorted(
        np.sort(a.reshape(-1)), a), "int64")
    check(xp.any(x, axis=0), a.any(axis=0), "bool")
    check(xp.nonzero(x)[1], np.nonzero(a)[1], "int64")
    check(xp.diff(x, axis=1), np.diff(a, axis=1), name)
