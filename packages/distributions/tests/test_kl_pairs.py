"""kl_divergence for every pair in PyTorch's KL registry, against torch.distributions on
the same float64 parameters: values (+inf positions included), NotImplementedError where
PyTorch raises it, broadcasting between batch shapes, and gradients with respect to the
parameters of both distributions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.distributions as TD
import torch.distributions.kl as torch_kl

import ember_autograd as ag
import ember_distributions as D
import ember_distributions.kl as ember_kl
import ember_tensor as et
from conftest import np_of, to_et, to_torch

rng = np.random.default_rng(31)


def _pos(*s, lo=0.5, hi=3.0):
    return rng.uniform(lo, hi, size=s)


def _real(*s):
    return rng.normal(size=s)


def _unit(*s):
    return rng.uniform(0.1, 0.9, size=s)


def _simplex(*s):
    x = rng.uniform(0.2, 1.0, size=s)
    return x / x.sum(-1, keepdims=True)


def _spd(*batch, n=3):
    a = rng.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _loc_scale(b):
    return dict(loc=_real(b), scale=_pos(b))


def _params(b: int, role: str) -> dict:
    """Random parameters (batch shape ``(b,)`` as the leading dimension) for which every
    closed form is finite: Uniforms inside (0, 1), covering (0, 1) on the q side, Paretos
    with alpha > 2 and (on the q side) a scale below the Uniforms' lows."""
    p = role == "p"
    cat = _simplex(b, 5)
    return {
        "Bernoulli": dict(probs=_unit(b)),
        "Binomial": dict(total_count=np.full(b, 6.0), probs=_unit(b)),
        "Categorical": dict(probs=cat),
        "OneHotCategorical": dict(probs=cat),
        "Geometric": dict(probs=_unit(b)),
        "Poisson": dict(rate=_pos(b)),
        "Beta": dict(concentration1=_pos(b), concentration0=_pos(b)),
        "ContinuousBernoulli": dict(probs=_unit(b)),
        "Cauchy": _loc_scale(b),
        "Gumbel": _loc_scale(b),
        "Laplace": _loc_scale(b),
        "Normal": _loc_scale(b),
        "LogNormal": _loc_scale(b),
        "HalfNormal": dict(scale=_pos(b)),
        "Exponential": dict(rate=_pos(b)),
        "Gamma": dict(concentration=_pos(b), rate=_pos(b)),
        "Uniform": (dict(low=_pos(b, lo=0.05, hi=0.3), high=_pos(b, lo=0.6, hi=0.95)) if p
                    else dict(low=_pos(b, lo=-2.0, hi=-1.0), high=_pos(b, lo=1.5, hi=3.0))),
        "Pareto": (dict(scale=_pos(b, lo=0.5, hi=1.5), alpha=_pos(b, lo=2.5, hi=5.0)) if p
                   else dict(scale=_pos(b, lo=0.01, hi=0.04), alpha=_pos(b))),
        "Dirichlet": dict(concentration=_pos(b, 3)),
        "MultivariateNormal": (dict(loc=_real(b, 3), covariance_matrix=_spd(b)) if p
                               else dict(loc=_real(b, 3),
                                         scale_tril=np.linalg.cholesky(_spd(b)))),
        "LowRankMultivariateNormal": dict(loc=_real(b, 3), cov_factor=_real(b, 3, 2),
                                          cov_diag=_pos(b, 3)),
        "Independent": dict(loc=_real(b, 2), scale=_pos(b, 2)),
        "TransformedDistribution": _loc_scale(b),
    }


def _edge_params(role: str) -> dict:
    """Batch shape (4,): the random parameters, with the ones that decide the +inf cases
    chosen to give finite and infinite elements (a Uniform touching 0 or 1, a Pareto with
    alpha <= 1 or <= 2, supports that do not cover p's, zero probabilities)."""
    out = _params(4, role)
    p = role == "p"
    cat = _simplex(4, 5)
    cat[0 if p else 1, 2] = 0.0
    cat /= cat.sum(-1, keepdims=True)
    out.update({
        "Uniform": (dict(low=np.array([0.1, 0.0, -0.5, 0.3]),
                         high=np.array([0.8, 1.0, 1.5, 2.5])) if p
                    else dict(low=np.array([-0.5, 0.0, 0.2, -1.0]),
                              high=np.array([1.5, 1.0, 2.0, 0.9]))),
        "Pareto": (dict(scale=np.array([0.5, 1.0, 0.2, 2.0]),
                        alpha=np.array([0.8, 1.5, 2.0, 3.5])) if p
                   else dict(scale=np.array([0.05, 0.5, 0.25, 0.3]), alpha=_pos(4))),
        "Binomial": dict(total_count=np.array([5.0, 5.0, 5.0, 5.0]) if p
                         else np.array([5.0, 4.0, 5.0, 3.0]), probs=_unit(4)),
        "Categorical": dict(probs=cat),
        "OneHotCategorical": dict(probs=cat),
        "ContinuousBernoulli": dict(probs=np.array([0.2, 0.4995, 0.7, 0.95])),
        "Bernoulli": dict(probs=np.array([0.0, 0.3, 1.0, 0.6]) if p
                          else np.array([0.2, 0.3, 0.9, 1.0])),
    })
    return out


