"""Continuous univariate distributions: Normal, Uniform, Exponential, Laplace, Cauchy,
Gamma, Chi2, Beta, StudentT, FisherSnedecor, VonMises, ContinuousBernoulli,
GeneralizedPareto."""

from __future__ import annotations

import math
from numbers import Number, Real

import ember_tensor as et
from ember_autograd import no_grad

from . import constraints
from ._random import _standard_gamma
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import (
    _size,
    _standard_normal,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = [
    "Beta",
    "Cauchy",
    "Chi2",
    "ContinuousBernoulli",
    "Exponential",
    "FisherSnedecor",
    "Gamma",
    "GeneralizedPareto",
    "Laplace",
    "Normal",
    "StudentT",
    "Uniform",
    "VonMises",
]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _shape_of(args, first) -> et.Size:
    """The batch shape: () when every argument is a Python number, else the (broadcast)
    shape of the first parameter."""
    return et.Size() if all(isinstance(a, Number) for a in args) else first.shape


def _expand(self, cls, batch_shape, _instance, names):
    """The common ``expand``: every parameter in ``names`` expanded to ``batch_shape``."""
    new = self._get_checked_instance(cls, _instance)
    batch_shape = _size(batch_shape)
    for name in names:
        if name in self.__dict__:
            setattr(new, name, getattr(self, name).expand(batch_shape))
    Distribution.__init__(new, batch_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new


def _rand(shape, like):
    return et.rand(*_size(shape), dtype=like.dtype, device=like.device)


class Normal(ExponentialFamily):
    """The normal (Gaussian) distribution with mean ``loc`` and standard deviation
    ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_shape_of((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand(self, Normal, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=()):
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = (math.log(self.scale) if isinstance(self.scale, Real)
                     else self.scale.log())
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - _LOG_SQRT_2PI

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + et.erf((value - self.loc) * self.scale.reciprocal()
                                 / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * et.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + et.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * et.log(-math.pi / y)


class Uniform(Distribution):
    """The uniform distribution on the half-open interval ``[low, high)``."""

    has_rsample = True

    @property
    def arg_constraints(self):  # type: ignore[override]
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(_shape_of((low, high), self.low), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand(self, Uniform, batch_shape, _instance, ("low", "high"))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rand = _rand(shape, self.low)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).to(self.low.dtype)
        ub = self.high.gt(value).to(self.low.dtype)
        return et.log(lb * ub) - et.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return et.log(self.high - self.low)


class Exponential(ExponentialFamily):
    """The exponential distribution with rate ``rate`` (mean ``1 / rate``)."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = et.Size() if isinstance(rate, Number) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand(self, Exponential, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return et.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = _rand(shape, self.rate)  # [0, 1): 1 - u in (0, 1]
        return -et.log1p(-u) / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - et.exp(-self.rate * value)

    def icdf(self, value):
        return -et.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - et.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -et.log(-x)


class Laplace(Distribution):
    """The Laplace distribution with location ``loc`` and scale ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_shape_of((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand(self, Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = et.finfo(self.loc.dtype).eps
        u = _rand(shape, self.loc) * (2 - eps) + (-1 + eps)  # in [-1 + eps, 1)
        return self.loc - self.scale * u.sign() * et.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -et.log(2 * self.scale) - et.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * et.expm1(
            -(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * et.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + et.log(2 * self.scale)


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution with median ``loc`` and half width ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_shape_of((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand(self, Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return et.full(tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype,
                       device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return et.full(tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype,
                       device=self.loc.device)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = et.tan(math.pi * (_rand(shape, self.loc) - 0.5))
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return et.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return et.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and ``rate`` (mean
    ``concentration / rate``). ``rsample`` is differentiable in both (implicit
    reparameterization)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(_shape_of((concentration, rate), self.concentration),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand(self, Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value

    def log_prob(self, value):
        value = et.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (et.xlogy(self.concentration, self.rate)
                + et.xlogy(self.concentration - 1, value)
                - self.rate * value - et.lgamma(self.concentration))

    def entropy(self):
        c = self.concentration
        return c - et.log(self.rate) + et.lgamma(c) + (1.0 - c) * et.digamma(c)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return et.lgamma(x + 1) + (x + 1) * et.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return et.special.gammainc(self.concentration, self.rate * value)


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom:
    ``Gamma(df / 2, 1 / 2)``."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class Beta(ExponentialFamily):
    """The beta distribution with ``concentration1`` (alpha) and ``concentration0``
    (beta), sampled through a two-component Dirichlet."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None) -> None:
        from .multivariate import Dirichlet

        if isinstance(concentration1, Real) and isinstance(concentration0, Real):
            both = et.tensor([float(concentration1), float(concentration0)],
                             dtype=et.get_default_dtype())
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = et.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = _size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = et.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return et.lgamma(x) + et.lgamma(y) - et.lgamma(x + y)


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, location ``loc`` and scale
    ``scale``."""

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expand(self, StudentT, batch_shape, _instance, ("df", "loc", "scale"))
        new._chi2 = self._chi2.expand(_size(batch_shape))
        return new

    @property
    def mean(self):
        return et.where(self.df <= 1, et.full_like(self.loc, math.nan), self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        result = et.where(df > 2, finite, et.full_like(df, math.inf))
        return et.where(df <= 1, et.full_like(df, math.nan), result)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        y = x * et.rsqrt(z / self.df)
        return self.loc + self.scale * y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + et.lgamma(0.5 * self.df) - et.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * et.log1p(y ** 2.0 / self.df) - z

    def entropy(self):
        lbeta = (et.lgamma(0.5 * self.df) + math.lgamma(0.5)
                 - et.lgamma(0.5 * (self.df + 1)))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (et.digamma(0.5 * (self.df + 1))
                                         - et.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)


class FisherSnedecor(Distribution):
    """The Fisher-Snedecor (F) distribution with ``df1`` and ``df2`` degrees of freedom."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(_shape_of((df1, df2), self.df1), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expand(self, FisherSnedecor, batch_shape, _instance, ("df1", "df2"))
        new._gamma1 = self._gamma1.expand(_size(batch_shape))
        new._gamma2 = self._gamma2.expand(_size(batch_shape))
        return new

    @property
    def mean(self):
        df2 = et.where(self.df2 <= 2, et.full_like(self.df2, math.nan), self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return et.where(self.df1 <= 2, et.full_like(mode, math.nan), mode)

    @property
    def variance(self):
        df2 = et.where(self.df2 <= 4, et.full_like(self.df2, math.nan), self.df2)
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        tiny = et.finfo(self.df1.dtype).tiny
        x1 = self._gamma1.rsample(sample_shape).reshape(tuple(shape))
        x2 = self._gamma2.rsample(sample_shape).reshape(tuple(shape)).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * et.log(value)
        t3 = (ct1 + ct2) * et.log1p(ct3 * value)
        return t1 + t2 - t3


class VonMises(Distribution):
    """The circular von Mises distribution with mean direction ``loc`` and
    ``concentration`` (values and ``loc`` are angles, read modulo 2 pi). Sampled by Best
    and Fisher's rejection method, in float64."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, et.Size(), validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand(self, VonMises, batch_shape, _instance, ("loc", "concentration"))

    @staticmethod
    def _log_i0(k):
        return et.log(et.special.i0e(k)) + k

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * et.cos(value - self.loc) - math.log(2 * math.pi)
                - self._log_i0(self.concentration))

    def sample(self, sample_shape=()):
        with no_grad():
            shape = tuple(self._extended_shape(sample_shape))
            loc = self.loc.to(et.float64).expand(shape).reshape(-1)
            kappa = self.concentration.to(et.float64).expand(shape).reshape(-1)
            tau = 1 + (1 + 4 * kappa ** 2).sqrt()
            rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
            r = et.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))
            n = loc.numel()
            x = et.zeros(n, dtype=et.float64)
            pending = et.ones(n, dtype=et.bool)
            while bool(pending.any()):
                u = et.rand(3, n, dtype=et.float64)
                u1, u2, u3 = u[0], u[1], u[2]
                z = et.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                take = pending & accept
                x = et.where(take, (u3 - 0.5).sign() * f.acos(), x)
                pending = pending & ~accept
            out = (x + math.pi + loc) % (2 * math.pi) - math.pi
            return out.reshape(shape).to(self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        k = self.concentration
        return 1 - et.special.i1e(k) / et.special.i0e(k)


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem and Cunningham,
    2019), with ``probs`` or ``logits`` (not both)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501),
                 validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not bool(
                    self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = et.Size() if is_scalar else self._param.shape
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expand(self, ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"))
        new._lims = self._lims
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def _outside_unstable_region(self):
        return et.le(self.probs, self._lims[0]) | et.gt(self.probs, self._lims[1])

    def _cut_probs(self):
        return et.where(self._outside_unstable_region(), self.probs,
                        self._lims[0] * et.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        cut = self._cut_probs()
        below = et.where(et.le(cut, 0.5), cut, et.zeros_like(cut))
        above = et.where(et.ge(cut, 0.5), cut, et.ones_like(cut))
        log_norm = et.log(et.abs(et.log1p(-cut) - et.log(cut))) - et.where(
            et.le(cut, 0.5), et.log1p(-2.0 * below), et.log(2.0 * above - 1.0))
        x = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return et.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (et.log1p(-cut) - et.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x ** 2) * x
        return et.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return et.sqrt(self.variance)

    @property
    def variance(self):
        cut = self._cut_probs()
        var = (cut * (cut - 1.0) / (1.0 - 2.0 * cut) ** 2
               + 1.0 / (et.log1p(-cut) - et.log(cut)) ** 2)
        x = (self.probs - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return et.where(self._outside_unstable_region(), var, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.shape

    def sample(self, sample_shape=()):
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        u = _rand(self._extended_shape(sample_shape), self.probs)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # -BCE with logits: value * logits - softplus(logits)
        return value * logits - et.softplus(logits) + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut ** value * (1.0 - cut) ** (1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = et.where(self._outside_unstable_region(), cdfs, value)
        return et.where(et.le(value, 0.0), et.zeros_like(value),
                        et.where(et.ge(value, 1.0), et.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        return et.where(
            self._outside_unstable_region(),
            (et.log1p(-cut + value * (2.0 * cut - 1.0)) - et.log1p(-cut))
            / (et.log(cut) - et.log1p(-cut)),
            value)

    def entropy(self):
        log_probs0 = et.log1p(-self.probs)
        log_probs1 = et.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        unstable = et.le(x, self._lims[0] - 0.5) | et.gt(x, self._lims[1] - 0.5)
        cut = et.where(unstable, x, (self._lims[0] - 0.5) * et.ones_like(x))
        log_norm = et.log(et.abs(et.expm1(cut))) - et.log(et.abs(cut))
        taylor = 0.5 * x + x ** 2 / 24.0 - x ** 4 / 2880.0
        return et.where(unstable, log_norm, taylor)


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution with location ``loc``, scale ``scale`` and shape
    ``concentration`` (xi): with ``z = (x - loc) / scale``, its survival function is
    ``(1 + xi z) ** (-1 / xi)`` (``exp(-z)`` when xi is zero, within ``isclose``'s
    tolerance). The support is ``[loc, inf)`` for xi >= 0 and ``[loc, loc - scale / xi]``
    for xi < 0; xi = 0 is the shifted exponential, xi = -1 the uniform distribution.
    ``rsample`` inverts the distribution function.

    Where xi counts as zero, ``log_prob``, ``log_survival_function`` and ``icdf`` use their
    first-order expansion in xi: PyTorch's values, with the right gradient in xi (PyTorch's
    is zero there); at xi = -1 ``log_prob``'s gradient in xi is right too (PyTorch's is
    ``1 / xi ** 2``)."""

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(_shape_of((loc, scale, concentration), self.loc),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand(self, GeneralizedPareto, batch_shape, _instance,
                       ("loc", "scale", "concentration"))

    def _shape_parts(self):
        """(where xi counts as zero, xi with those entries replaced by one): the xi -> 0
        limit is taken apart, so both branches of every ``where`` stay finite."""
        xi = self.concentration
        is_zero = et.isclose(xi, et.zeros_like(xi))
        return is_zero, et.where(is_zero, et.ones_like(xi), xi)

    def _z(self, value):
        return (value - self.loc) / self.scale

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        xi = self.concentration
        upper = et.where(xi < 0, self.loc - self.scale / xi, math.inf)
        return constraints.interval(self.loc, upper)

    @property
    def mean(self):
        finite = self.concentration < 1
        xi = et.where(finite, self.concentration, 0.5)
        return et.where(finite, self.loc + self.scale / (1 - xi), math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        finite = self.concentration < 0.5
        xi = et.where(finite, self.concentration, 0.25)
        return et.where(finite, self.scale.pow(2) / ((1 - xi).pow(2) * (1 - 2 * xi)),
                        math.nan)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(_rand(shape, self.loc))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        is_zero, xi = self._shape_parts()
        power = 1 / xi + 1  # zero at xi = -1: the uniform density, constant on the support
        arg = xi * z
        at_uniform_end = (power == 0) & (arg <= -1)  # the upper end, where log1p is -inf
        general = power * et.log1p(et.where(at_uniform_end, 0.0, arg))
        # near xi = 0: z + xi (z - z^2 / 2), the value at xi = 0 with its xi-derivative
        near_zero = z + self.concentration * (z - z * z / 2)
        return -self.scale.log() - et.where(is_zero, near_zero, general)

    def log_survival_function(self, value):
        """``log(1 - cdf(value))``."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        is_zero, xi = self._shape_parts()
        near_zero = -z + self.concentration * z * z / 2
        return et.where(is_zero, near_zero, -et.log1p(xi * z) / xi)

    def log_cdf(self, value):
        """``log(cdf(value))``."""
        return et.log1p(-et.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return et.exp(self.log_cdf(value))

    def icdf(self, value):
        is_zero, xi = self._shape_parts()
        log_tail = et.log1p(-value)  # log of the survival probability
        near_zero = -log_tail + self.concentration * log_tail * log_tail / 2
        return self.loc + self.scale * et.where(is_zero, near_zero,
                                                et.expm1(-xi * log_tail) / xi)

    def entropy(self):
        return et.broadcast_to(et.log(self.scale) + self.concentration + 1,
                               tuple(self._batch_shape))
