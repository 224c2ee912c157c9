"""Gradients of the matrix decompositions and solvers (ember_tensor.linalg: cholesky, qr,
eigh, eigvalsh, svd, svdvals, solve, inv, det, slogdet, solve_triangular).

One row per op path: the same function runs on ember and on torch (``m`` is the module,
``ember_tensor`` or ``torch``; ``m.linalg`` is the namespace). Each row is checked with
``ember_autograd.gradcheck`` in reverse and forward mode (against central differences),
against torch (output values and vector-Jacobian products with random weights) and, where
marked, with ``gradgradcheck``. Inputs are float64 and well-conditioned: a shift of the
diagonal keeps general matrices invertible, symmetric positive-definite inputs are
``x x^T + n I``, eigen- and singular values are distinct. Outputs determined only up to
signs (eigenvectors, singular vectors, Q and R) go through a normalisation that makes the
function well defined (gauge-invariant), as PyTorch's own tests do.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember_autograd as ea
import ember_tensor as et
from ember_autograd import formulas_linalg
from torch_compare import assert_matches_torch, ember_fn

# torch's forward AD loads its decompositions through torch.jit.script on first use
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)

# ----------------------------------------------------------------------------- inputs


class G:
    """A float64 input that requires grad (``grad=False``: a constant), uniform in [-1, 1),
    plus ``shift`` times the identity on its last two dims; ``nc``: transposed storage
    (non-contiguous)."""

    def __init__(self, *shape, shift=0.0, nc=False, seed=None, grad=True):
        self.shape, self.shift, self.nc, self.seed, self.grad = shape, shift, nc, seed, grad

    def array(self, i):
        rng = np.random.default_rng(2000 + i if self.seed is None else self.seed)
        a = rng.uniform(-1.0, 1.0, size=self.shape)
        if self.shift:
            a = a + self.shift * np.eye(self.shape[-2], self.shape[-1])
        return a

    def build(self, lib, i):
        a = self.array(i)
        from_numpy = et.from_numpy if lib is et else torch.from_numpy
        if self.nc:
            t = from_numpy(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
            assert not t.is_contiguous()
        else:
            t = from_numpy(a.copy())
        return t.requires_grad_() if self.grad else t


def build(specs, lib):
    return [s.build(lib, i) if isinstance(s, G) else s for i, s in enumerate(specs)]


# ----------------------------------------------------------------------- well-defined functions


def _eye(m, n):
    return m.eye(n, dtype=m.float64)


def _spd(m, x):
    """x x^T + n I: symmetric positive-definite, built from x (so all of x is an input)."""
    return x.matmul(x.mT) + x.shape[-1] * _eye(m, x.shape[-1])


def _sym(x):
    return (x + x.mT) / 2


def _col_signs(u):
    """The signs making the first row of ``u`` positive (one per column)."""
    return u[..., :1, :].sign()


def _eigh(m, x, UPLO="L"):
    w, v = m.linalg.eigh(_sym(x), UPLO)
    return w, v * _col_signs(v)


def _svd(m, x, full_matrices=False):
    u, s, vh = m.linalg.svd(x, full_matrices=full_matrices)
    k = s.shape[-1]
    d = _col_signs(u[..., :k])
    return u[..., :k] * d, s, vh[..., :k, :] * d.mT


def _svd_full_product(m, x):
    """A gauge-invariant function of a full SVD: U_k diag(S^3) Vh_k (the extra columns of U
    are not determined by A; their gradient is ignored, as in PyTorch)."""
    u, s, vh = m.linalg.svd(x, full_matrices=True)
    k = s.shape[-1]
    return u[..., :k].matmul((s**3).unsqueeze(-1) * vh[..., :k, :])


def _qr(m, x, mode="reduced"):
    q, r = m.linalg.qr(x, mode=mode)
    d = r.diagonal(0, -2, -1).sign()
    k = d.shape[-1]
    return q[..., :k] * d.unsqueeze(-2), r * d.unsqueeze(-1)


def _deprecated(fn, *args):
    """fn(*args) with its deprecation warning silenced (both libraries give one)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*args)


