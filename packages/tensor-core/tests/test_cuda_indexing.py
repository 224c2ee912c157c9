"""The [] operator on CUDA tensors against the CPU: x[key], x[key] = value and
_index_add_key_ (the backward of __getitem__, through autograd) for every key kind the CPU
takes: ints, slices (negative steps too), None, Ellipsis, Python bools, integer tensors
(int64, int32, non-contiguous, 0-d), bool and uint8 masks, lists and NumPy arrays. Index
tensors live on the CPU or on the device (both are accepted, as in PyTorch); values are
Python numbers, CPU 0-d tensors, tensors on the device, CPU tensors with several elements,
lists and NumPy arrays. Errors must match the CPU's type and message.

Runs only where a GPU is present; skipped elsewhere (EMBER_CUDA_TEST_DEVICE=cpu runs them
against the CPU, which checks the tests themselves).
"""

import numpy as np
import pytest

import ember_tensor as et
from cuda_testing import (  # noqa: E402
    ALL,
    DEV,
    FLOATS,
    assert_equal,
    assert_same_error,
    host,
    on,
    requires_device,
    values,
)
from ember_tensor import _C

pytestmark = requires_device

SHAPE = (4, 5, 6)
I = np.array  # noqa: E741 - short alias for index arrays in the tables below


# ---------------------------------------------------------------------------------------------
# keys: a spec per key, built for a device (its tensors there, or on the CPU)


class T:
    """An index tensor of a key: kind 'int64', 'int32', 'uint8', 'bool', 'transposed' (a
    non-contiguous int64 view) or '0d'; built on the CPU or on the device."""

    def __init__(self, data, kind="int64"):
        self.data = np.asarray(data)
        self.kind = kind

    def build(self, device):
        if self.kind == "transposed":
            t = et.tensor(np.ascontiguousarray(self.data.T)).to(device).transpose(0, 1)
            return t
        t = et.tensor(self.data)
        if self.kind in ("int32", "uint8"):
            t = t.to(getattr(et, self.kind))
        return t.to(device)


class Mask:
    """A random bool mask of the given shape (the same on every device)."""

    def __init__(self, shape, seed=0):
        self.data = np.random.default_rng(seed).random(shape) < 0.5

    def build(self, device):
        return et.tensor(self.data).to(device)


def build(spec, device):
    """The key of spec with its tensors on device (lists, NumPy arrays, numbers as they are)."""
    if isinstance(spec, tuple):
        return tuple(build(s, device) for s in spec)
    if isinstance(spec, (T, Mask)):
        return spec.build(device)
    return spec


