"""The CUDA reduction engine (backends/cuda/reduce.cuh) and the ops on it, against the CPU
kernels: sum, mean, prod, all, any, var, std, norm, logsumexp and the scans cumsum/cumprod
(ops/reduce/reduce_cuda.cu), max/min/amax/amin/argmax/argmin (ops/reduce/extremes_cuda.cu),
and multinomial (ops/random/random_cuda.cu).

Shapes are picked to run every path of the engine: rows of a few elements (a thread per
output), rows of tens to hundreds (a warp per row), long rows (a block per row), columns
(threads along the inner dims, the reduced dim split across threads in y), few outputs of a
long reduced dim (split across blocks and combined in a second pass), strided views read in
place, layouts that need a copy, and empty reductions. Inputs made of small multiples of 0.5
sum exactly in any order, so those results are compared for equality; other floating results
within a tolerance. multinomial uses the CPU's counter scheme: the same seed gives the same
draws.

Runs only where a GPU is present; skipped elsewhere (``EMBER_CUDA_TEST_DEVICE=cpu``, as in
``nox -s cuda_cpu_mode``, runs it against the CPU, which checks the tests themselves).
"""

import itertools
import warnings

import numpy as np
import pytest

import ember_tensor as et
from cuda_testing import (  # noqa: E402
    ALL,
    DEV,
    FLOATS,
    INTS,
    assert_close,
    assert_equal,
    assert_same_error,
    host,
    normal,
    on,
    requires_device,
    values,
)

pytestmark = requires_device

# every reduced-dims argument of a 3-D tensor: None, each dim (also negative), each pair, all
DIMS_3D = [None, 0, 1, 2, -1, (0, 1), (0, 2), (1, 2), (-3, -1), (0, 1, 2)]

# 3-D shapes whose reductions take every engine path (see the module docstring)
SHAPES_3D = [(6, 70, 9), (3, 40, 600), (7, 13, 50), (5, 100, 3)]


def on_dev(t, dev):
    return t.to(dev)


def dim_kw(dim):
    return {} if dim is None else {"dim": dim}


def variants(x):
    """x and non-contiguous views of it: transposed, sliced with a step, permuted."""
    yield x
    yield x.transpose(0, 2)
    yield x[:, ::2]
    yield x.permute(1, 2, 0)


# ---------------------------------------------------------------------------------------------
# sum / mean / prod


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", SHAPES_3D)
def test_sum_over_every_dim_combination_matches_cpu(dtype, shape):
    x = values(shape, dtype, 1)
    for v in variants(x):
        for dim in DIMS_3D:
            for keepdim in [False, True]:
                want = et.sum(v, keepdim=keepdim, **dim_kw(dim))
                assert_equal(et.sum(on(v), keepdim=keepdim, **dim_kw(dim)), want)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES_3D)
def test_mean_over_every_dim_combination_matches_cpu(dtype, shape):
    x = values(shape, dtype, 2)
    for v in variants(x):
        for dim in DIMS_3D:
            want = et.mean(v, **dim_kw(dim))
            assert_close(et.mean(on(v), **dim_kw(dim)), want)
            want = et.mean(v, keepdim=True, **dim_kw(dim))
            assert_close(et.mean(on(v), keepdim=True, **dim_kw(dim)), want)


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_sums_of_random_values_are_close(dtype):
    x = normal((4, 300, 7), dtype, 3)
    # float32 and float64 sum in another order: 5x the tolerance table; the 16-bit floats sum
    # in float32 and round once: the table
    scale = 1 if dtype in [et.float16, et.bfloat16] else 5
    for dim in DIMS_3D:
        assert_close(et.sum(on(x), **dim_kw(dim)), et.sum(x, **dim_kw(dim)), scale)


