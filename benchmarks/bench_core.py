"""Ember's tensor core and PyTorch (CPU) side by side, in one run.

    python benchmarks/bench_core.py [--threads N] [--repeats N] [--filter SUBSTR] [--quick]
                                    [--json PATH]

Each case (see ``cases.py``) runs the same operation on the same data (made by NumPy with a
fixed seed, handed to both libraries with ``from_numpy``) in both libraries, after a
warm-up, many times, and reports the median time per call. ``ratio`` is torch time / ember
time: above 1 means Ember is faster. Both results are compared with each other once, so a
fast wrong answer shows up as ``MISMATCH`` (exit status 1, as for an op that fails).
PyTorch is optional: without it only Ember's column is printed.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from importlib import metadata
from typing import Any

import numpy as np
from cases import CASES, FLOOR, PER_CALL, SCALING, SCALING_THREADS, Case
from timing import cpu_model

SEED = 0
NAME_W = 36


@dataclass(frozen=True)
class Settings:
    """How long each case is timed, per library."""

    repeats: int  # timed repeats (each one times `inner` calls)
    budget_s: float | None  # stop repeating after this much timed time (None: never)
    min_repeats: int  # ... but not before this many repeats
    warmup_s: float  # warm-up time, which also estimates the time of a call
    min_warmup: int  # warm-up calls at the least
    repeat_s: float  # a repeat times enough calls to last this long
    settle_s: float  # idle time before each repeat (see median_seconds)

    @classmethod
    def make(cls, *, quick: bool, repeats: int | None) -> Settings:
        if quick:
            base = cls(5, 0.25, 3, 0.01, 1, 0.005, 0.015)
        else:
            base = cls(21, 2.0, 5, 0.1, 2, 0.02, 0.015)
        if repeats is None:
            return base
        # an explicit count is honoured: no time budget cuts it short
        return replace(base, repeats=repeats, budget_s=None, min_repeats=repeats)


@dataclass
class Timing:
    """One library's measurement of one case."""

    seconds: float | None = None  # median time per operation
    rate: float | None = None  # GB/s or GFLOP/s; None for per-call cases
    repeats: int = 0
    inner: int = 0
    error: str | None = None
    result: Any = field(default=None, repr=False)  # what is compared between libraries

    def to_json(self) -> dict:
        out = asdict(self)
        del out["result"]
        out["median_s"] = out.pop("seconds")
        return out


# --------------------------------------------------------------------------------------
# Timing


def warm_up(fn: Callable[[], object], settings: Settings) -> int:
    """Run ``fn`` for the warm-up; return how many calls make one timed repeat."""
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if calls >= settings.min_warmup and elapsed >= settings.warmup_s:
            break
    return max(1, min(1_000_000, math.ceil(settings.repeat_s * calls / elapsed)))


def median_seconds(
    fns: dict[str, Callable[[], object]], settings: Settings
) -> dict[str, tuple[float, int, int] | Exception]:
    """Median time per call of each function, with their repeats taken in turn.

    Taking the libraries' repeats in turn (ember, torch, ember, torch, ...) lets both see
    the same load on a busy machine. Before each repeat the process idles for
    ``settle_s``: both libraries' pool threads spin for a while after their last op (about
    0.1 ms for Ember's, several ms for torch's OpenMP threads), and a repeat that started at
    once would share its cores with the other library's spinning threads.
    Per function: (median, repeats, calls per repeat), or the exception it raised.
    """
    out: dict[str, tuple[float, int, int] | Exception] = {}
    inner: dict[str, int] = {}
    times: dict[str, list[float]] = {name: [] for name in fns}
    spent = 0.0
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for name, fn in fns.items():
            try:
                inner[name] = warm_up(fn, settings)
            except Exception as exc:  # noqa: BLE001 - reported by the caller
                out[name] = exc
        for done in range(1, settings.repeats + 1):
            for name, n in list(inner.items()):
                fn = fns[name]
                time.sleep(settings.settle_s)
                try:
                    start = time.perf_counter()
                    for _ in range(n):
                        fn()
                    took = time.perf_counter() - start
                except Exception as exc:  # noqa: BLE001 - reported by the caller
                    out[name] = exc
                    del inner[name]
                    continue
                times[name].append(took / n)
                spent += took
            budget = settings.budget_s
            if budget is not None and done >= settings.min_repeats and spent >= budget * len(fns):
                break
    finally:
        if gc_was_enabled:
            gc.enable()
    for name, n in inner.items():
        out[name] = (statistics.median(times[name]), len(times[name]), n)
    return out