# (id, key spec on a (4, 5, 6) tensor, whether it repeats a position)
KEYS = [
    ("int", 1, False),
    ("neg_int", -1, False),
    ("two_ints", (2, -3), False),
    ("slice", slice(1, 3), False),
    ("slice_step", (slice(None), slice(None, None, 2)), False),
    ("slice_neg_step", (slice(None, None, -1), slice(4, 0, -2)), False),
    ("slice_oob", (slice(2, 100), slice(-100, 2)), False),
    ("slice_empty", slice(3, 1), False),
    ("none", None, False),
    ("none_mid", (slice(None), None, 1), False),
    ("ellipsis", Ellipsis, False),
    ("ellipsis_int", (Ellipsis, 2), False),
    ("int_ellipsis_none", (1, Ellipsis, None), False),
    ("true", True, False),
    ("false", (False, 0), False),
    ("tensor", T([0, 2, 3]), False),
    ("tensor_neg", T([-1, 0, -3]), False),
    ("tensor_dup", T([1, 1, 0, 1]), True),
    ("tensor_2d", T([[0, 1], [3, 2]]), False),
    ("tensor_int32", T([3, 0, 2], "int32"), False),
    ("tensor_transposed", T([[0, 3, 1], [2, 1, 1]], "transposed"), True),
    ("tensor_0d", T(2, "0d"), False),
    ("bool_0d", (T(True, "0d"), 1), False),
    ("empty_tensor", T(np.zeros(0, np.int64)), False),
    ("two_tensors", (T([0, 1, 3]), T([4, 0, 2])), False),
    ("two_tensors_bcast", (T([[0], [3]]), T([1, 2, 4])), False),
    ("adv_then_basic", (T([0, 2]), slice(1, 4)), False),
    ("basic_then_adv", (slice(None), T([4, 0])), False),
    ("adv_separated", (T([0, 1]), slice(None), T([5, 0])), False),
    ("adv_adjacent_mid", (slice(None), T([1, 2]), T([0, 5])), False),
    ("adv_int", (T([0, 3]), 2), False),
    ("int_between_adv", (T([0, 3]), 1, T([2, 5])), False),
    ("ellipsis_adv", (Ellipsis, T([0, 1])), False),
    ("adv_none", (T([0, 1]), None), False),
    ("mask_full", Mask(SHAPE, 1), False),
    ("mask_2d", Mask(SHAPE[:2], 2), False),
    ("mask_mid", (slice(None), Mask((5,), 3)), False),
    ("mask_uint8", T([1, 0, 1, 1], "uint8"), False),
    ("mask_none", T(np.zeros(4, bool), "bool"), False),
    ("mask_and_tensor", (Mask((4,), 4), T([4])), False),
    ("list", [0, 3, 1], False),
    ("list_neg_dup", [-1, 2, -1], True),
    ("list_bool", [True, False, True, True], False),
    ("list_nested", [[0, 1], [2, 3]], False),
    ("list_legacy_tuple", [slice(None), 1], False),
    ("numpy", I([2, 0]), False),
    ("numpy_int32_2d", I([[1], [3]], dtype=np.int32), False),
    ("numpy_bool", I([[True, False, True, False, True]] * 4), False),
    ("numpy_0d", (I(3), slice(None)), False),
    ("numpy_pair", (I([0, 1]), I([4, 3])), False),
]
KEY_IDS = [k[0] for k in KEYS]
WHERE = ["cpu", "dev"]  # where the key's index tensors live for the device run


def layout(base, kind):
    """A (4, 5, 6) view of base's values: contiguous, transposed or stepped."""
    if kind == "contig":
        return base
    if kind == "transposed":
        return (
            et.tensor(np.ascontiguousarray(host(base).transpose(2, 1, 0)))
            .to(base.dtype)
            .to(base.device.type)
            .transpose(0, 2)
        )
    stepped = et.zeros((4, 10, 6), dtype=base.dtype).to(base.device.type)
    stepped[:, ::2] = base
    return stepped[:, ::2]


def pair(shape, dtype, kind="contig", seed=0):
    """The same values on the CPU and on DEV, in the given layout."""
    a = values(shape, dtype, seed)
    return layout(a, kind), layout(on(a), kind)


def keys(spec, where):
    """The key for the CPU and for DEV (index tensors on the CPU or on DEV)."""
    return build(spec, "cpu"), build(spec, "cpu" if where == "cpu" else DEV)


# ---------------------------------------------------------------------------------------------
# x[key]


@pytest.mark.parametrize("kind", ["contig", "transposed", "stepped"])
@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("key,spec,dup", KEYS, ids=KEY_IDS)
def test_getitem_matches_cpu(key, spec, dup, where, kind):
    xc, xd = pair(SHAPE, et.float32, kind)
    kc, kd = keys(spec, where)
    assert_equal(xd[kd], xc[kc])


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("key", ["tensor_dup", "mask_full", "adv_separated", "slice_neg_step"])
def test_getitem_dtypes(key, dtype):
    spec = dict((k[0], k[1]) for k in KEYS)[key]
    xc, xd = pair(SHAPE, dtype, "transposed", seed=5)
    kc, kd = keys(spec, "dev")
    assert_equal(xd[kd], xc[kc])


def test_basic_keys_are_views_and_advanced_keys_copies():
    x = on(et.zeros(4, 5))
    v = x[1:3, ::2]
    v[0, 0] = 5.0
    assert float(x[1, 0]) == 5.0
    a = x[on(et.tensor([1, 2]))]
    a.fill_(-1.0)
    assert float(x[1, 0]) == 5.0
    assert a.device.type == DEV