@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.int32, et.int64, et.uint8])
def test_large_sums_take_the_multi_block_paths(dtype):
    big = values((1 << 20,), dtype, 4)
    assert_equal(et.sum(on(big)), et.sum(big))
    assert_equal(et.sum(on(big).reshape(1024, 1024), 0), et.sum(big.reshape(1024, 1024), 0))
    m = values((3000, 5000), dtype, 5)
    d = on(m)
    for dim in [None, 0, 1, (0, 1)]:
        assert_equal(et.sum(d, **dim_kw(dim)), et.sum(m, **dim_kw(dim)))
    assert_equal(et.sum(d.t(), 0), et.sum(m.t(), 0))
    tall = values((100000, 4), dtype, 6)  # few outputs down a long column: split across blocks
    assert_equal(et.sum(on(tall), 0), et.sum(tall, 0))
    assert_equal(et.sum(on(tall), 1), et.sum(tall, 1))
    if dtype in [et.float32, et.float64]:
        assert_equal(et.mean(on(big)), et.mean(big))
        assert_equal(et.mean(d, 0), et.mean(m, 0))
        assert_equal(et.mean(d, 1), et.mean(m, 1))


def test_sum_of_random_floats_in_float32_accumulates_like_the_cpu():
    x = normal((1 << 20,), et.float32, 7) + 1.0
    got, want = float(et.sum(on(x)).cpu()), float(et.sum(x))
    exact = float(et.sum(x.to(et.float64)))
    # both accumulate in float32 (pairwise / as a tree): close to the exact sum, not to a
    # double accumulation rounded once
    assert abs(got - exact) <= 1e-5 * abs(exact)
    assert abs(want - exact) <= 1e-5 * abs(exact)


def test_sum_dtypes_and_dtype_argument_match_cpu():
    for src in ALL:
        x = values((5, 6), src, 8)
        for dt in [None, et.float64, et.int64, et.int32, et.float16, et.bool]:
            kw = {} if dt is None else {"dtype": dt}
            assert_equal(et.sum(on(x), 1, **kw), et.sum(x, 1, **kw))
            assert_equal(et.prod(on(x), 1, **kw), et.prod(x, 1, **kw))
        if src in FLOATS:
            assert_close(et.mean(on(x), 0, dtype=et.float64), et.mean(x, 0, dtype=et.float64))
    big = et.full((4,), 2**62, dtype=et.int64)  # int64 sums wrap as on the CPU
    assert_equal(et.sum(on(big)), et.sum(big))


@pytest.mark.parametrize("dtype", ALL)
def test_prod_matches_cpu(dtype):
    rng = np.random.default_rng(9)
    if dtype == et.bool:
        x = et.tensor(rng.integers(0, 2, (4, 30, 5)).astype(bool))
    else:
        x = et.tensor(rng.choice([-1.0, 1.0, 1.0, 2.0], (4, 30, 5))).to(dtype)
    for dim in [None, 0, 1, 2, -1]:
        for keepdim in [False, True]:
            kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
            assert_equal(et.prod(on(x), **kw), et.prod(x, **kw))
    ones = et.tensor(rng.choice([-1.0, 1.0], (1 << 20,))).to(dtype if dtype != et.bool else et.int8)
    assert_equal(et.prod(on(ones)), et.prod(ones))
    ints = values((3000, 50), et.int64, 10)  # int64 products wrap as on the CPU
    assert_equal(et.prod(on(ints), 1), et.prod(ints, 1))
    assert_equal(et.prod(on(ints), 0), et.prod(ints, 0))


def test_empty_reductions_match_cpu():
    for shape, dims in [
        ((0, 4), 0),
        ((0, 4), 1),
        ((3, 0, 2), (1,)),
        ((3, 0, 2), (0, 2)),
        ((0,), None),
    ]:
        for dtype in [et.float32, et.int32, et.bool, et.float16]:
            x = et.zeros(shape, dtype=dtype)
            kw = dim_kw(dims)
            assert_equal(et.sum(on(x), **kw), et.sum(x, **kw))  # 0
            assert_equal(et.all(on(x), **kw), et.all(x, **kw))  # True
            assert_equal(et.any(on(x), **kw), et.any(x, **kw))  # False
            if dtype in FLOATS:
                assert_equal(et.mean(on(x), **kw), et.mean(x, **kw))  # NaN
                assert_equal(
                    et.logsumexp(on(x), dims if dims is not None else []),
                    et.logsumexp(x, dims if dims is not None else []),
                )  # -inf
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    assert_equal(et.var(on(x), **kw), et.var(x, **kw))  # NaN
                assert_equal(et.norm(on(x), 2, **kw), et.norm(x, 2, **kw))  # 0
        x = et.zeros(shape)
        if not isinstance(dims, tuple):
            kw = {} if dims is None else {"dim": dims}
            assert_equal(et.prod(on(x), **kw), et.prod(x, **kw))  # 1
            assert_equal(et.cumsum(on(x), 0), et.cumsum(x, 0))
    s = values((), et.float32, 11)  # a 0-d tensor reduces to itself
    for f in [et.sum, et.mean, et.prod, et.all, et.any, et.amax]:
        assert_equal(f(on(s)), f(s))
    assert_equal(et.sum(on(s), 0, keepdim=True), et.sum(s, 0, keepdim=True))


