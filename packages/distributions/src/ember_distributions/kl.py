"""``kl_divergence(p, q)``: the KL divergence between two distributions, looked up in a
registry of analytic formulas by the types of ``p`` and ``q`` (the most specific
registered pair wins, as in PyTorch); ``register_kl`` adds formulas."""

from __future__ import annotations

import math
import warnings
from functools import total_ordering

import ember_autograd as _autograd
import ember_tensor as et

from .continuous import (
    Beta,
    Cauchy,
    ContinuousBernoulli,
    Exponential,
    Gamma,
    Laplace,
    Normal,
    Uniform,
)
from .discrete import Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical, Poisson
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .independent import Independent
from .multivariate import (
    Dirichlet,
    LowRankMultivariateNormal,
    MultivariateNormal,
    _batch_mahalanobis,
)
from .transformed import Gumbel, HalfNormal, Pareto, TransformedDistribution
from .utils import _sum_rightmost, euler_constant

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}  # (type_p, type_q) -> function
_KL_MEMOIZE: dict = {}  # (type_p, type_q) -> the function chosen for that pair


def register_kl(type_p, type_q):
    """A decorator registering the function ``kl(p, q)`` for ``p`` of ``type_p`` and ``q``
    of ``type_q`` (subclasses of ``Distribution``)::

        @register_kl(Normal, Normal)
        def kl_normal_normal(p, q): ...
    """
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


