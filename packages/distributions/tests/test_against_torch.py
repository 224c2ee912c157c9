"""Every distribution against torch.distributions on the same float64 parameters:
shapes, log_prob, entropy, moments, cdf/icdf (NotImplementedError where PyTorch raises it),
support, expand, enumerate_support, samples' shapes and support, and the gradients of
log_prob with respect to the parameters. (Further tests of InverseGamma,
GeneralizedPareto, Wishart and LKJCholesky: test_more_distributions.py.)"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.distributions as TD

import ember_autograd as ag
import ember_distributions as D
import ember_tensor as et
from conftest import (
    assert_close,
    assert_same_structure,
    build,
    check_expand,
    np_of,
    to_et,
    to_torch,
    try_stat,
)

rng = np.random.default_rng(1234)


def pos(*shape, lo=0.5, hi=3.0):
    return rng.uniform(lo, hi, size=shape)


def real(*shape):
    return rng.normal(size=shape)


def unit(*shape):
    return rng.uniform(0.1, 0.9, size=shape)


def simplex(*shape):
    x = rng.uniform(0.2, 1.0, size=shape)
    return x / x.sum(-1, keepdims=True)


def spd(*batch, n=3):
    a = rng.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def tril(*batch, n=3):
    a = np.tril(rng.normal(size=batch + (n, n)), -1)
    return a + np.eye(n) * rng.uniform(0.5, 2.0, size=batch + (n, 1))


def corr_cholesky(*batch, n=3):
    """Lower Cholesky factors of random correlation matrices."""
    c = spd(*batch, n=n)
    d = np.sqrt(np.diagonal(c, axis1=-2, axis2=-1))
    return np.linalg.cholesky(c / (d[..., :, None] * d[..., None, :]))


ints = lambda hi, *shape: rng.integers(0, hi, size=shape).astype(np.float64)  # noqa: E731

_GP_LOC, _GP_SCALE = real(5), pos(5)
_GP_XI = np.array([-0.6, -1.0, 0.0, 0.3, 1.4])
_GP_VALUE = np_of(TD.GeneralizedPareto(to_torch(_GP_LOC), to_torch(_GP_SCALE),
                                       to_torch(_GP_XI)).icdf(
    torch.tensor(rng.uniform(0.02, 0.98, size=(3, 5)))))
_W_COV = spd(2)
_W_DF = np.array([3.5, 7.0])
_W_VALUE = spd(4, 2)

# name, kwargs (NumPy arrays become tensors), a value in the support (batch-shaped or with
# a leading sample dimension)
CASES = [
    ("Normal", dict(loc=real(4), scale=pos(4)), real(2, 4)),
    ("Uniform", dict(low=real(4) - 2, high=real(4) + 2), rng.uniform(-0.5, 0.5, (2, 4))),
    ("Bernoulli", dict(probs=unit(4)), ints(2, 2, 4)),
    ("Bernoulli", dict(logits=real(4)), ints(2, 2, 4)),
    ("Categorical", dict(probs=simplex(2, 5)), ints(5, 3, 2)),
    ("Categorical", dict(logits=real(2, 5)), ints(5, 3, 2)),
    ("OneHotCategorical", dict(probs=simplex(2, 4)), np.eye(4)[[[0, 3], [2, 1]]]),
    ("Binomial", dict(total_count=np.array([5.0, 10.0, 10.0]), probs=unit(3)),
     np.array([[0.0, 3.0, 10.0], [5.0, 7.0, 1.0]])),
    ("Binomial", dict(total_count=np.array([6.0, 6.0]), logits=real(2)),
     np.array([[0.0, 6.0], [2.0, 3.0]])),
    ("Multinomial", dict(total_count=7, probs=simplex(2, 3)),
     np.array([[[3.0, 4.0, 0.0], [1.0, 1.0, 5.0]]])),
    ("Poisson", dict(rate=pos(4)), ints(7, 2, 4)),
    ("Geometric", dict(probs=unit(4)), ints(6, 2, 4)),
    ("Geometric", dict(logits=real(4)), ints(6, 2, 4)),
    ("NegativeBinomial", dict(total_count=pos(4), probs=unit(4)), ints(9, 2, 4)),
    ("Exponential", dict(rate=pos(4)), pos(2, 4, lo=0.0)),
    ("Gamma", dict(concentration=pos(4), rate=pos(4)), pos(2, 4, lo=0.05)),
    ("Chi2", dict(df=pos(4)), pos(2, 4, lo=0.05)),
    ("Beta", dict(concentration1=pos(4), concentration0=pos(4)), unit(2, 4)),
    ("Dirichlet", dict(concentration=pos(2, 3)), simplex(4, 2, 3)),
    ("Laplace", dict(loc=real(4), scale=pos(4)), real(2, 4)),
    ("Cauchy", dict(loc=real(4), scale=pos(4)), real(2, 4)),
    ("HalfCauchy", dict(scale=pos(4)), pos(2, 4, lo=0.0)),
    ("HalfNormal", dict(scale=pos(4)), pos(2, 4, lo=0.0)),
    ("LogNormal", dict(loc=real(4), scale=pos(4)), pos(2, 4, lo=0.05)),
    ("StudentT", dict(df=pos(4, lo=0.5, hi=6.0), loc=real(4), scale=pos(4)), real(2, 4)),
    ("Gumbel", dict(loc=real(4), scale=pos(4)), real(2, 4)),
    ("Weibull", dict(scale=pos(4), concentration=pos(4)), pos(2, 4, lo=0.05)),
    ("Pareto", dict(scale=pos(4, lo=0.5, hi=1.0), alpha=pos(4)), pos(2, 4, lo=1.0, hi=4.0)),
    ("VonMises", dict(loc=real(4), concentration=pos(4, lo=0.1, hi=10.0)), real(2, 4)),
    ("FisherSnedecor", dict(df1=pos(4, lo=1.0, hi=8.0), df2=pos(4, lo=1.0, hi=8.0)),
     pos(2, 4, lo=0.05)),
    ("Kumaraswamy", dict(concentration1=pos(4), concentration0=pos(4)), unit(2, 4)),
    ("LogisticNormal", dict(loc=real(2, 3), scale=pos(2, 3)), simplex(2, 4)),
    ("ContinuousBernoulli", dict(probs=np.array([0.1, 0.3, 0.4995, 0.7, 0.95])),
     unit(2, 5)),
    ("ContinuousBernoulli", dict(logits=real(5)), unit(2, 5)),
    ("RelaxedBernoulli", dict(temperature=np.array(0.7), probs=unit(4)), unit(2, 4)),
    ("RelaxedOneHotCategorical", dict(temperature=np.array(0.6), probs=simplex(2, 3)),
     simplex(4, 2, 3)),
    ("LowRankMultivariateNormal",
     dict(loc=real(2, 3), cov_factor=real(2, 3, 2), cov_diag=pos(2, 3)), real(4, 2, 3)),
    ("MultivariateNormal", dict(loc=real(2, 3), covariance_matrix=spd(2)), real(4, 2, 3)),
    ("MultivariateNormal", dict(loc=real(2, 3), scale_tril=tril(2)), real(4, 2, 3)),
    ("MultivariateNormal", dict(loc=real(3), precision_matrix=spd(2)), real(4, 2, 3)),
    ("InverseGamma", dict(concentration=np.array([0.5, 1.5, 2.5, 4.0]), rate=pos(4)),
     pos(2, 4, lo=0.05, hi=4.0)),
    ("GeneralizedPareto", dict(loc=_GP_LOC, scale=_GP_SCALE, concentration=_GP_XI),
     _GP_VALUE),
    ("Wishart", dict(df=_W_DF, covariance_matrix=_W_COV), _W_VALUE),
    ("Wishart", dict(df=_W_DF, precision_matrix=np.linalg.inv(_W_COV)), _W_VALUE),
    ("Wishart", dict(df=_W_DF, scale_tril=np.linalg.cholesky(_W_COV)), _W_VALUE),
    ("Wishart", dict(df=np.array(4.0), scale_tril=np.linalg.cholesky(_W_COV[0])),
     _W_VALUE[:, 0]),
    ("LKJCholesky", dict(dim=4, concentration=np.array([0.7, 2.0])), corr_cholesky(3, 2, n=4)),
]

IDS = [f"{name}-{'-'.join(kw)}" for name, kw, _ in CASES]

# the distributions written after the first forty agree with PyTorch to 1e-10 (values) and
# 1e-8 (gradients); the others to 1e-7 and 1e-6
STRICT = {"InverseGamma", "GeneralizedPareto", "Wishart", "LKJCholesky"}


def _rtol(name: str) -> float:
    return 1e-10 if name in STRICT else 1e-7


def _torch_sample(dist, shape):
    """A sample from torch (its Wishart warns of singular samples on every draw)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dist.sample(torch.Size(shape))