def comparable(value: Any) -> Any:
    """A library's result as NumPy arrays, tuples of ints, or names (dtype, device)."""
    if hasattr(value, "numpy"):
        return np.array(value.numpy())  # a copy: the tensor may go
    if isinstance(value, tuple):
        if all(isinstance(v, int) for v in value):
            return tuple(value)  # a shape
        return [comparable(v) for v in value]  # (values, indices) and the like
    return str(value).rsplit(".", 1)[-1]  # ember.float32 / torch.float32 -> float32


def same(a: Any, b: Any, case: Case) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return (
            a.shape == b.shape
            and a.dtype == b.dtype
            and bool(np.allclose(a, b, rtol=case.rtol, atol=case.atol))
        )
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y, case) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _error(exc: Exception) -> Timing:
    message = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return Timing(error=message[:200])


def measure(
    case: Case, libs: dict[str, Any], arrays: list[np.ndarray], settings: Settings
) -> dict[str, Timing]:
    """Check once, then time, per library. An op that fails is reported, not worked around."""
    timings: dict[str, Timing] = {}
    results: dict[str, Any] = {}
    fns: dict[str, Callable[[], object]] = {}
    for name, lib in libs.items():
        try:
            tensors = [lib.from_numpy(a) for a in arrays]
            results[name] = comparable((case.check or case.op)(lib, *tensors))
        except Exception as exc:  # noqa: BLE001 - any failure of the library is a result
            timings[name] = _error(exc)
            continue
        fns[name] = functools.partial(case.op, lib, *tensors)
    for name, got in median_seconds(fns, settings).items():
        if isinstance(got, Exception):
            timings[name] = _error(got)
            continue
        seconds, repeats, inner = got
        seconds /= case.per_call
        rate = None if case.unit == PER_CALL else case.work / seconds / 1e9
        timings[name] = Timing(seconds, rate, repeats, inner, result=results[name])
    return {name: timings[name] for name in libs}


class Inputs:
    """NumPy inputs of the cases, made with a fixed seed; kept while cases share them."""

    def __init__(self) -> None:
        self._maker: Any = None
        self._arrays: list[np.ndarray] = []

    def __call__(self, case: Case) -> list[np.ndarray]:
        if case.inputs is not self._maker:
            self._arrays = []  # free the last ones first
            self._arrays = case.inputs(np.random.default_rng(SEED))
            self._maker = case.inputs
        return self._arrays


# --------------------------------------------------------------------------------------
# Formatting


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def fmt_num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def fmt_target(target: float) -> str:
    text = f"{target:g}"
    return ">=" + (text if "." in text else text + ".0")


def flag(ratio: float | None, target: float) -> str:
    if ratio is None:
        return ""
    if ratio < FLOOR:
        return f"!! <{FLOOR}"
    if ratio < target:
        return "! <target"
    return ""


def ratio_of(ember: Timing, torch: Timing | None) -> float | None:
    if torch is None or ember.seconds is None or torch.seconds is None:
        return None
    return torch.seconds / ember.seconds


def check_word(ember: Timing, torch: Timing | None, case: Case) -> tuple[str, bool | None]:
    if ember.error or (torch is not None and torch.error):
        return "n/a (error)", None
    if torch is None:
        return "", None
    match = same(ember.result, torch.result, case)
    return ("ok" if match else "MISMATCH"), match