def make(module, name: str, params: dict, conv, requires_grad=False):
    """The distribution ``name`` of ``module`` (D or TD), its NumPy parameters converted by
    ``conv``; Independent and TransformedDistribution wrap a Normal (a LogNormal's
    transform for the latter)."""
    kw = {k: conv(v, requires_grad and k != "total_count") for k, v in params.items()}
    if name == "Independent":
        return module.Independent(module.Normal(kw["loc"], kw["scale"]), 1), kw
    if name == "TransformedDistribution":
        return module.TransformedDistribution(module.Normal(kw["loc"], kw["scale"]),
                                              [module.transforms.ExpTransform()]), kw
    return getattr(module, name)(**kw), kw


def _names(registry) -> set:
    return {(a.__name__, b.__name__) for a, b in registry}


TORCH_PAIRS = sorted(_names(torch_kl._KL_REGISTRY) - {("ExponentialFamily",
                                                       "ExponentialFamily")})
EDGE_P, EDGE_Q = _edge_params("p"), _edge_params("q")
RAND_P, RAND_Q = _params(3, "p"), _params(3, "q")
IDS = [f"{a}-{b}" for a, b in TORCH_PAIRS]


def assert_same_kl(ours, theirs, what="") -> None:
    """Same shape, the same inf and nan positions, the finite values within 1e-6."""
    a, b = np_of(ours), np_of(theirs)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs torch {b.shape}"
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=f"{what}: nan")
    np.testing.assert_array_equal(np.isposinf(a), np.isposinf(b), err_msg=f"{what}: +inf")
    np.testing.assert_array_equal(np.isneginf(a), np.isneginf(b), err_msg=f"{what}: -inf")
    finite = np.isfinite(b)
    np.testing.assert_allclose(a[finite], b[finite], rtol=1e-6, atol=1e-10, err_msg=what)


def test_registry_has_every_torch_pair() -> None:
    assert _names(ember_kl._KL_REGISTRY) == _names(torch_kl._KL_REGISTRY)


def _compare(p_name, q_name, p_params, q_params, what) -> None:
    p_e, _ = make(D, p_name, p_params, to_et)
    q_e, _ = make(D, q_name, q_params, to_et)
    p_t, _ = make(TD, p_name, p_params, to_torch)
    q_t, _ = make(TD, q_name, q_params, to_torch)
    expected = TD.kl_divergence(p_t, q_t)
    assert_same_kl(D.kl_divergence(p_e, q_e), expected, what)


@pytest.mark.parametrize(("p_name", "q_name"), TORCH_PAIRS, ids=IDS)
def test_kl_matches_torch(p_name, q_name) -> None:
    _compare(p_name, q_name, RAND_P[p_name], RAND_Q[q_name], "random parameters")
    _compare(p_name, q_name, EDGE_P[p_name], EDGE_Q[q_name], "edge parameters")


def _slice(params: dict, index) -> dict:
    return {k: np.asarray(v[index]) for k, v in params.items()}


@pytest.mark.parametrize(("p_name", "q_name"), TORCH_PAIRS, ids=IDS)
def test_kl_broadcasts_like_torch(p_name, q_name) -> None:
    """One side with an empty batch shape, then batch shapes (2, 1) and (4,).  Where
    PyTorch's masked in-place write of +inf cannot take the mixed shapes (an IndexError),
    the reference is PyTorch on both distributions expanded to the broadcast shape."""
    p_full, q_full = EDGE_P[p_name], EDGE_Q[q_name]
    layouts = [(_slice(p_full, 1), q_full), (p_full, _slice(q_full, 1)),
               (_slice(p_full, np.s_[:2, None]), q_full)]
    for p_params, q_params in layouts:
        p_e, _ = make(D, p_name, p_params, to_et)
        q_e, _ = make(D, q_name, q_params, to_et)
        p_t, _ = make(TD, p_name, p_params, to_torch)
        q_t, _ = make(TD, q_name, q_params, to_torch)
        what = f"batch {tuple(p_t.batch_shape)} vs {tuple(q_t.batch_shape)}"
        try:
            expected = TD.kl_divergence(p_t, q_t)
        except IndexError:
            shape = torch.broadcast_shapes(p_t.batch_shape, q_t.batch_shape)
            expected = TD.kl_divergence(p_t.expand(shape), q_t.expand(shape))
        assert_same_kl(D.kl_divergence(p_e, q_e), expected, what)


