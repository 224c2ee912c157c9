"""PyTorch's top-level (pre-``torch.linalg``) decompositions and solvers (``composite:
python`` in ops.yaml): ``cholesky``, ``qr``, ``svd`` (V, not Vᴴ), ``lu``, ``logdet``,
``pinverse``, the triangular and Cholesky solves, written with ``ember_tensor.linalg``,
with PyTorch's argument conventions and results. Autograd records the ops they call."""

from __future__ import annotations

import math
import warnings

import ember_tensor as _et

from .. import _linalg_more

__all__ = [
    "cholesky",
    "cholesky_inverse",
    "cholesky_solve",
    "linalg_pinv",
    "logdet",
    "lu",
    "lu_solve",
    "lu_unpack",
    "matrix_exp",
    "ormqr",
    "pinverse",
    "qr",
    "svd",
    "triangular_solve",
]


def cholesky(self, upper=False):
    """The Cholesky factor L (lower) or U = Lᴴ (upper) of Hermitian positive-definite
    matrices."""
    return _et.linalg.cholesky(self, upper=upper)


def cholesky_solve(self, input2, upper=False):
    """The solution X of A X = self, A = L Lᴴ (or Uᴴ U with upper) given its Cholesky factor
    input2."""
    L = input2.mH if upper else input2
    Y = _et.linalg.solve_triangular(L, self, upper=False)
    return _et.linalg.solve_triangular(L.mH, Y, upper=True)


def cholesky_inverse(self, upper=False):
    """The inverse of A = L Lᴴ (or Uᴴ U with upper) given its Cholesky factor self.
    LinAlgError, PyTorch's, where a factor has a zero on its diagonal (A is singular)."""
    if self.dim() < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    n = self.shape[-1]
    if self.shape[-2] != n:
        raise RuntimeError(f"cholesky_inverse: A must be batches of square matrices, but they "
                           f"are {self.shape[-2]} by {n} matrices")
    if self.numel():
        zero = _et.eq(self.diagonal(0, -2, -1), 0).reshape(-1, n)
        if bool(zero.any()):
            b, i = divmod(int(_et.nonzero(zero.reshape(-1))[0].item()), n)
            where = f"(Batch element {b}): " if self.dim() > 2 else ""
            raise _et.linalg.LinAlgError(
                f"cholesky_inverse: {where}The diagonal element {i + 1} is zero, the inversion "
                "could not be completed because the input matrix is singular.")
    eye = _et.eye(n, dtype=self.dtype, device=self.device).expand(self.shape)
    return cholesky_solve(eye, self, upper)


def qr(self, some=True):
    """(Q, R): the reduced (some) or complete QR decomposition."""
    return _et.linalg.qr(self, "reduced" if some else "complete")


def svd(self, some=True, compute_uv=True):
    """(U, S, V) with self = U diag(S) Vᴴ (V itself, not Vᴴ); some=False gives the full U
    and V; compute_uv=False gives zero U and V (of the full shapes) and S."""
    if not compute_uv:
        m, n = self.shape[-2], self.shape[-1]
        S = _et.linalg.svdvals(self)
        kw = {"dtype": self.dtype, "device": self.device}
        return (_et.zeros(*self.shape[:-2], m, m, **kw), S,
                _et.zeros(*self.shape[:-2], n, n, **kw))
    U, S, Vh = _et.linalg.svd(self, full_matrices=not some)
    return U, S, Vh.mH


