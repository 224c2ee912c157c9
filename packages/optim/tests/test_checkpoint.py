"""Checkpointing through ``ember_tensor.save``/``load`` (``ember.save``/``ember.load``):
train N steps, save the parameters and the optimizer's (and a scheduler's) state, load
them into fresh objects, train M more steps; the parameters equal an uninterrupted run of
N + M steps bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import ember_optim
import ember_tensor as et
from ember_optim import lr_scheduler
from optim_testing import ember_from, np_of

SHAPES = ((6, 5), (5,), (3, 2, 2), ())
N, M = 7, 9

CASES = [
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, foreach=True)),
    ("NAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
    ("Adagrad", dict(lr=0.1)),
    ("Adadelta", dict()),
    ("Adamax", dict()),
    ("Lion", dict(lr=1e-3, weight_decay=0.1)),
]


def gradients(dtype: str):
    rng = np.random.default_rng(7)
    return [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(N + M)]


def train(params, opt, sched, grads) -> None:
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = ember_from(g)
        opt.step()
        if sched is not None:
            sched.step()


def build(name, kwargs, init, with_scheduler: bool):
    params = [ember_from(a) for a in init]
    opt = getattr(ember_optim, name)(params, **kwargs)
    sched = lr_scheduler.StepLR(opt, step_size=4, gamma=0.5) if with_scheduler else None
    return params, opt, sched


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}{k}" for n, k in CASES])
def test_resume_from_a_checkpoint_is_bit_for_bit(name, kwargs, dtype, tmp_path) -> None:
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = gradients(dtype)

    # uninterrupted: N + M steps
    ref_params, ref_opt, ref_sched = build(name, kwargs, init, with_scheduler=True)
    train(ref_params, ref_opt, ref_sched, grads)

    # N steps, checkpoint, fresh objects, M steps
    params, opt, sched = build(name, kwargs, init, with_scheduler=True)
    train(params, opt, sched, grads[:N])
    path = tmp_path / "checkpoint.safetensors"
    et.save({"params": params, "optimizer": opt.state_dict(),
             "last_epoch": sched.last_epoch}, path)
    del params, opt, sched

    checkpoint = et.load(path)
    fresh = [ember_from(np.zeros(s, dtype=dtype)) for s in SHAPES]  # other values entirely
    params, opt, sched = build(name, kwargs, [np_of(p) for p in fresh], with_scheduler=True)
    for p, saved in zip(params, checkpoint["params"]):
        p.copy_(saved)
    opt.load_state_dict(checkpoint["optimizer"])
    sched.last_epoch = checkpoint["last_epoch"]
    train(params, opt, sched, grads[N:])

    if name == "NAdam" and dtype == "float64":
        # as in PyTorch, loading casts every state tensor but ``step`` to the parameter's
        # dtype: NAdam's float32 ``mu_product`` continues in float64 after a resume
        assert opt.state[params[0]]["mu_product"].dtype == et.float64
        for p, ref in zip(params, ref_params):
            np.testing.assert_allclose(np_of(p), np_of(ref), rtol=1e-7, atol=1e-9)
        return
    for i, (p, ref) in enumerate(zip(params, ref_params)):
        np.testing.assert_array_equal(np_of(p), np_of(ref), err_msg=f"param {i}")
    assert opt.param_groups[0]["lr"] == ref_opt.param_groups[0]["lr"]


def test_checkpoint_layout(tmp_path) -> None:
    """The state_dict survives the file: ids as int keys, tuples, None, the step tensor."""
    params = [et.ones(2, 3), et.ones(4)]
    opt = ember_optim.Adam(params, lr=0.01)
    for p in params:
        p.grad = et.ones_like(p)
    opt.step()
    path = tmp_path / "optim.safetensors"
    et.save(opt.state_dict(), path)
    loaded = et.load(path)
    sd = opt.state_dict()
    assert loaded["param_groups"] == sd["param_groups"]
    assert list(loaded["state"]) == [0, 1]
    for pid in (0, 1):
        for key in ("step", "exp_avg", "exp_avg_sq"):
            a, b = loaded["state"][pid][key], sd["state"][pid][key]
            assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
            np.testing.assert_array_equal(np_of(a), np_of(b))


@pytest.mark.parametrize("make", [
    lambda o: lr_scheduler.MultiStepLR(o, milestones=[3, 5, 5]),
    lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=20),
    lambda o: lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=3),
    lambda o: lr_scheduler.SequentialLR(o, [lr_scheduler.ConstantLR(o, total_iters=2),
                                            lr_scheduler.ExponentialLR(o, 0.9)], [4]),
    lambda o: lr_scheduler.ReduceLROnPlateau(o, patience=1),
], ids=["MultiStepLR", "OneCycleLR", "CyclicLR", "SequentialLR", "ReduceLROnPlateau"])
def test_scheduler_state_through_a_file(make, tmp_path) -> None:
    def fresh():
        opt = ember_optim.SGD([et.zeros(1)], lr=0.1, momentum=0.9)
        return opt, make(opt)

    def advance(opt, sched, n, start=0):
        for k in range(start, start + n):
            opt.step()
            if isinstance(sched, lr_scheduler.ReduceLROnPlateau):
                sched.step(1.0 if k % 3 else 2.0)
            else:
                sched.step()

    opt, sched = fresh()
    advance(opt, sched, 6)
    path = tmp_path / "sched.safetensors"
    et.save({"sched": sched.state_dict(), "optim": opt.state_dict()}, path)
    advance(opt, sched, 6, start=6)

    opt2, sched2 = fresh()
    checkpoint = et.load(path)
    opt2.load_state_dict(checkpoint["optim"])
    sched2.load_state_dict(checkpoint["sched"])
    advance(opt2, sched2, 6, start=6)
    assert sched2.get_last_lr() == sched.get_last_lr()
    assert opt2.param_groups[0]["momentum"] == opt.param_groups[0]["momentum"]


def test_lbfgs_state_through_a_file(tmp_path) -> None:
    from test_lbfgs import make_closure

    x0 = np.array([-1.2, 1.0, 0.4])
    ref = ember_from(x0)
    ref_opt = ember_optim.LBFGS([ref], history_size=4, max_iter=4)
    for _ in range(4):
        ref_opt.step(make_closure([ref], "ember", "float64", []))

    x = ember_from(x0)
    opt = ember_optim.LBFGS([x], history_size=4, max_iter=4)
    for _ in range(2):
        opt.step(make_closure([x], "ember", "float64", []))
    path = tmp_path / "lbfgs.safetensors"
    et.save({"x": x, "optim": opt.state_dict()}, path)
    checkpoint = et.load(path)
    y = ember_from(np.zeros(3))
    y.copy_(checkpoint["x"])
    fresh = ember_optim.LBFGS([y], history_size=4, max_iter=4)
    fresh.load_state_dict(checkpoint["optim"])
    for _ in range(2):
        fresh.step(make_closure([y], "ember", "float64", []))
    np.testing.assert_array_equal(np_of(y), np_of(ref))
