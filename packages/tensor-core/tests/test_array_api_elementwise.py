"""The element-wise functions of the array API namespace (ember_tensor.array_api).

References: NumPy 2 for values (float64 references for the approximated functions, the same
dtype for the exact ones; bfloat16 through float32 rounded to bfloat16), array-api-strict
(api_version 2024.12) for which dtype and scalar combinations are allowed and what they
give, and the standard's special-case tables, spelled out here for the composed functions.
"""

from __future__ import annotations

import inspect
import itertools
import math

import array_api_strict
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember_tensor as et
import ember_tensor.array_api as xp
from conftest import IS_TORCH, round_bf16
from ember_tensor.array_api import _elementwise

pytestmark = pytest.mark.skipif(IS_TORCH, reason="ember's array API namespace")

INTS = ["int8", "int16", "int32", "int64", "uint8"]
FLOATS = ["float64", "float32", "float16", "bfloat16"]
NUMERIC = INTS + FLOATS
ALL = ["bool"] + NUMERIC
STANDARD = ["bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64"]
INT_OR_BOOL = INTS + ["bool"]

NP = {"bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32,
      "int64": np.int64, "uint8": np.uint8, "float16": np.float16, "bfloat16": np.float32,
      "float32": np.float32, "float64": np.float64}
BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8}

SPECIALS = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5,
            -2.5, 2.0, -3.0, 0.25, 1e-3, -1e-3, 10.0, -10.0, 100.0, 1e30, -1e30]

HYP = settings(max_examples=100, deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture,
                                      HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------
# helpers


def dt(name):
    return getattr(et, name)


def name_of(dtype) -> str:
    return str(dtype).split(".")[-1]


def cast(values, name) -> np.ndarray:
    """values as representable in dtype `name` (a NumPy array; bfloat16 as float32)."""
    with np.errstate(all="ignore"):
        if name == "bfloat16":
            v = np.asarray(values, dtype=np.float64)
            # round_bf16 makes every NaN positive: keep the sign bit of NaNs
            return np.where(np.isnan(v), v.astype(np.float32), round_bf16(v))
        return np.asarray(values).astype(NP[name])


def arr(values, name):
    """An array of dtype `name` holding values (rounded to the dtype)."""
    a = cast(values, name)
    if name == "bfloat16":
        return et.from_numpy(np.array(a, dtype=np.float32, order="C")).to(et.bfloat16)
    return et.from_numpy(np.array(a, order="C"))  # (ascontiguousarray makes 0-d 1-d)


def npy(t) -> np.ndarray:
    if t.dtype == et.bfloat16:
        t = t.to(et.float32)
    return np.array(t.numpy(), copy=True)


def spacing(ref64, name) -> np.ndarray:
    """One unit in the last place of dtype `name` at the (float64) values ref64."""
    with np.errstate(all="ignore"):
        if name == "bfloat16":
            r = np.abs(round_bf16(ref64)).astype(np.float32)
            return np.spacing(r).astype(np.float64) * 2.0**16
        r = np.abs(np.asarray(ref64).astype(NP[name]))
        return np.spacing(r).astype(np.float64)


def assert_ulp(got, ref64, name, ulps, zero_sign=True, ctx=""):
    """Floating results within `ulps` units in the last place of a float64 reference;
    NaN, infinities and (with zero_sign) the sign of zero must match exactly."""
    got = np.asarray(got, dtype=np.float64)
    ref64 = np.broadcast_to(np.asarray(ref64, dtype=np.float64), got.shape)
    want = cast(ref64, name).astype(np.float64)  # overflow to inf as the dtype does
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    assert np.array_equal(nan_g, nan_w), (ctx, "NaN mismatch", got[nan_g != nan_w],
                                          want[nan_g != nan_w])
    inf = np.isinf(want) | np.isinf(got)
    assert np.array_equal(got[inf], want[inf]), (ctx, "inf mismatch", got[inf], want[inf])
    fin = ~(nan_w | inf)
    with np.errstate(all="ignore"):
        err = np.abs(got[fin] - ref64[fin]) / spacing(ref64[fin], name)
    ok = (err <= ulps) | (got[fin] == want[fin])
    assert ok.all(), (ctx, "ulp error", got[fin][~ok], ref64[fin][~ok], err[~ok])
    if zero_sign:
        z = want == 0
        assert np.array_equal(np.signbit(got[z]), np.signbit(want[z])), (
            ctx, "sign of zero", got[z], want[z])


def assert_same(got, want, zero_sign=True, ctx=""):
    """Exact equality (NaN == NaN), the sign of zeros included."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (ctx, got.shape, want.shape)
    if got.dtype.kind == "f" or want.dtype.kind == "f":
        g, w = got.astype(np.float64), want.astype(np.float64)
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        assert same.all(), (ctx, g[~same], w[~same])
        if zero_sign:
            z = w == 0
            assert np.array_equal(np.signbit(g[z]), np.signbit(w[z])), (ctx, g[z], w[z])
    else:
        assert np.array_equal(got, want.astype(got.dtype)), (ctx, got, want)


def ref_same_dtype(npfunc, arrays, name):
    """NumPy's result computed in dtype `name` (bfloat16: in float32, rounded)."""
    with np.errstate(all="ignore"):
        out = npfunc(*arrays)
    return cast(out, name) if name == "bfloat16" else out


def ulps_for(name) -> float:
    # composed and core functions measured at <= 2.5 ulp (float64, float32); float16 and
    # bfloat16 are computed in float32 and rounded once (<= 0.5 ulp + the reference's own)
    return {"float64": 4, "float32": 4, "float16": 1, "bfloat16": 1}[name]


# ---------------------------------------------------------------------------------------
# the functions: (NumPy reference, valid dtypes, input domain, how results compare)
# mode "exact": equal to NumPy in the same dtype; "approx": within ulps of float64 NumPy


UNARY = {
    "abs": (np.abs, NUMERIC, (-10, 10), "exact"),
    "acos": (np.arccos, FLOATS, (-1, 1), "approx"),
    "acosh": (np.arccosh, FLOATS, (1, 60), "approx"),
    "asin": (np.arcsin, FLOATS, (-1, 1), "approx"),
    "asinh": (np.arcsinh, FLOATS, (-60, 60), "approx"),
    "atan": (np.arctan, FLOATS, (-60, 60), "approx"),
    "atanh": (np.arctanh, FLOATS, (-1, 1), "approx"),
    "bitwise_invert": (np.invert, INT_OR_BOOL, None, "exact"),
    "ceil": (np.ceil, NUMERIC, (-10, 10), "exact"),
    "conj": (np.conj, NUMERIC, (-10, 10), "exact"),
    "cos": (np.cos, FLOATS, (-10, 10), "approx"),
    "cosh": (np.cosh, FLOATS, (-12, 12), "approx"),
    "exp": (np.exp, FLOATS, (-12, 12), "approx"),
    "expm1": (np.expm1, FLOATS, (-3, 3), "approx"),
    "floor": (np.floor, NUMERIC, (-10, 10), "exact"),
    "imag": (np.imag, NUMERIC, (-10, 10), "exact"),
    "isfinite": (np.isfinite, NUMERIC, (-10, 10), "exact"),
    "isinf": (np.isinf, NUMERIC, (-10, 10), "exact"),
    "isnan": (np.isnan, NUMERIC, (-10, 10), "exact"),
    "log": (np.log, FLOATS, (0, 100), "approx"),
    "log1p": (np.log1p, FLOATS, (-1, 20), "approx"),
    "log2": (np.log2, FLOATS, (0, 100), "approx"),
    "log10": (np.log10, FLOATS, (0, 100), "approx"),
    "logical_not": (np.logical_not, ["bool"], None, "exact"),
    "negative": (np.negative, NUMERIC, (-10, 10), "exact"),
    "positive": (np.positive, NUMERIC, (-10, 10), "exact"),
    "real": (np.real, NUMERIC, (-10, 10), "exact"),
    "reciprocal": (np.reciprocal, FLOATS, (-10, 10), "approx"),
    "round": (np.round, NUMERIC, (-10, 10), "exact"),
    "sign": (np.sign, NUMERIC, (-10, 10), "exact"),
    "signbit": (np.signbit, FLOATS, (-10, 10), "exact"),
    "sin": (np.sin, FLOATS, (-10, 10), "approx"),
    "sinh": (np.sinh, FLOATS, (-12, 12), "approx"),
    "square": (np.square, NUMERIC, (-10, 10), "exact"),
    "sqrt": (np.sqrt, FLOATS, (0, 100), "approx"),
    "tan": (np.tan, FLOATS, (-1.5, 1.5), "approx"),
    "tanh": (np.tanh, FLOATS, (-10, 10), "approx"),
    "trunc": (np.trunc, NUMERIC, (-10, 10), "exact"),
}

def _standard_floor_divide(x1, x2, *args, **kw):
    """NumPy's floor_divide with the standard's special cases for infinite operands (NumPy
    gives NaN for inf // 2 and -1 for 1 // -inf; the standard +-inf and -0)."""
    with np.errstate(all="ignore"):
        r = np.asarray(np.floor_divide(x1, x2, *args, **kw))
        a, b = np.broadcast_arrays(np.asarray(x1), np.asarray(x2))
        if r.dtype.kind != "f" or a.dtype.kind not in "fc" and b.dtype.kind not in "fc":
            return r
        a, b = a.astype(r.dtype), b.astype(r.dtype)
        r = r.copy()
        inf_a = np.isinf(a) & np.isfinite(b) & (b != 0)
        r[inf_a] = (a / b)[inf_a]
        opposite = np.isinf(b) & np.isfinite(a) & (a != 0) & (np.signbit(a) != np.signbit(b))
        r[opposite] = -0.0
    return r[()] if r.ndim == 0 else r

BINARY = {
    "add": (np.add, NUMERIC, "exact"),
    "atan2": (np.arctan2, FLOATS, "approx"),
    "bitwise_and": (np.bitwise_and, INT_OR_BOOL, "exact"),
    "bitwise_left_shift": (np.left_shift, INTS, "exact"),
    "bitwise_or": (np.bitwise_or, INT_OR_BOOL, "exact"),
    "bitwise_right_shift": (np.right_shift, INTS, "exact"),
    "bitwise_xor": (np.bitwise_xor, INT_OR_BOOL, "exact"),
    "copysign": (np.copysign, FLOATS, "exact"),
    "divide": (np.divide, FLOATS, "approx"),
    "equal": (np.equal, ALL, "exact"),
    "floor_divide": (_standard_floor_divide, NUMERIC, "exact"),
    "greater": (np.greater, NUMERIC, "exact"),
    "greater_equal": (np.greater_equal, NUMERIC, "exact"),
    "hypot": (np.hypot, FLOATS, "approx"),
    "less": (np.less, NUMERIC, "exact"),
    "less_equal": (np.less_equal, NUMERIC, "exact"),
    "logaddexp": (np.logaddexp, FLOATS, "approx"),
    "logical_and": (np.logical_and, ["bool"], "exact"),
    "logical_or": (np.logical_or, ["bool"], "exact"),
    "logical_xor": (np.logical_xor, ["bool"], "exact"),
    "maximum": (np.maximum, NUMERIC, "exact"),
    "minimum": (np.minimum, NUMERIC, "exact"),
    "multiply": (np.multiply, NUMERIC, "exact"),
    "nextafter": (np.nextafter, FLOATS, "exact"),
    "not_equal": (np.not_equal, ALL, "exact"),
    "pow": (np.power, NUMERIC, "approx"),
    "remainder": (np.remainder, NUMERIC, "exact"),
    "subtract": (np.subtract, NUMERIC, "exact"),
}

# the standard's element-wise functions (2024.12), clip included
STANDARD_NAMES = sorted(set(UNARY) | set(BINARY) | {"clip"})

# bool results
PREDICATES = {"isfinite", "isinf", "isnan", "signbit", "logical_not", "equal", "not_equal",
              "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or",
              "logical_xor"}
# signed zeros are unspecified for these (maximum(+0, -0) may be either)
NO_ZERO_SIGN = {"maximum", "minimum"}


def unary_input(rng, name, domain, n=200):
    """Random values of dtype `name` (within domain for floats) plus special values."""
    if name == "bool":
        return rng.random(n) < 0.5
    if name in INTS:
        info = np.iinfo(NP[name])
        vals = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=np.int64)
        edge = np.array([info.min, info.max, 0, 1, info.min + 1, info.max - 1])
        return np.concatenate([vals, edge]).astype(NP[name])
    lo, hi = domain
    vals = rng.uniform(lo, hi, n)
    return cast(np.concatenate([vals, [lo, hi], SPECIALS]), name)


