"""ember_optim_lite against PyTorch's optimizers and schedulers on the same inputs: the
same gradients fed to both, the parameters, the state's keys and the state dicts' groups
compared (float64, so the two agree to rounding)."""

from __future__ import annotations

import warnings

import ember_optim_lite as lite
import numpy as np
import pytest

import ember_tensor as et

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(0)
W0 = _rng.standard_normal((3, 4))
B0 = _rng.standard_normal(4)


def _grads(k: int) -> tuple[np.ndarray, np.ndarray]:
    return (np.sin(np.arange(12.0).reshape(3, 4) * 0.7 + k) * (1 + 0.2 * k),
            np.cos(np.arange(4.0) + 0.3 * k))


ALGORITHMS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True,
              "maximize": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "amsgrad": True}),
    ("Adamax", {"lr": 0.05, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1,
                 "weight_decay": 0.1}),
    ("Adadelta", {"lr": 1.0, "weight_decay": 0.1}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "maximize": True}),
]


@pytest.mark.parametrize(("name", "kwargs"), ALGORITHMS,
                         ids=[f"{n}-{'-'.join(k)}" for n, k in ALGORITHMS])
def test_algorithm_matches_pytorch(name: str, kwargs: dict) -> None:
    ours = [et.tensor(W0.copy()), et.tensor(B0.copy())]
    theirs = [torch.tensor(W0.copy(), requires_grad=True),
              torch.tensor(B0.copy(), requires_grad=True)]
    opt = getattr(lite, name)(ours, **kwargs)
    ref = getattr(torch.optim, name)(theirs, **kwargs)
    assert opt.defaults == ref.defaults
    for k in range(12):  # RAdam: both of its regimes (rho_t <= 5, then > 5)
        for p, q, g in zip(ours, theirs, _grads(k)):
            p.grad, q.grad = et.tensor(g), torch.tensor(g)
        opt.step()
        ref.step()
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-13, atol=1e-15)
    mine, want = opt.state_dict(), ref.state_dict()
    assert mine["param_groups"] == want["param_groups"]
    assert {i: sorted(s) for i, s in mine["state"].items()} == {
        i: sorted(s) for i, s in want["state"].items()}
    for i, state in want["state"].items():
        for key, value in state.items():
            np.testing.assert_allclose(np.asarray(mine["state"][i][key].numpy()),
                                       value.detach().numpy(), rtol=1e-12, atol=1e-15,
                                       err_msg=f"state {key}")


def _rosenbrock(x: np.ndarray) -> tuple[float, np.ndarray]:
    f = (1 - x[0]) ** 2 + 10 * (x[1] - x[0] ** 2) ** 2 + 0.5 * x[2] ** 2 + 0.1 * x[2] * x[0]
    g = np.array([-2 * (1 - x[0]) - 40 * x[0] * (x[1] - x[0] ** 2) + 0.1 * x[2],
                  20 * (x[1] - x[0] ** 2), x[2] + 0.1 * x[0]])
    return float(f), g


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("history_size", [100, 3])
def test_lbfgs_matches_pytorch(line_search_fn, history_size: int) -> None:
    start = np.array([-1.2, 1.0, 0.7])
    x = et.tensor(start.copy())
    y = torch.tensor(start.copy(), requires_grad=True)
    lr = 1.0 if line_search_fn else 0.2
    opt = lite.LBFGS([x], lr=lr, max_iter=15, history_size=history_size,
                     line_search_fn=line_search_fn)
    ref = torch.optim.LBFGS([y], lr=lr, max_iter=15, history_size=history_size,
                            line_search_fn=line_search_fn)

    def ours():
        f, g = _rosenbrock(x.numpy())
        x.grad = et.tensor(g)
        return f

    def theirs():
        f, g = _rosenbrock(y.detach().numpy())
        y.grad = torch.tensor(g)
        return torch.tensor(f, dtype=torch.float64)

    for _ in range(2):
        assert opt.step(ours) == pytest.approx(float(ref.step(theirs)), rel=1e-9)
        np.testing.assert_allclose(x.numpy(), y.detach().numpy(), rtol=1e-8, atol=1e-10)
    assert opt.state[x]["func_evals"] == ref.state[y]["func_evals"]
    assert opt.state[x]["n_iter"] == ref.state[y]["n_iter"]


