"""ember_tensor.linalg on complex64 and complex128 matrices (LAPACK's c/z routines) against
NumPy's values, with PyTorch's result dtypes (real eigenvalues of Hermitian matrices,
singular values, norms and log|det|; complex det and sign), and the conjugate transposes
``Tensor.mH``, ``.H`` and ``.adjoint()``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conftest import dtype_name, tensor, to_np

CDTYPES = ["complex64", "complex128"]
REAL_OF = {"complex64": "float32", "complex128": "float64"}
BATCHES = [(), (3,), (2, 1)]


def tol(dtype):
    return dict(rtol=2e-4, atol=2e-5) if dtype == "complex64" else dict(rtol=1e-9, atol=1e-11)


def cplx(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def hermitian_pd(rng, batch, n):
    a = cplx(rng, (*batch, n, n))
    return a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)


def mh(a):
    return np.conj(np.swapaxes(a, -1, -2))


def close(actual, expected, dtype, scale=1.0):
    t = tol(dtype)
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=t["rtol"] * scale,
                               atol=t["atol"] * scale)


def check_dtype(t, name):
    assert dtype_name(t.dtype) == name, (dtype_name(t.dtype), name)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(lib, rng, dtype, batch, upper):
    a = hermitian_pd(rng, batch, 4)
    L = lib.linalg.cholesky(tensor(lib, a, dtype), upper=upper)
    check_dtype(L, dtype)
    want = np.linalg.cholesky(a)
    close(to_np(L), mh(want) if upper else want, dtype, scale=10)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3), (0, 3)], ids=str)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(lib, rng, dtype, shape, mode):
    a = cplx(rng, shape)
    Q, R = lib.linalg.qr(tensor(lib, a, dtype), mode=mode)
    Rn = np.linalg.qr(a, mode="r" if mode == "r" else mode)
    Rn = Rn if mode == "r" else Rn[1]
    r = to_np(R)
    assert r.shape == Rn.shape
    check_dtype(R, dtype)
    k = min(shape[-2:])
    diag = np.diagonal(r, axis1=-2, axis2=-1)
    np.testing.assert_array_equal(diag.imag, 0)  # LAPACK's R has a real diagonal
    np.testing.assert_array_equal(np.tril(r, -1), 0)
    # unique up to the signs of R's rows (its diagonal is real)
    fix = np.sign(diag.real) * np.sign(np.diagonal(Rn, axis1=-2, axis2=-1).real)
    close(r[..., :k, :] * fix[..., :, None], Rn[..., :k, :], dtype, scale=50)
    if mode == "r":
        assert tuple(Q.shape) == (0,)
        return
    q = to_np(Q)
    close(q @ r, a, dtype, scale=50)
    close(mh(q) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2),
          dtype, scale=50)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_and_eigvalsh(lib, rng, dtype, batch, uplo):
    a = cplx(rng, (*batch, 5, 5))
    h = a + mh(a)
    # only the UPLO triangle is read: spoil the other one
    spoiled = np.where(np.tri(5, dtype=bool) if uplo == "L" else np.tri(5, dtype=bool).T, h, 9)
    w, V = lib.linalg.eigh(tensor(lib, spoiled, dtype), UPLO=uplo)
    check_dtype(w, REAL_OF[dtype])
    check_dtype(V, dtype)
    wn = np.linalg.eigvalsh(h)
    close(to_np(w), wn, dtype, scale=20)
    v = to_np(V)
    close(h @ v, v * to_np(w)[..., None, :], dtype, scale=50)
    close(mh(v) @ v, np.broadcast_to(np.eye(5), v.shape), dtype, scale=50)
    w2 = lib.linalg.eigvalsh(tensor(lib, spoiled, dtype), UPLO=uplo)
    check_dtype(w2, REAL_OF[dtype])
    close(to_np(w2), wn, dtype, scale=20)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 3, 4), (0, 3)], ids=str)
@pytest.mark.parametrize("full", [True, False])
def test_svd_and_svdvals(lib, rng, dtype, shape, full):
    a = cplx(rng, shape)
    U, S, Vh = lib.linalg.svd(tensor(lib, a, dtype), full_matrices=full)
    Un, Sn, Vhn = np.linalg.svd(a, full_matrices=full)
    assert (tuple(U.shape), tuple(S.shape), tuple(Vh.shape)) == (Un.shape, Sn.shape, Vhn.shape)
    check_dtype(S, REAL_OF[dtype])
    check_dtype(U, dtype)
    close(to_np(S), Sn, dtype, scale=20)
    k = Sn.shape[-1]
    u, vh = to_np(U), to_np(Vh)
    close((u[..., :, :k] * to_np(S)[..., None, :]) @ vh[..., :k, :], a, dtype, scale=50)
    close(mh(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2),
          dtype, scale=50)
    s2 = lib.linalg.svdvals(tensor(lib, a, dtype))
    check_dtype(s2, REAL_OF[dtype])
    close(to_np(s2), Sn, dtype, scale=20)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("batch", BATCHES + [(0,)], ids=str)
def test_det_and_slogdet(lib, rng, dtype, batch):
    a = cplx(rng, (*batch, 4, 4)) + 2 * np.eye(4)
    d = lib.linalg.det(tensor(lib, a, dtype))
    check_dtype(d, dtype)
    close(to_np(d), np.linalg.det(a), dtype, scale=50)
    sign, logabs = lib.linalg.slogdet(tensor(lib, a, dtype))
    check_dtype(sign, dtype)
    check_dtype(logabs, REAL_OF[dtype])
    sn, ln = np.linalg.slogdet(a)
    close(to_np(sign), sn, dtype, scale=50)
    close(to_np(logabs), ln, dtype, scale=50)


def test_det_and_slogdet_of_a_singular_complex_matrix(lib):
    a = np.array([[1 + 1j, 2 - 1j], [2 + 2j, 4 - 2j]])  # second row = 2 * first
    assert to_np(lib.linalg.det(tensor(lib, a, "complex128"))) == 0
    sign, logabs = lib.linalg.slogdet(tensor(lib, a, "complex128"))
    assert to_np(sign) == 0 and to_np(logabs) == -np.inf


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular(lib, rng, dtype, upper, left, unit):
    a = cplx(rng, (2, 4, 4)) + 4 * np.eye(4)
    b = cplx(rng, (2, 4, 3) if left else (2, 3, 4))
    X = lib.linalg.solve_triangular(tensor(lib, a, dtype), tensor(lib, b, dtype), upper=upper,
                                    left=left, unitriangular=unit)
    tri = np.triu(a) if upper else np.tril(a)
    if unit:  # the diagonal is not read: taken as ones
        idx = np.arange(4)
        tri[..., idx, idx] = 1
    want = np.linalg.solve(tri, b) if left else mh(np.linalg.solve(mh(tri), mh(b)))
    check_dtype(X, dtype)
    close(to_np(X), want, dtype, scale=50)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf])
def test_matrix_norm(lib, rng, dtype, ord):
    a = cplx(rng, (3, 4, 5))
    n = lib.linalg.matrix_norm(tensor(lib, a, dtype), ord)
    check_dtype(n, REAL_OF[dtype])
    close(to_np(n), np.linalg.norm(a, ord, axis=(-2, -1)), dtype, scale=20)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_vector_norm_is_real_and_takes_a_complex_dtype(lib, rng, dtype):
    a = cplx(rng, (3, 4))
    n = lib.linalg.vector_norm(tensor(lib, a, dtype), 3, dim=1)
    check_dtype(n, REAL_OF[dtype])
    close(to_np(n), np.sum(np.abs(a) ** 3, 1) ** (1 / 3), dtype, scale=20)
    n = lib.linalg.vector_norm(tensor(lib, a, "complex64"), dtype=lib.complex128)
    check_dtype(n, "float64")
    with pytest.raises(RuntimeError, match="dtype should be complex for complex inputs, but got "
                                           "Double"):
        lib.linalg.vector_norm(tensor(lib, a, dtype), dtype=lib.float64)
    with pytest.raises(RuntimeError, match="dtype should be real for real inputs, but got "
                                           "ComplexFloat"):
        lib.linalg.vector_norm(tensor(lib, a.real, "float32"), dtype=lib.complex64)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
def test_pinv_and_matrix_rank(lib, rng, dtype, hermitian):
    base = cplx(rng, (2, 4, 2))
    a = base @ mh(base) if hermitian else base @ cplx(rng, (2, 2, 5))  # rank 2
    P = lib.linalg.pinv(tensor(lib, a, dtype), hermitian=hermitian)
    check_dtype(P, dtype)
    close(to_np(P), np.linalg.pinv(a, hermitian=hermitian), dtype, scale=2000)
    r = lib.linalg.matrix_rank(tensor(lib, a, dtype), hermitian=hermitian)
    np.testing.assert_array_equal(to_np(r), [2, 2])


def test_conjugate_transposes(lib, rng):
    a = cplx(rng, (2, 3, 4))
    x = tensor(lib, a, "complex128")
    # resolve_conj: PyTorch's conjugates are lazy views (Ember's are eager: the identity)
    np.testing.assert_array_equal(to_np(x.mH.resolve_conj()), mh(a))
    np.testing.assert_array_equal(to_np(x.adjoint().resolve_conj()), mh(a))
    np.testing.assert_array_equal(to_np(x[0].H.resolve_conj()), mh(a[0]))
    r = tensor(lib, a.real, "float64")
    np.testing.assert_array_equal(to_np(r.mH), np.swapaxes(a.real, -1, -2))


@pytest.mark.parametrize("expr,message", [
    (lambda x: x[0, 0].mH, "tensor.mH is only supported on matrices or batches of matrices. "
                           "Got 1-D tensor."),
    (lambda x: x[0, 0].adjoint(), "tensor.adjoint() is only supported on matrices or batches "
                                  "of matrices. Got 1-D tensor."),
    (lambda x: x.H, "tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor. For "
                    "batches of matrices, consider using tensor.mH"),
    (lambda x: x[0, 0].H, "tensor.H is only supported on matrices (2-D tensors). Got 1-D "
                          "tensor."),
])
def test_conjugate_transpose_errors(lib, expr, message):
    x = tensor(lib, np.ones((2, 3, 4), dtype=np.complex64), "complex64")
    with pytest.raises(RuntimeError) as info:
        expr(x)
    assert str(info.value) == message


@pytest.mark.parametrize("dtype", CDTYPES)
def test_complex_results_match_torch_layouts(lib, rng, dtype):
    """Shapes, dtypes and strides of every complex decomposition as PyTorch's."""
    a = cplx(rng, (2, 4, 3))
    h = hermitian_pd(rng, (2,), 3)
    calls = {
        "qr": lambda m, x, y: m.linalg.qr(x),
        "svd": lambda m, x, y: m.linalg.svd(x),
        "eigh": lambda m, x, y: m.linalg.eigh(y),
        "cholesky": lambda m, x, y: (m.linalg.cholesky(y),),
        "slogdet": lambda m, x, y: m.linalg.slogdet(y),
    }
    tdt = getattr(torch, dtype)
    ta, th = torch.tensor(a, dtype=tdt), torch.tensor(h, dtype=tdt)
    for name, fn in calls.items():
        mine = fn(lib, tensor(lib, a, dtype), tensor(lib, h, dtype))
        theirs = fn(torch, ta, th)
        for e, t in zip(mine, theirs, strict=True):
            assert tuple(e.shape) == tuple(t.shape), name
            assert dtype_name(e.dtype) == str(t.dtype).split(".")[-1], name
            assert tuple(e.stride()) == tuple(t.stride()), name


@pytest.mark.parametrize("attribute,name", [("mH", "Tensor.mH"), ("H", "Tensor.H"),
                                            ("adjoint", "adjoint()")])
def test_conjugate_transpose_of_a_zero_d_tensor_is_its_conjugate(lib, attribute, name):
    x = tensor(lib, np.array(1 + 2j), "complex64")
    with pytest.warns(UserWarning, match=f"{name.replace('(', '[(]').replace(')', '[)]')} is "
                                         "deprecated on 0-D tensors"):
        r = getattr(x, attribute)
        r = r() if attribute == "adjoint" else r
    assert complex(to_np(r.resolve_conj())) == 1 - 2j
