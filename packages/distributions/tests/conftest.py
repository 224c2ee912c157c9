"""Shared helpers: build the same distribution in Ember and in PyTorch from NumPy
parameters (float64), and compare tensors."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import ember_distributions as D
import ember_tensor as et

torch.set_default_dtype(torch.float64)


def to_et(x, requires_grad: bool = False):
    if isinstance(x, np.ndarray):
        t = et.tensor(x.copy())
        if requires_grad and t.is_floating_point():
            t.requires_grad_()
        return t
    return x


def to_torch(x, requires_grad: bool = False):
    if isinstance(x, np.ndarray):
        t = torch.tensor(x.copy())
        if requires_grad and t.is_floating_point():
            t.requires_grad_()
        return t
    return x


def np_of(t) -> np.ndarray:
    if isinstance(t, np.ndarray):
        return t
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach().numpy())


def assert_close(ours, theirs, rtol: float = 1e-9, atol: float = 1e-11, what: str = ""):
    a, b = np_of(ours), np_of(theirs)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs torch {b.shape}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what, equal_nan=True)


@pytest.fixture(autouse=True)
def _default_validation():
    """Every test starts with validation on (the default) and restores it."""
    D.Distribution.set_default_validate_args(True)
    torch.distributions.Distribution.set_default_validate_args(True)
    yield
    D.Distribution.set_default_validate_args(True)
    torch.distributions.Distribution.set_default_validate_args(True)


def build(name, kwargs, requires_grad=()):
    """Distribution ``name`` of Ember and of PyTorch from the same NumPy parameters; the
    parameters named in ``requires_grad`` require grad."""
    ours = getattr(D, name)(**{k: to_et(v, k in requires_grad) for k, v in kwargs.items()})
    theirs = getattr(torch.distributions, name)(
        **{k: to_torch(v, k in requires_grad) for k, v in kwargs.items()})
    return ours, theirs


def try_stat(fn):
    """(fn(), None), or (None, the NotImplementedError fn raised)."""
    try:
        return fn(), None
    except NotImplementedError as e:
        return None, e


def assert_same_structure(ours, theirs) -> None:
    """Shapes, flags and the kinds of the argument constraints and support agree."""
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    assert sorted(ours.arg_constraints) == sorted(theirs.arg_constraints)
    for key, constraint in theirs.arg_constraints.items():
        assert type(ours.arg_constraints[key]).__name__ == type(constraint).__name__
    assert type(ours.support).__name__ == type(theirs.support).__name__


def raised_message(fn, kind=ValueError) -> str:
    """The message of the ``kind`` exception that ``fn()`` raises."""
    with pytest.raises(kind) as info:
        fn()
    return str(info.value)


def first_line(msg: str) -> str:
    """A validation message's first line without the library prefix (the value printed
    after the colon differs between the tensor reprs; torch's default dtype is float64 in
    these tests, so it prints no dtype)."""
    line = re.sub(r"(torch|ember)\.", "", msg.split("\n")[0])
    return line.replace(", dtype=float64", "")


def check_expand(name, kwargs, value, rtol: float) -> None:
    """``expand`` to a new leading batch dim of 5: the class, the shapes, log_prob of a
    value against torch's (within ``rtol``), the mean where torch has one, samples of the
    expanded shape inside the support."""
    ours, theirs = build(name, kwargs)
    shape = (5,) + tuple(theirs.batch_shape)
    e_ours, e_theirs = ours.expand(shape), theirs.expand(torch.Size(shape))
    assert type(e_ours) is type(ours)
    assert tuple(e_ours.batch_shape) == tuple(e_theirs.batch_shape) == shape
    assert tuple(e_ours.event_shape) == tuple(e_theirs.event_shape)
    assert_close(e_ours.log_prob(to_et(value[:1])), e_theirs.log_prob(to_torch(value[:1])),
                 rtol=rtol, what="expanded log_prob")
    expected, err = try_stat(lambda: e_theirs.mean)
    if err is None:
        assert_close(e_ours.mean, expected, rtol=rtol, what="expanded mean")
    et.manual_seed(0)
    x = e_ours.sample((2,))
    assert tuple(x.shape) == (2,) + shape + tuple(theirs.event_shape)
    assert bool(e_ours.support.check(x).all())


def check_invalid_parameters(name, kwargs) -> None:
    """Constructing ``name`` from ``kwargs`` (float64) fails validation with torch's
    message (first line)."""
    import torch.distributions as TD

    ours = raised_message(lambda: getattr(D, name)(**{k: et.tensor(v, dtype=et.float64)
                                                for k, v in kwargs.items()}))
    theirs = raised_message(lambda: getattr(TD, name)(**{k: torch.tensor(v, dtype=torch.float64)
                                                   for k, v in kwargs.items()}))
    assert ours.startswith("Expected parameter ")
    assert first_line(ours) == first_line(theirs)