def binary_input(rng, fn, name, n=200):
    """Random (x1, x2) of dtype `name` suited to fn, plus a grid of special values."""
    if name == "bool":
        return rng.random(n) < 0.5, rng.random(n) < 0.5
    if name in INTS:
        info = np.iinfo(NP[name])
        if fn == "pow":
            lo = 0 if name == "uint8" else -6
            return (rng.integers(lo, 7, n).astype(NP[name]),
                    rng.integers(0, 6, n).astype(NP[name]))
        if fn in ("bitwise_left_shift", "bitwise_right_shift"):
            shifts = np.arange(0 if name == "uint8" else -3, min(BITS[name] + 3, info.max))
            x1 = rng.integers(info.min, info.max, n, endpoint=True, dtype=np.int64)
            return x1.astype(NP[name]), rng.choice(shifts, n).astype(NP[name])
        x1 = rng.integers(info.min, info.max, n, endpoint=True, dtype=np.int64)
        x2 = rng.integers(info.min, info.max, n, endpoint=True, dtype=np.int64)
        if fn in ("floor_divide", "remainder"):
            x2[::7] = 0  # integer division by zero: 0, as NumPy
            x2[1::7] = rng.integers(-5 if info.min else 0, 6, len(x2[1::7]))
            x1[::11] = info.min
            x2[::11] = -1 if info.min else 1
        return x1.astype(NP[name]), x2.astype(NP[name])
    if fn == "pow":
        x1 = rng.uniform(0, 10, n)
        x2 = rng.uniform(-8, 8, n)
    else:
        x1 = rng.uniform(-10, 10, n) * np.exp(rng.uniform(-3, 3, n))
        x2 = rng.uniform(-10, 10, n) * np.exp(rng.uniform(-3, 3, n))
    s1 = np.repeat(SPECIALS, len(SPECIALS))
    s2 = np.tile(SPECIALS, len(SPECIALS))
    return cast(np.concatenate([x1, s1]), name), cast(np.concatenate([x2, s2]), name)


