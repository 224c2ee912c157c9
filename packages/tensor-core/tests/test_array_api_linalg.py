"""ember_tensor.array_api: the main namespace's linear algebra functions (matmul,
matrix_transpose, tensordot, vecdot) and the linalg extension (``xp.linalg``), against
NumPy 2 (numpy.linalg, whose 2.x functions follow the standard: matrix_norm, vector_norm,
vecdot, matrix_transpose, svdvals, outer, trace, cross, tensordot, diagonal) as the
reference and array-api-strict for the signatures.

Inputs are rounded to the tested dtype first and the reference is computed in float64 from
the rounded values, so float32 results are compared with tolerances scaled for the
conditioning of the operation (the matrices are built well-conditioned where the operation
needs it). Factorizations that are unique only up to signs (eigh, qr, svd) are checked
through their defining identities and their unique parts. Errors are checked by type and
message.
"""

from __future__ import annotations

import inspect
import math
import warnings

import array_api_strict
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember_tensor as et
from conftest import IS_TORCH, assert_close, round_to, tensor, to_np

xp = pytest.importorskip("ember_tensor.array_api")

pytestmark = pytest.mark.skipif(IS_TORCH, reason="the array API namespace is ember's own")

FLOATS = ["float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8"]
NUMERIC = FLOATS + INTS
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

MAIN = ["matmul", "matrix_transpose", "tensordot", "vecdot"]
LINALG = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
          "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv",
          "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
          "vector_norm"]
# the functions the standard defines for floating-point input only
FLOATING_ONLY = ["cholesky", "det", "eigh", "eigvalsh", "inv", "matrix_norm", "matrix_rank",
                 "pinv", "qr", "slogdet", "svd", "svdvals", "vector_norm"]
SQUARE_ONLY = ["cholesky", "det", "eigh", "eigvalsh", "inv", "slogdet"]


def arr(a, name=None, layout="contig"):
    """An ember tensor holding the NumPy array a as dtype `name` (values rounded to it)."""
    a = np.asarray(a)
    if name is not None:
        a = round_to(a, name)
    return tensor(et, a, name, layout)


def rounded(a, name):
    """a as the float64 values that dtype `name` holds (what the reference computes on)."""
    return round_to(np.asarray(a), name).astype(np.float64)


def check(out, expected, name, scale=1.0, atol=None):
    """out (an ember tensor) has expected's shape and values and dtype `name`. For float32
    the tolerance is conftest's scaled by `scale`; atol defaults to it times the largest
    magnitude in expected (errors of matrix operations scale with the matrix's norm)."""
    assert isinstance(out, et.Tensor), type(out)
    expected = np.asarray(expected)
    if atol is None and name in FLOATS and expected.size:
        big = float(np.max(np.abs(expected[np.isfinite(expected)]), initial=1.0))
        atol = (1e-12 if name == "float64" else 1e-6) * scale * max(big, 1.0)
    assert_close(out, expected, name, scale=scale, atol=atol)


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def T(a):
    return np.swapaxes(a, -1, -2)


# scale of float32 tolerances (rtol 2e-5 * SCALE) for the decompositions of the
# well-conditioned matrices below
SCALE = {"float32": 50.0, "float64": 50.0}


# ---------------------------------------------------------------------------------------------
# strategies


def values(shape, lo=-4.0, hi=4.0):
    return hnp.arrays(np.float64, shape, elements=st.floats(lo, hi, allow_nan=False,
                                                            allow_subnormal=False))


batches = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)
small_batches = hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)
floats = st.sampled_from(FLOATS)
numerics = st.sampled_from(NUMERIC)


def spd(a):
    """A symmetric positive-definite matrix (eigenvalues in [n, n + |a|^2]) from a."""
    n = a.shape[-1]
    return a @ T(a) + n * np.eye(n)


def dominant(a):
    """A well-conditioned non-singular matrix: a made strictly diagonally dominant."""
    n = a.shape[-1]
    d = np.abs(a).sum(-1) + 1.0
    return a + d[..., None] * np.eye(n)


@st.composite
def stacks(draw, min_n=0, max_n=4, square=True, batch=batches):
    """(batch + (m, n)) arrays of float64 values."""
    b = draw(batch)
    m = draw(st.integers(min_n, max_n))
    n = m if square else draw(st.integers(min_n, max_n))
    return draw(values(b + (m, n)))


@st.composite
def conditioned(draw, min_n=1, max_n=5, batch=small_batches, lo=0.5, hi=4.0):
    """Matrices (batch + (m, n)) with singular values in [lo, hi] and random singular
    vectors (from the QR factors of hypothesis-drawn values)."""
    b = draw(batch)
    m = draw(st.integers(min_n, max_n))
    n = draw(st.integers(min_n, max_n))
    k = min(m, n)
    g1 = draw(values(b + (m, m)))
    g2 = draw(values(b + (n, n)))
    s = draw(values(b + (k,), lo, hi))
    u = np.linalg.qr(dominant(g1))[0][..., :, :k]
    v = np.linalg.qr(dominant(g2))[0][..., :, :k]
    return (u * s[..., None, :]) @ T(v)


# ---------------------------------------------------------------------------------------------
# the namespace