# --------------------------------------------------------------------------------------
# The run


@dataclass
class Report:
    rows: list[dict] = field(default_factory=list)
    scaling: list[dict] = field(default_factory=list)
    below_floor: list[str] = field(default_factory=list)
    below_target: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def note(self, key: str, ember: Timing, torch: Timing | None, match: bool | None) -> None:
        if match is False:
            self.mismatches.append(key)
        for lib, timing in (("ember", ember), ("torch", torch)):
            if timing is not None and timing.error:
                self.errors.append(f"{key} [{lib}]: {timing.error}")

    def rank(self, key: str, ratio: float | None, target: float) -> str:
        """Lists a case's ratio below the floor and below its target; its mark (``flag``)."""
        if ratio is not None and ratio < FLOOR:
            self.below_floor.append(f"{key} ({ratio:.2f})")
        if ratio is not None and ratio < target:
            self.below_target.append(f"{key} ({ratio:.2f}, {fmt_target(target)})")
        return flag(ratio, target)

    def summary(self) -> dict:
        return {
            "below_floor": self.below_floor,
            "below_target": self.below_target,
            "mismatches": self.mismatches,
            "errors": self.errors,
        }


def print_header(header: str) -> None:
    print(header)
    print("-" * (len(header) + 14))


def result_row(case: Any, timings: dict, ratio: float | None, match: bool | None, **extra) -> dict:
    """One case's entry in the JSON ``results``; ``extra`` goes after its name."""
    return {
        "key": case.key,
        "group": case.group,
        "name": case.name,
        **extra,
        **{name: t.to_json() for name, t in timings.items()},
        "ratio": ratio,
        "target": case.target,
        "below_target": None if ratio is None else ratio < case.target,
        "below_floor": None if ratio is None else ratio < FLOOR,
        "results_match": match,
    }


def run_main(cases: list[Case], libs: dict[str, Any], settings: Settings, report: Report) -> None:
    header = (
        f"{'case':<{NAME_W}} {'ember':>9} {'torch':>9} {'ember':>8} {'torch':>8} "
        f"{'unit':<8} {'ratio':>6} {'target':>7}  check"
    )
    print_header(header)
    inputs, group = Inputs(), None
    for case in cases:
        if case.group != group:
            group = case.group
            print(f"[{group}]")
        arrays = inputs(case)
        timings = measure(case, libs, arrays, settings)
        ember, torch = timings["ember"], timings.get("torch")
        ratio = ratio_of(ember, torch)
        word, match = check_word(ember, torch, case)
        report.note(case.key, ember, torch, match)
        mark = report.rank(case.key, ratio, case.target)
        print(
            f"{case.name:<{NAME_W}} {fmt_time(ember.seconds):>9} "
            f"{fmt_time(torch.seconds) if torch else '-':>9} "
            f"{fmt_num(ember.rate):>8} {fmt_num(torch.rate) if torch else '-':>8} "
            f"{case.unit:<8} {fmt_num(ratio):>6} {fmt_target(case.target):>7}  "
            f"{word} {mark}".rstrip()
        )
        for name, timing in timings.items():
            if timing.error:
                print(f"    {name}: {timing.error}")
        extra = {"unit": case.unit, "work": case.work or None, "per_call": case.per_call}
        report.rows.append(result_row(case, timings, ratio, match, **extra))


def set_threads(libs: dict[str, Any], n: int) -> None:
    for lib in libs.values():
        lib.set_num_threads(n)


