"""The vectorisable kernels of vec_math.h / special_float.h that replaced C library calls:
float64 exp, tanh, sigmoid, erf, erfc, ndtr and gelu, float32 erf, ndtr, gelu, the
logarithms, sin and cos, held to a few ulp of the C library (NumPy, math.erf) or mpmath over
random arguments of every scale, and to their values at the edges."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import ember_tensor as et


def _ulps(got, want) -> float:
    got, want = np.asarray(got), np.asarray(want)
    spacing = np.spacing(np.abs(want)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        err = np.abs(got.astype(np.float64) - want.astype(np.float64)) / spacing
    return float(np.nanmax(err))


@pytest.mark.parametrize("scale", [1e-9, 0.3, 3.0, 40.0, 700.0])
@pytest.mark.parametrize("name,limit", [("exp", 1), ("tanh", 3)])
def test_float64_exp_and_tanh_within_a_few_ulp(name, limit, scale):
    x = np.random.default_rng(1).standard_normal(100_000) * scale
    with np.errstate(over="ignore"):
        want = getattr(np, name)(x)
    finite = np.isfinite(want)
    got = getattr(et, name)(et.tensor(x)).numpy()
    assert _ulps(got[finite], want[finite]) <= limit
    assert np.array_equal(np.isinf(got), np.isinf(want))


def test_float64_sigmoid_within_a_few_ulp():
    x = np.random.default_rng(2).standard_normal(100_000) * 20
    with np.errstate(over="ignore"):
        want = 1.0 / (1.0 + np.exp(-x))
    assert _ulps(et.sigmoid(et.tensor(x)).numpy(), want) <= 3


def test_float64_sigmoid_against_mpmath():
    # with AVX-512, blocks of 8 within |x| < 708 run the table-driven kernel, the others
    # (here every block holding one of the far values) vec_math.h's sigmoid_d: both within
    # 2.5 ulp of the 30-digit value
    x = np.concatenate([np.linspace(-40.0, 40.0, 8_001),
                        np.random.default_rng(4).standard_normal(4_000) * 300])
    x = x[np.abs(x) < 709]
    with mpmath.workdps(30):
        want = np.array([float(1 / (1 + mpmath.exp(-mpmath.mpf(v)))) for v in x])
    assert _ulps(et.sigmoid(et.tensor(x)).numpy(), want) <= 2.5
    for n in (1, 7, 8, 9, 23):  # ragged ends (masked loads and stores)
        assert _ulps(et.sigmoid(et.tensor(x[-n:])).numpy(), want[-n:]) <= 2.5


EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 709.7, 709.8, -745.1, -746.0, 1e-320,
                  -708.5, 20.0, -20.0, 1e-17, -1e-300])


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid"])
def test_float64_edges_match_the_c_library(name):
    with np.errstate(over="ignore"):
        want = {"exp": np.exp, "tanh": np.tanh,
                "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v))}[name](EDGES)
    got = getattr(et, name)(et.tensor(EDGES)).numpy()
    np.testing.assert_array_equal(np.signbit(got[~np.isnan(want)]),
                                  np.signbit(want[~np.isnan(want)]))
    np.testing.assert_allclose(got, want, rtol=4e-16, atol=0)


@pytest.mark.parametrize("scale", [1e-6, 0.3, 1.0, 3.0, 10.0])
def test_float32_erf_within_a_few_ulp(scale):
    x = (np.random.default_rng(3).standard_normal(50_000) * scale).astype(np.float32)
    want = np.array([math.erf(float(v)) for v in x], dtype=np.float64).astype(np.float32)
    assert _ulps(et.erf(et.tensor(x)).numpy(), want) <= 3


def test_float32_erf_edges():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 12.0, -30.0, 1e-40],
                 dtype=np.float32)
    got = et.erf(et.tensor(x)).numpy()
    want = np.array([math.erf(float(v)) if not np.isnan(v) else np.nan for v in x],
                    dtype=np.float32)
    np.testing.assert_allclose(got, want, rtol=2.5e-7, atol=0)
    assert np.signbit(got[1]) and np.isnan(got[4])


def test_float32_randn_follows_the_float64_stream():
    # float32 normals take their radius from vec_math's log_pos_d and their angle from
    # sincos_turn_f; the float64 ones from the C library, on the same counters: they differ
    # only by the float angle's 24-bit turn and rounding
    et.manual_seed(7)
    single = et.randn(200_001).numpy().astype(np.float64)
    et.manual_seed(7)
    double = et.randn(200_001, dtype=et.float64).numpy()
    assert np.max(np.abs(single - double) / np.maximum(1.0, np.abs(double))) < 4e-6
    assert abs(single.mean()) < 0.01 and abs(single.std() - 1) < 0.01


def _normal_cdf64(x: np.ndarray) -> np.ndarray:
    return np.array([0.5 * math.erfc(-v / math.sqrt(2.0)) for v in x])


def test_float32_gelu_and_ndtr_keep_their_relative_precision_in_the_negative_tail():
    # PyTorch's float32 gelu loses the tail (gelu(-5) off by its whole value); the fused kernel
    # holds a few ulp of the float64 value down to x = -13.2, where x Phi(x) leaves the normal
    # floats, and gives 0 beyond
    x = np.concatenate([np.linspace(-13.1, 8.0, 40_001), [-1e-20, 1e-20]]).astype(np.float32)
    phi = _normal_cdf64(x.astype(np.float64))
    assert _ulps(et.gelu(et.tensor(x)).numpy(), (x * phi).astype(np.float32)) <= 8
    assert _ulps(et.special_ndtr(et.tensor(x)).numpy(), phi.astype(np.float32)) <= 8
    far = et.tensor([-13.25, -20.0, -1e30, -np.inf, np.inf, np.nan], dtype=et.float32)
    got = et.gelu(far).tolist()
    assert got[:3] == [0.0, 0.0, 0.0] and math.isnan(got[3]) and got[4] == math.inf
    assert math.isnan(got[5])


def _gelu_parts64(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """gelu(x) and gelu'(x) in float64."""
    xd = x.astype(np.float64)
    cdf = _normal_cdf64(xd)
    return xd * cdf, cdf + xd * np.exp(-0.5 * xd * xd) / math.sqrt(2 * math.pi)


