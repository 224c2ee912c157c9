"""ember_tensor.linalg (torch.linalg's surface): decompositions, solvers and the functions
composed of them, against NumPy values and PyTorch's shapes, strides, dtypes and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from conftest import IS_TORCH, assert_close, tensor, to_np

BATCHES = [(), (3,), (2, 1)]
DTYPES = ["float64", "float32"]


def spd(rng, batch, n):
    a = rng.standard_normal((*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def general(rng, batch, m, n):
    return rng.standard_normal((*batch, m, n)) + (2 * np.eye(m, n) if m == n else 0)


def t(lib, a, dtype="float64", layout="contig"):
    return tensor(lib, np.asarray(a, dtype=np.float64), dtype, layout)


def close(actual, expected, dtype, scale=10.0):
    """actual (a tensor, or a float64 NumPy array computed from tensors) against expected."""
    if isinstance(actual, np.ndarray):
        np.testing.assert_allclose(actual, expected, rtol=1e-4 * scale, atol=1e-5 * scale)
        return
    assert_close(actual, np.asarray(expected), dtype, scale=scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("layout", ["contig", "transposed"])
def test_cholesky(lib, rng, dtype, batch, upper, layout):
    a = spd(rng, batch, 4)
    L = lib.linalg.cholesky(t(lib, a, dtype, layout), upper=upper)
    want = np.linalg.cholesky(a)
    close(L, np.swapaxes(want, -1, -2) if upper else want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3), (0, 3), (3, 0)], ids=str)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(lib, rng, dtype, shape, mode):
    a = rng.standard_normal(shape)
    Q, R = lib.linalg.qr(t(lib, a, dtype), mode=mode)
    Qn, Rn = np.linalg.qr(a, mode=mode) if mode != "r" else (None, np.linalg.qr(a, mode="r"))
    assert tuple(R.shape) == Rn.shape
    # a QR decomposition is unique up to the signs of R's rows: compare through them
    signs = np.sign(np.diagonal(Rn, axis1=-2, axis2=-1))
    signs = np.where(signs == 0, 1, signs)
    sr = np.sign(np.diagonal(to_np(R), axis1=-2, axis2=-1))
    sr = np.where(sr == 0, 1, sr)
    k = signs.shape[-1]
    fix = signs * sr
    Rf = to_np(R).astype(np.float64).copy()
    Rf[..., :k, :] *= fix[..., :, None]
    close(Rf, Rn, None, scale=50)
    if mode == "r":
        assert tuple(Q.shape) == (0,)
        return
    assert tuple(Q.shape) == Qn.shape
    Qf = to_np(Q).astype(np.float64).copy()
    Qf[..., :, :k] *= fix[..., None, :]
    close(Qf[..., :, :k], Qn[..., :, :k], None, scale=50)
    close(to_np(Q).astype(np.float64) @ to_np(R).astype(np.float64), a, None, scale=50)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_and_eigvalsh(lib, rng, dtype, batch, uplo):
    a = rng.standard_normal((*batch, 5, 5))
    w, V = lib.linalg.eigh(t(lib, a, dtype), UPLO=uplo)
    wn, Vn = np.linalg.eigh(a, UPLO=uplo)
    close(w, wn, dtype, scale=20)
    # eigenvectors are unique up to sign (distinct eigenvalues)
    Vf = to_np(V).astype(np.float64)
    Vf = Vf * np.sign(np.sum(Vf * Vn, axis=-2, keepdims=True))
    close(Vf, Vn, None, scale=200 if dtype == "float32" else 20)
    close(lib.linalg.eigvalsh(t(lib, a, dtype), UPLO=uplo), wn, dtype, scale=20)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 3, 4), (0, 3), (3, 0)], ids=str)
@pytest.mark.parametrize("full", [True, False])
def test_svd(lib, rng, dtype, shape, full):
    a = rng.standard_normal(shape)
    U, S, Vh = lib.linalg.svd(t(lib, a, dtype), full_matrices=full)
    Un, Sn, Vhn = np.linalg.svd(a, full_matrices=full)
    assert (tuple(U.shape), tuple(S.shape), tuple(Vh.shape)) == (Un.shape, Sn.shape, Vhn.shape)
    close(S, Sn, dtype, scale=20)
    close(lib.linalg.svdvals(t(lib, a, dtype)), Sn, dtype, scale=20)
    k = Sn.shape[-1]
    u, vh = to_np(U).astype(np.float64), to_np(Vh).astype(np.float64)
    close((u[..., :, :k] * to_np(S).astype(np.float64)[..., None, :]) @ vh[..., :k, :], a, None,
          scale=50)
    eye_u = np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2)
    close(np.swapaxes(u, -1, -2) @ u, eye_u, None, scale=50)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "a_shape,b_shape",
    [((4, 4), (4,)), ((4, 4), (4, 2)), ((3, 4, 4), (3, 4)), ((3, 4, 4), (4, 2)),
     ((2, 1, 4, 4), (3, 4, 1)), ((4, 4), (2, 4, 3)), ((0, 4, 4), (4,)), ((4, 4), (4, 0))],
    ids=str,
)
def test_solve(lib, rng, dtype, a_shape, b_shape):
    a = general(rng, a_shape[:-2], a_shape[-2], a_shape[-1])
    b = rng.standard_normal(b_shape)
    X = lib.linalg.solve(t(lib, a, dtype), t(lib, b, dtype))
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    want = torch.linalg.solve(ta, tb).numpy()
    close(X, want, dtype, scale=50)
    if len(b_shape) >= 2 and b_shape != a_shape[:-1]:  # B a (batch of) matrices
        Xr = lib.linalg.solve(t(lib, a, dtype), t(lib, np.swapaxes(b, -1, -2), dtype), left=False)
        close(Xr, torch.linalg.solve(ta, tb.mT, left=False).numpy(), dtype, scale=50)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", BATCHES + [(0,)], ids=str)
def test_inv_det_slogdet(lib, rng, dtype, batch):
    a = general(rng, batch, 4, 4)
    close(lib.linalg.inv(t(lib, a, dtype)), np.linalg.inv(a), dtype, scale=50)
    close(lib.linalg.det(t(lib, a, dtype)), np.linalg.det(a), dtype, scale=50)
    sign, logabs = lib.linalg.slogdet(t(lib, a, dtype))
    sn, ln = np.linalg.slogdet(a)
    close(sign, sn, dtype)
    close(logabs, ln, dtype, scale=50)


def test_det_slogdet_singular_and_empty(lib):
    z = t(lib, np.zeros((2, 3, 3)))
    assert to_np(lib.linalg.det(z)).tolist() == [0.0, 0.0]
    sign, logabs = lib.linalg.slogdet(z)
    assert to_np(sign).tolist() == [0.0, 0.0]
    assert to_np(logabs).tolist() == [-math.inf, -math.inf]
    e = t(lib, np.zeros((0, 0)))
    assert lib.linalg.det(e).item() == 1.0
    assert tuple(x.item() for x in lib.linalg.slogdet(e)) == (1.0, 0.0)
    perm = t(lib, np.array([[0.0, 1.0], [1.0, 0.0]]))
    assert lib.linalg.det(perm).item() == -1.0
    assert lib.linalg.slogdet(perm).sign.item() == -1.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular(lib, rng, dtype, upper, left, unit):
    a = general(rng, (2,), 4, 4)
    b = rng.standard_normal((2, 4, 3) if left else (2, 3, 4))
    X = lib.linalg.solve_triangular(t(lib, a, dtype), t(lib, b, dtype), upper=upper, left=left,
                                    unitriangular=unit)
    want = torch.linalg.solve_triangular(torch.from_numpy(a), torch.from_numpy(b), upper=upper,
                                         left=left, unitriangular=unit).numpy()
    close(X, want, dtype, scale=50)


def test_result_types_and_strides_match_torch(lib, rng):
    a = general(rng, (2,), 3, 3)
    ta = torch.from_numpy(a)
    ea = t(lib, a)
    assert type(lib.linalg.qr(ea)).__name__ == "linalg_qr"
    fields = {"qr": ("Q", "R"), "svd": ("U", "S", "Vh"),
              "eigh": ("eigenvalues", "eigenvectors"), "slogdet": ("sign", "logabsdet")}
    for fn, names in fields.items():
        r = getattr(lib.linalg, fn)(ea)
        assert len(r) == len(names)
        assert all(getattr(r, n) is x for n, x in zip(names, r))
    # column-major results, as PyTorch (and LAPACK) lay them out
    assert lib.linalg.inv(ea).stride() == torch.linalg.inv(ta).stride()
    assert lib.linalg.svd(ea).U.stride() == torch.linalg.svd(ta).U.stride()
    assert lib.linalg.cholesky(t(lib, spd(rng, (2,), 3))).stride() == (9, 1, 3)


def test_results_are_fresh_tensors(lib, rng):
    a = t(lib, general(rng, (), 3, 3))
    b = t(lib, rng.standard_normal(3))
    x = lib.linalg.solve(a, b)
    assert x._base is None and not x._is_view()
    assert lib.linalg.inv(a)._base is None


# ---- errors: PyTorch's types and messages ----

ERRORS = [
    (lambda L, T: L.linalg.cholesky(T([[1.0, 2.0], [2.0, 1.0]])), "LinAlgError",
     "linalg.cholesky: The factorization could not be completed because the input is not "
     "positive-definite (the leading minor of order 2 is not positive-definite)."),
    (lambda L, T: L.linalg.cholesky(T([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])),
     "LinAlgError", "linalg.cholesky: (Batch element 1): The factorization could not"),
    (lambda L, T: L.linalg.cholesky(T([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])), RuntimeError,
     "linalg.cholesky: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda L, T: L.linalg.inv(T([1.0, 2.0])), RuntimeError,
     "linalg.inv: The input tensor A must have at least 2 dimensions."),
    (lambda L, T: L.linalg.inv(T([[0.0, 0.0], [0.0, 0.0]])), "LinAlgError",
     "linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because "
     "the input matrix is singular."),
    (lambda L, T: L.linalg.solve(T([[1.0, 0.0], [0.0, 1.0]]), T([1.0, 2.0, 3.0])), RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation AX = B (2x2 and 3x1)"),
    (lambda L, T: L.linalg.svd(T([[math.nan, 1.0], [1.0, 1.0]])), "LinAlgError",
     "linalg.svd: The algorithm failed to converge because the input matrix contained "
     "non-finite values."),
    (lambda L, T: L.linalg.qr(T([[1.0, 0.0], [0.0, 1.0]]), mode="bad"), RuntimeError,
     "qr received unrecognized mode 'bad' but expected one of 'reduced' (default), 'r', or "
     "'complete'"),
    (lambda L, T: L.linalg.det(T([[1, 2], [3, 4]], int)), RuntimeError,
     "linalg.det: Expected a floating point or complex tensor as input. Got Long"),
    (lambda L, T: L.linalg.eigh(T([[1.0, 0.0], [0.0, 1.0]]), UPLO="X"), RuntimeError,
     "Expected UPLO argument to be 'L' or 'U', but got X"),
    (lambda L, T: L.linalg.matrix_power(T([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]), 2), RuntimeError,
     "linalg.matrix_power: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda L, T: L.linalg.matrix_power(T([1.0, 2.0]), 2), RuntimeError,
     "linalg.matrix_power: The input tensor A must have at least 2 dimensions."),
    (lambda L, T: L.linalg.vector_norm(T([3, 4], int), dtype=L.float64), RuntimeError,
     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    (lambda L, T: L.linalg.vector_norm(T([3.0, 4.0]), dtype=L.float32), RuntimeError,
     "linalg.vector_norm: the dtype of the input (Double) should be convertible without "
     "narrowing to the specified dtype (Float)"),
    (lambda L, T: L.linalg.matrix_norm(T([[3.0, 4.0]]), dtype=L.float32), RuntimeError,
     "linalg.matrix_norm: the dtype of the input (Double) should be convertible without "
     "narrowing to the specified dtype (Float)"),
    (lambda L, T: L.linalg.vecdot(T([1, 2], int), T([3, 4], int)), RuntimeError,
     "linalg.vecdot: Expected a floating point or complex tensor as input. Got Long"),
    (lambda L, T: L.linalg.vecdot(T([1.0, 2.0]), T([3.0, 4.0]).to(L.float32)), RuntimeError,
     "linalg.vecdot: Expected x and y to have the same dtype, but found x of type Double and y "
     "of type Float instead"),
    (lambda L, T: L.linalg.cross(T([[1.0, 2.0, 3.0]]), T([1.0, 2.0, 3.0])), RuntimeError,
     "linalg.cross: inputs must have the same number of dimensions."),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(lib, case):
    fn, etype, text = ERRORS[case]

    def T(v, kind=float):
        return lib.tensor(v, dtype=lib.float64 if kind is float else lib.int64)

    if etype == "LinAlgError":
        etype = lib.linalg.LinAlgError
        assert issubclass(etype, RuntimeError)
    with pytest.raises(etype) as info:
        fn(lib, T)
    assert text in str(info.value)


def test_solve_dtype_mismatch(lib):
    a = lib.eye(2, dtype=lib.float32)
    b = lib.ones(2, dtype=lib.float64)
    with pytest.raises(RuntimeError, match="linalg.solve: Expected A and B to have the same "
                                           "dtype, but found A of type Float and B of type "
                                           "Double instead"):
        lib.linalg.solve(a, b)


@pytest.mark.skipif(IS_TORCH, reason="Ember's message for half precision")
def test_half_precision_not_implemented(lib):
    with pytest.raises(NotImplementedError, match="linalg.inv: not implemented for 'Half'"):
        lib.linalg.inv(lib.eye(2, dtype=lib.float16))


@pytest.mark.skipif(IS_TORCH, reason="LAPACK's result on NaN input is undefined; Ember gives NaN")
def test_eigh_of_nan_is_nan_not_a_hang(lib):
    w, V = lib.linalg.eigh(lib.tensor([[math.nan, 1.0], [1.0, 1.0]], dtype=lib.float64))
    assert np.isnan(to_np(w)).all() and np.isnan(to_np(V)).all()


# ---- functions composed of the decompositions ----

@pytest.mark.parametrize("ord", [2, 1, 0, math.inf, -math.inf, 3.5, -1])
@pytest.mark.parametrize("dim", [None, -1, (0, 2)], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_vector_norm(lib, rng, ord, dim, keepdim):
    a = rng.standard_normal((2, 3, 4))
    a[0, 0, 0] = 0.0
    got = lib.linalg.vector_norm(t(lib, a), ord, dim, keepdim)
    want = torch.linalg.vector_norm(torch.from_numpy(a), ord, dim, keepdim).numpy()
    close(got, want, "float64")


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf])
@pytest.mark.parametrize("dim", [(-2, -1), (0, 2), (2, 1)], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm(lib, rng, ord, dim, keepdim):
    a = rng.standard_normal((2, 3, 4))
    got = lib.linalg.matrix_norm(t(lib, a), ord, dim, keepdim)
    want = torch.linalg.matrix_norm(torch.from_numpy(a), ord, dim, keepdim).numpy()
    close(got, want, "float64")


@pytest.mark.parametrize("ord,dim,shape", [(None, None, (3, 4)), (2, None, (5,)),
                                           ("fro", None, (3, 4)), (1, (0, 1), (3, 4)),
                                           (math.inf, 1, (3, 4))], ids=str)
def test_norm(lib, rng, ord, dim, shape):
    a = rng.standard_normal(shape)
    close(lib.linalg.norm(t(lib, a), ord, dim),
          torch.linalg.norm(torch.from_numpy(a), ord, dim).numpy(), "float64")


def test_pinv_rank_power_cond(lib, rng):
    a = rng.standard_normal((2, 3, 5))
    close(lib.linalg.pinv(t(lib, a)), np.linalg.pinv(a), "float64", scale=50)
    s = rng.standard_normal((4, 4))
    s = s + s.T
    close(lib.linalg.pinv(t(lib, s), hermitian=True), np.linalg.pinv(s, hermitian=True),
          "float64", scale=50)
    low = rng.standard_normal((2, 4, 2)) @ rng.standard_normal((2, 2, 5))
    assert to_np(lib.linalg.matrix_rank(t(lib, low))).tolist() == [2, 2]
    assert lib.linalg.matrix_rank(t(lib, low)).dtype == lib.int64
    assert to_np(lib.linalg.matrix_rank(t(lib, low[0]), atol=1e3)).item() == 0
    sq = general(rng, (3,), 4, 4)
    for n in (0, 1, 2, 3, 5, -2):
        close(lib.linalg.matrix_power(t(lib, sq), n), np.linalg.matrix_power(sq, n), "float64",
              scale=50)
    close(lib.linalg.cond(t(lib, sq)), np.linalg.cond(sq), "float64", scale=50)
    close(lib.linalg.cond(t(lib, sq), "fro"), np.linalg.cond(sq, "fro"), "float64", scale=50)


def test_cross_vecdot_multi_dot_diagonal(lib, rng):
    v, w = rng.standard_normal((2, 3)), rng.standard_normal((1, 3))
    close(lib.linalg.cross(t(lib, v), t(lib, w)), np.cross(v, w), "float64")
    close(lib.linalg.vecdot(t(lib, v), t(lib, w)), np.sum(v * w, -1), "float64")
    ms = [rng.standard_normal(s) for s in [(3,), (3, 5), (5, 2), (2,)]]
    close(lib.linalg.multi_dot([t(lib, m) for m in ms]), np.linalg.multi_dot(ms), "float64")
    ms = [rng.standard_normal(s) for s in [(10, 100), (100, 5), (5, 50)]]
    close(lib.linalg.multi_dot([t(lib, m) for m in ms]), np.linalg.multi_dot(ms), "float64",
          scale=50)
    sq = rng.standard_normal((2, 4, 4))
    close(lib.linalg.diagonal(t(lib, sq), offset=1), np.diagonal(sq, 1, -2, -1), "float64")
    with pytest.raises(RuntimeError, match="must have length 3"):
        lib.linalg.cross(t(lib, np.ones((2, 4))), t(lib, np.ones((2, 4))))


@pytest.mark.parametrize("ord", [-1, -math.inf, math.inf, -0.5, 2, 0])
@pytest.mark.parametrize("dim", [None, (), 1, -1, (1,), 0, (0, 1)], ids=str)
def test_vector_norm_over_zero_elements(lib, ord, dim):
    """A minimum (ord < 0) or a maximum (inf) over zero elements has no identity: an error
    for all elements or an empty dimension, an empty result over non-empty dimensions of an
    empty tensor (PyTorch's rule; the array API's norms fill in 0 and inf instead)."""
    a = np.zeros((0, 3))
    try:
        want = torch.linalg.vector_norm(torch.from_numpy(a), ord, dim)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="cannot compute the .* norm on"):
            lib.linalg.vector_norm(t(lib, a), ord, dim)
        return
    close(lib.linalg.vector_norm(t(lib, a), ord, dim), want.numpy(), "float64")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("fn,args", [("vector_norm", (2,)), ("vector_norm", (3, -1)),
                                     ("vector_norm", (0.5, 0)), ("matrix_norm", ("fro",)),
                                     ("matrix_norm", (1,)), ("matrix_norm", (-math.inf,))],
                         ids=str)
def test_half_precision_norms_are_computed_in_float32(lib, dtype, fn, args):
    """float16 and bfloat16 norms are computed in float32 and rounded once, as in PyTorch:
    the squares of 300 and 400 overflow float16, their norm 500 does not."""
    a = np.array([[300.0, 400.0], [1.5, -2.0]])
    got = getattr(lib.linalg, fn)(t(lib, a, dtype), *args)
    want = getattr(torch.linalg, fn)(torch.from_numpy(a).to(getattr(torch, dtype)), *args)
    close(got, want.float().numpy(), dtype, scale=1.0)


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf])
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 0)], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm_of_empty_matrices(lib, ord, shape, keepdim):
    """Over zero elements a maximum is 0 and a minimum an IndexError, as in PyTorch."""
    a = np.zeros(shape)
    try:
        want = torch.linalg.matrix_norm(torch.from_numpy(a), ord, keepdim=keepdim)
    except IndexError:
        with pytest.raises(IndexError):
            lib.linalg.matrix_norm(t(lib, a), ord, keepdim=keepdim)
        return
    close(lib.linalg.matrix_norm(t(lib, a), ord, keepdim=keepdim), want.numpy(), "float64")


def test_rank_and_pinv_of_empty_matrices(lib):
    """Empty matrices have rank 0 and an empty pseudo-inverse, of the input's batch shape
    whatever the shape of the tolerances (PyTorch's rule)."""
    a = np.zeros((2, 0, 3))
    tols = np.array([[0.1], [0.2], [0.3]])
    for kw in ({}, {"rtol": tols}, {"atol": tols}):
        mine = {k: t(lib, v) for k, v in kw.items()}
        theirs = {k: torch.from_numpy(v) for k, v in kw.items()}
        want = torch.linalg.matrix_rank(torch.from_numpy(a), **theirs).numpy()
        close(lib.linalg.matrix_rank(t(lib, a), **mine), want, "int64")
        want = torch.linalg.pinv(torch.from_numpy(a), **theirs).numpy()
        close(lib.linalg.pinv(t(lib, a), **mine), want, "float64")


@pytest.mark.parametrize("hermitian", [False, True])
def test_pinv_gradient_of_a_rank_deficient_matrix(lib, autograd, hermitian):
    """The singular values at or below the tolerance are never divided by, so a zero one
    leaves the gradient finite: PyTorch's (it was NaN)."""
    a = np.diag([3.0, -1.0 if hermitian else 1.0, 0.0])
    x = lib.from_numpy(a.copy()).requires_grad_()
    lib.linalg.pinv(x, hermitian=hermitian).sum().backward()
    tx = torch.from_numpy(a.copy()).requires_grad_()
    torch.linalg.pinv(tx, hermitian=hermitian).sum().backward()
    close(x.grad, tx.grad.numpy(), "float64")


def test_matrix_power_returns_a_new_tensor(lib):
    a = t(lib, np.array([[1.0, 2.0], [3.0, 4.0]]))
    for n in (1, 0, 2, -1):
        assert lib.linalg.matrix_power(a, n) is not a
    out = lib.linalg.matrix_power(a, 1)
    out[0, 0] = 5.0
    assert a[0, 0].item() == 1.0


def test_vecdot_broadcasts_the_vector_dimension(lib, rng):
    """PyTorch broadcasts all dimensions of x and y, dim too (the array API does not)."""
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((2, 1))
    want = torch.linalg.vecdot(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    close(lib.linalg.vecdot(t(lib, x), t(lib, y)), want, "float64")


def test_large_batched_solve_against_numpy(lib, rng):
    a = general(rng, (64,), 32, 32)
    b = rng.standard_normal((64, 32, 8))
    close(lib.linalg.solve(t(lib, a), t(lib, b)), np.linalg.solve(a, b), "float64", scale=100)
    big = rng.standard_normal((300, 200))
    close(lib.linalg.svdvals(t(lib, big)), np.linalg.svd(big, compute_uv=False), "float64",
          scale=100)


@pytest.mark.parametrize("n, batch", [(12, (5,)), (40, (6,)), (100, (4,)), (300, ()), (450, ()),
                                      (960, ())], ids=str)
def test_lu_cholesky_solve_at_every_threading_size(lib, rng, n, batch, lib_threads):
    """Each size class of the LAPACK calls: the unblocked loops (n <= 16), batches spread over
    the pool (one call per thread), single matrices on one LAPACK thread or the blocked LU,
    and from potrf's threshold on LAPACK's own threads; at 1 and 2 threads, against NumPy."""
    a = general(rng, batch, n, n)
    s = spd(rng, batch, n)
    b = rng.standard_normal((*batch, n, 3))
    LU, piv = lib.linalg.lu_factor(t(lib, a))
    P, L, U = (to_np(x) for x in lib.lu_unpack(LU, piv))
    np.testing.assert_allclose(P @ L @ U, a, atol=1e-9 * n)
    sign, logabs = lib.linalg.slogdet(t(lib, a))
    sn, ln = np.linalg.slogdet(a)
    np.testing.assert_array_equal(to_np(sign), sn)
    np.testing.assert_allclose(to_np(logabs), ln, rtol=1e-10)
    np.testing.assert_allclose(to_np(lib.linalg.cholesky(t(lib, s))), np.linalg.cholesky(s),
                               rtol=1e-9, atol=1e-9)
    x = lib.linalg.solve(t(lib, a), t(lib, b))
    np.testing.assert_allclose(to_np(x), np.linalg.solve(a, b), rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("dtype", DTYPES)
def test_large_lu_pivots_info_and_singular_errors(lib, rng, dtype, lib_threads):
    """One large matrix (the blocked LU on 2 threads, LAPACK's getrf on 1): LAPACK's pivots,
    the first zero pivot's position in info, PyTorch's errors for a singular matrix."""
    scipy_linalg = pytest.importorskip("scipy.linalg")
    n = 300
    a = general(rng, (), n, n)
    LU, piv = lib.linalg.lu_factor(t(lib, a, dtype))
    want_lu, want_piv = scipy_linalg.lu_factor(a.astype(dtype))
    np.testing.assert_array_equal(to_np(piv), want_piv + 1)
    # (float32: 300 elimination steps in another order move small entries by ~1e-4)
    close(LU, want_lu, dtype, scale=100 if dtype == "float64" else 1000)
    singular = a.copy()
    singular[:, 200] = 0.0  # the elimination meets an exact zero column at step 201
    _, _, info = lib.linalg.lu_factor_ex(t(lib, singular, dtype))
    assert int(info) == 201
    if dtype == "float64":  # (float32's product of 300 pivots overflows: inf * 0, nan)
        assert float(lib.linalg.det(t(lib, singular, dtype))) == 0.0
    with pytest.raises(RuntimeError, match="singular"):
        lib.linalg.solve(t(lib, singular, dtype), t(lib, np.ones((n, 2)), dtype))
    with pytest.raises(RuntimeError, match="singular"):
        lib.linalg.inv(t(lib, singular, dtype))