FFT = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
       "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def test_linalg_and_fft_extensions_present():
    assert inspect.ismodule(xp.linalg)
    assert sorted(xp.linalg.__all__) == sorted(LINALG)
    for name in LINALG:
        assert callable(getattr(xp.linalg, name)), name
        assert getattr(xp.linalg, name).__doc__, name
    for name in MAIN:
        assert name in xp.__all__
        assert getattr(xp.linalg, name) is getattr(xp, name)
    assert inspect.ismodule(xp.fft)
    assert sorted(xp.fft.__all__) == sorted(FFT)
    assert et.tensor([1.0]).__array_namespace__().fft is xp.fft
    assert xp.__array_namespace_info__().capabilities() == {
        "boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}
    assert et.tensor([1.0]).__array_namespace__().linalg is xp.linalg


def test_linalg_error_is_the_core_one():
    assert xp.linalg.LinAlgError is et.linalg.LinAlgError
    assert issubclass(xp.linalg.LinAlgError, RuntimeError)


@pytest.fixture
def strict():
    with array_api_strict.ArrayAPIStrictFlags(api_version="2024.12"):
        yield array_api_strict


@pytest.mark.parametrize("name", [f"xp.{n}" for n in MAIN] + [f"linalg.{n}" for n in LINALG])
def test_signature_matches_the_standard(strict, name):
    """Parameter names, kinds (positional-only, keyword-only) and defaults as in
    array-api-strict."""
    where, fn = name.split(".")
    ours = getattr(xp if where == "xp" else xp.linalg, fn)
    ref = getattr(strict if where == "xp" else strict.linalg, fn)
    p_ours = list(inspect.signature(ours).parameters.values())
    p_ref = list(inspect.signature(ref).parameters.values())
    assert [(p.name, p.kind) for p in p_ours] == [(p.name, p.kind) for p in p_ref]
    for p, q in zip(p_ours, p_ref):
        assert p.default == q.default, (name, p.name)


SIGNATURES = {
    "vector_norm": "(x, /, *, axis=None, keepdims=False, ord=2)",
    "matrix_norm": "(x, /, *, keepdims=False, ord='fro')",
    "matrix_rank": "(x, /, *, rtol=None)",
    "pinv": "(x, /, *, rtol=None)",
    "trace": "(x, /, *, offset=0, dtype=None)",
    "solve": "(x1, x2, /)",
    "qr": "(x, /, *, mode='reduced')",
    "svd": "(x, /, *, full_matrices=True)",
    "cholesky": "(x, /, *, upper=False)",
    "matrix_power": "(x, n, /)",
    "cross": "(x1, x2, /, *, axis=-1)",
    "vecdot": "(x1, x2, /, *, axis=-1)",
    "tensordot": "(x1, x2, /, *, axes=2)",
    "diagonal": "(x, /, *, offset=0)",
    "outer": "(x1, x2, /)",
}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signature_text(name):
    assert str(inspect.signature(getattr(xp.linalg, name))) == SIGNATURES[name]


def test_keyword_only_and_positional_only_are_enforced():
    x = arr(np.eye(3), "float64")
    with pytest.raises(TypeError):
        xp.linalg.vector_norm(x, None)  # axis is keyword-only
    with pytest.raises(TypeError):
        xp.linalg.det(x=x)  # x is positional-only
    with pytest.raises(TypeError):
        xp.linalg.qr(x, "complete")
    with pytest.raises(TypeError):
        xp.tensordot(x, x, 1)
    with pytest.raises(TypeError):
        xp.linalg.matrix_power(x, n=2)


# ---------------------------------------------------------------------------------------------
# matmul


def int_values(shape, name):
    """Small integers of dtype `name` (products and sums of a few stay in range)."""
    lo = 0 if name == "uint8" else -3
    return hnp.arrays(np.dtype(name), shape, elements=st.integers(lo, 3))


def draw_pair(data, s1, s2, name):
    """Two arrays of shapes s1 and s2 holding values of dtype `name`."""
    if name in FLOATS:
        return rounded(data.draw(values(s1)), name), rounded(data.draw(values(s2)), name)
    return data.draw(int_values(s1, name)), data.draw(int_values(s2, name))


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(signature=np.matmul.signature, max_dims=3,
                                                 min_side=0, max_side=4),
       name=numerics, data=st.data())
def test_matmul(shapes, name, data):
    (s1, s2), _ = shapes.input_shapes, shapes.result_shape
    a, b = draw_pair(data, s1, s2, name)
    out = xp.matmul(arr(a, name), arr(b, name))
    want = np.matmul(a, b)
    check(out, want, name, scale=10.0)
    assert xp.linalg.matmul(arr(a, name), arr(b, name)).shape == want.shape


@pytest.mark.parametrize("layout", ["transposed", "stepped"])
def test_matmul_layouts(rng, layout):
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    check(xp.matmul(arr(a, "float64", layout), arr(b, "float64", layout)), a @ b, "float64")


# name -> (shapes of x1 and x2, our function, NumPy's)
TWO_ARGS = {
    "matmul": (((2, 3), (3, 3)), xp.linalg.matmul, np.matmul),
    "tensordot": (((2, 3), (3, 3)), lambda a, b: xp.linalg.tensordot(a, b, axes=1),
                  lambda a, b: np.tensordot(a, b, axes=1)),
    "vecdot": (((2, 3), (3,)), xp.linalg.vecdot, np.linalg.vecdot),
    "outer": (((3,), (3,)), xp.linalg.outer, np.linalg.outer),
    "cross": (((2, 3), (3,)), xp.linalg.cross, np.linalg.cross),
}


@pytest.mark.parametrize("n1,n2,want", [
    ("float32", "float64", "float64"), ("float64", "float32", "float64"),
    ("int8", "uint8", "int16"), ("uint8", "int32", "int32"), ("int16", "int64", "int64"),
    ("float32", "int32", None), ("int8", "float64", None), ("bool", "bool", None),
    ("bool", "int8", None), ("float16", "float32", "float32"),
])
@pytest.mark.parametrize("fn", sorted(TWO_ARGS))
def test_two_argument_promotion(fn, n1, n2, want, rng):
    shapes, f, ref = TWO_ARGS[fn]
    a = rng.integers(0, 3, size=shapes[0]).astype(np.float64)
    b = rng.integers(0, 3, size=shapes[1]).astype(np.float64)
    x1, x2 = arr(a, n1), arr(b, n2)
    if want is None:
        with pytest.raises(TypeError):
            f(x1, x2)
        return
    check(f(x1, x2), ref(a, b), want)


def test_matmul_errors():
    x = arr(np.ones((2, 3)), "float32")
    with pytest.raises(ValueError, match="at least one dimension"):
        xp.matmul(arr(np.float32(1.0), "float32"), x)
    with pytest.raises(ValueError, match=r"last axis of x1 \(size 3\) must match the "
                                         r"second-to-last axis of x2 \(size 2\)"):
        xp.matmul(x, x)
    with pytest.raises(ValueError, match="only axis of x2"):
        xp.matmul(x, arr(np.ones(2), "float32"))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        xp.matmul(arr(np.ones((2, 2, 3)), "float32"), arr(np.ones((3, 3, 1)), "float32"))
    with pytest.raises(TypeError, match="x1 must have a numeric data type, got bool"):
        xp.matmul(arr(np.ones((2, 2), bool), "bool"), x)
    with pytest.raises(TypeError, match="cannot be promoted"):
        xp.matmul(x, arr(np.ones((3, 1)), "int32"))
    with pytest.raises(TypeError, match="must be an array"):
        xp.matmul(np.ones((2, 3)), x)


# ---------------------------------------------------------------------------------------------
# matrix_transpose


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=2, max_dims=4, min_side=0, max_side=4),
       name=st.sampled_from(NUMERIC + ["bool"]))
