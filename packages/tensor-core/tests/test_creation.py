"""Tensor creation: tensor(), factories, ranges and random numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import (
    ALL_DTYPES,
    FLOAT_DTYPES,
    NP_DTYPES,
    assert_close,
    dtype_name,
    round_to,
    to_np,
)

# ---------------------------------------------------------------------------------------------
# lib.tensor


TENSOR_DATA = [
    ("int_scalar", 3, (), "int64"),
    ("float_scalar", -2.5, (), "float32"),
    ("bool_scalar", True, (), "bool"),
    ("int_list", [1, 2, 3], (3,), "int64"),
    ("float_list", [1.0, 2.5], (2,), "float32"),
    ("mixed_int_float", [1, 2.5], (2,), "float32"),
    ("mixed_bool_int", [True, 2], (2,), "int64"),
    ("bool_list", [True, False], (2,), "bool"),
    ("nested", [[1, 2, 3], [4, 5, 6]], (2, 3), "int64"),
    ("nested3", [[[1.0], [2.0]], [[3.0], [4.0]]], (2, 2, 1), "float32"),
    ("empty", [], (0,), "float32"),
    ("empty_nested", [[], []], (2, 0), "float32"),
    ("tuple", (1, 2), (2,), "int64"),
    ("big_int", [2**40, -(2**40)], (2,), "int64"),
]


@pytest.mark.parametrize("name,data,shape,dtype", TENSOR_DATA, ids=[d[0] for d in TENSOR_DATA])
def test_tensor_inference(lib, name, data, shape, dtype):
    t = lib.tensor(data)
    assert tuple(t.shape) == shape
    assert t.dim() == len(shape) and t.ndim == len(shape)
    assert dtype_name(t.dtype) == dtype
    assert t.numel() == int(np.prod(shape))
    expected = np.array(data, dtype=NP_DTYPES[dtype]).reshape(shape)
    assert_close(t, expected, dtype)
    assert t.tolist() == expected.tolist()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_tensor_with_dtype(lib, dtype):
    data = [[0, 1, 2], [3, 1, 0]]
    t = lib.tensor(data, dtype=getattr(lib, dtype))
    assert dtype_name(t.dtype) == dtype
    expected = np.array(data) != 0 if dtype == "bool" else np.array(data)
    assert_close(t, expected, dtype)
    f = lib.tensor([1.5, 2.25, 0.0], dtype=getattr(lib, dtype))
    if dtype in FLOAT_DTYPES:
        assert_close(f, [1.5, 2.25, 0.0], dtype)
    elif dtype == "bool":
        assert_close(f, [True, True, False], dtype)
    else:
        assert to_np(f).tolist()[::2] == [1, 0]


@pytest.mark.parametrize("np_dtype", ["float32", "float64", "float16", "int8", "int16", "int32",
                                      "int64", "uint8", "bool"])
def test_tensor_from_numpy_array_copies(lib, np_dtype):
    a = (np.arange(6).reshape(2, 3) % 3).astype(np_dtype)
    t = lib.tensor(a)
    assert dtype_name(t.dtype) == np_dtype
    assert_close(t, a, np_dtype)
    a[0, 0] = 1  # lib.tensor copies
    assert to_np(t)[0, 0] == 0
    # non-contiguous numpy input
    b = np.arange(24, dtype=np.float32).reshape(4, 6)[::2, ::3]
    assert_close(lib.tensor(b), b, "float32")
    assert_close(lib.tensor(b.T), b.T, "float32")


def test_tensor_from_tensor_list_of_0d(lib):
    t = lib.tensor([lib.tensor(1.5), lib.tensor(2.5)])
    assert_close(t, [1.5, 2.5], "float32")


def test_tensor_ragged_raises(lib):
    with pytest.raises(ValueError):
        lib.tensor([[1, 2], [3]])
    with pytest.raises(ValueError):
        lib.tensor(["a", "b"])
    with pytest.raises(RuntimeError):
        lib.tensor(object())


# ---------------------------------------------------------------------------------------------
# factories

FACTORIES = [
    ("zeros", lambda lib, s, **k: lib.zeros(*(s or [()]), **k), lambda s: np.zeros(s)),
    ("zeros_tuple", lambda lib, s, **k: lib.zeros(tuple(s), **k), lambda s: np.zeros(s)),
    ("ones", lambda lib, s, **k: lib.ones(*(s or [()]), **k), lambda s: np.ones(s)),
    ("ones_list", lambda lib, s, **k: lib.ones(list(s), **k), lambda s: np.ones(s)),
    ("full", lambda lib, s, **k: lib.full(tuple(s), 3, **k), lambda s: np.full(s, 3)),
    ("full_float", lambda lib, s, **k: lib.full(tuple(s), 1.5, **k), lambda s: np.full(s, 1.5)),
]


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0, 4), (1, 1, 1, 5)], ids=str)
@pytest.mark.parametrize("name,fn,ref", FACTORIES, ids=[f[0] for f in FACTORIES])
def test_factories(lib, name, fn, ref, shape):
    t = fn(lib, shape)
    want = "int64" if name == "full" else "float32"
    assert dtype_name(t.dtype) == want
    assert t.is_contiguous()
    assert_close(t, ref(shape), want)
    for d in ("float64", "int32", "bool", "bfloat16", "float16", "uint8"):
        t = fn(lib, shape, dtype=getattr(lib, d))
        assert dtype_name(t.dtype) == d
        exp = ref(shape)
        assert_close(t, exp != 0 if d == "bool" else round_to(np.trunc(exp) if d in (
            "int32", "uint8") else exp, d), d)


def test_empty(lib):
    t = lib.empty(2, 3)
    assert tuple(t.shape) == (2, 3) and dtype_name(t.dtype) == "float32"
    assert t.is_contiguous() and t.stride() == (3, 1)
    t.fill_(2.0)
    assert_close(t, np.full((2, 3), 2.0), "float32")
    assert tuple(lib.empty((0, 5), dtype=lib.int8).shape) == (0, 5)
    assert tuple(lib.empty([]).shape) == ()


@pytest.mark.parametrize("layout", ["contig", "transposed"])
def test_like_factories(lib, layout):
    base = lib.ones(3, 4, dtype=lib.int16)
    if layout == "transposed":
        base = base.t()
    shape = tuple(base.shape)
    z = lib.zeros_like(base)
    assert dtype_name(z.dtype) == "int16" and tuple(z.shape) == shape
    assert_close(z, np.zeros(shape), "int16")
    o = lib.ones_like(base, dtype=lib.float64)
    assert dtype_name(o.dtype) == "float64"
    assert_close(o, np.ones(shape), "float64")
    f = lib.full_like(base, 7)
    assert_close(f, np.full(shape, 7), "int16")
    e = lib.empty_like(base)
    assert tuple(e.shape) == shape and dtype_name(e.dtype) == "int16"
    fl = lib.full_like(lib.zeros(2), 2.5)
    assert_close(fl, [2.5, 2.5], "float32")
    assert_close(lib.rand_like(lib.zeros(2, 2, dtype=lib.float64)) * 0, np.zeros((2, 2)),
                 "float64")
    assert tuple(lib.randn_like(lib.zeros(3, 1)).shape) == (3, 1)


def test_full_dtype_inference(lib):
    assert dtype_name(lib.full((2,), 3).dtype) == "int64"
    assert dtype_name(lib.full((2,), 3.0).dtype) == "float32"
    assert dtype_name(lib.full((2,), True).dtype) == "bool"
    assert_close(lib.full((2, 2), -1, dtype=lib.float16), np.full((2, 2), -1.0), "float16")


# ---------------------------------------------------------------------------------------------
# arange / linspace / eye

ARANGES = [
    ((5,), {}),
    ((2, 9), {}),
    ((2, 9, 3), {}),
    ((10, 0, -3), {}),
    ((-3, 3), {}),
    ((0,), {}),
    ((5, 5), {}),
    ((0.0, 1.0, 0.25), {}),
    ((1, 2.5, 0.5), {}),
    ((1.0, -1.0, -0.5), {}),
    ((0, 1, 0.1), {}),
    ((0, 10), {"dtype": "float64"}),
    ((0, 10, 3), {"dtype": "int16"}),
    ((0, 10, 3), {"dtype": "float16"}),
    ((3.0,), {}),
]


@pytest.mark.parametrize("args,kw", ARANGES, ids=[str(a) for a in ARANGES])
def test_arange(lib, args, kw):
    import torch

    kw_lib = {k: getattr(lib, v) for k, v in kw.items()}
    kw_t = {k: getattr(torch, v) for k, v in kw.items()}
    want = torch.arange(*args, **kw_t)
    t = lib.arange(*args, **kw_lib)
    want_dtype = dtype_name(want.dtype)
    assert dtype_name(t.dtype) == want_dtype
    start, end, step = (0, args[0], 1) if len(args) == 1 else (args + (1,))[:3]
    expected = np.arange(start, end, step, dtype=np.float64)
    assert len(expected) == t.numel()
    assert_close(t, expected, want_dtype)


def test_arange_errors(lib):
    with pytest.raises(RuntimeError):
        lib.arange(0, 1, 0)
    with pytest.raises(RuntimeError):
        lib.arange(0, 5, -1)


LINSPACES = [(0, 1, 5), (0, 1, 1), (1, 0, 0), (-2.5, 7.5, 11), (3, -3, 4), (0, 1, 1000)]


@pytest.mark.parametrize("args", LINSPACES, ids=str)
def test_linspace(lib, args):
    t = lib.linspace(*args)
    assert dtype_name(t.dtype) == "float32"
    assert_close(t, np.linspace(*args), "float32")
    t64 = lib.linspace(*args, dtype=lib.float64)
    assert_close(t64, np.linspace(*args), "float64")


def test_linspace_int_dtype(lib):
    import torch

    t = lib.linspace(0, 10, 5, dtype=lib.int64)
    assert to_np(t).tolist() == torch.linspace(0, 10, 5, dtype=torch.int64).tolist()


@pytest.mark.parametrize("args", [(3,), (2, 4), (4, 2), (0,), (1, 1)], ids=str)
def test_eye(lib, args):
    t = lib.eye(*args)
    assert dtype_name(t.dtype) == "float32"
    assert_close(t, np.eye(*args), "float32")
    assert_close(lib.eye(*args, dtype=lib.int32), np.eye(*args), "int32")
    assert_close(lib.eye(*args, dtype=lib.bool), np.eye(*args) != 0, "bool")


# ---------------------------------------------------------------------------------------------
# random numbers

N = 200_000


def _mean_std(t):
    a = to_np(t).astype(np.float64)
    return a.mean(), a.std()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_rand_distribution(lib, dtype):
    lib.manual_seed(1)
    t = lib.rand(N, dtype=getattr(lib, dtype))
    assert dtype_name(t.dtype) == dtype and tuple(t.shape) == (N,)
    a = to_np(t).astype(np.float64)
    assert a.min() >= 0.0 and a.max() <= 1.0
    assert (a < 1.0).mean() > 0.99
    m, s = _mean_std(t)
    assert abs(m - 0.5) < 5 * math.sqrt(1 / 12 / N) + 2e-3
    assert abs(s - math.sqrt(1 / 12)) < 5e-3
    hist = np.histogram(a, bins=10, range=(0, 1))[0] / N
    assert np.all(np.abs(hist - 0.1) < 0.01)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_randn_distribution(lib, dtype):
    lib.manual_seed(2)
    t = lib.randn(N // 2, 2, dtype=getattr(lib, dtype))
    assert dtype_name(t.dtype) == dtype and tuple(t.shape) == (N // 2, 2)
    a = to_np(t).astype(np.float64).ravel()
    m, s = a.mean(), a.std()
    assert abs(m) < 5 / math.sqrt(N) + 1e-3
    assert abs(s - 1) < 0.01
    assert 0.6 < (np.abs(a) < 1).mean() < 0.76  # ~68.3% within one sigma
    assert np.isfinite(a).all()


def test_randint(lib):
    lib.manual_seed(3)
    t = lib.randint(10, (N,))
    assert dtype_name(t.dtype) == "int64"
    a = to_np(t)
    assert a.min() == 0 and a.max() == 9
    counts = np.bincount(a, minlength=10) / N
    assert np.all(np.abs(counts - 0.1) < 0.01)
    t2 = lib.randint(-5, 5, (3, 1000), dtype=lib.int32)
    assert dtype_name(t2.dtype) == "int32" and tuple(t2.shape) == (3, 1000)
    b = to_np(t2)
    assert b.min() == -5 and b.max() == 4
    assert to_np(lib.randint(3, 4, (5,))).tolist() == [3] * 5


def test_randperm(lib):
    lib.manual_seed(4)
    for n in (0, 1, 7, 1000):
        p = lib.randperm(n)
        assert dtype_name(p.dtype) == "int64"
        assert sorted(to_np(p).tolist()) == list(range(n))
    p = to_np(lib.randperm(1000))
    assert (p != np.arange(1000)).sum() > 900
    assert dtype_name(lib.randperm(5, dtype=lib.int32).dtype) == "int32"


def test_normal_uniform_inplace(lib):
    lib.manual_seed(5)
    t = lib.empty(N)
    v = t._version
    r = t.normal_(3.0, 2.0)
    assert r is t and t._version > v
    m, s = _mean_std(t)
    assert abs(m - 3) < 0.03 and abs(s - 2) < 0.03
    r = t.uniform_(-2.0, 4.0)
    assert r is t
    a = to_np(t)
    assert a.min() >= -2 and a.max() <= 4
    assert abs(a.mean() - 1) < 0.03 and abs(a.std() - 6 / math.sqrt(12)) < 0.03
    d = lib.zeros(N, dtype=lib.float64).normal_()
    m, s = _mean_std(d)
    assert abs(m) < 0.02 and abs(s - 1) < 0.02
    # on a non-contiguous view only the view changes
    base = lib.zeros(4, 6)
    base[:, ::2].uniform_(1.0, 2.0)
    b = to_np(base)
    assert np.all(b[:, 1::2] == 0) and np.all(b[:, ::2] >= 1)


def test_bernoulli(lib):
    lib.manual_seed(6)
    p = lib.full((N,), 0.3)
    b = lib.bernoulli(p)
    assert dtype_name(b.dtype) == "float32"
    a = to_np(b)
    assert set(np.unique(a).tolist()) <= {0.0, 1.0}
    assert abs(a.mean() - 0.3) < 0.01
    probs = lib.tensor([0.0, 1.0, 0.0, 1.0])
    assert to_np(lib.bernoulli(probs)).tolist() == [0.0, 1.0, 0.0, 1.0]
    assert to_np(probs.bernoulli()).tolist() == [0.0, 1.0, 0.0, 1.0]
    # scalar p, in-place
    t = lib.empty(N)
    assert t.bernoulli_(0.8) is t
    assert abs(to_np(t).mean() - 0.8) < 0.01
    # tensor p, in-place
    t = lib.empty(4).bernoulli_(probs)
    assert to_np(t).tolist() == [0.0, 1.0, 0.0, 1.0]
    # p with a varying probability per element
    pp = lib.tensor([0.1, 0.9]).repeat(N // 2)
    a = to_np(lib.bernoulli(pp)).reshape(-1, 2).mean(0)
    assert abs(a[0] - 0.1) < 0.01 and abs(a[1] - 0.9) < 0.01
    # scalar p with bernoulli(input, p)
    a = to_np(lib.bernoulli(lib.zeros(N), 0.5))
    assert abs(a.mean() - 0.5) < 0.01


RANDOM_FNS = [
    ("rand", lambda lib, **k: lib.rand(100, **k)),
    ("randn", lambda lib, **k: lib.randn(4, 25, **k)),
    ("randint", lambda lib, **k: lib.randint(0, 1000, (100,), **k)),
    ("randperm", lambda lib, **k: lib.randperm(100, **k)),
    ("normal_", lambda lib, **k: lib.empty(100).normal_(**k)),
    ("uniform_", lambda lib, **k: lib.empty(100).uniform_(**k)),
    ("bernoulli", lambda lib, **k: lib.bernoulli(lib.full((100,), 0.5), **k)),
]


@pytest.mark.parametrize("name,fn", RANDOM_FNS, ids=[r[0] for r in RANDOM_FNS])
def test_manual_seed_reproducible(lib, name, fn):
    lib.manual_seed(1234)
    a = to_np(fn(lib))
    b = to_np(fn(lib))
    lib.manual_seed(1234)
    c = to_np(fn(lib))
    d = to_np(fn(lib))
    np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(b, d)
    assert not np.array_equal(a, b)
    lib.manual_seed(4321)
    assert not np.array_equal(to_np(fn(lib)), a)


@pytest.mark.parametrize("name,fn", RANDOM_FNS, ids=[r[0] for r in RANDOM_FNS])
def test_generator_reproducible(lib, name, fn):
    g1 = lib.Generator().manual_seed(77)
    g2 = lib.Generator()
    assert g2.manual_seed(77) is g2
    a = to_np(fn(lib, generator=g1))
    b = to_np(fn(lib, generator=g2))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(to_np(fn(lib, generator=g1)), a)
    # drawing from a private generator leaves the default stream untouched
    lib.manual_seed(9)
    x = to_np(lib.rand(10))
    lib.manual_seed(9)
    fn(lib, generator=lib.Generator().manual_seed(1))
    y = to_np(lib.rand(10))
    np.testing.assert_array_equal(x, y)


def test_generator_state(lib):
    g = lib.Generator().manual_seed(5)
    assert g.initial_seed() == 5
    state = g.get_state()
    a = to_np(lib.rand(8, generator=g))
    g.set_state(state)
    b = to_np(lib.rand(8, generator=g))
    np.testing.assert_array_equal(a, b)
    assert lib.manual_seed(3) is not None
    assert lib.initial_seed() == 3


def test_random_zero_size(lib):
    assert tuple(lib.rand(0).shape) == (0,)
    assert tuple(lib.randn(2, 0).shape) == (2, 0)
    assert tuple(lib.randint(5, (0, 3)).shape) == (0, 3)
    assert lib.empty(0).normal_().numel() == 0
