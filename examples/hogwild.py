"""Hogwild: several processes train one model in shared memory, without locks.

The PyTorch paper's example of ``torch.multiprocessing``: the model's parameters are moved
into shared memory (``model.share_memory()``), every process runs its own optimizer over
those same parameters, and their updates land in the one model without any
synchronisation. After the processes join, the parent's model holds what they learned.

    python examples/hogwild.py [--processes 2] [--epochs 3]

The data is a synthetic 4-class problem made from a seed (nothing is downloaded). Replacing
``ember`` by ``torch`` runs the same program with PyTorch.
"""

from __future__ import annotations

import argparse

import numpy as np

import ember
import ember.multiprocessing as mp
import ember.nn as nn
import ember.nn.functional as F
import ember.optim as optim


class Net(nn.Module):
    def __init__(self, features: int = 16, hidden: int = 32, classes: int = 4):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def make_data(n: int = 4096, features: int = 16, classes: int = 4, seed: int = 0):
    """Gaussian blobs around ``classes`` random centres: (inputs float32, labels int64)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((classes, features)) * 2.0
    labels = rng.integers(0, classes, n)
    inputs = centres[labels] + rng.standard_normal((n, features))
    return ember.from_numpy(inputs.astype(np.float32)), ember.from_numpy(labels)


def train(rank: int, processes: int, model: Net, inputs, labels, epochs: int,
          batch: int = 64) -> None:
    """One Hogwild worker: SGD on its own shard of the data, straight into the shared model."""
    ember.set_num_threads(1)  # the workers share the cores
    ember.manual_seed(rank)
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    shard = ember.arange(rank, inputs.shape[0], processes)
    for _ in range(epochs):
        order = shard[ember.randperm(shard.shape[0])]
        for start in range(0, order.shape[0], batch):
            idx = order[start:start + batch]
            opt.zero_grad()
            F.cross_entropy(model(inputs[idx]), labels[idx]).backward()
            opt.step()


def accuracy(model: Net, inputs, labels) -> float:
    with ember.no_grad():
        return (model(inputs).argmax(1) == labels).float().mean().item()


def main(processes: int = 2, epochs: int = 3, start_method: str = "spawn") -> tuple[float, float]:
    """Trains from ``processes`` workers; returns (accuracy before, accuracy after)."""
    ember.manual_seed(0)
    inputs, labels = make_data()
    model = Net()
    model.share_memory()  # the parameters move into shared memory, in place
    before = accuracy(model, inputs, labels)
    ctx = mp.get_context(start_method)
    workers = [ctx.Process(target=train, args=(rank, processes, model, inputs, labels, epochs))
               for rank in range(processes)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if any(w.exitcode != 0 for w in workers):
        raise SystemExit(f"a worker failed: exit codes {[w.exitcode for w in workers]}")
    after = accuracy(model, inputs, labels)
    return before, after


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    before, after = main(args.processes, args.epochs)
    print(f"accuracy before {before:.3f}, after Hogwild training {after:.3f}")
