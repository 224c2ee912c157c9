"""End to end: a small classifier trained through the composed API (``import ember``) with
ember-optim-lite as the provider of the ``optim`` slot, and the same training done by
PyTorch from the same initial weights, compared.

    EMBER_OPTIM=lite python lite_train.py            # the choice by environment variable
    python lite_train.py --select use                # ember.use(optim="lite")
    python lite_train.py                             # in a directory whose pyproject.toml
                                                     # has [tool.ember] optim = "lite"
    ... --compare                                    # also the comparison with PyTorch

Prints one JSON object (the checks and the numbers) as its last line. Run by
``test_lite_e2e.py``, each time in a fresh process (a slot's provider is chosen once per
process).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

import numpy as np

import ember


def blobs(n_per_class: int = 100, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three Gaussian blobs in the plane (float64 features, int64 labels)."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 2.0], [1.8, -1.0], [-1.8, -1.0]])
    x = np.concatenate([c + 0.7 * rng.standard_normal((n_per_class, 2)) for c in centres])
    y = np.repeat(np.arange(3), n_per_class)
    return x, y


def make_model(nn):
    return nn.Sequential(nn.Linear(2, 16, dtype=ember.float64), nn.Tanh(),
                         nn.Linear(16, 3, dtype=ember.float64))


def train(x, y, steps: int = 150) -> dict:
    """Full-batch training with ember.optim.Adam and an lr schedule."""
    import ember.nn as nn
    import ember.nn.functional as F
    from ember.optim.lr_scheduler import StepLR

    ember.manual_seed(0)
    model = make_model(nn)
    opt = ember.optim.Adam(model.parameters(), lr=0.05)
    sched = StepLR(opt, step_size=50, gamma=0.5)
    inputs, targets = ember.from_numpy(x), ember.from_numpy(y)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    with ember.no_grad():
        accuracy = float((model(inputs).argmax(dim=1) == targets).float().mean().item())
    return {"first_loss": losses[0], "last_loss": losses[-1], "accuracy": accuracy,
            "final_lr": sched.get_last_lr()[0], "optimizer_class": type(opt).__module__}


COMPARED = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-3}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5}),
    ("NAdam", {"lr": 0.01}),
    ("LBFGS", {"lr": 1.0, "max_iter": 4, "line_search_fn": "strong_wolfe"}),
]


def compare_with_pytorch(x, y, steps: int = 20) -> dict:
    """The largest difference between the parameters (and the losses) of the same model
    trained ``steps`` steps by ember.optim (the plugin) and by torch.optim, per algorithm."""
    return {name: _compare_one(name, kwargs, x, y, steps if name != "LBFGS" else 3)
            for name, kwargs in COMPARED}


def _compare_one(name: str, kwargs: dict, x, y, steps: int) -> dict:
    import torch

    import ember.nn as nn
    import ember.nn.functional as F

    ember.manual_seed(1)
    model = make_model(nn)
    ref = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(),
                              torch.nn.Linear(16, 3)).double()
    with torch.no_grad():
        for p, q in zip(model.parameters(), ref.parameters()):
            q.copy_(torch.from_numpy(np.array(p.detach().numpy())))
    opt = getattr(ember.optim, name)(model.parameters(), **kwargs)
    ref_opt = getattr(torch.optim, name)(ref.parameters(), **kwargs)
    inputs, targets = ember.from_numpy(x), ember.from_numpy(y)
    ref_in, ref_tg = torch.from_numpy(x), torch.from_numpy(y)

    def closure():
        opt.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        return loss

    def ref_closure():
        ref_opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(ref(ref_in), ref_tg)
        loss.backward()
        return loss

    loss_diff = 0.0
    for _ in range(steps):
        a = opt.step(closure)
        b = ref_opt.step(ref_closure)
        loss_diff = max(loss_diff, abs(float(a.detach()) - float(b.detach())))
    param_diff = max(float(np.abs(p.detach().numpy() - q.detach().numpy()).max())
                     for p, q in zip(model.parameters(), ref.parameters()))
    return {"param_diff": param_diff, "loss_diff": loss_diff}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--select", choices=["env", "use", "pyproject"], default="env")
    parser.add_argument("--compare", action="store_true")
    args = parser.parse_args()
    if args.select == "use":
        ember.use(optim="lite")
    import ember_optim_lite

    from ember.optim.lr_scheduler import OneCycleLR

    result = {
        "optim_is_plugin": ember.optim is ember_optim_lite,
        "import_is_plugin": importlib.import_module("ember.optim") is ember_optim_lite,
        "scheduler_is_plugin": OneCycleLR is ember_optim_lite.lr_scheduler.OneCycleLR,
    }
    try:
        ember.use(optim="ember")
        result["late_switch_refused"] = False
    except RuntimeError:
        result["late_switch_refused"] = True
    x, y = blobs()
    result["train"] = train(x, y)
    if args.compare:
        result["vs_pytorch"] = compare_with_pytorch(x, y)
    # the default provider was never loaded: the plugin replaced it, it did not wrap it
    result["ember_optim_imported"] = "ember_optim" in sys.modules
    print(json.dumps(result))


if __name__ == "__main__":
    main()