def _bit_views(name):
    """(width, value -> bits, bits -> value) of a floating format."""
    if name == "bfloat16":  # the top half of a float32
        return (16, lambda v: int(np.array(v, np.float32).view(np.uint32)) >> 16,
                lambda u: float(np.array(u << 16, np.uint32).view(np.float32)))
    ft, it = {"float16": (np.float16, np.uint16), "float32": (np.float32, np.uint32),
              "float64": (np.float64, np.uint64)}[name]
    return (np.dtype(ft).itemsize * 8, lambda v: int(np.array(v, ft).view(it)),
            lambda u: float(np.array(u, it).view(ft)))


def nextafter_bits(a, b, name):
    """Reference nextafter: step the sign-magnitude bit pattern of x1 by one (exact for every
    format; x2 where the operands are equal, NaN if either is NaN, as the standard says)."""
    a = np.asarray(a, np.float64)
    b = np.broadcast_to(np.asarray(b, np.float64), a.shape)
    width, to_bits, from_bits = _bit_views(name)
    sign_bit = 1 << (width - 1)
    out = []
    for x, y in zip(a.reshape(-1).tolist(), b.reshape(-1).tolist()):
        if math.isnan(x) or math.isnan(y):
            out.append(math.nan)
        elif x == y:
            out.append(y)
        elif x == 0:  # the smallest subnormal toward y
            out.append(from_bits(1 | (sign_bit if y < 0 else 0)))
        else:
            u = to_bits(x)
            step = 1 if (y > x) == (x > 0) else -1  # away from zero or toward it
            out.append(from_bits((u & sign_bit) | ((u & (sign_bit - 1)) + step)))
    return np.array(out, np.float64).reshape(a.shape)


# ---------------------------------------------------------------------------------------
# the namespace


def test_all_standard_functions_present():
    assert len(STANDARD_NAMES) == 67
    assert sorted(_elementwise.__all__) == STANDARD_NAMES
    for name in STANDARD_NAMES:
        assert name in xp.__all__ and callable(getattr(xp, name)), name


@pytest.mark.parametrize("fn", STANDARD_NAMES)
def test_signature_positional_only(fn):
    params = list(inspect.signature(getattr(xp, fn)).parameters.values())
    if fn == "clip":
        assert [p.name for p in params] == ["x", "min", "max"]
        assert params[0].kind is inspect.Parameter.POSITIONAL_ONLY
        assert params[1].default is None and params[2].default is None
        return
    n = 1 if fn in UNARY else 2
    assert len(params) == n
    assert all(p.kind is inspect.Parameter.POSITIONAL_ONLY for p in params)
    assert getattr(xp, fn).__doc__


# ---------------------------------------------------------------------------------------
# values against NumPy, every valid dtype


@pytest.mark.parametrize(
    "fn,name", [(f, d) for f, (_, dts, _, _) in UNARY.items() for d in dts])
def test_unary_values(fn, name, rng):
    npfunc, _, domain, mode = UNARY[fn]
    x = unary_input(rng, name, domain)
    got_t = getattr(xp, fn)(arr(x, name))
    want_name = "bool" if fn in PREDICATES else name
    assert name_of(got_t.dtype) == want_name
    assert tuple(got_t.shape) == x.shape
    got = npy(got_t)
    if name in INTS and fn in ("ceil", "floor", "trunc", "round"):
        assert_same(got, x)  # integers unchanged, same dtype
    elif mode == "exact":
        assert_same(got, ref_same_dtype(npfunc, [x], name), ctx=fn)
    else:
        with np.errstate(all="ignore"):
            ref = npfunc(x.astype(np.float64))
        assert_ulp(got, ref, name, ulps_for(name), ctx=fn)


@pytest.mark.parametrize(
    "fn,name", [(f, d) for f, (_, dts, _) in BINARY.items() for d in dts])
def test_binary_values(fn, name, rng):
    npfunc, _, mode = BINARY[fn]
    x1, x2 = binary_input(rng, fn, name)
    got_t = getattr(xp, fn)(arr(x1, name), arr(x2, name))
    want_name = "bool" if fn in PREDICATES else name
    assert name_of(got_t.dtype) == want_name
    got = npy(got_t)
    zero_sign = fn not in NO_ZERO_SIGN
    if fn == "nextafter":
        if name == "float16":  # NumPy's float16 nextafter returns x1 for (+-0, -+0)
            want = nextafter_bits(x1, x2, name)
        elif name == "bfloat16":
            want = nextafter_bits(x1, x2, name)
        else:
            want = np.nextafter(x1, x2)
        assert_same(got, want, ctx=fn)
    elif mode == "exact":
        if name == "bfloat16" and fn in ("add", "subtract", "multiply"):
            with np.errstate(all="ignore"):
                ref = npfunc(x1.astype(np.float64), x2.astype(np.float64))
            assert_ulp(got, ref, name, 0.5, zero_sign=zero_sign, ctx=fn)
        else:
            assert_same(got, ref_same_dtype(npfunc, [x1, x2], name), zero_sign, ctx=fn)
    elif name in INTS:  # pow of integers
        assert_same(got, ref_same_dtype(npfunc, [x1, x2], name), ctx=fn)
    else:
        with np.errstate(all="ignore"):
            ref = npfunc(x1.astype(np.float64), x2.astype(np.float64))
        if fn == "logaddexp":
            # max + log1p(...) cancels where the result is near 0 (NumPy's own algorithm in
            # the working precision): compare against NumPy in the same dtype there
            same = ref_same_dtype(npfunc, [x1, x2], name).astype(np.float64)
            ref = np.where(np.abs(ref) < 1e-2, same, ref)
        assert_ulp(got, ref, name, ulps_for(name), ctx=fn)


# ---------------------------------------------------------------------------------------
# special values (IEEE cases) against NumPy for the float dtypes NumPy has


@pytest.mark.parametrize("name", ["float64", "float32", "float16"])
@pytest.mark.parametrize("fn", sorted(f for f, v in UNARY.items() if v[1] == FLOATS
                                      or "float64" in v[1]))
def test_unary_special_values(fn, name):
    npfunc = UNARY[fn][0]
    x = cast(SPECIALS + [1e-40, -1e-40, 20.5, -20.5, 1 - 2**-20, -1 + 2**-20, 2.0**29,
                         -(2.0**29), 700.0, -700.0, 712.0, -712.0], name)
    got = npy(getattr(xp, fn)(arr(x, name)))
    if UNARY[fn][3] == "exact":
        assert_same(got, ref_same_dtype(npfunc, [x], name), ctx=fn)
    else:
        with np.errstate(all="ignore"):
            ref = npfunc(x.astype(np.float64))
        assert_ulp(got, ref, name, ulps_for(name), ctx=fn)


