"""Argument and sample validation: PyTorch's error types and messages, and the switches
(``validate_args``, ``Distribution.set_default_validate_args``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.distributions as TD

import ember_distributions as D
import ember_tensor as et
from conftest import check_invalid_parameters, first_line, raised_message

BAD_ARGS = [
    ("Normal", dict(loc=[0.0, 1.0], scale=[1.0, -1.0])),
    ("Gamma", dict(concentration=[1.0], rate=[0.0])),
    ("Beta", dict(concentration1=[-1.0], concentration0=[1.0])),
    ("Bernoulli", dict(probs=[1.5])),
    ("Categorical", dict(probs=[[0.5, -0.5]])),
    ("Dirichlet", dict(concentration=[1.0, -2.0])),
    ("Exponential", dict(rate=[-2.0])),
    ("Poisson", dict(rate=[-2.0])),
    ("Binomial", dict(total_count=[2.5], probs=[0.5])),
    ("StudentT", dict(df=[-1.0])),
    ("LogNormal", dict(loc=[0.0], scale=[-1.0])),
    ("HalfNormal", dict(scale=[0.0])),
]


@pytest.mark.parametrize(("name", "kwargs"), BAD_ARGS, ids=[b[0] for b in BAD_ARGS])
def test_invalid_parameters(name, kwargs) -> None:
    check_invalid_parameters(name, kwargs)


VALUES = [
    ("Normal", dict(loc=[0.0], scale=[1.0]), [float("nan")]),
    ("Gamma", dict(concentration=[1.0], rate=[1.0]), [-1.0]),
    ("Beta", dict(concentration1=[1.0], concentration0=[1.0]), [1.5]),
    ("Bernoulli", dict(probs=[0.3]), [0.5]),
    ("Poisson", dict(rate=[2.0]), [1.5]),
    ("Dirichlet", dict(concentration=[1.0, 2.0]), [[0.5, 0.6]]),
    ("Uniform", dict(low=[0.0], high=[1.0]), [1.5]),
    ("Exponential", dict(rate=[1.0]), [-0.5]),
]


@pytest.mark.parametrize(("name", "kwargs", "value"), VALUES, ids=[v[0] for v in VALUES])
def test_values_outside_the_support(name, kwargs, value) -> None:
    ours = getattr(D, name)(**{k: et.tensor(v, dtype=et.float64) for k, v in kwargs.items()})
    theirs = getattr(TD, name)(**{k: torch.tensor(v, dtype=torch.float64)
                                  for k, v in kwargs.items()})
    m_ours = raised_message(lambda: ours.log_prob(et.tensor(value, dtype=et.float64)))
    m_theirs = raised_message(lambda: theirs.log_prob(torch.tensor(value, dtype=torch.float64)))
    assert m_ours.startswith("Expected value argument (Tensor of shape ")
    assert first_line(m_ours) == first_line(m_theirs)
    # without validation: no error
    getattr(D, name)(**{k: et.tensor(v, dtype=et.float64) for k, v in kwargs.items()},
                     validate_args=False).log_prob(et.tensor(value, dtype=et.float64))


def test_shape_errors() -> None:
    d = D.Normal(et.zeros(3), et.ones(3))
    assert raised_message(lambda: d.log_prob(et.zeros(2))) == (
        "Value is not broadcastable with batch_shape+event_shape: ember.Size([2]) vs "
        "ember.Size([3]).")
    m = D.MultivariateNormal(et.zeros(3), et.eye(3))
    assert raised_message(lambda: m.log_prob(et.zeros(2))) == (
        "The right-most size of value must match event_shape: ember.Size([2]) vs "
        "ember.Size([3]).")
    assert (raised_message(lambda: d.log_prob(0.5))
            == "The value argument to log_prob must be a Tensor")


def test_constructor_errors_match_torch() -> None:
    cases = [
        (lambda M, T: M.Bernoulli(), "Either `probs` or `logits` must be specified, but not "
                                     "both."),
        (lambda M, T: M.Categorical(probs=T([0.5, 0.5]), logits=T([0.0, 0.0])), None),
        (lambda M, T: M.Categorical(probs=T(0.5)), None),
        (lambda M, T: M.Dirichlet(T(0.5)), None),
        (lambda M, T: M.MultivariateNormal(T(0.5), T([[1.0]])), None),
        (lambda M, T: M.MultivariateNormal(T([0.5])), None),
        (lambda M, T: M.MultivariateNormal(T([0.5]), scale_tril=T([1.0])), None),
        (lambda M, T: M.LowRankMultivariateNormal(T([0.0, 0.0]), T([[1.0]]), T([1.0, 1.0])),
         None),
        (lambda M, T: M.LowRankMultivariateNormal(T([0.0, 0.0]), T([[1.0], [1.0]]), T([1.0])),
         None),
        (lambda M, T: M.Uniform(T([1.0]), T([0.0])), None),
        (lambda M, T: M.Geometric(T([0.0])), None),
    ]
    for make, expected in cases:
        ours = raised_message(lambda make=make: make(D, lambda v: et.tensor(v, dtype=et.float64)))
        theirs = raised_message(
            lambda make=make: make(TD, lambda v: torch.tensor(v, dtype=torch.float64)))
        assert first_line(ours) == first_line(theirs)
        if expected is not None:
            assert ours == expected
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count"):
        D.Multinomial(et.tensor(3.0), et.tensor([0.5, 0.5]))


def test_default_validation_switch() -> None:
    assert D.Distribution._validate_args is True
    D.Distribution.set_default_validate_args(False)
    d = D.Normal(et.tensor([0.0]), et.tensor([-1.0]))  # accepted
    assert d._validate_args is False
    D.Normal(0.0, 1.0).log_prob(et.tensor(float("nan")))
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")
    D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(et.tensor([0.0]), et.tensor([-1.0]))
    D.Normal(et.tensor([0.0]), et.tensor([-1.0]), validate_args=False)


def test_subclass_without_arg_constraints_warns() -> None:
    class Bare(D.Distribution):
        pass

    with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
        Bare()

    class Custom(D.Normal):
        def __init__(self) -> None:
            super().__init__(0.0, 1.0)

    with pytest.raises(NotImplementedError, match="must also define a custom .expand"):
        Custom().expand((2,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert D.Normal(0.0, 1.0).expand((2,)).batch_shape == (2,)


def test_abstract_methods_raise() -> None:
    d = D.Normal(0.0, 1.0)
    with pytest.raises(NotImplementedError):
        D.Distribution.rsample(d)
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        D.Distribution.mode.fget(d)
    with pytest.raises(NotImplementedError):
        D.Poisson(et.tensor([1.0])).entropy()
    with pytest.warns(FutureWarning, match="sample_n"):
        assert tuple(d.sample_n(3).shape) == (3,)
    assert np.isnan(D.Uniform(0.0, 1.0).mode.item())