def test_getitem_of_0d_tensors():
    for kd in [(), None, Ellipsis, True, False]:
        assert_equal(on(et.tensor(3.5))[kd], et.tensor(3.5)[kd])
    for b in [True, False]:
        assert_equal(on(et.tensor(3.5))[on(et.tensor(b))], et.tensor(3.5)[et.tensor(b)])


def test_getitem_large_multi_block():
    rng = np.random.default_rng(7)
    xc = values((1000, 300), et.float32, 3)
    xd = on(xc)
    rows = et.tensor(rng.integers(-1000, 1000, 50000))
    assert_equal(xd[on(rows)], xc[rows])
    cols = et.tensor(rng.integers(0, 300, (200, 1)))
    assert_equal(
        xd[on(rows[:200]).reshape(1, 200), cols.to(DEV)], xc[rows[:200].reshape(1, 200), cols]
    )
    mask = et.tensor(rng.random((1000, 300)) < 0.3)
    assert_equal(xd[on(mask)], xc[mask])
    assert_equal(xd[mask], xc[mask])  # a CPU mask


def test_getitem_empty_tensors():
    xc = et.zeros(0, 3)
    xd = on(xc)
    for kc in [
        et.tensor(np.zeros(0, np.int64)),
        et.tensor(np.zeros((0, 3), bool)),
        (slice(None), [0, 2]),
    ]:
        kd = (
            tuple(k.to(DEV) if isinstance(k, et.Tensor) else k for k in kc)
            if isinstance(kc, tuple)
            else kc.to(DEV)
        )
        assert_equal(xd[kd], xc[kc])


# ---------------------------------------------------------------------------------------------
# x[key] = value


def value_of(kind, shape, dtype):
    """The value of an assignment of the given kind for a target of shape, for the CPU and for
    DEV (a scalar kind is the same object on both)."""
    if kind == "number":
        v = 2 if dtype in (et.int64, et.int32, et.int16, et.int8, et.uint8) else 2.5
        if dtype == et.bool:
            v = True
        return v, v
    if kind == "cpu_0d":
        t = values((), dtype, 9)
        return t, t
    if kind == "dev_0d":
        t = values((), dtype, 9)
        return t, on(t)
    full = values(shape, dtype, 11)
    if kind == "dev":
        return full, on(full)
    if kind == "cpu":  # a CPU tensor with several elements is copied over
        return full, full
    if kind == "row":
        row = values(shape[-1:], dtype, 12)
        return row, on(row)
    if kind == "lead1":  # leading size-1 dims are ignored
        t = values((1, 1) + tuple(shape), dtype, 13)
        return t, on(t)
    if kind == "list":
        lst = host(full).tolist()
        return lst, lst
    if kind == "numpy":
        arr = host(full)
        return arr, arr
    raise AssertionError(kind)


VALUE_KINDS = ["number", "cpu_0d", "dev_0d", "dev", "cpu", "row", "lead1", "list", "numpy"]
SCALAR_KINDS = ["number", "cpu_0d", "dev_0d"]


@pytest.mark.parametrize("vkind", VALUE_KINDS)
@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("key,spec,dup", KEYS, ids=KEY_IDS)
def test_setitem_matches_cpu(key, spec, dup, where, vkind):
    if dup and vkind not in SCALAR_KINDS:
        pytest.skip("which of several values a repeated position gets is unspecified")
    xc, xd = pair(SHAPE, et.float32, "transposed")
    kc, kd = keys(spec, where)
    target = tuple(xc[kc].shape)
    if vkind == "row" and not target:
        pytest.skip("no row to broadcast")
    if vkind == "list" and 0 in target:
        pytest.skip("an empty nested list has shape (0,)")
    vc, vd = value_of(vkind, target, et.float32)
    v0 = xd._version
    xc[kc] = vc
    xd[kd] = vd
    assert_equal(xd, xc)
    assert xd._version > v0


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("key", ["slice_neg_step", "tensor", "mask_full", "adv_separated", "int"])
@pytest.mark.parametrize("vkind", ["number", "dev", "cpu_0d"])
def test_setitem_dtypes(key, dtype, vkind):
    spec = dict((k[0], k[1]) for k in KEYS)[key]
    xc, xd = pair(SHAPE, dtype, "stepped", seed=4)
    kc, kd = keys(spec, "dev")
    vc, vd = value_of(vkind, tuple(xc[kc].shape), dtype)
    xc[kc] = vc
    xd[kd] = vd
    assert_equal(xd, xc)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("key", ["slice_step", "tensor", "mask_2d"])