@pytest.mark.parametrize("name", ["float64", "float32", "float16"])
@pytest.mark.parametrize("fn", sorted(f for f, v in BINARY.items() if "float64" in v[1]))
def test_binary_special_values(fn, name):
    npfunc, _, mode = BINARY[fn]
    vals = SPECIALS + [5e-324, -5e-324, 1e308, -1e308]
    x1 = cast(np.repeat(vals, len(vals)), name)
    x2 = cast(np.tile(vals, len(vals)), name)
    got = npy(getattr(xp, fn)(arr(x1, name), arr(x2, name)))
    if fn == "nextafter":
        assert_same(got, nextafter_bits(x1, x2, name), ctx=fn)
    elif mode == "exact":
        assert_same(got, ref_same_dtype(npfunc, [x1, x2], name), fn not in NO_ZERO_SIGN,
                    ctx=fn)
    else:
        with np.errstate(all="ignore"):
            ref = npfunc(x1.astype(np.float64), x2.astype(np.float64))
        if fn == "logaddexp":
            same = ref_same_dtype(npfunc, [x1, x2], name).astype(np.float64)
            ref = np.where(np.abs(ref) < 1e-2, same, ref)
        assert_ulp(got, ref, name, ulps_for(name), ctx=fn)


# ---------------------------------------------------------------------------------------
# the standard's special cases, spelled out


INF, NAN, PI = math.inf, math.nan, math.pi

ATAN2_CASES = [
    (1.0, 0.0, PI / 2), (1.0, -0.0, PI / 2), (0.0, 1.0, 0.0), (0.0, 0.0, 0.0),
    (0.0, -0.0, PI), (0.0, -1.0, PI), (-0.0, 1.0, -0.0), (-0.0, 0.0, -0.0),
    (-0.0, -0.0, -PI), (-0.0, -1.0, -PI), (-1.0, 0.0, -PI / 2), (-1.0, -0.0, -PI / 2),
    (1.0, INF, 0.0), (1.0, -INF, PI), (-1.0, INF, -0.0), (-1.0, -INF, -PI),
    (INF, 1.0, PI / 2), (-INF, 1.0, -PI / 2), (INF, INF, PI / 4), (INF, -INF, 3 * PI / 4),
    (-INF, INF, -PI / 4), (-INF, -INF, -3 * PI / 4), (NAN, 1.0, NAN), (1.0, NAN, NAN),
    (INF, -0.0, PI / 2), (-INF, -1.0, -PI / 2),
]


@pytest.mark.parametrize("name", FLOATS)
def test_atan2_special_cases(name):
    y = [c[0] for c in ATAN2_CASES]
    x = [c[1] for c in ATAN2_CASES]
    got = npy(xp.atan2(arr(y, name), arr(x, name)))
    want = cast([c[2] for c in ATAN2_CASES], name)
    assert_same(got, want, ctx=list(zip(y, x)))


POW_CASES = [
    (2.0, NAN, NAN), (NAN, 0.0, 1.0), (NAN, -0.0, 1.0), (NAN, 1.0, NAN), (2.0, INF, INF),
    (2.0, -INF, 0.0), (1.0, INF, 1.0), (-1.0, INF, 1.0), (-1.0, -INF, 1.0), (1.0, NAN, 1.0),
    (0.5, INF, 0.0), (0.5, -INF, INF), (INF, 2.0, INF), (INF, -2.0, 0.0), (-INF, 3.0, -INF),
    (-INF, 2.0, INF), (-INF, -3.0, -0.0), (-INF, -2.0, 0.0), (0.0, 2.0, 0.0),
    (0.0, -2.0, INF), (-0.0, 3.0, -0.0), (-0.0, 2.0, 0.0), (-0.0, -3.0, -INF),
    (-0.0, -2.0, INF), (-2.0, 0.5, NAN), (-2.0, 3.0, -8.0), (0.0, -1.0, INF),
    (-0.0, -1.0, -INF),
]


@pytest.mark.parametrize("name", FLOATS)
def test_pow_special_cases(name):
    got = npy(xp.pow(arr([c[0] for c in POW_CASES], name), arr([c[1] for c in POW_CASES],
                                                                  name)))
    assert_same(got, cast([c[2] for c in POW_CASES], name), ctx=POW_CASES)


@pytest.mark.parametrize("name", FLOATS)
def test_sign_round_and_zero_cases(name):
    assert_same(npy(xp.sign(arr([-0.0, 0.0, NAN, -INF, 3.0, -0.5], name))),
                cast([0.0, 0.0, NAN, -1.0, 1.0, -1.0], name), zero_sign=False)
    halves = [0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 0.49, -0.0, INF, -INF, NAN]
    assert_same(npy(xp.round(arr(halves, name))),
                cast([0.0, 2.0, 2.0, 4.0, -0.0, -2.0, -2.0, 0.0, -0.0, INF, -INF, NAN], name))
    for fn in ("ceil", "floor", "trunc", "round"):
        assert_same(npy(getattr(xp, fn)(arr([-0.0, 0.0, -0.25], name)))[:2],
                    cast([-0.0, 0.0], name))
    assert_same(npy(xp.ceil(arr([-0.25], name))), cast([-0.0], name))
    # cases of unary functions that keep the sign of zero
    for fn in ("asin", "asinh", "atan", "atanh", "sinh", "tanh", "tan", "sin", "expm1",
               "log1p", "sqrt", "trunc"):
        assert_same(npy(getattr(xp, fn)(arr([-0.0, 0.0], name))), cast([-0.0, 0.0], name),
                    ctx=fn)
    assert_same(npy(xp.acos(arr([1.0, -1.0, 1.5], name))), cast([0.0, PI, NAN], name))
    assert_same(npy(xp.acosh(arr([1.0, 0.5, INF], name))), cast([0.0, NAN, INF], name))
    assert_same(npy(xp.atanh(arr([1.0, -1.0, 1.5], name))), cast([INF, -INF, NAN], name))
    assert_same(npy(xp.cosh(arr([-INF, -0.0], name))), cast([INF, 1.0], name))
    assert_same(npy(xp.sinh(arr([-INF, INF], name))), cast([-INF, INF], name))
    assert_same(npy(xp.asinh(arr([-INF, INF], name))), cast([-INF, INF], name))
    assert_same(npy(xp.tanh(arr([-INF, INF], name))), cast([-1.0, 1.0], name))


@pytest.mark.parametrize("name", FLOATS)
def test_maximum_minimum_nan_and_clip_nan(name):
    a = arr([NAN, 1.0, NAN, -INF], name)
    b = arr([1.0, NAN, NAN, 2.0], name)
    assert_same(npy(xp.maximum(a, b)), cast([NAN, NAN, NAN, 2.0], name))
    assert_same(npy(xp.minimum(a, b)), cast([NAN, NAN, NAN, -INF], name))
    x = arr([NAN, 1.0, 5.0], name)
    assert_same(npy(xp.clip(x, 0.0, 2.0)), cast([NAN, 1.0, 2.0], name))
    assert_same(npy(xp.clip(x, arr([0.0, NAN, 0.0], name), 9.0)), cast([NAN, NAN, 5.0], name))
    assert_same(npy(xp.clip(x, None, arr([1.0, 1.0, NAN], name))), cast([NAN, 1.0, NAN], name))