def _two_groups(lib, name: str = "SGD", **kwargs):
    if lib is torch.optim:
        a, b = torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)
    else:
        a, b = et.zeros(1), et.zeros(1)
    return getattr(lib, name)([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=1.0, **kwargs)


SCHEDULERS = {
    "LambdaLR": (lambda s, o: s.LambdaLR(o, lambda e: 1 / (e + 1)), {}),
    "MultiplicativeLR": (lambda s, o: s.MultiplicativeLR(o, lambda e: 0.95), {}),
    "StepLR": (lambda s, o: s.StepLR(o, 3, 0.5), {}),
    "MultiStepLR": (lambda s, o: s.MultiStepLR(o, [2, 5, 5, 9], 0.5), {}),
    "ConstantLR": (lambda s, o: s.ConstantLR(o, 0.25, 4), {}),
    "LinearLR": (lambda s, o: s.LinearLR(o, 0.2, 0.9, 6), {}),
    "ExponentialLR": (lambda s, o: s.ExponentialLR(o, 0.8), {}),
    "PolynomialLR": (lambda s, o: s.PolynomialLR(o, 7, 2.0), {}),
    "CosineAnnealingLR": (lambda s, o: s.CosineAnnealingLR(o, 5, 0.01), {}),
    "CosineAnnealingWarmRestarts": (
        lambda s, o: s.CosineAnnealingWarmRestarts(o, 3, 2, 0.01), {}),
    "CyclicLR-triangular2": (
        lambda s, o: s.CyclicLR(o, 0.1, 1.0, 3, 2, mode="triangular2"), {"momentum": 0.9}),
    "CyclicLR-exp_range": (
        lambda s, o: s.CyclicLR(o, [0.1, 0.2], 1.0, 4, mode="exp_range", gamma=0.9),
        {"momentum": 0.9}),
    "CyclicLR-Adam": (lambda s, o: s.CyclicLR(o, 0.1, 1.0, 3), "Adam"),
    "OneCycleLR": (lambda s, o: s.OneCycleLR(o, 2.0, total_steps=20), {"momentum": 0.9}),
    "OneCycleLR-three_phase": (
        lambda s, o: s.OneCycleLR(o, [2.0, 1.0], epochs=4, steps_per_epoch=5, three_phase=True,
                                  anneal_strategy="linear"), "Adam"),
    "SequentialLR": (lambda s, o: s.SequentialLR(o, [
        s.LinearLR(o, 0.1, total_iters=3), s.ExponentialLR(o, 0.7), s.StepLR(o, 2)], [3, 8]),
        {}),
    "ChainedScheduler": (
        lambda s, o: s.ChainedScheduler([s.ExponentialLR(o, 0.9), s.StepLR(o, 3, 0.5)]), {}),
    "ChainedScheduler-cosine": (
        lambda s, o: s.ChainedScheduler([s.CosineAnnealingLR(o, 4), s.ExponentialLR(o, 0.9)]),
        {}),
}


def _trace(lib, make, opt_args) -> np.ndarray:
    opt = _two_groups(lib, opt_args) if isinstance(opt_args, str) else _two_groups(
        lib, **opt_args)
    sched = make(lib.lr_scheduler, opt)

    def row():
        momenta = [g.get("momentum", g.get("betas", (0.0,))[0]) for g in opt.param_groups]
        return [*sched.get_last_lr(), *momenta]

    rows = [row()]
    for _ in range(19):
        opt.step()
        sched.step()
        rows.append(row())
    return np.array(rows, dtype=float)


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_matches_pytorch(name: str) -> None:
    make, opt_args = SCHEDULERS[name]
    np.testing.assert_allclose(_trace(lite, make, opt_args),
                               _trace(torch.optim, make, opt_args), rtol=1e-14, atol=0)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "LinearLR",
                                  "ConstantLR", "PolynomialLR", "CosineAnnealingLR"])
