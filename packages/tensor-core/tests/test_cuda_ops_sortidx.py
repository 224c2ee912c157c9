"""CUDA kernels against the CPU kernels: sort, argsort, topk (ops/sort/sort_cuda.cu), nonzero,
masked_select (ops/index/select_cuda.cu) and index_put (ops/index/index_cuda.cu).

Rows of 1, 7, 1024, 3000, 4097, 5000 and 100000 elements take every path of the CUDA sort
(several short rows per block, one row per block, tiles plus global merge passes; 3000 is one
tile for 32-bit keys but not for 64-bit ones). sort and argsort equal the CPU exactly, ties
and NaN included. topk equals the CPU exactly where no values tie; with ties its values equal
the CPU's and its indices are checked to select those values (the CPU orders tied entries as
PyTorch's CPU selection leaves them, CUDA in index order). index_put with accumulate adds
repeated targets with atomics in no fixed order: the tests use values whose sums are exact.

Runs only where a GPU is present; skipped elsewhere (``EMBER_CUDA_TEST_DEVICE=cpu``, as in
``nox -s cuda_cpu_mode``, runs it against the CPU, which checks the tests themselves).
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
    normal,
    on,
    requires_device,
    values,
)

pytestmark = requires_device

SORT_LENGTHS = [1, 7, 1024, 3000, 4097, 5000, 100000]


SPAN = {et.uint8: 256, et.int8: 256, et.bfloat16: 256, et.float16: 2048, et.int16: 65536}


def distinct(shape, dtype, seed=0):
    """Values without ties (integers exact in dtype, shifted by 0.25 in float32/float64 so
    that no value is zero): at most SPAN[dtype] of them."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    span = SPAN.get(dtype, 10**6)
    assert n <= span
    base = -(span // 2) if dtype != et.uint8 else 0
    a = rng.permutation(span)[:n] + base
    if dtype in (et.float32, et.float64):
        a = a.astype(np.float64) + 0.25
    return et.tensor(a.reshape(shape)).to(dtype)


# ---------------------------------------------------------------------------------------------
# sort / argsort


@pytest.mark.parametrize("n", SORT_LENGTHS)
@pytest.mark.parametrize("dtype", ALL)
def test_sort_rows_of_every_length_match_cpu(dtype, n):
    x = values((n,), dtype, n, special=True)  # many ties, NaN, inf, -0.0
    for descending in [False, True]:
        want_v, want_i = et.sort(x, descending=descending)
        got_v, got_i = et.sort(on(x), descending=descending)
        assert_equal(got_v, want_v)
        assert_equal(got_i, want_i)
        assert_equal(et.argsort(on(x), descending=descending, stable=True), want_i)


@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.int8, et.float16, et.bool])
def test_sort_along_every_dim_and_of_many_rows_matches_cpu(dtype):
    cases = [((300, 7), 1), ((5, 1024, 3), 1), ((3, 5000), 1), ((3, 5000), 0), ((4, 3, 9), 0)]
    for shape, dim in cases:
        x = values(shape, dtype, 3, special=True)
        for descending in [False, True]:
            want_v, want_i = et.sort(x, dim, descending)
            got_v, got_i = et.sort(on(x), dim, descending)
            assert_equal(got_v, want_v)
            assert_equal(got_i, want_i)
            neg = dim - len(shape)
            assert_equal(et.argsort(on(x), neg, descending), et.argsort(x, neg, descending))
    x = values((6, 2000), dtype, 4, special=True)  # non-contiguous input
    got_v, got_i = on(x).t().sort(0)
    want_v, want_i = x.t().sort(0)
    assert_equal(got_v, want_v)
    assert_equal(got_i, want_i)


def test_sort_keeps_minus_zero_and_nan_order_like_the_cpu():
    x = et.tensor([0.0, -0.0, float("nan"), 1.0, -float("nan"), -0.0, float("-inf"), 0.0])
    for dtype in FLOATS:
        xd = x.to(dtype)
        for descending in [False, True]:
            want_v, want_i = et.sort(xd, descending=descending)
            got_v, got_i = et.sort(on(xd), descending=descending)
            assert_equal(got_i, want_i)
            assert np.array_equal(np.signbit(host(got_v)), np.signbit(host(want_v)))


