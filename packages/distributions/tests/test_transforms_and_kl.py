"""Transforms (forward, inverse, log_abs_det_jacobian, caching, shapes), the constraint
registry, and kl_divergence for the registered pairs, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.distributions as TD

import ember_autograd as ag
import ember_distributions as D
import ember_tensor as et
from conftest import assert_close, np_of, to_et, to_torch

rng = np.random.default_rng(99)
x_real = rng.normal(size=(4, 3))
x_pos = rng.uniform(0.2, 3.0, size=(4, 3))
x_unit = rng.uniform(0.05, 0.95, size=(4, 3))
x_square = rng.normal(size=(2, 3, 3))
scale_arr = rng.uniform(0.5, 2.0, size=3)

TRANSFORMS = [
    ("Exp", lambda M: M.ExpTransform(), x_real),
    ("Affine", lambda M: M.AffineTransform(0.5, -2.0), x_real),
    ("Affine-tensor", lambda M, c=to_torch: M.AffineTransform(
        (to_torch if M is TD.transforms else to_et)(scale_arr),
        (to_torch if M is TD.transforms else to_et)(scale_arr)), x_real),
    ("Affine-event", lambda M: M.AffineTransform(
        (to_torch if M is TD.transforms else to_et)(scale_arr),
        (to_torch if M is TD.transforms else to_et)(scale_arr), event_dim=1), x_real),
    ("Sigmoid", lambda M: M.SigmoidTransform(), x_real),
    ("Tanh", lambda M: M.TanhTransform(), x_real),
    ("Softplus", lambda M: M.SoftplusTransform(), x_real),
    ("Power", lambda M: M.PowerTransform(
        (to_torch if M is TD.transforms else to_et)(np.array(2.5))), x_pos),
    ("StickBreaking", lambda M: M.StickBreakingTransform(), x_real),
    ("Compose", lambda M: M.ComposeTransform([M.AffineTransform(1.0, 0.5),
                                              M.ExpTransform()]), x_real),
    ("Independent", lambda M: M.IndependentTransform(M.ExpTransform(), 1), x_real),
    ("Reshape", lambda M: M.ReshapeTransform((3,), (3, 1)), x_real),
    ("LowerCholesky", lambda M: M.LowerCholeskyTransform(), x_square),
    ("CorrCholesky", lambda M: M.CorrCholeskyTransform(), x_real),
    ("Cat", lambda M: M.CatTransform([M.ExpTransform(), M.SigmoidTransform()], dim=-1,
                                     lengths=[1, 2]), x_real),
    ("Stack", lambda M: M.StackTransform([M.ExpTransform(), M.TanhTransform(),
                                          M.AffineTransform(1.0, 3.0)], dim=-1), x_real),
    ("Abs", lambda M: M.AbsTransform(), x_real),
    ("Softmax", lambda M: M.SoftmaxTransform(), x_real),
    ("PositiveDefinite", lambda M: M.PositiveDefiniteTransform(), x_square),
]


@pytest.mark.parametrize(("name", "make", "x"), TRANSFORMS, ids=[c[0] for c in TRANSFORMS])
def test_transform_matches_torch(name, make, x) -> None:
    ours, theirs = make(D.transforms), make(TD.transforms)
    y_e, y_t = ours(to_et(x)), theirs(to_torch(x))
    assert_close(y_e, y_t, what="forward")
    assert_close(ours.inv(y_e), theirs.inv(y_t), rtol=1e-7, atol=1e-9, what="inverse")
    assert ours.bijective == theirs.bijective
    assert type(ours.domain).__name__ == type(theirs.domain).__name__
    assert type(ours.codomain).__name__ == type(theirs.codomain).__name__
    assert ours.domain.event_dim == theirs.domain.event_dim
    assert ours.codomain.event_dim == theirs.codomain.event_dim
    assert tuple(ours.forward_shape(et.Size(x.shape))) == tuple(
        theirs.forward_shape(torch.Size(x.shape)))
    try:
        expected = theirs.log_abs_det_jacobian(to_torch(x), y_t)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours.log_abs_det_jacobian(to_et(x), y_e)
    else:
        assert_close(ours.log_abs_det_jacobian(to_et(x), y_e), expected, rtol=1e-8,
                     what="log_abs_det_jacobian")
    if theirs.bijective:
        inv_t = theirs.inv
        assert_close(ours.inv.log_abs_det_jacobian(y_e, to_et(x)),
                     inv_t.log_abs_det_jacobian(y_t, to_torch(x)), rtol=1e-8)
        assert ours.inv.inv is ours


def test_log_abs_det_jacobian_is_the_derivative() -> None:
    """For elementwise transforms: log |dy/dx| by autograd."""
    for t in (D.transforms.ExpTransform(), D.transforms.SigmoidTransform(),
              D.transforms.TanhTransform(), D.transforms.SoftplusTransform(),
              D.transforms.AffineTransform(0.3, -1.7)):
        x = et.tensor(x_real[0], requires_grad=True)
        y = t(x)
        (g,) = ag.grad(y.sum(), [x])
        assert_close(t.log_abs_det_jacobian(x, y), np.log(np.abs(np_of(g))), rtol=1e-10)


def test_cache() -> None:
    t = D.transforms.ExpTransform(cache_size=1)
    x = to_et(x_real)
    y = t(x)
    assert t(x) is y and t.inv(y) is x
    t0 = D.transforms.ExpTransform()
    assert t0.inv(t0(x)) is not x
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.transforms.ExpTransform(cache_size=2)
    assert t0.with_cache(1)._cache_size == 1
    assert D.transforms.ExpTransform() == D.transforms.ExpTransform()
    assert D.transforms.ExpTransform() != D.transforms.SigmoidTransform()
    assert D.transforms.identity_transform(x) is x
    assert D.transforms.ComposeTransform([]).log_abs_det_jacobian(x, x).shape == x.shape


def test_sign_and_event_dim() -> None:
    assert D.transforms.ExpTransform().sign == 1
    assert D.transforms.AffineTransform(0.0, -2.0).sign == -1
    assert D.transforms.ComposeTransform([D.transforms.AffineTransform(0.0, -2.0),
                                          D.transforms.ExpTransform()]).sign == -1
    with pytest.raises(ValueError, match="in_shape, out_shape have different numbers"):
        D.transforms.ReshapeTransform((2, 3), (5,))
    assert D.transforms.StickBreakingTransform().event_dim == 1


@pytest.mark.parametrize("name", ["real", "positive", "nonnegative", "unit_interval",
                                  "simplex", "real_vector", "lower_cholesky",
                                  "corr_cholesky", "positive_definite"])
def test_constraint_registry(name) -> None:
    c_e, c_t = getattr(D.constraints, name), getattr(TD.constraints, name)
    for reg_e, reg_t in ((D.biject_to, TD.biject_to), (D.transform_to, TD.transform_to)):
        try:
            t_t = reg_t(c_t)
        except NotImplementedError:
            with pytest.raises(NotImplementedError, match="Cannot transform"):
                reg_e(c_e)
            continue
        t_e = reg_e(c_e)
        assert type(t_e).__name__ == type(t_t).__name__
        shape = (2,) + ((6,) if name == "corr_cholesky" else (4, 4) if "chol" in name
                        or "definite" in name else (4,))
        x = rng.normal(size=shape)
        y = t_e(to_et(x))
        assert bool(c_e.check(y).all())
        assert_close(y, t_t(to_torch(x)), rtol=1e-8, atol=1e-10)
    interval = D.constraints.interval(-1.0, 3.0)
    y = D.biject_to(interval)(to_et(x_real))
    assert bool(interval.check(y).all())


def test_constraints_check() -> None:
    C, TC = D.constraints, TD.constraints
    vals = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, np.nan, np.inf])
    for name in ("real", "positive", "nonnegative", "unit_interval", "boolean",
                 "nonnegative_integer", "positive_integer"):
        assert_close(getattr(C, name).check(to_et(vals)).to(et.float64),
                     getattr(TC, name).check(to_torch(vals)).double(), what=name)
    for c, tc in ((C.interval(0.0, 2.0), TC.interval(0.0, 2.0)),
                  (C.half_open_interval(0.0, 1.0), TC.half_open_interval(0.0, 1.0)),
                  (C.greater_than(0.5), TC.greater_than(0.5)),
                  (C.less_than(0.5), TC.less_than(0.5)),
                  (C.integer_interval(0, 1), TC.integer_interval(0, 1))):
        assert_close(c.check(to_et(vals)).to(et.float64), tc.check(to_torch(vals)).double())
        assert repr(c) == repr(tc)
    m = rng.normal(size=(3, 3))
    for name in ("lower_triangular", "lower_cholesky", "positive_definite", "symmetric",
                 "positive_semidefinite", "square"):
        for mat in (m, m @ m.T + np.eye(3), np.tril(m) + 3 * np.eye(3)):
            assert bool(getattr(C, name).check(to_et(mat))) == bool(
                getattr(TC, name).check(to_torch(mat))), name
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent"):
        C.dependent.check(to_et(vals))
    assert D.Uniform.support.event_dim == 0  # a dependent_property reads as a constraint
    assert C.simplex.check(to_et(np.array([0.2, 0.8]))).item() is True


# ------------------------------------------------------------------ kl_divergence

pos = lambda *s: rng.uniform(0.5, 3.0, size=s)  # noqa: E731
real = lambda *s: rng.normal(size=s)  # noqa: E731
unit = lambda *s: rng.uniform(0.1, 0.9, size=s)  # noqa: E731


def _simplex(*s):
    x = rng.uniform(0.2, 1.0, size=s)
    return x / x.sum(-1, keepdims=True)


def _spd(n=3):
    a = rng.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


KL_PAIRS = [
    ("Normal", dict(loc=real(3), scale=pos(3)), "Normal", dict(loc=real(3), scale=pos(3))),
    ("Bernoulli", dict(probs=unit(3)), "Bernoulli", dict(probs=unit(3))),
    ("Categorical", dict(probs=_simplex(2, 4)), "Categorical", dict(logits=real(2, 4))),
    ("OneHotCategorical", dict(probs=_simplex(4)), "OneHotCategorical",
     dict(probs=_simplex(4))),
    ("Beta", dict(concentration1=pos(3), concentration0=pos(3)), "Beta",
     dict(concentration1=pos(3), concentration0=pos(3))),
    ("Gamma", dict(concentration=pos(3), rate=pos(3)), "Gamma",
     dict(concentration=pos(3), rate=pos(3))),
    ("Dirichlet", dict(concentration=pos(2, 3)), "Dirichlet", dict(concentration=pos(2, 3))),
    ("Exponential", dict(rate=pos(3)), "Exponential", dict(rate=pos(3))),
    ("Uniform", dict(low=np.array([0.0, 0.5]), high=np.array([1.0, 0.8])), "Uniform",
     dict(low=np.array([-1.0, 0.6]), high=np.array([2.0, 1.0]))),
    ("Laplace", dict(loc=real(3), scale=pos(3)), "Laplace", dict(loc=real(3), scale=pos(3))),
    ("Poisson", dict(rate=pos(3)), "Poisson", dict(rate=pos(3))),
    ("Geometric", dict(probs=unit(3)), "Geometric", dict(probs=unit(3))),
    ("Binomial", dict(total_count=np.array([5.0, 5.0]), probs=unit(2)), "Binomial",
     dict(total_count=np.array([5.0, 4.0]), probs=unit(2))),
    ("Gumbel", dict(loc=real(3), scale=pos(3)), "Gumbel", dict(loc=real(3), scale=pos(3))),
    ("Pareto", dict(scale=pos(3), alpha=pos(3)), "Pareto", dict(scale=pos(3), alpha=pos(3))),
    ("HalfNormal", dict(scale=pos(3)), "HalfNormal", dict(scale=pos(3))),
    ("LogNormal", dict(loc=real(3), scale=pos(3)), "LogNormal",
     dict(loc=real(3), scale=pos(3))),
    ("Cauchy", dict(loc=real(3), scale=pos(3)), "Cauchy", dict(loc=real(3), scale=pos(3))),
    ("ContinuousBernoulli", dict(probs=unit(3)), "ContinuousBernoulli", dict(probs=unit(3))),
    ("MultivariateNormal", dict(loc=real(3), covariance_matrix=_spd()), "MultivariateNormal",
     dict(loc=real(2, 3), scale_tril=np.linalg.cholesky(_spd()))),
    ("LowRankMultivariateNormal", dict(loc=real(3), cov_factor=real(3, 2), cov_diag=pos(3)),
     "MultivariateNormal", dict(loc=real(3), covariance_matrix=_spd())),
    ("MultivariateNormal", dict(loc=real(3), covariance_matrix=_spd()),
     "LowRankMultivariateNormal", dict(loc=real(3), cov_factor=real(3, 1), cov_diag=pos(3))),
    ("LowRankMultivariateNormal", dict(loc=real(3), cov_factor=real(3, 2), cov_diag=pos(3)),
     "LowRankMultivariateNormal", dict(loc=real(3), cov_factor=real(3, 1), cov_diag=pos(3))),
    ("Exponential", dict(rate=pos(3)), "Gamma", dict(concentration=pos(3), rate=pos(3))),
    ("Exponential", dict(rate=pos(3)), "Normal", dict(loc=real(3), scale=pos(3))),
    ("Gamma", dict(concentration=pos(3), rate=pos(3)), "Exponential", dict(rate=pos(3))),
    ("Uniform", dict(low=np.array([0.0, -0.5]), high=np.array([1.0, 0.8])), "Normal",
     dict(loc=real(2), scale=pos(2))),
    ("Uniform", dict(low=np.array([0.0, -0.5]), high=np.array([1.0, 0.8])), "Exponential",
     dict(rate=pos(2))),
    ("Normal", dict(loc=real(3), scale=pos(3)), "Laplace", dict(loc=real(3), scale=pos(3))),
    ("Bernoulli", dict(probs=unit(3)), "Poisson", dict(rate=pos(3))),
]


@pytest.mark.parametrize(("p_name", "p_kw", "q_name", "q_kw"), KL_PAIRS,
                         ids=[f"{a}-{c}" for a, _, c, _ in KL_PAIRS])
def test_kl_divergence_matches_torch(p_name, p_kw, q_name, q_kw) -> None:
    def make(module, name, kw, conv):
        return getattr(module, name)(**{k: conv(v) for k, v in kw.items()})

    p_e, q_e = make(D, p_name, p_kw, to_et), make(D, q_name, q_kw, to_et)
    p_t, q_t = make(TD, p_name, p_kw, to_torch), make(TD, q_name, q_kw, to_torch)
    assert_close(D.kl_divergence(p_e, q_e), TD.kl_divergence(p_t, q_t), rtol=1e-7,
                 atol=1e-10, what="kl")


def test_kl_of_exponential_families_by_bregman_divergence() -> None:
    """The generic ExponentialFamily formula, forced by deregistering nothing: compare the
    Bregman route with the closed form for Normal and Gamma."""
    from ember_distributions.kl import _kl_expfamily_expfamily

    p, q = D.Normal(to_et(real(3)), to_et(pos(3))), D.Normal(to_et(real(3)), to_et(pos(3)))
    assert_close(_kl_expfamily_expfamily(p, q), D.kl_divergence(p, q), rtol=1e-9)
    p = D.Gamma(to_et(pos(3)), to_et(pos(3)))
    q = D.Gamma(to_et(pos(3)), to_et(pos(3)))
    assert_close(_kl_expfamily_expfamily(p, q), D.kl_divergence(p, q), rtol=1e-9)
    # and the ExponentialFamily entropy against the closed forms
    assert_close(D.ExponentialFamily.entropy(p), p.entropy(), rtol=1e-9)


def test_kl_independent_transformed_and_registration() -> None:
    a, b = real(2, 3), pos(2, 3)
    p = D.Independent(D.Normal(to_et(a), to_et(b)), 1)
    q = D.Independent(D.Normal(to_et(b), to_et(b)), 1)
    pt = TD.Independent(TD.Normal(to_torch(a), to_torch(b)), 1)
    qt = TD.Independent(TD.Normal(to_torch(b), to_torch(b)), 1)
    assert_close(D.kl_divergence(p, q), TD.kl_divergence(pt, qt))
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for "
                                                  "p type Normal and q type VonMises"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.VonMises(0.0, 1.0))

    class MyNormal(D.Normal):
        pass

    # a subclass uses its parent's formula until it registers its own
    assert_close(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)),
                 D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 2.0)))

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return et.zeros(())

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)).item() == 0.0
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


def test_kl_gradients_match_torch() -> None:
    loc, scale = real(3), pos(3)
    e = [to_et(loc, True), to_et(scale, True)]
    t = [to_torch(loc, True), to_torch(scale, True)]
    kl_e = D.kl_divergence(D.Normal(e[0], e[1]), D.Normal(0.0, 1.0)).sum()
    kl_t = TD.kl_divergence(TD.Normal(t[0], t[1]), TD.Normal(0.0, 1.0)).sum()
    for g_e, g_t in zip(ag.grad(kl_e, e), torch.autograd.grad(kl_t, t)):
        assert_close(g_e, g_t)
