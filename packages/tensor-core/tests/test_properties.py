"""Property-based tests (hypothesis): broadcasting, indexing and type promotion."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import ALL_DTYPES, assert_close, dtype_name, tensor, to_np

SETTINGS = settings(max_examples=50, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def _arange_array(shape, dtype=np.float32):
    n = int(np.prod(shape))
    return (np.arange(n) % 97 - 40).astype(dtype).reshape(shape)


# ---------------------------------------------------------------------------------------------
# broadcasting

BINOPS = [
    ("add", lambda a, b: a + b, np.add),
    ("mul", lambda a, b: a * b, np.multiply),
    ("sub", lambda a, b: a - b, np.subtract),
    ("gt", lambda a, b: a > b, np.greater),
    ("maximum", lambda a, b: a.maximum(b), np.maximum),
]


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4,
                                                 min_side=0, max_side=4),
       op=st.sampled_from(BINOPS), transpose=st.booleans())
def test_broadcasting_matches_numpy(lib, shapes, op, transpose):
    (sa, sb), result_shape = shapes.input_shapes, shapes.result_shape
    a = _arange_array(sa)
    b = _arange_array(sb)[..., ::-1].copy() if len(sb) else _arange_array(sb) * 0.5
    ta = tensor(lib, a, "float32", "transposed" if transpose else "contig")
    tb = tensor(lib, b, "float32")
    r = op[1](ta, tb)
    assert tuple(r.shape) == result_shape
    expected = op[2](a, b)
    assert_close(r, expected, "bool" if expected.dtype == bool else "float32")
    assert tuple(lib.broadcast_shapes(sa, sb)) == result_shape


@SETTINGS
@given(sa=hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=4),
       sb=hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=4))
def test_incompatible_shapes_raise(lib, sa, sb):
    try:
        np.broadcast_shapes(sa, sb)
        compatible = True
    except ValueError:
        compatible = False
    if compatible:
        assert tuple((lib.zeros(sa) + lib.zeros(sb)).shape) == np.broadcast_shapes(sa, sb)
    else:
        with pytest.raises(RuntimeError):
            lib.zeros(sa) + lib.zeros(sb)


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4),
       data=st.data())
def test_expand_matches_broadcast_to(lib, shape, data):
    target = data.draw(hnp.broadcastable_shapes(shape, min_dims=len(shape), max_dims=4)
                       .map(lambda s: tuple(np.broadcast_shapes(s, shape))))
    a = _arange_array(shape)
    r = tensor(lib, a).expand(*target) if target else tensor(lib, a).expand(())
    assert_close(r, np.broadcast_to(a, target), "float32")


# ---------------------------------------------------------------------------------------------
# basic indexing


def _no_negative_steps(idx):
    items = idx if isinstance(idx, tuple) else (idx,)
    return all(not (isinstance(i, slice) and i.step is not None and i.step < 0) for i in items)


@st.composite
def basic_case(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    idx = draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True)
               .filter(_no_negative_steps))
    return shape, idx


@SETTINGS
@given(case=basic_case(), layout=st.sampled_from(["contig", "transposed"]))
def test_basic_indexing(lib, case, layout):
    shape, idx = case
    a = _arange_array(shape)
    x = tensor(lib, a, "float32", layout)
    r = x[idx]
    assert_close(r, a[idx], "float32")
    # basic indexing gives a view: writing through it is visible in x
    if r.numel() > 0:
        r.fill_(1000.0)
        expected = a.copy()
        expected[idx] = 1000.0
        assert_close(x, expected, "float32")


@SETTINGS
@given(case=basic_case(), value=st.floats(-10, 10, width=32))
def test_basic_index_assignment(lib, case, value):
    shape, idx = case
    a = _arange_array(shape)
    x = tensor(lib, a)
    x[idx] = value
    expected = a.copy()
    expected[idx] = value
    assert_close(x, expected, "float32")


# ---------------------------------------------------------------------------------------------
# advanced indexing


@st.composite
def advanced_case(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    k = draw(st.integers(0, 4))
    idx = []
    used_bool = False
    for size in shape[: draw(st.integers(1, len(shape)))]:
        kind = draw(st.sampled_from(["slice", "array", "array", "ellipsis_none", "bool"]))
        if kind == "slice":
            start = draw(st.integers(-size, size))
            step = draw(st.integers(1, 3))
            idx.append(slice(start, None, step))
        elif kind == "array":
            idx.append(np.array(draw(st.lists(st.integers(-size, size - 1), min_size=k,
                                              max_size=k)), dtype=np.int64))
        elif kind == "bool" and not used_bool:
            used_bool = True
            idx.append(np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size))))
        else:
            idx.append(slice(None))
    if not any(isinstance(i, np.ndarray) for i in idx):
        idx[0] = np.array(draw(st.lists(st.integers(-shape[0], shape[0] - 1), min_size=k,
                                        max_size=k)), dtype=np.int64)
    if draw(st.booleans()):
        idx.insert(draw(st.integers(0, len(idx))), None)
    return shape, tuple(idx)


def _lib_index(lib, idx):
    return tuple(lib.tensor(i) if isinstance(i, np.ndarray) else i for i in idx)


def _consistent(a, idx):
    # a bool mask and integer arrays must broadcast together (NumPy rule, also torch's)
    try:
        a[idx]
        return True
    except IndexError:
        return False


@SETTINGS
@given(case=advanced_case(), layout=st.sampled_from(["contig", "transposed", "stepped"]))
def test_advanced_indexing(lib, case, layout):
    shape, idx = case
    a = _arange_array(shape)
    if not _consistent(a, idx):
        with pytest.raises(IndexError):
            tensor(lib, a, "float32", layout)[_lib_index(lib, idx)]
        return
    r = tensor(lib, a, "float32", layout)[_lib_index(lib, idx)]
    assert_close(r, a[idx], "float32")


@SETTINGS
@given(case=advanced_case(), value=st.integers(-5, 5))
def test_advanced_index_assignment(lib, case, value):
    shape, idx = case
    a = _arange_array(shape)
    if not _consistent(a, idx):
        return
    x = tensor(lib, a)
    x[_lib_index(lib, idx)] = value  # a scalar: duplicates in the index are harmless
    expected = a.copy()
    expected[idx] = value
    assert_close(x, expected, "float32")


# ---------------------------------------------------------------------------------------------
# type promotion (compared with torch through dtype names)

operand = st.one_of(
    st.tuples(st.just("tensor"), st.sampled_from(ALL_DTYPES)),
    st.tuples(st.just("0d"), st.sampled_from(ALL_DTYPES)),
    st.tuples(st.just("scalar"), st.sampled_from([True, False, 0, 3, -2, 1.5, -0.25])),
)


def _make(mod, spec):
    kind, v = spec
    if kind == "tensor":
        return mod.ones(2, dtype=getattr(mod, v))
    if kind == "0d":
        return mod.ones((), dtype=getattr(mod, v))
    return v


PROMO_OPS = [
    ("add", lambda a, b: a + b),
    ("mul", lambda a, b: a * b),
    ("truediv", lambda a, b: a / b),
    ("sub", lambda a, b: a - b),
    ("eq", lambda a, b: a == b),
]


@SETTINGS
@given(x=operand, y=operand, op=st.sampled_from(PROMO_OPS))
def test_type_promotion_matches_torch(lib, x, y, op):
    if x[0] == "scalar" and y[0] == "scalar":
        assert dtype_name(lib.result_type(x[1], y[1])) == dtype_name(
            torch.result_type(x[1], y[1]))
        return
    tx, ty = _make(torch, x), _make(torch, y)
    lx, ly = _make(lib, x), _make(lib, y)
    try:
        want = op[1](tx, ty)
    except RuntimeError as e:
        with pytest.raises(RuntimeError if isinstance(e, NotImplementedError) else type(e)):
            op[1](lx, ly)
        return
    got = op[1](lx, ly)
    assert dtype_name(got.dtype) == dtype_name(want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    assert to_np(got.double() if dtype_name(got.dtype) == "bfloat16" else got).tolist() == (
        want.double() if want.dtype == torch.bfloat16 else want).numpy().tolist()
    assert dtype_name(lib.result_type(lx, ly)) == dtype_name(torch.result_type(tx, ty))


@SETTINGS
@given(a=st.sampled_from(ALL_DTYPES), b=st.sampled_from(ALL_DTYPES),
       c=st.sampled_from(ALL_DTYPES))
def test_promote_types_is_associative_and_commutative(lib, a, b, c):
    A, B, C = (getattr(lib, n) for n in (a, b, c))
    assert lib.promote_types(A, B) == lib.promote_types(B, A)
    assert lib.promote_types(lib.promote_types(A, B), C) == lib.promote_types(
        A, lib.promote_types(B, C))
    assert dtype_name(lib.promote_types(A, B)) == dtype_name(
        torch.promote_types(getattr(torch, a), getattr(torch, b)))


@SETTINGS
@given(dtypes=st.lists(st.sampled_from(ALL_DTYPES), min_size=1, max_size=4))
def test_cat_promotes_like_torch(lib, dtypes):
    want = torch.cat([torch.ones(1, dtype=getattr(torch, d)) for d in dtypes]).dtype
    got = lib.cat([lib.ones(1, dtype=getattr(lib, d)) for d in dtypes]).dtype
    assert dtype_name(got) == dtype_name(want)