@pytest.mark.parametrize("name", ["float64", "float32", "float16", "bfloat16"])
def test_signbit_copysign_nan_sign(name):
    neg_nan = -np.float64(np.nan)  # a NaN with the sign bit set
    x = np.array([0.0, -0.0, INF, -INF, np.nan, neg_nan, 3.0, -3.0])
    t = arr(x, name)
    assert npy(xp.signbit(t)).tolist() == [False, True, False, True, False, True, False, True]
    # copysign: |x1| with x2's sign bit, for NaN x1 and NaN x2 too
    mags = arr([2.0, np.nan, np.nan, 0.0, -INF, neg_nan], name)
    signs = arr([neg_nan, -1.0, 1.0, -0.0, np.nan, 0.0], name)
    got = xp.copysign(mags, signs)
    assert npy(xp.signbit(got)).tolist() == [True, True, False, True, False, False]
    assert_same(np.abs(npy(got)), cast([2.0, NAN, NAN, 0.0, INF, NAN], name))
    # scalars
    assert_same(npy(xp.copysign(arr([-2.0, 2.0], name), 1.0)), cast([2.0, 2.0], name))
    assert_same(npy(xp.copysign(-0.0, arr([1.0, -1.0], name))), cast([0.0, -0.0], name))


@pytest.mark.parametrize("name", FLOATS)
def test_hypot_logaddexp_nextafter_cases(name):
    x1 = arr([INF, NAN, -INF, 0.0, -0.0, 3.0, NAN], name)
    x2 = arr([NAN, -INF, 1.0, -2.0, 0.0, NAN, NAN], name)
    assert_same(npy(xp.hypot(x1, x2)), cast([INF, INF, INF, 2.0, 0.0, NAN, NAN], name))
    x1 = arr([INF, 1.0, INF, -INF, -INF, NAN, 0.0], name)
    x2 = arr([1.0, INF, INF, -INF, 3.0, INF, -INF], name)
    assert_same(npy(xp.logaddexp(x1, x2)), cast([INF, INF, INF, -INF, 3.0, NAN, 0.0], name))
    x1 = arr([-0.0, 0.0, NAN, 1.0, 0.0, -0.0, INF], name)
    x2 = arr([0.0, -0.0, 1.0, NAN, 1.0, -1.0, INF], name)
    got = npy(xp.nextafter(x1, x2))
    tiny = {"float64": 5e-324, "float32": 2.0**-149, "float16": 2.0**-24,
            "bfloat16": 2.0**-133}[name]
    assert_same(got, np.array([0.0, -0.0, NAN, NAN, tiny, -tiny, INF]))
    big = float(xp.finfo(dt(name)).max)
    assert_same(npy(xp.nextafter(arr([big, INF, -INF], name), arr([INF, 0.0, 0.0], name))),
                np.array([INF, big, -big]))


@pytest.mark.parametrize("name", FLOATS)
def test_floor_divide_remainder_special_cases(name):
    vals = [0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 2.0, -2.0, INF, -INF, NAN]
    x1 = cast(np.repeat(vals, len(vals)), name)
    x2 = cast(np.tile(vals, len(vals)), name)
    with np.errstate(all="ignore"):
        want_fd = _standard_floor_divide(x1.astype(np.float64), x2.astype(np.float64))
        want_rem = np.remainder(x1.astype(np.float64), x2.astype(np.float64))
    assert_same(npy(xp.floor_divide(arr(x1, name), arr(x2, name))), want_fd)
    assert_same(npy(xp.remainder(arr(x1, name), arr(x2, name))), want_rem)
    # the standard's cases, spelled out: a zero remainder has the sign of x2; Python's
    # results for an infinite divisor
    x1 = arr([0.0, -0.0, 0.0, -0.0, 4.0, -4.0, 1.0, 1.0, -1.0, -1.0, INF, 1.0], name)
    x2 = arr([1.0, 1.0, -1.0, -1.0, -2.0, 2.0, INF, -INF, INF, -INF, 2.0, 0.0], name)
    assert_same(npy(xp.remainder(x1, x2)),
                cast([0.0, 0.0, -0.0, -0.0, -0.0, 0.0, 1.0, -INF, INF, -1.0, NAN, NAN], name))
    assert_same(npy(xp.floor_divide(x1, x2)),
                cast([0.0, -0.0, -0.0, 0.0, -2.0, -2.0, 0.0, -0.0, -0.0, 0.0, INF, INF], name))


@pytest.mark.parametrize("name", INTS)
def test_integer_division_by_zero_and_overflow(name):
    info = np.iinfo(NP[name])
    x1 = np.array([7, -7 if info.min else 7, 0, info.min, info.max, 5], NP[name])
    x2 = np.array([0, 0, 0, -1 if info.min else 1, 2, 3], NP[name])
    with np.errstate(all="ignore"):
        assert_same(npy(xp.floor_divide(arr(x1, name), arr(x2, name))),
                    np.floor_divide(x1, x2))
        assert_same(npy(xp.remainder(arr(x1, name), arr(x2, name))), np.remainder(x1, x2))
    # x2 scalar zero and x1 scalar
    assert npy(xp.floor_divide(arr(x1, name), 0)).tolist() == [0] * 6
    assert npy(xp.remainder(7, arr(x2, name))).tolist() == [0, 0, 0, 0, 1, 1]


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64"])
def test_integer_pow_negative_exponent_truncates(name):
    got = npy(xp.pow(arr([2, 1, -1, -1, 3], name), arr([-1, -2, -3, -2, 0], name)))
    assert got.tolist() == [0, 1, -1, 1, 1]


# ---------------------------------------------------------------------------------------
# shapes: broadcasting, 0-d, 0-size, non-contiguous


SHAPE_PAIRS = [((2, 1, 3), (4, 1)), ((), ()), ((0, 3), (3,)), ((3,), ()), ((), (2, 2)),
               ((1, 0), (5, 1)), ((4, 3), (4, 3))]


def _shape_values(rng, shape, name, fn):
    n = int(np.prod(shape))
    if name == "bool":
        v = rng.random(n) < 0.5
    elif fn in ("bitwise_left_shift", "bitwise_right_shift"):
        v = rng.integers(0, 7, n)
    elif name in INTS:
        v = rng.integers(1, 9, n)
    else:
        v = rng.uniform(0.25, 3.0, n)
    return cast(v, name).reshape(shape)


@pytest.mark.parametrize("fn", sorted(BINARY))
def test_binary_shapes(fn, rng):
    npfunc, dts, mode = BINARY[fn]
    name = dts[0]
    for s1, s2 in SHAPE_PAIRS:
        a = _shape_values(rng, s1, name, fn)
        b = _shape_values(rng, s2, name, fn)
        for layout in ("contig", "transposed"):
            ta, tb = arr(a, name), arr(b, name)
            if layout == "transposed" and a.ndim >= 2:
                ta = arr(np.ascontiguousarray(a.T), name).permute(*reversed(range(a.ndim)))
            got = getattr(xp, fn)(ta, tb)
            want = np.broadcast_shapes(s1, s2)
            assert tuple(got.shape) == want, (fn, s1, s2)
            with np.errstate(all="ignore"):
                ref = npfunc(a, b)
            if mode == "exact" or name in INTS or name == "bool":
                assert_same(npy(got), ref, fn not in NO_ZERO_SIGN, ctx=(fn, s1, s2))
            else:
                assert_ulp(npy(got), ref, name, 4, ctx=(fn, s1, s2))