def test_out_argument_matches_cpu():
    x = values((4, 5, 6), et.float32, 12)
    for f, args in [
        (et.sum, ((0, 2),)),
        (et.mean, (1,)),
        (et.prod, (2,)),
        (et.var, (1,)),
        (et.std, ((0, 1),)),
        (et.logsumexp, ((0,),)),
        (et.all, (1,)),
        (et.any, (2,)),
        (et.amax, ((0, 2),)),
        (et.argmax, (1,)),
        (et.cumsum, (1,)),
        (et.cumprod, (0,)),
    ]:
        want = f(x, *args)
        out = et.empty(tuple(want.shape), dtype=want.dtype, device=DEV)
        got = f(on(x), *args, out=out)
        assert got is out or got.data_ptr() == out.data_ptr()
        assert_close(out, want)
        strided = et.empty((2,) + tuple(want.shape), dtype=want.dtype, device=DEV)[1]
        f(on(x), *args, out=strided)  # a non-contiguous out is written through
        assert_close(strided, want)
        resized = et.empty((0,), dtype=want.dtype, device=DEV)  # an empty out is resized
        f(on(x), *args, out=resized)
        assert_close(resized, want)
    wider = et.empty((4, 6), dtype=et.float64, device=DEV)  # a wider out dtype is cast into
    et.sum(on(x), 1, out=wider)
    assert_close(wider, et.sum(x, 1).to(et.float64))

    def narrowing(dev):
        et.sum(on_dev(x, dev), 1, out=et.empty((4, 6), dtype=et.int64, device=dev))

    def wrong_shape(dev):
        et.sum(on_dev(x, dev), 1, out=et.empty((3, 3), device=dev))

    assert_same_error(narrowing)
    assert_same_error(wrong_shape)


def test_in_place_style_out_aliasing_self_matches_cpu():
    x = values((6, 6), et.float32, 13)
    want = x.clone()
    et.cumsum(want, 1, out=want)
    got = on(x)
    et.cumsum(got, 1, out=got)
    assert_equal(got, want)


def test_reduction_argument_errors_match_cpu():
    x = values((3, 4), et.float32, 14)
    i = values((3, 4), et.int32, 15)
    cases = [
        lambda d: et.sum(on_dev(x, d), (0, 0)),
        lambda d: et.sum(on_dev(x, d), 2),
        lambda d: et.mean(on_dev(i, d)),
        lambda d: et.mean(on_dev(x, d), dtype=et.int64),
        lambda d: et.prod(on_dev(x, d), 3),
        lambda d: et.var(on_dev(x, d), 0, unbiased=True, correction=1),
        lambda d: et.std(on_dev(i, d)),
        lambda d: et.norm(on_dev(i, d)),
        lambda d: et.norm(on_dev(x, d), 2, dtype=et.float16),
        lambda d: et.norm(on_dev(et.zeros((0, 3)), d), float("inf")),
        lambda d: et.norm(on_dev(et.zeros((0, 3)), d), -1, (0,)),
        lambda d: et.logsumexp(on_dev(x, d), (5,)),
        lambda d: et.all(on_dev(x, d), (0, -2)),
        lambda d: et.cumsum(on_dev(x, d), 2),
        lambda d: et.cumsum(on_dev(x, d), 0, dtype=et.bool),
        lambda d: et.cumprod(on_dev(i.to(et.bool), d), 0, dtype=et.bool),
    ]
    for run in cases:
        assert_same_error(run)


# ---------------------------------------------------------------------------------------------
# all / any


