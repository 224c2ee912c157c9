"""Ember's tensor core and PyTorch (CPU) side by side, in one run.

    python benchmarks/bench_core.py [--threads N] [--repeats N] [--json PATH]

Each case runs the same operation on the same data (made by NumPy, handed to both
libraries with ``from_numpy``) in both libraries, after a warm-up, many times, and reports
the median. ``ratio`` is torch time / ember time: above 1 means Ember is faster. Both
results are compared with each other once, so a fast wrong answer shows up as ``MISMATCH``.
PyTorch is optional: without it only Ember's column is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import numpy as np

BIG = 16 * 1024 * 1024  # elements of the bandwidth cases
MATMUL_N = 1024


@dataclass(frozen=True)
class Case:
    name: str
    unit: str  # of the reported rate
    warmup: int
    repeats: int
    inner: int  # calls per timed repeat; the reported time is per call
    inputs: Callable[[], list[np.ndarray]]
    op: Callable[..., Any]
    rate: Callable[[float], float]  # seconds per call -> reported value
    rtol: float


def _rng_arrays(*shapes: tuple[int, ...]) -> Callable[[], list[np.ndarray]]:
    def make() -> list[np.ndarray]:
        rng = np.random.default_rng(0)
        return [rng.standard_normal(shape, dtype=np.float32) for shape in shapes]

    return make


CASES = [
    Case(
        name="a+b, 1-element float32 (per call)",
        unit="us/call",
        warmup=2000,
        repeats=31,
        inner=5000,
        inputs=_rng_arrays((1,), (1,)),
        op=lambda a, b: a + b,
        rate=lambda s: s * 1e6,
        rtol=1e-6,
    ),
    Case(
        name="a+b, 16M float32",
        unit="GB/s",
        warmup=3,
        repeats=21,
        inner=1,
        inputs=_rng_arrays((BIG,), (BIG,)),
        op=lambda a, b: a + b,
        rate=lambda s: 3 * 4 * BIG / s / 1e9,
        rtol=1e-6,
    ),
    Case(
        name="sum, 16M float32",
        unit="GB/s",
        warmup=3,
        repeats=21,
        inner=1,
        inputs=_rng_arrays((BIG,)),
        op=lambda a: a.sum(),
        rate=lambda s: 4 * BIG / s / 1e9,
        rtol=1e-3,
    ),
    Case(
        name=f"matmul {MATMUL_N}x{MATMUL_N} float32",
        unit="GFLOP/s",
        warmup=2,
        repeats=11,
        inner=1,
        inputs=_rng_arrays((MATMUL_N, MATMUL_N), (MATMUL_N, MATMUL_N)),
        op=None,  # library's matmul, filled in by _op
        rate=lambda s: 2 * MATMUL_N**3 / s / 1e9,
        rtol=1e-3,
    ),
]


def _op(case: Case, lib: Any) -> Callable[..., Any]:
    return case.op if case.op is not None else lib.matmul


def median_seconds(fn: Callable[[], object], *, warmup: int, repeats: int, inner: int) -> float:
    """Median over ``repeats`` of the time per call, each repeat timing ``inner`` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner)
    return statistics.median(times)


def run_case(case: Case, lib: Any, arrays: list[np.ndarray], repeats: int | None) -> dict:
    tensors = [lib.from_numpy(a) for a in arrays]
    op = _op(case, lib)
    seconds = median_seconds(
        lambda: op(*tensors),
        warmup=case.warmup,
        repeats=repeats or case.repeats,
        inner=case.inner,
    )
    result = np.asarray(op(*tensors).numpy())
    return {"seconds": seconds, "value": case.rate(seconds), "result": result}


def _version(dist: str, module: Any) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return str(getattr(module, "__version__", "unknown"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 1,
        help="intra-op threads for both libraries (default: all cores)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="timed repeats per case (default: per case, 11 to 31)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)

    try:
        import ember_tensor as ember
    except ImportError as exc:
        print(
            f"bench_core: cannot import ember_tensor ({exc}); run `nox -s bench`", file=sys.stderr
        )
        return 2
    try:
        import torch
    except ImportError:
        torch = None
        print("PyTorch is not installed: showing Ember only (pip install torch==2.13.0)")

    libs: dict[str, Any] = {"ember": ember}
    versions = {"ember-tensor-core": _version("ember-tensor-core", ember)}
    if torch is not None:
        libs["torch"] = torch
        versions["torch"] = _version("torch", torch)
    for lib in libs.values():
        lib.set_num_threads(args.threads)

    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"{args.threads} threads, Python {platform.python_version()}, "
        + ", ".join(f"{k} {v}" for k, v in versions.items())
    )
    header = f"{'case':<36} {'ember':>18} {'torch':>18} {'ratio':>7}  check"
    print(header)
    print("-" * len(header))

    rows = []
    for case in CASES:
        arrays = case.inputs()
        measured = {name: run_case(case, lib, arrays, args.repeats) for name, lib in libs.items()}
        del arrays
        row: dict[str, Any] = {"case": case.name, "unit": case.unit}
        for name, m in measured.items():
            row[name] = {"seconds": m["seconds"], case.unit: m["value"]}
        cells = [_cell(measured["ember"], case.unit)]
        if "torch" in measured:
            row["ratio"] = measured["torch"]["seconds"] / measured["ember"]["seconds"]
            same = np.allclose(
                measured["ember"]["result"],
                measured["torch"]["result"],
                rtol=case.rtol,
                atol=case.rtol,
            )
            row["results_match"] = bool(same)
            cells += [
                _cell(measured["torch"], case.unit),
                f"{row['ratio']:7.2f}",
                " ok" if same else " MISMATCH",
            ]
        else:
            cells += [f"{'-':>18}", f"{'-':>7}", ""]
        print(f"{case.name:<36} " + " ".join(cells))
        rows.append(row)

    print("ratio = torch time / ember time (> 1: Ember faster); medians of repeats")
    if args.json:
        report = {
            "machine": {
                "platform": platform.platform(),
                "processor": platform.processor() or platform.machine(),
                "cpu_count": os.cpu_count(),
                "python": platform.python_version(),
            },
            "threads": args.threads,
            "versions": versions,
            "results": rows,
        }
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
            fh.write("\n")
        print(f"wrote {args.json}")
    return 0 if all(r.get("results_match", True) for r in rows) else 1


def _cell(m: dict, unit: str) -> str:
    return f"{m['value']:9.2f} {unit:<8}"


if __name__ == "__main__":
    sys.exit(main())