def test_float32_gelu_tables_of_the_avx512_kernel():
    # with AVX-512, blocks of 16 within (-4, 4) or [7, inf) take Phi(-|x|) and the density
    # from piecewise tables (within 3 ulp); the others, the scalar kernel (within 8)
    table = et._C._cpu_capability() == "avx512"
    x = np.linspace(-4.0, 4.0, 160_001)[1:-1].astype(np.float32)
    gelu, derivative = _gelu_parts64(x)
    assert _ulps(et.gelu(et.tensor(x)).numpy(), gelu.astype(np.float32)) <= (3 if table else 8)
    g = np.random.default_rng(5).standard_normal(x.size).astype(np.float32)
    got = et.gelu_backward(et.tensor(g), et.tensor(x)).numpy()
    scale = np.abs(g) * (1.0 + np.abs(x) * np.exp(-0.5 * x.astype(np.float64) ** 2))
    assert np.max(np.abs(got - g * derivative) / scale) < 3e-7
    # from 7 on gelu(x) = x and gelu'(x) = 1 in float; inf as the scalar kernel
    big = np.concatenate([np.geomspace(7.0, 3e38, 61), [np.inf] * 3]).astype(np.float32)
    np.testing.assert_array_equal(et.gelu(et.tensor(big)).numpy(), big)
    grad = et.gelu_backward(et.tensor(np.full(64, 0.5, np.float32)), et.tensor(big)).numpy()
    np.testing.assert_array_equal(grad[:61], np.full(61, 0.5, np.float32))
    assert np.isnan(grad[61:]).all()
    # a block holding one element out of the tables' range runs the scalar kernel whole:
    # the same values within the kernels' accuracy
    mixed = x.copy()
    mixed[::16] = -20.0
    rest = np.ones(x.size, bool)
    rest[::16] = False
    got = et.gelu(et.tensor(mixed)).numpy()
    assert _ulps(got[rest], gelu[rest].astype(np.float32)) <= 8
    assert (got[~rest] == 0).all()
    # ragged ends (masked loads and stores), and in place
    for n in (1, 15, 16, 17, 33):
        ends = x[-n:]
        assert _ulps(et.gelu(et.tensor(ends)).numpy(), gelu[-n:].astype(np.float32)) <= (
            3 if table else 8)
    inplace = et.tensor(x[:100])
    et.gelu(inplace, out=inplace)
    np.testing.assert_array_equal(inplace.numpy(), et.gelu(et.tensor(x[:100])).numpy())


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_float32_gelu_backward_follows_float64(approximate):
    x = np.linspace(-12.0, 8.0, 20_001)
    g = np.random.default_rng(3).standard_normal(x.size)
    want = et.gelu_backward(et.tensor(g), et.tensor(x), approximate=approximate).numpy()
    got = et.gelu_backward(et.tensor(g, dtype=et.float32), et.tensor(x, dtype=et.float32),
                           approximate=approximate).numpy()
    # absolute error against the size of the terms: gelu' = Phi + x phi crosses 0 near -0.75;
    # the tanh form's 1 - tanh^2 cancels, times a factor growing as x^3 (PyTorch's too)
    grow = np.exp(-0.5 * x * x) if approximate == "none" else 0.1 * x * x
    scale = np.abs(g) * (1.0 + np.abs(x) * grow)
    assert np.max(np.abs(got - want) / scale) < 4e-7