@pytest.mark.parametrize("dtype", ALL)
def test_all_any_match_cpu(dtype):
    rng = np.random.default_rng(16)
    for shape in SHAPES_3D[:2]:
        if dtype == et.bool:
            x = et.tensor(rng.random(shape) < 0.97)
        else:
            x = et.tensor((rng.random(shape) < 0.97).astype(np.float64)).to(dtype)
        for v in variants(x):
            for dim in DIMS_3D + [()]:  # () reduces nothing
                for f in [et.all, et.any]:
                    want = f(v, **dim_kw(dim))
                    assert_equal(f(on(v), **dim_kw(dim)), want)  # uint8 gives uint8
                    assert_equal(
                        f(on(v), keepdim=True, **dim_kw(dim)), f(v, keepdim=True, **dim_kw(dim))
                    )
    if dtype in FLOATS:
        nan = et.tensor([float("nan"), 0.0, -0.0]).to(dtype)  # NaN is true, -0 false
        assert_equal(et.all(on(nan)), et.all(nan))
        assert_equal(et.any(on(nan[1:])), et.any(nan[1:]))
        assert_equal(et.any(on(nan)), et.any(nan))
    big = et.ones(1 << 20, dtype=dtype)
    assert_equal(et.all(on(big)), et.all(big))
    assert_equal(et.any(on(big) == 0), et.any(big == 0))


# ---------------------------------------------------------------------------------------------
# var / std


@pytest.mark.parametrize("dtype", FLOATS)
def test_var_std_match_cpu(dtype):
    x = normal((6, 70, 9), dtype, 17) * 3 + 1
    for v in [x, x.transpose(0, 2)]:
        for dim in DIMS_3D:
            for f in [et.var, et.std]:
                assert_close(f(on(v), **dim_kw(dim)), f(v, **dim_kw(dim)))
                assert_close(
                    f(on(v), keepdim=True, unbiased=False, **dim_kw(dim)),
                    f(v, keepdim=True, unbiased=False, **dim_kw(dim)),
                )
                assert_close(
                    f(on(v), correction=2.5, **dim_kw(dim)), f(v, correction=2.5, **dim_kw(dim))
                )
    special = values((5, 8), dtype, 18, special=True)
    assert_close(et.var(on(special), 1), et.var(special, 1))


def test_var_std_of_large_inputs_and_the_dof_warning_match_cpu():
    x = normal((1 << 20,), et.float32, 19) * 2 + 100  # a large mean: the two-pass quality matters
    assert_close(et.var(on(x)), et.var(x), 5)  # 2^20 values, merged in another order: 5x
    m = normal((3000, 5000), et.float64, 20)
    for dim in [0, 1, None]:
        assert_close(et.std(on(m), **dim_kw(dim)), et.std(m, **dim_kw(dim)))
    one = normal((4, 1), et.float32, 21)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0") as cpu_warn:
        want = et.var(one, 1)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0") as dev_warn:
        got = et.var(on(one), 1)
    assert str(cpu_warn[0].message) == str(dev_warn[0].message)
    assert_equal(got, want)  # 0 / 0: NaN
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_equal(et.var(on(m[:2, :2]), 0, correction=3), et.var(m[:2, :2], 0, correction=3))


# ---------------------------------------------------------------------------------------------
# norm, logsumexp


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [2, 1, 0, float("inf"), float("-inf"), 3, 0.5, -1.5])
def test_norm_matches_cpu(dtype, p):
    x = normal((6, 70, 9), dtype, 22)
    scale = 1.5  # sums of powers in another order, then a root
    for v in [x, x.transpose(0, 2)]:
        for dim in DIMS_3D:
            assert_close(et.norm(on(v), p, **dim_kw(dim)), et.norm(v, p, **dim_kw(dim)), scale)
    assert_close(
        et.norm(on(x), p, (1,), keepdim=True), et.norm(x, p, (1,), keepdim=True), scale
    )
    if dtype != et.float64:
        assert_close(
            et.norm(on(x), p, (0, 2), dtype=et.float64),
            et.norm(x, p, (0, 2), dtype=et.float64),
            scale,
        )
    special = values((4, 9), dtype, 23, special=True)
    assert_close(et.norm(on(special), p, (1,)), et.norm(special, p, (1,)), scale)