def linalg_pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse (linalg.pinv): through the SVD, or eigh when
    hermitian; singular values at or below max(atol, rtol * largest) count as zero."""
    return _et.linalg._pinv(A, atol, rtol, hermitian)


def pinverse(self, rcond=1e-15):
    """The pseudo-inverse, singular values below rcond times the largest dropped."""
    return _et.linalg.pinv(self, rtol=rcond)


def logdet(self):
    """log(det(self)): NaN for a negative determinant of a real matrix, -inf for zero."""
    sign, logabs = _et.linalg.slogdet(self)
    if self.is_complex():
        return _et.add(_et.log(sign), logabs)
    nan = _et.full((), math.nan, dtype=logabs.dtype, device=logabs.device)
    return _et.where(_et.lt(sign, 0), nan, logabs)


def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
    """(solution, cloned_coefficient): X with A X = self (Aᵀ X = self with transpose) for
    triangular A, and a copy of A."""
    warnings.warn("torch.triangular_solve is deprecated in favor of "
                  "torch.linalg.solve_triangularand will be removed in a future PyTorch release."
                  "\ntorch.linalg.solve_triangular has its arguments reversed and does not return "
                  "a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\n"
                  "should be replaced with\nX = torch.linalg.solve_triangular(A, B).",
                  UserWarning, stacklevel=3)
    M = A.mT if transpose else A
    X = _et.linalg.solve_triangular(M, self, upper=upper != transpose,
                                    unitriangular=unitriangular)
    # the copy of A has the batch dims A and self broadcast to, as PyTorch's
    batch = tuple(X.shape[:-2])
    return X, A.expand(*batch, *A.shape[-2:]).clone()


def lu(self, pivot=True, get_infos=False):
    """(LU, pivots) (and infos with get_infos): linalg.lu_factor_ex's results, deprecated as
    in PyTorch."""
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / "
                  "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.",
                  UserWarning, stacklevel=3)
    LU, pivots, info = _et.linalg.lu_factor_ex(self, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def lu_solve(self, LU_data, LU_pivots):
    """The solution X of A X = self from A's LU factorization (LU_data, LU_pivots);
    deprecated, as in PyTorch."""
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be "
                  "removed in a future PyTorch release.\nNote that torch.linalg.lu_solve has its "
                  "arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced "
                  "with\nX = torch.linalg.lu_solve(LU, pivots, B)", UserWarning, stacklevel=3)
    return _et.linalg.lu_solve(LU_data, LU_pivots, self)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from an LU factorization: A = P @ L @ U."""
    return tuple(_linalg_more.lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots))


def matrix_exp(self):
    """The matrix exponential of square matrices (linalg.matrix_exp)."""
    return _et.linalg.matrix_exp(self)


def ormqr(self, input2, input3, left=True, transpose=False):
    """input3 (C) times the (m, m) Q = H_1 ... H_k of the Householder reflectors in self
    (geqrf's a: v_i below the diagonal of column i, 1 on it) and input2 (tau): Q C, C Q,
    Qᴴ C or C Qᴴ, one reflector H_i = I - tau_i v_i v_iᴴ at a time."""
    a, tau, c = self, input2, input3
    if a.dim() < 2 or c.dim() < 2:
        raise RuntimeError("torch.ormqr: input and other must have at least 2 dimensions.")
    m = a.shape[-2]
    if (c.shape[-2] if left else c.shape[-1]) != m:
        side = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(f"torch.ormqr: {side} must be equal to input.shape[-2]")
    for name, t in (("tau", tau), ("other", c)):
        if t.dtype != a.dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {name} to have the same dtype, "
                               f"but input has dtype{a.dtype._scalar_type_name} and {name} has "
                               f"dtype {t.dtype._scalar_type_name}")
    if tau.dim() != a.dim() - 1:
        raise RuntimeError("torch.ormqr: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.dim()} and input.ndim is equal to "
                           f"{a.dim()}")
    if c.dim() != a.dim():
        raise RuntimeError("torch.ormqr: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {c.dim()} and input.ndim is "
                           f"equal to {a.dim()}")
    k = tau.shape[-1]
    side = -2 if left else -1
    if k != min(c.shape[side], a.shape[-1]):  # every reflector of a's QR, as PyTorch asks
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           "input.shape[-1])")
    for name, t in (("tau", tau.shape[:-1]), ("other", c.shape[:-2])):
        if tuple(t) != tuple(a.shape[:-2]):
            raise RuntimeError(f"torch.ormqr: Expected batch dimensions of {name} to be equal to "
                               f"input.shape[:-2], but got {list(t)}")
    unit = _et.eye(m, dtype=a.dtype, device=a.device)
    below = _et.tril(a, -1)
    order = range(k) if left == transpose else reversed(range(k))
    for i in order:
        v = below[..., :, i:i + 1] + unit[:, i:i + 1]
        t = tau[..., i:i + 1].unsqueeze(-1)
        if transpose:
            t = t.conj()
        if left:
            c = c - (t * v) @ (v.mH @ c)
        else:
            c = c - (c @ v) @ (t * v.mH)
    return c
