"""The conformance kit of Ember's ``distributions`` component: a pytest plugin, enabled
explicitly.

    python -m pytest -p ember_distributions.conformance [--distributions-provider=MODULE]
                     [--distributions-xfail=FILE]

Run from any directory: the plugin adds one aggregate test class,
``TestDistributionsConformance``, to whatever else pytest collects there. Its tests check
what makes an implementation a drop-in ``ember.distributions``: the public names and
``INTERFACE_VERSION``; shapes (``batch_shape``, ``event_shape``, ``expand``,
``sample(sample_shape)``); ``log_prob``, ``entropy``, moments and ``cdf``/``icdf`` of the
core distributions against closed forms computed with NumPy; argument and sample validation
(PyTorch's ``ValueError`` messages, ``validate_args``,
``Distribution.set_default_validate_args``); ``rsample`` gradients through the autograd
provider; ``kl_divergence`` and ``register_kl``; transforms and ``biject_to``.

Options:

``--distributions-provider=MODULE``
    The implementation under test: an importable module exposing the distributions
    interface (``Distribution``, ``Normal``, ..., ``constraints``, ``transforms``,
    ``kl_divergence``, ``register_kl``, ``biject_to``, ``transform_to``) and
    ``INTERFACE_VERSION``, working on ``ember_tensor`` tensors. Default:
    ``ember_distributions``.

``--distributions-xfail=FILE``
    Expected failures: every non-blank line that does not start with ``#`` reads
    ``<test id> : <reason>`` (test id ``TestDistributionsConformance::test_name``, with
    ``[param]`` when parametrized). Each listed test is marked ``xfail(strict=True)``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor.conformance_kit import define_kit

KIT_NODEID = "ember_distributions.conformance"
CLASS_NAME = "TestDistributionsConformance"
INTERFACE_VERSION = 1

# the names a provider must expose
INTERFACE_NAMES = (
    "Distribution", "ExponentialFamily", "Bernoulli", "Beta", "Binomial", "Categorical",
    "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet", "Exponential", "FisherSnedecor",
    "Gamma", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "Kumaraswamy",
    "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal",
    "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal",
    "OneHotCategorical", "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical",
    "StudentT", "TransformedDistribution", "Uniform", "VonMises", "Weibull",
    "constraints", "transforms", "kl_divergence", "register_kl", "biject_to", "transform_to",
)

TRANSFORM_NAMES = (
    "Transform", "ExpTransform", "AffineTransform", "SigmoidTransform", "TanhTransform",
    "SoftmaxTransform", "StickBreakingTransform", "PowerTransform", "AbsTransform",
    "ComposeTransform", "IndependentTransform", "ReshapeTransform", "LowerCholeskyTransform",
    "identity_transform",
)

CONSTRAINT_NAMES = (
    "Constraint", "boolean", "dependent", "dependent_property", "greater_than",
    "greater_than_eq", "independent", "integer_interval", "interval", "half_open_interval",
    "is_dependent", "less_than", "lower_cholesky", "lower_triangular", "multinomial",
    "nonnegative", "nonnegative_integer", "one_hot", "positive", "positive_definite",
    "positive_integer", "real", "real_vector", "simplex", "unit_interval",
)

_KIT = define_kit(globals(), component="distributions", class_name=CLASS_NAME,
                  default_provider="ember_distributions")


def _t(values):
    return et.tensor(np.asarray(values, dtype=np.float64))


def _np(t) -> np.ndarray:
    return np.array(t.detach().numpy())


def _close(actual, expected, what: str, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    got = _np(actual)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, expected {expected.shape}"
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=what)


_LGAMMA = np.vectorize(math.lgamma)


class TestDistributionsConformance:
    """What a ``distributions`` provider must do. ``self.D`` is the provider under test."""

    @pytest.fixture(autouse=True)
    def _provider(self, request: pytest.FixtureRequest):
        self.D = request.config.stash[_KIT].provider
        self.D.Distribution.set_default_validate_args(True)
        yield
        self.D.Distribution.set_default_validate_args(True)

    # -- the interface -------------------------------------------------------------------

    @pytest.mark.parametrize("name", INTERFACE_NAMES)
    def test_interface_name(self, name: str) -> None:
        assert hasattr(self.D, name), f"the provider has no {name!r}"

    @pytest.mark.parametrize("name", TRANSFORM_NAMES)
    def test_transform_name(self, name: str) -> None:
        assert hasattr(self.D.transforms, name), f"transforms has no {name!r}"

    @pytest.mark.parametrize("name", CONSTRAINT_NAMES)
    def test_constraint_name(self, name: str) -> None:
        assert hasattr(self.D.constraints, name), f"constraints has no {name!r}"

    def test_interface_version(self) -> None:
        assert getattr(self.D, "INTERFACE_VERSION", None) == INTERFACE_VERSION

    # -- shapes --------------------------------------------------------------------------

    def test_shapes(self) -> None:
        D = self.D
        d = D.Normal(_t([[0.0, 1.0, 2.0]] * 2), _t([1.0, 2.0, 3.0]))
        assert tuple(d.batch_shape) == (2, 3) and tuple(d.event_shape) == ()
        assert tuple(d.sample().shape) == (2, 3)
        assert tuple(d.sample((4, 5)).shape) == (4, 5, 2, 3)
        assert tuple(d.rsample((4,)).shape) == (4, 2, 3)
        e = d.expand((7, 2, 3))
        assert type(e) is type(d) and tuple(e.batch_shape) == (7, 2, 3)
        assert tuple(D.Normal(0.0, 1.0).batch_shape) == ()
        m = D.MultivariateNormal(_t(np.zeros((2, 3))), _t(np.eye(3)))
        assert tuple(m.batch_shape) == (2,) and tuple(m.event_shape) == (3,)
        assert tuple(m.sample((4,)).shape) == (4, 2, 3)
        i = D.Independent(d, 1)
        assert tuple(i.batch_shape) == (2,) and tuple(i.event_shape) == (3,)
        c = D.Categorical(_t(np.full((2, 4), 0.25)))
        assert tuple(c.batch_shape) == (2,) and tuple(c.sample((3,)).shape) == (3, 2)
        assert tuple(c.enumerate_support().shape) == (4, 2)
        assert tuple(c.enumerate_support(expand=False).shape) == (4, 1)

    # -- densities against closed forms --------------------------------------------------

    def test_normal(self) -> None:
        loc, scale, x = np.array([0.5, -1.0]), np.array([1.5, 0.3]), np.array([0.1, -0.8])
        d = self.D.Normal(_t(loc), _t(scale))
        z = (x - loc) / scale
        _close(d.log_prob(_t(x)), -0.5 * z ** 2 - np.log(scale) - 0.5 * np.log(2 * np.pi),
               "log_prob")
        _close(d.entropy(), 0.5 + 0.5 * np.log(2 * np.pi) + np.log(scale), "entropy")
        _close(d.mean, loc, "mean")
        _close(d.variance, scale ** 2, "variance")
        _close(d.cdf(_t(x)), 0.5 * (1 + np.vectorize(math.erf)(z / math.sqrt(2))), "cdf")
        _close(d.icdf(d.cdf(_t(x))), x, "icdf", rtol=1e-9)

    def test_bernoulli_and_categorical(self) -> None:
        p = np.array([0.2, 0.7])
        d = self.D.Bernoulli(_t(p))
        _close(d.log_prob(_t([1.0, 0.0])), np.log([0.2, 0.3]), "Bernoulli log_prob")
        _close(d.entropy(), -(p * np.log(p) + (1 - p) * np.log(1 - p)), "Bernoulli entropy")
        w = np.array([1.0, 2.0, 5.0])
        c = self.D.Categorical(_t(w))
        _close(c.probs, w / w.sum(), "Categorical probs")
        _close(c.log_prob(et.tensor([2, 0])), np.log(w[[2, 0]] / w.sum()), "Categorical")
        c = self.D.Categorical(logits=_t(np.log(w)))
        _close(c.probs, w / w.sum(), "Categorical logits")

    def test_gamma_beta_dirichlet(self) -> None:
        a, r, x = np.array([0.5, 3.0]), np.array([2.0, 0.5]), np.array([0.3, 4.0])
        d = self.D.Gamma(_t(a), _t(r))
        _close(d.log_prob(_t(x)), a * np.log(r) + (a - 1) * np.log(x) - r * x - _LGAMMA(a),
               "Gamma log_prob")
        _close(d.mean, a / r, "Gamma mean")
        a, b, x = np.array([2.0, 0.5]), np.array([3.0, 0.5]), np.array([0.3, 0.9])
        lbeta = _LGAMMA(a) + _LGAMMA(b) - _LGAMMA(a + b)
        d = self.D.Beta(_t(a), _t(b))
        _close(d.log_prob(_t(x)), (a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - lbeta,
               "Beta log_prob")
        c, x = np.array([1.0, 2.0, 3.0]), np.array([0.2, 0.3, 0.5])
        d = self.D.Dirichlet(_t(c))
        _close(d.log_prob(_t(x)), ((c - 1) * np.log(x)).sum() + _LGAMMA(c.sum())
               - _LGAMMA(c).sum(), "Dirichlet log_prob")

    def test_multivariate_normal(self) -> None:
        cov = np.array([[2.0, 0.5], [0.5, 1.0]])
        loc, x = np.array([1.0, -1.0]), np.array([0.5, 0.0])
        d = self.D.MultivariateNormal(_t(loc), covariance_matrix=_t(cov))
        diff = x - loc
        expected = -0.5 * (2 * np.log(2 * np.pi) + np.log(np.linalg.det(cov))
                           + diff @ np.linalg.solve(cov, diff))
        _close(d.log_prob(_t(x)), expected, "MVN log_prob")
        _close(d.scale_tril, np.linalg.cholesky(cov), "MVN scale_tril")
        _close(d.precision_matrix, np.linalg.inv(cov), "MVN precision_matrix")

    # -- validation ----------------------------------------------------------------------

    def test_parameter_validation(self) -> None:
        with pytest.raises(ValueError, match=r"^Expected parameter scale \(Tensor of shape "
                                             r"\(1,\)\) of distribution Normal"):
            self.D.Normal(_t([0.0]), _t([-1.0]))
        self.D.Normal(_t([0.0]), _t([-1.0]), validate_args=False)
        self.D.Distribution.set_default_validate_args(False)
        self.D.Normal(_t([0.0]), _t([-1.0]))
        self.D.Distribution.set_default_validate_args(True)
        with pytest.raises(ValueError, match="^Either `probs` or `logits` must be specified, "
                                             "but not both.$"):
            self.D.Bernoulli()

    def test_sample_validation(self) -> None:
        d = self.D.Gamma(_t([1.0]), _t([1.0]))
        with pytest.raises(ValueError, match=r"^Expected value argument \(Tensor of shape "
                                             r"\(1,\)\) to be within the support"):
            d.log_prob(_t([-1.0]))
        with pytest.raises(ValueError, match="^The value argument to log_prob must be a "
                                             "Tensor$"):
            self.D.Normal(_t([0.0]), _t([1.0])).log_prob(1.0)
        with pytest.raises(ValueError, match="^Value is not broadcastable with "
                                             "batch_shape\\+event_shape"):
            self.D.Normal(_t([0.0, 0.0]), _t([1.0, 1.0])).log_prob(_t([0.0, 0.0, 0.0]))

    # -- sampling and gradients ----------------------------------------------------------

    def test_seeded_sampling_is_reproducible(self) -> None:
        for make in (lambda: self.D.Normal(_t([0.0]), _t([1.0])),
                     lambda: self.D.Gamma(_t([0.7]), _t([1.0])),
                     lambda: self.D.Poisson(_t([3.0]))):
            et.manual_seed(3)
            a = _np(make().sample((20,)))
            et.manual_seed(3)
            np.testing.assert_array_equal(a, _np(make().sample((20,))))

    def test_rsample_gradient(self) -> None:
        import ember_autograd as ag

        loc = et.tensor([0.5], dtype=et.float64, requires_grad=True)
        scale = et.tensor([2.0], dtype=et.float64, requires_grad=True)
        assert self.D.Normal.has_rsample and self.D.Gamma.has_rsample
        x = self.D.Normal(loc, scale).rsample((100,))
        g_loc, g_scale = ag.grad(x.mean(), [loc, scale])
        _close(g_loc, [1.0], "d mean / d loc")
        _close(g_scale, [float(((_np(x) - 0.5) / 2.0).mean())], "d mean / d scale", rtol=1e-9)
        a = et.tensor([2.0], dtype=et.float64, requires_grad=True)
        et.manual_seed(0)
        y = self.D.Gamma(a, _t([1.0])).rsample((4000,))
        (g,) = ag.grad(y.mean(), [a])
        assert abs(g.item() - 1.0) < 0.1, "d E[Gamma(a, 1)] / da = 1"
        assert self.D.Normal(loc, scale).sample().requires_grad is False

    # -- kl, transforms, registry --------------------------------------------------------

    def test_kl_divergence(self) -> None:
        D = self.D
        p, q = D.Normal(_t([0.0]), _t([1.0])), D.Normal(_t([1.0]), _t([2.0]))
        _close(D.kl_divergence(p, q), [math.log(2) + (1 + 1) / 8 - 0.5], "KL normal")
        _close(D.kl_divergence(p, p), [0.0], "KL(p, p)")
        with pytest.raises(NotImplementedError):
            D.kl_divergence(p, D.VonMises(_t([0.0]), _t([1.0])))

        class Special(D.Normal):
            pass

        @D.register_kl(Special, D.Normal)
        def _kl(p, q):
            return et.full(tuple(p.batch_shape), 42.0, dtype=et.float64)

        _close(D.kl_divergence(Special(_t([0.0]), _t([1.0])), q), [42.0], "register_kl")

    def test_transforms_and_biject_to(self) -> None:
        T = self.D.transforms
        x = _t([-1.0, 0.5, 2.0])
        t = T.ComposeTransform([T.AffineTransform(1.0, 2.0), T.ExpTransform()])
        y = t(x)
        _close(y, np.exp(1 + 2 * _np(x)), "forward")
        _close(t.inv(y), _np(x), "inverse")
        _close(t.log_abs_det_jacobian(x, y), np.log(2) + 1 + 2 * _np(x), "log |det J|")
        s = T.StickBreakingTransform()
        p = s(x)
        assert tuple(p.shape) == (4,) and abs(p.sum().item() - 1) < 1e-12
        _close(s.inv(p), _np(x), "stick-breaking inverse")
        c = self.D.constraints
        for constraint in (c.positive, c.unit_interval, c.simplex, c.interval(-2.0, 5.0)):
            y = self.D.biject_to(constraint)(x)
            assert bool(constraint.check(y).all()), repr(constraint)
        cached = T.ExpTransform(cache_size=1)
        y = cached(x)
        assert cached.inv(y) is x

    def test_transformed_distribution(self) -> None:
        D = self.D
        base = D.Normal(_t([0.2]), _t([0.5]))
        d = D.TransformedDistribution(base, [D.transforms.ExpTransform()])
        ln = D.LogNormal(_t([0.2]), _t([0.5]))
        x = _t([1.3])
        _close(d.log_prob(x), _np(ln.log_prob(x)), "TransformedDistribution log_prob")
        z = (math.log(1.3) - 0.2) / 0.5
        _close(ln.log_prob(x), [-0.5 * z * z - math.log(0.5 * 1.3 * math.sqrt(2 * math.pi))],
               "LogNormal")