def _solve_tri(upper, left=True, unitriangular=False):
    def fn(m, a, b):
        return m.linalg.solve_triangular(
            a, b, upper=upper, left=left, unitriangular=unitriangular
        )

    return fn


GG = {"gg": True}

# (id, fn(m, *args), args[, options]). options: gg (run gradgradcheck), torch (compare with
# torch; default True)
ROWS = [
    # ---- inverse, determinants
    ("inv", lambda m, a: m.linalg.inv(a), [G(3, 3, shift=2.0)], {"gg": True}),
    ("inv_batched_nc", lambda m, a: m.linalg.inv(a), [G(2, 3, 3, shift=2, nc=True)], {"gg": True}),
    ("det", lambda m, a: m.linalg.det(a), [G(3, 3, shift=1.0)], {"gg": True}),
    ("det_batched", lambda m, a: m.linalg.det(a), [G(2, 2, 3, 3, shift=1.0)], {"gg": True}),
    ("det_1x1", lambda m, a: m.linalg.det(a), [G(2, 1, 1, shift=1.0)]),
    ("slogdet", lambda m, a: m.linalg.slogdet(a), [G(2, 3, 3, shift=1.0)], {"gg": True}),
    ("slogdet_negative", lambda m, a: m.linalg.slogdet(-a), [G(3, 3, shift=1.0)]),
    ("slogdet_logabsdet", lambda m, a: m.linalg.slogdet(a)[1], [G(4, 4, shift=2.0, nc=True)]),
    # ---- solve (B: matrices, vectors, batches of vectors, broadcasting)
    ("solve", lambda m, a, b: m.linalg.solve(a, b), [G(3, 3, shift=2.0), G(3, 2)], {"gg": True}),
    (
        "solve_batched_bcast",
        lambda m, a, b: m.linalg.solve(a, b),
        [G(2, 1, 3, 3, shift=2.0), G(4, 3, 2)],
        {"gg": True},
    ),
    ("solve_vector", lambda m, a, b: m.linalg.solve(a, b), [G(2, 3, 3, shift=2), G(3)], GG),
    (
        "solve_batch_of_vectors",
        lambda m, a, b: m.linalg.solve(a, b),
        [G(2, 3, 3, shift=2.0), G(2, 3)],
        {"gg": True},
    ),
    (
        "solve_bcast_A",
        lambda m, a, b: m.linalg.solve(a, b),
        [G(3, 3, shift=2.0, nc=True), G(2, 3, 4)],
    ),
    (
        "solve_right",
        lambda m, a, b: m.linalg.solve(a, b, left=False),
        [G(3, 3, shift=2.0), G(2, 1, 4, 3)],
        {"gg": True},
    ),
    ("solve_A_only", lambda m, a, b: m.linalg.solve(a, b), [G(3, 3, shift=2), G(3, 2, grad=False)]),
    ("solve_B_only", lambda m, a, b: m.linalg.solve(a, b), [G(3, 3, shift=2.0, grad=False), G(3)]),
    # ---- solve_triangular
    ("solve_tri_upper", _solve_tri(True), [G(3, 3, shift=2.0), G(3, 2)], {"gg": True}),
    ("solve_tri_lower_bcast", _solve_tri(False), [G(2, 1, 3, 3, shift=2.0), G(4, 3, 2)]),
    ("solve_tri_upper_right", _solve_tri(True, left=False), [G(2, 3, 3, shift=2.0), G(4, 3)]),
    (
        "solve_tri_lower_unit",
        _solve_tri(False, unitriangular=True),
        [G(3, 3, nc=True), G(3, 2)],
        {"gg": True},
    ),
    (
        "solve_tri_upper_unit_right",
        _solve_tri(True, left=False, unitriangular=True),
        [G(3, 3), G(2, 3)],
    ),
    # ---- cholesky
    ("cholesky", lambda m, x: m.linalg.cholesky(_spd(m, x)), [G(3, 3)], {"gg": True}),
    (
        "cholesky_upper_batched",
        lambda m, x: m.linalg.cholesky(_spd(m, x), upper=True),
        [G(2, 4, 4, nc=True)],
        {"gg": True},
    ),
    # ---- qr
    ("qr_tall", lambda m, x: _qr(m, x), [G(5, 3)], {"gg": True}),
    ("qr_square_batched", lambda m, x: _qr(m, x), [G(2, 3, 3, shift=1.0)]),
    ("qr_wide", lambda m, x: _qr(m, x), [G(2, 3, 5)], {"gg": True}),
    ("qr_complete_wide", lambda m, x: _qr(m, x, "complete"), [G(3, 4, nc=True)]),
    ("qr_complete_square", lambda m, x: _qr(m, x, "complete"), [G(3, 3, shift=1.0)]),
    ("qr_R_only", lambda m, x: _qr(m, x)[1], [G(4, 3)]),
    ("qr_Q_only", lambda m, x: _qr(m, x)[0], [G(4, 3)]),
    # ---- eigh, eigvalsh
    ("eigh", lambda m, x: _eigh(m, x), [G(3, 3)], {"gg": True}),
    ("eigh_upper_batched", lambda m, x: _eigh(m, x, "U"), [G(2, 4, 4, nc=True)]),
    ("eigh_values_only", lambda m, x: m.linalg.eigh(_sym(x))[0], [G(3, 3)]),
    ("eigh_vectors_only", lambda m, x: _eigh(m, x)[1], [G(3, 3)]),
    ("eigvalsh", lambda m, x: m.linalg.eigvalsh(_sym(x)), [G(2, 3, 3)], {"gg": True}),
    ("eigvalsh_upper", lambda m, x: m.linalg.eigvalsh(_sym(x), UPLO="U"), [G(4, 4)]),
    # ---- svd, svdvals
    ("svd_tall", lambda m, x: _svd(m, x), [G(4, 3)], {"gg": True}),
    ("svd_wide_batched", lambda m, x: _svd(m, x), [G(2, 3, 5, nc=True)], {"gg": True}),
    ("svd_square", lambda m, x: _svd(m, x), [G(3, 3)]),
    ("svd_S_only", lambda m, x: m.linalg.svd(x)[1], [G(4, 3)], {"gg": True}),
    ("svd_U_only", lambda m, x: _svd(m, x)[0], [G(4, 3)]),
    ("svd_Vh_only", lambda m, x: _svd(m, x)[2], [G(3, 4)]),
    ("svd_full_tall", lambda m, x: _svd(m, x, full_matrices=True), [G(5, 3)]),
    ("svd_full_wide", lambda m, x: _svd(m, x, full_matrices=True), [G(2, 4)]),
    ("svd_full_product", _svd_full_product, [G(4, 2)]),
    ("svdvals", lambda m, x: m.linalg.svdvals(x), [G(2, 3, 4)], {"gg": True}),
    ("svdvals_tall_nc", lambda m, x: m.linalg.svdvals(x), [G(5, 3, nc=True)]),
    # ---- PyTorch's top-level decompositions and the composites of torch.linalg
    ("cholesky_solve", lambda m, b, x: m.cholesky_solve(b, m.linalg.cholesky(_spd(m, x))),
     [G(3, 2), G(3, 3)], {"gg": True}),
    ("cholesky_solve_upper", lambda m, b, x: m.cholesky_solve(
        b, m.linalg.cholesky(_spd(m, x), upper=True), True), [G(2, 3, 2), G(3, 3)]),
    ("cholesky_inverse", lambda m, x: m.cholesky_inverse(m.linalg.cholesky(_spd(m, x))),
     [G(3, 3)]),
    ("pinverse", lambda m, x: m.pinverse(x), [G(4, 3)]),
    ("linalg_pinv_rank_deficient", lambda m, a, b: m.linalg.pinv(a @ b.mT), [G(4, 2), G(3, 2)]),
    ("linalg_pinv_hermitian", lambda m, x: m.linalg.pinv(x + x.mT, hermitian=True), [G(3, 3)]),
    ("logdet", lambda m, x: m.logdet(_spd(m, x)), [G(3, 3)], {"gg": True}),
    ("triangular_solve", lambda m, b, a: _deprecated(m.triangular_solve, b,
                                                      a.triu() + 3 * _eye(m, 3))[0],
     [G(3, 2), G(3, 3)]),
    ("triangular_solve_transpose", lambda m, b, a: _deprecated(
        m.triangular_solve, b, a.tril() + 3 * _eye(m, 3), False, True)[0], [G(3, 2), G(3, 3)]),
    ("lu_factor", lambda m, a: m.linalg.lu_factor(a)[0], [G(3, 3, shift=2.0)], {"gg": True}),
    ("lu", lambda m, a: m.linalg.lu(a)[1:], [G(2, 4, 3, shift=2.0)]),
    ("lu_solve", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b),
     [G(3, 3, shift=2.0), G(3, 2)], {"gg": True}),
    ("lu_solve_right_adjoint", lambda m, a, b: m.linalg.lu_solve(
        *m.linalg.lu_factor(a), b, left=False, adjoint=True), [G(3, 3, shift=2.0), G(2, 3)]),
    ("lu_solve_legacy", lambda m, a, b: _deprecated(m.lu_solve, b, *m.linalg.lu_factor(a)),
     [G(3, 3, shift=2.0), G(3, 2)]),
    ("lu_unpack", lambda m, a: m.lu_unpack(*m.linalg.lu_factor(a))[1:],
     [G(3, 3, shift=2.0)]),
    ("matrix_exp", lambda m, a: m.linalg.matrix_exp(a), [G(3, 3)], {"gg": True}),
    ("matrix_exp_scaled", lambda m, a: m.matrix_exp(8 * a), [G(2, 3, 3)]),
    ("householder_product", lambda m, a, t: m.linalg.householder_product(a, t),
     [G(4, 3), G(2)]),
    ("lstsq", lambda m, a, b: m.linalg.lstsq(a, b)[0], [G(4, 3, shift=2.0), G(4, 2)]),
    ("vander", lambda m, x: m.linalg.vander(x, N=4), [G(2, 3)]),
    ("tensorinv", lambda m, a: m.linalg.tensorinv(a.reshape(2, 3, 6), 2),
     [G(6, 6, shift=3.0)]),
    ("tensorsolve", lambda m, a, b: m.linalg.tensorsolve(a.reshape(2, 3, 6), b),
     [G(6, 6, shift=3.0), G(2, 3)]),
    ("inv_ex", lambda m, a: m.linalg.inv_ex(a)[0], [G(3, 3, shift=2.0)]),
    ("cholesky_ex", lambda m, x: m.linalg.cholesky_ex(_spd(m, x))[0], [G(3, 3)]),
    ("solve_ex", lambda m, a, b: m.linalg.solve_ex(a, b)[0], [G(3, 3, shift=2.0), G(3, 2)]),
]

