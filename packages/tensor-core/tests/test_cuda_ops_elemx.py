"""The CUDA kernels of the bitwise ops, the divisions (floor_divide, remainder, fmod),
isnan/isinf/isfinite (ops/elementwise/binary_cuda.cu), masked_fill
(ops/index/masked_fill_cuda.cu), tril/triu, eye and linspace (ops/creation/creation_cuda.cu)
against the CPU kernels.

Every op runs on the same inputs on both devices: all the dtypes it takes, broadcasting,
non-contiguous inputs, Python numbers and CPU 0-d tensors as operands, NaN / inf / -0, empty
tensors, out= and in-place forms, sizes that take many blocks, and the error messages. The
values are computed the same way on both devices, so they are compared for equality.

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
    assert_equal,
    assert_same_error,
    on,
    requires_device,
    values,
)

pytestmark = requires_device

INTEGRAL = INTS + [et.bool]


def ints_with_extremes(dtype, n=40, seed=0):
    """n integers of dtype spanning its range, its min and max included."""
    info = np.iinfo(
        {
            et.int64: np.int64,
            et.int32: np.int32,
            et.int16: np.int16,
            et.int8: np.int8,
            et.uint8: np.uint8,
        }[dtype]
    )
    rng = np.random.default_rng(seed)
    a = rng.integers(
        info.min, info.max, n, endpoint=True, dtype=np.int64 if dtype != et.uint8 else np.uint8
    )
    a[0], a[1] = info.min, info.max
    return et.tensor(a).to(dtype)


# ---------------------------------------------------------------------------------------------
# bitwise and / or / xor / not

BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor"]


@pytest.mark.parametrize("dtype", INTEGRAL)
@pytest.mark.parametrize("op", BITWISE)
def test_bitwise_binary_matches_cpu(op, dtype):
    f = getattr(et, op)
    a = values((4, 1, 5), dtype, 1)
    b = values((3, 5), dtype, 2)
    assert_equal(f(on(a), on(b)), f(a, b))  # broadcasting
    at, bt = a.transpose(0, 2), values((5, 3, 4), dtype, 3).transpose(0, 2)
    assert_equal(f(on(at), on(bt.transpose(0, 2))), f(at, bt.transpose(0, 2)))
    for scalar in [1, 0, -3, 255, True, False] if dtype != et.bool else [True, False, 1]:
        assert_equal(f(on(b), scalar), f(b, scalar))
    s = values((), dtype, 4)  # a CPU 0-d tensor, either side
    assert_equal(f(on(b), s), f(b, s))
    assert_equal(f(s, on(b)), f(s, b))
    if dtype != et.bool:
        big = ints_with_extremes(dtype, 3000, 5)  # several blocks
        other = ints_with_extremes(dtype, 3000, 6)
        assert_equal(f(on(big), on(other)), f(big, other))


@pytest.mark.parametrize("op", BITWISE)
def test_bitwise_operators_and_promotion(op):
    f = getattr(et, op)
    pairs = [(et.int8, et.int64), (et.bool, et.uint8), (et.uint8, et.int8), (et.int16, et.bool)]
    for da, db in pairs:
        a, b = values((6, 7), da, 7), values((7,), db, 8)
        assert_equal(f(on(a), on(b)), f(a, b))
        assert_equal(f(on(b), on(a)), f(b, a))
    a, b = values((5,), et.int32, 9), values((5,), et.int32, 10)
    sym = {"bitwise_and": "__and__", "bitwise_or": "__or__", "bitwise_xor": "__xor__"}[op]
    assert_equal(getattr(on(a), sym)(on(b)), getattr(a, sym)(b))
    assert_equal(
        getattr(on(a), sym.replace("__", "__r", 1))(6), getattr(a, sym.replace("__", "__r", 1))(6)
    )


@pytest.mark.parametrize("op", BITWISE)
def test_bitwise_out_in_place_and_errors(op):
    f = getattr(et, op)
    a, b = values((3, 4), et.int16, 11), values((4,), et.int16, 12)
    out = et.empty((3, 4), dtype=et.int16, device=DEV)
    res = f(on(a), on(b), out=out)
    assert res.data_ptr() == out.data_ptr()
    assert_equal(out, f(a, b))
    out64 = et.empty((3, 4), dtype=et.int64, device=DEV)
    f(on(a), on(b), out=out64)
    assert_equal(out64, f(a, b).to(et.int64))
    x, y = on(a.clone()), a.clone()
    getattr(x, op + "_")(on(b))
    getattr(y, op + "_")(b)
    assert_equal(x, y)
    x, y = on(a.clone()).t(), a.clone().t()  # in place on a non-contiguous view
    getattr(x, op + "_")(3)
    getattr(y, op + "_")(3)
    assert_equal(x, y)
    fl = values((3, 4), et.float32, 13)
    assert_same_error(lambda d: f(fl.to(d), a.to(d)))
    assert_same_error(lambda d: f(a.to(d), 1.5))
    assert_same_error(lambda d: f(a.to(d), values((5,), et.int16, 14).to(d)))  # broadcasting
    assert_same_error(lambda d: f(a.to(d), b.to(d), out=et.empty((3, 4), dtype=et.bool, device=d)))
    e = et.empty((0, 4), dtype=et.float32)
    assert_same_error(lambda d: f(e.to(d), e.to(d)))


def test_bitwise_all_cpu_scalars_with_cuda_out():
    out = et.empty((), dtype=et.int64, device=DEV)
    et.bitwise_xor(et.tensor(6), et.tensor(3), out=out)
    assert out.device.type == DEV and int(out.cpu()) == 5


@pytest.mark.parametrize("dtype", INTEGRAL)
def test_bitwise_not_matches_cpu(dtype):
    a = values((5, 6), dtype, 15)
    assert_equal(et.bitwise_not(on(a)), et.bitwise_not(a))
    assert_equal(~on(a).t(), ~a.t())
    x, y = on(a.clone()), a.clone()
    x.bitwise_not_()
    y.bitwise_not_()
    assert_equal(x, y)
    out = et.empty((5, 6), dtype=et.int64, device=DEV)
    et.bitwise_not(on(a), out=out)
    assert_equal(out, et.bitwise_not(a).to(et.int64))
    if dtype != et.bool:
        big = ints_with_extremes(dtype, 5000, 16)
        assert_equal(~on(big), ~big)


def test_bitwise_not_errors_and_empty():
    f = values((3,), et.float64, 17)
    assert_same_error(lambda d: et.bitwise_not(f.to(d)))
    e = et.empty((2, 0), dtype=et.float16)
    assert_same_error(lambda d: et.bitwise_not(e.to(d)))
    out = et.empty((), dtype=et.int32, device=DEV)
    et.bitwise_not(et.tensor(5), out=out)  # a CPU 0-d self, out= on the device
    assert int(out.cpu()) == -6


# ---------------------------------------------------------------------------------------------
# floor_divide / remainder / fmod

DIVISIONS = ["floor_divide", "remainder", "fmod"]


def float_operands(dtype):
    """Dividends and divisors with NaN, +-inf, +-0, exact and inexact quotients, both signs."""
    specials = [
        np.nan,
        np.inf,
        -np.inf,
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -2.5,
        3.0,
        7.0,
        -7.0,
        1e-3,
        1e30,
    ]
    x = np.array([[p for p in specials for _ in specials]], dtype=np.float64)
    y = np.array([[q for _ in specials for q in specials]], dtype=np.float64)
    return et.tensor(x).to(dtype), et.tensor(y).to(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", DIVISIONS)
def test_float_divisions_match_cpu(op, dtype):
    f = getattr(et, op)
    x, y = float_operands(dtype)
    assert_equal(f(on(x), on(y)), f(x, y))  # NaN, inf, -0 and zero divisors as on the CPU
    a, b = values((4, 1, 6), dtype, 18, special=True), values((5, 6), dtype, 19)
    assert_equal(f(on(a), on(b)), f(a, b))
    assert_equal(
        f(on(a).transpose(0, 2), on(a).transpose(0, 2)), f(a.transpose(0, 2), a.transpose(0, 2))
    )
    for scalar in [2, -3, 0.75, -0.0, 0, float("inf")]:
        assert_equal(f(on(a), scalar), f(a, scalar))
    s = values((), dtype, 20)
    assert_equal(f(on(b), s), f(b, s))
    assert_equal(f(s, on(b)), f(s, b))
    big, div = et.randn((70000,)).to(dtype), et.randn((70000,)).to(dtype)
    assert_equal(f(on(big) * 100, on(div)), f(big * 100, div))


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", DIVISIONS)
def test_integer_divisions_match_cpu(op, dtype):
    f = getattr(et, op)
    x = ints_with_extremes(dtype, 4000, 21)
    y = ints_with_extremes(dtype, 4000, 22)
    y = et.where(y == 0, et.ones_like(y), y)
    assert_equal(f(on(x), on(y)), f(x, y))
    signed = dtype != et.uint8
    small = [1, 2, 3, 7] + ([-1, -2, -7] if signed else [255])
    grid = et.tensor([[p] for p in small + [0]]).to(dtype)  # dividends (0 too) against divisors
    divs = et.tensor(small).to(dtype)
    assert_equal(f(on(grid), on(divs)), f(grid, divs))
    for scalar in small:
        assert_equal(f(on(x), scalar), f(x, scalar))
    if signed:  # min / -1 wraps
        m = et.tensor([int(x[0])]).to(dtype)
        assert_equal(f(on(m), -1), f(m, -1))
        assert_equal(f(on(m), on(et.tensor([-1]).to(dtype))), f(m, et.tensor([-1]).to(dtype)))
    s = et.tensor(3).to(dtype)
    assert_equal(f(on(x), s), f(x, s))
    assert_equal(f(s, on(y)), f(s, y))


@pytest.mark.parametrize("op", DIVISIONS)
def test_divisions_promote_out_and_in_place(op):
    f = getattr(et, op)
    for da, db in [
        (et.int32, et.float16),
        (et.uint8, et.int8),
        (et.bool, et.int16),
        (et.int64, et.float64),
    ]:
        a, b = values((6, 7), da, 23), values((7,), db, 24)
        b = et.where(b == 0, et.ones_like(b), b)
        assert_equal(f(on(a), on(b)), f(a, b))
    a, b = values((3, 4), et.float32, 25, special=True), values((4,), et.float32, 26)
    out = et.empty((3, 4), dtype=et.float32, device=DEV)
    res = f(on(a), on(b), out=out)
    assert res.data_ptr() == out.data_ptr()
    assert_equal(out, f(a, b))
    out64 = et.empty((3, 4), dtype=et.float64, device=DEV)
    f(on(a), on(b), out=out64)
    assert_equal(out64, f(a, b).to(et.float64))
    x, y = on(a.clone()), a.clone()
    getattr(x, op + "_")(on(b))
    getattr(y, op + "_")(b)
    assert_equal(x, y)
    i, j = values((3, 4), et.int32, 27), values((3, 4), et.int32, 28)
    x, y = on(i.clone()).t(), i.clone().t()
    getattr(x, op + "_")(-3)
    getattr(y, op + "_")(-3)
    assert_equal(x, y)
    del j


def test_division_operators():
    a = values((4, 5), et.int64, 29)
    b = et.where(a == 0, et.ones_like(a), a)
    assert_equal(on(a) // on(b), a // b)
    assert_equal(on(a) % 3, a % 3)
    assert_equal(7 // on(b), 7 // b)
    assert_equal(-7 % on(b), -7 % b)
    assert_equal(2.5 % on(b), 2.5 % b)


@pytest.mark.parametrize("op", DIVISIONS)
def test_division_errors_match_cpu(op):
    f = getattr(et, op)
    a = values((3, 4), et.int32, 30)
    zero_cpu = et.tensor(0)
    assert_same_error(lambda d: f(a.to(d), 0))  # a Python zero: ZeroDivisionError on both
    assert_same_error(lambda d: f(a.to(d), zero_cpu))  # a CPU 0-d zero
    assert_same_error(lambda d: f(a.to(d), False))
    assert_same_error(lambda d: f(a.to(et.int8).to(d), et.tensor(256)))  # 256 as int8 is 0
    assert_same_error(lambda d: getattr(a.clone().to(d), op + "_")(0))
    bools = values((3,), et.bool, 31)
    assert_same_error(lambda d: f(bools.to(d), bools.to(d)))
    assert_same_error(lambda d: f(a.to(d), values((5,), et.int32, 32).to(d)))
    fl = values((3, 4), et.float32, 33)
    assert_same_error(lambda d: getattr(a.clone().to(d), op + "_")(fl.to(d)))  # float into int
    # a float Python zero divides an integer tensor in floating point: no error
    assert_equal(f(on(a), 0.0), f(a, 0.0))


@pytest.mark.skipif(DEV != "cuda", reason="the CUDA rule for a device divisor")
@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", DIVISIONS)
def test_integer_division_by_a_device_zero_gives_zero(op, dtype):
    f = getattr(et, op)
    a = et.tensor([5, 0, 3, 1]).to(dtype).to(DEV)
    b = et.tensor([0, 0, 2, 1]).to(dtype).to(DEV)
    got = f(a, b).cpu()
    want = f(a.cpu()[2:], b.cpu()[2:])
    assert got.tolist() == [0, 0] + want.tolist()


# ---------------------------------------------------------------------------------------------
# isnan / isinf / isfinite / signbit


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["isnan", "isinf", "isfinite", "signbit"])
def test_classification_matches_cpu(op, dtype):
    f = getattr(et, op)
    a = values((6, 7), dtype, 34, special=True)
    assert_equal(f(on(a)), f(a))
    assert_equal(f(on(a).t()), f(a.t()))
    assert_equal(getattr(on(a), op)(), getattr(a, op)())
    e = et.empty((0, 3), dtype=dtype)
    assert_equal(f(on(e)), f(e))
    if dtype in FLOATS:
        x, _ = float_operands(dtype)
        big = (x * 1e30).expand(300, -1)  # overflows to inf in the 16-bit types, many blocks
        assert_equal(f(on(big)), f(big))


# ---------------------------------------------------------------------------------------------
# masked_fill


@pytest.mark.parametrize("dtype", ALL)
def test_masked_fill_matches_cpu(dtype):
    a = values((4, 5), dtype, 35, special=True)
    mask = values((4, 5), et.bool, 36)
    row = values((5,), et.bool, 37)
    v = 1 if dtype != et.bool else True
    assert_equal(on(a).masked_fill(on(mask), v), a.masked_fill(mask, v))
    assert_equal(on(a).masked_fill(on(row), v), a.masked_fill(row, v))  # mask broadcast
    assert_equal(on(a).t().masked_fill(on(mask).t(), v), a.t().masked_fill(mask.t(), v))
    col = values((3, 1, 1), et.bool, 38)  # the result broadcasts past self
    assert_equal(on(a).masked_fill(on(col), v), a.masked_fill(col, v))
    assert_equal(et.masked_fill(on(a), on(mask), v), et.masked_fill(a, mask, v))
    for value in [et.tensor(3), et.tensor(2.5), et.tensor(True)]:  # a CPU 0-d value tensor
        if dtype in INTS and value.dtype == et.float32:
            continue
        assert_equal(on(a).masked_fill(on(mask), value), a.masked_fill(mask, value))
        assert_equal(
            on(a).masked_fill(on(mask), on(value)), a.masked_fill(mask, value)
        )  # on the device
    if dtype in FLOATS:
        for value in [float("nan"), float("-inf"), -0.0]:
            assert_equal(on(a).masked_fill(on(mask), value), a.masked_fill(mask, value))
    x, y = on(a.clone()), a.clone()
    x.masked_fill_(on(row), v)
    y.masked_fill_(row, v)
    assert_equal(x, y)
    x, y = on(a.clone()).t(), a.clone().t()  # in place on a non-contiguous view
    x.masked_fill_(on(row).unsqueeze(1), v)
    y.masked_fill_(row.unsqueeze(1), v)
    assert_equal(x, y)
    cpu_mask = et.tensor(True)  # a CPU 0-d mask joins the device tensors
    assert_equal(on(a).masked_fill(cpu_mask, v), a.masked_fill(cpu_mask, v))


def test_masked_fill_large_and_empty():
    a = et.randn((300, 701))
    mask = a > 0.3
    assert_equal(on(a).masked_fill(on(mask), -1.0), a.masked_fill(mask, -1.0))
    x, y = on(a.clone()), a.clone()
    x.masked_fill_(on(mask), float("inf"))
    y.masked_fill_(mask, float("inf"))
    assert_equal(x, y)
    e = et.empty((0, 3))
    assert_equal(on(e).masked_fill(on(e > 0), 1.0), e.masked_fill(e > 0, 1.0))


def test_masked_fill_errors_match_cpu():
    a = values((4, 5), et.int8, 39)
    mask = values((4, 5), et.bool, 40)
    assert_same_error(lambda d: a.to(d).masked_fill(mask.to(et.uint8).to(d), 1))
    assert_same_error(lambda d: a.to(d).masked_fill(mask.to(d), et.tensor([1, 2]).to(d)))
    assert_same_error(lambda d: a.to(d).masked_fill(mask.to(d), 300))  # int8 overflow
    assert_same_error(lambda d: a.to(d).masked_fill(mask.to(d), et.tensor(1000)))
    assert_same_error(lambda d: a.to(et.float16).to(d).masked_fill(mask.to(d), 1e6))
    assert_same_error(lambda d: a.to(d).masked_fill(values((3, 5), et.bool, 41).to(d), 1))
    assert_same_error(
        lambda d: a.clone().to(d).masked_fill_(values((2, 4, 5), et.bool, 42).to(d), 1)
    )


# ---------------------------------------------------------------------------------------------
# tril / triu


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["tril", "triu"])
def test_triangles_match_cpu(op, dtype):
    f = getattr(et, op)
    a = values((2, 3, 5, 6), dtype, 43, special=True)
    for diagonal in [0, 1, -1, 3, -4, 7, -9, 2**62, -(2**62)]:
        assert_equal(f(on(a), diagonal), f(a, diagonal))
    assert_equal(getattr(on(a), op)(2), getattr(a, op)(2))
    t = a.transpose(1, 3)  # non-contiguous, batch dims that do not merge
    assert_equal(f(on(a).transpose(1, 3), -1), f(t, -1))
    w = a[:, ::2, ::2, 1:]  # a strided view
    assert_equal(f(on(a)[:, ::2, ::2, 1:], 1), f(w, 1))


@pytest.mark.parametrize("op", ["tril", "triu"])
def test_triangles_in_place_out_and_large(op):
    f = getattr(et, op)
    a = values((3, 7, 4), et.float64, 44, special=True)
    x, y = on(a.clone()), a.clone()
    getattr(x, op + "_")(1)
    getattr(y, op + "_")(1)
    assert_equal(x, y)
    x, y = on(a.clone()).transpose(1, 2), a.clone().transpose(1, 2)  # in place through a view
    getattr(x, op + "_")(-1)
    getattr(y, op + "_")(-1)
    assert_equal(x, y)
    out = et.empty((3, 7, 4), dtype=et.float64, device=DEV)
    res = f(on(a), 0, out=out)
    assert res.data_ptr() == out.data_ptr()
    assert_equal(out, f(a, 0))
    out_t = et.empty((3, 4, 7), dtype=et.float64, device=DEV).transpose(1, 2)  # non-contiguous out
    f(on(a), 2, out=out_t)
    assert_equal(out_t, f(a, 2))
    resized = et.empty((0,), dtype=et.float64, device=DEV)
    f(on(a), 0, out=resized)
    assert_equal(resized, f(a, 0))
    big = et.randn((5, 300, 257))
    assert_equal(f(on(big), 3), f(big, 3))
    m = et.randn((2000, 1500))
    assert_equal(f(on(m), -700), f(m, -700))
    e = et.empty((4, 0, 3))
    assert_equal(f(on(e), 0), f(e, 0))


@pytest.mark.parametrize("op", ["tril", "triu"])
def test_triangle_errors_match_cpu(op):
    f = getattr(et, op)
    a = values((3, 4), et.float32, 45)
    assert_same_error(lambda d: f(a[0].to(d)))
    assert_same_error(lambda d: f(a.to(d), 0, out=et.empty((3, 4), dtype=et.float64, device=d)))
    assert_same_error(lambda d: f(a.to(d), 0, out=et.empty((2, 4), dtype=et.float32, device=d)))


# ---------------------------------------------------------------------------------------------
# eye / linspace


@pytest.mark.parametrize("dtype", ALL)
def test_eye_matches_cpu(dtype):
    for n, m in [(0, None), (1, None), (4, None), (3, 5), (6, 2), (0, 3), (300, 257)]:
        got = et.eye(n, m, dtype=dtype, device=DEV)
        assert_equal(got, et.eye(n, m, dtype=dtype))


def test_eye_defaults_out_and_errors():
    assert_equal(et.eye(3, device=DEV), et.eye(3))  # the default float dtype
    out = et.empty((3, 4), dtype=et.int32, device=DEV)
    res = et.eye(3, 4, out=out)  # out='s dtype and device
    assert res.data_ptr() == out.data_ptr()
    assert_equal(out, et.eye(3, 4, dtype=et.int32))
    out_t = et.empty((4, 3), dtype=et.float32, device=DEV).t()
    et.eye(3, 4, out=out_t)
    assert_equal(out_t, et.eye(3, 4))
    assert_same_error(lambda d: et.eye(-1, device=d))
    assert_same_error(lambda d: et.eye(2, -3, device=d))
    assert_same_error(lambda d: et.eye(2, 3, out=et.empty((3, 3), device=d)))


LINSPACES = [
    (0, 1, 5),
    (-3.5, 7.25, 11),
    (1, 0, 4),
    (0.1, 0.7, 7),
    (-0.0, 1.0, 3),
    (-0.0, 5.0, 1),
    (2, 2, 6),
    (0, 1, 0),
    (1e-8, 3e8, 33),
    (-1e300, 1e300, 9),
    (0, 1, 2),
    (-5, 1000, 100001),
]


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_linspace_matches_cpu_exactly(dtype):
    for start, end, steps in LINSPACES:
        if dtype == et.uint8 and (start < 0 or end < 0):
            continue
        if dtype in INTS and (abs(start) > 1e10 or abs(end) > 1e10):
            continue
        try:
            want = et.linspace(start, end, steps, dtype=dtype)
        except RuntimeError as exc:  # an endpoint the dtype cannot hold: the same error
            assert "without overflow" in str(exc)
            with pytest.raises(RuntimeError, match="without overflow"):
                et.linspace(start, end, steps, dtype=dtype, device=DEV)
            continue
        assert_equal(et.linspace(start, end, steps, dtype=dtype, device=DEV), want)


def test_linspace_endpoint_checks_and_special_values():
    for dtype in [et.int8, et.uint8]:  # an endpoint beyond the dtype is PyTorch's error
        with pytest.raises(RuntimeError, match="without overflow"):
            et.linspace(0, 1000, 9, dtype=dtype, device=DEV)
    for start, end in [(0, float("inf")), (float("-inf"), 1), (float("nan"), 1)]:
        got = et.linspace(start, end, 5, dtype=et.float64, device=DEV)
        assert_equal(got, et.linspace(start, end, 5, dtype=et.float64))
    with pytest.raises(RuntimeError, match="without overflow"):
        et.linspace(0, float("inf"), 4, dtype=et.int64, device=DEV)


def test_linspace_defaults_out_and_errors():
    assert_equal(et.linspace(0, 1, 7, device=DEV), et.linspace(0, 1, 7))
    out = et.empty((6,), dtype=et.float64, device=DEV)
    res = et.linspace(-1, 1, 6, out=out)
    assert res.data_ptr() == out.data_ptr()
    assert_equal(out, et.linspace(-1, 1, 6, dtype=et.float64))
    out_s = et.empty((12,), dtype=et.float32, device=DEV)[::2]  # non-contiguous out
    et.linspace(0, 5, 6, out=out_s)
    assert_equal(out_s, et.linspace(0, 5, 6))
    assert_same_error(lambda d: et.linspace(0, 1, -1, device=d))
    assert_same_error(lambda d: et.linspace(0, 1, 3, dtype=et.bool, device=d))
    assert_same_error(lambda d: et.linspace(0, 1, 3, out=et.empty((4,), device=d)))


def test_creation_requires_grad(autograd):
    for g in [
        et.eye(2, 3, device=DEV, requires_grad=True),
        et.linspace(0, 1, 3, device=DEV, requires_grad=True),
    ]:
        assert g.requires_grad and g.device.type == DEV and g.is_leaf
