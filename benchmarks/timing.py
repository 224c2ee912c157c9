"""Timing shared by the side-by-side benchmark scripts."""

from __future__ import annotations

import time

import numpy as np


def _block(fn, calls: int) -> list[float]:
    fn()  # the first call of a block pays for the other library's threads still spinning
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


def alternating_medians(fn, tfn, repeats: int, budget: float) -> tuple[float, float]:
    """Median seconds of `fn()` and of `tfn()` over `repeats` timed calls each (or fewer, at
    least 6, once `budget` seconds have passed).

    The calls run in alternating blocks of 3, each after one untimed call: a machine slowing
    down mid-run affects both libraries alike, while neither is timed in the moment right
    after the other, when the other's worker threads still spin on the cores (PyTorch's
    OpenMP threads spin for milliseconds after a parallel region)."""
    a, b = [], []
    start = time.perf_counter()
    while len(a) < repeats:
        a += _block(fn, 3)
        b += _block(tfn, 3)
        if len(a) >= 6 and time.perf_counter() - start > budget:
            break
    return float(np.median(a)), float(np.median(b))
