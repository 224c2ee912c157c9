"""Samplers, with a fixed seed: goodness of fit (Kolmogorov-Smirnov for continuous
distributions, chi-square for discrete ones; thresholds far from what a correct sampler
produces, yet failed by a wrong one), moments of multivariate samples, and the gradients of
reparameterized samples."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.distributions as TD
from scipy import stats

import ember_autograd as ag
import ember_distributions as D
import ember_tensor as et
from conftest import np_of

N = 4000
P_MIN = 1e-3  # a correct sampler fails this with probability 1e-3 per seed; the seed is fixed


def t(x):
    return et.tensor(float(x), dtype=et.float64)


CONTINUOUS = [
    ("Normal", lambda: D.Normal(t(1.5), t(0.7)), stats.norm(1.5, 0.7).cdf),
    ("Uniform", lambda: D.Uniform(t(-1.0), t(3.0)), stats.uniform(-1.0, 4.0).cdf),
    ("Exponential", lambda: D.Exponential(t(2.5)), stats.expon(scale=1 / 2.5).cdf),
    ("Gamma-small", lambda: D.Gamma(t(0.3), t(2.0)), stats.gamma(0.3, scale=0.5).cdf),
    ("Gamma", lambda: D.Gamma(t(4.2), t(1.5)), stats.gamma(4.2, scale=1 / 1.5).cdf),
    ("Chi2", lambda: D.Chi2(t(3.0)), stats.chi2(3.0).cdf),
    ("Beta", lambda: D.Beta(t(0.6), t(2.5)), stats.beta(0.6, 2.5).cdf),
    ("Laplace", lambda: D.Laplace(t(0.3), t(1.2)), stats.laplace(0.3, 1.2).cdf),
    ("Cauchy", lambda: D.Cauchy(t(0.3), t(1.2)), stats.cauchy(0.3, 1.2).cdf),
    ("HalfCauchy", lambda: D.HalfCauchy(t(1.2)), stats.halfcauchy(scale=1.2).cdf),
    ("HalfNormal", lambda: D.HalfNormal(t(1.2)), stats.halfnorm(scale=1.2).cdf),
    ("LogNormal", lambda: D.LogNormal(t(0.2), t(0.5)),
     stats.lognorm(0.5, scale=math.exp(0.2)).cdf),
    ("StudentT", lambda: D.StudentT(t(3.5), t(0.5), t(2.0)), stats.t(3.5, 0.5, 2.0).cdf),
    ("Gumbel", lambda: D.Gumbel(t(0.5), t(2.0)), stats.gumbel_r(0.5, 2.0).cdf),
    ("Weibull", lambda: D.Weibull(t(1.5), t(0.8)), stats.weibull_min(0.8, scale=1.5).cdf),
    ("Pareto", lambda: D.Pareto(t(1.5), t(2.5)), stats.pareto(2.5, scale=1.5).cdf),
    ("FisherSnedecor", lambda: D.FisherSnedecor(t(4.0), t(7.0)), stats.f(4.0, 7.0).cdf),
    ("VonMises", lambda: D.VonMises(t(0.0), t(2.0)), stats.vonmises(2.0).cdf),
    ("VonMises-small", lambda: D.VonMises(t(0.0), t(1e-3)),
     stats.vonmises(1e-3).cdf),
    ("Kumaraswamy", lambda: D.Kumaraswamy(t(2.0), t(3.0)),
     lambda x: 1 - (1 - x ** 2.0) ** 3.0),
    ("ContinuousBernoulli", lambda: D.ContinuousBernoulli(t(0.8)),
     lambda x: np_of(TD.ContinuousBernoulli(torch.tensor(0.8)).cdf(torch.tensor(x)))),
]


@pytest.mark.parametrize(("name", "make", "cdf"), CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_goodness_of_fit(name, make, cdf) -> None:
    et.manual_seed(2024)
    x = np_of(make().sample((N,)))
    assert x.shape == (N,)
    assert stats.kstest(x, cdf).pvalue > P_MIN


def test_a_wrong_sampler_fails_the_test() -> None:
    """The test's power: a 5% error in the scale is caught."""
    et.manual_seed(2024)
    x = np_of(D.Normal(t(0.0), t(1.05)).sample((N,)))
    assert stats.kstest(x, stats.norm(0.0, 1.0).cdf).pvalue < 0.05
    x = np_of(D.Gamma(t(2.0), t(1.0)).sample((N,)))
    assert stats.kstest(x, stats.gamma(2.2).cdf).pvalue < P_MIN


