"""InverseGamma, GeneralizedPareto, Wishart and LKJCholesky beyond the checks every
distribution has in test_against_torch.py: scalar parameters, the Wishart forms, the LKJ
density, KL, validation and constructor errors against torch.distributions, their samplers
checked statistically with fixed seeds, and the gradients of their reparameterized
samples."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
import torch.distributions as TD
from scipy import special, stats

import ember_autograd as ag
import ember_distributions as D
import ember_tensor as et
from conftest import (
    assert_close,
    check_invalid_parameters,
    first_line,
    np_of,
    raised_message,
    to_et,
    to_torch,
)

rng = np.random.default_rng(2025)


def pos(*shape, lo=0.5, hi=3.0):
    return rng.uniform(lo, hi, size=shape)


def real(*shape):
    return rng.normal(size=shape)


def spd(*batch, n=3):
    a = rng.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def corr_cholesky(*batch, n=3):
    """Lower Cholesky factors of random correlation matrices."""
    c = spd(*batch, n=n)
    d = np.sqrt(np.diagonal(c, axis1=-2, axis2=-1))
    return np.linalg.cholesky(c / (d[..., :, None] * d[..., None, :]))


def t(x):
    return et.tensor(float(x), dtype=et.float64)


def test_generalized_pareto_gradients_at_special_shapes() -> None:
    """At xi = 0 and xi = -1 (special-cased in the formulas) the derivatives in xi of
    log_prob, log_survival_function and icdf are those of the neighbouring xi (central
    differences at xi +- h); PyTorch gives 0 at xi = 0 and 1 / xi^2 at xi = -1."""
    h = 1e-5
    z = np.array([0.1, 0.4, 0.75])
    for xi0 in (0.0, -1.0):
        xi = et.tensor(xi0, dtype=et.float64, requires_grad=True)
        d = D.GeneralizedPareto(t(0.0), t(1.0), xi)
        u = to_et(np.array([0.1, 0.5, 0.9]))
        for fn, arg in (("log_prob", z), ("log_survival_function", z), ("icdf", u)):
            (g,) = ag.grad(getattr(d, fn)(to_et(np_of(arg))).sum(), [xi])

            def at(x, fn=fn, arg=arg):
                return np_of(getattr(D.GeneralizedPareto(t(0.0), t(1.0), t(x)), fn)(
                    to_et(np_of(arg)))).sum()

            fd = (at(xi0 + h) - at(xi0 - h)) / (2 * h)
            assert abs(g.item() - fd) < 1e-6 * max(1.0, abs(fd)), (xi0, fn, g.item(), fd)
            # the values stay PyTorch's
            theirs = getattr(TD.GeneralizedPareto(0.0, 1.0, xi0), fn)(to_torch(np_of(arg)))
            assert_close(getattr(d, fn)(to_et(np_of(arg))), theirs, rtol=1e-12, atol=1e-15,
                         what=f"{fn} at xi={xi0}")


def test_scalar_parameters() -> None:
    w_cov, w_value = spd(2), spd(4, 2)
    pairs = [(D.InverseGamma(2.0, 3.0), TD.InverseGamma(2.0, 3.0)),
             (D.GeneralizedPareto(0.5, 2.0, 0.2), TD.GeneralizedPareto(0.5, 2.0, 0.2)),
             (D.LKJCholesky(3), TD.LKJCholesky(3))]
    for ours, theirs in pairs:
        assert tuple(ours.batch_shape) == tuple(theirs.batch_shape) == ()
        assert tuple(ours.event_shape) == tuple(theirs.event_shape)
        assert tuple(ours.sample().shape) == tuple(theirs.event_shape)
    assert D.LKJCholesky(3).concentration.item() == 1.0
    ours = D.Wishart(5.0, covariance_matrix=to_et(w_cov))
    theirs = TD.Wishart(5.0, covariance_matrix=to_torch(w_cov))
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape) == (2,)
    assert_close(ours.log_prob(to_et(w_value)), theirs.log_prob(to_torch(w_value)),
                 rtol=1e-10, what="log_prob, number df")
    assert_close(ours.entropy(), theirs.entropy(), rtol=1e-10, what="entropy, number df")
    # PyTorch keeps a number df zero-dimensional, and its mean then fails to reshape it
    assert tuple(ours.df.shape) == (2,)
    assert_close(ours.mean, 5.0 * w_cov, rtol=1e-12, what="mean, number df")


def test_wishart_parameterizations_agree() -> None:
    cov = spd(n=4)
    df = t(6.5)
    forms = [D.Wishart(df, covariance_matrix=to_et(cov)),
             D.Wishart(df, precision_matrix=to_et(np.linalg.inv(cov))),
             D.Wishart(df, scale_tril=to_et(np.linalg.cholesky(cov)))]
    x = to_et(spd(3, n=4))
    for d in forms:
        for attr in ("covariance_matrix", "precision_matrix", "scale_tril"):
            assert_close(getattr(d, attr), getattr(forms[0], attr), rtol=1e-9, atol=1e-12,
                         what=attr)
        assert_close(d.log_prob(x), forms[0].log_prob(x), rtol=1e-10, what="log_prob")
    # against SciPy's density and entropy
    assert_close(forms[0].log_prob(x), stats.wishart(6.5, cov).logpdf(
        np.moveaxis(np_of(x), 0, -1)), rtol=1e-10, what="scipy logpdf")
    assert_close(forms[0].entropy(), np.array(stats.wishart(6.5, cov).entropy()), rtol=1e-10,
                 what="scipy entropy")


def test_wishart_mode_is_nan_below_p_plus_one() -> None:
    cov = spd(n=3)
    d = D.Wishart(to_et(np.array([3.5, 4.0, 6.0])), covariance_matrix=to_et(cov))
    mode = np_of(d.mode)
    assert np.isnan(mode[:2]).all()
    np.testing.assert_allclose(mode[2], 2.0 * cov, rtol=1e-12)


def test_lkj_log_prob_against_torch_for_dims_and_concentrations() -> None:
    for dim in (2, 3, 4):
        for eta in (0.3, 1.0, 2.5, 10.0):
            theirs = TD.LKJCholesky(dim, torch.tensor(eta))
            ours = D.LKJCholesky(dim, t(eta))
            x = corr_cholesky(5, n=dim)
            assert_close(ours.log_prob(to_et(x)), theirs.log_prob(to_torch(x)), rtol=1e-10,
                         atol=1e-11, what=f"log_prob dim={dim} eta={eta}")
        # a batch of concentrations
        etas = np.array([[0.5, 1.0, 4.0]])
        x = corr_cholesky(2, 1, 3, n=dim)
        assert_close(D.LKJCholesky(dim, to_et(etas)).log_prob(to_et(x)),
                     TD.LKJCholesky(dim, to_torch(etas)).log_prob(to_torch(x)), rtol=1e-10,
                     what=f"batched log_prob dim={dim}")


def test_lkj_density_integrates_to_one_for_dim_2() -> None:
    """For dim 2 the factor is [[1, 0], [r, sqrt(1 - r^2)]]: the density of r must
    integrate to one over (-1, 1)."""
    r = np.linspace(-1, 1, 20001)[1:-1]
    x = np.zeros((r.size, 2, 2))
    x[:, 0, 0] = 1.0
    x[:, 1, 0] = r
    x[:, 1, 1] = np.sqrt(1 - r ** 2)
    for eta in (1.0, 2.0, 5.0):
        density = np.exp(np_of(D.LKJCholesky(2, t(eta)).log_prob(to_et(x))))
        assert abs(np.trapezoid(density, r) - 1.0) < 1e-4


# ------------------------------------------------------------------ KL divergence


def test_inverse_gamma_kl_matches_torch() -> None:
    c1, r1, c2, r2 = pos(3), pos(3), pos(3), pos(3)
    ours = D.kl_divergence(D.InverseGamma(to_et(c1), to_et(r1)),
                           D.InverseGamma(to_et(c2), to_et(r2)))
    theirs = TD.kl_divergence(TD.InverseGamma(to_torch(c1), to_torch(r1)),
                              TD.InverseGamma(to_torch(c2), to_torch(r2)))
    assert_close(ours, theirs, rtol=1e-10, what="KL(InverseGamma || InverseGamma)")


def _wishart_kl(n0, V0, n1, V1):
    """The closed form of KL(W(n0, V0) || W(n1, V1))."""
    p = V0.shape[-1]
    M = np.linalg.solve(V1, V0)
    mvdigamma = sum(special.digamma(n0 / 2 - i / 2) for i in range(p))
    return (-n1 / 2 * np.linalg.slogdet(M)[1] + n0 / 2 * (np.trace(M) - p)
            + special.multigammaln(n1 / 2, p) - special.multigammaln(n0 / 2, p)
            + (n0 - n1) / 2 * mvdigamma)


def test_wishart_kl() -> None:
    V0, V1 = spd(n=3), spd(n=3)
    p = D.Wishart(t(4.5), covariance_matrix=to_et(V0))
    q = D.Wishart(t(6.0), covariance_matrix=to_et(V1))
    expected = TD.kl_divergence(TD.Wishart(torch.tensor(4.5), covariance_matrix=to_torch(V0)),
                                TD.Wishart(torch.tensor(6.0), covariance_matrix=to_torch(V1)))
    assert_close(D.kl_divergence(p, q), expected, rtol=1e-9, what="KL(Wishart || Wishart)")
    assert_close(D.kl_divergence(p, q), np.array(_wishart_kl(4.5, V0, 6.0, V1)), rtol=1e-9,
                 what="closed form")
    # batched: each batch element on its own (PyTorch's Bregman formula sums the df term
    # over the batch here)
    dfs0, dfs1 = np.array([3.5, 5.0]), np.array([6.0, 4.0])
    V0s, V1s = spd(2, n=3), spd(2, n=3)
    got = D.kl_divergence(D.Wishart(to_et(dfs0), covariance_matrix=to_et(V0s)),
                          D.Wishart(to_et(dfs1), scale_tril=to_et(np.linalg.cholesky(V1s))))
    expected = [_wishart_kl(dfs0[i], V0s[i], dfs1[i], V1s[i]) for i in range(2)]
    assert_close(got, np.array(expected), rtol=1e-9, what="batched closed form")


def test_no_kl_for_generalized_pareto_and_lkj() -> None:
    for p, q in [(D.GeneralizedPareto(0.0, 1.0, 0.2), D.GeneralizedPareto(0.0, 1.0, 0.3)),
                 (D.LKJCholesky(3, 2.0), D.LKJCholesky(3, 1.0))]:
        with pytest.raises(NotImplementedError, match="No KL"):
            D.kl_divergence(p, q)


# ------------------------------------------------------------------ validation


BAD_ARGS = [
    ("InverseGamma", dict(concentration=[1.0, -1.0], rate=[1.0, 1.0])),
    ("InverseGamma", dict(concentration=[1.0], rate=[0.0])),
    ("GeneralizedPareto", dict(loc=[0.0], scale=[-1.0], concentration=[0.1])),
    ("GeneralizedPareto", dict(loc=[float("nan")], scale=[1.0], concentration=[0.1])),
    ("Wishart", dict(df=[4.0], covariance_matrix=[[1.0, 2.0], [2.0, 1.0]])),
    ("Wishart", dict(df=[4.0], precision_matrix=[[1.0, 0.5], [0.0, 1.0]])),
    ("Wishart", dict(df=[4.0], scale_tril=[[1.0, 0.0], [0.5, -1.0]])),
]


@pytest.mark.parametrize(("name", "kwargs"), BAD_ARGS,
                         ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD_ARGS)])
def test_invalid_parameters(name, kwargs) -> None:
    check_invalid_parameters(name, kwargs)
    if name != "Wishart":  # (a Wishart needs the Cholesky factor of its matrix)
        getattr(D, name)(**{k: et.tensor(v, dtype=et.float64) for k, v in kwargs.items()},
                         validate_args=False)


VALUES = [
    ("InverseGamma", dict(concentration=[2.0], rate=[1.0]), [-1.0]),
    ("GeneralizedPareto", dict(loc=[1.0], scale=[1.0], concentration=[0.5]), [0.5]),
    ("GeneralizedPareto", dict(loc=[0.0], scale=[1.0], concentration=[-0.5]), [2.5]),
    ("Wishart", dict(df=[3.0], covariance_matrix=[[1.0, 0.0], [0.0, 1.0]]),
     [[1.0, 0.0], [0.0, -1.0]]),
    ("LKJCholesky", dict(dim=2, concentration=[2.0]), [[1.0, 0.0], [0.6, 0.6]]),
]


@pytest.mark.parametrize(("name", "kwargs", "value"), VALUES, ids=[v[0] for v in VALUES])
def test_values_outside_the_support(name, kwargs, value) -> None:
    def args(make):
        return {k: make(v) if isinstance(v, list) else v for k, v in kwargs.items()}

    ours = getattr(D, name)(**args(lambda v: et.tensor(v, dtype=et.float64)))
    theirs = getattr(TD, name)(**args(lambda v: torch.tensor(v, dtype=torch.float64)))
    m_ours = raised_message(lambda: ours.log_prob(et.tensor(value, dtype=et.float64)))
    m_theirs = raised_message(lambda: theirs.log_prob(torch.tensor(value, dtype=torch.float64)))
    assert m_ours.startswith("Expected value argument (Tensor of shape ")
    assert first_line(m_ours) == first_line(m_theirs)
    if name in ("GeneralizedPareto", "InverseGamma"):
        raised_message(lambda: ours.cdf(et.tensor(value, dtype=et.float64)))
    getattr(D, name)(**args(lambda v: et.tensor(v, dtype=et.float64)),
                     validate_args=False).log_prob(et.tensor(value, dtype=et.float64))


def test_constructor_errors_match_torch() -> None:
    def T(v):
        return et.tensor(v, dtype=et.float64)

    def TT(v):
        return torch.tensor(v, dtype=torch.float64)

    eye = [[1.0, 0.0], [0.0, 1.0]]
    cases = [
        # (maker, exception type)
        (lambda M, T: M.Wishart(T(3.0)), AssertionError),
        (lambda M, T: M.Wishart(T(3.0), covariance_matrix=T(eye), scale_tril=T(eye)),
         AssertionError),
        (lambda M, T: M.Wishart(T(3.0), covariance_matrix=T([1.0])), ValueError),
        (lambda M, T: M.Wishart(T(1.0), covariance_matrix=T(eye)), ValueError),
        (lambda M, T: M.Wishart(T([4.0, 0.5]), covariance_matrix=T(eye)), ValueError),
        (lambda M, T: M.Wishart(1.0, covariance_matrix=T(eye)), ValueError),
        (lambda M, T: M.Wishart(T([3.0, 3.0, 3.0]), covariance_matrix=T([eye, eye])),
         (ValueError, RuntimeError)),
        (lambda M, T: M.LKJCholesky(1, T(1.0)), ValueError),
        (lambda M, T: M.LKJCholesky(0), ValueError),
    ]
    for make, kind in cases:
        ours = raised_message(lambda make=make: make(D, T), kind)
        theirs = raised_message(lambda make=make: make(TD, TT), kind)
        if kind is not ValueError:
            continue  # shape errors: the type only
        assert first_line(ours) == first_line(theirs)
    assert raised_message(lambda: D.Wishart(T(1.0), covariance_matrix=T(eye))) == (
        "Value of df=1.0 expected to be greater than ndim - 1 = 1.")
    assert raised_message(lambda: D.LKJCholesky(1)) == (
        "Expected dim to be an integer greater than or equal to 2. Found dim=1.")
    assert raised_message(lambda: D.Wishart(T(3.0)), AssertionError) == (
        "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
        "specified.")


def test_lkj_invalid_concentration() -> None:
    # PyTorch fails inside the Beta it builds (a Dirichlet message), even with
    # validate_args=False; here the concentration itself is checked, as for any parameter
    for eta in (0.0, -1.0):
        msg = raised_message(lambda eta=eta: D.LKJCholesky(3, et.tensor([eta, 1.0],
                                                                   dtype=et.float64)))
        assert msg.startswith("Expected parameter concentration (Tensor of shape (2,)) of "
                              "distribution LKJCholesky")
        with pytest.raises(ValueError):
            TD.LKJCholesky(3, torch.tensor([eta, 1.0]))
    D.LKJCholesky(3, t(-1.0), validate_args=False)


def test_wishart_low_df_warns() -> None:
    with pytest.warns(UserWarning, match="Low df values detected"):
        d = D.Wishart(t(2.5), covariance_matrix=et.eye(3, dtype=et.float64))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        D.Wishart(t(3.0), covariance_matrix=et.eye(3, dtype=et.float64))
    et.manual_seed(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = d.sample((50,))
    assert tuple(x.shape) == (50, 3, 3)


def test_wishart_redraws_singular_samples() -> None:
    d = D.Wishart(t(5.0), covariance_matrix=et.eye(3, dtype=et.float64))
    calls = []
    real_sampler = d._bartlett_sampling

    def flaky(sample_shape):
        x = real_sampler(sample_shape)
        calls.append(1)
        if len(calls) == 1:  # the first draw: element 1 singular
            mask = et.zeros(tuple(x.shape), dtype=et.float64)
            mask[1] = 1.0
            x = et.where(mask > 0, et.zeros_like(x), x)
        return x

    d._bartlett_sampling = flaky
    et.manual_seed(0)
    with pytest.warns(UserWarning, match="Singular sample detected"):
        x = d.sample((4,))
    assert len(calls) == 2
    assert bool(d.support.check(x).all())
    # a well-behaved draw warns nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        D.Wishart(t(5.0), covariance_matrix=et.eye(3, dtype=et.float64)).sample((20,))


# ------------------------------------------------------------------ samplers

N = 4000
P_MIN = 1e-3


UNIVARIATE = [
    ("InverseGamma", lambda: D.InverseGamma(t(3.0), t(2.0)),
     stats.invgamma(3.0, scale=2.0).cdf),
    ("InverseGamma-small", lambda: D.InverseGamma(t(0.6), t(1.5)),
     stats.invgamma(0.6, scale=1.5).cdf),
    ("GeneralizedPareto", lambda: D.GeneralizedPareto(t(0.5), t(2.0), t(0.3)),
     stats.genpareto(0.3, loc=0.5, scale=2.0).cdf),
    ("GeneralizedPareto-negative", lambda: D.GeneralizedPareto(t(-1.0), t(1.5), t(-0.4)),
     stats.genpareto(-0.4, loc=-1.0, scale=1.5).cdf),
    ("GeneralizedPareto-zero", lambda: D.GeneralizedPareto(t(0.0), t(1.5), t(0.0)),
     stats.expon(scale=1.5).cdf),
]


@pytest.mark.parametrize(("name", "make", "cdf"), UNIVARIATE, ids=[c[0] for c in UNIVARIATE])
def test_univariate_goodness_of_fit(name, make, cdf) -> None:
    et.manual_seed(2024)
    x = np_of(make().sample((N,)))
    assert x.shape == (N,)
    assert stats.kstest(x, cdf).pvalue > P_MIN
    # the test's power: a 10% error in the scale is caught
    assert stats.kstest(x * 1.1, cdf).pvalue < P_MIN


def test_univariate_cdfs_against_scipy() -> None:
    x = np.linspace(0.05, 6.0, 40)
    # (1 - the gamma's lower tail, as PyTorch: absolute accuracy in the far left tail)
    np.testing.assert_allclose(np_of(D.InverseGamma(t(2.5), t(1.5)).cdf(to_et(x))),
                               stats.invgamma(2.5, scale=1.5).cdf(x), rtol=1e-10,
                               atol=1e-15)
    np.testing.assert_allclose(np_of(D.InverseGamma(t(2.5), t(1.5)).log_prob(to_et(x))),
                               stats.invgamma(2.5, scale=1.5).logpdf(x), rtol=1e-10)
    for xi in (-0.3, 0.0, 0.4):
        d = D.GeneralizedPareto(t(0.0), t(2.0), t(xi))
        ref = stats.genpareto(xi, scale=2.0)
        xs = x[x < (-2.0 / xi if xi < 0 else np.inf)]
        np.testing.assert_allclose(np_of(d.cdf(to_et(xs))), ref.cdf(xs), rtol=1e-10)
        np.testing.assert_allclose(np_of(d.log_prob(to_et(xs))), ref.logpdf(xs), rtol=1e-10)
        np.testing.assert_allclose(np_of(d.log_survival_function(to_et(xs))), ref.logsf(xs),
                                   rtol=1e-10)
        u = np.linspace(0.01, 0.99, 9)
        np.testing.assert_allclose(np_of(d.icdf(to_et(u))), ref.ppf(u), rtol=1e-10)
        assert_close(d.entropy(), np.array(ref.entropy()), rtol=1e-10, what="entropy")


def test_wishart_sample_moments() -> None:
    et.manual_seed(3)
    n = 20000
    cov = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 0.8]])
    df = 4.5
    x = np_of(D.Wishart(t(df), covariance_matrix=to_et(cov)).sample((n,)))
    var = df * (cov ** 2 + np.outer(np.diag(cov), np.diag(cov)))
    np.testing.assert_allclose(x.mean(0), df * cov, atol=4 * np.sqrt(var.max() / n))
    np.testing.assert_allclose(x.var(0), var, rtol=0.1)
    # the diagonal: x_ii / cov_ii ~ chi2(df)
    assert stats.kstest(x[:4000, 0, 0] / cov[0, 0], stats.chi2(df).cdf).pvalue > P_MIN
    assert stats.kstest(x[:4000, 2, 2] / cov[2, 2], stats.chi2(df).cdf).pvalue > P_MIN
    np.testing.assert_allclose(x, np.swapaxes(x, -1, -2), atol=1e-12)


@pytest.mark.parametrize(("dim", "eta"), [(2, 1.0), (3, 1.0), (4, 2.0), (4, 0.5), (5, 3.0)])
def test_lkj_samples(dim, eta) -> None:
    et.manual_seed(5)
    L = np_of(D.LKJCholesky(dim, t(eta)).sample((N,)))
    # valid Cholesky factors of correlation matrices
    assert L.shape == (N, dim, dim)
    np.testing.assert_array_equal(np.triu(L, 1), 0.0)
    assert (np.diagonal(L, axis1=-2, axis2=-1) > 0).all()
    C = L @ np.swapaxes(L, -1, -2)
    np.testing.assert_allclose(np.diagonal(C, axis1=-2, axis2=-1), 1.0, atol=1e-12)
    # every off-diagonal correlation of LKJ(eta) is (Beta(b, b) on (-1, 1)) with
    # b = eta - 1 + dim / 2
    b = eta - 1 + dim / 2
    ref = stats.beta(b, b, loc=-1, scale=2)
    for i in range(1, dim):
        for j in range(i):
            assert stats.kstest(C[:, i, j], ref.cdf).pvalue > P_MIN, (i, j)


def test_lkj_batched_samples() -> None:
    et.manual_seed(6)
    d = D.LKJCholesky(3, to_et(np.array([0.5, 4.0])))
    L = d.sample((3000,))
    assert tuple(L.shape) == (3000, 2, 3, 3)
    assert bool(D.constraints.corr_cholesky.check(L).all())
    C = np_of(L @ L.mT)
    for k, eta in enumerate((0.5, 4.0)):
        b = eta - 1 + 1.5
        assert stats.kstest(C[:, k, 2, 1], stats.beta(b, b, loc=-1, scale=2).cdf).pvalue > P_MIN


def test_seed_reproducibility() -> None:
    for make in (lambda: D.Wishart(t(4.0), covariance_matrix=et.eye(3, dtype=et.float64)),
                 lambda: D.LKJCholesky(3, t(2.0)),
                 lambda: D.InverseGamma(t(2.0), t(1.0)),
                 lambda: D.GeneralizedPareto(t(0.0), t(1.0), t(0.2))):
        et.manual_seed(11)
        a = np_of(make().sample((10,)))
        et.manual_seed(11)
        np.testing.assert_array_equal(a, np_of(make().sample((10,))))


# ------------------------------------------------------------------ reparameterization


def test_generalized_pareto_rsample_gradient_is_the_quantile_derivative() -> None:
    loc = et.tensor([0.5, -1.0], dtype=et.float64, requires_grad=True)
    scale = et.tensor([2.0, 0.5], dtype=et.float64, requires_grad=True)
    xi = et.tensor([0.3, -0.4], dtype=et.float64, requires_grad=True)
    et.manual_seed(0)
    x = D.GeneralizedPareto(loc, scale, xi).rsample((500,))
    g_loc, g_scale, g_xi = ag.grad(x.sum(), [loc, scale, xi])
    xs, s, k = np_of(x), np_of(scale), np_of(xi)
    z = (xs - np_of(loc)) / s
    log_tail = -np.log1p(k * z) / k  # log(1 - u) at the u that gave x
    np.testing.assert_allclose(np_of(g_loc), [500.0, 500.0], rtol=1e-12)
    np.testing.assert_allclose(np_of(g_scale), z.sum(0), rtol=1e-10)
    # x = loc + scale / xi * (exp(-xi log_tail) - 1): d/dxi at fixed u
    e = np.exp(-k * log_tail)
    dx = s * (-log_tail * e * k - (e - 1)) / k ** 2
    np.testing.assert_allclose(np_of(g_xi), dx.sum(0), rtol=1e-8)


def test_inverse_gamma_rsample_gradient() -> None:
    c = et.tensor(4.0, dtype=et.float64, requires_grad=True)
    r = et.tensor(2.0, dtype=et.float64, requires_grad=True)
    et.manual_seed(1)
    x = D.InverseGamma(c, r).rsample((20000,))
    gc, gr = ag.grad(x.mean(), [c, r])
    # E[x] = r / (c - 1): d/dc = -r / (c - 1)^2 = -2/9, d/dr = 1 / (c - 1) = 1/3
    assert abs(gr.item() - 1 / 3) < 0.01
    assert abs(gc.item() + 2 / 9) < 0.01


def test_wishart_rsample_gradient() -> None:
    """E[X] = df * cov: the pathwise gradients of the sample mean."""
    df = et.tensor(5.0, dtype=et.float64, requires_grad=True)
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    tril = et.tensor(np.linalg.cholesky(cov), requires_grad=True)
    et.manual_seed(2)
    x = D.Wishart(df, scale_tril=tril).rsample((20000,))
    weights = np.array([[1.0, 0.3], [0.3, 0.5]])
    g_df, g_tril = ag.grad((x.mean(0) * et.tensor(weights)).sum(), [df, tril])
    assert abs(g_df.item() - (weights * cov).sum()) < 0.05
    # d/dL of df * sum(W * L L^T) = df * (W + W^T) L
    expected = 5.0 * (weights + weights.T) @ np.linalg.cholesky(cov)
    np.testing.assert_allclose(np.tril(np_of(g_tril)), np.tril(expected), atol=0.2)
    assert D.Wishart(df, scale_tril=tril).sample().requires_grad is False


def test_lkj_has_no_rsample() -> None:
    assert D.LKJCholesky.has_rsample is False
    conc = et.tensor(2.0, dtype=et.float64, requires_grad=True)
    assert D.LKJCholesky(3, conc).sample().requires_grad is False


def test_exports() -> None:
    # (the meta-package's ember.distributions is this module: packages/ember/tests)
    for name in ("InverseGamma", "GeneralizedPareto", "Wishart", "LKJCholesky",
                 "OneHotCategoricalStraightThrough"):
        assert name in D.__all__
    assert issubclass(D.InverseGamma, D.TransformedDistribution)
    assert issubclass(D.Wishart, D.ExponentialFamily)
    assert not math.isnan(D.InverseGamma(t(3.0), t(1.0)).mean.item())


def test_one_hot_straight_through_passes_the_gradient_of_probs() -> None:
    # the straight-through estimator: the sample is one-hot, its gradient that of probs
    logits = np.array([[0.3, -1.2, 0.8, 0.1], [1.5, 0.2, -0.4, 0.0]])
    weights = np.array([[1.0, -2.0, 0.5, 3.0], [0.25, 1.0, -1.0, 2.0]])
    leaf, tleaf = to_et(logits, True), to_torch(logits, True)
    ours = D.OneHotCategoricalStraightThrough(logits=leaf)
    theirs = torch.distributions.OneHotCategoricalStraightThrough(logits=tleaf)
    assert ours.has_rsample and isinstance(ours, D.OneHotCategorical)
    et.manual_seed(0)
    sample = ours.rsample((3,))
    assert tuple(sample.shape) == (3, 2, 4)
    np.testing.assert_array_equal(np_of(sample).sum(-1), 1.0)
    assert set(np.unique(np_of(sample))) <= {0.0, 1.0}
    (grad,) = ag.grad((sample * to_et(weights)).sum(), [leaf])
    (want,) = torch.autograd.grad((theirs.rsample((3,)) * to_torch(weights)).sum(), [tleaf])
    assert_close(grad, want)
    assert tuple(ours.expand((5, 2)).batch_shape) == (5, 2)
    assert type(ours.expand((5, 2))) is D.OneHotCategoricalStraightThrough
    assert_close(ours.log_prob(sample), theirs.log_prob(to_torch(np_of(sample))))
