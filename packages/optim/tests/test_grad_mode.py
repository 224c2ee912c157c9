"""ember-optim depends on the tensor core only: without an autograd provider the optimizers
work on tensors whose gradients are set by hand, and they never import one for nothing;
with ember_autograd loaded, steps run under its no_grad."""

from __future__ import annotations

import json
import subprocess
import sys

import ember_optim
import ember_tensor as et


def run_python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True).stdout


def test_no_autograd_import_when_nothing_requires_grad() -> None:
    code = (
        "import json, sys, ember_tensor as et, ember_optim as optim; "
        "p = et.ones(3); p.grad = et.ones(3); opt = optim.Adam([p], lr=0.1); "
        "opt.step(lambda: 1.0); "
        "s = optim.lr_scheduler.StepLR(opt, 1); s.step(); "
        "print(json.dumps(['ember_autograd' in sys.modules, p.tolist()]))"
    )
    loaded, values = json.loads(run_python(code))
    assert loaded is False
    assert values == [0.9000000357627869] * 3  # 1 - lr, rounded as Adam rounds it


def test_works_when_autograd_is_not_installed() -> None:
    code = (
        "import sys, json; sys.modules['ember_autograd'] = None; "  # import fails
        "import ember_tensor as et, ember_optim as optim; "
        "p = et.ones(2); opt = optim.SGD([p], lr=0.5, momentum=0.9); "
        "p.grad = et.ones(2); opt.step(); opt.zero_grad(); "
        "print(json.dumps(p.tolist()))"
    )
    assert json.loads(run_python(code)) == [0.5, 0.5]


def test_steps_run_under_no_grad() -> None:
    import ember_autograd

    w = et.ones(2, requires_grad=True)
    seen = []
    opt = ember_optim.Adam([w], lr=0.1)
    opt.register_step_pre_hook(lambda *a: seen.append(ember_autograd.is_grad_enabled()))
    (w * w).sum().backward()
    opt.step()
    assert seen == [True]  # hooks run outside the step's no_grad, as in PyTorch
    assert w.is_leaf and w.requires_grad and w.grad_fn is None
    assert ember_autograd.is_grad_enabled()
    assert not opt.state[w]["exp_avg"].requires_grad
