"""Command line: ``python -m fuzz --calls N --seed S --jobs J [--time-budget SECONDS]
[--report out.json]``, run from ``packages/ember/tests``.

Prints a progress line on stderr every few seconds and, at the end, the summary table with
every failing group and its reproducer. ``--replay I,J,...`` runs those calls in order, in
this process, and prints their reproducers and outcomes (a crash found only after a
sequence of calls, such as heap corruption, is replayed this way). Exit status: 0 when
there are no failures (crashes, hangs, leaked exceptions, divergence groups not in
``known_differences`` nor ``untriaged``), else 1. ``--write-untriaged`` lists the divergence
groups of this run that ``known_differences`` does not explain in ``untriaged.py``.
"""

from __future__ import annotations

import argparse
import sys

from . import report, runner


def _progress(result: runner.RunResult, elapsed: float) -> None:
    kinds = [f.kind for f in result.findings]
    bad = sum(k in report.FATAL for k in kinds)
    rate = result.calls / elapsed if elapsed else 0.0
    sys.stderr.write(
        f"\r[fuzz] {result.calls} calls  {rate:.0f}/s  {elapsed:.0f}s  "
        f"fatal {bad}  findings {len(kinds)}  restarts {result.restarts}   "
    )
    sys.stderr.flush()


def _replay(seed: int, indices: list[int]) -> int:
    import warnings

    from .execute import run_call
    from .generate import make_call

    warnings.simplefilter("ignore")
    for index in indices:
        call = make_call(seed, index)
        print(f"# call {index} of seed {seed}: {call.target.name}")
        print(call.src("ember"))
        print()
        print(call.src("torch"))
        print(f"# -> {run_call(call)}\n", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per call")
    ap.add_argument("--time-budget", type=float, default=None, help="stop after SECONDS")
    ap.add_argument("--memory-limit-gb", type=float, default=8.0)
    ap.add_argument("--report", help="write the JSON report here")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument(
        "--replay", help="run calls I[,J,...] in order, in this process, and print them"
    )
    ap.add_argument(
        "--write-untriaged",
        action="store_true",
        help="rewrite untriaged.py with every divergence group of this run not explained",
    )
    args = ap.parse_args(argv)
    if args.replay is not None:
        return _replay(args.seed, [int(i) for i in args.replay.split(",")])
    result = runner.run(
        args.seed,
        args.calls,
        jobs=args.jobs,
        timeout=args.timeout,
        time_budget=args.time_budget,
        memory_limit_gb=args.memory_limit_gb,
        progress=_progress,
    )
    sys.stderr.write("\n")
    summary = report.summarize(result)
    print(report.format_summary(summary, top=args.top))
    if args.report:
        report.write_json(summary, args.report)
    if args.write_untriaged:
        import os

        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "untriaged.py")
        n = report.write_untriaged(summary, path)
        print(f"wrote {n} groups to {path}")
        return 1 if any(g.kind in report.FATAL for g in summary.groups.values()) else 0
    return 1 if summary.failures else 0


if __name__ == "__main__":
    sys.exit(main())
