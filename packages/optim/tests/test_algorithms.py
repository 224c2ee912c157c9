"""Every algorithm against PyTorch 2.13: the same parameters and gradients, many steps, every
option combination that changes the update, float32 and float64, per-tensor and foreach
paths; parameters and state agree to a few ulps per step."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import ember_optim
import ember_tensor as et
from optim_testing import DTYPES, SHAPES, Pair, assert_close, ember_from, np_of, torch_from

STEPS = 60

# (optimizer, constructor arguments): each row changes which update rule runs
CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.5, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.6), eps=1e-3)),
    ("Adam", dict(lr=0.01, betas=(0.7, 0.9), decoupled_weight_decay=True, weight_decay=0.3)),
    ("Adam", dict(lr=0.01, capturable=False)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.2, amsgrad=True)),
    ("AdamW", dict(lr=0.01, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, maximize=True, betas=(0.5, 0.9))),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01, maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.01, betas=(0.9, 0.5))),  # rho_t never exceeds 5: no rectification
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, maximize=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.05, lr_decay=0.01, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.05, initial_accumulator_value=0.5, eps=1e-6, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.5, weight_decay=0.1)),
    ("Adadelta", dict(lr=0.5, eps=1e-4, maximize=True)),
]


def case_id(case) -> str:
    name, kwargs = case
    return name + ("(" + ",".join(f"{k}={v}" for k, v in kwargs.items()) + ")" if kwargs else "")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("foreach", [None, True], ids=["single", "foreach"])
@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_matches_torch(case, foreach, dtype) -> None:
    name, kwargs = case
    pair = Pair(name, kwargs, dtype, ember_kwargs={"foreach": foreach})
    pair.step(STEPS)
    pair.assert_params_close(case_id(case))
    pair.assert_state_close(case_id(case))


@pytest.mark.parametrize("case", CASES[::3], ids=[case_id(c) for c in CASES[::3]])
def test_many_steps_and_missing_grads(case) -> None:
    """300 steps; every few steps one parameter has no gradient and is skipped (its step
    counter stays behind)."""
    name, kwargs = case
    pair = Pair(name, kwargs, "float64", seed=1)
    pair.step(300, skip_every=3)
    pair.assert_params_close(case_id(case))
    pair.assert_state_close(case_id(case))


@pytest.mark.parametrize("foreach", [None, True], ids=["single", "foreach"])
@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad", "NAdam"])
def test_parameter_groups_with_their_own_options(name, foreach) -> None:
    extra = {"SGD": {"momentum": 0.9}, "RMSprop": {"momentum": 0.5}}.get(name, {})
    groups = [((0, 2), {"lr": 0.03}), ((1,), {"lr": 0.001, "weight_decay": 0.5}),
              ((3,), {})]
    pair = Pair(name, dict(lr=0.01, **extra), "float32", groups=groups,
                ember_kwargs={"foreach": foreach})
    pair.step(40)
    pair.assert_params_close(name)
    assert [g["lr"] for g in pair.ember.param_groups] == [0.03, 0.001, 0.01]


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam",
                                  "RMSprop", "Adagrad", "Adadelta"])
def test_foreach_equals_single_tensor_bit_for_bit(name) -> None:
    """The multi-tensor path computes the same thing in the same order per element."""
    rng = np.random.default_rng(3)
    init = [rng.standard_normal(s).astype("float32") for s in SHAPES]
    init.append(rng.standard_normal(6))  # a float64 parameter: its own dtype group
    runs = []
    for foreach in (False, True):
        params = [ember_from(a) for a in init]
        opt = getattr(ember_optim, name)(params, foreach=foreach)
        g_rng = np.random.default_rng(4)
        for _ in range(20):
            for p in params:
                p.grad = ember_from(g_rng.standard_normal(tuple(p.shape)).astype(
                    "float32" if p.dtype == et.float32 else "float64"))
            opt.step()
        runs.append([np_of(p) for p in params])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_sgd_is_exact() -> None:
    """SGD's update is plain adds and multiplies: bit for bit PyTorch's."""
    pair = Pair("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
                "float32")
    pair.step(100)
    for e, t in zip(pair.ember_params, pair.torch_params):
        np.testing.assert_array_equal(np_of(e), np_of(t))


def test_default_hyperparameters_match_torch() -> None:
    for name in ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad",
                 "Adadelta", "LBFGS"]:
        e = getattr(ember_optim, name)([et.zeros(2)])
        t = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)])
        eg = {k: v for k, v in e.param_groups[0].items() if k != "params"}
        tg = {k: v for k, v in t.param_groups[0].items() if k != "params"}
        assert eg == tg, name
        assert list(eg) == list(tg), name  # the same order: state_dicts and reprs agree
        assert e.defaults == t.defaults, name


def test_tensor_lr() -> None:
    pair = Pair("Adam", dict(lr=0.01), "float32")
    pair.ember.param_groups[0]["lr"] = et.tensor(0.01)
    pair.torch.param_groups[0]["lr"] = torch.tensor(0.01)
    pair.step(10)
    pair.assert_params_close("tensor lr")
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        ember_optim.SGD([et.zeros(1)], lr=et.ones(2))


def test_step_counter_is_a_float32_tensor() -> None:
    p = et.zeros(3)
    opt = ember_optim.Adam([p])
    p.grad = et.ones(3)
    opt.step()
    step = opt.state[p]["step"]
    assert isinstance(step, et.Tensor) and step.dtype == et.float32 and step.dim() == 0
    assert step.item() == 1.0
    sgd = ember_optim.SGD([p], momentum=0.9)
    sgd.step()
    assert set(sgd.state[p]) == {"momentum_buffer"}


def test_zero_gradient_still_steps_but_none_skips() -> None:
    p, q = et.ones(2), et.ones(2)
    opt = ember_optim.SGD([p, q], lr=0.1, weight_decay=1.0)
    p.grad = et.zeros(2)
    opt.step()
    assert p.tolist() == pytest.approx([0.9, 0.9]) and q.tolist() == [1.0, 1.0]
    assert q not in opt.state


# --------------------------------------------------------------------------------- Lion


def lion_reference(params, grads_seq, lr, betas, weight_decay, maximize=False):
    """The paper's update in float64 NumPy."""
    params = [p.astype("float64").copy() for p in params]
    ms = [np.zeros_like(p) for p in params]
    for grads in grads_seq:
        for p, m, g in zip(params, ms, grads):
            g = -g if maximize else g
            c = betas[0] * m + (1 - betas[0]) * g
            p *= 1 - lr * weight_decay
            p -= lr * np.sign(c)
            m *= betas[1]
            m += (1 - betas[1]) * g
    return params, ms