@pytest.mark.parametrize("fn", sorted(UNARY))
def test_unary_shapes(fn, rng):
    npfunc, dts, domain, mode = UNARY[fn]
    name = dts[0]
    for shape in [(), (0,), (2, 0, 3), (3, 4), (2, 3, 2)]:
        n = int(np.prod(shape))
        if name == "bool" or name in INTS:
            x = unary_input(rng, name, domain, n)[:n].reshape(shape)
        else:
            lo, hi = domain
            x = cast(rng.uniform(lo + 1e-3 * (hi - lo), hi - 1e-3 * (hi - lo), n),
                     name).reshape(shape)
        t = arr(x, name)
        if x.ndim >= 2:
            t = arr(np.ascontiguousarray(x.T), name).permute(*reversed(range(x.ndim)))
        got = getattr(xp, fn)(t)
        assert tuple(got.shape) == shape
        with np.errstate(all="ignore"):
            ref = npfunc(x)
        if mode == "exact" or name in INTS or name == "bool":
            assert_same(npy(got), ref, ctx=fn)
        else:
            assert_ulp(npy(got), ref, name, 4, ctx=fn)


# ---------------------------------------------------------------------------------------
# dtypes: promotion and errors, with array-api-strict as the oracle for standard dtypes


def _strict(fn, a, b):
    """array-api-strict (2024.12): ('ok', result dtype name) or ('err', exception type)."""
    S = array_api_strict
    with S.ArrayAPIStrictFlags(api_version="2024.12"), np.errstate(all="ignore"):
        try:
            r = getattr(S, fn)(a, b)
        except Exception as e:  # noqa: BLE001 - the type is the answer
            return "err", type(e)
    return "ok", str(r.dtype).split(".")[-1]


def _strict_arr(name):
    return array_api_strict.asarray([1, 2], dtype=getattr(array_api_strict, name))


def _extension_expectation(fn, d1, d2):
    """The result dtype (or TypeError) for pairs involving float16/bfloat16."""
    valid = BINARY[fn][1]
    if d1 not in valid or d2 not in valid:
        return "err", TypeError
    if (d1 in FLOATS) != (d2 in FLOATS):
        return "err", TypeError
    if fn in PREDICATES:
        return "ok", "bool"
    if d1 == d2:
        return "ok", d1
    order = {"float16": 1, "bfloat16": 1, "float32": 2, "float64": 3}
    if order[d1] == order[d2]:
        return "ok", "float32"
    return "ok", d1 if order[d1] > order[d2] else d2


@pytest.mark.parametrize("fn", sorted(BINARY))
def test_binary_dtype_pairs(fn):
    f = getattr(xp, fn)
    for d1, d2 in itertools.product(ALL, ALL):
        if d1 in STANDARD and d2 in STANDARD:
            kind, want = _strict(fn, _strict_arr(d1), _strict_arr(d2))
        else:
            kind, want = _extension_expectation(fn, d1, d2)
        a, b = arr([1, 2], d1), arr([1, 2], d2)
        if kind == "err":
            assert want is TypeError, (fn, d1, d2, want)
            with pytest.raises(TypeError):
                f(a, b)
        else:
            assert name_of(f(a, b).dtype) == want, (fn, d1, d2)


@pytest.mark.parametrize("fn", sorted(UNARY))
def test_unary_dtypes(fn):
    valid = UNARY[fn][1]
    for name in ALL:
        x = arr([1, 0], name)
        if name in valid:
            getattr(xp, fn)(x)
        else:
            with pytest.raises(TypeError):
                getattr(xp, fn)(x)


def test_unary_dtype_categories_match_strict():
    S = array_api_strict
    for fn in UNARY:
        if fn == "imag":  # complex only in the standard; zeros here (as NumPy)
            continue
        for name in STANDARD:
            with S.ArrayAPIStrictFlags(api_version="2024.12"), np.errstate(all="ignore"):
                try:
                    getattr(S, fn)(S.asarray([1, 0], dtype=getattr(S, name)))
                    ok = True
                except TypeError:
                    ok = False
            assert ok == (name in UNARY[fn][1]), (fn, name)


SCALARS = [True, False, 3, -2, 0, 2.5, -0.0, math.inf]


@pytest.mark.parametrize("fn", sorted(BINARY))
def test_binary_python_scalars(fn):
    """Array with a Python scalar on either side: dtype, values and errors as
    array-api-strict (2024.12)."""
    S = array_api_strict
    f = getattr(xp, fn)
    for name in STANDARD:
        vals = [1, 2] if name != "bool" else [True, False]
        for s, left in itertools.product(SCALARS, (False, True)):
            if (fn == "pow" or "shift" in fn) and type(s) is int and s < 0:
                continue  # unspecified: array-api-strict raises ValueError, see the module
            sa = S.asarray(vals, dtype=getattr(S, name))
            with S.ArrayAPIStrictFlags(api_version="2024.12"), np.errstate(all="ignore"):
                try:
                    want = getattr(S, fn)(*((s, sa) if left else (sa, s)))
                    err = None
                except Exception as e:  # noqa: BLE001
                    err = type(e)
            ta = arr(vals, name)
            args = (s, ta) if left else (ta, s)
            if err is not None:
                with pytest.raises(err):
                    f(*args)
                continue
            got = f(*args)
            wn = np.asarray(want._array)
            if fn == "floor_divide":  # array-api-strict computes with NumPy (see above)
                pair = (s, np.asarray(sa._array)) if left else (np.asarray(sa._array), s)
                wn = _standard_floor_divide(*pair).astype(wn.dtype)
            assert name_of(got.dtype) == str(want.dtype).split(".")[-1], (fn, name, s, left)
            if fn in ("maximum", "minimum"):
                assert_same(npy(got), wn, zero_sign=False, ctx=(fn, name, s, left))
            elif BINARY[fn][2] == "approx" and got.dtype.is_floating_point:
                assert_ulp(npy(got), wn, name, 4, ctx=(fn, name, s, left))
            else:
                assert_same(npy(got), wn, ctx=(fn, name, s, left))


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_scalars_take_the_array_dtype(name):
    x = arr([0.1, 1.0], name)
    assert xp.add(x, 0.1).dtype == dt(name)
    assert npy(xp.equal(x, 0.1)).tolist() == [True, False]  # 0.1 rounded to the dtype first
    assert xp.multiply(3, x).dtype == dt(name)
    assert_same(npy(xp.pow(2, arr([3.0, -1.0], name))), cast([8.0, 0.5], name))
    with pytest.raises(TypeError):
        xp.add(x, True)


@pytest.mark.parametrize("name", INTS)
def test_int_scalar_out_of_bounds(name):
    info = np.iinfo(NP[name])
    x = arr([1], name)
    for bad in (info.max + 1, info.min - 1):
        with pytest.raises(OverflowError):
            xp.add(x, bad)
        with pytest.raises(OverflowError):
            xp.less(bad, x)
    assert npy(xp.add(x, int(info.max) - 1)).tolist() == [info.max]


BAD_OPERANDS = [[1.0, 2.0], np.array([1.0, 2.0]), None, "a"]