def _chi2_pvalue(samples, pmf, support):
    counts = np.array([(samples == k).sum() for k in support], dtype=np.float64)
    expected = pmf(np.asarray(support, dtype=np.float64)) * len(samples)
    keep = expected >= 5
    obs = np.append(counts[keep], len(samples) - counts[keep].sum())
    exp = np.append(expected[keep], len(samples) - expected[keep].sum())
    if exp[-1] < 1e-9:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


DISCRETE = [
    ("Bernoulli", lambda: D.Bernoulli(t(0.3)), stats.bernoulli(0.3).pmf, range(2)),
    ("Poisson-small", lambda: D.Poisson(t(3.5)), stats.poisson(3.5).pmf, range(20)),
    ("Poisson-large", lambda: D.Poisson(t(45.0)), stats.poisson(45.0).pmf, range(100)),
    ("Geometric", lambda: D.Geometric(t(0.25)), stats.geom(0.25, loc=-1).pmf, range(40)),
    ("Binomial-small", lambda: D.Binomial(t(12.0), t(0.3)), stats.binom(12, 0.3).pmf,
     range(13)),
    ("Binomial-large", lambda: D.Binomial(t(200.0), t(0.6)), stats.binom(200, 0.6).pmf,
     range(201)),
    ("NegativeBinomial", lambda: D.NegativeBinomial(t(3.0), t(0.4)),
     stats.nbinom(3.0, 0.6).pmf, range(40)),
    ("Categorical", lambda: D.Categorical(et.tensor([0.1, 0.2, 0.3, 0.4], dtype=et.float64)),
     lambda k: np.array([0.1, 0.2, 0.3, 0.4])[k.astype(int)], range(4)),
]


@pytest.mark.parametrize(("name", "make", "pmf", "support"), DISCRETE,
                         ids=[c[0] for c in DISCRETE])
def test_discrete_goodness_of_fit(name, make, pmf, support) -> None:
    et.manual_seed(7)
    x = np_of(make().sample((N,)))
    assert _chi2_pvalue(x, pmf, support) > P_MIN


def test_chi_square_power() -> None:
    et.manual_seed(7)
    x = np_of(D.Poisson(t(3.5)).sample((N,)))
    assert _chi2_pvalue(x, stats.poisson(3.8).pmf, range(20)) < P_MIN


def test_multivariate_moments() -> None:
    et.manual_seed(3)
    n = 20000
    conc = np.array([0.5, 2.0, 4.0])
    x = np_of(D.Dirichlet(et.tensor(conc)).sample((n,)))
    np.testing.assert_allclose(x.mean(0), conc / conc.sum(), atol=0.01)
    np.testing.assert_allclose(x.sum(-1), 1.0, atol=1e-12)
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    loc = np.array([1.0, -1.0, 0.5])
    x = np_of(D.MultivariateNormal(et.tensor(loc), covariance_matrix=et.tensor(cov))
              .sample((n,)))
    np.testing.assert_allclose(x.mean(0), loc, atol=0.05)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)
    W = np.array([[1.0], [0.5], [-1.0]])
    d = np.array([0.5, 0.2, 0.3])
    x = np_of(D.LowRankMultivariateNormal(et.tensor(loc), et.tensor(W), et.tensor(d))
              .sample((n,)))
    np.testing.assert_allclose(np.cov(x.T), W @ W.T + np.diag(d), atol=0.06)
    probs = np.array([0.2, 0.5, 0.3])
    x = np_of(D.Multinomial(10, et.tensor(probs)).sample((n,)))
    np.testing.assert_array_equal(x.sum(-1), 10.0)
    np.testing.assert_allclose(x.mean(0), 10 * probs, atol=0.05)
    x = np_of(D.OneHotCategorical(et.tensor(probs)).sample((n,)))
    np.testing.assert_allclose(x.mean(0), probs, atol=0.015)
    x = np_of(D.RelaxedOneHotCategorical(et.tensor(0.5, dtype=et.float64),
                                         et.tensor(probs)).sample((n,)))
    np.testing.assert_allclose(x.sum(-1), 1.0, atol=1e-12)
    np.testing.assert_allclose((x.argmax(-1)[:, None] == np.arange(3)).mean(0), probs,
                               atol=0.015)  # Gumbel-max: the argmax is categorical
    x = np_of(D.RelaxedBernoulli(et.tensor(0.5, dtype=et.float64), t(0.3)).sample((n,)))
    assert abs((x > 0.5).mean() - 0.3) < 0.015


