"""ember-core-tracking end to end: the allocator tracks what a training run allocates, and the
native ReLU kernel trains the same model as Ember's own kernel. Each scenario runs in a fresh
interpreter, because the allocator must be installed before the first tensor exists. The
plug-point conformance kit runs separately:

    python -m pytest -p ember_tensor.conformance --core-provider=ember_core_tracking
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

TRAIN = """
    import json, sys
    import ember_core_tracking as tracking
    import ember
    import numpy as np
    from ember import nn

    if sys.argv[1] == "native":
        tracking.register_kernels()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((512, 20)).astype(np.float32)
    w = rng.standard_normal((20, 1)).astype(np.float32)
    y = (np.maximum(X @ w, 0) > 0.5).astype(np.int64).ravel()  # a non-linear rule
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2))
    opt = ember.optim.Adam(model.parameters(), lr=1e-2)
    xs, ys = ember.from_numpy(X), ember.from_numpy(y)
    losses = []
    for step in range(150):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xs), ys)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with ember.no_grad():
        acc = (model(xs).argmax(dim=1) == ys).float().mean().item()
    stats = tracking.memory_stats()
    del model, opt, loss, xs, ys
    print(json.dumps({"losses": losses, "acc": acc, "during": stats,
                      "after": tracking.memory_stats(),
                      "allocator": tracking._native.active_allocator(),
                      "kernels": ember.library.registered_kernels()}))
"""


def train(kernel: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(TRAIN), kernel],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_training_with_the_tracking_allocator_and_the_native_kernel():
    builtin, native = train("builtin"), train("native")
    for run in (builtin, native):
        assert run["allocator"] == "ember-core-tracking"
        assert run["losses"][-1] < 0.25 * run["losses"][0], run["losses"][::30]
        assert run["acc"] > 0.95
        assert run["during"]["allocations"] > 1000  # every step's tensors came from it
        assert run["during"]["peak_bytes"] >= 512 * 64 * 4  # at least the hidden activations
        # parameters, gradients and Adam's state are all that is alive between steps
        assert run["during"]["live_bytes"] < run["during"]["peak_bytes"]
    # the native kernel computes max(x, 0) exactly as Ember's: the same training run
    assert native["kernels"] == {"relu": "ember_core_tracking.relu"}
    assert builtin["kernels"] == {}
    assert native["losses"] == builtin["losses"]
    assert native["after"]["live_bytes"] <= builtin["during"]["live_bytes"]


def test_poisoned_frees_and_late_import():
    code = """
        import os
        os.environ["EMBER_TRACKING_POISON"] = "1"
        import ember_core_tracking as tracking, ember_tensor as et
        x = et.ones(1000)
        view = x[10:20]
        del x
        assert bool((view == 1).all())          # a view keeps its block: not poisoned
        assert tracking.memory_stats()["live_bytes"] == 4000
    """
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    late = "import ember_tensor as et\net.zeros(1)\nimport ember_core_tracking\n"
    proc = subprocess.run([sys.executable, "-c", late], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1
    assert "cannot install the host allocator 'ember-core-tracking'" in proc.stderr
    assert "since the first CPU allocation" in proc.stderr and "<string>:2" in proc.stderr