@pytest.mark.parametrize(("name", "kwargs", "value"), CASES, ids=IDS)
def test_matches_torch(name, kwargs, value) -> None:
    ours, theirs = build(name, kwargs)
    rtol = _rtol(name)
    assert_same_structure(ours, theirs)
    assert ours.support.event_dim == theirs.support.event_dim
    assert ours.support.is_discrete == theirs.support.is_discrete
    # log_prob on a value with a leading sample dimension
    # (torch's VonMises uses a Bessel approximation good to ~1e-7; ours is i0e-exact)
    atol = 1e-6 if name == "VonMises" else 1e-10
    assert_close(ours.log_prob(to_et(value)), theirs.log_prob(to_torch(value)), rtol=rtol,
                 atol=atol, what="log_prob")

    def check(ours_fn, theirs_fn, what, atol=atol):
        """The statistic against torch's, or NotImplementedError where torch raises it."""
        expected, err = try_stat(theirs_fn)
        if err is not None:
            with pytest.raises(NotImplementedError):
                ours_fn()
            return False
        assert_close(ours_fn(), expected, rtol=rtol, atol=atol, what=what)
        return True

    for stat in ("mean", "variance", "stddev", "mode"):
        check(lambda stat=stat: getattr(ours, stat), lambda stat=stat: getattr(theirs, stat),
              stat)
    if check(ours.entropy, theirs.entropy, "entropy", atol=1e-9):
        assert_close(ours.perplexity(), theirs.perplexity(), rtol=rtol, what="perplexity")
    check(lambda: ours.cdf(to_et(value)), lambda: theirs.cdf(to_torch(value)), "cdf",
          atol=1e-12)
    probs = rng.uniform(0.05, 0.95, size=np.shape(value))
    check(lambda: ours.icdf(to_et(probs)), lambda: theirs.icdf(to_torch(probs)), "icdf",
          atol=1e-12)
    if theirs.has_enumerate_support:
        for expand in (True, False):
            expected, err = try_stat(lambda expand=expand: theirs.enumerate_support(expand))
            if err is not None:
                with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
                    ours.enumerate_support(expand)
                continue
            assert_close(ours.enumerate_support(expand), expected, what="enumerate_support")