def run_scaling(
    cases: list[Case], libs: dict[str, Any], settings: Settings, report: Report
) -> None:
    lo, hi = SCALING_THREADS
    print()
    print(f"[scaling] the same op at {lo} and {hi} threads; speedup = time {lo}T / time {hi}T")
    if (os.cpu_count() or 1) < hi:
        print(f"  (this machine has {os.cpu_count()} core(s): {hi} threads share them)")
    header = (
        f"{'case':<{NAME_W}} {'ember ' + str(lo) + 'T':>9} {'ember ' + str(hi) + 'T':>9} "
        f"{'speedup':>7} {'torch ' + str(lo) + 'T':>9} {'torch ' + str(hi) + 'T':>9} "
        f"{'speedup':>7} {'ratio ' + str(lo) + 'T':>8} {'ratio ' + str(hi) + 'T':>8}  check"
    )
    print_header(header)
    inputs = Inputs()
    for case in cases:
        arrays = inputs(case)
        per_threads: dict[int, dict[str, Timing]] = {}
        for n in SCALING_THREADS:
            set_threads(libs, n)
            per_threads[n] = measure(case, libs, arrays, settings)
        entry: dict[str, Any] = {"key": case.key, "unit": case.unit, "threads": {}}
        words, marks, ratios = [], [], []
        for n, timings in per_threads.items():
            ember, torch = timings["ember"], timings.get("torch")
            ratio = ratio_of(ember, torch)
            word, match = check_word(ember, torch, case)
            key = f"scaling/{case.key} @{n}T"
            report.note(key, ember, torch, match)
            if ratio is not None and ratio < FLOOR:
                report.below_floor.append(f"{key} ({ratio:.2f})")
                marks.append(f"!! {n}T <{FLOOR}")
            words.append(word)
            ratios.append(ratio)
            entry["threads"][str(n)] = {
                **{name: t.to_json() for name, t in timings.items()},
                "ratio": ratio,
                "results_match": match,
            }
        speedups = {name: _speedup(per_threads[lo][name], per_threads[hi][name]) for name in libs}
        entry["speedup"] = speedups
        report.scaling.append(entry)
        cells = []
        for name in ("ember", "torch"):
            if name in libs:
                cells += [
                    f"{fmt_time(per_threads[lo][name].seconds):>9}",
                    f"{fmt_time(per_threads[hi][name].seconds):>9}",
                    f"{fmt_num(speedups[name]):>7}",
                ]
            else:
                cells += [f"{'-':>9}", f"{'-':>9}", f"{'-':>7}"]
        cells += [f"{fmt_num(r):>8}" for r in ratios]
        word = next((w for w in ("MISMATCH", "n/a (error)") if w in words), words[0])
        print(f"{case.name:<{NAME_W}} " + " ".join(cells) + f"  {word} {' '.join(marks)}".rstrip())
        for n, timings in per_threads.items():
            for name, timing in timings.items():
                if timing.error:
                    print(f"    {name} @{n}T: {timing.error}")


def _speedup(one: Timing, two: Timing) -> float | None:
    if one.seconds is None or two.seconds is None:
        return None
    return one.seconds / two.seconds


def print_summary(
    report: Report, have_torch: bool, settings: Settings, notes: Iterable[str] = ()
) -> None:
    """The legend and the lists of the cases below their marks; ``notes`` come first."""
    print()
    for line in notes:
        print(line)
    print(
        "ratio = torch time / ember time (> 1: Ember faster); times are medians per call "
        f"({settings.repeats} repeats at most)"
    )
    print(f"target = the ratio a case is held to; '!' below its target, '!!' below {FLOOR}")
    if have_torch:
        listed = ", ".join(report.below_floor) or "none"
        print(f"below {FLOOR}x ({len(report.below_floor)}): {listed}")
        listed = ", ".join(report.below_target) or "none"
        print(f"below target ({len(report.below_target)}): {listed}")
    if report.mismatches:
        print(f"MISMATCH ({len(report.mismatches)}): {', '.join(report.mismatches)}")
    if report.errors:
        print(f"errors ({len(report.errors)}):")
        for line in report.errors:
            print(f"  {line}")


# --------------------------------------------------------------------------------------
# Machine and versions


def _version(dist: str, module: Any) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return str(getattr(module, "__version__", "unknown"))