def test_seed_reproducibility() -> None:
    et.manual_seed(11)
    a = np_of(D.Gamma(t(0.7), t(1.0)).sample((50,)))
    et.manual_seed(11)
    b = np_of(D.Gamma(t(0.7), t(1.0)).sample((50,)))
    np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------ reparameterization


def test_normal_rsample_gradient() -> None:
    loc = et.tensor([0.5, -1.0], dtype=et.float64, requires_grad=True)
    scale = et.tensor([1.0, 2.0], dtype=et.float64, requires_grad=True)
    et.manual_seed(0)
    x = D.Normal(loc, scale).rsample((1000,))
    g_loc, g_scale = ag.grad(x.mean(), [loc, scale])
    np.testing.assert_allclose(np_of(g_loc), [0.5, 0.5], rtol=1e-12)  # d mean / d loc
    eps = (np_of(x) - np_of(loc)) / np_of(scale)
    np.testing.assert_allclose(np_of(g_scale), eps.mean(0) / 2, rtol=1e-10)
    assert D.Normal(loc, scale).sample().requires_grad is False


@pytest.mark.parametrize("alpha", [0.05, 0.4, 1.0, 2.5, 30.0])
def test_gamma_rsample_gradient_matches_the_quantile_derivative(alpha) -> None:
    """dx/dalpha at fixed u = F(x): finite differences of scipy's quantile function."""
    a = et.tensor([alpha], dtype=et.float64, requires_grad=True)
    et.manual_seed(5)
    x = D.Gamma(a, t(1.0)).rsample((200,))
    (g,) = ag.grad(x.sum(), [a])
    xs = np_of(x)[:, 0]
    u = stats.gamma(alpha).cdf(xs)
    h = 1e-5 * alpha
    dq = (stats.gamma(alpha + h).ppf(u) - stats.gamma(alpha - h).ppf(u)) / (2 * h)
    ok = np.isfinite(dq) & (u > 1e-10) & (u < 1 - 1e-10)
    assert ok.sum() > 150
    from ember_distributions._random import _standard_gamma_grad

    per_sample = np_of(_standard_gamma_grad(et.tensor(xs), et.full((200,), alpha,
                                                                   dtype=et.float64)))
    np.testing.assert_allclose(per_sample[ok], dq[ok], rtol=2e-4, atol=1e-9)
    np.testing.assert_allclose(np_of(g)[0], per_sample.sum(), rtol=1e-12)


@pytest.mark.parametrize("alpha", [0.3, 1.7, 12.0])
def test_gamma_rsample_gradient_matches_torch(alpha) -> None:
    from ember_distributions._random import _standard_gamma_grad

    xs = stats.gamma(alpha).ppf(np.linspace(0.01, 0.99, 41))
    ours = np_of(_standard_gamma_grad(et.tensor(xs), et.full((41,), alpha, dtype=et.float64)))
    theirs = torch._standard_gamma_grad(torch.full((41,), alpha), torch.tensor(xs)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=2e-3, atol=1e-6)