def test_matrix_transpose(shape, name):
    a = (np.arange(int(np.prod(shape))).reshape(shape) % 7).astype(
        np.bool_ if name == "bool" else name)
    x = arr(a, name)
    out = xp.matrix_transpose(x)
    check(out, np.linalg.matrix_transpose(a), name)
    assert xp.linalg.matrix_transpose(x).shape == out.shape


def test_matrix_transpose_errors():
    with pytest.raises(ValueError, match="at least two dimensions"):
        xp.matrix_transpose(arr(np.ones(3), "float32"))
    with pytest.raises(TypeError, match="must be an array"):
        xp.matrix_transpose([[1.0]])


# ---------------------------------------------------------------------------------------------
# tensordot


@st.composite
def tensordot_case(draw):
    """(shape1, shape2, axes) with axes an int or a pair of sequences."""
    free1 = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    free2 = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    shared = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    k = len(shared)
    if draw(st.booleans()):
        return free1 + shared, shared + free2, k
    # the contracted axes scattered among the free ones, in some order, maybe negative
    n1, n2 = len(free1) + k, len(free2) + k
    pos1 = draw(st.permutations(range(n1)))[:k]
    pos2 = draw(st.permutations(range(n2)))[:k]
    s1, s2 = [None] * n1, [None] * n2
    for p, q, s in zip(pos1, pos2, shared):
        s1[p], s2[q] = s, s
    it1, it2 = iter(free1), iter(free2)
    s1 = tuple(next(it1) if v is None else v for v in s1)
    s2 = tuple(next(it2) if v is None else v for v in s2)
    neg = draw(st.booleans())
    ax1 = [p - n1 if neg else p for p in pos1]
    ax2 = [q - n2 if neg else q for q in pos2]
    seq = draw(st.sampled_from([tuple, list]))
    return s1, s2, (seq(ax1), seq(ax2))


@SETTINGS
@given(case=tensordot_case(), name=numerics, data=st.data())
def test_tensordot(case, name, data):
    s1, s2, axes = case
    a, b = draw_pair(data, s1, s2, name)
    want = np.tensordot(a, b, axes=axes)
    out = xp.tensordot(arr(a, name), arr(b, name), axes=axes)
    check(out, want, name, scale=10.0)


def test_tensordot_default_and_errors(rng):
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 4, 5))
    x1, x2 = arr(a, "float64"), arr(b, "float64")
    check(xp.tensordot(x1, x2), np.tensordot(a, b), "float64")
    check(xp.tensordot(x1, x2, axes=0), np.tensordot(a, b, axes=0), "float64")
    with pytest.raises(ValueError, match="must be non-negative"):
        xp.tensordot(x1, x2, axes=-1)
    with pytest.raises(ValueError, match="cannot contract 4 axes"):
        xp.tensordot(x1, x2, axes=4)
    with pytest.raises(ValueError, match=r"contracted axis 2 of x1 \(size 4\) does not match"):
        xp.tensordot(x1, x2, axes=1)
    with pytest.raises(ValueError, match="same length"):
        xp.tensordot(x1, x2, axes=([1, 2], [0]))
    with pytest.raises(ValueError, match="repeated axis"):
        xp.tensordot(x1, x2, axes=([1, 1], [0, 0]))
    with pytest.raises(ValueError, match="pair of sequences"):
        xp.tensordot(x1, x2, axes=([1], [0], [2]))
    with pytest.raises(IndexError, match="out of bounds"):
        xp.tensordot(x1, x2, axes=([3], [0]))
    with pytest.raises(TypeError, match="must be an int"):
        xp.tensordot(x1, x2, axes=1.0)
    with pytest.raises(TypeError, match="sequence of ints"):
        xp.tensordot(x1, x2, axes=(1, 0))
    # contracted axes do not broadcast
    with pytest.raises(ValueError, match="does not match"):
        xp.tensordot(arr(np.ones((2, 1)), "float64"), arr(np.ones((3, 2)), "float64"), axes=1)


# ---------------------------------------------------------------------------------------------
# vecdot


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(signature="(n),(n)->()", max_dims=3,
                                                 min_side=0, max_side=4),
       name=numerics, data=st.data())
def test_vecdot(shapes, name, data):
    s1, s2 = shapes.input_shapes
    # move the vector axis somewhere else, named by a negative axis within both ranks
    nd = min(len(s1), len(s2))
    axis = data.draw(st.integers(-nd, -1))
    a, b = draw_pair(data, s1, s2, name)
    a, b = np.moveaxis(a, -1, axis), np.moveaxis(b, -1, axis)
    want = np.linalg.vecdot(a, b, axis=axis)
    out = xp.vecdot(arr(a, name), arr(b, name), axis=axis)
    check(out, want, name, scale=10.0)
    check(xp.linalg.vecdot(arr(a, name), arr(b, name), axis=axis), want, name, scale=10.0)


