"""ember_nn.utils against torch.nn.utils: gradient clipping and parameter vectors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import ember_nn as nn
import ember_tensor as et
from ember_nn import utils
from nn_testing import assert_close, copy_state, np_of


def _pair_with_grads(scale: float = 1.0):
    ours = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2)).double()
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2)).double()
    copy_state(ours, theirs)
    rng = np.random.default_rng(0)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        g = rng.standard_normal(tuple(tp.shape)) * scale
        p.grad = et.from_numpy(g.copy())
        tp.grad = torch.from_numpy(g.copy())
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5, math.inf, -math.inf, 0.0, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_torch(norm_type, max_norm: float) -> None:
    ours, theirs = _pair_with_grads()
    if norm_type == "inf":
        norm_type = float("inf")
    total = utils.clip_grad_norm_(ours.parameters(), max_norm, norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs.parameters(), max_norm, norm_type)
    assert_close(total, ttotal, "float64", "total norm")
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        assert_close(p.grad, tp.grad, "float64", "clipped gradient")


def test_clip_grad_norm_single_tensor_and_missing_grads() -> None:
    p = nn.Parameter(et.tensor([3.0, 4.0]))
    q = nn.Parameter(et.ones(2))  # no gradient: skipped
    p.grad = et.tensor([3.0, 4.0])
    total = utils.clip_grad_norm_(p, 1.0)
    assert abs(total.item() - 5.0) < 1e-6
    np.testing.assert_allclose(np_of(p.grad), [0.6, 0.8], rtol=1e-5)
    assert utils.clip_grad_norm_([q], 1.0).item() == 0.0


def test_clip_grad_norm_nonfinite() -> None:
    for lib, T, N in ((utils, et, nn), (torch.nn.utils, torch, torch.nn)):
        p = N.Parameter(T.ones(2))
        p.grad = T.tensor([float("inf"), 1.0])
        with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from "
                                               "`parameters` is non-finite"):
            lib.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
        total = lib.clip_grad_norm_([p], 1.0)
        assert math.isinf(float(total))


def test_clip_grad_norm_empty_generator_warns() -> None:
    for lib in (utils, torch.nn.utils):
        with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
            lib.clip_grad_norm_((p for p in []), 1.0)


def test_clip_grad_value_matches_torch() -> None:
    ours, theirs = _pair_with_grads(scale=2.0)
    assert utils.clip_grad_value_(ours.parameters(), 0.7) is None
    torch.nn.utils.clip_grad_value_(theirs.parameters(), 0.7)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        assert_close(p.grad, tp.grad, "float64", "clamped gradient")
        assert np.abs(np_of(p.grad)).max() <= 0.7


def test_get_total_norm_and_clip_grads_with_norm() -> None:
    ours, theirs = _pair_with_grads()
    grads = [p.grad for p in ours.parameters()]
    tgrads = [p.grad for p in theirs.parameters()]
    total = utils.get_total_norm(grads, 3.0)
    ttotal = torch.nn.utils.get_total_norm(tgrads, 3.0)
    assert_close(total, ttotal, "float64")
    utils.clip_grads_with_norm_(ours.parameters(), 0.1, total)
    torch.nn.utils.clip_grads_with_norm_(theirs.parameters(), 0.1, ttotal)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        assert_close(p.grad, tp.grad, "float64")


def test_clipping_runs_without_recording() -> None:
    p = nn.Parameter(et.ones(3))
    (p * p).sum().backward(create_graph=True)
    assert p.grad.requires_grad
    total = utils.clip_grad_norm_([p], 0.1)
    assert not total.requires_grad


def test_parameters_to_vector_and_back() -> None:
    net = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = utils.parameters_to_vector(net.parameters())
    expected = np.concatenate([np_of(p).ravel() for p in net.parameters()])
    np.testing.assert_array_equal(np_of(vec), expected)
    assert vec.requires_grad  # differentiable in the parameters
    new = et.arange(vec.numel(), dtype=et.float32)
    utils.vector_to_parameters(new, net.parameters())
    np.testing.assert_array_equal(np_of(utils.parameters_to_vector(net.parameters())),
                                  np.arange(vec.numel()))
    assert isinstance(net[0].weight, nn.Parameter) and net[0].weight.requires_grad
    assert tuple(net[0].weight.shape) == (2, 3)
    with pytest.raises(TypeError, match="expected ember.Tensor, but got: list"):
        utils.vector_to_parameters([1.0], net.parameters())
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        torch.nn.utils.vector_to_parameters([1.0], torch.nn.Linear(1, 1).parameters())