def test_setitem_casts_the_value(key, dtype):
    # Values of another dtype are cast to x's (non-negative integers, exact everywhere, and
    # into floating x halves) where PyTorch casts them: through basic indexing, a Python
    # number anywhere, and one element put by a mask. A tensor of more elements put through
    # index tensors or a mask is PyTorch's dtype error on both devices, x left as it was.
    spec = dict((k[0], k[1]) for k in KEYS)[key]
    xc, xd = pair(SHAPE, dtype, seed=6)
    kc, kd = keys(spec, "cpu")
    shape = tuple(xc[kc].shape)
    src = [et.tensor(np.random.default_rng(1).integers(0, 5, shape))]
    if dtype in FLOATS:
        src.append(values(shape, et.float64, 2))
    for s in src:
        for vd in [on(s), s, s[(0,) * len(shape)] if shape else s]:
            vc = vd.cpu()
            casts = key == "slice_step" or (key == "mask_2d" and vc.numel() == 1)
            if casts or vc.dtype == xc.dtype:
                xc[kc] = vc
                xd[kd] = vd
            else:
                for x, k, v in ((xc, kc, vc), (xd, kd, vd)):
                    with pytest.raises(RuntimeError, match="Index put requires the source and "
                                                           "destination dtypes match"):
                        x[k] = v
            assert_equal(xd, xc)
    xc[kc] = 3
    xd[kd] = 3
    assert_equal(xd, xc)


def test_setitem_masked_fill_and_mask_values():
    xc, xd = pair((5, 6), et.float32, seed=3)
    xc[xc > 0] = 0.0
    xd[xd > 0] = 0.0
    assert_equal(xd, xc)
    m = host(xc < 0)
    n = int(m.sum())
    vc = et.tensor(np.arange(n, dtype=np.float32))
    xc[et.tensor(m)] = vc
    xd[et.tensor(m)] = on(vc)  # a CPU mask, a DEV value
    assert_equal(xd, xc)
    xc[et.tensor(m)] = et.tensor(-1.0)
    xd[et.tensor(m)] = et.tensor(-1.0)  # a CPU mask and a CPU 0-d value
    assert_equal(xd, xc)