def _grad_params(params: dict) -> list:
    return [k for k in params if k != "total_count"]


@pytest.mark.parametrize(("p_name", "q_name"), TORCH_PAIRS, ids=IDS)
def test_kl_gradients_match_torch(p_name, q_name) -> None:
    """Gradients of a weighted sum of the KL with respect to every floating parameter of
    p and q (none where the KL is a constant +inf)."""
    p_e, kp_e = make(D, p_name, RAND_P[p_name], to_et, requires_grad=True)
    q_e, kq_e = make(D, q_name, RAND_Q[q_name], to_et, requires_grad=True)
    p_t, kp_t = make(TD, p_name, RAND_P[p_name], to_torch, requires_grad=True)
    q_t, kq_t = make(TD, q_name, RAND_Q[q_name], to_torch, requires_grad=True)
    kl_t, kl_e = TD.kl_divergence(p_t, q_t), D.kl_divergence(p_e, q_e)
    if not kl_t.requires_grad:
        assert not kl_e.requires_grad
        assert np.isposinf(np_of(kl_e)).all()
        return
    weights = rng.uniform(0.5, 1.5, size=tuple(kl_t.shape))
    names = [("p", k) for k in _grad_params(kp_t)] + [("q", k) for k in _grad_params(kq_t)]
    inputs_t = [(kp_t if s == "p" else kq_t)[k] for s, k in names]
    inputs_e = [(kp_e if s == "p" else kq_e)[k] for s, k in names]
    grads_t = torch.autograd.grad((kl_t * torch.tensor(weights)).sum(), inputs_t,
                                  allow_unused=True)
    grads_e = ag.grad((kl_e * et.tensor(weights)).sum(), inputs_e, allow_unused=True)
    for (side, k), g_e, g_t in zip(names, grads_e, grads_t):
        what = f"d KL / d {side}.{k}"
        if g_t is None:
            assert g_e is None or not np.any(np_of(g_e)), what
            continue
        assert g_e is not None, what
        g_e, g_t = np_of(g_e), np_of(g_t)
        if k == "scale_tril":  # only the lower triangle is a parameter
            g_e, g_t = np.tril(g_e), np.tril(g_t)
        np.testing.assert_allclose(g_e, g_t, rtol=1e-6, atol=1e-9, err_msg=what)


def test_gradients_at_infinite_elements_match_torch() -> None:
    """Masked elements (+inf) pass no gradient to the finite formula's inputs, as
    PyTorch's masked write: Pareto p with alpha on both sides of 1 and 2."""
    for q_name in ("Exponential", "Gamma", "Normal"):
        p_e, kp_e = make(D, "Pareto", EDGE_P["Pareto"], to_et, requires_grad=True)
        q_e, _ = make(D, q_name, EDGE_Q[q_name], to_et)
        p_t, kp_t = make(TD, "Pareto", EDGE_P["Pareto"], to_torch, requires_grad=True)
        q_t, _ = make(TD, q_name, EDGE_Q[q_name], to_torch)
        kl_t, kl_e = TD.kl_divergence(p_t, q_t), D.kl_divergence(p_e, q_e)
        assert_same_kl(kl_e, kl_t, q_name)
        finite = torch.isfinite(kl_t)
        grads_t = torch.autograd.grad(kl_t[finite].sum(), [kp_t["scale"], kp_t["alpha"]])
        mask = et.tensor(np_of(finite))
        kl_e = et.where(mask, kl_e, et.zeros_like(kl_e))
        grads_e = ag.grad(kl_e.sum(), [kp_e["scale"], kp_e["alpha"]])
        for g_e, g_t in zip(grads_e, grads_t):
            np.testing.assert_allclose(np_of(g_e), np_of(g_t), rtol=1e-6, atol=1e-12,
                                       err_msg=q_name)