IDS = [r[0] for r in ROWS]
assert len(set(IDS)) == len(IDS)


def _opts(row):
    return row[3] if len(row) > 3 else {}


GG_ROWS = [r for r in ROWS if _opts(r).get("gg")]


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_gradcheck(row):
    fn, specs = row[1], row[2]
    assert ea.gradcheck(ember_fn(fn), tuple(build(specs, et)))


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_forward_ad(row):
    fn, specs = row[1], row[2]
    args = tuple(build(specs, et))
    assert ea.gradcheck(ember_fn(fn), args, check_forward_ad=True, check_backward_ad=False)


@pytest.mark.parametrize("row", GG_ROWS, ids=[r[0] for r in GG_ROWS])
def test_gradgradcheck(row):
    fn, specs = row[1], row[2]
    assert ea.gradgradcheck(
        ember_fn(fn), tuple(build(specs, et)), gen_non_contig_grad_outputs=True
    )


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_matches_torch(row):
    fn, specs = row[1], row[2]
    e_args, t_args = build(specs, et), build(specs, torch)
    pairs = [(e, t) for s, e, t in zip(specs, e_args, t_args) if isinstance(s, G)]
    assert_matches_torch(fn(et, *e_args), fn(torch, *t_args), pairs, 1e-10, 1e-12, 1e-9, 1e-11)