def test_sort_of_empty_and_0d_tensors_matches_cpu():
    for shape, dim in [((0,), 0), ((3, 0), 1), ((3, 0), 0), ((0, 5), 1), ((), 0), ((), -1)]:
        x = values(shape, et.float32, 5)
        want_v, want_i = et.sort(x, dim)
        got_v, got_i = et.sort(on(x), dim)
        assert_equal(got_v, want_v)
        assert_equal(got_i, want_i)
        assert_equal(et.argsort(on(x), dim), et.argsort(x, dim))
    assert_same_error(lambda d: et.sort(et.zeros(3, 4, device=d), 2))
    assert_same_error(lambda d: et.argsort(et.zeros((), device=d), 1))


# ---------------------------------------------------------------------------------------------
# topk


def check_topk(x, k, dim, largest, sorted_, exact):
    """topk on DEV against the CPU: values equal (as a multiset when not sorted), the indices
    select those values, once each; equal to the CPU's when exact (no ties)."""
    want_v, want_i = et.topk(x, k, dim, largest, sorted_)
    got_v, got_i = et.topk(on(x), k, dim, largest, sorted_)
    assert got_v.dtype == want_v.dtype and got_i.dtype == et.int64
    assert tuple(got_v.shape) == tuple(want_v.shape) == tuple(got_i.shape)
    gv, wv, gi = host(got_v), host(want_v), host(got_i)
    if sorted_:
        np.testing.assert_array_equal(gv, wv)
    else:
        np.testing.assert_array_equal(np.sort(gv, axis=dim), np.sort(wv, axis=dim))
    if x.dim() > 0:
        np.testing.assert_array_equal(np.take_along_axis(host(x), gi, axis=dim), gv)
        si = np.sort(gi, axis=dim)
        assert not np.any(np.diff(si, axis=dim) == 0)
    if exact and sorted_:
        assert_equal(got_i, want_i)


