"""Ember's probability distributions (``import ember_distributions``, exposed as
``ember.distributions`` by the ``ember`` meta-package): PyTorch's
``torch.distributions``, on Ember's tensors and autograd.

Every distribution has PyTorch's name, arguments, defaults, ``arg_constraints``,
``support``, ``has_rsample``, shapes (``batch_shape``, ``event_shape``, ``expand``) and
validation errors; ``rsample`` is differentiable through ``ember_autograd``; sampling uses
Ember's random generator (``ember.manual_seed``)."""

from __future__ import annotations

from . import constraint_registry, constraints, transforms
from .constraint_registry import biject_to, transform_to
from .continuous import (
    Beta,
    Cauchy,
    Chi2,
    ContinuousBernoulli,
    Exponential,
    FisherSnedecor,
    Gamma,
    GeneralizedPareto,
    Laplace,
    Normal,
    StudentT,
    Uniform,
    VonMises,
)
from .discrete import (
    Bernoulli,
    Binomial,
    Categorical,
    Geometric,
    Multinomial,
    NegativeBinomial,
    OneHotCategorical,
    Poisson,
)
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .independent import Independent, MixtureSameFamily
from .kl import kl_divergence, register_kl
from .multivariate import (
    Dirichlet,
    LKJCholesky,
    LowRankMultivariateNormal,
    MultivariateNormal,
    Wishart,
)
from .transformed import (
    ExpRelaxedCategorical,
    Gumbel,
    HalfCauchy,
    HalfNormal,
    InverseGamma,
    Kumaraswamy,
    LogisticNormal,
    LogitRelaxedBernoulli,
    LogNormal,
    Pareto,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
    TransformedDistribution,
    Weibull,
)
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)

__version__ = "0.1.0"
INTERFACE_VERSION = 1

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "CatTransform",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "ContinuousBernoulli",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "Dirichlet",
    "Distribution",
    "ExpRelaxedCategorical",
    "ExpTransform",
    "Exponential",
    "ExponentialFamily",
    "FisherSnedecor",
    "Gamma",
    "GeneralizedPareto",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "IndependentTransform",
    "InverseGamma",
    "Kumaraswamy",
    "LKJCholesky",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LogitRelaxedBernoulli",
    "LowRankMultivariateNormal",
    "LowerCholeskyTransform",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "Pareto",
    "Poisson",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "VonMises",
    "Weibull",
    "Wishart",
    "biject_to",
    "constraint_registry",
    "constraints",
    "identity_transform",
    "kl_divergence",
    "register_kl",
    "transform_to",
    "transforms",
]