def test_vecdot_non_negative_axis_and_errors(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    x1, x2 = arr(a, "float64"), arr(b, "float64")
    check(xp.vecdot(x1, x2, axis=0), np.linalg.vecdot(a, b, axis=0), "float64")
    check(xp.vecdot(x1, x2, axis=1), np.linalg.vecdot(a, b, axis=1), "float64")
    with pytest.raises(ValueError, match="same size along axis -1"):
        xp.vecdot(x1, arr(np.ones(3), "float64"))
    # the vector axis does not broadcast
    with pytest.raises(ValueError, match="same size along axis -1, got 4 and 1"):
        xp.vecdot(x1, arr(np.ones((3, 1)), "float64"))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        xp.vecdot(x1, arr(np.ones((2, 4)), "float64"))
    with pytest.raises(IndexError, match="axis -2 is out of bounds for x2 of dimension 1"):
        xp.vecdot(x1, arr(np.ones(3), "float64"), axis=-2)
    with pytest.raises(ValueError, match="at least one dimension"):
        xp.vecdot(arr(np.float64(1.0), "float64"), x1)
    with pytest.raises(TypeError, match="axis must be an int"):
        xp.vecdot(x1, x2, axis=None)


# ---------------------------------------------------------------------------------------------
# decompositions


@SETTINGS
@given(a=stacks(max_n=5), name=floats, upper=st.booleans())
def test_cholesky(a, name, upper):
    s = rounded(spd(a), name)
    out = xp.linalg.cholesky(arr(s, name), upper=upper)
    want = np.linalg.cholesky(s, upper=upper)
    check(out, want, name, scale=SCALE[name])


@SETTINGS
@given(a=stacks(max_n=5), name=floats)
def test_det_slogdet_inv(a, name):
    g = rounded(dominant(a), name)
    x = arr(g, name)
    check(xp.linalg.det(x), np.linalg.det(g), name, scale=SCALE[name])
    sign, logabsdet = xp.linalg.slogdet(x)
    want = np.linalg.slogdet(g)
    check(sign, want.sign, name)
    check(logabsdet, want.logabsdet, name, scale=SCALE[name], atol=1e-4)
    check(xp.linalg.inv(x), np.linalg.inv(g), name, scale=SCALE[name])


@pytest.mark.parametrize("name", FLOATS)
def test_singular_matrices(name):
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    x = arr(np.stack([s, np.eye(2)]), name)
    check(xp.linalg.det(x), [0.0, 1.0], name)
    sign, logabsdet = xp.linalg.slogdet(x)
    check(sign, [0.0, 1.0], name)
    check(logabsdet, [-np.inf, 0.0], name)
    with pytest.raises(xp.linalg.LinAlgError, match="singular"):
        xp.linalg.inv(x)
    with pytest.raises(xp.linalg.LinAlgError, match="singular"):
        xp.linalg.solve(x, arr(np.ones(2), name))
    with pytest.raises(xp.linalg.LinAlgError):
        xp.linalg.matrix_power(x, -1)
    with pytest.raises(xp.linalg.LinAlgError, match="positive-definite"):
        xp.linalg.cholesky(x)
    with pytest.raises(xp.linalg.LinAlgError):
        xp.linalg.svdvals(arr([[np.nan, 1.0], [1.0, 1.0]], name))
    # but rank and pseudo-inverse are fine
    check(xp.linalg.matrix_rank(x), [1, 2], "int64")
    check(xp.linalg.pinv(x), np.linalg.pinv(np.stack([s, np.eye(2)]), rtol=None), name,
          scale=10.0)


@SETTINGS
@given(a=stacks(max_n=5), name=floats)
def test_eigh_eigvalsh(a, name):
    s = rounded(a + T(a), name)
    x = arr(s, name)
    res = xp.linalg.eigh(x)
    assert type(res).__name__ == "EighResult" and res._fields == ("eigenvalues", "eigenvectors")
    w, v = res
    assert res.eigenvalues is w and res.eigenvectors is v
    want = np.linalg.eigvalsh(s)
    check(w, want, name, scale=SCALE[name])
    check(xp.linalg.eigvalsh(x), want, name, scale=SCALE[name])
    # A V = V diag(w), V orthonormal (eigenvectors are unique only up to sign/rotation)
    vn, wn = to_np(v).astype(np.float64), to_np(w).astype(np.float64)
    big = max(1.0, float(np.abs(s).max(initial=0.0)))
    tol = {"float32": 2e-4, "float64": 1e-10}[name]
    np.testing.assert_allclose(s @ vn, vn * wn[..., None, :], atol=tol * big * 10)
    n = s.shape[-1]
    np.testing.assert_allclose(T(vn) @ vn, np.broadcast_to(np.eye(n), vn.shape), atol=tol * 10)
    assert v.dtype == w.dtype == getattr(xp, name)


@SETTINGS
@given(a=stacks(max_n=5, square=False), name=floats, mode=st.sampled_from(["reduced",
                                                                           "complete"]))
def test_qr(a, name, mode):
    g = rounded(a, name)
    res = xp.linalg.qr(arr(g, name), mode=mode)
    assert type(res).__name__ == "QRResult" and res._fields == ("Q", "R")
    q, r = (to_np(t).astype(np.float64) for t in res)
    qn, rn = np.linalg.qr(g, mode=mode)
    assert q.shape == qn.shape and r.shape == rn.shape
    assert res.Q.dtype == res.R.dtype == getattr(xp, name)
    big = max(1.0, float(np.abs(g).max(initial=0.0)))
    tol = {"float32": 1e-4, "float64": 1e-11}[name]
    np.testing.assert_allclose(q @ r, g, atol=tol * big * 10)
    k = q.shape[-1]
    np.testing.assert_allclose(T(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)),
                               atol=tol * 10)
    assert np.all(np.tril(r, -1) == 0)


@SETTINGS
@given(a=conditioned(), name=floats)
def test_qr_is_numpys_up_to_signs(a, name):
    g = rounded(a, name)
    q, r = xp.linalg.qr(arr(g, name))
    qn, rn = np.linalg.qr(g)
    # Q and R are unique up to the signs of R's rows when A has full column rank
    m, n = g.shape[-2:]
    assume(m >= n)
    sr = np.sign(np.diagonal(to_np(r).astype(np.float64), axis1=-2, axis2=-1))
    sn = np.sign(np.diagonal(rn, axis1=-2, axis2=-1))
    flip = (sr * sn)[..., None]
    check(q, qn * T(flip), name, scale=SCALE[name])
    check(r, rn * flip, name, scale=SCALE[name])


@SETTINGS
@given(a=stacks(max_n=5, square=False), name=floats, full=st.booleans())
def test_svd_svdvals(a, name, full):
    g = rounded(a, name)
    x = arr(g, name)
    res = xp.linalg.svd(x, full_matrices=full)
    assert type(res).__name__ == "SVDResult" and res._fields == ("U", "S", "Vh")
    un, sn, vhn = np.linalg.svd(g, full_matrices=full)
    assert tuple(res.U.shape) == un.shape and tuple(res.Vh.shape) == vhn.shape
    check(res.S, sn, name, scale=SCALE[name])
    check(xp.linalg.svdvals(x), np.linalg.svdvals(g), name, scale=SCALE[name])
    u, s, vh = (to_np(t).astype(np.float64) for t in res)
    k = s.shape[-1]
    big = max(1.0, float(np.abs(g).max(initial=0.0)))
    tol = {"float32": 1e-4, "float64": 1e-11}[name]
    np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], g,
                               atol=tol * big * 10)
    for m in (u, T(vh)):
        c = m.shape[-1]
        np.testing.assert_allclose(T(m) @ m, np.broadcast_to(np.eye(c), m.shape[:-2] + (c, c)),
                                   atol=tol * 10)
    assert all(t.dtype == getattr(xp, name) for t in res)


# ---------------------------------------------------------------------------------------------
# solve


