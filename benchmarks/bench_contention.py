"""Ember and PyTorch (CPU) when other processes compete for the cores: the time of a small
step (ten 64x256x256 products with a bias and tanh, then an elementwise tail on 512x1024)
on a quiet machine and while ``--busy`` processes each spin on a core.

    python benchmarks/bench_contention.py [--busy N] [--steps N]

Reports the median, 90th percentile and maximum of ``--steps`` steps per library and
condition. A library whose worker threads wait for each other at a barrier stalls for a
whole scheduler time slice whenever one of them is descheduled: that shows in p90 and max.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time

import numpy as np


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def _timings(lib, steps: int) -> tuple[float, float, float]:
    lib.manual_seed(0)
    a, w, b = lib.randn(64, 256), lib.randn(256, 256), lib.randn(256)
    x = lib.randn(512, 1024)

    def step():
        h = a
        for _ in range(10):
            h = (h @ w + b).tanh()
        return h, (x * 2 + 1).relu().sum()

    for _ in range(20):
        step()
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    times.sort()
    return (float(np.median(times)) * 1e3, times[int(0.9 * len(times))] * 1e3,
            times[-1] * 1e3)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=2)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args(argv)
    import ember_tensor as et

    libs = {"ember": et}
    try:
        import torch

        libs["torch"] = torch
    except ImportError:
        print("torch is not installed: Ember alone")
    print(f"{'library':8s} {'busy':>4s} {'median ms':>10s} {'p90 ms':>8s} {'max ms':>8s}")
    for busy in (0, args.busy):
        stop = mp.Event()
        hogs = [mp.Process(target=_spin, args=(stop,), daemon=True) for _ in range(busy)]
        for p in hogs:
            p.start()
        try:
            for name, lib in libs.items():
                med, p90, worst = _timings(lib, args.steps)
                print(f"{name:8s} {busy:4d} {med:10.2f} {p90:8.2f} {worst:8.2f}")
        finally:
            stop.set()
            for p in hogs:
                p.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
