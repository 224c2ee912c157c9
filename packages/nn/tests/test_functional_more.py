"""The functions of ember_nn._functional_more against torch.nn.functional: values and
float64 gradients of shrinkage, PReLU, distances, shuffles, RMS/LRN normalization and the
margin/hinge/Poisson/Gaussian/multi-label losses, every reduction, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember_autograd as ea
import ember_nn.functional as EF
import ember_tensor as et

RNG = np.random.default_rng(3)


def _pair(a, grad=False):
    e, t = et.from_numpy(np.array(a)), torch.from_numpy(np.array(a))
    return (e.requires_grad_(), t.requires_grad_()) if grad else (e, t)


def _x(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape)


CASES = {
    "hardshrink": (lambda F, x: F.hardshrink(x, 0.3), [_x(3, 4)]),
    "softshrink": (lambda F, x: F.softshrink(x, 0.3), [_x(3, 4)]),
    "prelu": (lambda F, x, w: F.prelu(x, w), [_x(2, 3, 4), _x(3)]),
    "prelu_scalar_weight": (lambda F, x, w: F.prelu(x, w), [_x(), _x(1)]),
    "cosine_similarity": (lambda F, a, b: F.cosine_similarity(a, b, -2),
                          [_x(1, 2, 3), _x(2, 1, 3)]),
    "pairwise_distance": (lambda F, a, b: F.pairwise_distance(a, b, 3.0, keepdim=True),
                          [_x(4, 5), _x(4, 5)]),
    "pdist": (lambda F, a: F.pdist(a, 1.5), [_x(5, 3)]),
    "pixel_shuffle": (lambda F, a: F.pixel_shuffle(a, 2), [_x(2, 8, 3, 3)]),
    "pixel_unshuffle": (lambda F, a: F.pixel_unshuffle(a, 2), [_x(2, 3, 4, 6)]),
    "channel_shuffle": (lambda F, a: F.channel_shuffle(a, 3), [_x(2, 6, 4)]),
    "rms_norm": (lambda F, a, w: F.rms_norm(a, (4,), w), [_x(3, 4), _x(4)]),
    "local_response_norm": (lambda F, a: F.local_response_norm(a, 3), [_x(2, 5, 4)]),
    "margin_ranking_loss": (lambda F, a, b: F.margin_ranking_loss(
        a, b, torch_or_et(F).tensor([1.0, -1.0, 1.0, -1.0], dtype=a.dtype), 0.2), [_x(4), _x(4)]),
    "hinge_embedding_loss": (lambda F, a: F.hinge_embedding_loss(
        a, torch_or_et(F).tensor([1.0, -1.0, 1.0], dtype=a.dtype), reduction="sum"), [_x(3)]),
    "soft_margin_loss": (lambda F, a: F.soft_margin_loss(
        a, torch_or_et(F).tensor([1.0, -1.0, 1.0], dtype=a.dtype), reduction="none"), [_x(3)]),
    "multilabel_soft_margin_loss": (lambda F, a, t: F.multilabel_soft_margin_loss(a, t.detach()),
                                    [_x(3, 4), _x(3, 4, lo=0.0)]),
    "poisson_nll_loss": (lambda F, a, t: F.poisson_nll_loss(a, t.detach(), full=True),
                         [_x(3, 4), _x(3, 4, lo=0.5, hi=3.0)]),
    "poisson_nll_loss_linear": (lambda F, a, t: F.poisson_nll_loss(a, t.detach(), False),
                                [_x(3, 4, lo=0.5, hi=2.0), _x(3, 4, lo=0.5, hi=3.0)]),
    "gaussian_nll_loss": (lambda F, a, t, v: F.gaussian_nll_loss(a, t, v, full=True),
                          [_x(3, 4), _x(3, 4), _x(3, 1, lo=0.2, hi=1.0)]),
    "triplet_margin_loss": (lambda F, a, p, n: F.triplet_margin_loss(a, p, n, swap=True),
                            [_x(3, 5), _x(3, 5), _x(3, 5)]),
    "multi_margin_loss": (lambda F, a: F.multi_margin_loss(
        a, torch_or_et(F).tensor([0, 2, 1]), p=2, margin=0.7), [_x(3, 4)]),
}


def torch_or_et(F):
    return torch if F is TF else et


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch_with_gradients(name):
    fn, arrays = CASES[name]
    pairs = [_pair(a, grad=True) for a in arrays]
    got = fn(EF, *[e for e, _ in pairs])
    want = fn(TF, *[t for _, t in pairs])
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    cot = RNG.uniform(-1, 1, tuple(want.shape))
    got.backward(et.from_numpy(cot.copy()))
    want.backward(torch.from_numpy(cot.copy()))
    for e, t in pairs:
        assert (e.grad is None) == (t.grad is None)  # (detached targets get none)
        if t.grad is not None:
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", ["hardshrink", "pdist", "rms_norm", "gaussian_nll_loss",
                                  "triplet_margin_loss"])
def test_gradcheck(name):
    fn, arrays = CASES[name]
    args = tuple(et.from_numpy(np.array(a)).requires_grad_() for a in arrays)
    assert ea.gradcheck(lambda *xs: fn(EF, *xs), args)


@pytest.mark.parametrize(("call", "error"), [
    (lambda F, m: F.pixel_shuffle(m.zeros(1, 3, 2, 2), 2), RuntimeError),
    (lambda F, m: F.channel_shuffle(m.zeros(1, 5, 2), 2), RuntimeError),
    (lambda F, m: F.pdist(m.zeros(2, 2, 2)), RuntimeError),
    (lambda F, m: F.softshrink(m.zeros(2), -1.0), RuntimeError),
    (lambda F, m: F.multi_margin_loss(m.zeros(2, 3), m.tensor([0, 1]), p=3), ValueError),
    (lambda F, m: F.gaussian_nll_loss(m.zeros(2, 3), m.zeros(2, 3), -m.ones(2, 3)), ValueError),
    # found by the differential fuzzer (issue 30), with PyTorch's messages
    (lambda F, m: F.prelu(m.ones(2, 3), m.ones(1, 3)), (RuntimeError, "scalar or 1D tensor")),
    (lambda F, m: F.pdist(m.ones(3, 2, dtype=m.int16)),
     (RuntimeError, "pdist only supports floating-point dtypes")),
    (lambda F, m: F.pdist(m.ones(3, 2, dtype=m.float16)), (NotImplementedError, "Half")),
    (lambda F, m: F.soft_margin_loss(m.tensor([True]), m.tensor([1])), (RuntimeError, "bool")),
    (lambda F, m: F.multilabel_soft_margin_loss(m.tensor(1.0), m.ones(3)),
     (IndexError, "Dimension specified as -1 but tensor has no dimensions")),
    (lambda F, m: F.triplet_margin_loss(m.ones(2, 3), m.ones(2, 3), m.ones(2, 3), margin=0.0),
     (ValueError, "margin must be greater than 0, got 0.0")),
    (lambda F, m: F.cosine_similarity(m.ones(2), m.ones(2), eps=-1.0),
     (RuntimeError, "eps must be non-negative, got: -1")),
    (lambda F, m: F.rms_norm(m.ones(2, 3), []),
     (RuntimeError, "Expected normalized_shape to be at least 1-dimensional")),
    (lambda F, m: F.alpha_dropout(m.ones(3), float("nan"), True),
     (RuntimeError, "dropout probability has to be between 0 and 1, but got nan")),
])
def test_errors_match_torch(call, error):
    error, match = error if isinstance(error, tuple) else (error, None)
    for F, m in ((EF, et), (TF, torch)):
        with pytest.raises(error, match=match):
            call(F, m)