@pytest.mark.parametrize("n", SORT_LENGTHS)
@pytest.mark.parametrize("dtype", [d for d in ALL if d != et.bool])
def test_topk_matches_cpu(dtype, n):
    ks = sorted({0, 1, min(3, n), n // 2, n})
    tied = values((n,), dtype, n, special=True)
    for largest in [True, False]:
        for k in ks:
            for sorted_ in [True, False]:
                check_topk(tied, k, -1, largest, sorted_, exact=False)
    m = min(n, SPAN.get(dtype, n))
    x = distinct((m,), dtype, m)
    for largest in [True, False]:
        for k in sorted({0, 1, min(3, m), m // 2, m}):
            check_topk(x, k, -1, largest, True, exact=True)


@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.int32, et.float16])
def test_topk_along_other_dims_matches_cpu(dtype):
    x = distinct((40, 3, 5), dtype, 7)
    for dim in [0, 1, 2, -3]:
        for largest in [True, False]:
            check_topk(x, 2, dim, largest, True, exact=True)
            check_topk(x.transpose(0, 2), 2, dim, largest, True, exact=True)
    big = distinct((3, 5000), dtype, 8) if dtype != et.float16 else normal((3, 5000), dtype)
    check_topk(big, 10, 1, True, True, exact=dtype != et.float16)
    check_topk(big, 2, 0, False, True, exact=dtype != et.float16)


def test_topk_of_empty_and_0d_tensors_and_its_errors_match_cpu():
    check_topk(et.tensor(2.5), 1, 0, True, True, exact=True)
    check_topk(et.tensor(2.5), 0, -1, True, True, exact=True)
    check_topk(et.zeros(0), 0, 0, True, True, exact=True)
    check_topk(et.zeros(3, 0), 0, 1, True, True, exact=True)
    check_topk(et.zeros(0, 4), 2, 1, True, True, exact=True)
    assert_same_error(lambda d: et.topk(et.zeros(5, device=d), 6))
    assert_same_error(lambda d: et.topk(et.zeros(5, device=d), -1))
    assert_same_error(lambda d: et.topk(et.zeros(5, 2, device=d), 1, 2))
    assert_same_error(lambda d: et.topk(et.zeros(5, dtype=et.bool, device=d), 1))
    assert_same_error(lambda d: et.topk(et.zeros((), device=d), 2))


# ---------------------------------------------------------------------------------------------
# nonzero


@pytest.mark.parametrize("dtype", ALL)
def test_nonzero_matches_cpu(dtype):
    for shape in [(), (0,), (3, 0, 2), (7,), (4, 7), (3, 4, 5), (2, 1, 3, 1, 2)]:
        x = values(shape, dtype, 9, special=True)
        assert_equal(et.nonzero(on(x)), et.nonzero(x))
    x = values((5, 6, 7), dtype, 10, special=True)  # non-contiguous
    assert_equal(on(x).transpose(0, 2).nonzero(), x.transpose(0, 2).nonzero())
    for v in [0, 1]:
        s = et.tensor(v).to(dtype)
        assert_equal(et.nonzero(on(s)), et.nonzero(s))


def test_nonzero_of_large_tensors_matches_cpu():
    rng = np.random.default_rng(11)
    for density in [0.001, 0.5, 1.0, 0.0]:
        a = rng.random(5_000_003) < density  # more than 1024 chunks of 4096
        x = et.tensor(a)
        assert_equal(et.nonzero(on(x)), et.nonzero(x))
    x = et.tensor(rng.random((1000, 3001)) < 0.3).to(et.float32)
    assert_equal(et.nonzero(on(x)), et.nonzero(x))


# ---------------------------------------------------------------------------------------------
# masked_select


@pytest.mark.parametrize("dtype", ALL)
def test_masked_select_matches_cpu(dtype):
    a = values((4, 1, 5), dtype, 12, special=True)
    m = values((3, 5), et.bool, 13)
    assert_equal(et.masked_select(on(a), on(m)), et.masked_select(a, m))  # broadcasting
    b = values((5, 6), dtype, 14, special=True)
    mb = values((6, 5), et.bool, 15)
    assert_equal(on(b).t().masked_select(on(mb)), b.t().masked_select(mb))  # non-contiguous
    assert_equal(et.masked_select(on(b), on(mb[:, :1].t())), et.masked_select(b, mb[:, :1].t()))
    e = values((0, 5), dtype, 16)
    assert_equal(et.masked_select(on(e), on(m[0])), et.masked_select(e, m[0]))
    s = values((), dtype, 17)  # a CPU 0-d self with a mask on the device
    assert_equal(et.masked_select(s, on(mb)), et.masked_select(s, mb))


def test_masked_select_out_large_and_errors_match_cpu():
    rng = np.random.default_rng(18)
    a = et.tensor(rng.standard_normal(3_000_001)).to(et.float32)
    m = et.tensor(rng.random(3_000_001) < 0.4)
    assert_equal(et.masked_select(on(a), on(m)), et.masked_select(a, m))
    out = et.empty((0,), dtype=et.float32, device=DEV)
    res = et.masked_select(on(a[:100]), on(m[:100]), out=out)
    assert_equal(out, et.masked_select(a[:100], m[:100]))
    assert_equal(res, et.masked_select(a[:100], m[:100]))
    assert_same_error(lambda d: et.masked_select(et.zeros(3, device=d), et.ones(3, device=d)))
    assert_same_error(
        lambda d: et.masked_select(
            et.zeros(3, device=d),
            et.ones(3, dtype=et.bool, device=d),
            out=et.empty(0, dtype=et.int64, device=d),
        )
    )
    assert_same_error(
        lambda d: et.masked_select(et.zeros(3, 4, device=d), et.ones(5, dtype=et.bool, device=d))
    )


# ---------------------------------------------------------------------------------------------
# index_put


def put_both(x, indices, v, accumulate=False):
    """index_put on the CPU and on DEV (function and in-place variants) and compare."""
    want = et.index_put(x, indices, v, accumulate=accumulate)
    di = [None if i is None else on(i) for i in indices]
    assert_equal(et.index_put(on(x), di, on(v), accumulate=accumulate), want)
    y = on(x).clone()
    res = y.index_put_(di, on(v), accumulate=accumulate)
    assert res is y or res.data_ptr() == y.data_ptr()
    assert_equal(y, want)


@pytest.mark.parametrize("dtype", ALL)
def test_index_put_matches_cpu(dtype):
    x = values((6, 5), dtype, 20)
    for acc in [False, True]:
        put_both(x, [et.tensor([0, -1, 3, 2])], values((4, 5), dtype, 21), acc)
        put_both(x, [et.tensor([0, -1, 3, 2])], values((5,), dtype, 22), acc)  # broadcast values
        put_both(x, [et.tensor([4]).to(et.int32)], values((1, 5), dtype, 23), acc)
        put_both(x, [et.tensor([[0], [2]]), et.tensor([1, -2, 4])], values((2, 3), dtype, 24), acc)
        put_both(x, [None, et.tensor([4, 0])], values((6, 2), dtype, 25), acc)
        put_both(
            x, [et.tensor([True, False, True, True, False, False])], values((5,), dtype, 26), acc
        )
        put_both(x, [values((6, 5), et.bool, 27)], values((), dtype, 28), acc)  # 2-d mask
        put_both(x, [values((6,), et.bool, 29).to(et.uint8)], values((), dtype, 30), acc)
        put_both(x, [None, None], values((6, 5), dtype, 31), acc)  # only full slices
        put_both(x, [et.tensor([], dtype=et.int64)], values((0, 5), dtype, 32), acc)
        z = values((4, 3, 5), dtype, 33)  # non-adjacent indices: the index dims come first
        put_both(z, [et.tensor([0, -1]), None, et.tensor([2, 4])], values((2, 3), dtype, 34), acc)
        put_both(
            z,
            [None, et.tensor([[1], [0]]), et.tensor([2, 4, 0])],
            values((4, 2, 3), dtype, 35),
            acc,
        )
    base, v = values((6, 5), dtype, 36), values((2, 6), dtype, 37)  # a non-contiguous target
    want = et.index_put(base.t(), [et.tensor([1, 3])], v, accumulate=True)
    y = on(base)
    y.t().index_put_([on(et.tensor([1, 3]))], on(v), accumulate=True)
    assert_equal(y.t(), want)


@pytest.mark.parametrize("dtype", ALL)
def test_index_put_accumulates_repeated_indices(dtype):
    x = values((6, 3), dtype, 40)
    idx = et.tensor([1, 1, -5, 4, 1, 0, 4])  # -5 is 1 as well
    put_both(x, [idx], values((7, 3), dtype, 41), accumulate=True)
    put_both(x, [idx, et.tensor([2])], values((7,), dtype, 42), accumulate=True)
    if dtype == et.bfloat16:
        return  # larger sums are exact only with more mantissa bits
    n = 200_000
    rng = np.random.default_rng(43)
    big_idx = et.tensor(rng.integers(-1000, 1000, n))
    put_both(values((1000,), dtype, 44), [big_idx], values((n,), dtype, 45), accumulate=True)


@pytest.mark.parametrize("dtype", [et.float32, et.int8, et.float16, et.bool, et.int64])
def test_index_put_with_repeated_indices_stores_one_of_the_values(dtype):
    x = values((5,), dtype, 50)
    idx = et.tensor([2, 2, 2, 0, -3])
    v = values((5,), dtype, 51)
    got = host(et.index_put(on(x), [on(idx)], on(v)))
    hv, hx = host(v), host(x)
    assert got[0] == hv[3] and got[1] == hx[1] and got[3] == hx[3] and got[4] == hx[4]
    assert got[2] in list(hv[[0, 1, 2, 4]])


def test_index_put_errors_match_cpu():
    def put(d, indices, v=None, shape=(6, 5), dtype=et.float32, acc=False):
        x = et.zeros(shape, dtype=dtype, device=d)
        v = et.ones((), device=d) if v is None else v.to(d)
        return et.index_put(x, [None if i is None else i.to(d) for i in indices], v, acc)

    assert_same_error(lambda d: put(d, [et.tensor([0, 6, 7])]))
    assert_same_error(lambda d: put(d, [et.tensor([0, -7])], acc=True))
    assert_same_error(lambda d: put(d, [et.tensor([0]), et.tensor([1, 5, -9])]))
    assert_same_error(lambda d: put(d, [None, et.tensor([[5]])]))
    assert_same_error(lambda d: put(d, [et.tensor([0])], v=et.ones((), dtype=et.float64)))
    assert_same_error(lambda d: put(d, [et.tensor([0]), et.tensor([0]), et.tensor([0])]))
    assert_same_error(lambda d: put(d, [et.ones(5, dtype=et.bool)]))
    assert_same_error(lambda d: put(d, [et.ones(6, 5, 2, dtype=et.bool)]))
    assert_same_error(lambda d: put(d, [et.tensor([0.0])]))
    assert_same_error(lambda d: put(d, [et.tensor([0, 1]), et.tensor([0, 1, 2])]))
    assert_same_error(lambda d: put(d, [et.tensor([0, 1])], v=et.ones(3)))
    assert_same_error(lambda d: put(d, [None, et.tensor([0])], shape=(3, 0)))
    # a bad index and a bad value shape: the index is reported
    assert_same_error(lambda d: put(d, [et.tensor([9])], v=et.ones(4)))
    # nothing is written: the indices are checked first
    for dev in ["cpu", DEV]:
        x = et.zeros(6, device=dev)
        with pytest.raises(IndexError):
            x.index_put_([et.tensor([0, 1, 6]).to(dev)], et.ones((), device=dev))
        assert not host(x).any()