@st.composite
def solve_case(draw):
    """(x1 well-conditioned (b1 + (m, m)), x2 (m,) or (b2 + (m, k))) with b1, b2 broadcast
    compatible."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, min_side=0,
                                                    max_side=3))
    b1, b2 = shapes.input_shapes
    m = draw(st.integers(0, 4))
    a = dominant(draw(values(b1 + (m, m))))
    if draw(st.booleans()):
        b = draw(values((m,)))
    else:
        b = draw(values(b2 + (m, draw(st.integers(0, 3)))))
    return a, b


@SETTINGS
@given(case=solve_case(), n1=floats, n2=floats)
def test_solve(case, n1, n2):
    a, b = rounded(case[0], n1), rounded(case[1], n2)
    want = np.linalg.solve(a, b)  # NumPy 2 has the standard's rule for a 1-d x2
    if b.ndim == 1:
        assert want.shape == a.shape[:-1]
    out = xp.linalg.solve(arr(a, n1), arr(b, n2))
    res = "float64" if "float64" in (n1, n2) else "float32"
    check(out, want, res, scale=SCALE["float32"])


@pytest.mark.parametrize("name", FLOATS)
def test_solve_only_1d_x2_is_a_vector(name, rng):
    """x1 (3, 3, 3), x2 (3, 3): PyTorch reads x2 as 3 vectors (result (3, 3)); the
    standard as one matrix broadcast to the batch (result (3, 3, 3))."""
    a = dominant(rng.standard_normal((3, 3, 3)))
    b = rng.standard_normal((3, 3))
    a, b = rounded(a, name), rounded(b, name)
    out = xp.linalg.solve(arr(a, name), arr(b, name))
    assert tuple(out.shape) == (3, 3, 3)
    check(out, np.linalg.solve(a, b), name, scale=SCALE[name])
    # (2, 3, 3) with (2, 3): x2 is a 2x3 matrix, which does not fit 3x3 matrices
    with pytest.raises(ValueError, match="second-to-last axis must have size 3"):
        xp.linalg.solve(arr(a[:2], name), arr(b[:2], name))
    check(xp.linalg.solve(arr(a, name), arr(b[0], name)), np.linalg.solve(a, b[0]), name,
          scale=SCALE[name])


def test_solve_errors():
    x = arr(np.eye(3), "float64")
    with pytest.raises(TypeError,
                       match="x2 must have a (real )?floating-point data type, got int64"):
        xp.linalg.solve(x, arr(np.ones(3, np.int64), "int64"))
    with pytest.raises(TypeError, match="x1 must have a (real )?floating-point data type"):
        xp.linalg.solve(arr(np.eye(3, dtype=np.int32), "int32"), x)
    with pytest.raises(ValueError, match="x1 must be a stack of square matrices"):
        xp.linalg.solve(arr(np.ones((3, 2)), "float64"), x)
    with pytest.raises(ValueError, match="x1 must be a stack of square matrices"):
        xp.linalg.solve(arr(np.ones(3), "float64"), x)
    with pytest.raises(ValueError, match="its axis must have size 3"):
        xp.linalg.solve(x, arr(np.ones(2), "float64"))
    with pytest.raises(ValueError, match="at least one dimension"):
        xp.linalg.solve(x, arr(np.float64(1.0), "float64"))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        xp.linalg.solve(arr(np.ones((2, 3, 3)), "float64"), arr(np.ones((4, 3, 1)), "float64"))


# ---------------------------------------------------------------------------------------------
# matrix_power, matrix_rank, pinv


@SETTINGS
@given(a=stacks(min_n=0, max_n=4), name=floats, n=st.integers(-3, 5))
def test_matrix_power(a, name, n):
    g = dominant(a)
    # scaled so that the powers stay of order 1
    nrm = np.abs(g).sum(-1).max(-1, initial=1.0)
    g = rounded(g / np.maximum(nrm, 1.0)[..., None, None] * 1.5, name)
    want = np.linalg.matrix_power(g, n)
    out = xp.linalg.matrix_power(arr(g, name), n)
    check(out, want, name, scale=SCALE[name])


def test_matrix_power_returns_a_new_array():
    x = arr(np.eye(2), "float64")
    out = xp.linalg.matrix_power(x, 1)
    assert out is not x
    out[0, 0] = 5.0
    assert x[0, 0].item() == 1.0
    with pytest.raises(TypeError, match="n must be an int, got float"):
        xp.linalg.matrix_power(x, 2.0)
    with pytest.raises(ValueError, match="square matrices"):
        xp.linalg.matrix_power(arr(np.ones((2, 3)), "float64"), 2)


@st.composite
def low_rank(draw, batch=small_batches):
    """Matrices (batch + (m, n)) of rank r <= min(m, n), with singular values either 0 or
    in [1, 4] (so the rank is far from the tolerance), and an r per matrix."""
    b = draw(batch)
    m, n = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    k = min(m, n)
    s = draw(values(b + (k,), 1.0, 4.0))
    zero = draw(hnp.arrays(np.bool_, b + (k,)))
    s = np.where(zero, 0.0, s)
    u = np.linalg.qr(dominant(draw(values(b + (m, m)))))[0][..., :, :k]
    v = np.linalg.qr(dominant(draw(values(b + (n, n)))))[0][..., :, :k]
    return (u * s[..., None, :]) @ T(v), (~zero).sum(-1)


@SETTINGS
@given(case=low_rank(), name=floats)
def test_matrix_rank(case, name):
    a, rank = case
    g = rounded(a, name)
    # rtol big enough for rounding to name to leave the zero singular values below it
    rtol = 1e-3 if name == "float32" else None
    out = xp.linalg.matrix_rank(arr(g, name), rtol=rtol)
    check(out, rank, "int64")
    check(out, np.linalg.matrix_rank(g, rtol=rtol), "int64")


@SETTINGS
@given(a=stacks(min_n=1, max_n=5, square=False), name=floats)
def test_matrix_rank_default_rtol(a, name):
    """The default rtol is max(M, N) * eps of the input dtype, relative to the largest
    singular value: the same count as NumPy's on the same values (cases within a factor
    of 8 of the threshold, where LAPACK implementations may disagree, are skipped)."""
    g = round_to(a, name)
    s = np.linalg.svdvals(g.astype(np.float64))
    tol = s.max(-1, keepdims=True) * max(g.shape[-2:]) * np.finfo(g.dtype).eps
    assume(not np.any((s > tol / 8) & (s < tol * 8)))
    out = xp.linalg.matrix_rank(arr(g, name))
    check(out, np.linalg.matrix_rank(g), "int64")


def test_matrix_rank_rtol_forms(rng):
    # singular values 4, 1e-2, 0 in each of 2 matrices
    u = np.linalg.qr(rng.standard_normal((2, 3, 3)))[0]
    a = (u * np.array([4.0, 1e-2, 0.0])) @ T(u)
    x = arr(a, "float64")
    check(xp.linalg.matrix_rank(x), [2, 2], "int64")
    check(xp.linalg.matrix_rank(x, rtol=0.1), [1, 1], "int64")
    check(xp.linalg.matrix_rank(x, rtol=1), [0, 0], "int64")  # a Python int is fine
    check(xp.linalg.matrix_rank(x, rtol=arr([0.1, 1e-4], "float64")), [1, 2], "int64")
    check(xp.linalg.matrix_rank(x, rtol=arr([[0.1], [1e-4]], "float32")), [[1, 1], [2, 2]],
          "int64")
    check(xp.linalg.matrix_rank(arr(np.zeros((2, 0, 3)), "float64")), [0, 0], "int64")
    with pytest.raises(TypeError, match="rtol must have a real floating-point data type"):
        xp.linalg.matrix_rank(x, rtol=arr([1, 2], "int64"))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        xp.linalg.matrix_rank(x, rtol=arr([0.1, 0.1, 0.1], "float64"))
    with pytest.raises(TypeError, match="rtol must be None, a Python float"):
        xp.linalg.matrix_rank(x, rtol="0.1")
    with pytest.raises(TypeError, match="rtol must be None, a Python float"):
        xp.linalg.matrix_rank(x, rtol=True)


@SETTINGS
@given(a=conditioned(batch=batches), name=floats)
def test_pinv(a, name):
    g = rounded(a, name)
    want = np.linalg.pinv(g, rtol=None)
    out = xp.linalg.pinv(arr(g, name))
    check(out, want, name, scale=SCALE[name])


@SETTINGS
@given(case=low_rank(), name=floats)
def test_pinv_rank_deficient(case, name):
    g = rounded(case[0], name)
    rtol = 1e-3 if name == "float32" else None
    want = np.linalg.pinv(g, rtol=rtol)  # rtol=None: the standard's default, as ours
    out = xp.linalg.pinv(arr(g, name), rtol=rtol)
    check(out, want, name, scale=SCALE[name])


def test_pinv_rtol_and_shapes(rng):
    u = np.linalg.qr(rng.standard_normal((2, 3, 3)))[0]
    a = (u * np.array([4.0, 1e-2, 0.0])) @ T(u)
    x = arr(a, "float64")
    check(xp.linalg.pinv(x), np.linalg.pinv(a, rtol=3 * np.finfo(np.float64).eps), "float64")
    check(xp.linalg.pinv(x, rtol=0.1), np.linalg.pinv(a, rtol=0.1), "float64")
    r = np.array([0.1, 1e-4])
    check(xp.linalg.pinv(x, rtol=arr(r, "float64")), np.linalg.pinv(a, rtol=r), "float64")
    check(xp.linalg.pinv(arr(np.zeros((2, 0, 3)), "float32")), np.zeros((2, 3, 0)), "float32")
    check(xp.linalg.pinv(arr(np.zeros((0, 4, 3)), "float32")), np.zeros((0, 3, 4)), "float32")


def test_pinv_and_matrix_rank_of_empty_matrices_with_an_rtol_array():
    """NumPy's shapes: pinv's is x's (with the last two axes swapped), whatever rtol's;
    matrix_rank's broadcasts x's batch shape with rtol's, as for non-empty matrices."""
    a = np.zeros((2, 0, 3))
    r = np.full((3, 1), 0.1)
    check(xp.linalg.pinv(arr(a, "float64"), rtol=arr(r, "float64")), np.linalg.pinv(a, rtol=r),
          "float64")
    check(xp.linalg.matrix_rank(arr(a, "float64"), rtol=arr(r, "float64")),
          np.linalg.matrix_rank(a, rtol=r), "int64")


