"""Multivariate distributions: Dirichlet, MultivariateNormal, LowRankMultivariateNormal,
Wishart (positive-definite matrices), LKJCholesky (Cholesky factors of correlation
matrices)."""

from __future__ import annotations

import math
import warnings
from numbers import Number

import ember_tensor as et
from ember_autograd import no_grad

from . import constraints
from ._random import _standard_gamma
from .continuous import Beta, Chi2
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import _size, _standard_normal, broadcast_all, lazy_property

__all__ = [
    "Dirichlet",
    "LKJCholesky",
    "LowRankMultivariateNormal",
    "MultivariateNormal",
    "Wishart",
]


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the simplex, with ``concentration`` (its last
    dimension is the event)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = _size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape)
                                                      + tuple(self.event_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        gammas = _standard_gamma(self.concentration.expand(shape))
        tiny = et.finfo(gammas.dtype).tiny
        return (gammas / gammas.sum(-1, keepdim=True)).clamp(min=tiny, max=1 - tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (et.xlogy(c - 1.0, value).sum(-1) + et.lgamma(c.sum(-1))
                - et.lgamma(c).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        concm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concm1 / concm1.sum(-1, keepdim=True)
        mask = (self.concentration < 1).all(-1, keepdim=True)
        n = concm1.shape[-1]
        one_hot = et.eye(n, dtype=mode.dtype, device=mode.device)[mode.argmax(-1)]
        return et.where(mask, one_hot, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return (et.lgamma(c).sum(-1) - et.lgamma(a0) - (k - a0) * et.digamma(a0)
                - ((c - 1.0) * et.digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - et.lgamma(x.sum(-1))


def _batch_mv(bmat, bvec):
    """Matrix-vector products, broadcast over the batch dimensions."""
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """The squared Mahalanobis distance ``x^T (L L^T)^-1 x`` of the vectors ``bx`` for the
    lower-triangular factors ``bL`` (batch dimensions broadcast)."""
    n = bx.shape[-1]
    batch = et.broadcast_shapes(tuple(bL.shape[:-2]), tuple(bx.shape[:-1]))
    L = bL.expand(tuple(batch) + (n, n))
    x = bx.expand(tuple(batch) + (n,))
    z = et.linalg.solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return z.pow(2).sum(-1)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of the inverse of the precision matrices ``P``."""
    Lf = et.linalg.cholesky(et.flip(P, (-2, -1)))
    L_inv = et.transpose(et.flip(Lf, (-2, -1)), -2, -1)
    eye = et.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return et.linalg.solve_triangular(L_inv, eye, upper=False)


class _FromScaleTril:
    """The three forms of the matrix of a distribution parameterised by its lower Cholesky
    factor ``_unbroadcasted_scale_tril``, expanded to ``_matrix_shape()`` (MultivariateNormal's
    covariance, Wishart's scale)."""

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return et.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self._matrix_shape())


class MultivariateNormal(_FromScaleTril, Distribution):
    """The multivariate normal distribution with mean ``loc`` and exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (its lower Cholesky
    factor)."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (
                precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        for name, matrix in (("scale_tril", scale_tril),
                             ("covariance_matrix", covariance_matrix),
                             ("precision_matrix", precision_matrix)):
            if matrix is None:
                continue
            if matrix.dim() < 2:
                raise ValueError(f"{name} matrix must be at least two-dimensional, "
                                 "with optional leading batch dimensions")
            batch_shape = et.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
            setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = et.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = _size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))


def _batch_capacitance_tril(W, D):
    """The Cholesky factor of the capacitance matrix ``I + W^T D^-1 W``."""
    m = W.shape[-1]
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    K = Wt_Dinv @ W + et.eye(m, dtype=W.dtype, device=W.device)
    return et.linalg.cholesky(K)


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """``log det(W W^T + D)`` by the matrix determinant lemma."""
    return (2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
            + D.log().sum(-1))


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """``x^T (W W^T + D)^-1 x`` by the Woodbury identity."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)
    term1 = (x.pow(2) / D).sum(-1)
    term2 = _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)
    return term1 - term2


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal whose covariance is ``cov_factor @ cov_factor.mT +
    diag(cov_diag)`` (a low-rank factor plus a diagonal)."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError("cov_diag must be a batch of vectors with shape "
                             f"{et.Size(event_shape)}")
        try:
            loc_, self.cov_factor, cov_diag_ = et.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = _size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(tuple(self._batch_shape)
                                             + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        n = self._event_shape[0]
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        d_sqrt = D.sqrt().unsqueeze(-1)
        Dinvsqrt_W = W / d_sqrt
        K = Dinvsqrt_W @ Dinvsqrt_W.mT + et.eye(n, dtype=W.dtype, device=W.device)
        return (d_sqrt * et.linalg.cholesky(K)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W @ W.mT + et.diag_embed(D)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = W.mT / D.unsqueeze(-2)
        A = et.linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        return (et.diag_embed(D.reciprocal()) - A.mT @ A).expand(self._matrix_shape())

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        W_shape = shape[:-1] + tuple(self.cov_factor.shape[-1:])
        eps_W = _standard_normal(W_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_D = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, diff,
                                       self._capacitance_tril)
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self):
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))


_LOG_2 = math.log(2.0)


def _mvdigamma(x, p: int):
    """The multivariate digamma function of order ``p``: ``sum_{i < p} digamma(x - i / 2)``
    (the derivative of ``mvlgamma(x, p)``), defined for ``x > (p - 1) / 2``."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = et.arange(p, dtype=x.dtype, device=x.device) / 2
    return et.digamma(x.unsqueeze(-1) - halves).sum(-1)


class Wishart(_FromScaleTril, ExponentialFamily):
    """The Wishart distribution over ``p`` x ``p`` positive-definite matrices, with ``df``
    degrees of freedom (greater than ``p - 1``) and a scale matrix given by exactly one of
    ``covariance_matrix``, ``precision_matrix`` (its inverse) or ``scale_tril`` (its lower
    Cholesky factor); everything is computed from the Cholesky factor.

    ``rsample`` uses the Bartlett decomposition ``L A A^T L^T``, with ``A`` lower
    triangular, chi-distributed on the diagonal and standard normal below it; it is
    reparameterized in the scale matrix and in ``df`` (through the gamma sampler's implicit
    gradient). For ``p - 1 < df < p`` samples can come out singular; those are drawn again,
    up to ``max_try_correction`` times (default 10), with a warning."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):  # type: ignore[override]
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None) -> None:
        given = [(name, matrix) for name, matrix in (("covariance_matrix", covariance_matrix),
                                                     ("precision_matrix", precision_matrix),
                                                     ("scale_tril", scale_tril))
                 if matrix is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        p = matrix.shape[-1]
        if isinstance(df, Number):
            batch_shape = tuple(matrix.shape[:-2])
            self.df = et.tensor(float(df), dtype=matrix.dtype,
                                device=matrix.device).expand(batch_shape)
        else:
            batch_shape = tuple(et.broadcast_shapes(tuple(matrix.shape[:-2]),
                                                    tuple(df.shape)))
            self.df = df.expand(batch_shape)
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{p - 1}.")
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, matrix.shape[-2:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = et.linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)
        self._dist_chi2 = self._bartlett_chi2(self.df, batch_shape)

    def _bartlett_chi2(self, df, batch_shape):
        """The squared diagonal of the Bartlett factor: chi-squared with ``df - i`` degrees
        of freedom in row ``i``."""
        p = self._event_shape[-1]
        steps = et.arange(p, dtype=self._unbroadcasted_scale_tril.dtype,
                          device=self._unbroadcasted_scale_tril.device)
        return Chi2(df.unsqueeze(-1) - steps.expand(tuple(batch_shape) + (p,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = _size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        new.df = self.df.expand(tuple(batch_shape))
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = self._dist_chi2.expand(tuple(batch_shape) + tuple(self.event_shape[-1:]))
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    def _df_matrix(self, df=None):
        """``df`` (or a batch-shaped tensor) with two trailing unit dimensions."""
        df = self.df if df is None else df
        return df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self._event_shape[-1] - 1
        factor = et.where(factor <= 0, math.nan, factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        d = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape):
        L = self._unbroadcasted_scale_tril
        eps = et.finfo(L.dtype).eps
        diagonal = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        below = _standard_normal(self._extended_shape(sample_shape), dtype=L.dtype,
                                 device=L.device).tril(-1)
        A = et.diag_embed(diagonal) + below
        factor = L @ A
        return factor @ factor.mT

    def _singular(self, sample):
        with no_grad():
            return ~self.support.check(sample.detach())

    def rsample(self, sample_shape=(), max_try_correction=None):
        """A reparameterized sample (Bartlett decomposition). Singular samples are drawn
        again up to ``max_try_correction`` times (default 10); any left singular give
        ``-inf`` in ``log_prob``."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = _size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self._singular(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                fresh = self._bartlett_sampling(sample_shape)
                sample = et.where(singular.unsqueeze(-1).unsqueeze(-1), fresh, sample)
                singular = self._singular(sample)
                if not bool(singular.any()):
                    break
        return sample

    def _half_log_det(self):
        """``log det(L)`` of the scale's Cholesky factor: half the log-determinant."""
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        trace = et.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + self._half_log_det())
                - et.mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * et.linalg.slogdet(value).logabsdet
                - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        return ((p + 1) * (p * _LOG_2 / 2 + self._half_log_det())
                + et.mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        # the degrees-of-freedom parameter carries two unit dimensions, so that the
        # Bregman KL sums both natural parameters over the two event dimensions only
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, self._df_matrix((self.df - p - 1) / 2)

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        a = y.squeeze(-1).squeeze(-1) + (p + 1) / 2
        return a * (p * _LOG_2 - et.linalg.slogdet(-2 * x).logabsdet) + et.mvlgamma(a, p)


class LKJCholesky(Distribution):
    """The LKJ distribution over lower Cholesky factors ``L`` of ``dim`` x ``dim``
    correlation matrices, with ``concentration`` eta: the correlation matrix ``L @ L.mT``
    has a density proportional to ``det(L @ L.mT) ** (eta - 1)`` (uniform at eta = 1).
    Sampled by the onion method of Lewandowski, Kurowicka and Joe (2009), row by row of the
    factor; no ``rsample``."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None) -> None:
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        super().__init__(self.concentration.shape, (dim, dim), validate_args=validate_args)
        # Row k >= 1 of the factor is (w, sqrt(1 - |w|^2)) with w = sqrt(y) u, u uniform on
        # the sphere in R^k and y ~ Beta(k / 2, eta + (dim - 1 - k) / 2); row 0 is (1, 0, ...)
        # and its Beta draw is not used.
        k = et.arange(dim, dtype=self.concentration.dtype,
                      device=self.concentration.device).clamp(min=1)
        self._beta = Beta(k / 2, self.concentration.unsqueeze(-1) + (dim - 1 - k) / 2,
                          validate_args=False)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = _size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        with no_grad():
            shape = self._extended_shape(sample_shape)
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = _standard_normal(shape, dtype=y.dtype, device=y.device).tril(-1)
            norm = u.norm(dim=-1, keepdim=True)  # zero in row 0 only
            w = y.sqrt() * (u / et.where(norm > 0, norm, et.ones_like(norm)))
            tiny = et.finfo(w.dtype).tiny
            diagonal = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + et.diag_embed(diagonal)

    def log_prob(self, value):
        # det(L L^T) ** (eta - 1) = prod L_ii ** (2 eta - 2), times the Jacobian of
        # L -> L L^T on correlation matrices, prod_{i >= 1} L_ii ** (dim - 1 - i)
        if self._validate_args:
            self._validate_sample(value)
        eta = self.concentration
        dim = self.dim
        diagonal = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        rows = et.arange(1, dim, dtype=eta.dtype, device=eta.device)
        order = 2 * (eta - 1).unsqueeze(-1) + (dim - 1 - rows)
        unnormalized = (order * diagonal.log()).sum(-1)
        dm1 = dim - 1
        alpha = eta + 0.5 * dm1
        log_normalizer = (0.5 * dm1 * math.log(math.pi) + et.mvlgamma(alpha - 0.5, dm1)
                          - dm1 * et.lgamma(alpha))
        return unnormalized - log_normalizer