def test_gamma_rate_and_mean_gradients() -> None:
    """d E[x] / d(concentration, rate) estimated from rsample, against the exact 1/rate and
    -concentration/rate^2."""
    c = et.tensor(3.0, dtype=et.float64, requires_grad=True)
    r = et.tensor(2.0, dtype=et.float64, requires_grad=True)
    et.manual_seed(1)
    x = D.Gamma(c, r).rsample((20000,))
    gc, gr = ag.grad(x.mean(), [c, r])
    assert abs(gc.item() - 0.5) < 0.02
    assert abs(gr.item() + 0.75) < 0.03


def test_beta_and_dirichlet_rsample_gradients() -> None:
    a = et.tensor(2.0, dtype=et.float64, requires_grad=True)
    b = et.tensor(3.0, dtype=et.float64, requires_grad=True)
    et.manual_seed(2)
    x = D.Beta(a, b).rsample((20000,))
    ga, gb = ag.grad(x.mean(), [a, b])
    # E[x] = a / (a + b): d/da = b / (a+b)^2 = 0.12, d/db = -a / (a+b)^2 = -0.08
    assert abs(ga.item() - 0.12) < 0.01
    assert abs(gb.item() + 0.08) < 0.01
    conc = et.tensor([1.0, 2.0, 3.0], dtype=et.float64, requires_grad=True)
    x = D.Dirichlet(conc).rsample((20000,))
    (g,) = ag.grad(x[..., 0].mean(), [conc])
    np.testing.assert_allclose(np_of(g), [5 / 36, -1 / 36, -1 / 36], atol=0.01)


@pytest.mark.parametrize("name", ["Uniform", "Exponential", "Laplace", "Cauchy", "LogNormal",
                                  "StudentT", "Gumbel", "Weibull", "Pareto", "Kumaraswamy",
                                  "HalfNormal", "ContinuousBernoulli", "FisherSnedecor",
                                  "Chi2", "MultivariateNormal", "LowRankMultivariateNormal",
                                  "LogisticNormal", "RelaxedBernoulli",
                                  "RelaxedOneHotCategorical"])
def test_rsample_is_differentiable(name) -> None:
    p = et.tensor([0.7, 0.4], dtype=et.float64, requires_grad=True)
    q = et.tensor([2.0, 3.0], dtype=et.float64, requires_grad=True)
    makers = {
        "Uniform": lambda: D.Uniform(p - 1, q),
        "Exponential": lambda: D.Exponential(q),
        "Laplace": lambda: D.Laplace(p, q),
        "Cauchy": lambda: D.Cauchy(p, q),
        "LogNormal": lambda: D.LogNormal(p, q),
        "StudentT": lambda: D.StudentT(q, p, q),
        "Gumbel": lambda: D.Gumbel(p, q),
        "Weibull": lambda: D.Weibull(q, q),
        "Pareto": lambda: D.Pareto(q, q),
        "Kumaraswamy": lambda: D.Kumaraswamy(q, q),
        "HalfNormal": lambda: D.HalfNormal(q),
        "ContinuousBernoulli": lambda: D.ContinuousBernoulli(p),
        "FisherSnedecor": lambda: D.FisherSnedecor(q, q),
        "Chi2": lambda: D.Chi2(q),
        "MultivariateNormal": lambda: D.MultivariateNormal(p, et.diag_embed(q)),
        "LowRankMultivariateNormal": lambda: D.LowRankMultivariateNormal(
            p, p.unsqueeze(-1), q),
        "LogisticNormal": lambda: D.LogisticNormal(p, q),
        "RelaxedBernoulli": lambda: D.RelaxedBernoulli(et.tensor(0.5, dtype=et.float64), p),
        "RelaxedOneHotCategorical": lambda: D.RelaxedOneHotCategorical(
            et.tensor(0.5, dtype=et.float64), p),
    }
    et.manual_seed(0)
    x = makers[name]().rsample((5,))
    grads = ag.grad((x * x).sum(), [p, q], allow_unused=True)
    assert any(g is not None and np.isfinite(np_of(g)).all() and np.abs(np_of(g)).sum() > 0
               for g in grads)
