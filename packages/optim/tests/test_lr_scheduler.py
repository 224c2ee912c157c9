"""The learning-rate schedulers against PyTorch 2.13: the sequences of learning rates (and
momenta) over many steps are identical, as are warnings, errors and state_dict behaviour."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

import ember_optim
import ember_tensor as et
from ember_optim import lr_scheduler as elrs

tlrs = torch.optim.lr_scheduler


def optimizers(name: str = "SGD", groups: int = 2, **kwargs):
    """The same optimizer (``groups`` parameter groups with different lrs) in both
    libraries."""
    kwargs.setdefault("lr", 0.1)
    if name == "SGD":
        kwargs.setdefault("momentum", 0.9)
    e_groups = [{"params": [et.zeros(2)], "lr": kwargs["lr"] * (i + 1)} for i in range(groups)]
    t_groups = [{"params": [torch.zeros(2, requires_grad=True)], "lr": kwargs["lr"] * (i + 1)}
                for i in range(groups)]
    return (getattr(ember_optim, name)(e_groups, **kwargs),
            getattr(torch.optim, name)(t_groups, **kwargs))


def run(make, steps: int, name: str = "SGD", metric=None, **opt_kwargs):
    """Builds the scheduler with ``make(lr_scheduler_module, optimizer)`` in both libraries
    and steps both ``steps`` times: returns the two histories of (lrs, momenta)."""
    eo, to = optimizers(name, **opt_kwargs)
    es, ts = make(elrs, eo), make(tlrs, to)
    histories = []
    for opt, sched in ((eo, es), (to, ts)):
        history = [(list(sched.get_last_lr()), momenta(opt))]
        for k in range(steps):
            opt.step()
            if metric is None:
                sched.step()
            else:
                sched.step(metric(k))
            history.append((list(sched.get_last_lr()), momenta(opt)))
            assert [g["lr"] for g in opt.param_groups] == history[-1][0]
        histories.append(history)
    return histories


def momenta(opt):
    return [g.get("momentum", g.get("betas")) for g in opt.param_groups]


SCHEDULERS = {
    "LambdaLR": (lambda m, o: m.LambdaLR(o, lambda e: 0.95**e), 60),
    "LambdaLR-list": (lambda m, o: m.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: e % 3]),
                      30),
    "MultiplicativeLR": (lambda m, o: m.MultiplicativeLR(o, lambda e: 0.9 + 0.001 * e), 60),
    "StepLR": (lambda m, o: m.StepLR(o, step_size=7, gamma=0.5), 60),
    "MultiStepLR": (lambda m, o: m.MultiStepLR(o, milestones=[10, 25, 25, 40], gamma=0.3),
                    60),
    "ConstantLR": (lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=8), 30),
    "ConstantLR-default": (lambda m, o: m.ConstantLR(o), 10),
    "LinearLR": (lambda m, o: m.LinearLR(o, start_factor=0.25, total_iters=10), 30),
    "LinearLR-down": (lambda m, o: m.LinearLR(o, start_factor=1.0, end_factor=0.1,
                                              total_iters=17), 30),
    "ExponentialLR": (lambda m, o: m.ExponentialLR(o, gamma=0.97), 200),
    "PolynomialLR": (lambda m, o: m.PolynomialLR(o, total_iters=30, power=2.0), 40),
    "PolynomialLR-default": (lambda m, o: m.PolynomialLR(o), 10),
    "CosineAnnealingLR": (lambda m, o: m.CosineAnnealingLR(o, T_max=20, eta_min=0.001), 200),
    "CosineAnnealingLR-odd": (lambda m, o: m.CosineAnnealingLR(o, T_max=7), 100),
    "CosineAnnealingWarmRestarts": (
        lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=10, T_mult=2, eta_min=1e-4), 200),
    "CosineAnnealingWarmRestarts-1": (
        lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=6), 100),
    "CyclicLR": (lambda m, o: m.CyclicLR(o, base_lr=0.001, max_lr=0.1, step_size_up=5), 100),
    "CyclicLR-triangular2": (
        lambda m, o: m.CyclicLR(o, 0.001, [0.1, 0.2], step_size_up=4, step_size_down=7,
                                mode="triangular2", base_momentum=0.7), 100),
    "CyclicLR-exp_range": (
        lambda m, o: m.CyclicLR(o, 0.001, 0.1, step_size_up=6, mode="exp_range",
                                gamma=0.97), 100),
    "CyclicLR-scale_fn": (
        lambda m, o: m.CyclicLR(o, 0.001, 0.1, step_size_up=3, scale_fn=lambda x: 1 / (x + 1),
                                scale_mode="iterations", cycle_momentum=False), 50),
    "OneCycleLR": (lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=100), 100),
    "OneCycleLR-linear": (
        lambda m, o: m.OneCycleLR(o, max_lr=[0.1, 0.3], epochs=5, steps_per_epoch=12,
                                  anneal_strategy="linear", pct_start=0.25), 60),
    "OneCycleLR-three_phase": (
        lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=80, three_phase=True,
                                  div_factor=10.0, final_div_factor=100.0), 80),
    "SequentialLR": (
        lambda m, o: m.SequentialLR(o, [m.LinearLR(o, start_factor=0.1, total_iters=5),
                                        m.ExponentialLR(o, gamma=0.9)], milestones=[5]), 40),
    "SequentialLR-3": (
        lambda m, o: m.SequentialLR(o, [m.ConstantLR(o, factor=0.5, total_iters=3),
                                        m.StepLR(o, step_size=4),
                                        m.CosineAnnealingLR(o, T_max=10)],
                                    milestones=[6, 20]), 50),
    "ChainedScheduler": (
        lambda m, o: m.ChainedScheduler([m.ConstantLR(o, factor=0.2, total_iters=4),
                                         m.ExponentialLR(o, gamma=0.95)]), 40),
    "ChainedScheduler-opt": (
        lambda m, o: m.ChainedScheduler([m.StepLR(o, 3), m.MultiplicativeLR(o, lambda e: 0.99)],
                                        optimizer=o), 30),
}


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
@pytest.mark.parametrize("key", list(SCHEDULERS))
def test_matches_torch(key, opt_name) -> None:
    make, steps = SCHEDULERS[key]
    ember_history, torch_history = run(make, steps, name=opt_name)
    assert ember_history == torch_history


def plateau_metric(k: int) -> float:
    return 1.0 / (1 + k) if k < 20 else 0.05 + 0.001 * math.sin(k)


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(patience=2, factor=0.5),
    dict(mode="max", patience=1, threshold=0.1),
    dict(threshold_mode="abs", threshold=0.01, patience=3, cooldown=2),
    dict(mode="max", threshold_mode="abs", patience=0, min_lr=[0.01, 0.02]),
    dict(patience=1, min_lr=0.05, eps=1e-3),
])
def test_reduce_lr_on_plateau(kwargs) -> None:
    ember_history, torch_history = run(lambda m, o: m.ReduceLROnPlateau(o, **kwargs), 60,
                                       metric=plateau_metric)
    assert ember_history == torch_history


def test_closed_forms_through_the_deprecated_epoch_argument() -> None:
    for key in ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR",
                "ConstantLR", "PolynomialLR", "LambdaLR"]:
        make, _ = SCHEDULERS[key]
        results = []
        for module in (elrs, tlrs):
            eo, to = optimizers()
            opt = eo if module is elrs else to
            sched = make(module, opt)
            opt.step()
            out = []
            with warnings.catch_warnings(record=True) as record:
                warnings.simplefilter("always")
                for epoch in (3, 11, 0, 27, 40):
                    sched.step(epoch)
                    out.append(sched.get_last_lr())
            assert all(str(w.message) == elrs.EPOCH_DEPRECATION_WARNING for w in record)
            assert len(record) == 5
            results.append(out)
        assert results[0] == results[1], key


def test_warm_restarts_with_fractional_epochs() -> None:
    results = []
    for module in (elrs, tlrs):
        eo, to = optimizers()
        opt = eo if module is elrs else to
        sched = module.CosineAnnealingWarmRestarts(opt, T_0=5, T_mult=2)
        opt.step()
        out = []
        for i in range(60):
            sched.step(i / 4)  # per batch, four batches an epoch: no warning
            out.append(sched.get_last_lr())
        results.append(out)
    assert results[0] == results[1]


# -- warnings ---------------------------------------------------------------------------


def first_warning(module, opt, call_optimizer: bool):
    sched = module.StepLR(opt, step_size=2)
    if call_optimizer:
        opt.step()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        sched.step()
    return [str(w.message) for w in record], record


def test_scheduler_step_before_optimizer_step_warns_like_torch() -> None:
    eo, to = optimizers()
    ember_msgs, record = first_warning(elrs, eo, call_optimizer=False)
    torch_msgs, _ = first_warning(tlrs, to, call_optimizer=False)
    assert ember_msgs == torch_msgs and len(ember_msgs) == 1
    assert "Detected call of `lr_scheduler.step()` before `optimizer.step()`" in ember_msgs[0]
    assert record[0].filename == __file__
    eo, to = optimizers()
    assert first_warning(elrs, eo, call_optimizer=True)[0] == []


def test_overridden_optimizer_step_warns_like_torch() -> None:
    msgs = []
    for module, (eo, to) in ((elrs, optimizers()), (tlrs, optimizers())):
        opt = eo if module is elrs else to
        sched = module.ExponentialLR(opt, gamma=0.9)
        opt.step = lambda closure=None: None  # replaced after the scheduler was built
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            sched.step()
        msgs.append([str(w.message) for w in record])
    assert msgs[0] == msgs[1] and "has been overridden" in msgs[0][0]


def test_get_lr_outside_step_warns() -> None:
    eo, _ = optimizers()
    sched = elrs.StepLR(eo, step_size=2)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()


def test_plateau_epoch_argument_warns() -> None:
    eo, _ = optimizers()
    sched = elrs.ReduceLROnPlateau(eo)
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)`"):
        sched.step(1.0, epoch=3)
    assert sched.last_epoch == 3


# -- errors: PyTorch's types and messages ---------------------------------------------------

BAD = [
    lambda m, o: m.ConstantLR(o, factor=1.5),
    lambda m, o: m.LinearLR(o, start_factor=0.0),
    lambda m, o: m.LinearLR(o, end_factor=2.0),
    lambda m, o: m.LambdaLR(o, [lambda e: 1.0]),
    lambda m, o: m.MultiplicativeLR(o, [1.0, 2.0]),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="x"),
    lambda m, o: m.CyclicLR(o, 0.1, 1.0, mode="nope"),
    lambda m, o: m.CyclicLR(o, [0.1], 1.0),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=0),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1, epochs=0, steps_per_epoch=2),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1, epochs=2, steps_per_epoch=-1),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=1.5),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=10, anneal_strategy="exp"),
    lambda m, o: m.ReduceLROnPlateau(o, factor=1.0),
    lambda m, o: m.ReduceLROnPlateau(o, mode="median"),
    lambda m, o: m.ReduceLROnPlateau(o, threshold_mode="pct"),
    lambda m, o: m.ReduceLROnPlateau(o, min_lr=[0.1]),
    lambda m, o: m.SequentialLR(o, [], milestones=[]),
    lambda m, o: m.SequentialLR(o, [m.StepLR(o, 2), m.StepLR(o, 3)], milestones=[]),
    lambda m, o: m.SequentialLR(o, [m.ReduceLROnPlateau(o)], milestones=[]),
    lambda m, o: m.ChainedScheduler([]),
    lambda m, o: m.StepLR(o, 2, last_epoch=3),
    lambda m, o: m.StepLR(object(), 2),
]


@pytest.mark.parametrize("make", BAD, ids=[str(i) for i in range(len(BAD))])
def test_errors_match_torch(make) -> None:
    eo, to = optimizers()
    with pytest.raises(Exception) as torch_info:
        make(tlrs, to)
    with pytest.raises(type(torch_info.value)) as info:
        make(elrs, eo)
    assert str(info.value) == str(torch_info.value)


def test_cycle_momentum_needs_momentum() -> None:
    opt = ember_optim.Adagrad([et.zeros(1)])
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        elrs.CyclicLR(opt, 0.01, 0.1)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        elrs.OneCycleLR(opt, 0.1, total_steps=10)


def test_one_cycle_past_the_end() -> None:
    eo, _ = optimizers()
    sched = elrs.OneCycleLR(eo, max_lr=0.1, total_steps=3)
    for _ in range(3):
        eo.step()
        sched.step()
    eo.step()
    with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of "
                                         "total steps is 3"):
        sched.step()


def test_schedulers_of_another_optimizer() -> None:
    a, _ = optimizers()
    b, _ = optimizers()
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same "
                                         "optimizer"):
        elrs.ChainedScheduler([elrs.StepLR(a, 2), elrs.StepLR(b, 2)])


# -- state_dict ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["StepLR", "MultiStepLR", "CosineAnnealingWarmRestarts",
                                 "CyclicLR", "OneCycleLR", "SequentialLR", "ChainedScheduler",
                                 "LambdaLR", "PolynomialLR"])
def test_state_dict_resumes_the_schedule(key) -> None:
    make, steps = SCHEDULERS[key]
    half = min(steps, 40) // 2
    eo, to = optimizers()
    sched = make(elrs, eo)
    tsched = make(tlrs, to)
    for _ in range(half):
        eo.step()
        sched.step()
        to.step()
        tsched.step()
    state = sched.state_dict()
    assert "optimizer" not in state
    assert sorted(state) == sorted(tsched.state_dict())
    opt_state = eo.state_dict()

    eo2, _ = optimizers()
    sched2 = make(elrs, eo2)
    eo2.load_state_dict(opt_state)
    sched2.load_state_dict(state)
    for _ in range(half):
        eo.step()
        sched.step()
        eo2.step()
        sched2.step()
    assert sched2.get_last_lr() == sched.get_last_lr()
    assert [g["lr"] for g in eo2.param_groups] == [g["lr"] for g in eo.param_groups]


def test_lambda_state_dict_keeps_callable_objects_only() -> None:
    class Factor:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, epoch):
            return self.rate**epoch

    eo, _ = optimizers()
    sched = elrs.LambdaLR(eo, [Factor(), lambda e: 1.0])
    state = sched.state_dict()
    assert state["lr_lambdas"] == [{"rate": 0.5}, None]
    state["lr_lambdas"][0]["rate"] = 0.25
    sched.load_state_dict(state)
    assert sched.lr_lambdas[0].rate == 0.25
    assert "lr_lambdas" in state  # the given dict is left whole


def test_resuming_needs_initial_lr() -> None:
    eo, to = optimizers()
    with pytest.raises(KeyError) as info:
        elrs.StepLR(eo, 2, last_epoch=4)
    with pytest.raises(KeyError) as torch_info:
        tlrs.StepLR(to, 2, last_epoch=4)
    assert str(info.value) == str(torch_info.value)
    elrs.StepLR(eo, 2)
    resumed = elrs.StepLR(eo, 2, last_epoch=4)
    assert resumed.last_epoch == 5


def test_tensor_learning_rate_is_filled_in_place() -> None:
    lr = et.tensor(0.1)
    opt = ember_optim.SGD([et.zeros(1)], lr=lr)
    sched = elrs.ExponentialLR(opt, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr
    assert lr.item() == pytest.approx(0.05)
    assert isinstance(sched.get_last_lr()[0], et.Tensor)
    assert sched.get_last_lr()[0] is not lr


def test_base_class_is_exported() -> None:
    assert issubclass(elrs.StepLR, elrs.LRScheduler)
    assert set(elrs.__all__) >= set(tlrs.__all__) - {"LRScheduler"}
