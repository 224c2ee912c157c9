"""ember_nn.utils against torch.nn.utils: gradient clipping, parameter vectors and the
convolution weights' memory format."""

from __future__ import annotations

import importlib
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


def test_clip_grad_norm_is_the_deprecated_alias() -> None:
    ours, theirs = _pair_with_grads()
    with pytest.warns(FutureWarning, match="`ember.nn.utils.clip_grad_norm` is now "
                                           "deprecated in favor of `ember.nn.utils."
                                           "clip_grad_norm_`"):
        total = utils.clip_grad_norm(ours.parameters(), 0.5, norm_type=3.0)
    with pytest.warns(FutureWarning, match="is now deprecated in favor of"):
        ttotal = torch.nn.utils.clip_grad_norm(theirs.parameters(), 0.5, norm_type=3.0)
    assert_close(total, ttotal, "float64", "total norm")
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        assert_close(p.grad, tp.grad, "float64", "clipped gradient")
    assert "deprecated" in utils.clip_grad_norm.__deprecated__
    assert "clip_grad_norm" in utils.__all__ and "clip_grad_norm" in torch.nn.utils.__all__


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


# ------------------------------------------------------------------ memory format


def _conv2d_pair():
    def make(N):
        return N.Sequential(N.Conv2d(2, 4, 3, padding=1), N.ReLU(),
                            N.Sequential(N.ConvTranspose2d(4, 3, 3), N.Conv2d(3, 2, 1)),
                            N.Conv3d(1, 1, 1))

    ours, theirs = make(nn).double(), make(torch.nn).double()
    copy_state(ours, theirs)
    return ours, theirs


def _weights(module, kind) -> list:
    return [m.weight for m in module.modules() if isinstance(m, kind)]


@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format"])
def test_convert_conv2d_weight_memory_format_matches_torch(fmt: str) -> None:
    ours, theirs = _conv2d_pair()
    conv2d = (nn.Conv2d, nn.ConvTranspose2d)
    weights = _weights(ours, conv2d)
    for w in weights:
        w.grad = et.ones_like(w)
    ptrs = [w.data_ptr() for w in weights]
    conv3d_ptr = ours[3].weight.data_ptr()
    assert utils.convert_conv2d_weight_memory_format(ours, fmt) is ours
    assert torch.nn.utils.convert_conv2d_weight_memory_format(
        theirs, getattr(torch, fmt)) is theirs
    # the same parameters (gradients kept), fresh contiguous copies of the same values
    assert all(a is b for a, b in zip(_weights(ours, conv2d), weights))
    assert all(w.grad is not None for w in weights)
    assert all(w.data_ptr() != p for w, p in zip(weights, ptrs))
    assert all(w.is_contiguous() for w in weights)
    assert ours[3].weight.data_ptr() == conv3d_ptr  # a Conv3d is left alone
    if fmt == "channels_last":
        assert all(w.is_contiguous(memory_format=torch.channels_last)
                   for w in _weights(theirs, (torch.nn.Conv2d, torch.nn.ConvTranspose2d)))
    for (k, v), (tk, tv) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert k == tk
        np.testing.assert_array_equal(np_of(v), tv.detach().numpy())
    x = np.random.default_rng(3).standard_normal((2, 2, 5, 5))
    assert_close(ours[:3](et.from_numpy(x.copy())), theirs[:3](torch.from_numpy(x.copy())),
                 "float64", "output after conversion")


def test_convert_conv3d_weight_memory_format_matches_torch() -> None:
    def make(N):
        return N.Sequential(N.Conv3d(2, 3, 3, padding=1),
                            N.Sequential(N.ConvTranspose3d(3, 2, 2)), N.Conv2d(1, 1, 1))

    ours, theirs = make(nn).double(), make(torch.nn).double()
    copy_state(ours, theirs)
    ptrs = [ours[0].weight.data_ptr(), ours[1][0].weight.data_ptr(), ours[2].weight.data_ptr()]
    # a torch memory format object is read by its name
    assert utils.convert_conv3d_weight_memory_format(ours, torch.channels_last_3d) is ours
    torch.nn.utils.convert_conv3d_weight_memory_format(theirs, torch.channels_last_3d)
    assert ours[0].weight.data_ptr() != ptrs[0] and ours[1][0].weight.data_ptr() != ptrs[1]
    assert ours[2].weight.data_ptr() == ptrs[2]  # a Conv2d is left alone
    assert theirs[0].weight.is_contiguous(memory_format=torch.channels_last_3d)
    x = np.random.default_rng(4).standard_normal((1, 2, 4, 4, 4))
    assert_close(ours[:2](et.from_numpy(x.copy())), theirs[:2](torch.from_numpy(x.copy())),
                 "float64", "output after conversion")


def test_convert_weight_memory_format_errors_match_torch() -> None:
    cases = [  # (function name, module, format): PyTorch's RuntimeError for the rank
        ("convert_conv2d_weight_memory_format", lambda N: N.Conv2d(2, 2, 1), "channels_last_3d"),
        ("convert_conv3d_weight_memory_format", lambda N: N.Conv3d(2, 2, 1), "channels_last"),
    ]
    for fn, make, fmt in cases:
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch.nn.utils, fn)(make(torch.nn), getattr(torch, fmt))
        with pytest.raises(RuntimeError) as ours:
            getattr(utils, fn)(make(nn), fmt)
        assert str(ours.value) == str(theirs.value)
    for lib, fmt in ((utils, "preserve_format"), (torch.nn.utils, torch.preserve_format)):
        with pytest.raises(RuntimeError, match="Unsupported memory format"):
            lib.convert_conv2d_weight_memory_format(_conv2d_pair()[lib is not utils], fmt)
    # not a memory format: a TypeError, once there is a convolution to convert
    with pytest.raises(TypeError):
        torch.nn.utils.convert_conv2d_weight_memory_format(torch.nn.Conv2d(1, 1, 1), 3)
    with pytest.raises(TypeError, match="memory_format must be a memory format"):
        utils.convert_conv2d_weight_memory_format(nn.Conv2d(1, 1, 1), 3)
    for lib, N in ((utils, nn), (torch.nn.utils, torch.nn)):
        linear = N.Sequential(N.Linear(2, 2))
        assert lib.convert_conv2d_weight_memory_format(linear, 3) is linear
    # None keeps the layout, as torch's clone(memory_format=None)
    conv = nn.Conv2d(1, 1, 1)
    assert utils.convert_conv2d_weight_memory_format(conv, None) is conv
    torch.nn.utils.convert_conv2d_weight_memory_format(torch.nn.Conv2d(1, 1, 1), None)


def test_memory_format_submodule() -> None:
    mod = importlib.import_module("ember_nn.utils.memory_format")
    assert utils.memory_format is mod
    for name in ("convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"):
        assert getattr(mod, name) is getattr(utils, name)
        assert name in utils.__all__ and name in torch.nn.utils.__all__
        assert hasattr(torch.nn.utils.memory_format, name)
