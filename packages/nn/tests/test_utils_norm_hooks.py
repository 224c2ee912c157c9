"""The hook-based ember_nn.utils.weight_norm / spectral_norm (and their remove_*) against
torch.nn.utils, in float64: forward outputs, gradients of weight_g/weight_v and
weight_orig, the power method's buffers, state_dict keys and metadata, loading old state
dicts, removal and error messages. Also the private state-dict hooks of Module that they
use."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember_nn as nn
import ember_tensor as et
from ember_nn import utils
from nn_testing import assert_close, np_of

U = {"ember": utils, "torch": torch.nn.utils}


def libs(name: str):
    return (nn, et) if name == "ember" else (torch.nn, torch)


def load_from_torch(ours, theirs) -> None:
    ours.load_state_dict({k: et.tensor(np_of(v)) for k, v in theirs.state_dict().items()})


def weight_norm(name, module, **kwargs):
    with pytest.warns(FutureWarning, match=r"nn\.utils\.weight_norm` is deprecated in favor "
                                           r"of `\w+\.nn\.utils\.parametrizations\.weight_norm"):
        return U[name].weight_norm(module, **kwargs)


def step(ours, theirs, x_np, what: str) -> None:
    xe, xt = et.tensor(x_np), torch.tensor(x_np)
    le, lt = (ours(xe) ** 2).sum(), (theirs(xt) ** 2).sum()
    assert_close(le, lt, what=f"{what}: loss")
    le.backward()
    lt.backward()
    ge = {k: p.grad for k, p in ours.named_parameters()}
    gt = {k: p.grad for k, p in theirs.named_parameters()}
    assert list(ge) == list(gt)
    for k in gt:
        assert_close(ge[k], gt[k], what=f"{what}: grad {k}", scale=10)
    assert_close(ours.weight, theirs.weight, what=f"{what}: weight")


@pytest.mark.parametrize("layer,dim", [("linear", 0), ("linear", 1), ("linear", None),
                                       ("conv", 0), ("conv", 1), ("conv", 3)])
def test_weight_norm_matches_torch(layer: str, dim) -> None:
    def make(name):
        N, _ = libs(name)
        return (N.Linear(4, 3) if layer == "linear" else N.Conv2d(2, 3, 3)).double()

    torch.manual_seed(0)
    theirs = make("torch")
    ours = make("ember")
    load_from_torch(ours, theirs)
    weight_norm("torch", theirs, dim=dim)
    weight_norm("ember", ours, dim=dim)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert_close(ours.weight_g, theirs.weight_g)
    assert_close(ours.weight_v, theirs.weight_v)
    assert not isinstance(ours.weight, nn.Parameter)
    shape = (2, 4) if layer == "linear" else (2, 2, 5, 5)
    rng = np.random.default_rng(0)
    step(ours, theirs, rng.standard_normal(shape), "weight_norm")
    # after changing g and v, the hook recomputes the weight on the next call
    with torch.no_grad():
        theirs.weight_g.mul_(1.5)
        theirs.weight_v.add_(0.1)
    load_from_torch(ours, theirs)
    ours.zero_grad()
    theirs.zero_grad()
    step(ours, theirs, rng.standard_normal(shape), "weight_norm (updated)")
    for name, m in (("ember", ours), ("torch", theirs)):
        assert U[name].remove_weight_norm(m) is m
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert isinstance(ours.weight, nn.Parameter)
    assert_close(ours.weight, theirs.weight)
    assert not ours._forward_pre_hooks


def test_weight_norm_errors_match_torch() -> None:
    messages = []
    for name in ("ember", "torch"):
        N, _ = libs(name)
        m = weight_norm(name, N.Linear(2, 2))
        with pytest.raises(RuntimeError) as twice:
            weight_norm(name, m)
        with pytest.raises(ValueError) as missing:
            U[name].remove_weight_norm(m, "bias")
        messages.append((str(twice.value), str(missing.value)))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("layer", ["linear", "conv", "convT"])
def test_spectral_norm_matches_torch(layer: str) -> None:
    def make(name):
        N, _ = libs(name)
        return {"linear": lambda: N.Linear(5, 4), "conv": lambda: N.Conv2d(2, 3, 2),
                "convT": lambda: N.ConvTranspose2d(2, 3, 2)}[layer]().double()

    torch.manual_seed(0)
    theirs = U["torch"].spectral_norm(make("torch"), n_power_iterations=3)
    ours = U["ember"].spectral_norm(make("ember"), n_power_iterations=3)
    keys = list(theirs.state_dict())
    assert list(ours.state_dict()) == keys
    assert ours._forward_pre_hooks[next(iter(ours._forward_pre_hooks))].dim == (
        1 if layer == "convT" else 0)
    load_from_torch(ours, theirs)  # the same weight_orig and u, v
    shape = {"linear": (2, 5), "conv": (2, 2, 4, 4), "convT": (2, 2, 3, 3)}[layer]
    rng = np.random.default_rng(1)
    for i in range(2):  # training mode: each forward runs the power method
        ours.zero_grad()
        theirs.zero_grad()
        step(ours, theirs, rng.standard_normal(shape), f"spectral_norm train {i}")
        assert_close(ours.weight_u, theirs.weight_u, what="u")
        assert_close(ours.weight_v, theirs.weight_v, what="v")
    ours.eval()
    theirs.eval()
    u_before = np_of(ours.weight_u).copy()
    ours.zero_grad()
    theirs.zero_grad()
    step(ours, theirs, rng.standard_normal(shape), "spectral_norm eval")
    np.testing.assert_array_equal(np_of(ours.weight_u), u_before)
    # the metadata records the format version, as in PyTorch
    sd = ours.state_dict()
    assert sd._metadata[""] == theirs.state_dict()._metadata[""]
    assert sd._metadata[""]["spectral_norm"] == {"weight.version": 1}
    for name, m in (("ember", ours), ("torch", theirs)):
        assert U[name].remove_spectral_norm(m) is m
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert_close(ours.weight, theirs.weight)
    assert isinstance(ours.weight, nn.Parameter)
    assert not ours._forward_pre_hooks and not ours._state_dict_hooks
    # Ember also removes the load pre-hook (PyTorch leaves it, wrapped, behind: its
    # isinstance test misses it, and a strict load of the plain state dict then fails)
    assert not ours._load_state_dict_pre_hooks
    ours.load_state_dict(ours.state_dict())


def test_spectral_norm_loads_version_0_state_dict() -> None:
    torch.manual_seed(0)
    theirs = U["torch"].spectral_norm(torch.nn.Linear(5, 4).double())
    ours = U["ember"].spectral_norm(nn.Linear(5, 4).double())
    load_from_torch(ours, theirs)
    theirs.eval()
    ours.eval()
    w = theirs.weight_orig.detach() / 2.5  # a version-0 dict: weight, no weight_v
    old = {"bias": theirs.bias.detach(), "weight_orig": theirs.weight_orig.detach(),
           "weight_u": theirs.weight_u.detach(), "weight": w}
    theirs.load_state_dict(dict(old))
    ours.load_state_dict({k: et.tensor(np_of(v)) for k, v in old.items()})
    assert_close(ours.weight_v, theirs.weight_v, scale=1e3)
    x = np.random.default_rng(2).standard_normal((3, 5))
    assert_close(ours(et.tensor(x)), theirs(torch.tensor(x)), scale=1e3)


def test_spectral_norm_errors_match_torch() -> None:
    messages = []
    for name in ("ember", "torch"):
        N, _ = libs(name)
        m = U[name].spectral_norm(N.Linear(2, 2))
        with pytest.raises(RuntimeError) as twice:
            U[name].spectral_norm(m)
        with pytest.raises(ValueError) as missing:
            U[name].remove_spectral_norm(m, "bias")
        with pytest.raises(ValueError) as power:
            U[name].spectral_norm(N.Linear(2, 2), n_power_iterations=0)
        none_bias = N.Linear(2, 2, bias=False)
        with pytest.raises(ValueError) as none:
            U[name].spectral_norm(none_bias, name="bias")
        messages.append([str(e.value) for e in (twice, missing, power, none)])
    assert messages[0] == messages[1]


def test_private_state_dict_hooks_of_module() -> None:
    log = []
    m = nn.Linear(2, 2)

    def post(module, state_dict, prefix, local_metadata):
        log.append(("post", module is m, sorted(state_dict)))

    def pre(state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        state_dict[prefix + "bias"] = et.full((2,), 7.0)
        log.append(("pre", strict))

    def pre_with_module(module, state_dict, *rest):
        log.append(("pre-module", module is m))

    h1 = m._register_state_dict_hook(post)
    h2 = m._register_load_state_dict_pre_hook(pre)
    m._register_load_state_dict_pre_hook(pre_with_module, with_module=True)
    assert pre in m._load_state_dict_pre_hooks.values()
    sd = m.state_dict()
    m.load_state_dict(sd)
    assert m.bias.tolist() == [7.0, 7.0]
    assert log == [("post", True, ["bias", "weight"]), ("pre", True), ("pre-module", True)]
    h1.remove()
    h2.remove()
    assert not m._state_dict_hooks and len(m._load_state_dict_pre_hooks) == 1


def test_old_weight_norm_warns_only_as_torch_does() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        utils.spectral_norm(nn.Linear(2, 2))  # no warning: not deprecated in PyTorch either
        torch.nn.utils.spectral_norm(torch.nn.Linear(2, 2))
