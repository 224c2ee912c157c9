"""The paper's Hogwild example (examples/hogwild.py): N processes train one shared model."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "hogwild.py"


def load_example(monkeypatch):
    """The example as the module ``hogwild`` (spawned workers import it by that name)."""
    if not EXAMPLE.exists():
        pytest.skip(f"{EXAMPLE} is not in this checkout")
    monkeypatch.syspath_prepend(str(EXAMPLE.parent))
    return importlib.import_module("hogwild")


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_hogwild_workers_train_the_parents_model(start_method, monkeypatch):
    hogwild = load_example(monkeypatch)
    trained = {}

    def accuracy(model, inputs, labels):
        trained.setdefault("params", [p.detach().clone() for p in model.parameters()])
        trained["model"] = model
        return original(model, inputs, labels)

    original = hogwild.accuracy
    monkeypatch.setattr(hogwild, "accuracy", accuracy)
    before, after = hogwild.main(processes=2, epochs=2, start_method=start_method)
    now = [p.detach() for p in trained["model"].parameters()]
    changed = [not np.array_equal(a.numpy(), b.numpy()) for a, b in zip(trained["params"], now)]
    assert all(changed)  # the workers' steps landed in the parent's parameters
    assert before < 0.5 and after > 0.9
