"""The composites of ember_tensor.linalg (_linalg_more.py) against PyTorch: the *_ex variants
and their info, the LU family (packed factors, pivots, P L U, solves), lstsq's results per
driver, matrix_exp, householder_product, vander, tensorinv and tensorsolve, with PyTorch's
errors. Their gradients are checked by ember-autograd's test_linalg_grad.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember_tensor as et


def _pair(a):
    return et.from_numpy(np.ascontiguousarray(a)), torch.from_numpy(np.ascontiguousarray(a))


def _close(got, want, rtol=1e-10, atol=1e-12):
    assert str(got.dtype).rpartition(".")[2] == str(want.dtype).rpartition(".")[2]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol, atol=atol)


RNG = np.random.default_rng(11)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (5, 3), (3, 5), (2, 0, 0), (40, 40),
                                   (3, 70, 50)])
def test_lu_factor_matches_lapack(shape):
    # on the CPU without a gradient to carry: LAPACK's getrf (_linalg_getrf)
    e, t = _pair(RNG.uniform(-1, 1, shape))
    (LU, piv), (tLU, tpiv) = et.linalg.lu_factor(e), torch.linalg.lu_factor(t)
    _close(LU, tLU)
    if LU.numel():
        assert tuple(LU.stride()) == tuple(tLU.stride())  # column-major, as LAPACK leaves it
    assert piv.dtype == et.int32 and piv.tolist() == tpiv.tolist()
    for got, want in zip(et.linalg.lu(e), torch.linalg.lu(t)):
        _close(got, want)
    # the differentiable elimination that inputs requiring grad (and other devices) take
    LU2, piv2, info2 = et._linalg_more._lu_elimination(e, True)
    _close(LU2, tLU)
    assert piv2.tolist() == tpiv.tolist()
    assert info2.tolist() == torch.linalg.lu_factor_ex(t).info.tolist()


@pytest.mark.parametrize("dtype", ["float32", "complex64", "complex128"])
def test_getrf_of_each_dtype_matches_torch(dtype):
    a = RNG.uniform(-1, 1, (2, 6, 5))
    if dtype.startswith("complex"):
        a = a + 1j * RNG.uniform(-1, 1, (2, 6, 5))
    e, t = _pair(a.astype(dtype))
    LU, piv, info = et._C._linalg_getrf(e)
    tLU, tpiv, tinfo = torch.linalg.lu_factor_ex(t)
    _close(LU, tLU, rtol=1e-5 if dtype.endswith("64") and dtype != "complex128" else 1e-10,
           atol=1e-6)
    assert piv.tolist() == tpiv.tolist() and info.tolist() == tinfo.tolist()
    with pytest.raises(RuntimeError, match="_linalg_getrf"):
        et._C._linalg_getrf(et.ones(3))


def test_lu_solve_every_side_and_adjoint():
    a = RNG.uniform(-1, 1, (2, 4, 4)) + 2 * np.eye(4)
    e, t = _pair(a)
    eb, tb = _pair(RNG.uniform(-1, 1, (2, 4, 3)))
    er, tr = _pair(RNG.uniform(-1, 1, (2, 3, 4)))
    f, tf = et.linalg.lu_factor(e), torch.linalg.lu_factor(t)
    for left, adjoint in [(True, False), (True, True), (False, False), (False, True)]:
        b, tb_ = (eb, tb) if left else (er, tr)
        _close(et.linalg.lu_solve(*f, b, left=left, adjoint=adjoint),
               torch.linalg.lu_solve(*tf, tb_, left=left, adjoint=adjoint))


def test_singular_matrices_report_info_or_raise():
    e, t = _pair(np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 3.0]]]))
    inv, info = et.linalg.inv_ex(e)
    assert info.tolist() == torch.linalg.inv_ex(t).info.tolist() == [2, 0]
    _close(inv[1], torch.linalg.inv(t[1]))
    with pytest.raises(RuntimeError):
        et.linalg.inv_ex(e, check_errors=True)
    assert et.linalg.lu_factor_ex(e).info.tolist() == torch.linalg.lu_factor_ex(t).info.tolist()
    with pytest.raises(et.linalg.LinAlgError, match="U\\[2,2\\] is zero"):
        et.linalg.lu_factor(e)
    L, info = et.linalg.cholesky_ex(-e)
    assert info.tolist() == torch.linalg.cholesky_ex(-t).info.tolist()
    assert et.linalg.solve_ex(e, e).info.tolist() == torch.linalg.solve_ex(t, t).info.tolist()


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_results_per_driver(driver):
    e, t = _pair(RNG.uniform(-1, 1, (2, 5, 3)))
    eb, tb = _pair(RNG.uniform(-1, 1, (2, 5, 2)))
    got, want = et.linalg.lstsq(e, eb, driver=driver), torch.linalg.lstsq(t, tb, driver=driver)
    _close(got.solution, want.solution, 1e-8, 1e-10)
    _close(got.residuals, want.residuals, 1e-8, 1e-10)
    assert got.rank.tolist() == want.rank.tolist()
    _close(got.singular_values, want.singular_values, 1e-8, 1e-10)


@pytest.mark.parametrize("scale", [0.1, 1.0, 30.0])
def test_matrix_exp(scale):
    e, t = _pair(RNG.uniform(-1, 1, (2, 4, 4)) * scale)
    _close(et.linalg.matrix_exp(e), torch.linalg.matrix_exp(t), 1e-9, 1e-12)
    _close(et.matrix_exp(e.float()), torch.matrix_exp(t.float()).double().float(), 2e-5, 1e-5)


def test_householder_product_matches_orgqr():
    a = RNG.uniform(-1, 1, (2, 5, 3))
    e, t = _pair(a)
    et_tau, t_tau = _pair(RNG.uniform(0, 1, (2, 2)))
    _close(et.linalg.householder_product(e, et_tau), torch.linalg.householder_product(t, t_tau))
    with pytest.raises(RuntimeError, match="input.shape\\[-2\\] must be greater"):
        et.linalg.householder_product(e.mT, et_tau)


def test_vander_tensorinv_tensorsolve():
    e, t = _pair(np.array([[2.0, 3.0, -1.0]]))
    _close(et.linalg.vander(e), torch.linalg.vander(t))
    _close(et.linalg.vander(e, N=5), torch.linalg.vander(t, N=5))
    a = RNG.uniform(-1, 1, (6, 6)) + 3 * np.eye(6)
    e, t = _pair(a.reshape(2, 3, 6))
    _close(et.linalg.tensorinv(e, 2), torch.linalg.tensorinv(t, 2))
    eb, tb = _pair(RNG.uniform(-1, 1, (2, 3)))
    _close(et.linalg.tensorsolve(e, eb), torch.linalg.tensorsolve(t, tb))
    with pytest.raises(RuntimeError, match="prod\\(self.shape\\[ind:\\]\\) == "):
        et.linalg.tensorinv(e, 1)


def test_top_level_decompositions_keep_pytorchs_conventions():
    a = RNG.uniform(-1, 1, (4, 3))
    e, t = _pair(a)
    for got, want in zip(et.svd(e, compute_uv=False), torch.svd(t, compute_uv=False)):
        _close(got, want)
    U, S, V = et.svd(e)
    _close(U @ et.diag_embed(S) @ V.mT, torch.from_numpy(a))
    sq, tsq = _pair(np.array([[-1.0, 0.0], [0.0, 2.0]]))
    assert np.isnan(et.logdet(sq).item()) and np.isnan(torch.logdet(tsq).item())
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        LU, piv = et.lu(sq)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tLU, tpiv = torch.lu(tsq)
    _close(LU, tLU)
    assert piv.tolist() == tpiv.tolist()


def _symmetric(shape, dtype=np.float64, seed=12):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.uniform(-1, 1, shape)
    return (x + np.swapaxes(x, -1, -2)).astype(dtype)


@pytest.mark.parametrize("dtype,hermitian", [(np.float64, False), (np.float32, True),
                                             (np.complex128, False), (np.complex128, True),
                                             (np.complex64, True)])
@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (2, 0, 0), (1, 1)])
def test_ldl_factor_and_solve_match_lapack(shape, dtype, hermitian):
    a = _symmetric(shape, dtype)
    if hermitian:  # Hermitian: x + x^H
        a = (a + np.conj(np.swapaxes(a, -1, -2))) / 2
    e, t = _pair(a)
    tol = dict(rtol=1e-4, atol=1e-5) if np.dtype(dtype).itemsize <= 8 and dtype != np.float64 \
        else {}
    LD, piv, info = et.linalg.ldl_factor_ex(e, hermitian=hermitian)
    tLD, tpiv, tinfo = torch.linalg.ldl_factor_ex(t, hermitian=hermitian)
    _close(LD, tLD, **tol)
    assert piv.dtype == et.int32 and piv.tolist() == tpiv.tolist()
    assert info.tolist() == tinfo.tolist()
    b = RNG.standard_normal((*shape[:-1], 3)).astype(dtype)
    eb, tb = _pair(b)
    _close(et.linalg.ldl_solve(LD, piv, eb, hermitian=hermitian),
           torch.linalg.ldl_solve(tLD, tpiv, tb, hermitian=hermitian), **tol)
    LD2, piv2 = et.linalg.ldl_factor(e, hermitian=hermitian)
    _close(LD2, LD, rtol=0, atol=0)


def test_ldl_solve_broadcasts_batches():
    """PyTorch 2.13 crashes (a segfault) on an ldl_solve whose batches broadcast; the
    reference here expands LD and the pivots first."""
    e, t = _pair(_symmetric((2, 4, 4)))
    eb, tb = _pair(RNG.standard_normal((3, 2, 4, 2)))
    LD, piv = et.linalg.ldl_factor(e)
    tLD, tpiv = torch.linalg.ldl_factor(t)
    want = torch.linalg.ldl_solve(tLD.expand(3, 2, 4, 4).contiguous(),
                                  tpiv.expand(3, 2, 4).contiguous(), tb)
    _close(et.linalg.ldl_solve(LD, piv, eb), want)


def test_ldl_singular_matrices_report_info_or_raise():
    e, t = _pair(np.array([[[0.0, 0.0], [0.0, 1.0]], [[2.0, 1.0], [1.0, 3.0]]]))
    assert et.linalg.ldl_factor_ex(e).info.tolist() == torch.linalg.ldl_factor_ex(t).info.tolist()
    with pytest.raises(et.linalg.LinAlgError, match=r"\(Batch element 0\).*D\[0, 0\] is exactly"):
        et.linalg.ldl_factor(e)
    with pytest.raises(et.linalg.LinAlgError, match="ldl_factor_ex"):
        et.linalg.ldl_factor_ex(e, check_errors=True)


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.ldl_factor(m.zeros(3, 2)),
    lambda m: m.linalg.ldl_factor(m.zeros(3, 3, dtype=m.int64)),
    lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32), m.zeros(2, 1)),
    lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32),
                                 m.zeros(3, 1, dtype=m.float64)),
    lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(2, dtype=m.int32), m.zeros(3, 1)),
])
def test_ldl_errors_match_torch(call):
    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError) as got:
        call(et)
    assert str(got.value).split(":")[0] == str(want.value).split(":")[0]


@pytest.mark.parametrize("bad", [0, 4, -4])
def test_ldl_solve_refuses_pivots_out_of_range(bad):
    """LAPACK would read rows out of range with them (PyTorch checks only for 0)."""
    piv = et.tensor([1, bad, 3], dtype=et.int32)
    with pytest.raises(RuntimeError, match="must all satisfy 1 <= \\|pivot\\| <= 3"):
        et.linalg.ldl_solve(et.eye(3), piv, et.zeros(3, 1))


def test_ldl_outputs_require_grad_but_have_no_derivative(autograd):
    A = et.tensor(_symmetric((3, 3)), requires_grad=True)
    LD, _ = et.linalg.ldl_factor(A)
    assert LD.requires_grad
    with pytest.raises(NotImplementedError, match="linalg_ldl_factor_ex"):
        LD.sum().backward()
