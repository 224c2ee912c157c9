"""ember.data's DataLoader and torch.utils.data's side by side, in one run: epoch throughput
(samples per second, medians of repeated epochs) over

- a TensorDataset of 20,000 x 784 float32 (and int64 labels), batch 64, shuffle, with 0 and
  2 workers;
- a dataset whose ``__getitem__`` does about 50 us of Python work, batch 64, with 0, 1 and 2
  workers (scaling with the workers).

    python benchmarks/bench_data.py [--repeats N] [--quick]

``ratio`` is ember samples/s / torch samples/s: above 1 means Ember is faster. Workers start
with the default start method; starting them is part of an epoch, as in a training loop
without persistent workers.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from timing import import_torch


class SlowItems:
    """50 us of Python work per sample; returns (float32 features, label)."""

    def __init__(self, lib, n: int = 4000):
        self.lib, self.n = lib, n
        self.features = np.random.default_rng(0).standard_normal((n, 32)).astype(np.float32)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        end = time.perf_counter() + 50e-6
        while time.perf_counter() < end:
            pass
        return self.features[i], i % 10


def epoch_rate(loader, n: int) -> float:
    start = time.perf_counter()
    for _ in loader:
        pass
    return n / (time.perf_counter() - start)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    torch = import_torch()
    if torch is None:
        return 2
    import torch.utils.data as tud

    import ember_data
    import ember_tensor as et

    repeats = 2 if args.quick else args.repeats
    x = np.random.default_rng(0).standard_normal((20000, 784)).astype(np.float32)
    y = np.random.default_rng(1).integers(0, 10, 20000)
    tensor_sets = (ember_data.TensorDataset(et.from_numpy(x), et.from_numpy(y)),
                   tud.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)))
    cases = []
    for workers in (0, 2):
        cases.append((f"TensorDataset 20000x784, {workers} workers", tensor_sets, workers,
                      20000))
    slow = (SlowItems("ember"), SlowItems("torch"))
    for workers in (0, 1, 2):
        cases.append((f"50 us items x4000, {workers} workers", slow, workers, 4000))

    print(f"torch {torch.__version__}")
    print(f"{'case':<42} {'ember/s':>10} {'torch/s':>10} {'ratio':>7}")
    for name, (ours, theirs), workers, n in cases:
        rates = ([], [])
        for _ in range(repeats):
            for k, (lib, ds) in enumerate(((ember_data, ours), (tud, theirs))):
                loader = lib.DataLoader(ds, batch_size=64, shuffle=True, num_workers=workers)
                rates[k].append(epoch_rate(loader, n))
        e, t = float(np.median(rates[0])), float(np.median(rates[1]))
        print(f"{name:<42} {e / 1e3:>9.1f}K {t / 1e3:>9.1f}K {e / t:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
