"""The order kernels on inputs long enough for their fast paths, against PyTorch: the radix
sort of rows of 1024 elements or more (one long row split over threads and merged; many
rows), with NaN, -0.0, ties and every real dtype, ascending and descending, stable indices;
searchsorted's binary-search kernel; the selection behind median / nanmedian / kthvalue; the
running extremes behind cummax / cummin; logcumsumexp's scan; unique's inverse and counts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_tensor as et

RNG = np.random.default_rng(3)


def _values(name: str, shape):
    if name in ("float32", "float64", "float16", "bfloat16"):
        a = np.round(RNG.standard_normal(shape) * 4, 1)  # ties
        flat = a.reshape(-1)
        flat[RNG.integers(0, flat.size, flat.size // 50)] = np.nan
        flat[RNG.integers(0, flat.size, flat.size // 50)] = -0.0
        flat[RNG.integers(0, flat.size, 3)] = np.inf
        flat[RNG.integers(0, flat.size, 3)] = -np.inf
        return a
    if name == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    info = np.iinfo(name)
    low, high = max(info.min, -(2 ** 40)), min(info.max, 2 ** 40)
    a = RNG.integers(low, high, shape, dtype=np.int64 if name != "uint64" else np.uint64)
    a.reshape(-1)[: shape[-1] // 3] = a.reshape(-1)[shape[-1] // 3: 2 * (shape[-1] // 3)]
    return a.astype(name)


def _pair(name: str, shape):
    a = _values(name, shape)
    if name in ("float16", "bfloat16"):
        t = torch.tensor(a, dtype=getattr(torch, name))
        return et.tensor(a, dtype=getattr(et, name)), t
    return et.from_numpy(np.ascontiguousarray(a)), torch.from_numpy(np.ascontiguousarray(a))


def _np(t):
    return (t.float() if t.dtype in (torch.float16, torch.bfloat16) else t).numpy() \
        if isinstance(t, torch.Tensor) else \
        (t.float() if t.dtype in (et.float16, et.bfloat16) else t).numpy()


DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool"]


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("shape,dim", [((50_000,), 0), ((3, 4096), 1), ((2500, 3), 0)])
@pytest.mark.parametrize("name", DTYPES)
def test_long_rows_sort_stably_like_torch(name, shape, dim, descending):
    e, t = _pair(name, shape)
    v, i = et.sort(e, dim, descending=descending, stable=True)
    tv, ti = torch.sort(t, dim=dim, descending=descending, stable=True)
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    np.testing.assert_array_equal(_np(v), _np(tv))
    np.testing.assert_array_equal(et.argsort(e, dim, descending=descending).numpy(), ti.numpy())


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
def test_long_rows_of_wide_unsigned_sort_like_numpy(name):
    a = _values(name, (20_000,))
    v, i = et.sort(et.from_numpy(a), stable=True)
    order = np.argsort(a, kind="stable")
    np.testing.assert_array_equal(i.numpy(), order)
    np.testing.assert_array_equal(v.numpy(), a[order])


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("name", ["float32", "float64", "int64", "uint8"])
def test_searchsorted_matches_torch(name, right):
    seq_e, seq_t = _pair(name, (2, 700))
    seq_e, seq_t = et.sort(seq_e, 1).values, torch.sort(seq_t, 1).values
    val_e, val_t = _pair(name, (2, 5000))
    np.testing.assert_array_equal(et.searchsorted(seq_e, val_e, right=right).numpy(),
                                  torch.searchsorted(seq_t, val_t, right=right).numpy())
    np.testing.assert_array_equal(et.searchsorted(seq_e[0], val_e, right=right).numpy(),
                                  torch.searchsorted(seq_t[0], val_t, right=right).numpy())
    unsorted_e, unsorted_t = _pair(name, (300,))  # PyTorch's answer for unsorted sequences
    np.testing.assert_array_equal(et.bucketize(val_e, unsorted_e, right=right).numpy(),
                                  torch.bucketize(val_t, unsorted_t, right=right).numpy())


@pytest.mark.parametrize("name", ["float32", "float64", "int64", "int16"])
def test_order_statistics_select_like_the_stable_sort(name):
    e, t = _pair(name, (40, 3001))
    for dim in (0, 1):
        for op in ("median", "nanmedian") if name.startswith("float") else ("median",):
            got = getattr(et, op)(e, dim)
            want = getattr(torch, op)(t, dim)
            np.testing.assert_array_equal(_np(got[0]), _np(want[0]))
            # the index of an equal value: the one PyTorch reports, or an equal element
            picked = np.take_along_axis(_np(t), np.expand_dims(got[1].numpy(), dim), dim)
            np.testing.assert_array_equal(picked.squeeze(dim), _np(want[0]))
        got = et.kthvalue(e, 17, dim, keepdim=True)
        want = torch.kthvalue(t, 17, dim, keepdim=True)
        np.testing.assert_array_equal(_np(got[0]), _np(want[0]))


def test_order_statistics_keep_their_gradient(autograd):
    a = RNG.permutation(600).reshape(20, 30).astype(np.float64)
    e = et.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    (et.median(e, 1).values * et.arange(20.0)).sum().backward()
    (torch.median(t, 1).values * torch.arange(20.0)).sum().backward()
    np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("name", ["float32", "float64", "int64", "uint8", "bool"])
def test_running_extremes_match_torch(name):
    e, t = _pair(name, (7, 3000))
    for dim in (0, 1):
        for op in ("cummax", "cummin"):
            got, want = getattr(et, op)(e, dim), getattr(torch, op)(t, dim)
            np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
            np.testing.assert_array_equal(_np(got.values), _np(want.values))


def _running_extreme(a: np.ndarray, maximum: bool):
    """(values, indices) along axis 0 by PyTorch's rule, one element at a time: a NaN takes
    over and stays, an equal value takes over (the latest of equal extremes)."""
    values, indices = np.empty_like(a), np.empty(a.shape, np.int64)
    best, at = a[0].copy(), np.zeros(a.shape[1:], np.int64)
    for k in range(a.shape[0]):
        v = a[k]
        take = np.isnan(v) | (~np.isnan(best) & ((v >= best) if maximum else (v <= best)))
        best, at = np.where(take, v, best), np.where(take, k, at)
        values[k], indices[k] = best, at
    return values, indices


def _extreme_lines(K: int, width: int) -> np.ndarray:
    """(K, width) float64 lines that reach the kernels' slow and fast blocks: random, rising,
    falling, constant (ties everywhere), NaN at the start, in the middle, at the end and at
    all three, -inf / inf, and a new extreme at each block boundary."""
    cols = [RNG.standard_normal(K), np.arange(K, dtype=np.float64), -np.arange(K, dtype=np.float64),
            np.full(K, 2.0)]
    for at in (0, K // 2, K - 1):
        c = RNG.standard_normal(K)
        c[at] = np.nan
        cols.append(c)
    c = RNG.standard_normal(K)
    c[[0, K // 2, K - 1]] = np.nan  # a later NaN takes over from an earlier one
    cols.append(c)
    c = RNG.standard_normal(K)
    c[::7] = -np.inf
    c[K // 3] = np.inf
    cols.append(c)
    c = RNG.standard_normal(K)
    c[::64] = np.arange(len(c[::64])) + 10.0
    cols.append(c)
    cols = (cols * (width // len(cols) + 1))[:width]
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("K", [1, 63, 64, 65, 300])
@pytest.mark.parametrize("width", [1, 3, 70])
def test_running_extremes_blocks_and_tiles(lib, lib_threads, K, width):
    """Contiguous lines (dim last: checked in blocks) and lines side by side (dim first:
    advanced in tiles of columns), against the rule applied one element at a time."""
    a = _extreme_lines(K, width)
    for maximum in (True, False):
        for dt in ("float32", "float64", "bfloat16"):
            x = lib.tensor(a, dtype=getattr(lib, dt))
            ref = x.double().numpy()
            want_v, want_i = _running_extreme(ref, maximum)
            for dim, t in ((0, x), (1, x.t().contiguous())):
                got = (t.cummax if maximum else t.cummin)(dim)
                gv, gi = got.values.double().numpy(), got.indices.numpy()
                if dim == 1:
                    gv, gi = gv.T, gi.T
                np.testing.assert_array_equal(gi, want_i, err_msg=f"{dt} dim {dim}")
                np.testing.assert_array_equal(gv, want_v, err_msg=f"{dt} dim {dim}")
                assert got.values.dtype == x.dtype


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_logcumsumexp_matches_torch(name):
    a = RNG.standard_normal((5, 4000)) * 30
    a[0, 10] = np.nan
    a[1, :5] = -np.inf
    a[2, 100] = np.inf
    e = et.tensor(a, dtype=getattr(et, name))
    t = torch.tensor(a, dtype=getattr(torch, name))
    for dim in (0, 1):
        np.testing.assert_allclose(et.logcumsumexp(e, dim).numpy(),
                                   torch.logcumsumexp(t, dim).numpy(),
                                   rtol=1e-6 if name == "float32" else 1e-13, equal_nan=True)


def test_logcumsumexp_gradients_match_torch(autograd):
    ea = autograd
    a = RNG.standard_normal((3, 50)) * 5
    e = et.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    cot = RNG.standard_normal((3, 50))
    (et.logcumsumexp(e, 1) * et.tensor(cot)).sum().backward()
    (torch.logcumsumexp(t, 1) * torch.tensor(cot)).sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
    x = et.tensor(a[:, :6], requires_grad=True)
    assert ea.gradcheck(lambda v: et.logcumsumexp(v, 1), (x,))
    assert ea.gradgradcheck(lambda v: et.logcumsumexp(v, 0), (x,))


@pytest.mark.parametrize("name", ["float64", "int64", "bool"])
def test_unique_inverse_and_counts_match_torch(name):
    e, t = _pair(name, (40, 500))
    values, inverse, counts = et.unique(e, return_inverse=True, return_counts=True)
    tvalues, tinverse, tcounts = torch.unique(t, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(_np(values), _np(tvalues))
    np.testing.assert_array_equal(counts.numpy(), tcounts.numpy())
    # each NaN is its own value (which NaN entry an element maps to is the sort's choice):
    # the inverse rebuilds the input, and equals PyTorch's for every other element
    np.testing.assert_array_equal(_np(values)[inverse.numpy()], _np(t))
    number = ~np.isnan(_np(t).astype(np.float64))
    np.testing.assert_array_equal(inverse.numpy()[number], tinverse.numpy()[number])
    np.testing.assert_array_equal(_np(et.unique(e)), _np(torch.unique(t)))
