"""Indexing (read and write) and index-based ops: gather/scatter, masks, sort, topk."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import (
    ALL_DTYPES,
    IS_TORCH,
    assert_close,
    dtype_name,
    rand_array,
    tensor,
    to_np,
)


def to_lib_index(lib, idx):
    """Translate a NumPy index expression into one for lib (arrays become tensors)."""
    if isinstance(idx, tuple):
        return tuple(to_lib_index(lib, i) for i in idx)
    if isinstance(idx, np.ndarray):
        return lib.tensor(idx)
    return idx


I = np.array  # noqa: E741 - short alias for index arrays in the table below

# (id, index expression on a (4, 5, 6) array)
INDICES = [
    ("int", 1),
    ("neg_int", -1),
    ("two_ints", (2, -3)),
    ("three_ints", (0, 1, 2)),
    ("slice", slice(1, 3)),
    ("slice_step", (slice(None), slice(None, None, 2))),
    ("slice_step3", (slice(0, 4, 3), slice(1, 5, 2), 0)),
    ("slice_neg", (slice(-3, -1), slice(None, -2))),
    ("slice_oob", (slice(2, 100), slice(-100, 2))),
    ("slice_empty", slice(3, 1)),
    ("none", None),
    ("none_mid", (slice(None), None, 1)),
    ("ellipsis", Ellipsis),
    ("ellipsis_int", (Ellipsis, 2)),
    ("int_ellipsis_none", (1, Ellipsis, None)),
    ("ellipsis_mid", (0, Ellipsis, 1)),
    ("bool_mask_full", "mask3"),
    ("bool_mask_2d", "mask2"),
    ("bool_mask_1d", "mask1"),
    ("bool_mask_mid", (slice(None), "maskd1")),
    ("int_array", I([0, 2, 3])),
    ("int_array_neg", I([-1, 0, -4])),
    ("int_array_dup", I([1, 1, 0])),
    ("int_array_2d", I([[0, 1], [3, 2]])),
    ("two_arrays", (I([0, 1, 3]), I([4, 0, 2]))),
    ("two_arrays_bcast", (I([[0], [3]]), I([1, 2, 4]))),
    ("adv_then_basic", (I([0, 2]), slice(1, 4))),
    ("basic_then_adv", (slice(None), I([4, 0]))),
    ("adv_sep_basic", (I([0, 1]), slice(None), I([5, 0]))),
    ("adv_adjacent_mid", (slice(None), I([1, 2]), I([0, 5]))),
    ("adv_int_adjacent", (I([0, 3]), 2)),
    ("ellipsis_adv", (Ellipsis, I([0, 1]))),
    ("adv_none", (I([0, 1]), None)),
    ("mask_and_array", ("maskd0", I([4]))),
    ("scalar_tensor", I(2)),
    ("empty_array", I([], dtype=np.int64)),
]


def _materialize(idx, rng, shape=(4, 5, 6)):
    """Replace mask placeholders by random boolean arrays."""
    def one(i):
        if isinstance(i, str):
            if i == "mask3":
                return rng.random(shape) < 0.5
            if i == "mask2":
                return rng.random(shape[:2]) < 0.5
            if i == "mask1":
                return np.array([True, False, True, True])
            if i == "maskd1":
                return np.array([False, True, True, False, True])
            if i == "maskd0":
                return np.array([False, True, False, False])
        return i
    if isinstance(idx, tuple):
        return tuple(one(i) for i in idx)
    return one(idx)


@pytest.mark.parametrize("layout", ["contig", "transposed", "stepped"])
@pytest.mark.parametrize("key,idx", INDICES, ids=[i[0] for i in INDICES])
def test_getitem(lib, rng, key, idx, layout):
    a = rand_array(rng, (4, 5, 6), "float32")
    idx = _materialize(idx, rng)
    x = tensor(lib, a, "float32", layout)
    r = x[to_lib_index(lib, idx)]
    assert_close(r, a[idx], "float32")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("key", ["slice_step", "int_array", "bool_mask_full", "adv_sep_basic"])
def test_getitem_dtypes(lib, rng, key, dtype):
    idx = _materialize(dict(INDICES)[key], rng)
    a = rand_array(rng, (4, 5, 6), dtype)
    assert_close(tensor(lib, a, dtype)[to_lib_index(lib, idx)], a[idx], dtype)


def test_int_is_basic_next_to_separated_advanced(lib, rng):
    # Unlike NumPy, an integer index is basic indexing (a select), so it does not separate
    # advanced indices or count as one: x[1, :, idx] == x[1][:, idx].
    a = rand_array(rng, (4, 5, 6), "float32")
    x = tensor(lib, a)
    assert_close(x[1, :, lib.tensor([0, 3])], a[1][:, [0, 3]], "float32")
    assert_close(x[lib.tensor([0, 3]), :, 2], a[[0, 3]][:, :, 2], "float32")


def test_basic_indexing_returns_views(lib):
    x = lib.zeros(4, 5)
    v = x[1:3, ::2]
    v[0, 0] = 5.0
    assert float(x[1, 0]) == 5.0
    x[2][4] = 7.0  # chained basic indexing writes through
    assert float(x[2, 4]) == 7.0
    x[..., 1] = 1.0
    assert to_np(x)[:, 1].tolist() == [1.0] * 4
    # advanced indexing copies
    a = x[lib.tensor([0, 1])]
    a.fill_(-1.0)
    assert float(x[0, 0]) == 0.0
    # an integer index gives a 0-d view
    s = x[3, 3]
    assert tuple(s.shape) == ()
    s.fill_(2.0)
    assert float(x[3, 3]) == 2.0


def test_index_with_lists_and_tensors(lib, rng):
    a = rand_array(rng, (5, 3), "int64")
    x = tensor(lib, a)
    assert_close(x[[0, 4, 2]], a[[0, 4, 2]], "int64")
    assert_close(x[lib.tensor([0, 4, 2], dtype=lib.int32)], a[[0, 4, 2]], "int64")
    assert_close(x[[True, False, True, False, True]], a[[True, False, True, False, True]],
                 "int64")
    assert_close(x[lib.tensor(1)], a[1], "int64")
    assert_close(x[lib.tensor([[1]])], a[[[1]]], "int64")


def test_zero_dim_indexing(lib):
    s = lib.tensor(3.0)
    assert_close(s[()], np.array(3.0), "float32")
    assert_close(s[None], np.array([3.0]), "float32")
    assert_close(s[...], np.array(3.0), "float32")
    assert_close(s[lib.tensor(True)], np.array([3.0]), "float32")
    assert_close(s[lib.tensor(False)], np.zeros(0), "float32")
    with pytest.raises(IndexError):
        s[0]


OUT_OF_RANGE = [
    ("int", lambda x: x[4]),
    ("neg_int", lambda x: x[-5]),
    ("second_dim", lambda x: x[0, 5]),
    ("neg_second_dim", lambda x: x[:, -6]),
    ("tensor_index", lambda x: x[x.new_tensor([0, 4]).long()]),
    ("list_index", lambda x: x[[1, -5]]),
    ("too_many", lambda x: x[0, 0, 0]),
    ("mask_shape", lambda x: x[x.new_tensor([True, False]).bool()]),
    ("float_index", lambda x: x[1.5]),
]


@pytest.mark.parametrize("name,fn", OUT_OF_RANGE, ids=[o[0] for o in OUT_OF_RANGE])
def test_index_errors(lib, name, fn):
    x = lib.zeros(4, 5)
    with pytest.raises(IndexError):
        fn(x)


def test_index_error_messages(lib):
    x = lib.zeros(4, 5)
    with pytest.raises(IndexError, match=r"(?s)4.*(0|dim)|out of (range|bounds)"):
        x[4]
    with pytest.raises(IndexError, match=r"(?i)(out of (range|bounds)).*|.*5"):
        x[0, 5]


def test_setitem_out_of_range(lib):
    x = lib.zeros(4, 5)
    with pytest.raises(IndexError):
        x[4] = 1.0
    with pytest.raises(IndexError):
        x[lib.tensor([0, 9])] = 1.0


# ---------------------------------------------------------------------------------------------
# assignment

SETITEMS = [
    ("int_scalar", 1, "scalar"),
    ("slice_tensor", (slice(1, 3), slice(None, None, 2)), "full"),
    ("slice_bcast_row", (slice(None), slice(1, 4)), "row"),
    ("ellipsis", (Ellipsis, 0), "scalar"),
    ("none", (None, 1), "row"),
    ("mask", "mask2", "scalar"),
    ("mask_values", "mask2", "full"),
    ("int_array", I([3, 0]), "row"),
    ("int_array_full", I([3, 0]), "full"),
    ("two_arrays", (I([0, 1, 3]), I([4, 0, 2])), "full"),
    ("adv_basic", (slice(1, 3), I([0, 4])), "full"),
    ("adv_sep", (I([0, 2]), slice(None), I([1, 2])), "scalar"),
    ("neg", (-1, -1), "scalar"),
    ("tensor0d", (I(2),), "row"),
]


@pytest.mark.parametrize("layout", ["contig", "transposed"])
@pytest.mark.parametrize("key,idx,kind", SETITEMS, ids=[s[0] for s in SETITEMS])
def test_setitem(lib, rng, key, idx, kind, layout):
    a = rand_array(rng, (4, 5, 3), "float32")
    idx = _materialize(idx, rng, (4, 5, 3))
    x = tensor(lib, a, "float32", layout)
    target_shape = a[idx].shape
    if kind == "scalar":
        value_np = np.float32(2.5)
        value = 2.5
    elif kind == "row":
        value_np = rand_array(rng, target_shape[-1:], "float32")
        value = tensor(lib, value_np)
    else:
        value_np = rand_array(rng, target_shape, "float32")
        value = tensor(lib, value_np)
    v0 = x._version
    x[to_lib_index(lib, idx)] = value
    expected = a.copy()
    expected[idx] = value_np
    assert_close(x, expected, "float32")
    assert x._version > v0


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_setitem_dtypes_and_casting(lib, rng, dtype):
    a = rand_array(rng, (3, 4), dtype)
    x = tensor(lib, a, dtype)
    src = rand_array(rng, (4,), "float64")
    x[1] = tensor(lib, src, "float64")  # the value is cast to x's dtype
    x[0, 0] = 1
    expected = a.copy()
    if dtype == "bool":
        expected[1] = src != 0
    elif dtype.startswith(("int", "uint")):
        expected[1] = np.trunc(src).astype(np.int64).astype(a.dtype)
    else:
        from conftest import round_to

        expected[1] = round_to(src, dtype)
    expected[0, 0] = 1
    assert_close(x, expected, dtype)
    assert dtype_name(x.dtype) == dtype


def test_masked_assignment(lib, rng):
    a = rand_array(rng, (5, 6), "float32")
    x = tensor(lib, a)
    x[x > 0] = 0.0
    np.testing.assert_array_equal(to_np(x), np.where(a > 0, 0, a))
    y = tensor(lib, a)
    m = a < 0
    y[tensor(lib, m)] = tensor(lib, np.arange(m.sum(), dtype=np.float32))
    e = a.copy()
    e[m] = np.arange(m.sum())
    assert_close(y, e, "float32")
    with pytest.raises(RuntimeError):
        y[tensor(lib, m)] = lib.ones(m.sum() + 1)


def test_setitem_shape_mismatch(lib):
    x = lib.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"(?s)3.*2, 4|2, 4.*3|shape"):
        x[lib.tensor([1, 2])] = lib.ones(3)
    with pytest.raises(RuntimeError):
        x[0] = lib.ones(5)
    with pytest.raises(RuntimeError):
        x[:, :2] = lib.ones(3, 3)


_DTYPES_MSG = "Index put requires the source and destination dtypes match"


@pytest.mark.parametrize("name", ["int index", "list", "mask and int", "None and int", "int32",
                                  "mask, many values", "two masks", "True and mask", "index_put_"])
def test_index_put_of_another_dtype_is_refused(lib, name):
    # a tensor value (not a number) put through index tensors must have self's dtype
    x = lib.zeros(4, 3, dtype=lib.float16)
    m = lib.tensor([True, False, True, False])
    v = lib.tensor(1.5, dtype=lib.float64)
    before = to_np(x).copy()
    with pytest.raises(RuntimeError, match=_DTYPES_MSG + ", got Half for the destination and "
                                           "(Double|Float) for the source"):
        if name == "int index":
            x[lib.tensor([0, 2])] = v
        elif name == "list":
            x[[0, 1]] = v
        elif name == "mask and int":
            x[m, lib.tensor([0, 1])] = v
        elif name == "None and int":
            x[None, lib.tensor([0])] = v
        elif name == "int32":
            x[lib.tensor([0, 1], dtype=lib.int32)] = v
        elif name == "mask, many values":
            x[m] = lib.ones(3)
        elif name == "two masks":
            x[m, lib.tensor([True, False, True])] = v
        elif name == "True and mask":
            x[True, m] = v
        else:
            x.index_put_((lib.tensor([0]),), lib.tensor(1.0))
    np.testing.assert_array_equal(to_np(x), before)


@pytest.mark.parametrize("name", ["number", "numpy number", "same dtype", "mask, one value",
                                  "mask and slice", "slice and mask", "basic index", "True"])
def test_setitem_that_converts_its_value(lib, name):
    x = lib.zeros(4, 3, dtype=lib.float16)
    m = lib.tensor([True, False, True, False])
    v = lib.tensor(1.5, dtype=lib.float64)
    expected = np.zeros((4, 3), np.float16)
    if name == "number":
        x[lib.tensor([0])] = 1.5
        expected[0] = 1.5
    elif name == "numpy number":
        x[lib.tensor([0])] = np.float64(1.5)
        expected[0] = 1.5
    elif name == "same dtype":
        x[lib.tensor([0])] = lib.tensor(1.5, dtype=lib.float16)
        expected[0] = 1.5
    elif name == "mask, one value":
        x[m] = lib.ones(1, 1)
        expected[[0, 2]] = 1
    elif name == "mask and slice":
        x[m, :] = v
        expected[[0, 2]] = 1.5
    elif name == "slice and mask":
        x[:, lib.tensor([True, False, True])] = v
        expected[:, [0, 2]] = 1.5
    elif name == "basic index":
        x[1:3] = v
        expected[1:3] = 1.5
    else:
        x[True] = v
        expected[:] = 1.5
    np.testing.assert_array_equal(to_np(x), expected)


# ---------------------------------------------------------------------------------------------
# gather / scatter / index_select / index_add / masked ops


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool", "float16",
                                   "uint8", "bfloat16"])
def test_gather(lib, rng, dtype, dim):
    a = rand_array(rng, (4, 5), dtype)
    shape = (3, 5) if dim == 0 else (4, 3)
    idx = rng.integers(0, a.shape[dim], size=shape)
    r = lib.gather(tensor(lib, a, dtype), dim, lib.tensor(idx))
    assert_close(r, np.take_along_axis(a, idx, dim), dtype)
    r2 = tensor(lib, a, dtype, "transposed").gather(dim, tensor(lib, idx, "int64", "transposed"))
    assert_close(r2, np.take_along_axis(a, idx, dim), dtype)


def test_take_along_dim(lib, rng):
    a = rand_array(rng, (4, 5), "float32")
    idx = np.argsort(a, axis=1)
    r = lib.take_along_dim(tensor(lib, a), lib.tensor(idx), dim=1)
    assert_close(r, np.take_along_axis(a, idx, 1), "float32")
    flat = lib.take_along_dim(tensor(lib, a), lib.tensor([3, 0]))
    assert_close(flat, a.reshape(-1)[[3, 0]], "float32")


def _scatter_ref(a, dim, idx, src, add):
    out = a.astype(np.float64).copy()
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[dim] = idx[pos]
        if add:
            out[tuple(tgt)] += src[pos]
        else:
            out[tuple(tgt)] = src[pos]
    return out


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_scatter_and_scatter_add(lib, rng, dtype, dim):
    a = rand_array(rng, (4, 5), dtype)
    src = rand_array(rng, (3, 4), dtype)
    # scatter: unique targets along dim so that the result is deterministic
    n = a.shape[dim]
    idx = np.stack([rng.permutation(n)[:3 if dim == 0 else 4] for _ in range(4 if dim == 0
                                                                                  else 3)])
    idx = idx.T if dim == 0 else idx
    assert idx.shape == (3, 4)
    r = lib.scatter(tensor(lib, a, dtype), dim, lib.tensor(idx), tensor(lib, src, dtype))
    assert_close(r, _scatter_ref(a, dim, idx, src, False), dtype)
    x = tensor(lib, a, dtype)
    assert x.scatter_(dim, lib.tensor(idx), tensor(lib, src, dtype)) is x
    assert_close(x, _scatter_ref(a, dim, idx, src, False), dtype)
    # scalar value
    r = tensor(lib, a, dtype).scatter(dim, lib.tensor(idx), 7)
    assert_close(r, _scatter_ref(a, dim, idx, np.full(idx.shape, 7), False), dtype)
    # scatter_add accumulates duplicates
    idx2 = rng.integers(0, n, size=(3, 4))
    r = lib.scatter_add(tensor(lib, a, dtype), dim, lib.tensor(idx2), tensor(lib, src, dtype))
    assert_close(r, _scatter_ref(a, dim, idx2, src, True), dtype)
    y = tensor(lib, a, dtype, "transposed")
    y.scatter_add_(dim, lib.tensor(idx2), tensor(lib, src, dtype))
    assert_close(y, _scatter_ref(a, dim, idx2, src, True), dtype)


def test_scatter_index_out_of_range(lib):
    with pytest.raises(RuntimeError):
        lib.zeros(3).scatter(0, lib.tensor([5]), lib.ones(1))
    with pytest.raises(RuntimeError):
        lib.zeros(3).gather(0, lib.tensor([3]))


@pytest.mark.parametrize("self_shape,n", [((1000,), 200_000), ((50_000,), 1000),
                                          ((40, 300), 50_000)], ids=str)
@pytest.mark.parametrize("op", ["scatter_", "scatter_value", "scatter_add_"])
def test_in_place_scatter_with_a_bad_index_leaves_self(lib, rng, self_shape, n, op):
    """Many values into a small self (self is copied and put back on error) and few into a
    large one (the index is checked before writing): PyTorch's error either way, and self as
    it was (Ember's promise: PyTorch's own kernels stop half way, having written the values
    before the bad index)."""
    a = rng.standard_normal(self_shape)
    size = self_shape[0]
    idx = rng.integers(0, size, (n,) + self_shape[1:])
    idx.reshape(-1)[n // 2] = size + 3
    src = rng.standard_normal(idx.shape)
    x = lib.tensor(a)
    i, v = lib.tensor(idx), lib.tensor(src)
    message = f"index {size + 3} is out of bounds for dimension 0 with size {size}"
    with pytest.raises(RuntimeError, match=message):
        if op == "scatter_value":
            x.scatter_(0, i, 2.5)
        else:
            getattr(x, op)(0, i, v)
    if not IS_TORCH:
        np.testing.assert_array_equal(to_np(x), a)
    # and the good part of the index still writes everything when it is alone
    good = np.where(idx == size + 3, 0, idx)
    y = lib.tensor(a).scatter_add_(0, lib.tensor(good), v)
    want = a.copy()
    np.add.at(want, (good,) + tuple(np.indices(good.shape)[1:]), src)
    np.testing.assert_allclose(to_np(y), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16", "uint8"])
def test_index_select(lib, rng, dim, dtype):
    a = rand_array(rng, (4, 5), dtype)
    idx = rng.integers(0, a.shape[dim], size=6)
    assert_close(lib.index_select(tensor(lib, a, dtype), dim, lib.tensor(idx)),
                 np.take(a, idx, axis=dim), dtype)
    assert_close(tensor(lib, a, dtype, "transposed").index_select(dim, lib.tensor(idx)),
                 np.take(a, idx, axis=dim), dtype)
    assert_close(tensor(lib, a, dtype).index_select(dim, lib.tensor([], dtype=lib.int64)),
                 np.take(a, np.zeros(0, np.int64), axis=dim), dtype)
    with pytest.raises((IndexError, RuntimeError)):
        lib.index_select(tensor(lib, a, dtype), dim, lib.tensor([0, 9]))


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_index_add(lib, rng, dim, dtype):
    a = rand_array(rng, (4, 5), dtype)
    idx = rng.integers(0, a.shape[dim], size=3)
    src_shape = (3, 5) if dim == 0 else (4, 3)
    src = rand_array(rng, src_shape, dtype)
    expected = a.astype(np.float64).copy()
    if dim == 0:
        np.add.at(expected, idx, src)
    else:
        np.add.at(expected, (slice(None), idx), src)
    r = lib.index_add(tensor(lib, a, dtype), dim, lib.tensor(idx), tensor(lib, src, dtype))
    assert_close(r, expected, dtype)
    x = tensor(lib, a, dtype)
    assert x.index_add_(dim, lib.tensor(idx), tensor(lib, src, dtype)) is x
    assert_close(x, expected, dtype)
    expected2 = a.astype(np.float64).copy()
    if dim == 0:
        np.add.at(expected2, idx, 2 * src)
    else:
        np.add.at(expected2, (slice(None), idx), 2 * src)
    r2 = tensor(lib, a, dtype).index_add(dim, lib.tensor(idx), tensor(lib, src, dtype), alpha=2)
    assert_close(r2, expected2, dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_masked_fill_and_select(lib, rng, dtype):
    a = rand_array(rng, (4, 5), dtype)
    m = rng.random((4, 5)) < 0.4
    mr = rng.random((5,)) < 0.5
    fill = True if dtype == "bool" else 3
    r = lib.masked_fill(tensor(lib, a, dtype), lib.tensor(m), fill)
    assert_close(r, np.where(m, fill, a), dtype)
    r = tensor(lib, a, dtype).masked_fill(lib.tensor(mr), lib.tensor(fill))
    assert_close(r, np.where(mr, fill, a), dtype)
    x = tensor(lib, a, dtype, "transposed")
    assert x.masked_fill_(lib.tensor(m), fill) is x
    assert_close(x, np.where(m, fill, a), dtype)
    s = lib.masked_select(tensor(lib, a, dtype), lib.tensor(m))
    assert_close(s, a[m], dtype)
    s2 = tensor(lib, a, dtype).masked_select(lib.tensor(mr))
    assert_close(s2, np.broadcast_to(a, (4, 5))[np.broadcast_to(mr, (4, 5))], dtype)


def test_masked_fill_requires_bool_mask(lib):
    with pytest.raises(RuntimeError):
        lib.zeros(3).masked_fill(lib.tensor([1, 0, 1]), 1.0)


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (0, 3), ()], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "uint8", "float16"])
def test_nonzero(lib, rng, shape, dtype):
    a = rand_array(rng, shape, dtype)
    a = np.where(rng.random(shape) < 0.5, a, 0).astype(a.dtype)
    nz = lib.nonzero(tensor(lib, a, dtype))
    assert dtype_name(nz.dtype) == "int64"
    assert_close(nz, np.argwhere(a), "int64")
    tup = tensor(lib, a, dtype).nonzero(as_tuple=True)
    assert isinstance(tup, tuple)
    expected = np.nonzero(np.atleast_1d(a)) if a.ndim == 0 else np.nonzero(a)
    assert len(tup) == len(expected)
    for t, e in zip(tup, expected):
        assert_close(t, e, "int64")
    if len(shape) >= 2:
        assert_close(tensor(lib, a, dtype, "transposed").nonzero(), np.argwhere(a), "int64")


# ---------------------------------------------------------------------------------------------
# sort / argsort / topk


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "int8",
                                   "float16", "bfloat16", "int16"])
def test_sort_stable(lib, rng, dtype, dim, descending):
    a = rand_array(rng, (6, 7), dtype)  # small integer range: many ties
    key = -a.astype(np.float64) if descending else a.astype(np.float64)
    idx = np.argsort(key, axis=dim, kind="stable")
    vals, ind = tensor(lib, a, dtype).sort(dim=dim, descending=descending, stable=True)
    assert_close(vals, np.take_along_axis(a, idx, dim), dtype)
    assert_close(ind, idx, "int64")
    r = lib.sort(tensor(lib, a, dtype, "transposed"), dim=dim, descending=descending,
                 stable=True)
    assert_close(r.values, np.take_along_axis(a, idx, dim), dtype)
    assert_close(r.indices, idx, "int64")
    assert_close(lib.argsort(tensor(lib, a, dtype), dim=dim, descending=descending, stable=True),
                 idx, "int64")


def test_sort_unstable_values(lib, rng):
    a = rand_array(rng, (100,), "int32")
    v, i = tensor(lib, a).sort()
    assert_close(v, np.sort(a), "int32")
    assert to_np(tensor(lib, a)[i]).tolist() == np.sort(a).tolist()
    assert sorted(to_np(i).tolist()) == list(range(100))


def test_sort_nan_and_special(lib):
    x = lib.tensor([3.0, float("nan"), -float("inf"), 1.0, float("inf")])
    v, i = x.sort()
    got = to_np(v)
    np.testing.assert_array_equal(got[:4], [-np.inf, 1.0, 3.0, np.inf])
    assert np.isnan(got[4])
    v, _ = x.sort(descending=True)
    assert np.isnan(to_np(v)[0])
    assert tuple(lib.zeros(0).sort().values.shape) == (0,)
    assert to_np(lib.tensor(2.0).sort().values).tolist() == 2.0


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("k", [1, 3, 5])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "float16"])
def test_topk(lib, rng, dtype, k, dim, largest):
    n = 6 * 8
    a = (rng.permutation(n) - 20).reshape(6, 8).astype(np.float64)  # distinct values
    a = a.astype(dtype)
    order = np.argsort(-a if largest else a, axis=dim)
    top = np.take(order, np.arange(k), axis=dim)
    vals, idx = tensor(lib, a, dtype).topk(k, dim=dim, largest=largest, sorted=True)
    assert_close(vals, np.take_along_axis(a, top, dim), dtype)
    assert_close(idx, top, "int64")
    r = lib.topk(tensor(lib, a, dtype, "transposed"), k, dim, largest, True)
    assert_close(r.values, np.take_along_axis(a, top, dim), dtype)
    # sorted=False: the same set of values
    v2, i2 = tensor(lib, a, dtype).topk(k, dim=dim, largest=largest, sorted=False)
    assert_close(v2.sort(dim=dim, descending=largest).values, np.take_along_axis(a, top, dim),
                 dtype)
    np.testing.assert_array_equal(np.take_along_axis(a, to_np(i2), dim), to_np(v2))


def test_topk_errors(lib):
    with pytest.raises(RuntimeError):
        lib.zeros(3).topk(4)
    with pytest.raises(IndexError):
        lib.zeros(3).topk(1, dim=2)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_matches_numpy(lib, accumulate):
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    rows = np.array([0, 2, 0])
    vals = np.arange(12, 24, dtype=np.float32).reshape(3, 4)
    want = base.copy()
    if accumulate:
        np.add.at(want, rows, vals)
    else:
        want[rows] = vals
    x = lib.tensor(base)
    v0 = x._version
    r = x.index_put_((lib.tensor(rows),), lib.tensor(vals), accumulate=accumulate)
    assert r is x and x._version > v0
    if accumulate:  # with repeated indices only the accumulating form is deterministic
        np.testing.assert_array_equal(x.numpy(), want)
    # the out-of-place form leaves self alone; a bool mask covers its dims
    mask = np.array([True, False, True])
    y = lib.tensor(base).index_put((lib.tensor(mask),), lib.tensor(-1.0))
    expect = base.copy()
    expect[mask] = -1.0
    np.testing.assert_array_equal(y.numpy(), expect)
    with pytest.raises(IndexError):
        lib.tensor(base).index_put_((lib.tensor([1.5]),), lib.tensor(1.0))


# ---- negative slice steps: an Ember extension (PyTorch refuses them; the array API and
# NumPy need them). The result is a copy; assignment writes through.

NEGATIVE_KEYS = [
    (slice(None, None, -1),),
    (slice(8, 2, -2),),
    (Ellipsis, slice(None, None, -3)),
    (0, slice(None, None, -1), slice(1, None, -1)),
    (None, slice(None, None, -1), 1),
    (slice(None), slice(2, 0, -1), slice(None, None, 2)),
    (slice(1, 5, -1),),  # empty
]


@pytest.mark.parametrize("key", NEGATIVE_KEYS, ids=str)
def test_negative_step_getitem_and_setitem(ember_only, key):
    import ember_tensor as et

    a = np.arange(2 * 9 * 4, dtype=np.float64).reshape(2, 9, 4)
    x = et.from_numpy(a.copy())
    got = x[key]
    assert np.array_equal(got.numpy(), a[key])
    assert not np.shares_memory(got.numpy(), x.numpy()) or got.numel() <= 1
    b = a.copy()
    value = np.arange(b[key].size, dtype=np.float64).reshape(b[key].shape) + 1000
    b[key] = value
    x[key] = et.from_numpy(value)
    assert np.array_equal(x.numpy(), b)
    x = et.from_numpy(a.copy())
    x[key] = 7.0
    b = a.copy()
    b[key] = 7.0
    assert np.array_equal(x.numpy(), b)


def test_negative_step_with_tensor_index_is_a_clear_error(ember_only):
    import ember_tensor as et

    x = et.arange(12.0).reshape(3, 4)
    with pytest.raises(IndexError, match="negative step cannot be combined with tensor"):
        x[::-1, et.tensor([0, 1])]


def test_movedim_of_a_0d_tensor(lib):
    t = lib.tensor(1.5)
    assert t.movedim(0, -1).item() == 1.5
    with pytest.raises(IndexError):
        t.movedim(1, 0)
