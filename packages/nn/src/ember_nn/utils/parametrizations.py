"""``ember.nn.utils.parametrizations``: ``weight_norm``, ``spectral_norm`` and
``orthogonal`` as parametrizations (``utils.parametrize``), PyTorch's current forms.

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> from ember_nn.utils.parametrizations import weight_norm
>>> m = weight_norm(nn.Linear(3, 4))
>>> sorted(m.state_dict())
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
>>> tuple(m.parametrizations.weight.original0.shape)  # g: one norm per output row
(4, 1)
"""

from __future__ import annotations

from enum import Enum, auto

import ember_tensor as et
from ember_autograd import no_grad

from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize
from ._weight_norm import _norm_except_dim, _weight_norm

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# ---------------------------------------------------------------------------- orthogonal


def _is_orthogonal(Q) -> bool:
    n, k = Q.size(-2), Q.size(-1)
    eye = et.eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10.0 * n * et.finfo(Q.dtype).eps
    return bool(et.allclose(Q.mH @ Q, eye, atol=eps))


def _make_orthogonal(A):
    """The Q of A's QR decomposition, with the signs that make R's diagonal positive."""
    X, tau = et.geqrf(A)
    Q = et.linalg.householder_product(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """The map from unconstrained matrices to matrices with orthonormal columns (or
    rows, for wide matrices) that ``orthogonal`` registers."""

    def __init__(self, weight, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        # X is tall (n >= k) from here on
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                # the square n x n matrix whose first k columns are X
                X = et.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH  # skew-symmetric (skew-hermitian)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = et.linalg.matrix_exp(A)
            else:
                # the Cayley map (I + A/2)(I - A/2)^{-1}
                eye = et.eye(n, dtype=A.dtype, device=A.device)
                Q = et.linalg.solve(et.add(eye, A, alpha=-0.5), et.add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            # the reflectors below the diagonal; the diagonal of X (+-1) gives the signs
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = et.linalg.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)

        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {Q.shape}."
            )
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n

        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False."
                )
            # householder: the reflectors of Q's QR decomposition, with the diagonal of R's
            # signs (made +-1) on the diagonal
            A, tau = et.geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A

        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            # complete Q with random columns into an n x n orthogonal matrix
            N = et.randn(*(tuple(Q.size()[:-2]) + (n, n - k)), dtype=Q.dtype,
                         device=Q.device)
            Q = _make_orthogonal(et.cat([Q, N], dim=-1))
        self.base = Q
        # -Id: the householder map sends it to Id (and so do the other two: a zero A)
        neg_id = et.zeros_like(Q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Parametrizes ``module.<name>`` (a matrix or a batch of matrices, ``(..., n, k)``) so
    that it has orthonormal columns when ``n >= k`` and orthonormal rows otherwise.

    ``orthogonal_map`` is ``"matrix_exp"`` (default for square or complex matrices),
    ``"cayley"`` or ``"householder"`` (default otherwise; real matrices only). With
    ``use_trivialization=True`` (default) a buffer ``base`` holds the orthogonal matrix the
    map starts from (PyTorch's "dynamic trivialization"); assigning ``module.<name> = Q``
    then makes the weight ``Q`` (made orthogonal first if it is not). Without it, only the
    householder map can be assigned to. Returns ``module``.

    Raises ``ValueError`` when ``module`` has no parameter or buffer ``name``, when it has
    fewer than 2 dimensions, or for an unknown ``orthogonal_map``.

    >>> import ember_tensor as et
    >>> import ember_nn as nn
    >>> from ember_nn.utils.parametrizations import orthogonal
    >>> m = orthogonal(nn.Linear(5, 3))
    >>> Q = m.weight  # 3 x 5: orthonormal rows
    >>> bool(et.allclose(Q @ Q.mT, et.eye(3), atol=1e-5))
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, et.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} "
            "dimensions."
        )
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# --------------------------------------------------------------------------- weight norm


class _WeightNorm(Module):
    """``weight = g * v / ||v||`` with the norm over every dimension but ``dim`` (over all
    of them when ``dim`` is None or -1)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """Weight normalization as a parametrization: ``module.<name>`` becomes
    ``g * v / ||v||``, with the magnitude ``g`` in
    ``module.parametrizations.<name>.original0`` (the norm over every dimension but
    ``dim``, kept as size 1) and the direction ``v`` in ``original1``. ``dim=None`` (or
    -1) uses one norm for the whole tensor. A state dict of the old ``utils.weight_norm``
    (keys ``<name>_g``, ``<name>_v``) still loads. Returns ``module``.

    Raises ``ValueError`` when ``module`` has no parameter or buffer ``name``.

    >>> import ember_tensor as et
    >>> import ember_nn as nn
    >>> from ember_nn.utils.parametrizations import weight_norm
    >>> m = weight_norm(nn.Linear(20, 40), name="weight")
    >>> tuple(m.parametrizations.weight.original0.shape)
    (40, 1)
    >>> tuple(m.parametrizations.weight.original1.shape)
    (40, 20)
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs) -> None:
        g_key = f"{prefix}{name}_g"
        v_key = f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


# ------------------------------------------------------------------------- spectral norm


class _SpectralNorm(Module):
    """``weight / sigma``, ``sigma`` the largest singular value of the weight (as a matrix
    ``(weight.shape[dim], -1)``), estimated by power iteration on the buffers ``_u``,
    ``_v`` (updated in training mode only)."""

    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            # a vector needs no estimate (forward normalizes it)
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # start from reasonable singular vectors
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if weight.ndim <= 1:
            raise AssertionError(
                f"Expected weight to have more than 1 dimension, got {weight.ndim}"
            )
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations: int) -> None:
        # u and v are updated in place (they are buffers others may hold); forward clones
        # them before use so that two forward passes can be differentiated together
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(et.mv(weight_mat, self._v), dim=0, eps=self.eps,
                                      out=self._u)
                self._v = F.normalize(et.mv(weight_mat.mH, self._u), dim=0, eps=self.eps,
                                      out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = et.vdot(u, et.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Spectral normalization as a parametrization: ``module.<name>`` becomes
    ``weight / sigma``, ``sigma`` the spectral norm of the weight seen as a matrix
    ``(weight.shape[dim], -1)``, estimated by ``n_power_iterations`` steps of the power
    method per access in training mode (15 at registration). The singular-vector
    estimates are the buffers ``parametrizations.<name>.0._u`` and ``._v``. ``dim``
    defaults to 1 for ``ConvTranspose{1,2,3}d`` and 0 otherwise; ``eps`` guards the
    normalizations. Returns ``module``.

    Raises ``ValueError`` when ``module`` has no parameter or buffer ``name`` or when
    ``n_power_iterations <= 0``, ``IndexError`` for a ``dim`` out of range.

    >>> import ember_tensor as et
    >>> import ember_nn as nn
    >>> from ember_nn.utils.parametrizations import spectral_norm
    >>> m = spectral_norm(nn.Linear(20, 40))
    >>> sorted(m.state_dict())  # doctest: +NORMALIZE_WHITESPACE
    ['bias', 'parametrizations.weight.0._u', 'parametrizations.weight.0._v',
     'parametrizations.weight.original']
    >>> m.eval()  # doctest: +ELLIPSIS
    ParametrizedLinear(...)
    >>> u, v = m.parametrizations.weight[0]._u, m.parametrizations.weight[0]._v
    >>> bool(et.isclose(u @ m.weight @ v, et.tensor(1.0)))  # sigma is 1 along (u, v)
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, et.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        transposed = (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