def _float32_sweep(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    mant = 1.0 + rng.random(200_000)
    return (mant * np.exp2(rng.integers(-149, 127, mant.size))).astype(np.float32)


@pytest.mark.parametrize("name,limit", [("log", 2), ("log2", 3), ("log10", 3.5), ("log1p", 1)])
def test_float32_logarithms_within_a_few_ulp(name, limit):
    x = np.concatenate([_float32_sweep(4), np.linspace(-0.999, 2.0, 20_001, dtype=np.float32),
                        np.float32([1.0, 2.0, 8.0, 0.5, 1e-30, 1.4e-45])])
    if name != "log1p":
        x = x[x > 0]
    want = getattr(np, name)(x.astype(np.float64)).astype(np.float32)
    assert _ulps(getattr(et, name)(et.tensor(x)).numpy(), want) <= limit
    if name == "log2":  # exact at powers of two
        assert et.log2(et.tensor(np.float32([0.25, 1.0, 1024.0]))).tolist() == [-2.0, 0.0, 10.0]


@pytest.mark.parametrize("name", ["log", "log2", "log10", "log1p"])
def test_float32_logarithm_edges(name):
    x = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -2.0, 1.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        want = getattr(np, name)(x)
    got = getattr(et, name)(et.tensor(x)).numpy()
    np.testing.assert_array_equal(got, want)
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))  # log1p(-0)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_float32_sin_cos_within_a_few_ulp_at_every_scale(name):
    x = np.concatenate([_float32_sweep(5), -_float32_sweep(6), np.float32([1e-30, 3.0e38])])
    want = getattr(np, name)(x.astype(np.float64))
    got = getattr(et, name)(et.tensor(x)).numpy()
    # ulps of the float32 result, but not finer than float32's smallest normal spacing
    spacing = np.maximum(np.spacing(np.abs(want.astype(np.float32))), 2.0 ** -149)
    assert float(np.max(np.abs(got - want) / spacing)) <= 3
    edges = et.tensor(np.float32([np.inf, -np.inf, np.nan]))
    assert np.isnan(getattr(et, name)(edges).numpy()).all()


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_float32_sin_cos_fast_reduction_near_multiples_of_half_pi(name):
    # below 2^20 whole blocks take the Cody-Waite reduction: the floats nearest to (and next
    # to) k pi / 2 are where it would lose digits
    k = np.arange(1, 667_000, dtype=np.float64)
    m = (k * np.pi / 2).astype(np.float32)
    x = np.concatenate([m, np.nextafter(m, np.float32(np.inf)), np.nextafter(m, np.float32(0)), -m])
    x = x[np.abs(x) < 2**20]
    want = getattr(np, name)(x.astype(np.float64))
    got = getattr(et, name)(et.from_numpy(x)).numpy()
    spacing = np.maximum(np.spacing(np.abs(want.astype(np.float32))), 2.0**-149)
    assert float(np.max(np.abs(got - want) / spacing)) <= 3


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_float32_sin_cos_blocks_with_a_large_value_in_place(name):
    # one value beyond the fast range sends its block to the exact reduction; in place, the
    # block's inputs are read before they are overwritten
    x = np.random.default_rng(4).uniform(-100, 100, 5_000).astype(np.float32)
    x[[7, 300, 4_999]] = [3.0e38, -1.5e7, np.inf]
    with np.errstate(invalid="ignore"):
        want = getattr(np, name)(x.astype(np.float64))
    t = et.from_numpy(x.copy())
    getattr(t, name + "_")()
    got = t.numpy()
    finite = np.isfinite(want)
    spacing = np.maximum(np.spacing(np.abs(want[finite].astype(np.float32))), 2.0**-149)
    assert float(np.max(np.abs(got[finite] - want[finite]) / spacing)) <= 3
    assert np.isnan(got[4_999])
    np.testing.assert_array_equal(got, getattr(et, name)(et.from_numpy(x)).numpy())