def test_scheduler_step_to_epoch_matches_pytorch(name: str) -> None:
    make, _ = SCHEDULERS[name]
    traces = []
    for lib in (lite, torch.optim):
        opt = _two_groups(lib)
        sched = make(lib.lr_scheduler, opt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # step(epoch) is deprecated in both
            rows = []
            for epoch in (3, 7, 1, 10):
                opt.step()
                sched.step(epoch)
                rows.append(sched.get_last_lr())
        traces.append(np.array(rows))
    np.testing.assert_allclose(traces[0], traces[1], rtol=1e-14)


def test_reduce_lr_on_plateau_matches_pytorch() -> None:
    metrics = [5, 4, 4, 4, 4, 3.9999, 4, 4, 4, 4, 2, 2, 2, 2, 2, 2, 2, 1]
    traces = []
    for lib in (lite, torch.optim):
        opt = _two_groups(lib)
        sched = lib.lr_scheduler.ReduceLROnPlateau(opt, patience=2, cooldown=1, factor=0.5,
                                                   min_lr=[0.1, 0.2])
        rows = []
        for metric in metrics:
            opt.step()
            sched.step(metric)
            rows.append(sched.get_last_lr())
        traces.append(np.array(rows))
    np.testing.assert_array_equal(traces[0], traces[1])


def test_one_cycle_refuses_to_step_past_the_end() -> None:
    opt = _two_groups(lite, momentum=0.9)
    sched = lite.lr_scheduler.OneCycleLR(opt, 1.0, total_steps=3)
    for _ in range(3):
        opt.step()
        sched.step()
    with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of total "
                                         "steps is 3"):
        sched.step()


def test_errors_match_pytorch() -> None:
    p = et.zeros(1)
    cases = [
        (lambda: lite.SGD([p], lr=0.1, nesterov=True), "Nesterov momentum requires"),
        (lambda: lite.SGD([p], momentum=-1), "Invalid momentum value: -1"),
        (lambda: lite.RMSprop([p], alpha=-1), "Invalid alpha value: -1"),
        (lambda: lite.Adagrad([p], lr_decay=-1), "Invalid lr_decay value: -1"),
        (lambda: lite.Adadelta([p], rho=2), "Invalid rho value: 2"),
        (lambda: lite.NAdam([p], momentum_decay=-1), "Invalid momentum_decay value: -1"),
        (lambda: lite.Adam([p], weight_decay=-1), "Invalid weight_decay value: -1"),
        (lambda: lite.LBFGS([{"params": [p]}, {"params": [et.zeros(1)]}]),
         "LBFGS doesn't support per-parameter options"),
        (lambda: lite.Adam([p], fused=True), "fused=True is not supported"),
    ]
    for make, message in cases:
        with pytest.raises(ValueError, match=message):
            make()


def test_named_parameters_and_hook_order() -> None:
    a, b = et.zeros(2), et.zeros(3)
    opt = lite.SGD([("w", a), ("b", b)], lr=0.1)
    assert opt.param_groups[0]["params"] == [a, b]
    assert opt.param_groups[0]["param_names"] == ["w", "b"]
    log = []
    opt.register_state_dict_pre_hook(lambda o: log.append("second"))
    opt.register_state_dict_pre_hook(lambda o: log.append("first"), prepend=True)
    opt.state_dict()
    assert log == ["first", "second"]


def test_subclass_calling_super_step_runs_hooks_once() -> None:
    class Logged(lite.SGD):
        def step(self, closure=None):
            return super().step(closure)

    p = et.ones(1)
    p.grad = et.ones(1)
    opt = Logged([p], lr=0.5)
    calls = []
    opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    opt.step()
    assert calls == ["pre"] and p.tolist() == [0.5]