def test_norm_of_large_inputs_matches_cpu():
    x = normal((1 << 20,), et.float32, 24)
    scale = 5  # float sums of up to 2^20 values in another order
    for p in [2, 1, float("inf")]:
        assert_close(et.norm(on(x), p), et.norm(x, p), scale)
    m = normal((3000, 5000), et.float32, 25)
    assert_close(et.norm(on(m), 2, (0,)), et.norm(m, 2, (0,)), scale)
    assert_close(et.norm(on(m), 2, (1,)), et.norm(m, 2, (1,)), scale)


@pytest.mark.parametrize("dtype", FLOATS + [et.int32, et.bool])
def test_logsumexp_matches_cpu(dtype):
    x = normal((6, 70, 9), et.float64, 26) * 4
    x = x.to(dtype) if dtype in FLOATS else (x > 0).to(dtype)
    for v in [x, x.transpose(0, 2)]:
        for dim in DIMS_3D[1:]:
            dims = dim if isinstance(dim, tuple) else (dim,)
            assert_close(et.logsumexp(on(v), dims), et.logsumexp(v, dims))
            assert_close(
                et.logsumexp(on(v), dims, keepdim=True), et.logsumexp(v, dims, keepdim=True)
            )
    if dtype in FLOATS:
        inf, nan = float("inf"), float("nan")
        rows = et.tensor(
            [
                [-inf, -inf, -inf],
                [inf, 1.0, 2.0],
                [nan, inf, 1.0],
                [-inf, 0.0, -inf],
                [1.0, 2.0, 3.0],
                [inf, -inf, 0.0],
            ]
        ).to(dtype)
        assert_close(et.logsumexp(on(rows), (1,)), et.logsumexp(rows, (1,)))
        assert_close(et.logsumexp(on(rows), (0,)), et.logsumexp(rows, (0,)))


def test_logsumexp_of_large_inputs_matches_cpu():
    x = normal((1 << 20,), et.float32, 27) * 10
    assert_close(et.logsumexp(on(x), (0,)), et.logsumexp(x, (0,)))
    m = normal((3000, 5000), et.float32, 28)
    assert_close(et.logsumexp(on(m), (0,)), et.logsumexp(m, (0,)))
    assert_close(et.logsumexp(on(m), (1,)), et.logsumexp(m, (1,)))


# ---------------------------------------------------------------------------------------------
# max / min / amax / amin / argmax / argmin on the engine


@pytest.mark.parametrize("dtype", ALL)
def test_extreme_reductions_over_every_dim_combination_match_cpu(dtype):
    x = values((6, 70, 9), dtype, 29, special=True)
    for v in variants(x):
        for dim in DIMS_3D[1:]:
            dims = dim if isinstance(dim, tuple) else (dim,)
            assert_equal(et.amax(on(v), dims), et.amax(v, dims))
            assert_equal(et.amin(on(v), dims, keepdim=True), et.amin(v, dims, keepdim=True))
        for d in [0, 1, 2, -1]:
            got, want = on(v).max(dim=d), v.max(dim=d)
            assert_equal(got.values, want.values)
            assert_equal(got.indices, want.indices)
            if dtype != et.bool:
                assert_equal(et.argmin(on(v), d), et.argmin(v, d))
        assert_equal(et.max(on(v)), et.max(v))
        if dtype != et.bool:
            assert_equal(et.argmax(on(v)), et.argmax(v))


@pytest.mark.parametrize("dtype", [et.float32, et.float16, et.int32, et.uint8])
def test_extreme_reductions_of_large_inputs_match_cpu(dtype):
    big = values((1 << 20,), dtype, 30)  # many ties: the first index wins across blocks
    for f in [et.argmax, et.argmin]:
        assert_equal(f(on(big)), f(big))
    assert_equal(et.max(on(big)), et.max(big))
    m = values((3000, 5000), dtype, 31, special=True)
    d = on(m)
    for dim in [0, 1]:
        got, want = d.min(dim=dim), m.min(dim=dim)
        assert_equal(got.values, want.values)
        assert_equal(got.indices, want.indices)
        assert_equal(et.argmax(d.t(), dim), et.argmax(m.t(), dim))
    assert_equal(et.amax(d, (0, 1)), et.amax(m, (0, 1)))
    if dtype in [et.float32, et.float16]:
        late_nan = np.zeros(1 << 20)
        late_nan[[900000, 1000000]] = np.nan
        t = et.tensor(late_nan).to(dtype)
        assert_equal(et.argmax(on(t)), et.argmax(t))  # the first NaN
        assert_equal(et.min(on(t)), et.min(t))