def test_setitem_large_multi_block():
    rng = np.random.default_rng(8)
    xc = values((1000, 300), et.float32, 1)
    xd = on(xc)
    rows = et.tensor(rng.permutation(1000)[:700])  # no repeats: the written values are defined
    v = values((700, 300), et.float32, 2)
    xc[rows] = v
    xd[on(rows)] = on(v)
    assert_equal(xd, xc)
    mask = et.tensor(rng.random((1000, 300)) < 0.4)
    xc[mask] = 7.0
    xd[mask] = 7.0
    assert_equal(xd, xc)
    xc[:, 1::3] = values((300 // 3,), et.float32, 3)
    xd[:, 1::3] = on(values((300 // 3,), et.float32, 3))
    assert_equal(xd, xc)


def test_setitem_from_overlapping_value():
    xc, xd = pair((6, 4), et.float32, seed=2)
    xc[1:5] = xc[0:4]
    xd[1:5] = xd[0:4]
    assert_equal(xd, xc)
    xc[et.tensor([5, 0])] = xc[1:3]
    xd[on(et.tensor([5, 0]))] = xd[1:3]
    assert_equal(xd, xc)


# ---------------------------------------------------------------------------------------------
# _index_add_key_ (the backward of __getitem__)


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("key,spec,dup", KEYS, ids=KEY_IDS)
def test_getitem_backward_matches_cpu(key, spec, dup, where, autograd):
    kc, kd = keys(spec, where)
    xc = et.randn(*SHAPE, requires_grad=True)
    xd = et.randn(*SHAPE, device=DEV, requires_grad=True)
    w = values(tuple(xc[kc].shape), et.float32, 3)  # halves: every sum is exact
    (xc[kc] * w).sum().backward()
    (xd[kd] * on(w)).sum().backward()
    assert_equal(xd.grad, xc.grad)


@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.int64, et.int32, et.float16])
@pytest.mark.parametrize("vkind", ["number", "cpu_0d", "dev_0d", "dev", "cpu", "row"])
@pytest.mark.parametrize("key", ["tensor_dup", "list_neg_dup", "slice_neg_step", "mask_2d", "int"])
def test_index_add_key_matches_cpu(key, vkind, dtype):
    spec = dict((k[0], k[1]) for k in KEYS)[key]
    kc, kd = keys(spec, "dev")
    xc, xd = pair(SHAPE, dtype, "transposed", seed=2)
    shape = tuple(xc[kc].shape)
    if vkind == "row" and not shape:
        pytest.skip("no row to broadcast")
    vc, vd = value_of(vkind, shape, dtype)
    xc._index_add_key_(kc, vc)
    xd._index_add_key_(kd, vd)
    assert_equal(xd, xc)


def test_getitem_backward_large_with_repeats(autograd):
    rng = np.random.default_rng(9)
    rows = et.tensor(rng.integers(-500, 500, 30000))
    xc = et.zeros(500, 64, requires_grad=True)
    xd = et.zeros(500, 64, device=DEV, requires_grad=True)
    w = values((30000, 64), et.float32, 4)
    (xc[rows] * w).sum().backward()
    (xd[on(rows)] * on(w)).sum().backward()
    assert_equal(xd.grad, xc.grad)
    mask = et.tensor(rng.random((500, 64)) < 0.5)
    xc.grad = None
    xd.grad = None
    (xc[mask] * 2.0).sum().backward()
    (xd[mask] * 2.0).sum().backward()  # a CPU mask
    assert_equal(xd.grad, xc.grad)


# ---------------------------------------------------------------------------------------------
# errors


def on_dev(device, t):
    return t.to(device)


ERRORS = [
    ("int_out_of_range", lambda x, d: x[4]),
    ("tensor_out_of_range", lambda x, d: x[on_dev(d, et.tensor([0, 4]))]),
    ("tensor_neg_out_of_range", lambda x, d: x[on_dev(d, et.tensor([1, -5]))]),
    ("cpu_tensor_out_of_range", lambda x, d: x[et.tensor([0, 4])]),
    ("list_out_of_range", lambda x, d: x[[1, -5]]),
    (
        "second_dim_out_of_range",
        lambda x, d: x[on_dev(d, et.tensor([0])), on_dev(d, et.tensor([7]))],
    ),
    ("too_many", lambda x, d: x[0, 0, 0]),
    ("too_many_tensors", lambda x, d: x[tuple(on_dev(d, et.tensor([0])) for _ in range(3))]),
    ("mask_shape", lambda x, d: x[on_dev(d, et.tensor([True, False]))]),
    ("float_index_tensor", lambda x, d: x[on_dev(d, et.tensor([1.0]))]),
    ("float_index", lambda x, d: x[1.5]),
    ("bcast", lambda x, d: x[on_dev(d, et.tensor([0, 1])), on_dev(d, et.tensor([0, 1, 2]))]),
    ("neg_step_adv", lambda x, d: x[::-1, on_dev(d, et.tensor([0]))]),
    ("empty_dim", lambda x, d: x[2:2].transpose(0, 1)[:, on_dev(d, et.tensor([0]))]),
    ("zero_dim", lambda x, d: x[0, 0][0]),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_getitem_errors_match_cpu(name, fn):
    assert_same_error(lambda d: fn(on_dev(d, et.zeros(4, 5)), d))


def _set(x, key, value):
    x[key] = value


SET_ERRORS = [
    ("out_of_range", lambda x, d: _set(x, on_dev(d, et.tensor([0, 9])), 1.0)),
    ("int_out_of_range", lambda x, d: _set(x, 4, 1.0)),
    ("value_shape", lambda x, d: _set(x, on_dev(d, et.tensor([1, 2])), on_dev(d, et.ones(3)))),
    ("value_shape_cpu", lambda x, d: _set(x, on_dev(d, et.tensor([1, 2])), et.ones(3))),
    (
        "slice_value_shape",
        lambda x, d: _set(x, (slice(None), slice(None, 2)), on_dev(d, et.ones(3, 3))),
    ),
    ("row_value_shape", lambda x, d: _set(x, 0, on_dev(d, et.ones(6)))),
    (
        "mask_value_shape",
        lambda x, d: _set(x, on_dev(d, et.ones(4, 5).bool()), on_dev(d, et.ones(3))),
    ),
    ("overflow", lambda x, d: _set(x.to(et.int8), on_dev(d, et.tensor([0])), 300)),
    ("bad_value", lambda x, d: _set(x, 0, "a")),
    ("neg_step_adv", lambda x, d: _set(x, (slice(None, None, -1), on_dev(d, et.tensor([0]))), 1.0)),
    ("add_key_out_of_range", lambda x, d: x._index_add_key_(on_dev(d, et.tensor([4])), 1.0)),
]


@pytest.mark.parametrize("name,fn", SET_ERRORS, ids=[e[0] for e in SET_ERRORS])
def test_setitem_errors_match_cpu(name, fn):
    assert_same_error(lambda d: fn(on_dev(d, et.zeros(4, 5)), d))


def test_failed_setitem_writes_nothing():
    for d in ["cpu", DEV]:
        x = on_dev(d, et.zeros(4, 5))
        with pytest.raises(IndexError):
            x[on_dev(d, et.tensor([0, 1, 9]))] = 1.0
        assert host(x).sum() == 0


@pytest.mark.skipif(DEV != "cuda", reason="index tensors on a device need a CUDA tensor")
def test_index_tensor_on_the_device_of_a_cpu_tensor_is_an_error():
    x = et.zeros(4, 5)
    with pytest.raises(RuntimeError, match="indices should be either on cpu or on the same device"):
        x[on(et.tensor([0, 1]))]
    with pytest.raises(RuntimeError, match="indices should be either on cpu or on the same device"):
        x[on(et.tensor([0, 1]))] = 1.0
    # a 0-d index is read as a number wherever it is
    assert_equal(on(x[on(et.tensor(1))]), x[1])


@pytest.mark.skipif(DEV != "cuda" or _C._cuda_device_count() < 2, reason="needs two CUDA devices")
def test_index_tensor_on_another_gpu_is_an_error():
    x = et.zeros(4, 5).to("cuda:0")
    with pytest.raises(RuntimeError, match="indices should be either on cpu or on the same device"):
        x[et.tensor([0, 1]).to("cuda:1")]


# ---------------------------------------------------------------------------------------------
# the _index op (the read side, index_put's index form)


@pytest.mark.parametrize("dtype", ALL)
def test_index_op_matches_cpu(dtype):
    xc = values(SHAPE, dtype, 3)
    xd = on(xc)
    mask = Mask((4, 5), 5).build("cpu")
    cases = [
        [et.tensor([0, 3, -1])],
        [None, et.tensor([[4], [0]])],
        [mask],
        [mask.to(et.uint8)],
        [None, None, et.tensor([5, 0]).to(et.int32)],
        [et.tensor([1, 2]), None, et.tensor([0, 5])],
        [None],
        [],
    ]
    for idx in cases:
        want = _C._index(xc, idx)
        got = _C._index(xd, [None if t is None else on(t) for t in idx])
        assert_equal(got, want)


def test_index_op_errors_match_cpu():
    x = et.zeros(4, 5)
    cases = [
        [et.tensor([4])],
        [et.tensor([0]), et.tensor([0]), et.tensor([0])],
        [et.tensor([1.0])],
        [et.ones(4, 5, 2).bool()],
        [et.ones(3).bool()],
        [et.tensor([0, 1]), et.tensor([0, 1, 2])],
    ]
    for idx in cases:
        assert_same_error(lambda d, idx=idx: _C._index(on_dev(d, x), [t.to(d) for t in idx]))