@pytest.mark.parametrize(("name", "kwargs", "value"), CASES, ids=IDS)
def test_expand(name, kwargs, value) -> None:
    check_expand(name, kwargs, value, rtol=_rtol(name))


@pytest.mark.parametrize(("name", "kwargs", "value"), CASES, ids=IDS)
def test_sample_shapes_and_support(name, kwargs, value) -> None:
    et.manual_seed(0)
    ours, theirs = build(name, kwargs)
    for sample_shape in ((), (3,), (2, 2)):
        x = ours.sample(sample_shape)
        assert tuple(x.shape) == tuple(_torch_sample(theirs, sample_shape).shape)
        assert x.dtype == to_et(value).dtype or name in ("Categorical",)
        assert not x.requires_grad
        assert bool(ours.support.check(x).all()), f"{name}: sample outside the support"
        ours.log_prob(x)  # valid under validation
    if ours.has_rsample:
        assert tuple(ours.rsample((3,)).shape) == (3,) + tuple(theirs.batch_shape) + tuple(
            theirs.event_shape)
    else:
        with pytest.raises(NotImplementedError):
            ours.rsample()


def _float_params(kwargs):
    return [k for k, v in kwargs.items() if isinstance(v, np.ndarray)
            and k not in ("total_count",)]


@pytest.mark.parametrize(("name", "kwargs", "value"), CASES, ids=IDS)
def test_log_prob_gradients(name, kwargs, value) -> None:
    params = _float_params(kwargs)
    e_params = {k: to_et(v, k in params) for k, v in kwargs.items()}
    t_params = {k: to_torch(v, k in params) for k, v in kwargs.items()}
    ours = getattr(D, name)(**e_params)
    theirs = getattr(TD, name)(**t_params)
    weights = rng.uniform(0.5, 1.5, size=np.shape(np_of(theirs.log_prob(to_torch(value)))))
    lp_t = (theirs.log_prob(to_torch(value)) * torch.tensor(weights)).sum()
    lp_e = (ours.log_prob(to_et(value)) * et.tensor(weights)).sum()
    inputs_t = [t_params[k] for k in params]
    inputs_e = [e_params[k] for k in params]
    grads_t = torch.autograd.grad(lp_t, inputs_t, allow_unused=True)
    grads_e = ag.grad(lp_e, inputs_e, allow_unused=True)
    rtol, atol = (1e-8, 1e-10) if name in STRICT else (1e-6, 1e-9)
    for k, g_e, g_t in zip(params, grads_e, grads_t):
        if g_t is None:
            assert g_e is None or np.allclose(np_of(g_e), 0.0)
            continue
        assert g_e is not None, f"{name}: no gradient for {k}"
        g_e, g_t = np_of(g_e), np_of(g_t)
        if k == "scale_tril" and name == "Wishart":
            # only the lower triangle is a parameter: PyTorch's cholesky_solve also returns
            # a gradient for the (unread) upper triangle
            g_e, g_t = np.tril(g_e), np.tril(g_t)
        if name == "GeneralizedPareto" and k == "concentration":
            # at xi = 0 and xi = -1 PyTorch's gradient is wrong (test_more_distributions.py)
            keep = (_GP_XI != 0) & (_GP_XI != -1)
            g_e, g_t = g_e[keep], g_t[keep]
        assert_close(g_e, g_t, rtol=rtol, atol=atol, what=f"d log_prob / d {k}")