def test_exponential_family_pair() -> None:
    """The (ExponentialFamily, ExponentialFamily) entry: the Bregman divergence for two
    members of a family without a closed form of its own (Wishart), the same function on
    families that have one, and NotImplementedError across families."""
    cov0, cov1 = _spd(), _spd()
    ours = D.kl_divergence(D.Wishart(to_et(np.array(4.5)), covariance_matrix=to_et(cov0)),
                           D.Wishart(to_et(np.array(6.0)), covariance_matrix=to_et(cov1)))
    theirs = TD.kl_divergence(
        TD.Wishart(to_torch(np.array(4.5)), covariance_matrix=to_torch(cov0)),
        TD.Wishart(to_torch(np.array(6.0)), covariance_matrix=to_torch(cov1)))
    assert_same_kl(ours, theirs, "Wishart")
    for name in ("Normal", "Gamma", "Beta", "Exponential", "Bernoulli", "Poisson",
                 "ContinuousBernoulli", "Dirichlet"):
        p_e, _ = make(D, name, RAND_P[name], to_et)
        q_e, _ = make(D, name, RAND_Q[name], to_et)
        p_t, _ = make(TD, name, RAND_P[name], to_torch)
        q_t, _ = make(TD, name, RAND_Q[name], to_torch)
        assert_same_kl(ember_kl._kl_expfamily_expfamily(p_e, q_e),
                       torch_kl._kl_expfamily_expfamily(p_t, q_t), name)
    for p_name, q_name in (("Bernoulli", "Beta"), ("Beta", "Dirichlet"),
                           ("Poisson", "Gamma")):
        p_e, _ = make(D, p_name, RAND_P[p_name], to_et)
        q_e, _ = make(D, q_name, RAND_Q[q_name], to_et)
        p_t, _ = make(TD, p_name, RAND_P[p_name], to_torch)
        q_t, _ = make(TD, q_name, RAND_Q[q_name], to_torch)
        with pytest.raises(NotImplementedError, match="cross KL-divergence"):
            TD.kl_divergence(p_t, q_t)
        with pytest.raises(NotImplementedError, match="cross KL-divergence"):
            D.kl_divergence(p_e, q_e)


def _both(build):
    return build(D, to_et), build(TD, to_torch)


NOT_IMPLEMENTED = [
    ("Binomial with q.total_count > p.total_count", lambda M, c: (
        M.Binomial(c(np.array([3.0, 5.0])), c(np.array([0.3, 0.4]))),
        M.Binomial(c(np.array([4.0, 5.0])), c(np.array([0.3, 0.4]))))),
    ("TransformedDistribution with other transforms", lambda M, c: (
        M.TransformedDistribution(M.Normal(c(np.zeros(2)), c(np.ones(2))),
                                  [M.transforms.ExpTransform()]),
        M.TransformedDistribution(M.Normal(c(np.zeros(2)), c(np.ones(2))),
                                  [M.transforms.SigmoidTransform()]))),
    ("Independent with other reinterpreted_batch_ndims", lambda M, c: (
        M.Independent(M.Normal(c(np.zeros((2, 3))), c(np.ones((2, 3)))), 1),
        M.Independent(M.Normal(c(np.zeros((2, 3))), c(np.ones((2, 3)))), 2))),
    ("no pair registered", lambda M, c: (M.Binomial(5, c(np.array([0.3]))),
                                         M.Poisson(c(np.array([2.0]))))),
    ("no pair registered (Laplace-Cauchy)", lambda M, c: (
        M.Laplace(c(np.zeros(2)), c(np.ones(2))), M.Cauchy(c(np.zeros(2)), c(np.ones(2))))),
]


@pytest.mark.parametrize(("what", "build"), NOT_IMPLEMENTED, ids=[c[0] for c in NOT_IMPLEMENTED])
def test_not_implemented_where_torch_raises(what, build) -> None:
    (p_e, q_e), (p_t, q_t) = _both(build)
    with pytest.raises(NotImplementedError):
        TD.kl_divergence(p_t, q_t)
    with pytest.raises(NotImplementedError):
        D.kl_divergence(p_e, q_e)


def test_infinite_pairs_take_p_shape_and_dtype() -> None:
    """A pair with no common support is +inf in p's parameter shape and dtype, whatever
    q's batch shape (as PyTorch)."""
    p_e = D.Normal(et.zeros(3, dtype=et.float32), et.ones(3, dtype=et.float32))
    q_e = D.Uniform(et.zeros((2, 1), dtype=et.float32), et.ones((2, 1), dtype=et.float32))
    p_t = TD.Normal(torch.zeros(3, dtype=torch.float32), torch.ones(3, dtype=torch.float32))
    q_t = TD.Uniform(torch.zeros((2, 1), dtype=torch.float32),
                     torch.ones((2, 1), dtype=torch.float32))
    ours, theirs = D.kl_divergence(p_e, q_e), TD.kl_divergence(p_t, q_t)
    assert tuple(ours.shape) == tuple(theirs.shape) == (3,)
    assert ours.dtype == et.float32
    assert np.isposinf(np_of(ours)).all()
