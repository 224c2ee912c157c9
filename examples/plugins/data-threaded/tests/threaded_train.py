"""End to end: a small classifier trained through the composed API (``import ember``) on
mini-batches from ``ember.utils.data.DataLoader``, with ember-data-threaded as the provider
of the ``data`` slot; and the batches (and the training) compared with PyTorch's
DataLoader for the same sampler order.

    EMBER_DATA=threaded python threaded_train.py     # the choice by environment variable
    python threaded_train.py --select use            # ember.use(data="threaded")
    python threaded_train.py                         # in a directory whose pyproject.toml
                                                     # has [tool.ember] data = "threaded"
    ... --compare                                    # also the comparison with PyTorch

Prints one JSON object (the checks and the numbers) as its last line. Run by
``test_threaded_e2e.py``, each time in a fresh process (a slot's provider is chosen once
per process).
"""

from __future__ import annotations

import argparse
import importlib
import json

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


def train(x, y, epochs: int = 15) -> dict:
    """Mini-batch SGD, shuffled batches of 32 loaded by 2 persistent worker threads."""
    import ember.nn as nn
    import ember.nn.functional as F
    from ember.utils.data import DataLoader, TensorDataset

    ember.manual_seed(0)
    model = make_model(nn)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    dataset = TensorDataset(ember.from_numpy(x), ember.from_numpy(y))
    loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=2,
                        persistent_workers=True)
    epoch_losses, seen = [], 0
    for _ in range(epochs):
        total, count = 0.0, 0
        for inputs, targets in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(inputs), targets)
            loss.backward()
            opt.step()
            total += loss.item() * len(targets)
            count += len(targets)
        epoch_losses.append(total / count)
        seen += count
    inputs, targets = ember.from_numpy(x), ember.from_numpy(y)
    with ember.no_grad():
        accuracy = float((model(inputs).argmax(dim=1) == targets).float().mean().item())
    return {"first_epoch_loss": epoch_losses[0], "last_epoch_loss": epoch_losses[-1],
            "accuracy": accuracy, "samples_seen": seen, "batches_per_epoch": len(loader),
            "loader_class": f"{type(loader).__module__}.{type(loader).__name__}"}


def compare_with_pytorch(x, y, epochs: int = 2) -> dict:
    """The batches of ember.utils.data.DataLoader (the plugin, 2 worker threads) and of
    torch.utils.data.DataLoader for one fixed sampler order; then the same model trained
    on each loader's batches by SGD from the same initial weights."""
    import torch

    import ember.nn as nn
    import ember.nn.functional as F
    from ember.utils.data import DataLoader, TensorDataset

    order = np.random.default_rng(5).permutation(len(y)).tolist()
    ours = DataLoader(TensorDataset(ember.from_numpy(x), ember.from_numpy(y)), batch_size=32,
                      sampler=order, num_workers=2)
    theirs = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
        batch_size=32, sampler=order)
    pairs = list(zip(ours, theirs))
    same = len(pairs) == len(ours) == len(theirs) and all(
        np.array_equal(a.numpy(), b.numpy()) and a.dtype == ember.float64 and
        np.array_equal(la.numpy(), lb.numpy()) and la.dtype == ember.int64
        for (a, la), (b, lb) in pairs)

    ember.manual_seed(1)
    model = make_model(nn)
    ref = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(),
                              torch.nn.Linear(16, 3)).double()
    with torch.no_grad():
        for p, q in zip(model.parameters(), ref.parameters()):
            q.copy_(torch.from_numpy(np.array(p.detach().numpy())))
    opt = ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    for _ in range(epochs):
        for (a, la), (b, lb) in zip(ours, theirs):
            opt.zero_grad()
            F.cross_entropy(model(a), la).backward()
            opt.step()
            ref_opt.zero_grad()
            torch.nn.functional.cross_entropy(ref(b), lb).backward()
            ref_opt.step()
    param_diff = max(float(np.abs(p.detach().numpy() - q.detach().numpy()).max())
                     for p, q in zip(model.parameters(), ref.parameters()))
    return {"batches_equal": same, "batches": len(pairs), "param_diff": param_diff}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--select", choices=["env", "use", "pyproject"], default="env")
    parser.add_argument("--compare", action="store_true")
    args = parser.parse_args()
    if args.select == "use":
        ember.use(data="threaded")
    import ember_data_threaded

    from ember.utils.data import DataLoader

    datasets = importlib.import_module("ember.utils.data.datasets")
    result = {
        "data_is_plugin": ember.data is ember_data_threaded,
        "import_is_plugin": importlib.import_module("ember.data") is ember_data_threaded,
        "utils_data_is_plugin": ember.utils.data is ember_data_threaded,
        "loader_is_plugin": DataLoader is ember_data_threaded.DataLoader,
        "datasets_is_plugin": datasets is ember_data_threaded.datasets,
        "optim_provider": ember.optim.__name__,
    }
    try:
        ember.use(data="ember")
        result["late_switch_refused"] = False
    except RuntimeError:
        result["late_switch_refused"] = True
    x, y = blobs()
    result["train"] = train(x, y)
    if args.compare:
        result["vs_pytorch"] = compare_with_pytorch(x, y)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