def test_float32_erfinv_central_blocks_match_the_full_kernel():
    # blocks wholly inside |y| < 0.999 skip the tail series: the same values as blocks that
    # evaluate every piece, and within float32 rounding of SciPy's float64 erfinv
    import scipy.special
    y = np.random.default_rng(5).uniform(-0.9989, 0.9989, 1 << 14).astype(np.float32)
    central = et.erfinv(et.from_numpy(y)).numpy()
    mixed = y.copy()
    mixed[::256] = np.float32(0.99995)  # one tail value in every block
    full = et.erfinv(et.from_numpy(mixed)).numpy()
    keep = np.ones(y.shape, bool)
    keep[::256] = False
    np.testing.assert_array_equal(central[keep], full[keep])
    for got, x in ((full, mixed), (central, y)):
        want = scipy.special.erfinv(x.astype(np.float64))
        assert _ulps(got, want.astype(np.float32)) <= 4


@pytest.mark.parametrize("dtype,cut", [(np.float32, -104.0), (np.float64, -746.0)])
def test_exp_zero_below_the_underflow_cut_and_denormals_above(dtype, cut):
    # below the cut the kernel returns 0 without computing through denormals; just above
    # it the results are the denormals NumPy gives (within an ulp of the denormal spacing)
    x = np.linspace(cut - 50, cut + 20, 20_001)
    x = np.concatenate([x, [-np.inf, cut - 1e-3]]).astype(dtype)
    want = np.exp(x)
    got = et.exp(et.from_numpy(x)).numpy()
    assert np.all(got[x < cut] == 0) and not np.signbit(got[x < cut]).any()
    tiny = np.finfo(dtype).smallest_subnormal
    spacing = np.maximum(np.spacing(want), tiny)
    assert float(np.max(np.abs(got.astype(np.float64) - want) / spacing)) <= 2


# ---- the vectorised kernels of expm1, sinh, cosh, the double logarithms and trigonometric
# functions, float tan / atan / asin / acos and float sigmoid ----

def _sweep(dtype, seed: int, lo: int, hi: int, n: int = 100_000) -> np.ndarray:
    """Random mantissas at every power of two in [2^lo, 2^hi), both signs."""
    rng = np.random.default_rng(seed)
    x = (1.0 + rng.random(n)) * np.exp2(rng.integers(lo, hi, n).astype(np.float64))
    return (x * np.where(rng.random(n) < 0.5, -1.0, 1.0)).astype(dtype)


def _ulps_of(got, want, dtype) -> float:
    """Largest error in ulps of `dtype` (not finer than its smallest subnormal spacing)."""
    want = np.asarray(want, dtype=np.float64)
    with np.errstate(over="ignore"):
        rounded = want.astype(dtype)
    finite = np.isfinite(rounded)
    spacing = np.maximum(np.spacing(np.abs(rounded)).astype(np.float64),
                         np.finfo(dtype).smallest_subnormal)
    err = np.abs(got.astype(np.float64) - want)[finite] / spacing[finite]
    return float(np.max(err))


REFERENCES = {"exp2": np.exp2, "expm1": np.expm1, "sinh": np.sinh, "cosh": np.cosh,
              "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sin": np.sin,
              "cos": np.cos, "tan": np.tan, "atan": np.arctan, "asin": np.arcsin,
              "acos": np.arccos, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
              "erf": np.vectorize(math.erf, otypes=[np.float64]),
              "erfc": np.vectorize(math.erfc, otypes=[np.float64])}