# ---------------------------------------------------------------------------------------------
# cumsum / cumprod


@pytest.mark.parametrize("dtype", ALL)
def test_cumsum_cumprod_along_every_dim_match_cpu(dtype):
    x = values((6, 70, 9), dtype, 32)
    rng = np.random.default_rng(33)
    if dtype == et.bool:
        p = et.tensor(rng.random((6, 70, 9)) < 0.95)
    else:
        p = et.tensor(rng.choice([-1.0, 1.0, 1.0, 2.0, 0.5], (6, 70, 9))).to(dtype)
    for v, w in zip(variants(x), variants(p)):
        for d in [0, 1, 2, -1, -3]:
            assert_equal(et.cumsum(on(v), d), et.cumsum(v, d))
            assert_equal(et.cumprod(on(w[:, :20]), d), et.cumprod(w[:, :20], d))
    for dt in [et.float64, et.int32, et.float16]:
        assert_equal(et.cumsum(on(x), 1, dtype=dt), et.cumsum(x, 1, dtype=dt))
    s = values((), dtype, 34)
    assert_equal(et.cumsum(on(s), 0), et.cumsum(s, 0))
    assert_equal(et.cumprod(on(s), -1), et.cumprod(s, -1))


@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.float16, et.int64, et.int8])
def test_long_scans_match_cpu(dtype):
    big = values((1 << 20,), dtype, 35)  # one long row: chunks, their carries, then the scan
    assert_equal(et.cumsum(on(big), 0), et.cumsum(big, 0))
    m = values((3000, 5000), dtype, 36)
    assert_equal(et.cumsum(on(m), 0), et.cumsum(m, 0))  # columns
    assert_equal(et.cumsum(on(m), 1), et.cumsum(m, 1))  # rows
    tall = values((200000, 3), dtype, 37)  # few long columns: chunked
    assert_equal(et.cumsum(on(tall), 0), et.cumsum(tall, 0))
    short = values((1000, 40), dtype, 38)  # short rows: a thread each
    assert_equal(et.cumsum(on(short), 1), et.cumsum(short, 1))
    signs = et.tensor(np.random.default_rng(39).choice([-1.0, 1.0], (1 << 20,))).to(dtype)
    assert_equal(et.cumprod(on(signs), 0), et.cumprod(signs, 0))


def test_float32_cumsum_accumulates_in_double_like_the_cpu():
    x = et.full((1 << 20,), 0.1, dtype=et.float32)
    got, want = on(x).cumsum(0), x.cumsum(0)
    # float accumulation would drift by ~1e-2 here; double accumulation rounds each prefix once
    # (1/200 of the tolerance table: rtol 1e-7)
    assert_close(got, want, 0.005)


# ---------------------------------------------------------------------------------------------
# multinomial


def generators(seed):
    a, b = et.Generator(), et.Generator()
    a.manual_seed(seed)
    b.manual_seed(seed)
    return a, b


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_equals_the_cpu_for_the_same_seed(replacement):
    g_cpu, g_dev = generators(2024)
    rng = np.random.default_rng(40)
    w = rng.random((6, 3000))
    w[:, ::5] = 0  # zero weights: never drawn with replacement, drawn last without
    w[2, 10:2990] = 0  # a row with a few weights at each end
    cases = [
        et.tensor([0.1, 0.0, 0.3, 0.6]),
        et.tensor(w),
        et.tensor(w).to(et.float32),
        et.tensor(w[:, :700]).to(et.float16).t().contiguous().t(),  # non-contiguous rows
        et.tensor(rng.random((3, 1))),
    ]
    for probs in cases:
        n = min(probs.shape[-1], 20) if not replacement else 50
        want = et.multinomial(probs, n, replacement, generator=g_cpu)
        got = et.multinomial(on(probs), n, replacement, generator=g_dev)
        assert_equal(got, want)
    assert g_dev.get_state() == g_cpu.get_state()
    full = et.multinomial(on(et.tensor(w)), 3000, False, generator=g_dev)  # every category once
    assert all(len(set(row)) == 3000 for row in host(full).tolist())


