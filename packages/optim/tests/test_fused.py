"""The fused steps (the core's ``_fused_adam_`` and ``_fused_sgd_``): bit for bit the
per-tensor path, close to PyTorch's own fused steps, chosen by default when they apply,
and clear errors on what they do not take."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_optim
import ember_tensor as et
from ember_optim import _fused
from optim_testing import DTYPES, Pair, assert_close, ember_from, np_of

# shapes across the kernels' 32768-element blocks, a 0-d parameter and a single element
FUSED_SHAPES = ((5, 7), (70001,), (3, 4, 5), (), (1,))

FUSED_CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.5, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.6), eps=1e-3)),  # lerp from the gradient side
    ("Adam", dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.3)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.2, amsgrad=True, maximize=True)),
]
IDS = [f"{n}-{','.join(f'{k}={v}' for k, v in kw.items())}" for n, kw in FUSED_CASES]


def run(name, kwargs, dtype, steps=25, shapes=FUSED_SHAPES, **flags):
    """Parameters after ``steps`` steps from fixed starting values and gradients."""
    rng = np.random.default_rng(0)
    params = [ember_from(rng.standard_normal(s), dtype) for s in shapes]
    opt = getattr(ember_optim, name)(params, **kwargs, **flags)
    g_rng = np.random.default_rng(1)
    for _ in range(steps):
        for p in params:
            p.grad = ember_from(g_rng.standard_normal(tuple(p.shape)), dtype)
        opt.step()
    return [np_of(p) for p in params], opt


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "kwargs"), FUSED_CASES, ids=IDS)
def test_fused_equals_per_tensor_bit_for_bit(name, kwargs, dtype) -> None:
    fused, opt = run(name, kwargs, dtype, fused=True)
    plain, _ = run(name, kwargs, dtype, foreach=False)
    for a, b in zip(fused, plain):
        np.testing.assert_array_equal(a, b)
    state = opt.state[opt.param_groups[0]["params"][0]]
    if name != "SGD":
        assert float(state["step"]) == 25.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "kwargs"), FUSED_CASES, ids=IDS)
def test_fused_matches_torch_fused(name, kwargs, dtype) -> None:
    """PyTorch's CPU fused kernels against Ember's, 60 steps."""
    pair = Pair(name, kwargs, dtype, ember_kwargs={"fused": True},
                torch_kwargs={"fused": True})
    pair.step(60)
    pair.assert_params_close(f"{name} fused")


def counting(algorithm):
    kernel = _fused._KERNELS[algorithm]
    calls = []

    def wrapper(*args, **kwargs):
        calls.append(len(args[0]))
        return kernel(*args, **kwargs)

    return wrapper, calls


@pytest.mark.parametrize(("name", "algorithm"), [("SGD", "sgd"), ("Adam", "adam"),
                                                 ("AdamW", "adam")])
def test_default_takes_the_fused_kernel(monkeypatch, name, algorithm) -> None:
    wrapper, calls = counting(algorithm)
    monkeypatch.setitem(_fused._KERNELS, algorithm, wrapper)
    kwargs = dict(lr=0.01, momentum=0.9) if name == "SGD" else dict(lr=0.01)
    default, _ = run(name, kwargs, "float32", steps=3)
    assert calls == [len(FUSED_SHAPES)] * 3
    calls.clear()
    plain, _ = run(name, kwargs, "float32", steps=3, foreach=False)
    assert calls == []
    for a, b in zip(default, plain):
        np.testing.assert_array_equal(a, b)


def test_default_falls_back_for_strided_parameters(monkeypatch) -> None:
    """A non-contiguous parameter: the default takes the per-tensor path; fused=True is a
    clear error naming the tensor."""
    wrapper, calls = counting("adam")
    monkeypatch.setitem(_fused._KERNELS, "adam", wrapper)
    p = et.zeros(4, 3).t()
    p.grad = et.ones(3, 4)
    q = et.zeros(4, 3).t()
    q.grad = et.ones(3, 4)
    ember_optim.Adam([p], lr=0.1).step()
    assert calls == []
    ember_optim.Adam([q], lr=0.1, foreach=False).step()
    np.testing.assert_array_equal(np_of(p), np_of(q))
    with pytest.raises(RuntimeError, match=r"_fused_adam_: params\[0\] of shape \[3, 4\] is not "
                                           r"contiguous"):
        ember_optim.Adam([q], lr=0.1, fused=True).step()


def test_mixed_dtypes_run_as_two_groups() -> None:
    shapes = ((4, 5), (6,))
    rng = np.random.default_rng(2)
    inits = [rng.standard_normal(s) for s in shapes]
    results = []
    for flags in ({"fused": True}, {"foreach": False}):
        params = [ember_from(inits[0], "float32"), ember_from(inits[1], "float64")]
        opt = ember_optim.Adam(params, lr=0.01, **flags)
        for _ in range(5):
            for p in params:
                p.grad = et.ones_like(p)
            opt.step()
        results.append([np_of(p) for p in params])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_steps_bump_version_counters() -> None:
    p = et.zeros(3)
    p.grad = et.ones(3)
    opt = ember_optim.Adam([p], fused=True)
    before = p._version
    opt.step()
    state = opt.state[p]
    assert p._version > before and state["exp_avg"]._version > 0
    assert state["exp_avg_sq"]._version > 0


def test_kernel_errors() -> None:
    p, g = et.zeros(3), et.zeros(3)
    hyper = dict(lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False,
                 maximize=False)
    with pytest.raises(RuntimeError, match=r"^_fused_adam_: expected 1 tensors in grads \(one "
                                           r"per parameter\), got 0$"):
        et._fused_adam_([p], [], [et.zeros(3)], [et.zeros(3)], [], [et.tensor(0.0)], **hyper)
    with pytest.raises(RuntimeError, match=r"exp_avgs\[0\] must match params\[0\] \(shape "
                                           r"\[3\], dtype float32, device cpu\), got shape "
                                           r"\[4\], dtype float32"):
        et._fused_adam_([p], [g], [et.zeros(4)], [et.zeros(3)], [], [et.tensor(0.0)], **hyper)
    with pytest.raises(RuntimeError, match=r"grads\[0\] must match .* dtype float64"):
        et._fused_adam_([p], [g.double()], [et.zeros(3)], [et.zeros(3)], [], [et.tensor(0.0)],
                        **hyper)
    with pytest.raises(NotImplementedError, match=r"^_fused_sgd_: params\[0\] has dtype int64;"
                                                  r" the fused step supports float32 and "
                                                  r"float64$"):
        et._fused_sgd_([et.zeros(2, dtype=et.int64)], [et.zeros(2, dtype=et.int64)], [],
                       weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0, nesterov=False,
                       maximize=False, is_first_step=False)
    with pytest.raises(RuntimeError, match=r"all params must have one dtype"):
        et._fused_sgd_([p, et.zeros(2, dtype=et.float64)], [g, et.zeros(2, dtype=et.float64)],
                       [], weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0,
                       nesterov=False, maximize=False, is_first_step=False)
    with pytest.raises(RuntimeError, match=r"momentum_buffers \(one per parameter\), got 0"):
        et._fused_sgd_([p], [g], [], weight_decay=0.0, momentum=0.9, lr=0.1, dampening=0.0,
                       nesterov=False, maximize=False, is_first_step=True)


def test_fused_sgd_first_step_sets_buffers_like_torch() -> None:
    """Parameters gaining gradients in later steps get their buffers then (PyTorch's rule:
    the first buffer is the gradient itself)."""
    rng = np.random.default_rng(5)
    init = [rng.standard_normal(4).astype("float32") for _ in range(2)]
    ours = [ember_from(a) for a in init]
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    opt = ember_optim.SGD(ours, lr=0.1, momentum=0.9, fused=True)
    topt = torch.optim.SGD(theirs, lr=0.1, momentum=0.9)  # its fused=True fails here
    for step in range(4):
        active = [0] if step < 2 else [0, 1]
        for i in range(2):
            g = rng.standard_normal(4).astype("float32")
            ours[i].grad = ember_from(g) if i in active else None
            theirs[i].grad = torch.from_numpy(g) if i in active else None
        opt.step()
        topt.step()
    for a, b in zip(ours, theirs):
        assert_close(a, b, "float32", "SGD buffers created late")