# name, dtype, exponent range of the sweep, ulp limit (NumPy's float64 functions are within
# an ulp themselves: float64 limits count theirs too)
ACCURACY_CASES = [
    ("exp2", np.float64, (-1074, 11), 1), ("exp2", np.float32, (-149, 8), 1),
    ("expm1", np.float64, (-1074, 10), 2), ("expm1", np.float32, (-149, 7), 2),
    ("sinh", np.float64, (-1074, 10), 3), ("sinh", np.float32, (-149, 7), 4),
    ("cosh", np.float64, (-1074, 10), 2), ("cosh", np.float32, (-149, 7), 3),
    ("log", np.float64, (-1074, 1024), 2), ("log2", np.float64, (-1074, 1024), 2),
    ("log10", np.float64, (-1074, 1024), 2), ("log1p", np.float64, (-60, 1000), 2),
    ("sin", np.float64, (-1074, 30), 1), ("cos", np.float64, (-1074, 30), 1),
    ("tan", np.float64, (-1074, 30), 2), ("tan", np.float32, (-149, 30), 4),
    ("atan", np.float32, (-149, 127), 2), ("asin", np.float32, (-149, 0), 3),
    ("acos", np.float32, (-149, 0), 2), ("atan", np.float64, (-1074, 1024), 2),
    ("asin", np.float64, (-1074, 0), 3), ("acos", np.float64, (-1074, 0), 3),
    ("asinh", np.float32, (-149, 127), 3), ("asinh", np.float64, (-1074, 1024), 3),
    ("acosh", np.float32, (-30, 127), 3), ("acosh", np.float64, (-60, 1024), 3),
    ("atanh", np.float32, (-149, 0), 3), ("atanh", np.float64, (-1074, 0), 3),
    ("erf", np.float64, (-1074, 3), 2), ("erfc", np.float64, (-1074, 5), 4),
]


@pytest.mark.parametrize("name,dtype,exponents,limit", ACCURACY_CASES)
def test_vectorised_functions_within_a_few_ulp(name, dtype, exponents, limit):
    x = _sweep(dtype, 11, *exponents)
    if name in ("log", "log2", "log10"):
        x = np.abs(x)
    if name == "log1p":  # (-1, 0) densely near -1 and 0, and every positive scale
        x = np.where(x < 0, np.maximum(x, -1.0) * 0.999, x).astype(dtype)
    if name == "acosh":  # [1, inf), densely near 1
        x = (1.0 + np.abs(x.astype(np.float64))).astype(dtype)
    if name == "atanh":  # (-1, 1), densely near +-1 and 0
        x = (x.astype(np.float64) * 0.4999).astype(dtype)
    with np.errstate(over="ignore"):
        want = REFERENCES[name](x.astype(np.float64))
    got = getattr(et, name)(et.from_numpy(x)).numpy()
    assert _ulps_of(got, want, dtype) <= limit
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want.astype(dtype)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_vectorised_functions_at_the_edges(name, dtype):
    fmax = float(np.finfo(dtype).max)
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-30,
                  -1e-30, 88.5, -89.2, 710.0, -709.5, 1e300, fmax, 1e-310], dtype=np.float64)
    with np.errstate(over="ignore"):
        x = x.astype(dtype)
    with np.errstate(all="ignore"):
        want = REFERENCES[name](x.astype(np.float64)).astype(dtype)
        got = getattr(et, name)(et.from_numpy(x)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got) & (got > 0), np.isinf(want) & (want > 0))
    np.testing.assert_array_equal(np.isinf(got) & (got < 0), np.isinf(want) & (want < 0))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=4 * np.finfo(dtype).eps,
                               atol=2 * np.finfo(dtype).smallest_subnormal)
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))