# ----------------------------------------------------------------------------- beyond the table


def _pair(a):
    return et.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(a.copy()).requires_grad_()


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape)


def test_one_output_of_a_tuple_gets_the_only_gradient():
    """The node of a tuple-returning op runs when any output has a gradient (not only
    output 0): S alone, Vh alone, R alone, logabsdet alone, eigenvalues alone."""
    a = _rand(4, 3, seed=1)
    x = et.from_numpy(a).requires_grad_()
    u, s, vh = et.linalg.svd(x, full_matrices=False)
    (g,) = ea.grad(s.sum(), x)
    np.testing.assert_allclose(g.numpy(), (u.matmul(vh)).detach().numpy(), atol=1e-12)
    for out_index, f in (
        (1, lambda m, x: m.linalg.svd(x)),
        (2, lambda m, x: m.linalg.svd(x, full_matrices=False)),
        (1, lambda m, x: m.linalg.qr(x)),
        (0, lambda m, x: m.linalg.eigh(_sym(x))),
        (1, lambda m, x: m.linalg.slogdet(x)),
    ):
        e, t = _pair(a[:3] + 2 * np.eye(3))
        eo, to = f(et, e)[out_index], f(torch, t)[out_index]
        if out_index == 2:  # Vh alone: a gauge-invariant function of it
            eo, to = eo.mT.matmul(eo), to.mT.matmul(to)
        (eo * eo).sum().backward()
        (to * to).sum().backward()
        assert e.grad is not None
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-11)