# ---------------------------------------------------------------------------------------------
# norms


VECTOR_ORDS = [2, 1, math.inf, -math.inf, 0, 3, -1, 0.5, -2.5, 2.0]


@st.composite
def norm_axes(draw, ndim):
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none" or ndim == 0:
        return None if kind != "tuple" else ()
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    axes = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    neg = draw(st.booleans())
    return tuple(a - ndim if neg else a for a in axes)


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), name=floats,
       ord=st.sampled_from(VECTOR_ORDS), keepdims=st.booleans(), data=st.data())
def test_vector_norm(shape, name, ord, keepdims, data):
    a = rounded(data.draw(values(shape)), name)
    axis = data.draw(norm_axes(len(shape)))
    x = arr(a, name)
    try:
        want = quiet(np.linalg.vector_norm, a, axis=axis, keepdims=keepdims, ord=ord)
    except ValueError:  # -inf over zero elements
        with pytest.raises(ValueError, match="zero elements"):
            xp.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
        return
    out = xp.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
    check(out, np.asarray(want), name, scale=10.0)


def test_vector_norm_errors_and_extras():
    x = arr(np.array([[3.0, 4.0], [0.0, 0.0]]), "float32")
    check(xp.linalg.vector_norm(x), 5.0, "float32")
    check(xp.linalg.vector_norm(x, axis=1, ord=0), [2.0, 0.0], "float32")
    check(xp.linalg.vector_norm(arr(np.zeros((2, 0)), "float64"), axis=1, ord=-1),
          [np.inf, np.inf], "float64")
    check(xp.linalg.vector_norm(arr([3.0, -4.0], "float16")), 5.0, "float16")
    check(xp.linalg.vector_norm(arr([3.0, -4.0], "bfloat16"), ord=1), 7.0, "bfloat16")
    with pytest.raises(TypeError, match="floating-point data type, got int32"):
        xp.linalg.vector_norm(arr([3, 4], "int32"))
    with pytest.raises(TypeError, match="ord must be an int or a float, got str"):
        xp.linalg.vector_norm(x, ord="fro")
    with pytest.raises(TypeError, match="ord must be an int or a float, got bool"):
        xp.linalg.vector_norm(x, ord=True)
    with pytest.raises(ValueError, match="NaN"):
        xp.linalg.vector_norm(x, ord=math.nan)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.linalg.vector_norm(x, axis=2)
    with pytest.raises(ValueError, match="duplicate"):
        xp.linalg.vector_norm(x, axis=(0, -2))
    with pytest.raises(ValueError, match="-inf norm of zero elements"):
        xp.linalg.vector_norm(arr(np.zeros(0), "float32"), ord=-math.inf)


MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf, None]


@SETTINGS
@given(a=stacks(min_n=0, max_n=4, square=False), name=floats,
       ord=st.sampled_from(MATRIX_ORDS), keepdims=st.booleans())
def test_matrix_norm(a, name, ord, keepdims):
    g = rounded(a, name)
    try:
        want = np.linalg.matrix_norm(g, ord=ord if ord is not None else "fro",
                                     keepdims=keepdims)
    except ValueError:  # the minimum over zero columns, rows or singular values
        with pytest.raises(ValueError, match="is undefined"):
            xp.linalg.matrix_norm(arr(g, name), ord=ord, keepdims=keepdims)
        return
    out = xp.linalg.matrix_norm(arr(g, name), ord=ord, keepdims=keepdims)
    check(out, want, name, scale=SCALE[name])


def test_matrix_norm_errors():
    x = arr(np.ones((2, 2)), "float64")
    with pytest.raises(ValueError, match="ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf"):
        xp.linalg.matrix_norm(x, ord=3)
    with pytest.raises(ValueError, match="got 'max'"):
        xp.linalg.matrix_norm(x, ord="max")
    with pytest.raises(TypeError, match="ord must be an int or a float"):
        xp.linalg.matrix_norm(x, ord=[2])
    with pytest.raises(ValueError, match="at least two dimensions"):
        xp.linalg.matrix_norm(arr(np.ones(3), "float64"))
    with pytest.raises(TypeError, match="floating-point data type"):
        xp.linalg.matrix_norm(arr(np.ones((2, 2), np.int64), "int64"))


# ---------------------------------------------------------------------------------------------
# trace, diagonal, outer, cross


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=2, max_dims=4, min_side=0, max_side=4),
       name=numerics, offset=st.integers(-5, 5), data=st.data())
def test_trace_diagonal(shape, name, offset, data):
    a = draw_pair(data, shape, (), name)[0]
    x = arr(a, name)
    want_dtype = ("uint64" if name.startswith("u") else "int64") if name in INTS else name
    want = np.linalg.trace(a, offset=offset, dtype=np.dtype(want_dtype))
    check(xp.linalg.trace(x, offset=offset), want, want_dtype, scale=10.0)
    check(xp.linalg.diagonal(x, offset=offset), np.linalg.diagonal(a, offset=offset), name)


def test_trace_dtype_argument_and_errors():
    a = np.arange(12.0).reshape(2, 2, 3)
    x = arr(a, "float32")
    check(xp.linalg.trace(x, dtype=xp.float64), np.linalg.trace(a), "float64")
    check(xp.linalg.trace(arr(a, "int8"), dtype=xp.int16), np.linalg.trace(a), "int16")
    # unsigned integers: uint64, as the standard asks
    check(xp.linalg.trace(arr(a, "uint8")), np.linalg.trace(a), "uint64")
    with pytest.raises(TypeError, match="numeric data type, got bool"):
        xp.linalg.trace(arr(np.eye(2, dtype=bool), "bool"))
    with pytest.raises(TypeError, match="offset must be an int"):
        xp.linalg.trace(x, offset=1.0)
    with pytest.raises(TypeError, match="dtype must be a dtype"):
        xp.linalg.trace(x, dtype="float64")
    with pytest.raises(ValueError, match="at least two dimensions"):
        xp.linalg.trace(arr(np.ones(3), "float32"))


def test_diagonal_any_dtype_is_a_view():
    a = np.eye(3, dtype=bool)
    x = arr(a, "bool")
    check(xp.linalg.diagonal(x), [True, True, True], "bool")
    y = arr(np.arange(9.0).reshape(3, 3), "float64")
    d = xp.linalg.diagonal(y, offset=1)
    y[0, 1] = 100.0
    assert d[0].item() == 100.0
    with pytest.raises(ValueError, match="at least two dimensions"):
        xp.linalg.diagonal(arr(np.ones(3), "float64"))


@SETTINGS
@given(n=st.integers(0, 5), m=st.integers(0, 5), name=numerics, data=st.data())
def test_outer(n, m, name, data):
    a, b = draw_pair(data, (n,), (m,), name)
    check(xp.linalg.outer(arr(a, name), arr(b, name)), np.linalg.outer(a, b), name)


def test_outer_errors():
    with pytest.raises(ValueError, match="must be one-dimensional, got shapes"):
        xp.linalg.outer(arr(np.ones((2, 2)), "float32"), arr(np.ones(2), "float32"))
    with pytest.raises(TypeError, match="numeric data type, got bool"):
        xp.linalg.outer(arr(np.ones(2, bool), "bool"), arr(np.ones(2), "float32"))


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(signature="(n),(n)->(n)", max_dims=3,
                                                 min_side=0, max_side=3),
       name=numerics, data=st.data())
def test_cross(shapes, name, data):
    s1, s2 = shapes.input_shapes
    s1, s2 = s1[:-1] + (3,), s2[:-1] + (3,)
    nd = min(len(s1), len(s2))
    axis = data.draw(st.integers(-nd, -1))
    a, b = draw_pair(data, s1, s2, name)
    a, b = np.moveaxis(a, -1, axis), np.moveaxis(b, -1, axis)
    want = np.linalg.cross(a, b, axis=axis)
    check(xp.linalg.cross(arr(a, name), arr(b, name), axis=axis), want, name, scale=10.0)