def test_float64_ndtr_and_gelu_keep_their_relative_precision_in_the_negative_tail():
    # Phi(x) = exp(-x^2 / 2) erfcx(-x / sqrt 2) / 2 with x^2 split exactly: a few ulp of the
    # 40-digit value down to the subnormal results (SciPy's ndtr and PyTorch's gelu round
    # x / sqrt 2 first and lose up to 1e-13 relative there)
    rng = np.random.default_rng(5)
    x = np.concatenate([np.linspace(-38.4, 9.0, 2001), rng.uniform(-8, 8, 1000),
                        _sweep(np.float64, 6, -1074, 5, 1000)])
    x = x[x > -38.4]
    with mpmath.workdps(40):
        v = [mpmath.mpf(float(t)) for t in x]
        cdf = [mpmath.ncdf(t) for t in v]
        term = [t * mpmath.npdf(t) for t in v]  # x phi(x)
        phi = np.array([float(c) for c in cdf])
        gelu = np.array([float(t * c) for t, c in zip(v, cdf)])
        grad = np.array([float(c + d) for c, d in zip(cdf, term)])
        scale = np.array([float(c + abs(d)) for c, d in zip(cdf, term)])
    assert _ulps_of(et.special_ndtr(et.tensor(x)).numpy(), phi, np.float64) <= 4
    normal = np.abs(gelu) >= np.finfo(np.float64).tiny  # (subnormal below x = -37.5)
    assert _ulps_of(et.gelu(et.tensor(x)).numpy()[normal], gelu[normal], np.float64) <= 4
    # gelu' = Phi + x phi crosses 0 near -0.75: its error against the size of the terms
    got = et.gelu_backward(et.ones(x.size, dtype=et.float64), et.tensor(x)).numpy()
    eps, tiny = np.finfo(np.float64).eps, np.finfo(np.float64).tiny
    big = scale * eps >= tiny  # (where the terms' ulp is subnormal, the test's measure fails)
    assert np.max(np.abs(got - grad)[big] / (scale[big] * eps)) <= 6
    edges = et.tensor([-np.inf, np.inf, np.nan, -40.0, -1e300, 0.0, -0.0], dtype=et.float64)
    np.testing.assert_array_equal(et.gelu(edges).numpy(),
                                  [np.nan, np.inf, np.nan, -0.0, -0.0, 0.0, -0.0])
    assert np.signbit(et.gelu(edges).numpy()[3:5]).all()
    np.testing.assert_array_equal(et.special_ndtr(edges).numpy(),
                                  [0.0, 1.0, np.nan, 0.0, 0.0, 0.5, 0.5])


def test_float64_trig_beyond_the_fast_range_and_near_multiples_of_half_pi():
    # below 2^24 whole blocks take the Cody-Waite reduction (doubles next to k pi / 2 are where
    # it would lose digits); a block with a larger value takes the C library's
    k = np.arange(1, 200_000, dtype=np.float64)
    m = k * (np.pi / 2)
    x = np.concatenate([m, np.nextafter(m, np.inf), np.nextafter(m, 0), -m])
    for name in ("sin", "cos", "tan"):
        got = getattr(et, name)(et.from_numpy(x)).numpy()
        want = REFERENCES[name](x)
        assert _ulps_of(got, want, np.float64) <= 2
    big = np.random.default_rng(5).uniform(-100, 100, 3_000)
    big[[5, 1_000, 2_999]] = [1e22, -3.0e8, np.inf]
    with np.errstate(invalid="ignore"):
        for name in ("sin", "cos", "tan"):
            t = et.from_numpy(big.copy())
            getattr(t, name + "_")()  # in place: the block's inputs are read first
            want = REFERENCES[name](big)
            assert _ulps_of(t.numpy(), want, np.float64) <= 2
            np.testing.assert_array_equal(np.isnan(t.numpy()), np.isnan(want))


def test_float32_sigmoid_within_a_few_ulp_and_zero_below_the_normal_range():
    x = np.concatenate([_sweep(np.float32, 12, -149, 7), np.float32([87.0, -87.0, 100.0])])
    want = 1.0 / (1.0 + np.exp(-x.astype(np.float64)))
    got = et.sigmoid(et.from_numpy(x)).numpy()
    normal = want >= np.finfo(np.float32).tiny
    assert _ulps_of(got[normal], want[normal], np.float32) <= 3
    # below -87.34 the result would be subnormal: 0, as PyTorch's kernel gives
    edges = et.sigmoid(et.tensor([-88.0, -1e30, -np.inf, np.inf, np.nan], dtype=et.float32))
    got_edges = edges.tolist()
    assert got_edges[:4] == [0.0, 0.0, 0.0, 1.0] and math.isnan(got_edges[4])
