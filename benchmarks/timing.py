"""Timing shared by the side-by-side benchmark scripts."""

from __future__ import annotations

import platform
import time

import numpy as np

SETTLE = 0.02
"""Seconds of untimed calls that open each block."""


def settled_times(fn, calls: int) -> list[float]:
    """Seconds of each of `calls` timed calls of `fn()`, after untimed calls for `SETTLE`
    seconds.

    The calls that open a block pay for the other library's worker threads still spinning
    on the cores: PyTorch's OpenMP threads spin for milliseconds after a parallel region,
    and on a 2-core machine they take the cores from whatever runs next. A user's training
    loop runs one library alone, so each is timed only once the other has settled."""
    start = time.perf_counter()
    fn()
    while time.perf_counter() - start < SETTLE:
        fn()
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


def alternating_medians(fn, tfn, repeats: int, budget: float) -> tuple[float, float]:
    """Median seconds of `fn()` and of `tfn()` over `repeats` timed calls each (or fewer, at
    least 6, once `budget` seconds have passed).

    The calls run in alternating blocks of 3, each after untimed calls for `SETTLE` seconds:
    a machine slowing down mid-run affects both libraries alike, while neither is timed in
    the moment right after the other, when the other's worker threads still spin on the
    cores."""
    a, b = [], []
    start = time.perf_counter()
    while len(a) < repeats:
        a += settled_times(fn, 3)
        b += settled_times(tfn, 3)
        if len(a) >= 6 and time.perf_counter() - start > budget:
            break
    return float(np.median(a)), float(np.median(b))


def median_seconds(fn, repeats: int, budget: float = 1.5, warmup: int = 1) -> float:
    """Median seconds of ``fn()`` over ``repeats`` timed calls (at least 5, fewer once
    ``budget`` seconds have passed), after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < repeats:
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        if len(times) >= 5 and time.perf_counter() - start > budget:
            break
    return float(np.median(times))


def import_torch():
    """PyTorch, or None after saying so (the side-by-side scripts then exit with 2)."""
    try:
        import torch
    except ImportError:
        print("torch is not installed: nothing to compare with")
        return None
    return torch


def cpu_model() -> str:
    """The CPU's model name (printed beside every table: the machines differ)."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
