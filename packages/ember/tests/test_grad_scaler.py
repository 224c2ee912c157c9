"""ember.amp.GradScaler on CPU tensors against torch.amp.GradScaler("cpu"): the scale and
unscale math, skipped steps, the growth/backoff schedule, errors and the state dict."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import ember


def make(lib, w0, lr=0.1):
    if lib is torch:
        p = torch.tensor(w0, requires_grad=True)
        return p, torch.optim.SGD([p], lr=lr)
    p = ember.tensor(w0, requires_grad=True)
    return p, ember.optim.SGD([p], lr=lr)


def test_reexports():
    assert ember.amp.GradScaler is ember.amp.GradScaler
    import ember.amp as amp_mod

    assert amp_mod is ember.amp
    assert ember.autocast is ember.amp.autocast
    assert not ember.is_autocast_enabled("cpu")
    assert ember.get_autocast_dtype("cpu") == ember.bfloat16


def test_scale_unscale_and_step_match_torch():
    w0 = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    results = []
    for lib, scaler in ((ember, ember.amp.GradScaler("cpu")), (torch, torch.amp.GradScaler("cpu"))):
        p, opt = make(lib, w0)
        loss = (p * p).sum()
        scaled = scaler.scale(loss)
        assert float(scaled.item()) == pytest.approx(float(loss.item()) * 2.0**16)
        scaled.backward()
        assert np.allclose(p.grad.numpy(), 2 * w0 * 2.0**16)
        scaler.unscale_(opt)
        assert np.allclose(p.grad.numpy(), 2 * w0)
        scaler.step(opt)  # already unscaled: not again
        scaler.update()
        results.append((p.detach().numpy().copy(), scaler.get_scale(), scaler.state_dict()))
    np.testing.assert_allclose(results[0][0], results[1][0])
    assert results[0][1] == results[1][1] and results[0][2] == results[1][2]


def test_scale_of_nested_outputs():
    s = ember.amp.GradScaler("cpu", init_scale=4.0)
    a, b = ember.tensor([1.0]), ember.tensor([2.0])
    out = s.scale([a, (b, a)])
    assert isinstance(out, list) and isinstance(out[1], tuple)
    assert float(out[1][0].item()) == 8.0 and float(out[0].item()) == 4.0
    assert [float(t.item()) for t in s.scale(iter([a, b]))] == [4.0, 8.0]


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_step_is_skipped_on_non_finite_grads(bad):
    w0 = np.array([1.0, 2.0], dtype=np.float32)
    p, opt = make(ember, w0)
    s = ember.amp.GradScaler("cpu", init_scale=8.0)
    s.scale((p * p).sum()).backward()
    p.grad.copy_(ember.tensor([bad, 1.0]))
    assert s.step(opt) is None
    np.testing.assert_array_equal(p.detach().numpy(), w0)
    s.update()
    assert s.get_scale() == 4.0 and s.state_dict()["_growth_tracker"] == 0


def run_schedule(lib, flags, **kw):
    scaler = (ember if lib is ember else torch).amp.GradScaler("cpu", **kw)
    p, opt = make(lib, np.array([0.5, -0.25], dtype=np.float32), lr=0.01)
    seen = []
    for bad in flags:
        opt.zero_grad()
        scaler.scale((p * p * 3).sum()).backward()
        if bad:
            p.grad.copy_((ember if lib is ember else torch).tensor([math.inf, 0.0]))
        scaler.step(opt)
        scaler.update()
        seen.append((scaler.get_scale(), scaler.state_dict()["_growth_tracker"]))
    return seen, p.detach().numpy().copy()


def test_growth_and_backoff_schedule_matches_torch():
    flags = [0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0]
    kw = dict(init_scale=2.0**10, growth_factor=3.0, backoff_factor=0.25, growth_interval=3)
    ours, pe = run_schedule(ember, flags, **kw)
    theirs, pt = run_schedule(torch, flags, **kw)
    assert ours == theirs
    np.testing.assert_allclose(pe, pt, rtol=1e-6)


def test_scale_never_grows_to_inf():
    ours, _ = run_schedule(ember, [0] * 3, init_scale=3e38, growth_interval=1)
    theirs, _ = run_schedule(torch, [0] * 3, init_scale=3e38, growth_interval=1)
    assert ours == theirs and not math.isinf(ours[-1][0])


def test_order_errors():
    p, opt = make(ember, np.array([1.0], dtype=np.float32))
    s = ember.amp.GradScaler("cpu")
    with pytest.raises(AssertionError, match="_scale is None"):
        s.step(opt)
    s.scale((p * p).sum()).backward()
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called on this optimizer"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match="after step"):
        s.unscale_(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        s.step(opt)
    with pytest.raises(RuntimeError, match="Closure"):
        s.step(opt, closure=lambda: None)
    s.update()
    with pytest.raises(AssertionError, match="No inf checks"):
        s.update()
    with pytest.raises(AssertionError, match="growth factor"):
        ember.amp.GradScaler("cpu", growth_factor=1.0)


def test_fp16_grads_cannot_be_unscaled():
    p = ember.tensor([1.0], dtype=ember.float16, requires_grad=True)
    opt = ember.optim.SGD([p], lr=0.1)
    s = ember.amp.GradScaler("cpu")
    s.scale((p * p).sum()).backward()
    assert p.grad.dtype == ember.float16
    with pytest.raises(ValueError, match="FP16 gradients"):
        s.unscale_(opt)


def test_update_with_new_scale():
    s = ember.amp.GradScaler("cpu")
    s.scale(ember.tensor([1.0]))
    s.update(128.0)
    assert s.get_scale() == 128.0
    s.update(ember.tensor([32.0]))
    assert s.get_scale() == 32.0
    with pytest.raises(AssertionError, match="new_scale"):
        s.update(ember.tensor([1.0, 2.0]))


def test_state_dict_round_trip():
    s = ember.amp.GradScaler("cpu", init_scale=512.0, growth_interval=5)
    s.scale(ember.tensor([1.0]))
    s.update(64.0)
    sd = s.state_dict()
    assert sd == {
        "scale": 64.0,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 5,
        "_growth_tracker": 0,
    }
    fresh = ember.amp.GradScaler("cpu")
    fresh.load_state_dict(sd)
    assert fresh.state_dict() == sd and fresh.get_scale() == 64.0
    t = torch.amp.GradScaler("cpu")
    t.load_state_dict(sd)
    assert t.state_dict() == sd
    with pytest.raises(RuntimeError, match="state dict is empty"):
        fresh.load_state_dict({})


def test_disabled_is_a_pass_through():
    p, opt = make(ember, np.array([1.0], dtype=np.float32))
    s = ember.amp.GradScaler("cpu", enabled=False)
    loss = (p * p).sum()
    assert s.scale(loss) is loss
    loss.backward()
    s.unscale_(opt)
    s.step(opt)
    s.update()
    assert float(p.detach().numpy()[0]) == pytest.approx(0.8)
    assert not s.is_enabled() and s.get_scale() == 1.0 and s.state_dict() == {}


@pytest.mark.skipif(ember.cuda.is_available(), reason="checks the CPU-only fallback")
def test_cuda_scaler_without_gpu_warns_and_disables():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        s = ember.amp.GradScaler()
    assert not s.is_enabled()
