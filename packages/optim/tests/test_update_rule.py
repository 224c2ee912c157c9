"""Optimizers as update rules: an algorithm gives its options, ``_init_state`` and
``_update`` for one parameter; the base owns the checks, the step loop, ``maximize``, weight
decay, the state and the per-tensor / foreach / fused paths. A rule written here (signSGD
with momentum) gets all of it; the library's functional forms are generated from the same
rules."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import ember_optim
import ember_tensor as et
from ember_optim import _common
from optim_testing import SHAPES, ember_from, np_of


class SignMomentum(ember_optim.Optimizer):
    """m = beta * m + g; p = p - lr * sign(m)."""

    _checks = ("lr", "weight_decay")
    _state_keys = ("momentum", "step")
    _scalar_state = ("step",)

    def __init__(self, params, lr=0.01, beta=0.9, weight_decay=0.0, *, maximize=False,
                 foreach=None, decoupled_weight_decay=False):
        super().__init__(params, {"lr": lr, "beta": beta, "weight_decay": weight_decay,
                                  "maximize": maximize, "foreach": foreach,
                                  "decoupled_weight_decay": decoupled_weight_decay})

    def _init_state(self, state, param, group):
        state["step"] = _common.new_step()
        state["momentum"] = et.zeros_like(param)

    @staticmethod
    def _update(param, grad, state, h):
        state["step"].add_(1)
        state["momentum"].mul_(h.beta).add_(grad)
        param.add_(state["momentum"].sign(), alpha=-h.lr)


def sign_momentum_reference(init, grads_seq, lr=0.01, beta=0.9, weight_decay=0.0,
                            maximize=False, decoupled=False):
    params = [a.copy() for a in init]
    ms = [np.zeros_like(a) for a in init]
    for grads in grads_seq:
        for p, m, g in zip(params, ms, grads):
            g = -g if maximize else g
            if decoupled:
                p *= 1 - lr * weight_decay
            else:
                g = g + weight_decay * p
            m *= beta
            m += g
            p -= lr * np.sign(m)
    return params


@pytest.mark.parametrize("foreach", [None, True], ids=["single", "foreach"])
@pytest.mark.parametrize("kwargs", [{}, dict(weight_decay=0.1, maximize=True),
                                    dict(weight_decay=0.1, decoupled_weight_decay=True)])
def test_a_rule_gets_the_step_loop_and_both_paths(kwargs, foreach) -> None:
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s) for s in SHAPES]
    grads_seq = [[rng.standard_normal(s) for s in SHAPES] for _ in range(20)]
    params = [ember_from(a) for a in init]
    extra = ember_from(np.ones(3))  # never has a gradient: skipped, no state
    opt = SignMomentum([*params, extra], foreach=foreach, **kwargs)
    for grads in grads_seq:
        for p, g in zip(params, grads):
            p.grad = ember_from(g)
        opt.step()
    want = sign_momentum_reference(init, grads_seq, **{
        "decoupled" if k == "decoupled_weight_decay" else k: v for k, v in kwargs.items()})
    for p, w in zip(params, want):
        np.testing.assert_allclose(np_of(p), w, rtol=1e-12, atol=1e-12)
    assert extra not in opt.state and np_of(extra).tolist() == [1.0, 1.0, 1.0]
    assert all(float(opt.state[p]["step"]) == 20.0 for p in params)
    sd = opt.state_dict()
    assert sorted(sd["state"][0]) == ["momentum", "step"]
    if foreach:  # the small tensors' state became views of one buffer
        assert opt.state[params[0]]["momentum"]._base is opt.state[params[1]]["momentum"]._base


def test_the_base_checks_a_rules_options() -> None:
    with pytest.raises(ValueError, match=r"^Invalid learning rate: -1$"):
        SignMomentum([et.zeros(1)], lr=-1)
    with pytest.raises(ValueError, match=r"^Invalid weight_decay value: -0.5$"):
        SignMomentum([et.zeros(1)], weight_decay=-0.5)
    p = et.zeros(1)
    p.grad = et.ones(1)
    opt = SignMomentum([p])
    opt.param_groups[0]["fused"] = True  # no kernel registered for this rule
    with pytest.raises(NotImplementedError, match="fused=True is not available yet for "
                                                  "SignMomentum"):
        opt.step()


def test_state_a_rule_does_not_declare_is_an_error() -> None:
    class Undeclared(SignMomentum):
        def _init_state(self, state, param, group):
            super()._init_state(state, param, group)
            state["extra"] = et.zeros_like(param)

    p = et.zeros(2)
    p.grad = et.ones(2)
    with pytest.raises(RuntimeError, match=r"created state \['extra'\] that _state_keys"):
        Undeclared([p]).step()


def test_a_group_without_state_records_none() -> None:
    """SGD without momentum keeps no state (PyTorch's state_dict), and its rule sees a
    read-only one."""
    p = et.zeros(2)
    p.grad = et.ones(2)
    opt = ember_optim.SGD([p], lr=0.1, foreach=False)
    opt.step()
    assert dict(opt.state) == {} and opt.state_dict()["state"] == {}


def test_a_subclass_with_its_own_step_is_left_alone() -> None:
    """Without an update rule, the base neither checks the options (PyTorch's base does
    not) nor steps."""

    class Bare(ember_optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": -1.0, "differentiable": True})

    opt = Bare([et.zeros(1)])
    with pytest.raises(NotImplementedError, match="Bare defines neither step"):
        opt.step()


FUNCTIONAL = [
    ("SGD", "sgd", "sgd", dict(lr=0.1, momentum=0.9, weight_decay=0.1)),
    ("Adam", "adam", "adam", dict(lr=0.01, amsgrad=True, maximize=True)),
    ("AdamW", "adam", "adamw", dict(lr=0.01)),
    ("Adamax", "adamax", "adamax", {}),
    ("Adadelta", "adadelta", "adadelta", dict(weight_decay=0.1)),
    ("Adagrad", "adagrad", "adagrad", dict(lr_decay=0.01)),
    ("NAdam", "nadam", "nadam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", "radam", "radam", {}),
    ("RMSprop", "rmsprop", "rmsprop", dict(centered=True, momentum=0.5)),
    ("Lion", "lion", "lion", dict(weight_decay=0.1)),
]


@pytest.mark.parametrize("foreach", [False, True, None], ids=["single", "foreach", "default"])
@pytest.mark.parametrize(("name", "module", "function", "kwargs"), FUNCTIONAL,
                         ids=[f[0] for f in FUNCTIONAL])
def test_functional_forms_equal_the_optimizers(name, module, function, kwargs,
                                               foreach) -> None:
    """``adam(params, grads, exp_avgs, ...)`` and the rest: lists in ``_state_keys``
    order, ``None`` entries filled with new state; bit for bit the optimizer."""
    cls = getattr(ember_optim, name)
    functional = getattr(importlib.import_module(f"ember_optim.{module}"), function)
    rng = np.random.default_rng(1)
    init = [rng.standard_normal(s).astype("float32") for s in SHAPES]
    grads_seq = [[rng.standard_normal(s).astype("float32") for s in SHAPES] for _ in range(5)]
    params = [ember_from(a) for a in init]
    opt = cls(params, foreach=foreach, **kwargs)
    ours = [ember_from(a) for a in init]
    group = opt.param_groups[0]
    hyper = opt._hyper(group)
    keys = _common.active_state(cls, hyper)
    states = [{} for _ in ours]
    for state, p in zip(states, ours):
        opt._init_state(state, p, group)
    lists = [[s.get(k) for s in states] if k in keys else [] for k in cls._state_keys]
    for grads in grads_seq:
        for p, g in zip(params, grads):
            p.grad = ember_from(g)
        opt.step()
        functional(ours, [ember_from(g) for g in grads], *lists, foreach=foreach, **hyper)
    for a, b in zip(params, ours):
        np.testing.assert_array_equal(np_of(a), np_of(b))
    for lst, key in zip(lists, cls._state_keys):
        for p, value in zip(params, lst):
            np.testing.assert_array_equal(np_of(opt.state[p][key]), np_of(value))
    with pytest.raises(TypeError, match=f"{function}\\(\\) takes {len(cls._state_keys)} "
                                        "state lists"):
        functional(ours, [et.zeros_like(p) for p in ours], foreach=foreach, **hyper)
