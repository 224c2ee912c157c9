"""matmul / mm / bmm / addmm: shapes, broadcasting, dtypes, layouts and errors."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_close, check, rand_array, tensor, to_np

MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((4,), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((2, 3, 4), (4, 5)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (4,)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((1, 3, 4), (6, 4, 2)),
    ((0, 4), (4, 5)),
    ((3, 0), (0, 5)),
    ((2, 0, 3), (3, 4)),
    ((1, 1), (1, 1)),
    ((65, 33), (33, 17)),
]


@pytest.mark.parametrize("layout", ["contig", "transposed", "stepped"])
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_shapes(lib, rng, shapes, layout):
    a = rand_array(rng, shapes[0], "float64")
    b = rand_array(rng, shapes[1], "float64")
    check(lib, lambda lib, x, y: lib.matmul(x, y), np.matmul, [a, b], ["float64"] * 2,
          layout=layout)
    check(lib, lambda lib, x, y: x @ y, np.matmul, [a, b], ["float64"] * 2, layout=layout)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "int64",
                                   "int8", "uint8", "bool"])
def test_matmul_dtypes(lib, rng, dtype):
    a = rand_array(rng, (5, 7), dtype)
    b = rand_array(rng, (7, 3), dtype)
    k = 7
    # float32 accumulation error grows with the inner size
    check(lib, lambda lib, x, y: x.matmul(y), np.matmul, [a, b], [dtype] * 2, scale=k)
    check(lib, lambda lib, x, y: lib.mm(x, y), np.matmul, [a, b], [dtype] * 2, scale=k)


def test_matmul_int_exact(lib, rng):
    a = rng.integers(-100, 100, size=(20, 30)).astype(np.int64)
    b = rng.integers(-100, 100, size=(30, 10)).astype(np.int64)
    assert_close(tensor(lib, a) @ tensor(lib, b), a @ b, "int64")
    a32 = a.astype(np.int32)
    assert_close(tensor(lib, a32) @ tensor(lib, b.astype(np.int32)), a @ b, "int32")


def _wrapped_matmul(a: np.ndarray, b: np.ndarray, bits: int) -> np.ndarray:
    """a @ b in exact Python integers, wrapped to signed `bits` like two's complement."""
    exact = np.array(a.astype(object) @ b.astype(object))
    m = 1 << bits
    return np.array([((int(v) + m // 2) % m) - m // 2 for v in exact.ravel()],
                    dtype=np.int64).reshape(exact.shape)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "batched"])
@pytest.mark.parametrize("scale", [1000, 2**40])
def test_integer_matmul_exact_and_wrapping(lib, rng, layout, scale):
    # small values take the exact floating-point route, huge ones the integer kernel; both
    # must give the exact (wrapped) result
    a = rng.integers(-scale, scale, size=(3, 70, 90), dtype=np.int64)
    b = rng.integers(-scale, scale, size=(3, 90, 50), dtype=np.int64)
    ta, tb = tensor(lib, a), tensor(lib, b)
    if layout == "transposed":
        ta = tensor(lib, np.ascontiguousarray(a.transpose(0, 2, 1))).transpose(1, 2)
    if layout != "batched":
        a, b, ta, tb = a[0], b[0], ta[0], tb[0]
    got = to_np(ta @ tb)
    want = np.stack([_wrapped_matmul(x, y, 64) for x, y in zip(a, b)]) if a.ndim == 3 else (
        _wrapped_matmul(a, b, 64))
    np.testing.assert_array_equal(got, want)
    if scale == 1000:  # int32 products of these sizes stay in range; int8 ones wrap
        a8, b8 = (a % 256 - 128).astype(np.int8), (b % 256 - 128).astype(np.int8)
        got8 = to_np(tensor(lib, a8) @ tensor(lib, b8))
        want8 = (np.stack([_wrapped_matmul(x, y, 8) for x, y in zip(a8, b8)]) if a.ndim == 3
                 else _wrapped_matmul(a8, b8, 8))
        np.testing.assert_array_equal(got8.astype(np.int64), want8)


@pytest.mark.parametrize("n", [1, 2, 7, 16, 33, 128])
def test_matmul_sizes_float32(lib, rng, n):
    a = rand_array(rng, (n, n + 1), "float32")
    b = rand_array(rng, (n + 1, n + 2), "float32")
    assert_close(tensor(lib, a) @ tensor(lib, b), a.astype(np.float64) @ b, "float32",
                 rtol=1e-4, atol=1e-4)
    assert_close(tensor(lib, a, "float32", "transposed") @ tensor(lib, b, "float32", "stepped"),
                 a.astype(np.float64) @ b, "float32", rtol=1e-4, atol=1e-4)


def test_large_matmul(lib, rng):
    a = rand_array(rng, (257, 300), "float32")
    b = rand_array(rng, (300, 129), "float32")
    assert_close(tensor(lib, a) @ tensor(lib, b), a.astype(np.float64) @ b, "float32",
                 rtol=1e-4, atol=1e-3)


# Products above 64^3 multiply-adds are split into tiles of rows (M >= N) or columns of C
# over the thread pool: both splits, ragged last tiles, every operand layout, and beta.
@pytest.mark.parametrize("la", ["contig", "transposed", "stepped"])
@pytest.mark.parametrize("lb", ["contig", "transposed"])
@pytest.mark.parametrize("mkn", [(203, 70, 45), (45, 70, 203), (16, 4100, 33)], ids=str)
def test_tiled_products(lib, rng, mkn, la, lb):
    m, k, n = mkn
    for dt, tol in (("float64", 1e-10), ("float32", 1e-3)):
        a, b, c = (rand_array(rng, s, dt) for s in ((m, k), (k, n), (m, n)))
        want = a.astype(np.float64) @ b.astype(np.float64)
        x, y = tensor(lib, a, dt, la), tensor(lib, b, dt, lb)
        assert_close(x @ y, want, dt, rtol=tol, atol=tol)
        assert_close(lib.addmm(tensor(lib, c, dt), x, y, beta=0.5, alpha=2.0),
                     0.5 * c + 2.0 * want, dt, rtol=tol, atol=tol)
    ab = rand_array(rng, (2, m, k), "float64")  # a batch of large products
    assert_close(tensor(lib, ab, "float64", la) @ tensor(lib, b, "float64", lb), ab @ b,
                 "float64", rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("layout", ["contig", "transposed"])
def test_bmm(lib, rng, layout):
    a = rand_array(rng, (3, 4, 5), "float32")
    b = rand_array(rng, (3, 5, 2), "float32")
    check(lib, lambda lib, x, y: lib.bmm(x, y), np.matmul, [a, b], ["float32"] * 2,
          layout=layout, scale=5)
    check(lib, lambda lib, x, y: x.bmm(y), np.matmul, [a, b], ["float32"] * 2, scale=5)
    e = rand_array(rng, (0, 4, 5), "float32")
    f = rand_array(rng, (0, 5, 2), "float32")
    check(lib, lambda lib, x, y: lib.bmm(x, y), np.matmul, [e, f], ["float32"] * 2)


ADDMM = [
    ("plain", {}, lambda c, a, b: c + a @ b),
    ("beta_alpha", {"beta": 0.5, "alpha": 2.0}, lambda c, a, b: 0.5 * c + 2.0 * (a @ b)),
    ("beta0", {"beta": 0}, lambda c, a, b: a @ b),
]


@pytest.mark.parametrize("cshape", [(3, 5), (5,), (1, 5), (3, 1), ()], ids=str)
@pytest.mark.parametrize("name,kw,ref", ADDMM, ids=[r[0] for r in ADDMM])
def test_addmm(lib, rng, name, kw, ref, cshape):
    c = rand_array(rng, cshape, "float64")
    a = rand_array(rng, (3, 4), "float64")
    b = rand_array(rng, (4, 5), "float64")
    check(lib, lambda lib, x, y, z: lib.addmm(x, y, z, **kw), ref, [c, a, b], ["float64"] * 3)
    check(lib, lambda lib, x, y, z: x.addmm(y, z, **kw), ref, [c, a, b], ["float64"] * 3)


def test_addmm_beta0_ignores_nan(lib):
    c = lib.full((2, 2), float("nan"))
    r = lib.addmm(c, lib.eye(2), lib.ones(2, 2), beta=0)
    assert_close(r, np.ones((2, 2)), "float32")


def test_matmul_out_and_inplace(lib, rng):
    a = rand_array(rng, (3, 4), "float32")
    b = rand_array(rng, (4, 2), "float32")
    out = lib.empty(3, 2)
    assert lib.matmul(tensor(lib, a), tensor(lib, b), out=out) is out
    assert_close(out, a.astype(np.float64) @ b, "float32", rtol=1e-5)
    out2 = lib.empty(0)
    lib.mm(tensor(lib, a), tensor(lib, b), out=out2)
    assert_close(out2, a.astype(np.float64) @ b, "float32", rtol=1e-5)
    c = lib.zeros(3, 2)
    assert c.addmm_(tensor(lib, a), tensor(lib, b)) is c
    assert_close(c, a.astype(np.float64) @ b, "float32", rtol=1e-5)


def test_matmul_promotes_mixed_dtypes_errors(lib):
    # matmul does not promote: mixed dtypes are an error
    with pytest.raises(RuntimeError):
        lib.matmul(lib.ones(2, 2), lib.ones(2, 2, dtype=lib.float64))
    with pytest.raises(RuntimeError):
        lib.mm(lib.ones(2, 2), lib.ones(2, 2, dtype=lib.int64))


MATMUL_ERRORS = [
    ("inner", lambda lib: lib.matmul(lib.ones(3, 4), lib.ones(5, 6)), r"3.*4.*5.*6|4.*5"),
    ("vec", lambda lib: lib.matmul(lib.ones(3), lib.ones(4)), r"3.*4|4.*3"),
    ("batch", lambda lib: lib.matmul(lib.ones(2, 3, 4), lib.ones(3, 4, 5)), r"2.*3|3.*2"),
    ("mm_ndim", lambda lib: lib.mm(lib.ones(2, 3, 4), lib.ones(4, 5)), r"2|3|mat"),
    ("mm_inner", lambda lib: lib.mm(lib.ones(2, 3), lib.ones(4, 5)), r"2.*3.*4.*5|3.*4"),
    ("bmm_ndim", lambda lib: lib.bmm(lib.ones(3, 4), lib.ones(4, 5)), r"3|batch"),
    ("bmm_batch", lambda lib: lib.bmm(lib.ones(2, 3, 4), lib.ones(3, 4, 5)), r"2|3"),
    ("addmm_bias", lambda lib: lib.addmm(lib.ones(4, 4), lib.ones(2, 3), lib.ones(3, 5)),
     r"4|2|5"),
    ("scalar", lambda lib: lib.matmul(lib.tensor(1.0), lib.ones(2)), r"(?i)dim|0|1"),
]


@pytest.mark.parametrize("name,fn,pattern", MATMUL_ERRORS, ids=[e[0] for e in MATMUL_ERRORS])
def test_matmul_shape_errors(lib, name, fn, pattern):
    with pytest.raises(RuntimeError, match=pattern):
        fn(lib)


LINEAR = [((3, 4), (5, 4), (5,)), ((2, 3, 4), (5, 4), None), ((4,), (5, 4), (5,)),
          ((2, 3, 4), (4,), ()), ((0, 4), (5, 4), (5,)), ((3, 4), (5, 4), (3, 5))]


@pytest.mark.parametrize("shapes", LINEAR, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linear_matches_torch(lib, rng, shapes, dtype):
    import torch

    arrays = [rand_array(rng, s, dtype) for s in shapes if s is not None]
    got = lib.linear(*[tensor(lib, a, dtype) for a in arrays])
    want = torch.nn.functional.linear(*[torch.from_numpy(a) for a in arrays])
    assert tuple(got.shape) == tuple(want.shape)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(to_np(got), want.numpy(), rtol=tol, atol=tol)


def test_linear_errors(lib):
    with pytest.raises(RuntimeError, match=r"^linear: mat1 and mat2 shapes cannot be multiplied "
                                           r"\(6x4 and 3x5\)"):
        lib.linear(lib.zeros(2, 3, 4), lib.zeros(5, 3))
    with pytest.raises(RuntimeError, match=r"^linear: expected input of at least 1 dimension"):
        lib.linear(lib.zeros(()), lib.zeros(5, 3))
    with pytest.raises(RuntimeError, match="same dtype"):
        lib.linear(lib.zeros(2, 3), lib.zeros(5, 3, dtype=lib.float64))