def test_scalar_parameters_give_scalar_batch_shape() -> None:
    for ours, theirs in [(D.Normal(0.0, 1.0), TD.Normal(0.0, 1.0)),
                         (D.Gamma(2.0, 3.0), TD.Gamma(2.0, 3.0)),
                         (D.Beta(2.0, 3.0), TD.Beta(2.0, 3.0)),
                         (D.Bernoulli(0.3), TD.Bernoulli(0.3)),
                         (D.Exponential(2.0), TD.Exponential(2.0))]:
        assert tuple(ours.batch_shape) == tuple(theirs.batch_shape) == ()
        assert ours.sample().dim() == 0


def test_entropy_of_binomial_and_multinomial() -> None:
    p = np.array([0.2, 0.5, 0.9])
    assert_close(D.Binomial(8, to_et(p)).entropy(), TD.Binomial(8, to_torch(p)).entropy())
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
        D.Binomial(to_et(np.array([2.0, 3.0])), to_et(p[:2])).entropy()


def test_repr_matches_torch_layout() -> None:
    ours = repr(D.Normal(et.zeros(2), et.ones(2)))
    theirs = repr(TD.Normal(torch.zeros(2), torch.ones(2)))
    assert ours == theirs.replace("torch.Size", "ember.Size")
    assert repr(D.constraints.interval(0.0, 1.0)) == repr(TD.constraints.interval(0.0, 1.0))
    assert repr(D.constraints.independent(D.constraints.real, 1)) == repr(
        TD.constraints.independent(TD.constraints.real, 1))
    for name in ("real", "positive", "simplex", "unit_interval", "nonnegative_integer",
                 "boolean", "one_hot", "lower_cholesky", "positive_definite", "real_vector"):
        assert repr(getattr(D.constraints, name)) == repr(getattr(TD.constraints, name))


