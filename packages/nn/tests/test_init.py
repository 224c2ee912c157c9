"""ember_nn.init against torch.nn.init: gains, fans and errors equal; deterministic fills
equal; random fills with PyTorch's bounds and moments (Ember's random stream is its own);
generators reproducible; everything under no_grad."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import ember_nn as nn
import ember_tensor as et
from ember_nn import init
from nn_testing import np_of

GAINS = [("linear", None), ("conv2d", None), ("conv_transpose3d", None), ("sigmoid", None),
         ("tanh", None), ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
         ("leaky_relu", 3), ("selu", None)]


@pytest.mark.parametrize(("name", "param"), GAINS)
def test_calculate_gain_matches_torch(name: str, param) -> None:
    assert init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)


def _error(call) -> tuple[str, str]:
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - compared
        return type(exc).__name__, str(exc)
    return "no error", ""


@pytest.mark.parametrize(
    "call",
    [
        lambda init_, T: init_.calculate_gain("swish"),
        lambda init_, T: init_.calculate_gain("leaky_relu", True),
        lambda init_, T: init_.calculate_gain("leaky_relu", "0.1"),
        lambda init_, T: init_.xavier_uniform_(T.empty(3)),
        lambda init_, T: init_.kaiming_normal_(T.empty(3, 2), mode="fan_middle"),
        lambda init_, T: init_.eye_(T.empty(3, 2, 1)),
        lambda init_, T: init_.dirac_(T.empty(3, 2)),
        lambda init_, T: init_.dirac_(T.empty(3, 2, 3), groups=2),
        lambda init_, T: init_.orthogonal_(T.empty(3)),
        lambda init_, T: init_.sparse_(T.empty(3), 0.1),
    ],
)
def test_errors_match_torch(call) -> None:
    assert _error(lambda: call(init, et)) == _error(lambda: call(torch.nn.init, torch))


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 2), (6, 2, 3, 3), (2, 7, 1, 1, 2)])
def test_fans_match_torch(shape) -> None:
    ours = init._calculate_fan_in_and_fan_out(et.empty(*shape))
    assert ours == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


def test_deterministic_fills_match_torch() -> None:
    for fill in (
        lambda init_, t: init_.constant_(t, 0.25),
        lambda init_, t: init_.ones_(t),
        lambda init_, t: init_.zeros_(t),
    ):
        ours, theirs = et.full((3, 4), 7.0), torch.full((3, 4), 7.0)
        assert fill(init, ours) is ours
        fill(torch.nn.init, theirs)
        np.testing.assert_array_equal(np_of(ours), theirs.numpy())
    ours, theirs = et.full((3, 5), 7.0), torch.full((3, 5), 7.0)
    init.eye_(ours)
    torch.nn.init.eye_(theirs)
    np.testing.assert_array_equal(np_of(ours), theirs.numpy())
    for shape, groups in (((4, 2, 3), 1), ((4, 2, 3, 3), 2), ((6, 3, 3, 3, 3), 3)):
        ours, theirs = et.full(shape, 7.0), torch.full(shape, 7.0)
        init.dirac_(ours, groups)
        torch.nn.init.dirac_(theirs, groups)
        np.testing.assert_array_equal(np_of(ours), theirs.numpy())


def test_fills_work_on_parameters_under_no_grad() -> None:
    p = nn.Parameter(et.empty(4, 3))
    for fn in (init.uniform_, init.normal_, init.zeros_, init.ones_, init.eye_,
               init.xavier_uniform_, init.xavier_normal_, init.kaiming_uniform_,
               init.kaiming_normal_, init.orthogonal_, init.trunc_normal_):
        assert fn(p) is p
        assert p.requires_grad and p.is_leaf and p.grad_fn is None
        assert isinstance(p, nn.Parameter)
    init.constant_(p, 2.0)
    assert p.grad_fn is None


def _draws(fn, shape=(200, 300), **kwargs) -> np.ndarray:
    t = et.empty(*shape, dtype=et.float64)
    fn(t, **kwargs)
    return np_of(t)


def test_uniform_and_normal() -> None:
    u = _draws(init.uniform_, a=-2.0, b=3.0)
    assert u.min() >= -2.0 and u.max() <= 3.0 and abs(u.mean() - 0.5) < 0.02
    n = _draws(init.normal_, mean=1.0, std=2.0)
    assert abs(n.mean() - 1.0) < 0.02 and abs(n.std() - 2.0) < 0.02


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
@pytest.mark.parametrize(("a", "nonlinearity"), [(0, "relu"), (math.sqrt(5), "leaky_relu"),
                                                 (0, "tanh")])
def test_kaiming(mode: str, a: float, nonlinearity: str) -> None:
    shape = (200, 300)
    fan = 300 if mode == "fan_in" else 200
    std = torch.nn.init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    u = _draws(init.kaiming_uniform_, shape, a=a, mode=mode, nonlinearity=nonlinearity)
    bound = math.sqrt(3) * std
    assert np.abs(u).max() <= bound and np.abs(u).max() > 0.99 * bound
    assert abs(u.std() - std) < 0.02 * std
    n = _draws(init.kaiming_normal_, shape, a=a, mode=mode, nonlinearity=nonlinearity)
    assert abs(n.std() - std) < 0.02 * std and abs(n.mean()) < 0.02 * std


def test_xavier() -> None:
    std = 0.5 * math.sqrt(2.0 / (200 + 300))
    u = _draws(init.xavier_uniform_, gain=0.5)
    assert np.abs(u).max() <= math.sqrt(3) * std and abs(u.std() - std) < 0.02 * std
    n = _draws(init.xavier_normal_, gain=0.5)
    assert abs(n.std() - std) < 0.02 * std


def test_kaiming_zero_element_warns_like_torch() -> None:
    for lib, T in ((init, et), (torch.nn.init, torch)):
        t = T.empty(0, 3)
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            assert lib.kaiming_uniform_(t) is t
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            lib.kaiming_normal_(t)


@pytest.mark.parametrize(("mean", "std", "a", "b"),
                         [(0.0, 1.0, -2.0, 2.0), (0.0, 1.0, 0.5, 1.0), (1.0, 0.5, -1.0, 0.0),
                          (0.0, 0.02, -0.04, 0.04)])
def test_trunc_normal(mean: float, std: float, a: float, b: float) -> None:
    x = _draws(init.trunc_normal_, (100, 200), mean=mean, std=std, a=a, b=b)
    assert x.min() >= a and x.max() <= b
    # the truncated normal's mean and variance
    alpha, beta = (a - mean) / std, (b - mean) / std
    phi = lambda z: math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    m = mean + std * (phi(alpha) - phi(beta)) / z
    var = std**2 * (1 + (alpha * phi(alpha) - beta * phi(beta)) / z
                    - ((phi(alpha) - phi(beta)) / z) ** 2)
    assert abs(x.mean() - m) < 0.02 * (b - a)
    assert abs(x.var() - var) < 0.05 * var


def test_trunc_normal_warns_far_mean() -> None:
    for lib, T in ((init, et), (torch.nn.init, torch)):
        with pytest.warns(UserWarning, match="mean is more than 2 std from \\[a, b\\]"):
            lib.trunc_normal_(T.empty(10), mean=10.0, std=1.0, a=-1.0, b=1.0)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 2, 3), (6, 6)])
def test_orthogonal(shape) -> None:
    t = et.empty(*shape, dtype=et.float64)
    init.orthogonal_(t, gain=2.0)
    flat = np_of(t).reshape(shape[0], -1)
    rows, cols = flat.shape
    gram = flat.T @ flat if rows >= cols else flat @ flat.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(min(rows, cols)), atol=1e-10)
    f32 = et.empty(*shape)
    init.orthogonal_(f32)
    assert f32.dtype == et.float32
    empty = et.empty(0, 3)
    assert init.orthogonal_(empty) is empty


def test_sparse() -> None:
    t = et.empty(10, 6)
    init.sparse_(t, sparsity=0.3, std=0.5)
    zeros_per_column = (np_of(t) == 0).sum(axis=0)
    assert (zeros_per_column >= 3).all()


def test_generator_makes_draws_reproducible() -> None:
    for fn, kwargs in ((init.uniform_, {}), (init.normal_, {}), (init.xavier_uniform_, {}),
                       (init.xavier_normal_, {}), (init.kaiming_uniform_, {}),
                       (init.kaiming_normal_, {}), (init.trunc_normal_, {}),
                       (init.orthogonal_, {}), (init.sparse_, {"sparsity": 0.5})):
        outs = []
        for default_seed in (0, 1):
            g = et.Generator().manual_seed(42)
            et.manual_seed(default_seed)  # a different default stream: g alone decides
            outs.append(np_of(fn(et.empty(4, 5), generator=g, **kwargs)))
        np.testing.assert_array_equal(outs[0], outs[1], err_msg=fn.__name__)


@pytest.mark.parametrize("name", ["uniform", "normal", "xavier_uniform", "xavier_normal",
                                  "kaiming_uniform", "kaiming_normal", "orthogonal"])
def test_deprecated_names_warn_as_pytorch_and_initialise(name):
    import torch

    w = et.zeros(4, 3)
    with pytest.warns(FutureWarning) as got:
        getattr(nn.init, name)(w)
    with pytest.warns(FutureWarning) as want:
        getattr(torch.nn.init, name)(torch.zeros(4, 3))
    assert str(got[0].message) == str(want[0].message)
    assert float(w.abs().sum()) > 0