@pytest.mark.parametrize("foreach", [None, True], ids=["single", "foreach"])
@pytest.mark.parametrize("kwargs", [dict(), dict(lr=1e-3, weight_decay=0.1),
                                    dict(betas=(0.5, 0.9), maximize=True)])
def test_lion_matches_the_paper(kwargs, foreach) -> None:
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s) for s in SHAPES]
    grads_seq = [[rng.standard_normal(s) for s in SHAPES] for _ in range(50)]
    params = [ember_from(a) for a in init]
    opt = ember_optim.Lion(params, foreach=foreach, **kwargs)
    for grads in grads_seq:
        for p, g in zip(params, grads):
            p.grad = ember_from(g)
        opt.step()
    full = dict(lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0, maximize=False)
    full.update(kwargs)
    want, ms = lion_reference(init, grads_seq, **full)
    for p, w, m in zip(params, want, ms):
        np.testing.assert_allclose(np_of(p), w, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(np_of(opt.state[p]["exp_avg"]), m, rtol=1e-12, atol=1e-14)


def test_lion_defaults_and_errors() -> None:
    opt = ember_optim.Lion([et.zeros(1)])
    assert opt.defaults["lr"] == 1e-4 and opt.defaults["betas"] == (0.9, 0.99)
    assert opt.defaults["weight_decay"] == 0.0
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        ember_optim.Lion([et.zeros(1)], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        ember_optim.Lion([et.zeros(1)], betas=(0.9, 1.0))
    with pytest.raises(NotImplementedError, match="fused=True is not available yet for Lion"):
        ember_optim.Lion([et.zeros(1)], fused=True)


def test_lion_trains_a_least_squares_fit() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((32, 4))
    x_true = np.array([1.0, -2.0, 0.5, 3.0])
    b = a @ x_true
    x = ember_from(np.zeros(4))
    opt = ember_optim.Lion([x], lr=0.01)
    for _ in range(600):
        x.grad = ember_from(a.T @ (a @ np_of(x) - b) / len(b))
        opt.step()
    assert np.abs(np_of(x) - x_true).max() < 0.05


def test_losses_converge_like_torch() -> None:
    """A least-squares problem trained by every optimizer: ember's loss curve follows
    torch's (gradients computed from each library's own parameters)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((40, 6))
    b = rng.standard_normal(40)
    for name, kwargs in [("SGD", dict(lr=0.05, momentum=0.9)), ("Adam", dict(lr=0.05)),
                         ("RMSprop", dict(lr=0.01)), ("NAdam", dict(lr=0.05)),
                         ("Adagrad", dict(lr=0.5))]:
        x_e, x_t = ember_from(np.zeros(6)), torch_from(np.zeros(6)).requires_grad_()
        oe = getattr(ember_optim, name)([x_e], **kwargs)
        ot = getattr(torch.optim, name)([x_t], **kwargs)
        for _ in range(100):
            x_e.grad = ember_from(a.T @ (a @ np_of(x_e) - b))
            x_t.grad = torch_from(a.T @ (a @ np_of(x_t) - b))
            oe.step()
            ot.step()
        assert_close(x_e, x_t, "float64", name, scale=100)
        assert math.isfinite(float(np.sum(np_of(x_e))))


# ------------------------------------------------------------------- the foreach path


def _grads_for(params, rng):
    for p in params:
        dtype = "float32" if p.dtype == et.float32 else "float64"
        p.grad = ember_from(rng.standard_normal(tuple(p.shape)).astype(dtype))


@pytest.mark.parametrize("name", ["SGD", "Adam", "NAdam", "RMSprop", "Lion"])
def test_foreach_with_missing_grads_and_large_tensors(name) -> None:
    """Parameters that skip steps (their step counters fall behind: those steps take the
    per-tensor path), a tensor large enough for the per-tensor path, two dtypes: still bit
    for bit the per-tensor result."""
    kwargs = {"SGD": {"momentum": 0.9, "lr": 0.01}, "RMSprop": {"centered": True,
                                                                "momentum": 0.5}}.get(name, {})
    rng = np.random.default_rng(5)
    shapes = [(3, 4), (7,), (300, 300), (), (2, 2, 2)]
    init = [rng.standard_normal(s).astype("float32") for s in shapes] + [
        rng.standard_normal(5)]
    runs = []
    for foreach in (False, True):
        params = [ember_from(a) for a in init]
        opt = getattr(ember_optim, name)(params, foreach=foreach, **kwargs)
        g_rng = np.random.default_rng(6)
        for k in range(12):
            _grads_for(params, g_rng)
            if k in (3, 4, 8):
                params[k % 3].grad = None
            opt.step()
        runs.append(([np_of(p) for p in params], opt))
    for a, b in zip(runs[0][0], runs[1][0]):
        np.testing.assert_array_equal(a, b)
    single, multi = runs[0][1], runs[1][1]
    for p_s, p_m in zip(single.param_groups[0]["params"], multi.param_groups[0]["params"]):
        for key, value in single.state[p_s].items():
            other = multi.state[p_m][key]
            assert tuple(other.shape) == tuple(value.shape), key
            np.testing.assert_array_equal(np_of(other), np_of(value))


def test_foreach_state_lives_in_flat_buffers() -> None:
    params = [et.ones(3), et.ones(2, 2), et.ones(())]
    opt = ember_optim.Adam(params, foreach=True)
    for p in params:
        p.grad = et.full_like(p, 0.5)
    opt.step()
    avgs = [opt.state[p]["exp_avg"] for p in params]
    base = avgs[0]._base
    assert base is not None and all(a._base is base for a in avgs)
    assert base.numel() == 8 and [tuple(a.shape) for a in avgs] == [(3,), (2, 2), ()]
    steps = [opt.state[p]["step"] for p in params]
    assert all(s.dim() == 0 and s.item() == 1.0 for s in steps)
    # a state replaced from outside (a loaded state_dict) is taken in again
    sd = opt.state_dict()
    sd["state"][1]["exp_avg"] = sd["state"][1]["exp_avg"].clone()
    opt.load_state_dict(sd)
    opt.step()
    assert opt.state[params[1]]["exp_avg"]._base is opt.state[params[0]]["exp_avg"]._base
    ref = [et.ones(3), et.ones(2, 2), et.ones(())]
    ref_opt = ember_optim.Adam(ref)
    for _ in range(2):
        for p in ref:
            p.grad = et.full_like(p, 0.5)
        ref_opt.step()
    for a, b in zip(params, ref):
        np.testing.assert_array_equal(np_of(a), np_of(b))


def test_functional_foreach_updates_the_callers_tensors() -> None:
    """Called directly, the functional form leaves the caller's state tensors updated
    (the lists' entries may become views of a flat buffer)."""
    from ember_optim.adam import adam

    params = [et.ones(2), et.ones(3)]
    grads = [et.full_like(p, 0.5) for p in params]
    exp_avgs = [et.zeros_like(p) for p in params]
    exp_avg_sqs = [et.zeros_like(p) for p in params]
    steps = [et.tensor(0.0), et.tensor(0.0)]
    originals = list(exp_avgs) + list(steps)
    adam(params, grads, exp_avgs, exp_avg_sqs, [], steps, foreach=True, amsgrad=False,
         beta1=0.9, beta2=0.999, lr=0.1, weight_decay=0.0, eps=1e-8, maximize=False)
    assert all(t.tolist() == pytest.approx([0.05] * t.numel()) for t in originals[:2])
    assert all(t.item() == 1.0 for t in originals[2:])
    assert exp_avgs[0]._base is exp_avgs[1]._base


def test_zero_grad_of_a_gradient_with_history() -> None:
    import ember_autograd

    w = et.ones(2, requires_grad=True)
    (g,) = ember_autograd.grad((w * w).sum(), [w], create_graph=True)
    w.grad = g
    assert w.grad.grad_fn is not None
    opt = ember_optim.SGD([w], lr=0.1)
    opt.zero_grad(set_to_none=False)
    assert w.grad.grad_fn is None and w.grad.tolist() == [0.0, 0.0]