def test_cross_non_negative_axis_and_errors(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    x1, x2 = arr(a, "float64"), arr(b, "float64")
    check(xp.linalg.cross(x1, x2, axis=0), np.linalg.cross(a, b, axis=0), "float64")
    with pytest.raises(ValueError, match="size 3 along axis -1, got 4 and 4"):
        xp.linalg.cross(x1, x2)
    # the vector axis does not broadcast
    with pytest.raises(ValueError, match="size 3 along axis -1, got 3 and 1"):
        xp.linalg.cross(arr(np.ones((2, 3)), "float64"), arr(np.ones((2, 1)), "float64"))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        xp.linalg.cross(arr(np.ones((2, 3)), "float64"), arr(np.ones((4, 3)), "float64"))
    with pytest.raises(IndexError, match="out of bounds for x2"):
        xp.linalg.cross(arr(np.ones((3, 3)), "float64"), arr(np.ones(3), "float64"), axis=-2)
    with pytest.raises(ValueError, match="at least one dimension"):
        xp.linalg.cross(arr(np.float64(1.0), "float64"), x1)


# ---------------------------------------------------------------------------------------------
# non-contiguous inputs


@pytest.mark.parametrize("layout", ["transposed", "stepped"])
@pytest.mark.parametrize("name", FLOATS)
def test_strided_inputs(name, layout, rng):
    g = rounded(dominant(rng.standard_normal((2, 4, 4))), name)
    s = rounded(spd(rng.standard_normal((2, 4, 4))), name)
    b = rounded(rng.standard_normal((2, 4, 3)), name)
    x, p, y = arr(g, name, layout), arr(s, name, layout), arr(b, name, layout)
    sc = SCALE[name]
    check(xp.linalg.cholesky(p), np.linalg.cholesky(s), name, scale=sc)
    check(xp.linalg.det(x), np.linalg.det(g), name, scale=sc)
    check(xp.linalg.inv(x), np.linalg.inv(g), name, scale=sc)
    check(xp.linalg.eigvalsh(p), np.linalg.eigvalsh(s), name, scale=sc)
    check(xp.linalg.svdvals(x), np.linalg.svdvals(g), name, scale=sc)
    check(xp.linalg.solve(x, y), np.linalg.solve(g, b), name, scale=sc)
    check(xp.linalg.pinv(x), np.linalg.pinv(g, rtol=None), name, scale=sc)
    check(xp.linalg.matrix_power(x, 3), np.linalg.matrix_power(g, 3), name, scale=sc)
    check(xp.linalg.matrix_norm(x, ord="nuc"), np.linalg.matrix_norm(g, ord="nuc"), name,
          scale=sc)
    check(xp.linalg.vector_norm(x, axis=(0, 2), ord=3),
          np.linalg.vector_norm(g, axis=(0, 2), ord=3), name, scale=sc)
    check(xp.linalg.trace(x, offset=1), np.linalg.trace(g, offset=1), name, scale=sc)
    check(xp.matmul(x, y), g @ b, name, scale=sc)
    check(xp.vecdot(x, x, axis=-2), np.linalg.vecdot(g, g, axis=-2), name, scale=sc)
    check(xp.tensordot(x, y, axes=([0, 1], [0, 1])),
          np.tensordot(g, b, axes=([0, 1], [0, 1])), name, scale=sc)
    check(xp.linalg.cross(x[..., :3], y, axis=-1), np.linalg.cross(g[..., :3], b), name,
          scale=sc)


# ---------------------------------------------------------------------------------------------
# dtypes and errors shared by the functions


def _call(fn, x):
    if fn == "matrix_power":
        return xp.linalg.matrix_power(x, 2)
    return getattr(xp.linalg, fn)(x)


@pytest.mark.parametrize("name", INTS + ["bool"])
@pytest.mark.parametrize("fn", FLOATING_ONLY + ["matrix_power"])
def test_floating_only_functions_reject_other_dtypes(fn, name):
    x = arr(np.eye(3).astype(np.bool_ if name == "bool" else name), name)
    with pytest.raises(TypeError, match=f"linalg.{fn}\\(\\): x must have a (real )?"
                                        f"floating-point data type, got {name}"):
        _call(fn, x)


@pytest.mark.parametrize("fn", sorted(set(FLOATING_ONLY) - {"vector_norm"})
                         + ["matrix_power", "trace", "diagonal"])
def test_matrix_functions_need_two_dimensions(fn):
    with pytest.raises(ValueError, match="at least two dimensions|square matrices"):
        _call(fn, arr(np.ones(3), "float64"))
    with pytest.raises(TypeError, match="must be an array"):
        _call(fn, np.eye(3))


@pytest.mark.parametrize("fn", SQUARE_ONLY + ["matrix_power"])
def test_square_functions_reject_rectangles(fn):
    with pytest.raises(ValueError, match=r"stack of square matrices, got shape \(2, 3, 4\)"):
        _call(fn, arr(np.ones((2, 3, 4)), "float64"))


def test_options_are_checked():
    x = arr(np.eye(3), "float64")
    with pytest.raises(ValueError, match="mode must be 'reduced' or 'complete', got 'r'"):
        xp.linalg.qr(x, mode="r")
    with pytest.raises(TypeError, match="upper must be a bool"):
        xp.linalg.cholesky(x, upper="yes")
    with pytest.raises(TypeError, match="full_matrices must be a bool"):
        xp.linalg.svd(x, full_matrices=None)
    with pytest.raises(TypeError, match="offset must be an int"):
        xp.linalg.diagonal(x, offset=None)


@pytest.mark.parametrize("name", FLOATS + ["float16", "bfloat16"])
def test_result_dtypes(name, rng):
    """Every floating result keeps the input's dtype (float16 and bfloat16 are computed in
    float32); matrix_rank gives int64."""
    g = rounded(dominant(rng.standard_normal((2, 3, 3))), name)
    s = rounded(spd(rng.standard_normal((2, 3, 3))), name)
    x, p = arr(g, name), arr(s, name)
    d = getattr(xp, name)
    outs = [xp.linalg.cholesky(p), xp.linalg.det(x), *xp.linalg.slogdet(x),
            *xp.linalg.eigh(p), xp.linalg.eigvalsh(p), xp.linalg.inv(x), *xp.linalg.qr(x),
            *xp.linalg.svd(x), xp.linalg.svdvals(x), xp.linalg.pinv(x),
            xp.linalg.matrix_norm(x), xp.linalg.matrix_norm(x, ord=2),
            xp.linalg.vector_norm(x), xp.linalg.matrix_power(x, -2),
            xp.linalg.matrix_power(x, 0), xp.linalg.solve(x, x[0, 0]), xp.linalg.trace(x),
            xp.linalg.diagonal(x), xp.linalg.outer(x[0, 0], x[0, 1]),
            xp.linalg.cross(x, x), xp.matmul(x, x), xp.tensordot(x, x, axes=([2], [1])),
            xp.vecdot(x, x), xp.matrix_transpose(x)]
    for i, o in enumerate(outs):
        assert o.dtype == d, (i, o.dtype)
    assert xp.linalg.matrix_rank(x).dtype == xp.int64
    # the values of the half-precision types are float32's, rounded once
    if name in ("float16", "bfloat16"):
        scale = 20.0
        check(xp.linalg.inv(x), np.linalg.inv(g), name, scale=scale)
        check(xp.linalg.det(x), np.linalg.det(g), name, scale=scale)
        check(xp.linalg.eigvalsh(p), np.linalg.eigvalsh(s), name, scale=scale)