def test_independent_and_mixture() -> None:
    loc, scale = real(2, 3), pos(2, 3)
    ours = D.Independent(D.Normal(to_et(loc), to_et(scale)), 1)
    theirs = TD.Independent(TD.Normal(to_torch(loc), to_torch(scale)), 1)
    x = real(4, 2, 3)
    assert tuple(ours.batch_shape) == (2,) and tuple(ours.event_shape) == (3,)
    assert_close(ours.log_prob(to_et(x)), theirs.log_prob(to_torch(x)))
    assert_close(ours.entropy(), theirs.entropy())
    assert repr(ours.support) == repr(theirs.support)
    with pytest.raises(ValueError, match="Expected reinterpreted_batch_ndims <= "):
        D.Independent(D.Normal(to_et(loc), to_et(scale)), 3)

    w = simplex(2, 3)
    ours = D.MixtureSameFamily(D.Categorical(to_et(w)), D.Normal(to_et(loc), to_et(scale)))
    theirs = TD.MixtureSameFamily(TD.Categorical(to_torch(w)),
                                  TD.Normal(to_torch(loc), to_torch(scale)))
    x = real(5, 2)
    assert tuple(ours.batch_shape) == (2,)
    assert_close(ours.log_prob(to_et(x)), theirs.log_prob(to_torch(x)))
    assert_close(ours.cdf(to_et(x)), theirs.cdf(to_torch(x)))
    assert_close(ours.mean, theirs.mean)
    assert_close(ours.variance, theirs.variance)
    assert tuple(ours.sample((7,)).shape) == (7, 2)
    assert tuple(ours.expand((4, 2)).batch_shape) == (4, 2)
    # multivariate components
    comp_loc, comp_scale = real(3, 2), pos(3, 2)
    ours = D.MixtureSameFamily(D.Categorical(to_et(w[0])), D.Independent(
        D.Normal(to_et(comp_loc), to_et(comp_scale)), 1))
    theirs = TD.MixtureSameFamily(TD.Categorical(to_torch(w[0])), TD.Independent(
        TD.Normal(to_torch(comp_loc), to_torch(comp_scale)), 1))
    x = real(5, 2)
    assert_close(ours.log_prob(to_et(x)), theirs.log_prob(to_torch(x)))
    assert_close(ours.mean, theirs.mean)
    assert_close(ours.variance, theirs.variance)
    assert tuple(ours.sample((7,)).shape) == (7, 2)
    with pytest.raises(ValueError, match="does not equal"):
        D.MixtureSameFamily(D.Categorical(to_et(simplex(4))), D.Normal(to_et(loc),
                                                                       to_et(scale)))


def test_transformed_distribution() -> None:
    loc, scale = real(3), pos(3)
    a, b = 0.5, 2.0
    ours = D.TransformedDistribution(D.Normal(to_et(loc), to_et(scale)),
                                     [D.transforms.AffineTransform(a, b),
                                      D.transforms.ExpTransform()])
    theirs = TD.TransformedDistribution(TD.Normal(to_torch(loc), to_torch(scale)),
                                        [TD.transforms.AffineTransform(a, b),
                                         TD.transforms.ExpTransform()])
    x = pos(2, 3)
    assert_close(ours.log_prob(to_et(x)), theirs.log_prob(to_torch(x)))
    assert_close(ours.cdf(to_et(x)), theirs.cdf(to_torch(x)))
    u = unit(2, 3)
    assert_close(ours.icdf(to_et(u)), theirs.icdf(to_torch(u)))
    # a decreasing transform flips the cdf
    ours = D.TransformedDistribution(D.Normal(to_et(loc), to_et(scale)),
                                     D.transforms.AffineTransform(0.0, -2.0))
    theirs = TD.TransformedDistribution(TD.Normal(to_torch(loc), to_torch(scale)),
                                        TD.transforms.AffineTransform(0.0, -2.0))
    x = real(2, 3)
    assert_close(ours.cdf(to_et(x)), theirs.cdf(to_torch(x)))
    # an event-changing transform: the base becomes Independent
    ours = D.TransformedDistribution(D.Normal(to_et(real(2, 3)), to_et(pos(2, 3))),
                                     D.transforms.StickBreakingTransform())
    assert tuple(ours.batch_shape) == (2,) and tuple(ours.event_shape) == (4,)
    assert isinstance(ours.base_dist, D.Independent)
    with pytest.raises(ValueError, match="transforms must be a Transform or list"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), "exp")


def test_von_mises_log_prob_is_exact() -> None:
    from scipy import stats

    loc, kappa, x = real(5), pos(5, lo=0.05, hi=50.0), real(5)
    ours = D.VonMises(to_et(loc), to_et(kappa)).log_prob(to_et(x))
    np.testing.assert_allclose(np_of(ours), stats.vonmises.logpdf(x, kappa, loc=loc),
                               rtol=1e-12, atol=1e-12)