def test_tuple_outputs_require_grad_with_their_output_numbers():
    x = et.from_numpy(_rand(4, 3)).requires_grad_()
    u, s, vh = et.linalg.svd(x)
    assert u.requires_grad and s.requires_grad and vh.requires_grad
    assert u.grad_fn is s.grad_fn is vh.grad_fn
    assert u.grad_fn.name() == "LinalgSvdBackward0"
    q, r = et.linalg.qr(x)
    assert q.grad_fn is r.grad_fn
    # an integral output of a tuple (sort's indices) still does not require grad
    values, indices = x.sort(0)
    assert values.requires_grad and not indices.requires_grad


def test_unused_outputs_give_none_and_all_none_gives_nothing():
    x = et.from_numpy(_rand(3, 3)).requires_grad_()
    u, s, vh = et.linalg.svd(x)
    assert all(g is None for g in u.grad_fn.apply([None, None, None]))


def test_qr_mode_r_backward_raises_like_torch():
    a = _rand(3, 3, seed=2)
    e, t = _pair(a)
    with pytest.raises(RuntimeError) as t_err:
        torch.linalg.qr(t, mode="r")[1].sum().backward()
    q, r = et.linalg.qr(e, mode="r")
    assert r.requires_grad
    with pytest.raises(NotImplementedError) as e_err:
        r.sum().backward()
    assert str(e_err.value) == str(t_err.value) == formulas_linalg.QR_MODE_R_MESSAGE
    assert isinstance(e_err.value, RuntimeError)  # what torch users catch


def test_qr_complete_tall_backward_raises_like_torch():
    a = _rand(4, 3, seed=3)
    e, t = _pair(a)
    with pytest.raises(RuntimeError) as t_err:
        torch.linalg.qr(t, mode="complete")[0].sum().backward()
    with pytest.raises(NotImplementedError) as e_err:
        et.linalg.qr(e, mode="complete")[0].sum().backward()
    assert str(e_err.value) == str(t_err.value)


