"""Reductions and scans: full, over dims (int, tuple, negative), keepdim, dtypes, empty inputs."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import (
    ALL_DTYPES,
    assert_close,
    check,
    dtype_name,
    rand_array,
    round_to,
    tensor,
    to_np,
)


def _f(x):
    return np.asarray(x, dtype=np.float64)


def _axis(dim):
    return dim


def _call(method, dim, keepdim, **kw):
    """fn(lib, x) calling x.<method>() with or without dim/keepdim (dim positional)."""
    def fn(lib, x):
        if dim is None:
            return getattr(x, method)(**kw)
        if method == "norm":  # Tensor.norm(p, dim, keepdim)
            return x.norm(dim=dim, keepdim=keepdim, **kw)
        return getattr(x, method)(dim, keepdim=keepdim, **kw)
    return fn


def _func(name, dim, keepdim, **kw):
    """fn(lib, x) calling lib.<name>(x, ...)."""
    def fn(lib, x):
        if dim is None:
            return getattr(lib, name)(x, **kw)
        return getattr(lib, name)(x, dim=dim, keepdim=keepdim, **kw)
    return fn


def _logsumexp(x, axis, keepdims):
    x = _f(x)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


def _norm(p):
    def ref(x, axis, keepdims):
        x = np.abs(_f(x))
        if p == np.inf:
            return np.max(x, axis=axis, keepdims=keepdims)
        return np.sum(x ** p, axis=axis, keepdims=keepdims) ** (1 / p)
    return ref


def _var(correction, sqrt=False):
    def ref(x, axis, keepdims):
        r = np.var(_f(x), axis=axis, keepdims=keepdims, ddof=correction)
        return np.sqrt(r) if sqrt else r
    return ref


def _all(x, axis, keepdims):
    return np.all(x != 0, axis=axis, keepdims=keepdims)


def _any(x, axis, keepdims):
    return np.any(x != 0, axis=axis, keepdims=keepdims)


# name, fn-builder(dim, keepdim), ref(x, axis, keepdims), domain, tuple dims allowed, shape
REDUCTIONS = [
    ("sum", lambda d, k: _call("sum", d, k), np.sum, "any", True),
    ("sum_fn", lambda d, k: _func("sum", d, k), np.sum, "any", True),
    ("mean", lambda d, k: _call("mean", d, k), lambda x, axis, keepdims: np.mean(
        _f(x), axis=axis, keepdims=keepdims), "any", True),
    ("prod", lambda d, k: _call("prod", d, k), np.prod, "near1", False),
    ("amax", lambda d, k: _call("amax", () if d is None else d, k), np.max, "any", True),
    ("amin", lambda d, k: _func("amin", () if d is None else d, k), np.min, "any", True),
    ("argmax", lambda d, k: _call("argmax", d, k), lambda x, axis, keepdims: np.argmax(
        x, axis=axis, keepdims=keepdims), "any", False),
    ("argmin", lambda d, k: _func("argmin", d, k), lambda x, axis, keepdims: np.argmin(
        x, axis=axis, keepdims=keepdims), "any", False),
    ("var", lambda d, k: _call("var", d, k), _var(1), "any", True),
    ("var_c0", lambda d, k: _call("var", d, k, correction=0), _var(0), "any", True),
    ("var_c2", lambda d, k: _func("var", d, k, correction=2), _var(2), "any", True),
    ("std", lambda d, k: _call("std", d, k), _var(1, True), "any", True),
    ("std_c0", lambda d, k: _func("std", d, k, correction=0), _var(0, True), "any", True),
    ("norm2", lambda d, k: _call("norm", d, k), _norm(2), "any", True),
    ("norm1", lambda d, k: _call("norm", d, k, p=1), _norm(1), "any", True),
    ("norm_inf", lambda d, k: _func("norm", d, k, p=float("inf")), _norm(np.inf), "any", True),
    ("logsumexp", lambda d, k: _func("logsumexp", (0, 1, 2) if d is None else d, k),
     _logsumexp, "any", True),
    ("all", lambda d, k: _call("all", d, k), _all, "any", False),
    ("any", lambda d, k: _func("any", d, k), _any, "any", False),
]
RED_IDS = [r[0] for r in REDUCTIONS]

DIMS = [None, 0, 1, -1, (0, 2), (-1, 0), (1,)]


def _values(rng, shape, dtype, domain):
    if domain == "near1":
        if dtype in ("bool",):
            return rand_array(rng, shape, dtype)
        if dtype.startswith(("int", "uint")):
            return rng.integers(1, 3, size=shape).astype(dtype)
        return rand_array(rng, shape, dtype, "any") * 0 + rng.uniform(0.7, 1.3, shape).astype(
            np.float32 if dtype == "bfloat16" else dtype)
    return rand_array(rng, shape, dtype, domain)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("name,build,ref,domain,tuples", REDUCTIONS, ids=RED_IDS)
def test_reduction_dims(lib, rng, name, build, ref, domain, tuples, dim, keepdim):
    if isinstance(dim, tuple) and not tuples:
        pytest.skip("op takes a single dim")
    if dim is None and keepdim:
        pytest.skip("keepdim needs dim")
    x = _values(rng, (3, 4, 5), "float64", domain)
    axis = dim if dim is None or isinstance(dim, int) else tuple(dim)
    fn = build(dim, keepdim)
    check(lib, fn, lambda a: ref(a, axis=axis, keepdims=keepdim), [x], ["float64"])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("dim", [None, 1], ids=str)
@pytest.mark.parametrize("name,build,ref,domain,tuples", REDUCTIONS, ids=RED_IDS)
def test_reduction_dtypes(lib, rng, name, build, ref, domain, tuples, dim, dtype):
    x = _values(rng, (3, 4, 5), dtype, domain)
    if dtype == "bfloat16":
        x = round_to(x, dtype)
    check(lib, build(dim, False), lambda a: ref(a, axis=dim, keepdims=False), [x], [dtype],
          scale=4)


@pytest.mark.parametrize("layout", ["transposed", "stepped"])
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1)], ids=str)
@pytest.mark.parametrize("name,build,ref,domain,tuples", REDUCTIONS, ids=RED_IDS)
def test_reduction_noncontiguous(lib, rng, name, build, ref, domain, tuples, dim, layout):
    if isinstance(dim, tuple) and not tuples:
        pytest.skip("op takes a single dim")
    x = _values(rng, (6, 7), "float32", domain)
    check(lib, build(dim, False), lambda a: ref(a, axis=dim, keepdims=False), [x], ["float32"],
          layout=layout)


@pytest.mark.parametrize("n", [1, 7, 64, 1000, 100_001])
def test_large_sums_are_accurate(lib, rng, n):
    a = rand_array(rng, (n,), "float32", "pos")
    t = tensor(lib, a)
    assert_close(t.sum(), a.astype(np.float64).sum(), "float32", rtol=1e-5)
    assert_close(t.mean(), a.astype(np.float64).mean(), "float32", rtol=1e-5)
    b = rand_array(rng, (n, 3), "float32", "pos")
    assert_close(tensor(lib, b).sum(0), b.astype(np.float64).sum(0), "float32", rtol=1e-5)
    h = rand_array(rng, (min(n, 20000),), "float16", "pos")
    # 16-bit floats accumulate in float32
    assert_close(tensor(lib, h).sum(), h.astype(np.float64).sum(), "float16", rtol=2e-3)


# ---------------------------------------------------------------------------------------------
# max/min with dim: (values, indices) namedtuple


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "uint8",
                                   "int8", "int64", "bool"])
def test_max_min_dim(lib, rng, op, keepdim, dim, dtype):
    x = rand_array(rng, (4, 6), dtype) if dtype != "bool" else rand_array(rng, (4, 6), "bool")
    npf = np.max if op == "max" else np.min
    npa = np.argmax if op == "max" else np.argmin
    r = getattr(tensor(lib, x, dtype), op)(dim, keepdim=keepdim)
    assert isinstance(r, tuple) and len(r) == 2
    values, indices = r
    assert r[0] is values and r[1] is indices
    assert to_np(r.values).tolist() == to_np(values).tolist()
    assert to_np(r.indices).tolist() == to_np(indices).tolist()
    assert dtype_name(values.dtype) == dtype
    assert dtype_name(indices.dtype) == "int64"
    assert_close(values, npf(x, axis=dim, keepdims=keepdim), dtype)
    assert_close(indices, npa(x, axis=dim, keepdims=keepdim), "int64")
    r2 = getattr(lib, op)(tensor(lib, x, dtype), dim=dim, keepdim=keepdim)
    assert_close(r2.values, npf(x, axis=dim, keepdims=keepdim), dtype)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_max_min_full(lib, rng, op, dtype):
    x = rand_array(rng, (3, 5), dtype)
    r = getattr(tensor(lib, x, dtype), op)()
    assert tuple(r.shape) == ()
    assert dtype_name(r.dtype) == dtype
    assert_close(r, (np.max if op == "max" else np.min)(x), dtype)


def test_max_min_binary_form(lib):
    a = lib.tensor([1.0, 5.0, 3.0])
    b = lib.tensor([4.0, 2.0, 3.0])
    assert_close(lib.max(a, b), [4.0, 5.0, 3.0], "float32")
    assert_close(lib.min(a, b), [1.0, 2.0, 3.0], "float32")


def test_ties_give_first_index(lib):
    x = lib.tensor([[1, 3, 3, 0], [2, 2, 0, 0]])
    assert to_np(x.argmax(1)).tolist() == [1, 0]
    assert to_np(x.argmin(1)).tolist() == [3, 2]
    assert to_np(x.max(1).indices).tolist() == [1, 0]
    assert int(lib.tensor([5.0, 1.0, 5.0]).argmax()) == 0


def test_nan_propagation(lib):
    nan = float("nan")
    x = lib.tensor([[1.0, nan, 3.0], [4.0, 5.0, 6.0]])
    assert np.isnan(to_np(x.max()))
    assert np.isnan(to_np(x.amin()))
    assert np.isnan(to_np(x.sum()))
    m = x.max(1)
    assert np.isnan(to_np(m.values)[0]) and to_np(m.values)[1] == 6.0
    assert to_np(m.indices).tolist() == [1, 2]
    assert int(x.argmax()) == 1
    assert np.isnan(to_np(lib.maximum(x, lib.zeros(3)))[0, 1])


def test_argmax_keepdim_and_flat(lib, rng):
    a = rand_array(rng, (3, 4, 5), "float32")
    t = tensor(lib, a)
    assert int(t.argmax()) == int(np.argmax(a))
    assert tuple(t.argmax(1, keepdim=True).shape) == (3, 1, 5)
    assert int(lib.argmin(t)) == int(np.argmin(a))


# ---------------------------------------------------------------------------------------------
# sum(dtype=), mean(dtype=), integer sums


def test_sum_dtype_argument(lib):
    x = lib.tensor([100, 100, 100], dtype=lib.int8)
    assert dtype_name(x.sum().dtype) == "int64"
    assert int(x.sum()) == 300
    assert dtype_name(x.sum(dtype=lib.int8).dtype) == "int8"
    assert int(x.sum(dtype=lib.int8)) == 300 - 256
    assert dtype_name(x.sum(dtype=lib.float64).dtype) == "float64"
    assert dtype_name(lib.sum(x, 0, dtype=lib.float32).dtype) == "float32"
    b = lib.tensor([True, True, False])
    assert dtype_name(b.sum().dtype) == "int64" and int(b.sum()) == 2
    f = lib.ones(4, dtype=lib.float16)
    assert dtype_name(f.sum().dtype) == "float16"
    assert dtype_name(f.sum(dtype=lib.float32).dtype) == "float32"
    assert dtype_name(lib.ones(2).mean(dtype=lib.float64).dtype) == "float64"
    assert dtype_name(lib.tensor([1, 2]).mean(dtype=lib.float32).dtype) == "float32"
    # float16 sum that overflows the half range when accumulated in float16 order
    big = lib.full((100,), 1000.0, dtype=lib.float16)
    assert np.isinf(to_np(big.sum()))
    assert float(big.sum(dtype=lib.float32)) == 100000.0


def test_integer_reductions(lib):
    x = lib.tensor([[1, 2, 3], [4, 5, 6]], dtype=lib.int32)
    assert int(x.sum()) == 21 and dtype_name(x.sum().dtype) == "int64"
    assert int(x.prod()) == 720 and dtype_name(x.prod().dtype) == "int64"
    assert to_np(x.amax(0)).tolist() == [4, 5, 6] and dtype_name(x.amax(0).dtype) == "int32"
    assert to_np(x.cumsum(1)).tolist() == [[1, 3, 6], [4, 9, 15]]
    assert dtype_name(x.cumsum(1).dtype) == "int64"
    with pytest.raises(RuntimeError):
        x.mean()
    with pytest.raises(RuntimeError):
        x.var()
    with pytest.raises(RuntimeError):
        x.norm()


# ---------------------------------------------------------------------------------------------
# softmax / log_softmax / cumsum


@pytest.mark.parametrize("layout", ["contig", "transposed", "stepped"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_softmax_log_softmax(lib, rng, dtype, dim, layout):
    x = round_to(rand_array(rng, (4, 7), dtype) * 3, dtype)

    def sm(a):
        e = np.exp(a - a.max(axis=dim, keepdims=True))
        return e / e.sum(axis=dim, keepdims=True)

    check(lib, lambda lib, t: lib.softmax(t, dim), sm, [x], [dtype], layout=layout)
    check(lib, lambda lib, t: t.softmax(dim=dim), sm, [x], [dtype], layout=layout)
    check(lib, lambda lib, t: lib.log_softmax(t, dim), lambda a: np.log(sm(a)), [x], [dtype],
          layout=layout, scale=2)
    check(lib, lambda lib, t: t.log_softmax(dim), lambda a: np.log(sm(a)), [x], [dtype],
          layout=layout, scale=2)


def test_softmax_stability_and_dtype(lib):
    x = lib.tensor([[1000.0, 1000.0], [-1000.0, 0.0]])
    s = to_np(lib.softmax(x, 1))
    np.testing.assert_allclose(s, [[0.5, 0.5], [0.0, 1.0]], atol=1e-6)
    ls = to_np(lib.log_softmax(x, 1))
    np.testing.assert_allclose(ls, [[-np.log(2), -np.log(2)], [-1000.0, 0.0]], rtol=1e-6)
    assert dtype_name(lib.softmax(x, 0, dtype=lib.float64).dtype) == "float64"
    # integer inputs need a dtype
    r = lib.softmax(lib.tensor([1, 2]), 0, dtype=lib.float32)
    assert_close(r, np.exp([1, 2]) / np.exp([1, 2]).sum(), "float32")
    assert_close(lib.logsumexp(x, 1), [1000.0 + np.log(2), np.log(np.exp(-1000.0) + 1)],
                 "float32")
    assert tuple(lib.softmax(lib.zeros(0, 3), 1).shape) == (0, 3)


@pytest.mark.parametrize("layout", ["contig", "transposed", "stepped"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cumsum(lib, rng, dtype, dim, layout):
    x = rand_array(rng, (5, 6), dtype)
    check(lib, lambda lib, t: t.cumsum(dim), lambda a: np.cumsum(a, axis=dim), [x], [dtype],
          layout=layout, scale=4)
    check(lib, lambda lib, t: lib.cumsum(t, dim=dim), lambda a: np.cumsum(a, axis=dim), [x],
          [dtype], layout=layout, scale=4)


def test_cumsum_dtype_and_inplace(lib):
    x = lib.tensor([1, 2, 3], dtype=lib.int8)
    assert dtype_name(x.cumsum(0, dtype=lib.float32).dtype) == "float32"
    y = lib.tensor([1.0, 2.0, 3.0])
    assert y.cumsum_(0) is y
    assert to_np(y).tolist() == [1.0, 3.0, 6.0]
    assert to_np(lib.tensor(5.0).cumsum(0)).tolist() == 5.0


# ---------------------------------------------------------------------------------------------
# empty and 0-d inputs


def test_empty_reductions(lib):
    e = lib.zeros(0)
    assert float(e.sum()) == 0.0 and tuple(e.sum().shape) == ()
    assert float(e.prod()) == 1.0
    assert np.isnan(float(e.mean()))
    assert bool(e.all()) is True and bool(e.any()) is False
    assert tuple(e.cumsum(0).shape) == (0,)
    assert float(lib.zeros(0, dtype=lib.int32).sum()) == 0
    e2 = lib.zeros(0, 3)
    assert_close(e2.sum(0), np.zeros(3), "float32")
    assert tuple(e2.sum(1).shape) == (0,)
    assert_close(e2.amax(1), np.zeros(0), "float32")
    assert tuple(e2.max(1).values.shape) == (0,)
    with pytest.raises(RuntimeError, match="max"):
        e.max()
    with pytest.raises(RuntimeError):
        e.amax()
    with pytest.raises(IndexError):
        e.argmax()
    with pytest.raises(IndexError, match="max"):
        e2.max(0)
    with pytest.raises(IndexError):
        e2.amin(0)


def test_zero_dim_reductions(lib):
    s = lib.tensor(2.5)
    assert float(s.sum()) == 2.5 and tuple(s.sum().shape) == ()
    assert float(s.sum(0)) == 2.5
    assert float(s.sum(-1, keepdim=True)) == 2.5
    assert float(s.max()) == 2.5
    assert int(s.argmax()) == 0
    assert float(s.mean()) == 2.5
    v, i = s.max(0)
    assert float(v) == 2.5 and int(i) == 0
    assert to_np(lib.softmax(s, 0)).tolist() == 1.0
    with pytest.raises(IndexError):
        s.sum(1)


def test_var_std_small_samples(lib):
    one = lib.tensor([3.0])
    with pytest.warns(UserWarning):
        r = one.var()
    assert np.isnan(float(r))
    assert float(one.var(correction=0)) == 0.0
    x = lib.tensor([1.0, 2.0, 3.0, 4.0])
    assert float(x.var()) == pytest.approx(np.var([1, 2, 3, 4], ddof=1))
    assert float(x.std(unbiased=False)) == pytest.approx(np.std([1, 2, 3, 4]))
    assert float(lib.var(x, unbiased=True)) == pytest.approx(np.var([1, 2, 3, 4], ddof=1))


def test_norm_variants(lib):
    m = lib.tensor([[3.0, -4.0], [0.0, 12.0]])
    assert float(m.norm()) == pytest.approx(13.0)
    assert float(m.norm(p=1)) == pytest.approx(19.0)
    assert float(m.norm(p=float("inf"))) == pytest.approx(12.0)
    assert_close(m.norm(dim=1), [5.0, 12.0], "float32")
    assert_close(m.norm(p=1, dim=0, keepdim=True), [[3.0, 16.0]], "float32")
    assert float(lib.norm(lib.zeros(0))) == 0.0


@pytest.mark.parametrize("name", ["_softmax_backward_data", "_log_softmax_backward_data"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_backward_data_matches_torch(name, dim):
    import torch

    import ember_tensor as et

    rng = np.random.default_rng(0)
    g, x = rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 5, 4))
    forward = "log_softmax" if name.startswith("_log") else "softmax"
    y = getattr(torch.from_numpy(x), forward)(dim)
    want = getattr(torch, name)(torch.from_numpy(g), y, dim, torch.float64)
    got = getattr(et, name)(et.from_numpy(g.copy()), et.from_numpy(y.numpy().copy()), dim)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match=rf"^{name}: expected grad_output and output of one "
                                           r"shape and dtype, got \[3, 5\] float64 and "
                                           r"\[3, 5, 4\] float64$"):
        getattr(et, name)(et.zeros(3, 5, dtype=et.float64), et.from_numpy(x), dim)


# 16-bit floats reduce through the float32 reducers (rows widened a leaf at a time, columns
# through a float32 copy; softmax rows a block at a time): shapes around the leaf (2,048) and
# block sizes, along rows and down columns, with NaNs. Orderings, argmax and all/any match
# PyTorch exactly; the others within a float16 / bfloat16 ulp or two.
_EXACT_16 = ("amax", "amin", "argmax", "argmin", "all", "any", "max", "min")
_CLOSE_16 = ("var", "std", "norm", "logsumexp", "softmax", "log_softmax")
_SHAPES_16 = [((2049,), 0), ((3, 4100), 1), ((4100, 3), 0), ((6, 70, 5), 1), ((300, 17), 0),
              ((17, 300), 1), ((2, 9000), 1)]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape,dim", _SHAPES_16)
@pytest.mark.parametrize("name", _EXACT_16 + _CLOSE_16)
def test_16bit_reductions_through_float_match_torch(dtype, shape, dim, name):
    torch = pytest.importorskip("torch")
    import ember_tensor as et

    a = np.random.default_rng(sum(shape) + dim).standard_normal(shape).astype(np.float32) * 3
    if name in ("amax", "amin", "max", "min", "argmax", "argmin"):
        a.reshape(-1)[7::501] = np.nan
    if name in ("all", "any"):
        a[a > 0.5] = 0
    x = et.tensor(a).to(getattr(et, dtype))
    t = torch.from_numpy(a).to(getattr(torch, dtype))

    def run(lib_x):
        if name in ("max", "min"):
            return getattr(lib_x, name)(dim)
        if name in ("softmax", "log_softmax", "logsumexp"):
            return getattr(lib_x, name)(dim)
        if name == "norm":
            return lib_x.norm(p=3, dim=dim)
        return getattr(lib_x, name)(dim)

    got, want = run(x), run(t)
    if name in ("max", "min"):
        np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
        got, want = got[0], want[0]
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    g = got.float().numpy() if got.dtype in (et.float16, et.bfloat16) else got.numpy()
    w = want.float().numpy() if want.dtype in (torch.float16, torch.bfloat16) else want.numpy()
    if name in _EXACT_16:
        np.testing.assert_array_equal(g, w)
    else:
        eps = 2.0 ** -10 if dtype == "float16" else 2.0 ** -7
        # log_softmax rounds x - max - log(sum) in steps whose error scales with |x - max|
        atol = 2 * eps * float(np.abs(w).max()) if name == "log_softmax" else 1e-5
        np.testing.assert_allclose(g, w, rtol=2 * eps, atol=atol)
