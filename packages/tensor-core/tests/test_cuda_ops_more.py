"""CUDA kernels against the CPU kernels: comparisons, logical ops, maximum/minimum, pow,
where, clamp (ops/elementwise/binary_cuda.cu), softmax (ops/reduce/softmax_cuda.cu), the
max/min/arg reductions (ops/reduce/extremes_cuda.cu), the random samplers
(ops/random/random_cuda.cu), arange (ops/creation/arange_cuda.cu), cat
(ops/shape/cat_cuda.cu), index_select, gather (ops/index/index_cuda.cu), embedding, nll_loss
(ops/nn/nn_cuda.cu) and layer_norm (ops/norm/layer_norm_cuda.cu).

Every op runs on the same inputs on both devices: broadcast shapes, non-contiguous inputs,
Python numbers and CPU 0-d tensors as operands, mixed dtypes. Results that the kernels compute
the same way are compared for equality; sums taken in another order, and CUDA's own math
functions (exp, log, pow, sin, cos), within a tolerance. The random ops use the CPU's counter
scheme, so the same generator state gives the same numbers on both devices.

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


# ---------------------------------------------------------------------------------------------
# comparisons and logical ops

COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]
LOGICAL = ["logical_and", "logical_or", "logical_xor"]


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", COMPARE + LOGICAL)
def test_comparison_and_logical_ops_match_cpu(op, dtype):
    f = getattr(et, op)
    a = values((4, 1, 5), dtype, 1, special=True)
    b = values((3, 5), dtype, 2, special=True)
    assert_equal(f(on(a), on(b)), f(a, b))  # broadcasting
    assert_equal(
        f(on(a).transpose(0, 2), on(a).transpose(0, 2)), f(a.transpose(0, 2), a.transpose(0, 2))
    )
    if op in COMPARE:  # Python numbers join as CPU scalars
        for scalar in [1, 0, -1.5, True, float("nan")]:
            assert_equal(f(on(a), scalar), f(a, scalar))
    s = values((), dtype, 3)  # a CPU 0-d tensor
    assert_equal(f(on(b), s), f(b, s))
    assert_equal(f(s, on(b)), f(s, b))


@pytest.mark.parametrize("op", COMPARE + LOGICAL)
@pytest.mark.parametrize(
    "dtypes",
    [
        (et.int32, et.float16),
        (et.uint8, et.int8),
        (et.bool, et.float32),
        (et.int64, et.float64),
        (et.bfloat16, et.float16),
    ],
)
def test_comparisons_promote_like_the_cpu(op, dtypes):
    f = getattr(et, op)
    a, b = values((6, 7), dtypes[0], 4), values((7,), dtypes[1], 5)
    assert_equal(f(on(a), on(b)), f(a, b))
    assert_equal(f(on(b), on(a)), f(b, a))
    big = et.tensor([2**53 + 1, 2**53, -(2**60) - 1])
    if op in COMPARE:  # an int64 tensor against a number beyond float's exact range: as int64
        assert_equal(f(on(big), 2**53 + 1), f(big, 2**53 + 1))
    assert_equal(f(on(big), on(big[:1])), f(big, big[:1]))


@pytest.mark.parametrize("op", COMPARE)
def test_comparison_out_and_in_place(op):
    f = getattr(et, op)
    a, b = values((3, 4), et.float32, 6, special=True), values((4,), et.float32, 7)
    out = et.empty((3, 4), dtype=et.bool, device=DEV)
    res = f(on(a), on(b), out=out)
    assert res is out or res.data_ptr() == out.data_ptr()
    assert_equal(out, f(a, b))
    out_f = et.empty((3, 4), dtype=et.float64, device=DEV)  # a bool result cast into out
    f(on(a), on(b), out=out_f)
    assert_equal(out_f, f(a, b).to(et.float64))
    x, y = on(a.clone()), a.clone()
    getattr(x, op + "_")(on(b))  # in place keeps self's dtype
    getattr(y, op + "_")(b)
    assert_equal(x, y)


def test_every_operand_a_cpu_scalar_with_cuda_out():
    out = et.empty((), dtype=et.bool, device=DEV)
    et.eq(et.tensor(2.0), 2, out=out)
    assert out.device.type == DEV and bool(out.cpu())
    out = et.empty((), dtype=et.float32, device=DEV)
    et.maximum(et.tensor(2.0), et.tensor(3.0), out=out)
    assert float(out.cpu()) == 3.0


@pytest.mark.parametrize("dtype", ALL)
def test_logical_not_matches_cpu(dtype):
    a = values((5, 6), dtype, 8, special=True)
    assert_equal(et.logical_not(on(a)), et.logical_not(a))
    assert_equal(et.logical_not(on(a).t()), et.logical_not(a.t()))
    out = et.empty((5, 6), dtype=et.int32, device=DEV)
    et.logical_not(on(a), out=out)
    assert_equal(out, et.logical_not(a).to(et.int32))


# ---------------------------------------------------------------------------------------------
# maximum / minimum, max / min of two tensors


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_minimum_match_cpu(op, dtype):
    f = getattr(et, op)
    a = values((4, 1, 6), dtype, 9, special=True)
    b = values((5, 6), dtype, 10, special=True)
    assert_equal(f(on(a), on(b)), f(a, b))  # NaN propagates, as on the CPU
    assert_equal(f(on(b).t(), on(b).t()), f(b.t(), b.t()))
    s = values((), dtype, 11)
    assert_equal(f(on(b), s), f(b, s))
    g = et.max if op == "maximum" else et.min
    assert_equal(g(on(a), on(b)), g(a, b))


def test_maximum_promotes_mixed_dtypes():
    a, b = values((3, 4), et.int32, 12), values((4,), et.float16, 13, special=True)
    assert_equal(et.maximum(on(a), on(b)), et.maximum(a, b))
    assert_equal(et.minimum(on(b), on(a)), et.minimum(b, a))
    c = values((3, 4), et.uint8, 14)
    d = values((3, 4), et.int8, 15)
    assert_equal(et.maximum(on(c), on(d)), et.maximum(c, d))


# ---------------------------------------------------------------------------------------------
# pow


@pytest.mark.parametrize("dtype", FLOATS)
def test_pow_of_floats_matches_cpu(dtype):
    base = (normal((4, 1, 5), et.float64, 16).abs() + 0.25).to(dtype)
    exponent = normal((3, 5), dtype, 17)
    assert_close(et.pow(on(base), on(exponent)), et.pow(base, exponent))
    for e in [2, 2.0, 3, 0.5, -1.5, 0]:
        assert_close(et.pow(on(base), e), et.pow(base, e))
    neg = normal((6,), dtype, 18)  # negative bases: NaN for fractional exponents, as on the CPU
    assert_close(et.pow(on(neg), 0.5), et.pow(neg, 0.5))
    assert_equal(et.pow(on(neg), 2), et.pow(neg, 2))  # x * x exactly
    assert_close(et.pow(2.5, on(exponent)), et.pow(2.5, exponent))  # a Python number base
    assert_close(et.pow(on(base).transpose(0, 2), 3), et.pow(base.transpose(0, 2), 3))


@pytest.mark.parametrize("dtype", INTS)
def test_pow_of_integers_matches_cpu(dtype):
    lo = 0 if dtype == et.uint8 else -3
    rng = np.random.default_rng(19)
    base = et.tensor(rng.integers(lo, 4, (5, 6))).to(dtype)
    exponent = et.tensor(rng.integers(0 if dtype == et.uint8 else -2, 40, (6,))).to(dtype)
    assert_equal(et.pow(on(base), on(exponent)), et.pow(base, exponent))  # wraps as the CPU
    for e in [0, 1, 2, 7, 63]:
        assert_equal(et.pow(on(base), e), et.pow(base, e))
    assert_close(et.pow(on(base), 0.5), et.pow(base, 0.5))  # a float number: float result
    assert_equal(et.pow(3, on(exponent)), et.pow(3, exponent))


def test_pow_errors_and_bool_operands_match_cpu():
    def int_to_negative(dev):
        et.pow(et.tensor([1, 2, 3]).to(dev), -1)

    assert_same_error(int_to_negative)

    def bools(dev):
        t = et.tensor([True, False]).to(dev)
        et.pow(t, t)

    assert_same_error(bools)
    t = et.tensor([True, False, True])
    assert_equal(et.pow(on(t), True), et.pow(t, True))
    assert_equal(et.pow(on(t), False), et.pow(t, False))
    x = on(normal((4,)).abs())
    x.pow_(2)
    y = normal((4,)).abs()
    y.pow_(2)
    assert_equal(x, y)


# ---------------------------------------------------------------------------------------------
# where and clamp


@pytest.mark.parametrize("dtype", ALL)
def test_where_matches_cpu(dtype):
    cond = values((4, 1, 6), et.bool, 20)
    a = values((5, 6), dtype, 21, special=True)
    b = values((4, 5, 1), dtype, 22, special=True)
    assert_equal(et.where(on(cond), on(a), on(b)), et.where(cond, a, b))
    cond8 = values((5, 6), et.uint8, 23)  # a uint8 condition: nonzero is true
    assert_equal(et.where(on(cond8), on(a), on(a).t().t()), et.where(cond8, a, a))
    for x, y in [(1, on(a)), (on(a), -2), (0.5, 1.5), (True, on(a))]:
        cx = x.cpu() if isinstance(x, et.Tensor) else x
        cy = y.cpu() if isinstance(y, et.Tensor) else y
        assert_equal(et.where(on(cond), x, y), et.where(cond, cx, cy))
    s = values((), dtype, 24)  # CPU 0-d tensors and a CPU 0-d condition
    assert_equal(et.where(on(cond), s, on(b)), et.where(cond, s, b))
    assert_equal(et.where(et.tensor(True), on(a), s), et.where(et.tensor(True), a, s))
    assert_equal(on(a).where(on(cond8), on(a) * 0), a.where(cond8, a * 0))


def test_where_promotes_and_checks_like_the_cpu():
    cond = values((3, 4), et.bool, 25)
    a, b = values((3, 4), et.int32, 26), values((4,), et.float16, 27)
    assert_equal(et.where(on(cond), on(a), on(b)), et.where(cond, a, b))
    assert_equal(et.where(on(cond), on(a), 2.5), et.where(cond, a, 2.5))
    out = et.empty((3, 4), dtype=et.float64, device=DEV)
    et.where(on(cond), on(a), on(b), out=out)
    assert_equal(out, et.where(cond, a, b).to(et.float64))

    def float_condition(dev):
        et.where(on_dev(a.to(et.float32), dev), on_dev(a, dev), on_dev(a, dev))

    assert_same_error(float_condition)


def on_dev(t, dev):
    return t.to(dev)


@pytest.mark.parametrize("dtype", [d for d in ALL if d != et.bool])
def test_clamp_matches_cpu(dtype):
    x = values((4, 1, 6), dtype, 28, special=True)
    lo = values((5, 6), dtype, 29)
    hi = lo + values((6,), dtype, 30).abs()
    assert_equal(et.clamp(on(x), on(lo), on(hi)), et.clamp(x, lo, hi))
    assert_equal(et.clamp(on(x), min=on(lo)), et.clamp(x, min=lo))
    assert_equal(et.clamp(on(x), max=on(hi)), et.clamp(x, max=hi))
    assert_equal(et.clamp(on(x), 0, 2), et.clamp(x, 0, 2))
    assert_equal(et.clamp(on(x), min=1), et.clamp(x, min=1))
    assert_equal(et.clamp(on(x), max=-1.5), et.clamp(x, max=-1.5))  # a float bound: float result
    s = values((), dtype, 31)
    assert_equal(et.clamp(on(lo).t(), s, on(hi).t()), et.clamp(lo.t(), s, hi.t()))
    assert_equal(on(x).clip(0, 1), x.clip(0, 1))
    y, z = on(x.clone()), x.clone()
    y.clamp_(-1, 1)
    z.clamp_(-1, 1)
    assert_equal(y, z)


def test_clamp_nan_bounds_and_errors_match_cpu():
    x = values((20,), et.float32, 32, special=True)
    lo = values((20,), et.float32, 33, special=True)
    assert_equal(et.clamp(on(x), on(lo), on(lo) + 1), et.clamp(x, lo, lo + 1))
    assert_equal(et.clamp(on(x), float("nan"), 1.0), et.clamp(x, float("nan"), 1.0))
    assert_equal(et.clamp(on(x), max=float("nan")), et.clamp(x, max=float("nan")))

    def no_bounds(dev):
        et.clamp(on_dev(x, dev))

    def int_in_place_float_bound(dev):
        on_dev(et.tensor([1, 2, 3]), dev).clamp_(0.5, 2)

    def bool_clamp(dev):
        et.clamp(on_dev(et.tensor([True, False]), dev), False, True)

    for run in [no_bounds, int_in_place_float_bound, bool_clamp]:
        assert_same_error(run)


# ---------------------------------------------------------------------------------------------
# softmax, log_softmax and their backward


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_matches_cpu(op, dtype):
    f = getattr(et, op)
    x = (normal((3, 7, 300), et.float64, 34) * 4).to(dtype)
    for dim in [0, 1, 2, -1]:  # rows (the last dim) and columns
        assert_close(f(on(x), dim), f(x, dim))
        assert_close(f(on(x).transpose(0, 2), dim), f(x.transpose(0, 2), dim))
    wide = (normal((2, 5000), et.float64, 35) * 10).to(dtype)  # many threads per row
    assert_close(f(on(wide), 1), f(wide, 1))
    assert_close(f(on(x)[0, 0, 0], 0), f(x[0, 0, 0], 0))  # 0-d
    assert_close(f(on(x), 1, dtype=et.float64), f(x, 1, dtype=et.float64))


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_special_values_and_errors_match_cpu(op):
    f = getattr(et, op)
    inf, nan = float("inf"), float("nan")
    x = et.tensor(
        [[1.0, 2.0, 3.0], [-inf, 0.0, 1.0], [-inf, -inf, -inf], [nan, 1.0, 2.0], [inf, 1.0, 0.0]]
    )
    assert_close(f(on(x), 1), f(x, 1))
    assert_close(f(on(x), 0), f(x, 0))
    ints = et.tensor([[1, 2, 3], [4, 5, 6]])
    assert_close(f(on(ints), 1, dtype=et.float32), f(ints, 1, dtype=et.float32))
    empty = et.zeros((0, 3), dtype=et.int64)
    assert_equal(f(on(empty), 1), f(empty, 1))  # empty: no dtype check, as on the CPU

    def int_input(dev):
        f(on_dev(ints, dev), 1)

    def bad_dim(dev):
        f(on_dev(x, dev), 2)

    assert_same_error(int_input)
    assert_same_error(bad_dim)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_backward_matches_cpu(op, dtype):
    forward = getattr(et, op)
    backward = et._softmax_backward_data if op == "softmax" else et._log_softmax_backward_data
    x = normal((4, 6, 300), et.float32, 36).to(dtype)
    g = normal((4, 6, 300), et.float32, 37).to(dtype)
    # the 16-bit floats: a sum of 300 products in float32, in another order, then rounded
    scale = 3 if dtype in (et.float16, et.bfloat16) else 1
    for dim in [0, 1, 2]:
        y = forward(x, dim)
        assert_close(backward(on(g), on(y), dim), backward(g, y, dim), scale)

    def mismatch(dev):
        backward(on_dev(g, dev), on_dev(x[:2], dev), 0)

    assert_same_error(mismatch)


# ---------------------------------------------------------------------------------------------
# max / min / argmax / argmin / amax / amin


@pytest.mark.parametrize("dtype", ALL)
def test_max_min_along_a_dim_match_cpu(dtype):
    x = values((4, 6, 5), dtype, 38, special=True)
    for dim in [0, 1, 2, -1]:
        for keepdim in [False, True]:
            for name in ["max", "min"]:
                got = getattr(on(x), name)(dim=dim, keepdim=keepdim)
                want = getattr(x, name)(dim=dim, keepdim=keepdim)
                assert_equal(got.values, want.values)  # the first extreme; the first NaN wins
                assert_equal(got.indices, want.indices)
    assert_equal(et.max(on(x)), et.max(x))
    assert_equal(et.min(on(x).transpose(0, 2)), et.min(x.transpose(0, 2)))
    assert_equal(et.amax(on(x), (0, 2)), et.amax(x, (0, 2)))
    assert_equal(et.amin(on(x), 1, keepdim=True), et.amin(x, 1, keepdim=True))
    s = values((), dtype, 39)
    assert_equal(on(s).max(dim=0).values, s.max(dim=0).values)
    assert_equal(on(s).max(dim=0).indices, s.max(dim=0).indices)


@pytest.mark.parametrize("dtype", [d for d in ALL if d != et.bool])
def test_argmax_argmin_match_cpu(dtype):
    x = values((5, 7, 3), dtype, 40, special=True)
    for f in [et.argmax, et.argmin]:
        assert_equal(f(on(x)), f(x))
        for dim in [0, 1, 2]:
            assert_equal(f(on(x), dim), f(x, dim))
            assert_equal(f(on(x), dim, keepdim=True), f(x, dim, keepdim=True))
        assert_equal(f(on(x).transpose(0, 1), 1), f(x.transpose(0, 1), 1))
        assert_equal(f(on(x), keepdim=True), f(x, keepdim=True))
    ties = et.zeros(70000, dtype=dtype)  # every element ties: the first index, across threads
    assert int(et.argmax(on(ties)).cpu()) == 0
    ramp = et.tensor(np.tile(np.arange(300) % 4, 20)).to(dtype)
    assert_equal(et.argmax(on(ramp)), et.argmax(ramp))
    assert_equal(et.argmin(on(ramp.reshape(20, 300)), 1), et.argmin(ramp.reshape(20, 300), 1))


def test_float_argmax_with_nans_and_ties_across_threads():
    x = np.zeros(10000)
    x[[5000, 7000]] = 3.0
    x[[9000, 8000]] = np.nan
    t = et.tensor(x)
    for f in [et.argmax, et.argmin]:
        assert_equal(f(on(t)), f(t))
    x[[8000, 9000]] = 0
    t = et.tensor(x)
    assert int(et.argmax(on(t)).cpu()) == 5000
    assert_equal(et.max(on(t)), et.max(t))


def test_reduction_errors_match_cpu():
    empty = et.zeros((0, 3))

    def argmax_bool(dev):
        et.argmax(on_dev(et.tensor([True]), dev))

    def argmax_empty(dev):
        et.argmax(on_dev(empty, dev))

    def max_empty(dev):
        et.max(on_dev(empty, dev))

    def max_dim_empty(dev):
        on_dev(empty, dev).max(dim=0)

    def amax_empty(dev):
        et.amax(on_dev(empty, dev))

    for run in [argmax_bool, argmax_empty, max_empty, max_dim_empty, amax_empty]:
        assert_same_error(run)
    got = on(empty).max(dim=1)  # an empty result is fine
    assert tuple(got.values.shape) == (0,)
    out = et.empty((3,), dtype=et.int64, device=DEV)
    et.argmax(on(values((4, 3), et.float32, 41)), 0, out=out)
    assert_equal(out, et.argmax(values((4, 3), et.float32, 41), 0))


# ---------------------------------------------------------------------------------------------
# random: the CPU's counter scheme, so the same generator state gives the same numbers


def generators(seed):
    a, b = et.Generator(), et.Generator()
    a.manual_seed(seed)
    b.manual_seed(seed)
    return a, b


@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_equals_the_cpu_for_the_same_seed(dtype):
    g_cpu, g_cuda = generators(1234)
    for shape in [(1000,), (3, 17, 5), (0,), ()]:
        want = et.rand(shape, generator=g_cpu, dtype=dtype)
        got = et.rand(shape, generator=g_cuda, dtype=dtype, device=DEV)
        assert_equal(got, want)
    assert g_cuda.get_state() == g_cpu.get_state()  # the same counters consumed


@pytest.mark.parametrize("dtype", FLOATS)
def test_randn_equals_the_cpu_up_to_the_math_functions(dtype):
    g_cpu, g_cuda = generators(99)
    for shape in [(1001,), (4, 7), (1,)]:  # an odd count: the last pair is half used
        want = et.randn(shape, generator=g_cpu, dtype=dtype)
        got = et.randn(shape, generator=g_cuda, dtype=dtype, device=DEV)
        assert_close(got, want)
    assert g_cuda.get_state() == g_cpu.get_state()


def test_uniform_and_normal_in_place_equal_the_cpu():
    g_cpu, g_cuda = generators(5)
    for dtype in FLOATS:
        want = et.empty((6, 40), dtype=dtype).t()  # non-contiguous: filled in logical order
        got = et.empty((6, 40), dtype=dtype, device=DEV).t()
        want.uniform_(-2.0, 3.0, generator=g_cpu)
        got.uniform_(-2.0, 3.0, generator=g_cuda)
        # (up to the CPU's own FMA contraction at its AVX2 level: one rounding of a double;
        # 1/20 of the table)
        assert_close(got, want, 0.05)
        want.normal_(1.5, 0.5, generator=g_cpu)
        got.normal_(1.5, 0.5, generator=g_cuda)
        assert_close(got, want)
    top = et.empty(5000, dtype=et.float16, device=DEV).uniform_(0.0, 1.0)
    assert float(et.max(top).cpu()) < 1.0  # values rounding up to `to` are stepped down


@pytest.mark.skipif(DEV != "cuda", reason="the CUDA generator")
def test_default_cuda_generator_is_seeded_by_cuda_manual_seed():
    et.cuda.init()  # CUDA initialised: the seeds apply now
    et.cuda.manual_seed(2024)
    a = et.rand(100, device=DEV)
    et.cuda.manual_seed(2024)
    b = et.rand(100, device=DEV)
    assert_equal(a, b.cpu().to(DEV))
    et.cuda.manual_seed(7)
    et.manual_seed(7)
    assert_equal(et.rand(50, device=DEV), et.rand(50))
    assert_close(et.randn(50, device=DEV), et.randn(50))
    assert_equal(et.rand_like(et.zeros(9, device=DEV)), et.rand_like(et.zeros(9)))
    assert_close(et.randn_like(et.zeros(9, device=DEV)), et.randn_like(et.zeros(9)))


@pytest.mark.parametrize("dtype", ALL)
def test_randint_equals_the_cpu(dtype):
    g_cpu, g_cuda = generators(77)
    low, high = (0, 2) if dtype == et.bool else (0 if dtype == et.uint8 else -5, 100)
    want = et.randint(low, high, (300,), generator=g_cpu, dtype=dtype)
    got = et.randint(low, high, (300,), generator=g_cuda, dtype=dtype, device=DEV)
    assert_equal(got, want)
    assert_equal(
        et.randint(high, (7, 3), generator=g_cuda, dtype=dtype, device=DEV),
        et.randint(high, (7, 3), generator=g_cpu, dtype=dtype),
    )
    big = et.randint(-(2**62), 2**62, (64,), generator=g_cuda, device=DEV)
    assert_equal(big, et.randint(-(2**62), 2**62, (64,), generator=g_cpu))


def test_randint_and_randperm_errors_match_cpu():
    def empty_range(dev):
        et.randint(5, 5, (3,), device=dev)

    def out_of_bounds(dev):
        et.randint(0, 300, (3,), dtype=et.uint8, device=dev)

    def float_rand(dev):
        et.rand(3, dtype=et.int64, device=dev)

    def negative_std(dev):
        et.zeros(3, device=dev).normal_(0, -1)

    def reversed_range(dev):
        et.zeros(3, device=dev).uniform_(2, 1)

    for run in [empty_range, out_of_bounds, float_rand, negative_std, reversed_range]:
        assert_same_error(run)


def test_randperm_equals_the_cpu():
    g_cpu, g_cuda = generators(3)
    for dtype in [et.int64, et.int32, et.float32]:
        assert_equal(
            et.randperm(257, generator=g_cuda, dtype=dtype, device=DEV),
            et.randperm(257, generator=g_cpu, dtype=dtype),
        )


@pytest.mark.parametrize("dtype", ALL)
def test_bernoulli_equals_the_cpu(dtype):
    g_cpu, g_cuda = generators(8)
    p = normal((5, 40), et.float64, 42).abs().clamp(max=1.0)
    want = et.zeros((5, 40), dtype=dtype)
    got = et.zeros((5, 40), dtype=dtype, device=DEV)
    assert_equal(got.bernoulli_(0.3, generator=g_cuda), want.bernoulli_(0.3, generator=g_cpu))
    assert_equal(got.bernoulli_(on(p), generator=g_cuda), want.bernoulli_(p, generator=g_cpu))
    assert_equal(
        got.t().bernoulli_(0.7, generator=g_cuda), want.t().bernoulli_(0.7, generator=g_cpu)
    )
    assert_equal(
        got.bernoulli_(et.tensor(0.5), generator=g_cuda),
        want.bernoulli_(et.tensor(0.5), generator=g_cpu),
    )
    if dtype in FLOATS:
        probs = p.to(dtype)
        assert_equal(
            et.bernoulli(on(probs), generator=g_cuda), et.bernoulli(probs, generator=g_cpu)
        )
        assert_equal(
            on(probs).bernoulli(0.25, generator=g_cuda), probs.bernoulli(0.25, generator=g_cpu)
        )
    assert g_cuda.get_state() == g_cpu.get_state()


def test_bernoulli_errors_match_cpu():
    def bad_probability(dev):
        et.zeros(4, device=dev).bernoulli_(et.tensor([0.5, 0.2, 1.5, -1.0]).to(dev))

    def bad_p(dev):
        et.zeros(4, device=dev).bernoulli_(1.5)

    def int_probabilities(dev):
        et.zeros(4, device=dev).bernoulli_(et.tensor([0, 1, 0, 1]).to(dev))

    def int_self(dev):
        et.bernoulli(et.tensor([0, 1]).to(dev))

    def nan_probability(dev):
        et.bernoulli(et.tensor([0.5, float("nan")]).to(dev))

    for run in [bad_probability, bad_p, int_probabilities, int_self, nan_probability]:
        assert_same_error(run)


def test_random_statistics_on_cuda():
    x = et.rand(1 << 20, device=DEV).cpu().numpy()
    assert x.min() >= 0.0 and x.max() < 1.0 and abs(x.mean() - 0.5) < 2e-3
    z = et.randn(1 << 20, device=DEV).cpu().numpy()
    assert abs(z.mean()) < 5e-3 and abs(z.std() - 1.0) < 5e-3
    b = et.bernoulli(et.full((1 << 20,), 0.25, device=DEV)).cpu().numpy()
    assert abs(b.mean() - 0.25) < 3e-3
    k = et.randint(0, 10, (1 << 20,), device=DEV).cpu().numpy()
    assert k.min() == 0 and k.max() == 9 and abs(k.mean() - 4.5) < 2e-2
    assert sorted(et.randperm(1000, device=DEV).cpu().numpy().tolist()) == list(range(1000))


# ---------------------------------------------------------------------------------------------
# arange


@pytest.mark.parametrize(
    "args",
    [
        (10,),
        (2, 20, 3),
        (5, -7, -2),
        (0.0, 1.0, 0.1),
        (-1.5, 2.25, 0.25),
        (1, 2.5, 0.3),
        (0,),
        (3, 3),
        (2**40, 2**40 + 5),
    ],
)
def test_arange_matches_cpu(args):
    assert_equal(et.arange(*args, device=DEV), et.arange(*args))
    for dtype in [et.float16, et.bfloat16, et.float64, et.int32, et.int8, et.uint8]:
        assert_equal(et.arange(*args, dtype=dtype, device=DEV), et.arange(*args, dtype=dtype))


def test_arange_out_and_errors_match_cpu():
    out = et.empty((5,), dtype=et.float64, device=DEV)
    et.arange(5, out=out)
    assert_equal(out, et.arange(5, dtype=et.float64))

    def zero_step(dev):
        et.arange(0, 5, 0, device=dev)

    def wrong_sign(dev):
        et.arange(0, 5, -1, device=dev)

    def bool_dtype(dev):
        et.arange(3, dtype=et.bool, device=dev)

    def infinite(dev):
        et.arange(0, float("inf"), device=dev)

    for run in [zero_step, wrong_sign, bool_dtype, infinite]:
        assert_same_error(run)


# ---------------------------------------------------------------------------------------------
# cat, index_select, gather


def test_cat_matches_cpu():
    a, b, c = (
        normal((2, 3, 4), seed=43),
        normal((2, 5, 4), seed=44),
        values((2, 1, 4), et.int32, 45),
    )
    assert_equal(et.cat([on(a), on(b), on(c)], 1), et.cat([a, b, c], 1))  # promotes to float32
    assert_equal(et.cat([on(a), on(a).transpose(0, 0)], 0), et.cat([a, a], 0))
    assert_equal(
        et.cat([on(a).transpose(1, 2), on(a).transpose(1, 2)], -1),
        et.cat([a.transpose(1, 2)] * 2, -1),
    )
    e = et.zeros(0)  # legacy: 1-d empty tensors are skipped
    assert_equal(et.cat([on(e), on(a), on(e)], 2), et.cat([e, a, e], 2))
    assert_equal(et.cat([on(e), on(e)]), et.cat([e, e]))
    for dtype in [et.bool, et.float16, et.int64, et.uint8]:
        x = values((3, 4), dtype, 46)
        assert_equal(et.cat([on(x), on(x[:1])]), et.cat([x, x[:1]]))
    out = et.empty((4, 3, 4), dtype=et.float64, device=DEV)
    et.cat([on(a), on(a)], out=out)
    assert_equal(out, et.cat([a, a]).to(et.float64))


def test_cat_errors_match_cpu():
    a = normal((2, 3))

    def zero_dim(dev):
        et.cat([on_dev(a, dev), et.tensor(1.0).to(dev)])

    def sizes(dev):
        et.cat([on_dev(a, dev), on_dev(normal((3, 3)), dev)], 1)

    def ndims(dev):
        et.cat([on_dev(a, dev), on_dev(normal((3,)), dev)])

    def out_dtype(dev):
        et.cat([on_dev(a, dev)], out=et.empty((2, 3), dtype=et.int64, device=dev))

    for run in [zero_dim, sizes, ndims, out_dtype]:
        assert_same_error(run)


@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.float16, et.bool, et.int16, et.int64])
def test_index_select_and_gather_match_cpu(dtype):
    x = values((5, 6, 7), dtype, 47, special=True)
    idx = et.tensor([4, 0, 0, 2, 3])
    for dim in [0, 1, 2, -1]:
        assert_equal(et.index_select(on(x), dim, on(idx)), et.index_select(x, dim, idx))
        assert_equal(
            et.index_select(on(x).transpose(0, 2), dim, on(idx)),
            et.index_select(x.transpose(0, 2), dim, idx),
        )
    assert_equal(
        et.index_select(on(x), 1, on(idx.to(et.int32))), et.index_select(x, 1, idx.to(et.int32))
    )
    s = values((), dtype, 48)
    assert_equal(
        et.index_select(on(s), 0, on(et.tensor([0]))), et.index_select(s, 0, et.tensor([0]))
    )
    rng = np.random.default_rng(49)
    for dim in [0, 1, 2]:
        index = et.tensor(rng.integers(0, x.shape[dim], (3, 4, 5)))
        assert_equal(et.gather(on(x), dim, on(index)), et.gather(x, dim, index))
        xt = x.transpose(0, 1)
        index = et.tensor(rng.integers(0, xt.shape[dim], (3, 4, 5))).to(et.int32)
        assert_equal(on(xt).gather(dim, on(index)), xt.gather(dim, index))
    out = et.empty((3, 4, 5), dtype=dtype, device=DEV)
    index = et.tensor(rng.integers(0, 5, (3, 4, 5)))
    et.gather(on(x), 0, on(index), out=out)
    assert_equal(out, et.gather(x, 0, index))


def test_index_errors_match_cpu():
    x = normal((4, 5))

    def select_out_of_range(dev):
        et.index_select(on_dev(x, dev), 0, et.tensor([1, 4]).to(dev))

    def select_negative(dev):
        et.index_select(on_dev(x, dev), 1, et.tensor([-1]).to(dev))

    def select_float_index(dev):
        et.index_select(on_dev(x, dev), 1, et.tensor([1.0]).to(dev))

    def select_2d_index(dev):
        et.index_select(on_dev(x, dev), 1, et.tensor([[1]]).to(dev))

    def gather_out_of_range(dev):
        et.gather(on_dev(x, dev), 1, et.tensor([[0, 7, 5]]).to(dev))

    def gather_shape(dev):
        et.gather(on_dev(x, dev), 1, et.zeros((5, 2), dtype=et.int64).to(dev))

    for run in [
        select_out_of_range,
        select_negative,
        select_float_index,
        select_2d_index,
        gather_out_of_range,
        gather_shape,
    ]:
        assert_same_error(run)


@pytest.mark.parametrize(
    "dtype", [et.float32, et.float64, et.float16, et.bfloat16, et.int64, et.int8, et.bool]
)
def test_scatter_scatter_add_and_index_add_match_cpu(dtype):
    x = values((5, 6, 7), dtype, 64)
    rng = np.random.default_rng(65)
    for dim in [0, 1, 2]:
        # many duplicate indices: the last write wins, sums are added in order
        index = et.tensor(rng.integers(0, x.shape[dim], (4, 5, 6)))
        src = values((4, 5, 6), dtype, 66)
        assert_equal(et.scatter(on(x), dim, on(index), on(src)), et.scatter(x, dim, index, src))
        assert_equal(et.scatter(on(x), dim, on(index), 1), et.scatter(x, dim, index, 1))
        assert_equal(
            et.scatter_add(on(x), dim, on(index), on(src)), et.scatter_add(x, dim, index, src)
        )
        big = values((6, 7, 8), dtype, 67).transpose(0, 2)  # a larger, non-contiguous src
        i32 = index.to(et.int32)
        assert_equal(et.scatter(on(x), dim, on(i32), on(big)), et.scatter(x, dim, i32, big))
        assert_equal(et.scatter_add(on(x), dim, on(i32), on(big)), et.scatter_add(x, dim, i32, big))
        y, z = on(x.clone()), x.clone()
        y.scatter_add_(dim, on(index), on(src))
        z.scatter_add_(dim, index, src)
        assert_equal(y, z)
        y.scatter_(dim, on(index), on(src))
        z.scatter_(dim, index, src)
        assert_equal(y, z)
        idx = et.tensor(rng.integers(0, x.shape[dim], 9))
        shape = list(x.shape)
        shape[dim] = 9
        source = values(tuple(shape), dtype, 68)
        assert_equal(
            et.index_add(on(x), dim, on(idx), on(source)), et.index_add(x, dim, idx, source)
        )
        if dtype != et.bool:
            alpha = 0.5 if dtype in FLOATS else 3
            assert_equal(
                et.index_add(on(x), dim, on(idx), on(source), alpha=alpha),
                et.index_add(x, dim, idx, source, alpha=alpha),
            )
        y, z = on(x.clone()), x.clone()
        y.index_add_(dim, on(idx), on(source))
        z.index_add_(dim, idx, source)
        assert_equal(y, z)


def test_nll_loss_backward_like_scatter_on_cuda():
    # what autograd's nll_loss backward does: a scatter of -w * grad at the targets
    grad = normal((8,), et.float32, 69)
    target = et.tensor([0, 4, 2, 2, 1, 1, 3, 0])
    want = et.zeros((8, 5)).scatter(1, target.unsqueeze(1), (-grad).unsqueeze(1))
    got = et.zeros((8, 5), device=DEV).scatter(1, on(target).unsqueeze(1), (-on(grad)).unsqueeze(1))
    assert_equal(got, want)


def test_scatter_and_index_add_errors_match_cpu():
    x = normal((4, 5))

    def scatter_out_of_bounds(dev):
        et.scatter(on_dev(x, dev), 1, et.tensor([[0, 5]]).to(dev), on_dev(x, dev))

    def scatter_in_place_out_of_bounds(dev):
        on_dev(x.clone(), dev).scatter_(0, et.tensor([[0, -1]]).to(dev), 1.0)

    def scatter_dtype(dev):
        et.scatter(on_dev(x, dev), 1, et.tensor([[0, 1]]).to(dev), on_dev(x.double(), dev))

    def scatter_value_overflow(dev):
        et.scatter(et.zeros((2, 2), dtype=et.int8).to(dev), 1, et.tensor([[0]]).to(dev), 300)

    def scatter_add_shape(dev):
        et.scatter_add(on_dev(x, dev), 1, et.zeros((5, 5), dtype=et.int64).to(dev), on_dev(x, dev))

    def index_add_out_of_range(dev):
        et.index_add(on_dev(x, dev), 0, et.tensor([0, 4]).to(dev), on_dev(x[:2], dev))

    def index_add_1d_out_of_range(dev):
        et.index_add(on_dev(x[0], dev), 0, et.tensor([5]).to(dev), on_dev(x[0, :1], dev))

    def index_add_count(dev):
        et.index_add(on_dev(x, dev), 0, et.tensor([0, 1, 2]).to(dev), on_dev(x[:2], dev))

    for run in [
        scatter_out_of_bounds,
        scatter_in_place_out_of_bounds,
        scatter_dtype,
        scatter_value_overflow,
        scatter_add_shape,
        index_add_out_of_range,
        index_add_1d_out_of_range,
        index_add_count,
    ]:
        assert_same_error(run)


# ---------------------------------------------------------------------------------------------
# embedding, nll_loss, layer_norm


@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_and_its_backward_match_cpu(dtype):
    w = normal((10, 6), dtype, 50)
    idx = et.tensor(np.random.default_rng(51).integers(0, 10, (4, 7)))
    assert_equal(et.embedding(on(w), on(idx)), et.embedding(w, idx))
    assert_equal(
        et.embedding(on(w).t().t(), on(idx.to(et.int32))), et.embedding(w, idx.to(et.int32))
    )
    g = normal((4, 7, 6), dtype, 52)
    for padding_idx, scale in [(-1, False), (3, False), (-1, True), (2, True)]:
        # the same sums in the same order: equal bit for bit
        assert_equal(
            et.embedding_dense_backward(on(g), on(idx), 10, padding_idx, scale),
            et.embedding_dense_backward(g, idx, 10, padding_idx, scale),
        )
    assert_equal(
        et.embedding_dense_backward(on(g).transpose(0, 1), on(idx).t(), 12, -1, False),
        et.embedding_dense_backward(g.transpose(0, 1), idx.t(), 12, -1, False),
    )


def test_embedding_errors_match_cpu():
    w = normal((10, 6))

    def out_of_range(dev):
        et.embedding(on_dev(w, dev), et.tensor([1, 10]).to(dev))

    def float_indices(dev):
        et.embedding(on_dev(w, dev), et.tensor([1.0]).to(dev))

    def one_d_weight(dev):
        et.embedding(on_dev(normal((10,)), dev), et.tensor([1]).to(dev))

    def backward_out_of_range(dev):
        et.embedding_dense_backward(
            on_dev(normal((2, 6)), dev), et.tensor([0, 10]).to(dev), 10, -1, False
        )

    def backward_shape(dev):
        et.embedding_dense_backward(
            on_dev(normal((3, 6)), dev), et.tensor([0, 1]).to(dev), 10, -1, False
        )

    for run in [out_of_range, float_indices, one_d_weight, backward_out_of_range, backward_shape]:
        assert_same_error(run)


@pytest.mark.parametrize("dtype", FLOATS)
def test_nll_loss_matches_cpu(dtype):
    logp = et.log_softmax(normal((8, 5), et.float32, 53), 1).to(dtype)
    target = et.tensor([0, 4, 2, 2, -100, 1, 3, 0])
    weight = (normal((5,), et.float32, 54).abs() + 0.5).to(dtype)
    # the sums are taken in double in the CPU's order (equal bit for bit): 1/20 of the table;
    # the 16-bit floats, one rounding of it: the table
    scale = 0.05 if dtype in (et.float32, et.float64) else 1
    for reduction in [0, 1, 2]:
        assert_close(
            et.nll_loss(on(logp), on(target), None, reduction),
            et.nll_loss(logp, target, None, reduction),
            scale,
        )
        assert_close(
            et.nll_loss(on(logp), on(target), on(weight), reduction),
            et.nll_loss(logp, target, weight, reduction),
            scale,
        )
        kept = target.clamp(min=0)
        assert_close(
            et.nll_loss(on(logp), on(kept), on(weight), reduction, ignore_index=2),
            et.nll_loss(logp, kept, weight, reduction, ignore_index=2),
            scale,
        )
    # (N, C, d1, d2) input, a uint8 target, many blocks of 4096 terms
    big = et.log_softmax(normal((3, 4, 50, 70), et.float32, 55), 1).to(dtype)
    t = et.tensor(np.random.default_rng(56).integers(0, 4, (3, 50, 70))).to(et.uint8)
    for reduction in [0, 1, 2]:
        assert_close(
            et.nll_loss(on(big), on(t), None, reduction),
            et.nll_loss(big, t, None, reduction),
            scale,
        )
    # a 1-d input with a 0-d target (a CPU 0-d target joins as a scalar)
    row, cls = logp[0], et.tensor(3)
    assert_close(et.nll_loss(on(row), cls), et.nll_loss(row, cls), scale)
    assert_close(et.nll_loss(on(row), on(cls)), et.nll_loss(row, cls), scale)
    everything_ignored = et.full((8,), -100, dtype=et.int64)
    assert_close(
        et.nll_loss(on(logp), on(everything_ignored)), et.nll_loss(logp, everything_ignored)
    )  # NaN


def test_nll_loss_errors_match_cpu():
    logp = normal((4, 3))

    def target_out_of_bounds(dev):
        et.nll_loss(on_dev(logp, dev), et.tensor([0, 3, 1, 7]).to(dev))

    def target_dtype(dev):
        et.nll_loss(on_dev(logp, dev), et.tensor([0, 1, 1, 2]).to(et.int32).to(dev))

    def target_size(dev):
        et.nll_loss(on_dev(logp, dev), et.tensor([0, 1]).to(dev))

    def weight_size(dev):
        et.nll_loss(on_dev(logp, dev), et.tensor([0, 1, 1, 2]).to(dev), on_dev(et.ones(4), dev))

    def bad_reduction(dev):
        et.nll_loss(on_dev(logp, dev), et.tensor([0, 1, 1, 2]).to(dev), None, 3)

    for run in [target_out_of_bounds, target_dtype, target_size, weight_size, bad_reduction]:
        assert_same_error(run)


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm_and_its_backward_match_cpu(dtype):
    x = (normal((6, 5, 48), et.float32, 57) * 3 + 1).to(dtype)
    pdt = et.float32 if dtype in (et.float16, et.bfloat16) else dtype
    scale = 3  # row statistics and gradient sums in another order
    g = normal((6, 5, 48), et.float32, 58).to(dtype)
    for shape in [[48], [5, 48]]:
        w = normal(shape, et.float32, 59).to(pdt)
        b = normal(shape, et.float32, 60).to(pdt)
        for weight, bias in [
            (None, None),
            (w, b),
            (w, None),
            (None, b),
            (w.to(dtype), b.to(dtype)),
        ]:
            cw = None if weight is None else on(weight)
            cb = None if bias is None else on(bias)
            got = et.native_layer_norm(on(x), shape, cw, cb, 1e-5)
            want = et.native_layer_norm(x, shape, weight, bias, 1e-5)
            for a, e in zip(got, want):
                assert_close(a, e, scale)
            # the backward from the same statistics on both devices
            mean, rstd = on(want[1]), on(want[2])
            grads = et.native_layer_norm_backward(on(g), on(x), shape, mean, rstd, cw, cb)
            wants = et.native_layer_norm_backward(g, x, shape, want[1], want[2], weight, bias)
            for a, e in zip(grads, wants):
                size = max(1.0, float(np.abs(host(e).astype(np.float64)).max(initial=0.0)))
                assert_close(a, e, scale * size)  # relative to the largest gradient
    wide = normal((3, 5000), et.float32, 61).to(dtype)  # many threads per row
    for a, e in zip(
        et.native_layer_norm(on(wide), [5000], None, None, 1e-5),
        et.native_layer_norm(wide, [5000], None, None, 1e-5),
    ):
        assert_close(a, e, scale)


def test_layer_norm_errors_match_cpu():
    x = normal((4, 6))

    def wrong_shape(dev):
        et.native_layer_norm(on_dev(x, dev), [5], None, None, 1e-5)

    def weight_shape(dev):
        et.native_layer_norm(on_dev(x, dev), [6], on_dev(et.ones(5), dev), None, 1e-5)

    def mixed_dtype(dev):
        et.native_layer_norm(
            on_dev(x, dev), [6], on_dev(et.ones(6, dtype=et.float64), dev), None, 1e-5
        )

    def int_input(dev):
        et.native_layer_norm(on_dev(et.ones((2, 3), dtype=et.int64), dev), [3], None, None, 1e-5)

    def backward_grad_shape(dev):
        m = on_dev(et.zeros((4, 1)), dev)
        et.native_layer_norm_backward(on_dev(x[:2], dev), on_dev(x, dev), [6], m, m, None, None)

    for run in [wrong_shape, weight_shape, mixed_dtype, int_input, backward_grad_shape]:
        assert_same_error(run)


def test_cross_entropy_like_pipeline_on_cuda():
    logits = normal((64, 10), et.float32, 62)
    target = et.tensor(np.random.default_rng(63).integers(0, 10, 64))
    want = et.nll_loss(et.log_softmax(logits, 1), target)
    got = et.nll_loss(et.log_softmax(on(logits), 1), on(target))
    assert_close(got, want, 0.5)
    pred = et.argmax(on(logits), 1)
    assert_equal(et.eq(pred, on(target)), et.eq(et.argmax(logits, 1), target))