def machine_info() -> dict:
    return {
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
    }


def select(cases: Iterable[Case], pattern: str | None) -> list[Case]:
    if not pattern:
        return list(cases)
    return [c for c in cases if pattern.lower() in f"{c.key}".lower()]


THREADS_HELP = "intra-op threads for both libraries in the main table (default: all cores)"


def parse_args(
    argv: list[str] | None, description: str | None = None, threads_help: str = THREADS_HELP
) -> argparse.Namespace:
    """The options of the bench scripts (``description``: this script's, by default)."""
    if description is None:
        description = __doc__.splitlines()[0]
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help=threads_help)
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="timed repeats per case, no time budget (default: 21, cut short after ~2 s)",
    )
    parser.add_argument(
        "--filter", metavar="SUBSTR", help="only the cases whose group/name contains SUBSTR"
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: short warm-up, 5 repeats at most"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if args.threads < 1 or (args.repeats is not None and args.repeats < 1):
        parser.error("--threads and --repeats take a positive number")
    return args


def load_torch() -> Any:
    """PyTorch, or None (said on stdout) where it is not installed."""
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: showing Ember only (pip install torch==2.13.0)")
        return None
    return torch


def print_machine(args: argparse.Namespace, versions: dict[str, str]) -> dict:
    """Prints the machine, the threads and the versions in one line; the machine's info."""
    machine = machine_info()
    print(
        f"{machine['cpu']}, {machine['cpu_count']} cores, {args.threads} threads, "
        f"Python {machine['python']}, "
        + ", ".join(f"{k} {v}" for k, v in versions.items())
        + (", quick" if args.quick else "")
    )
    return machine


def run_info(
    machine: dict, versions: dict[str, str], args: argparse.Namespace, settings: Settings
) -> dict:
    """The first entries of the JSON written by ``--json``."""
    return {
        "machine": machine,
        "versions": versions,
        "threads": args.threads,
        "settings": {**asdict(settings), "quick": args.quick, "filter": args.filter},
        "seed": SEED,
        "floor": FLOOR,
    }


def write_json(path: str, out: dict) -> None:
    with open(path, "w") as fh:
        json.dump(out, fh, indent=2)
        fh.write("\n")
    print(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    settings = Settings.make(quick=args.quick, repeats=args.repeats)
    try:
        import ember_tensor as ember
    except ImportError as exc:
        print(
            f"bench_core: cannot import ember_tensor ({exc}); run `nox -s bench`", file=sys.stderr
        )
        return 2
    torch = load_torch()

    libs: dict[str, Any] = {"ember": ember}
    versions = {
        "ember-tensor-core": _version("ember-tensor-core", ember),
        "numpy": np.__version__,
    }
    if torch is not None:
        libs["torch"] = torch
        versions["torch"] = _version("torch", torch)

    cases, scaling = select(CASES, args.filter), select(SCALING, args.filter)
    if not cases and not scaling:
        print(f"bench_core: no case matches {args.filter!r}", file=sys.stderr)
        return 2
    machine = print_machine(args, versions)
    harness, _, _ = median_seconds({"harness": lambda: None}, settings)["harness"]

    report = Report()
    started = time.perf_counter()
    if cases:
        set_threads(libs, args.threads)
        run_main(cases, libs, settings, report)
    if scaling:
        run_scaling(scaling, libs, settings, report)
    set_threads(libs, args.threads)
    print_summary(report, torch is not None, settings)
    wall = time.perf_counter() - started
    print(f"harness cost in every time: ~{fmt_time(harness)} per call; run took {wall:.0f} s")

    if args.json:
        out = {
            **run_info(machine, versions, args, settings),
            "harness_s": harness,
            "wall_s": wall,
            "results": report.rows,
            "scaling": report.scaling,
            "summary": report.summary(),
        }
        write_json(args.json, out)
    return 1 if report.mismatches or report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
