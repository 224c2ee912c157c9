"""Module hooks, run side by side with torch.nn: forward pre-hooks and hooks (kwargs,
prepend, always_call, removal) and full backward (pre-)hooks (gradients seen and
replaced)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_nn as nn
import ember_tensor as et
from ember_nn.utils.hooks import RemovableHandle
from nn_testing import copy_state, np_of, pair


def libs(name: str):
    return (nn, et) if name == "ember" else (torch.nn, torch)


def forward_log(name: str) -> list:
    N, T = libs(name)
    log = []

    class Add(N.Module):
        def forward(self, x, y=None, *, scale=1.0):
            log.append(("forward", float(x.sum()), None if y is None else float(y.sum()), scale))
            return (x if y is None else x + y) * scale

    m = Add()
    h1 = m.register_forward_pre_hook(lambda mod, args: log.append(("pre1", len(args))))
    m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))  # replaces the args
    m.register_forward_pre_hook(
        lambda mod, args, kwargs: log.append(("pre-kw", sorted(kwargs))), with_kwargs=True
    )
    m.register_forward_pre_hook(lambda mod, args: log.append(("first",)), prepend=True)
    m.register_forward_hook(lambda mod, args, out: log.append(("post", float(out.sum()))))
    m.register_forward_hook(
        lambda mod, args, kwargs, out: out + kwargs.get("scale", 0), with_kwargs=True
    )
    m.register_forward_hook(lambda mod, args, out: log.append(("post-first",)), prepend=True)
    out = m(T.ones(2), scale=3.0)
    log.append(("result", float(out.sum())))
    h1.remove()
    with m.register_forward_pre_hook(lambda mod, args: args[0] + 1):
        log.append(("in-with", float(m(T.ones(2)).sum())))
    log.append(("after-with", float(m(T.ones(2)).sum())))

    def kw_pre(mod, args, kwargs):
        return (args[0] * 0, T.ones(2)), {"scale": 10.0}

    m.register_forward_pre_hook(kw_pre, with_kwargs=True)
    log.append(("kw-replaced", float(m(T.ones(2)).sum())))
    return log


def test_forward_hooks_match_torch() -> None:
    assert forward_log("ember") == forward_log("torch")


@pytest.mark.parametrize("name", ["ember", "torch"])
def test_single_value_from_pre_hook_is_wrapped(name: str) -> None:
    N, T = libs(name)
    m = N.Identity()
    m.register_forward_pre_hook(lambda mod, args: T.zeros(1))  # not a tuple
    assert float(m(T.ones(1))) == 0.0


def test_bad_kwargs_pre_hook_result() -> None:
    for name in ("ember", "torch"):
        N, T = libs(name)
        m = N.Identity()
        m.register_forward_pre_hook(lambda mod, a, k: 3, with_kwargs=True)
        with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple "
                                               "of \\(new_args, new_kwargs\\), but got 3"):
            m(T.ones(1))


def always_call_log(name: str) -> list:
    N, T = libs(name)
    log = []

    class Boom(N.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    m.register_forward_hook(lambda mod, args, out: log.append(("plain", out)))
    m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)
    m.register_forward_hook(
        lambda mod, args, kwargs, out: log.append(("always-kw", out)),
        with_kwargs=True,
        always_call=True,
    )
    with pytest.raises(ValueError, match="boom"):
        m(T.ones(1))

    def failing(mod, args, out):
        raise KeyError("hook")

    m.register_forward_hook(failing, always_call=True)
    with pytest.warns(UserWarning, match="always_call=True.*raised an exception"):
        with pytest.raises(ValueError, match="boom"):
            m(T.ones(1))
    return log


def test_always_call_matches_torch() -> None:
    assert always_call_log("ember") == always_call_log("torch")


def test_handles() -> None:
    m = nn.Linear(1, 1)
    h = m.register_forward_hook(lambda *a: None, with_kwargs=True, always_call=True)
    assert isinstance(h, RemovableHandle)
    assert h.id in m._forward_hooks and h.id in m._forward_hooks_with_kwargs
    assert h.id in m._forward_hooks_always_called
    h.remove()
    assert not m._forward_hooks and not m._forward_hooks_with_kwargs
    assert not m._forward_hooks_always_called
    h.remove()  # twice is fine
    h2 = m.register_forward_pre_hook(lambda *a: None)
    assert h2.id > h.id


# ----------------------------------------------------------------------------- backward


class TwoIn(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)

    def forward(self, x, scale, y):
        return self.lin(x) * scale + y, y * 2


class TTwoIn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)

    def forward(self, x, scale, y):
        return self.lin(x) * scale + y, y * 2


def _grads(gs):
    return [None if g is None else np_of(g) for g in gs]


def backward_log(name: str, seed_module, *, replace_in=False, replace_out=False,
                 y_requires_grad=True, x_requires_grad=True):
    if name == "ember":
        m = seed_module
    else:
        m = TTwoIn().double()
        copy_state(seed_module, m)
    rng = np.random.default_rng(0)
    xe, xt = pair(rng.standard_normal((4, 3)), requires_grad=x_requires_grad)
    ye, yt = pair(rng.standard_normal((4, 2)), requires_grad=y_requires_grad)
    x, y = (xe, ye) if name == "ember" else (xt, yt)
    log = []

    def pre(mod, grad_output):
        log.append(("pre", _grads(grad_output)))
        if replace_out:
            return tuple(None if g is None else g * 10 for g in grad_output)
        return None

    def hook(mod, grad_input, grad_output):
        log.append(("hook", _grads(grad_input), _grads(grad_output)))
        if replace_in:
            return tuple(None if g is None else g * -1 for g in grad_input)
        return None

    m.register_full_backward_pre_hook(pre)
    m.register_full_backward_hook(hook)
    a, b = m(x, 0.5, y)
    (a.square().sum() + b.sum()).backward()
    log.append(("x.grad", None if x.grad is None else np_of(x.grad)))
    log.append(("y.grad", None if y.grad is None else np_of(y.grad)))
    log.append(("w.grad", np_of(m.lin.weight.grad)))
    return log


def _assert_logs_equal(ours, theirs) -> None:
    assert len(ours) == len(theirs), (ours, theirs)

    def same(a, b, where):
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=where)
        elif isinstance(a, (list, tuple)):
            assert len(a) == len(b), where
            for i, (u, v) in enumerate(zip(a, b)):
                same(u, v, f"{where}[{i}]")
        else:
            assert a == b, where

    for i, (a, b) in enumerate(zip(ours, theirs)):
        same(a, b, f"event {i} {a[0]}")


@pytest.mark.parametrize(
    "options",
    [{}, {"replace_in": True}, {"replace_out": True}, {"replace_in": True, "replace_out": True},
     {"y_requires_grad": False}, {"x_requires_grad": False}],
    ids=["observe", "replace-grad-input", "replace-grad-output", "replace-both", "y-no-grad",
         "x-no-grad"],
)
def test_full_backward_hooks_match_torch(options) -> None:
    seed = TwoIn().double()
    _assert_logs_equal(backward_log("ember", seed, **options),
                       backward_log("torch", seed, **options))


def test_backward_hook_fires_once_per_backward_and_removes() -> None:
    lin = nn.Linear(2, 2)
    calls = []
    h = lin.register_full_backward_hook(lambda m, gi, go: calls.append(1))
    x = et.ones(3, 2, requires_grad=True)
    lin(x).sum().backward()
    lin(x).sum().backward()
    assert len(calls) == 2
    h.remove()
    lin(x).sum().backward()
    assert len(calls) == 2
    with lin.register_full_backward_pre_hook(lambda m, go: calls.append("pre")):
        lin(x).sum().backward()
    assert calls[-1] == "pre"
    lin(x).sum().backward()
    assert calls[-1] == "pre" and len(calls) == 3


@pytest.mark.parametrize("name", ["ember", "torch"])
def test_backward_hook_when_no_input_requires_grad(name: str) -> None:
    N, T = libs(name)
    lin = N.Linear(2, 2)
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, len(go))))
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are "
                                         "computed with respect to module outputs"):
        lin(T.ones(3, 2)).sum().backward()
    assert seen == [((None,), 1)]
    lin.register_full_backward_hook(lambda m, gi, go: (T.ones(1),))
    with pytest.warns(UserWarning, match="Full backward hook is firing"):
        with pytest.raises(RuntimeError, match="should always return None or None for all"):
            lin(T.ones(3, 2)).sum().backward()


def test_backward_hook_wrong_number_of_gradients() -> None:
    for name in ("ember", "torch"):
        N, T = libs(name)
        lin = N.Linear(2, 2)
        lin.register_full_backward_hook(lambda m, gi, go: (None, None))
        with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of "
                                               "grad_input, got 2, but expected 1"):
            lin(T.ones(3, 2, requires_grad=True)).sum().backward()
        lin2 = N.Linear(2, 2)
        lin2.register_full_backward_pre_hook(lambda m, go: (None, None))
        with pytest.raises(RuntimeError, match="Backward pre hook returned an invalid number of "
                                               "grad_output, got 2, but expected 1"):
            lin2(T.ones(3, 2, requires_grad=True)).sum().backward()


def test_backward_hooks_are_inactive_under_no_grad() -> None:
    lin = nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda m, gi, go: pytest.fail("must not run"))
    import ember_autograd

    with ember_autograd.no_grad():
        out = lin(et.ones(1, 2, requires_grad=True))
    assert not out.requires_grad


def test_backward_hook_with_non_tensor_output_warns() -> None:
    class Dict(nn.Module):
        def forward(self, x):
            return {"x": x}

    m = Dict()
    m.register_full_backward_hook(lambda *a: None)
    with pytest.warns(UserWarning, match="module output should be a Tensor or a tuple"):
        m(et.ones(1, requires_grad=True))