@total_ordering
class _Match:
    __slots__ = ["types"]

    def __init__(self, *types) -> None:
        self.types = types

    def __eq__(self, other) -> bool:
        return self.types == other.types

    def __le__(self, other) -> bool:
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    """The most specific registered function for (type_p, type_q)."""
    matches = [(super_p, super_q) for super_p, super_q in _KL_REGISTRY
               if issubclass(type_p, super_p) and issubclass(type_q, super_q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please register_kl"
            f"({left_p.__name__}, {right_q.__name__})", RuntimeWarning, stacklevel=3)
    return left_fun


def _infinite_like(t):
    return et.full_like(t, math.inf)


def kl_divergence(p, q):
    """``KL(p || q) = E_p[log p(x) - log q(x)]``, of shape ``batch_shape``.
    ``NotImplementedError`` when no formula is registered for the pair of types."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


# ------------------------------------------------------------------ same-family pairs


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (et.softplus(-q.logits) - et.softplus(-p.logits))
    t1 = et.where(q.probs == 0, _infinite_like(t1), t1)
    t1 = et.where(p.probs == 0, et.zeros_like(t1), t1)
    t2 = (1 - p.probs) * (et.softplus(q.logits) - et.softplus(p.logits))
    t2 = et.where(q.probs == 1, _infinite_like(t2), t2)
    t2 = et.where(p.probs == 1, et.zeros_like(t2), t2)
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * et.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * et.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * et.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return et.where(p.total_count > q.total_count, _infinite_like(kl), kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = et.where((q.probs == 0).expand_as(t), _infinite_like(t), t)
    t = et.where((p.probs == 0).expand_as(t), et.zeros_like(t), t)
    return t.sum(-1)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + et.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - et.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_nparams = [np_.detach().requires_grad_() for np_ in p._natural_params]
    q_nparams = q._natural_params
    with _autograd.enable_grad():
        lg_normal = p._log_normalizer(*p_nparams)
        gradients = _autograd.grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        term = (qnp - pnp) * g
        result = result - _sum_rightmost(term, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * et.log(p.rate / q.rate)
    t2 = et.lgamma(q.concentration) - et.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * et.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = et.exp(ct2 + (1 + ct1).lgamma() - ct3)
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - et.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * et.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


def _as_full_mvn(d):
    if isinstance(d, LowRankMultivariateNormal):
        return MultivariateNormal(d.loc, scale_tril=d.scale_tril, validate_args=False)
    return d


@register_kl(MultivariateNormal, MultivariateNormal)
@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise ValueError("KL-divergence between two Multivariate Normals with different "
                         "event shapes cannot be computed")
    p, q = _as_full_mvn(p), _as_full_mvn(q)
    pL, qL = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = (qL.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                  - pL.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    n = p.event_shape[0]
    batch = tuple(et.broadcast_shapes(tuple(qL.shape[:-2]), tuple(pL.shape[:-2])))
    solved = et.linalg.solve_triangular(qL.expand(batch + (n, n)), pL.expand(batch + (n, n)),
                                        upper=False)
    term2 = solved.pow(2).sum(-1).sum(-1)
    term3 = _batch_mahalanobis(qL, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return et.where(p.scale < q.scale, _infinite_like(result), result)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return et.where((q.low > p.low) | (q.high < p.high), _infinite_like(result), result)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    return et.log(((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2))
                  / (4 * p.scale * q.scale))


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


# ------------------------------------------------------------------ cross-family pairs


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * et.log(ratio)
    return (t1 + ratio + q.concentration.lgamma() + q.concentration * euler_constant
            - (1 + euler_constant))


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * et.log(rate_sqr * var_normal * 2 * math.pi)
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * (p.concentration / p.rate)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponetial(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return et.where(p.low < 0, _infinite_like(result), result)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = et.log(scale_ratio)
    t2 = math.sqrt(2 / math.pi) * p.scale * et.exp(-0.5 * loc_diff_scale_ratio.pow(2))
    t3 = loc_diff * et.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


# ------------------------------------------------------------------ the other cross-family
# pairs of PyTorch's registry. A pair whose q puts no mass on part of p's support is
# +inf everywhere, shaped like p's parameter (as PyTorch: the batch of q is not broadcast
# in). Where only some batch elements leave q's support, those are +inf (broadcast with
# the finite formula; PyTorch's in-place masked write fails on mixed batch shapes instead).


def _x_log_x(t):
    """``t * log(t)``, 0 at 0."""
    return et.xlogy(t, t)


def _inf_where(mask, result):
    """``result`` with +inf where ``mask`` holds (broadcast together)."""
    return et.where(mask, _infinite_like(result), result)


def _mean_log_uniform(p):
    """``E[log x]`` for ``x ~ Uniform(p.low, p.high)``."""
    width = p.high - p.low
    return (_x_log_x(p.high) - _x_log_x(p.low) - width) / width


# Pairs whose KL is +inf everywhere (q's support misses part of p's), shaped like p's
# parameter: p's type -> (that parameter, q's types), as PyTorch registers them.
_ALWAYS_INFINITE = {
    Beta: ("concentration1", (Pareto,)),
    ContinuousBernoulli: ("probs", (Pareto,)),
    Exponential: ("rate", (Beta, ContinuousBernoulli, Pareto, Uniform)),
    Gamma: ("concentration", (Beta, ContinuousBernoulli, Pareto, Uniform)),
    Gumbel: ("loc", (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
    Laplace: ("loc", (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
    Normal: ("loc", (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
    Pareto: ("scale", (Beta, ContinuousBernoulli, Uniform)),
    Poisson: ("rate", (Bernoulli, Binomial)),
}


def _infinite_kl(parameter: str):
    def kl(p, q):
        return _infinite_like(getattr(p, parameter))

    return kl


for _p_type, (_parameter, _q_types) in _ALWAYS_INFINITE.items():
    for _q_type in _q_types:
        register_kl(_p_type, _q_type)(_infinite_kl(_parameter))


def _cross_entropy_continuous_bernoulli(mean_x, q):
    """``-E[log q(x)]`` for ``q`` a ContinuousBernoulli, from ``E[x]``."""
    return -mean_x * q.logits - et.log1p(-q.probs) - q._cont_bern_log_norm()


def _cross_entropy_normal(mean_x, mean_x2, q):
    """``-E[log q(x)]`` for ``q`` a Normal, from ``E[x]`` and ``E[x^2]``."""
    var = q.scale.pow(2)
    return (0.5 * et.log(2 * math.pi * var)
            + (mean_x2 - 2 * q.loc * mean_x + q.loc.pow(2)) / (2 * var))


def _cross_entropy_gamma(mean_x, mean_log_x, q):
    """``-E[log q(x)]`` for ``q`` a Gamma, from ``E[x]`` and ``E[log x]``."""
    return (q.concentration.lgamma() - q.concentration * q.rate.log()
            - (q.concentration - 1) * mean_log_x + q.rate * mean_x)


def _cross_entropy_gumbel(mean_x, mean_exp, q):
    """``-E[log q(x)]`` for ``q`` a Gumbel, from ``E[x]`` and
    ``E[exp(-(x - q.loc) / q.scale)]``."""
    return q.scale.log() + (mean_x - q.loc) / q.scale + mean_exp


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() + _cross_entropy_continuous_bernoulli(p.mean, q)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    total = p.concentration1 + p.concentration0
    mean_log_x = p.concentration1.digamma() - total.digamma()
    return -p.entropy() + _cross_entropy_gamma(p.concentration1 / total, mean_log_x, q)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    total = p.concentration1 + p.concentration0
    mean = p.concentration1 / total
    mean_x2 = mean * (1 - mean) / (total + 1) + mean.pow(2)
    return -p.entropy() + _cross_entropy_normal(mean, mean_x2, q)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low > p.support.lower_bound) | (q.high < p.support.upper_bound),
                      result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    mean = p.mean
    return -p.entropy() + _cross_entropy_normal(mean, p.variance + mean.pow(2), q)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    # +inf also at q.low == 0 or q.high == 1, where the divergence is finite (as PyTorch)
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound),
                      result)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    rate_scale = p.rate * q.scale
    mean_exp = et.exp(q.loc / q.scale) * rate_scale / (rate_scale + 1)
    return p.rate.log() - 1 + _cross_entropy_gumbel(p.rate.reciprocal(), mean_exp, q)


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    mean_exp = et.exp(q.loc / q.scale) * (1 + (p.rate * q.scale).reciprocal()).pow(
        -p.concentration)
    return -p.entropy() + _cross_entropy_gumbel(p.concentration / p.rate, mean_exp, q)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    mean = p.concentration / p.rate
    mean_x2 = (p.concentration + p.concentration.pow(2)) / p.rate.pow(2)
    return -p.entropy() + _cross_entropy_normal(mean, mean_x2, q)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    mean = p.loc + p.scale * euler_constant
    mean_x2 = (math.pi * p.scale).pow(2) / 6 + mean.pow(2)
    return -p.entropy() + _cross_entropy_normal(mean, mean_x2, q)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var = q.scale.pow(2)
    return (0.5 * et.log(2 * math.pi * var) - et.log(2 * p.scale) - 1
            + (2 * p.scale.pow(2) + (p.loc - q.loc).pow(2)) / (2 * var))


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_exp = et.exp((q.loc - p.loc) / q.scale + 0.5 * (p.scale / q.scale).pow(2))
    return -p.entropy() + _cross_entropy_gumbel(p.loc, mean_exp, q)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    mean = p.alpha * p.scale / (p.alpha - 1)
    result = -p.entropy() - q.rate.log() + q.rate * mean
    return _inf_where(p.alpha <= 1, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    mean = p.alpha * p.scale / (p.alpha - 1)
    mean_log_x = p.scale.log() + p.alpha.reciprocal()
    result = -p.entropy() + _cross_entropy_gamma(mean, mean_log_x, q)
    return _inf_where(p.alpha <= 1, result)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    mean = p.alpha * p.scale / (p.alpha - 1)
    var = p.alpha * (p.scale / (p.alpha - 1)).pow(2) / (p.alpha - 2)
    result = -p.entropy() + _cross_entropy_normal(mean, var + mean.pow(2), q)
    return _inf_where(p.alpha <= 2, result)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    # E[log(1 - x)]: the mean log of Uniform(1 - high, 1 - low)
    mean_log_1mx = (_x_log_x(1 - p.low) - _x_log_x(1 - p.high) - width) / width
    log_beta = (q.concentration1.lgamma() + q.concentration0.lgamma()
                - (q.concentration1 + q.concentration0).lgamma())
    result = (-width.log() - (q.concentration1 - 1) * _mean_log_uniform(p)
              - (q.concentration0 - 1) * mean_log_1mx + log_beta)
    return _inf_where((p.high > q.support.upper_bound) | (p.low < q.support.lower_bound),
                      result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    # +inf also at p.low == 0 or p.high == 1, where the divergence is finite (as PyTorch)
    result = -p.entropy() + _cross_entropy_continuous_bernoulli(p.mean, q)
    return _inf_where((p.high >= q.support.upper_bound) | (p.low <= q.support.lower_bound),
                      result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    result = -p.entropy() + _cross_entropy_gamma(p.mean, _mean_log_uniform(p), q)
    return _inf_where(p.low < q.support.lower_bound, result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    mean_exp = (q.scale / (p.high - p.low)) * (et.exp((q.loc - p.low) / q.scale)
                                              - et.exp((q.loc - p.high) / q.scale))
    return -p.entropy() + _cross_entropy_gumbel(p.mean, mean_exp, q)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    result = (-p.entropy() - q.alpha.log() - q.alpha * q.scale.log()
              + (q.alpha + 1) * _mean_log_uniform(p))
    return _inf_where(p.low < q.support.lower_bound, result)