def test_qr_mode_r_forward_ad_raises():
    from ember_autograd import forward_ad as fwad

    x = et.from_numpy(_rand(3, 3))
    with fwad.dual_level():
        d = fwad.make_dual(x, et.ones_like(x))
        with pytest.raises(NotImplementedError, match="mode='r'"):
            et.linalg.qr(d, mode="r")


def test_det_of_singular_matrices_is_the_cofactor_matrix():
    """det's gradient is adj(A)^T, finite for singular A (exact zeros of det go through the
    SVD); mixed with nonsingular matrices in one batch."""
    rank1 = np.array([[1.0, 2.0], [2.0, 4.0]])
    rank2 = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    regular = np.array([[2.0, 1.0], [0.0, 3.0]])

    def cofactor(a):
        n = a.shape[0]
        c = np.zeros_like(a)
        for i in range(n):
            for j in range(n):
                minor = np.delete(np.delete(a, i, 0), j, 1)
                c[i, j] = (-1) ** (i + j) * np.linalg.det(minor)
        return c

    for a in (rank1, rank2):
        x = et.from_numpy(a.copy()).requires_grad_()
        d = et.linalg.det(x)
        assert d.item() == 0.0
        d.backward()
        np.testing.assert_allclose(x.grad.numpy(), cofactor(a), atol=1e-12)
    x = et.from_numpy(np.stack([rank1, regular])).requires_grad_()
    (et.linalg.det(x) * et.from_numpy(np.array([2.0, 3.0]))).sum().backward()
    expected = np.stack([2 * cofactor(rank1), 3 * cofactor(regular)])
    np.testing.assert_allclose(x.grad.numpy(), expected, atol=1e-12)
    zero = et.zeros(3, 3, dtype=et.float64, requires_grad=True)
    et.linalg.det(zero).backward()
    assert not np.isnan(zero.grad.numpy()).any() and not zero.grad.numpy().any()


def test_det_of_empty_matrix():
    x = et.zeros(2, 0, 0, dtype=et.float64, requires_grad=True)
    et.linalg.det(x).sum().backward()
    assert tuple(x.grad.shape) == (2, 0, 0)


def test_slogdet_of_singular_matrix_is_nan_not_an_error():
    x = et.zeros(3, 3, dtype=et.float64, requires_grad=True)
    sign, logabsdet = et.linalg.slogdet(x)
    assert sign.item() == 0.0
    logabsdet.backward()
    assert np.isnan(x.grad.numpy()).all()


def test_slogdet_sign_gets_zero_gradient_and_tangent():
    from ember_autograd import forward_ad as fwad

    a = _rand(3, 3, seed=4) + 2 * np.eye(3)
    x = et.from_numpy(a).requires_grad_()
    sign, _ = et.linalg.slogdet(x)
    (g,) = ea.grad(sign * 3, x)
    assert not g.numpy().any()
    with fwad.dual_level():
        dual = fwad.make_dual(et.from_numpy(a), et.eye(3, dtype=et.float64))
        sign, logabsdet = et.linalg.slogdet(dual)
        assert not fwad.unpack_dual(sign).tangent.numpy().any()
        np.testing.assert_allclose(
            fwad.unpack_dual(logabsdet).tangent.item(), np.trace(np.linalg.inv(a)), rtol=1e-12
        )


