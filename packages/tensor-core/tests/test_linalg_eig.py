"""linalg.eig / linalg.eigvals (LAPACK's geev) on real and complex matrices, and linalg.solve /
linalg.inv on complex ones, against PyTorch: the eigenvalues (as sets: their order is
LAPACK's), the eigen-equation A V = V diag(L), unit eigenvectors, dtypes and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_tensor as et

RNG = np.random.default_rng(11)


def _matrix(shape, dtype):
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def _sorted(w):
    w = np.asarray(w)
    if w.size == 0:
        return w
    # by the real part rounded (conjugate pairs tie up to rounding), then the imaginary part
    return np.take_along_axis(w, np.lexsort((w.imag, np.round(w.real, 3)), axis=-1), -1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (7, 7), (3, 5, 5), (2, 1, 6, 6), (0, 0)])
def test_eig_against_torch(shape, dtype):
    a = _matrix(shape, dtype)
    L, V = et.linalg.eig(et.tensor(a))
    tL = torch.linalg.eig(torch.tensor(a))[0].numpy()
    cdt = {"float32": "complex64", "float64": "complex128"}.get(dtype, dtype)
    assert str(L.dtype).endswith(cdt) and str(V.dtype).endswith(cdt)
    assert tuple(L.shape) == shape[:-1] and tuple(V.shape) == shape
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-10
    np.testing.assert_allclose(_sorted(L.numpy()), _sorted(tL), atol=tol * 10)
    Ln, Vn = L.numpy(), V.numpy()
    np.testing.assert_allclose(a @ Vn, Vn * Ln[..., None, :], atol=tol * 10)
    if shape[-1]:
        np.testing.assert_allclose(np.linalg.norm(Vn, axis=-2), 1.0, atol=tol)
    np.testing.assert_allclose(et.linalg.eigvals(et.tensor(a)).numpy(), Ln, atol=tol)


def test_real_matrix_with_complex_eigenvalues():
    a = np.array([[0.0, -1.0], [1.0, 0.0]])  # a rotation: +-i
    L, V = et.linalg.eig(et.tensor(a))
    np.testing.assert_allclose(_sorted(L.numpy()), [[-1j, 1j]][0], atol=1e-14)
    np.testing.assert_allclose(a @ V.numpy(), V.numpy() * L.numpy()[None, :], atol=1e-14)
    # the pair's vectors are each other's conjugates, as LAPACK packs them
    np.testing.assert_allclose(V.numpy()[:, 0], V.numpy()[:, 1].conj())


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_is_pytorchs_error(bad):
    a = np.array([[1.0, bad], [0.0, 2.0]])
    for m in (torch, et):  # eig raises, eigvals gives NaN
        with pytest.raises(RuntimeError, match="input tensor should not contain infs or NaNs"):
            m.linalg.eig(m.tensor(a))
        with pytest.raises(RuntimeError, match="input tensor should not contain infs or NaNs"):
            m.linalg.eig(m.tensor(a * 1j))
    assert np.isnan(et.linalg.eigvals(et.tensor(a)).numpy()).all()
    assert np.isnan(et.linalg.eigvals(et.tensor(a * 1j)).numpy()).all()


@pytest.mark.parametrize("fn", ["eig", "eigvals"])
def test_eig_errors_are_pytorchs(fn):
    with pytest.raises(RuntimeError):  # torch 2.13: "Unknown Complex ScalarType for Long"
        getattr(torch.linalg, fn)(torch.ones(2, 2, dtype=torch.int64))
    with pytest.raises(RuntimeError, match=f"linalg_{fn}: dtype int64 is not supported"):
        getattr(et.linalg, fn)(et.ones(2, 2, dtype=et.int64))
    for m in (torch, et):
        with pytest.raises(RuntimeError, match="must be batches of square matrices, but they "
                                               "are 2 by 3 matrices"):
            getattr(m.linalg, fn)(m.ones(2, 3))
        with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
            getattr(m.linalg, fn)(m.ones(3))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_solve_and_inv(dtype):
    a = (_matrix((3, 4, 4), dtype) + 4 * np.eye(4)).astype(dtype)
    b = _matrix((3, 4, 2), dtype)
    tol = 1e-4 if dtype == "complex64" else 1e-12
    for left in (True, False):
        bb = b if left else np.swapaxes(b, -1, -2)
        got = et.linalg.solve(et.tensor(a), et.tensor(bb), left=left).numpy()
        want = torch.linalg.solve(torch.tensor(a), torch.tensor(bb), left=left)
        want = want.resolve_conj().numpy()
        np.testing.assert_allclose(got, want, atol=tol)
    np.testing.assert_allclose(et.linalg.inv(et.tensor(a)).numpy(),
                               torch.linalg.inv(torch.tensor(a)).resolve_conj().numpy(), atol=tol)
    with pytest.raises(et.linalg.LinAlgError, match="singular"):
        et.linalg.inv(et.zeros(2, 2, dtype=getattr(et, dtype)))