def test_multinomial_with_many_categories_draws_from_the_distribution():
    g_cpu, g_dev = generators(7)
    cats = 100000  # longer than the exact cumulative sums: a parallel scan
    w = np.zeros(cats)
    w[[5, 50000, 99999]] = [1.0, 2.0, 7.0]
    probs = et.tensor(w)
    got = host(et.multinomial(on(probs), 20000, True, generator=g_dev))
    et.multinomial(probs, 20000, True, generator=g_cpu)
    assert g_dev.get_state() == g_cpu.get_state()
    counts = np.array([(got == k).sum() for k in [5, 50000, 99999]])
    assert counts.sum() == 20000
    np.testing.assert_allclose(counts / 20000, [0.1, 0.2, 0.7], atol=0.02)
    order = host(et.multinomial(on(probs), 3, False, generator=g_dev))
    assert sorted(order.tolist()) == [5, 50000, 99999]


def test_multinomial_without_replacement_follows_sequential_draws():
    g = et.Generator()
    g.manual_seed(3)
    probs = on(et.tensor([[1.0, 2.0, 3.0, 4.0]]).expand(20000, 4).contiguous())
    first = host(et.multinomial(probs, 2, False, generator=g))
    freq = np.bincount(first[:, 0], minlength=4) / 20000
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.3, 0.4], atol=0.015)
    assert (first[:, 0] != first[:, 1]).all()


def test_multinomial_errors_match_cpu():
    good = et.tensor([[0.2, 0.8], [0.5, 0.5]])
    cases = [
        lambda d: et.multinomial(on_dev(et.ones((2, 2, 2)), d), 1),
        lambda d: et.multinomial(on_dev(good, d), 0),
        lambda d: et.multinomial(on_dev(et.ones((2, 0)), d), 1),
        lambda d: et.multinomial(on_dev(good, d), 3, False),
        lambda d: et.multinomial(on_dev(et.tensor([[0.2, 0.8], [0.5, -0.5]]), d), 1),
        lambda d: et.multinomial(on_dev(et.tensor([[0.2, float("inf")], [0.0, 0.0]]), d), 1),
        lambda d: et.multinomial(on_dev(et.tensor([[0.0, 0.0], [float("nan"), 1.0]]), d), 1),
        lambda d: et.multinomial(on_dev(et.tensor([1.0, 2.0, float("nan"), -1.0]), d), 1, True),
    ]
    for run in cases:
        assert_same_error(run)


# ---------------------------------------------------------------------------------------------
# the engine's layouts: in-place strided views and copies give the same results


def test_strided_and_expanded_layouts_match_cpu():
    base = values((8, 30, 40), et.float32, 41)
    views = [
        base[:, 3:25, ::3],
        base.permute(2, 0, 1)[::2],
        base.transpose(0, 1)[::2, 1:7],
        et.tensor(np.arange(40.0)).reshape(1, 40).expand(30, 40),
        base[:, :, :1],
    ]
    for v in views:
        dims_all = [None] + [
            c for r in range(1, v.dim() + 1) for c in itertools.combinations(range(v.dim()), r)
        ]
        for dim in dims_all:
            assert_equal(et.sum(on(v), **dim_kw(dim)), et.sum(v, **dim_kw(dim)))
            assert_equal(
                et.amax(on(v), dim if dim is not None else ()),
                et.amax(v, dim if dim is not None else ()),
            )
        for d in range(v.dim()):
            assert_equal(et.argmax(on(v), d), et.argmax(v, d))
            assert_equal(et.cumsum(on(v), d), et.cumsum(v, d))


@pytest.mark.parametrize("dtype", INTS)
def test_integer_sums_accumulate_in_int64(dtype):
    x = et.full((70000,), 100, dtype=dtype)
    assert_equal(et.sum(on(x)), et.sum(x))  # int64 result, no overflow of the input type
    assert_equal(et.sum(on(x), dtype=dtype), et.sum(x, dtype=dtype))  # wraps like the CPU