@pytest.mark.parametrize("fn", sorted(UNARY))
def test_unary_rejects_non_arrays(fn):
    for bad in BAD_OPERANDS + [1.0, 1, True]:
        with pytest.raises(TypeError):
            getattr(xp, fn)(bad)


@pytest.mark.parametrize("fn", sorted(BINARY))
def test_binary_rejects_non_arrays(fn):
    name = BINARY[fn][1][0]
    x = arr([1, 1], name)
    s = {"bool": True}.get(name, 1)
    for bad in BAD_OPERANDS:
        with pytest.raises(TypeError):
            getattr(xp, fn)(x, bad)
        with pytest.raises(TypeError):
            getattr(xp, fn)(bad, x)
    with pytest.raises(TypeError):  # at least one array
        getattr(xp, fn)(s, s)


def test_mixed_kinds_error_messages():
    with pytest.raises(TypeError, match="add"):
        xp.add(arr([1], "int32"), arr([1.0], "float32"))
    with pytest.raises(TypeError, match="divide"):
        xp.divide(arr([1], "int32"), arr([1], "int32"))
    with pytest.raises(TypeError, match="bool"):
        xp.multiply(arr([True], "bool"), arr([1], "int8"))


# ---------------------------------------------------------------------------------------
# clip


@pytest.mark.parametrize("name", NUMERIC)
def test_clip_values(name, rng):
    if name in INTS:
        info = np.iinfo(NP[name])
        x = rng.integers(info.min, info.max, 50, endpoint=True).astype(NP[name])
        lo, hi = (int(info.min) // 2, int(info.max) // 2)
    else:
        x = cast(np.concatenate([rng.uniform(-10, 10, 50), [INF, -INF]]), name)
        lo, hi = -2.5, 4
    t = arr(x, name)
    want = np.clip(x, lo, hi)
    assert_same(npy(xp.clip(t, lo, hi)), cast(want, name))
    assert_same(npy(xp.clip(t, min=lo)), cast(np.maximum(x, lo), name))
    assert_same(npy(xp.clip(t, max=hi)), cast(np.minimum(x, hi), name))
    got = xp.clip(t)
    assert got.dtype == t.dtype and got is not t
    assert_same(npy(got), x)
    # array bounds, broadcasting with x
    x2 = x[:12].reshape(3, 4)
    lo_a = cast(np.full((3, 1), lo), name)
    hi_a = cast(np.full((1, 4), hi), name)
    got = xp.clip(arr(x2, name), arr(lo_a, name), arr(hi_a, name))
    assert got.dtype == t.dtype
    assert_same(npy(got), np.minimum(np.maximum(x2, lo_a), hi_a))
    got = xp.clip(arr(x[:4], name), arr(np.full((2, 1), lo), name))
    assert tuple(got.shape) == (2, 4)


def test_clip_dtypes_and_bounds():
    i8 = arr([-100, 0, 100], "int8")
    assert npy(xp.clip(i8, -1000, 1000)).tolist() == [-100, 0, 100]
    assert npy(xp.clip(i8, 200)).tolist() == [127, 127, 127]  # saturates to the dtype
    assert npy(xp.clip(i8, None, -200)).tolist() == [-128, -128, -128]
    with pytest.raises(TypeError):
        xp.clip(i8, 1.5)
    with pytest.raises(TypeError):
        xp.clip(i8, arr([1.0], "float32"))
    with pytest.raises(TypeError):
        xp.clip(arr([1.0], "float32"), arr([1], "int8"))
    with pytest.raises(TypeError):
        xp.clip(i8, True)
    with pytest.raises(TypeError):
        xp.clip(arr([True], "bool"), 0)
    with pytest.raises(TypeError):
        xp.clip([1, 2], 0)
    # a python int bound for a float array is fine
    f = arr([0.5, 3.0], "float32")
    assert npy(xp.clip(f, 1, 2)).tolist() == [1.0, 2.0]
    assert xp.clip(f, 1, 2).dtype == et.float32
    # wider bounds: applied in the promoted dtype, the result keeps x's dtype
    got = xp.clip(i8, arr([-5, 300, 1], "int16"))
    assert got.dtype == et.int8 and npy(got).tolist() == [-5, 127, 100]
    got = xp.clip(f, arr([1.0], "float64"))
    assert got.dtype == et.float32 and npy(got).tolist() == [1.0, 3.0]
    # min > max gives max
    assert npy(xp.clip(f, 2.0, 1.0)).tolist() == [1.0, 1.0]


# ---------------------------------------------------------------------------------------
# shifts and other integer details


@pytest.mark.parametrize("name", INTS)
def test_shifts_cover_the_bit_width(name):
    info = np.iinfo(NP[name])
    bits = BITS[name]
    x = np.array([1, info.max, info.min, 3, -3 if info.min else 5, 0], NP[name])
    for sh in range(0 if name == "uint8" else -2, bits + 3):
        s = np.full(x.shape, sh, NP[name])
        with np.errstate(all="ignore"):
            assert_same(npy(xp.bitwise_left_shift(arr(x, name), arr(s, name))),
                        np.left_shift(x, s), ctx=("<<", sh))
            assert_same(npy(xp.bitwise_right_shift(arr(x, name), arr(s, name))),
                        np.right_shift(x, s), ctx=(">>", sh))
    # mixed integer dtypes promote first
    got = xp.bitwise_left_shift(arr([1], "uint8"), arr([9], "int8"))
    assert got.dtype == et.int16 and npy(got).tolist() == [512]


def test_integer_results_keep_dtype():
    for name in INTS:
        x = arr([3, 0, 7], name)
        for fn in ("ceil", "floor", "trunc", "round", "abs", "square", "sign", "positive",
                   "negative", "real", "conj", "imag"):
            assert getattr(xp, fn)(x).dtype == dt(name), (fn, name)
        assert npy(xp.imag(x)).tolist() == [0, 0, 0]


def test_identity_functions():
    x = arr([1.5, -2.0], "float32")
    assert xp.real(x) is x and xp.conj(x) is x
    p = xp.positive(x)
    assert p is not x and npy(p).tolist() == [1.5, -2.0]


# ---------------------------------------------------------------------------------------
# hypothesis: the composed functions over the whole float range


def _floats(width):
    return st.floats(width=width, allow_nan=True, allow_infinity=True, allow_subnormal=True)


@pytest.mark.parametrize("width,name", [(64, "float64"), (32, "float32")])
@pytest.mark.parametrize("fn", ["acos", "asin", "acosh", "asinh", "atanh", "cosh", "sinh"])
def test_composed_unary_hypothesis(fn, width, name):
    npfunc = UNARY[fn][0]

    @HYP
    @given(x=hnp.arrays(NP[name], st.integers(0, 24), elements=_floats(width)))
    def check(x):
        got = npy(getattr(xp, fn)(arr(x, name)))
        with np.errstate(all="ignore"):
            ref = npfunc(x.astype(np.float64))
        assert_ulp(got, ref, name, 4, ctx=(fn, x))

    check()


@pytest.mark.parametrize("width,name", [(64, "float64"), (32, "float32")])
@pytest.mark.parametrize("fn", ["atan2", "hypot", "logaddexp", "copysign", "nextafter"])
def test_composed_binary_hypothesis(fn, width, name):
    npfunc = BINARY[fn][0]

    @HYP
    @given(data=hnp.arrays(NP[name], st.tuples(st.just(2), st.integers(0, 16)),
                           elements=_floats(width)))
    def check(data):
        x1, x2 = data[0], data[1]
        got = npy(getattr(xp, fn)(arr(x1, name), arr(x2, name)))
        if fn in ("copysign", "nextafter"):
            assert_same(got, npfunc(x1, x2), ctx=(fn, x1, x2))
            return
        with np.errstate(all="ignore"):
            ref = npfunc(x1.astype(np.float64), x2.astype(np.float64))
            if fn == "logaddexp":
                same = npfunc(x1, x2).astype(np.float64)
                ref = np.where(np.abs(ref) < 1e-2, same, ref)
        assert_ulp(got, ref, name, 4, ctx=(fn, x1, x2))

    check()


@HYP
@given(x=hnp.arrays(np.float32, st.integers(0, 16), elements=_floats(32)),
       y=hnp.arrays(np.float32, st.integers(0, 16), elements=_floats(32)))
def test_nextafter_bfloat16_hypothesis(x, y):
    n = min(len(x), len(y))
    x, y = round_bf16(x[:n]), round_bf16(y[:n])
    got = npy(xp.nextafter(arr(x, "bfloat16"), arr(y, "bfloat16")))
    assert_same(got, nextafter_bits(x, y, "bfloat16"))


# ---------------------------------------------------------------------------------------
# complex64/complex128 and uint16/uint32/uint64, against NumPy

COMPLEX = ["complex64", "complex128"]
WIDE_UINTS = ["uint16", "uint32", "uint64"]
Z = np.array([1 + 2j, -3 + 0.5j, 0j, -0.0 - 2j, 2.5 - 1.5j, 0.25 + 0.75j])


def _np_c(name):
    return Z.astype(name)


def _close(t, want, name):
    assert name_of(t.dtype) == name, (name_of(t.dtype), name)
    tol = 2e-6 if name in ("complex64", "float32") else 1e-13
    np.testing.assert_allclose(npy(t), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", COMPLEX)
@pytest.mark.parametrize("fn", ["exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan",
                                "tanh", "sinh", "cosh", "asinh", "atan", "negative",
                                "square", "reciprocal", "conj", "positive"])
def test_complex_unary_like_numpy(fn, name):
    a = _np_c(name)
    if fn in ("log", "reciprocal"):
        a = a[a != 0]
    ref = {"conj": np.conj, "negative": np.negative, "positive": np.positive,
           "reciprocal": np.reciprocal, "square": np.square}.get(fn) or getattr(np, fn)
    with np.errstate(all="ignore"):
        want = ref(a)
    _close(getattr(xp, fn)(et.from_numpy(a)), want, name)


@pytest.mark.parametrize("name", COMPLEX)
def test_complex_parts_abs_sign_round(name):
    a = _np_c(name)
    x = et.from_numpy(a)
    real = "float32" if name == "complex64" else "float64"
    _close(xp.real(x), a.real, real)
    _close(xp.imag(x), a.imag, real)
    _close(xp.abs(x), np.abs(a), real)
    mag = np.abs(a)
    _close(xp.sign(x), np.where(mag == 0, 0, a / np.where(mag == 0, 1, mag)), name)
    _close(xp.round(xp.multiply(x, 1.5)), np.round(a * 1.5), name)
    for fn in ("isnan", "isinf", "isfinite"):
        np.testing.assert_array_equal(npy(getattr(xp, fn)(x)), getattr(np, fn)(a))
    np.testing.assert_array_equal(npy(xp.equal(x, xp.conj(x))), a == np.conj(a))


@pytest.mark.parametrize("name", COMPLEX)
def test_complex_binary_and_scalars(name):
    a, b = _np_c(name), _np_c(name)[::-1].copy()
    x, y = et.from_numpy(a), et.from_numpy(b)
    for fn, ref in (("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply)):
        _close(getattr(xp, fn)(x, y), ref(a, b), name)
    nz = b != 0
    _close(xp.divide(x[et.from_numpy(nz)], y[et.from_numpy(nz)]), a[nz] / b[nz], name)
    _close(xp.add(x, 1j), a + 1j, name)
    _close(xp.multiply(2.5, x), 2.5 * a, name)
    # a complex scalar with a real floating array: the complex dtype of its precision
    real = "float32" if name == "complex64" else "float64"
    r = et.from_numpy(np.array([1.0, -2.0], dtype=real))
    _close(xp.add(r, 1j), np.array([1 + 1j, -2 + 1j]), name)
    # complex64 with float64 gives complex128
    _close(xp.add(et.from_numpy(_np_c("complex64")), et.from_numpy(np.ones(6))),
           _np_c("complex64") + 1, "complex128")
    with pytest.raises(TypeError, match="complex"):
        xp.add(et.from_numpy(np.array([1, 2])), 1j)
    for fn in ("less", "maximum", "floor", "atan2", "clip"):
        with pytest.raises(TypeError, match="real-valued"):
            getattr(xp, fn)(x, x) if fn in ("less", "maximum", "atan2") else getattr(xp, fn)(x)


@pytest.mark.parametrize("name", WIDE_UINTS)
def test_wide_unsigned_like_numpy(name):
    top = np.iinfo(name).max
    a = np.array([0, 1, 7, 100, top - 1, top], dtype=name)
    b = np.array([3, 1, 2, 9, 5, top], dtype=name)
    x, y = et.from_numpy(a), et.from_numpy(b)
    for fn in ("add", "subtract", "multiply", "floor_divide", "remainder", "maximum",
               "minimum", "bitwise_and", "bitwise_or", "bitwise_xor", "equal", "less",
               "greater_equal", "not_equal"):
        if name == "uint64" and fn in ("floor_divide", "remainder"):
            continue  # no exact path through int64; see the next test
        want = getattr(np, fn)(a, b)
        got = getattr(xp, fn)(x, y)
        assert got.dtype == (et.bool if want.dtype == np.bool_ else getattr(et, name)), fn
        np.testing.assert_array_equal(npy(got), want, err_msg=fn)
    for fn in ("negative", "square", "bitwise_invert", "abs", "sign", "floor"):
        np.testing.assert_array_equal(npy(getattr(xp, fn)(x)), getattr(
            np, {"bitwise_invert": "invert"}.get(fn, fn))(a), err_msg=fn)
    np.testing.assert_array_equal(npy(xp.bitwise_right_shift(x, y)),
                                  np.where(b < a.itemsize * 8, a >> (b % (a.itemsize * 8)), 0))
    np.testing.assert_array_equal(npy(xp.clip(x, 1, 100)), np.clip(a, 1, 100))
    assert xp.add(x, top).dtype == getattr(et, name)  # a Python int up to the maximum
    with pytest.raises(OverflowError):
        xp.add(x, int(top) + 1)


def test_uint64_without_an_exact_path_is_a_clear_error():
    x = et.from_numpy(np.array([5, 2**64 - 1], dtype=np.uint64))
    try:
        out = xp.floor_divide(x, x)
    except TypeError as e:
        assert "uint64" in str(e) and "floor_divide" in str(e)
    else:  # the core has a uint64 kernel now
        np.testing.assert_array_equal(npy(out), [1, 1])