def test_svd_full_matrices_backward_and_forward_follow_torch():
    """full_matrices=True with m != n: the gradients of the extra columns of U are ignored
    (narrowed, as PyTorch does), and their tangents are zero (as PyTorch's)."""
    from torch.autograd import forward_ad as tfwad

    from ember_autograd import forward_ad as fwad

    a = _rand(5, 3, seed=5)
    e, t = _pair(a)
    res = []
    for m, x in ((et, e), (torch, t)):
        u, s, vh = m.linalg.svd(x)
        d = _col_signs(u[..., :3])
        loss = ((u[:, :3] * d) * m.from_numpy(a)).sum() + (u[:, 3:] ** 2).sum() * 0.5
        loss = loss + ((vh * d.mT) * m.from_numpy(a[:3])).sum() + s.sum()
        loss.backward()
        res.append(x.grad.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-9, atol=1e-11)
    tangent = _rand(5, 3, seed=6)
    with fwad.dual_level():
        u, s, vh = et.linalg.svd(fwad.make_dual(et.from_numpy(a), et.from_numpy(tangent)))
        tu = fwad.unpack_dual(u).tangent.numpy()
    with tfwad.dual_level():
        u2, _, _ = torch.linalg.svd(tfwad.make_dual(torch.from_numpy(a), torch.from_numpy(tangent)))
        tu2 = tfwad.unpack_dual(u2).tangent.numpy()
    signs = np.sign(u.detach().numpy()[0, :3] * u2.detach().numpy()[0, :3])
    np.testing.assert_allclose(tu[:, :3] * signs, tu2[:, :3], rtol=1e-9, atol=1e-11)
    assert not tu[:, 3:].any() and not tu2[:, 3:].any()


def test_second_derivatives_through_tuple_outputs_match_torch():
    """create_graph through svd/eigh: saved outputs re-attached as their own output number
    (S is output 1 of (U, S, Vh))."""
    a = _rand(4, 3, seed=8)
    res = []
    for m in (et, torch):
        x = m.from_numpy(a.copy()).requires_grad_()
        _, s, _ = m.linalg.svd(x, full_matrices=False)
        w, v = m.linalg.eigh(_sym(x[:3]))
        v = v * _col_signs(v)
        f = (s ** 3).sum() + (w * w).sum() + (v * m.from_numpy(a[:3])).sum()
        grad = ea.grad if m is et else torch.autograd.grad
        (g,) = grad(f, (x,), create_graph=True)
        (gg,) = grad((g * g).sum(), (x,))
        res.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-8, atol=1e-10)


def test_float32_gradients_stay_float32():
    a = _rand(3, 3, seed=9) + 2 * np.eye(3)
    x = et.from_numpy(a.astype(np.float32)).requires_grad_()
    b = et.from_numpy(_rand(3, 2).astype(np.float32)).requires_grad_()
    loss = et.linalg.solve(x, b).sum() + et.linalg.det(x) + et.linalg.svdvals(x).sum()
    loss = loss + et.linalg.eigh(_sym(x))[0].sum() + et.linalg.qr(x)[1].sum()
    loss.backward()
    assert x.grad.dtype == et.float32 and b.grad.dtype == et.float32
    t = torch.from_numpy(a.astype(np.float32)).requires_grad_()
    tb = torch.from_numpy(_rand(3, 2).astype(np.float32)).requires_grad_()
    tl = torch.linalg.solve(t, tb).sum() + torch.linalg.det(t) + torch.linalg.svdvals(t).sum()
    tl = tl + torch.linalg.eigh(_sym(t))[0].sum() + torch.linalg.qr(t)[1].sum()
    tl.backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_saved_output_modified_in_place_is_an_error():
    x = et.from_numpy(_rand(3, 3) + 2 * np.eye(3)).requires_grad_()
    y = et.linalg.inv(x)
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# ops PyTorch does not differentiate: their derivatives.yaml entries raise its error
NOT_DIFFERENTIATED = {
    "geqrf": lambda m, A: m.geqrf(A).a,
    "linalg_ldl_factor_ex": lambda m, A: m.linalg.ldl_factor_ex(A).LD,
    "linalg_ldl_solve": lambda m, A: m.linalg.ldl_solve(
        *m.linalg.ldl_factor(A.detach()), A),
}


@pytest.mark.parametrize("name", sorted(NOT_DIFFERENTIATED))
def test_not_differentiated_like_torch(name):
    a = np.random.default_rng(1).standard_normal((3, 3))
    a = a + a.T
    for lib in (et, torch):
        x = lib.tensor(a, requires_grad=True)
        out = NOT_DIFFERENTIATED[name](lib, x)
        assert out.requires_grad
        with pytest.raises((NotImplementedError, RuntimeError), match="not implemented"):
            out.sum().backward()
