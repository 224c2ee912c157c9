"""Ember's score on PyTorch's OpInfo database, by group (core, special, linalg, fft,
nn.functional): the share of the OpInfos that PyTorch passes under the same harness (torch
against torch) that Ember passes, forward (float32, float64, int64, bool samples) and
float64 gradient. See packages/ember/tests/opinfo/harness.py.

    python tools/opinfo_score.py                  # the table
    python tools/opinfo_score.py --failures       # and why each OpInfo fails
    python tools/opinfo_score.py --write-passing  # record the passing OpInfos for the tests
    python tools/opinfo_score.py --only linalg.   # OpInfos whose key starts with a prefix

Needs torch==2.13.0 (the CPU wheel) and expecttest (op_db imports it).
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import sys
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "packages" / "ember" / "tests"))
PASSING = ROOT / "packages" / "ember" / "tests" / "opinfo" / "passing.txt"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=3, help="samples per OpInfo and dtype")
    ap.add_argument("--only", default="",
                    help="OpInfos whose key starts with this (comma-separated: any of these)")
    ap.add_argument("--failures", action="store_true", help="list why each OpInfo fails")
    ap.add_argument("--write-passing", action="store_true",
                    help=f"write the passing OpInfos to {PASSING.relative_to(ROOT)}")
    opts = ap.parse_args()
    warnings.simplefilter("ignore")
    from opinfo import harness

    prefixes = tuple(opts.only.split(","))
    ops = {k: op for k, op in harness.scored_ops().items() if k.startswith(prefixes)}
    scored = collections.Counter()
    passed = collections.Counter()
    failures: dict[str, str] = {}
    passing: list[str] = []
    start = time.perf_counter()
    for i, (key, op) in enumerate(sorted(ops.items())):
        print(f"\r[{i + 1}/{len(ops)}] {key[:50]:<50}", end="", file=sys.stderr, flush=True)
        got = harness.score(op, limit=opts.limit)
        if not got.scored:
            continue  # the harness cannot score it (torch against torch differs)
        scored[got.group] += 1
        if got.passed:
            passed[got.group] += 1
            passing.append(key)
        else:
            failures[key] = got.failure or "no check scored"
    print(file=sys.stderr)
    print(f"OpInfo score ({time.perf_counter() - start:.0f} s, {opts.limit} samples per "
          f"OpInfo and dtype)\n")
    print("| group | scored | Ember passes | share |\n| --- | ---: | ---: | ---: |")
    for g in sorted(scored):
        print(f"| {g} | {scored[g]} | {passed[g]} | {100 * passed[g] / scored[g]:.0f}% |")
    total, ok = sum(scored.values()), sum(passed.values())
    print(f"| all | {total} | {ok} | {100 * ok / max(total, 1):.0f}% |")
    if opts.failures:
        print()
        for key, why in sorted(failures.items()):
            print(f"{key}: {why}")
    if opts.write_passing:
        PASSING.write_text(
            "# OpInfos Ember passes (tools/opinfo_score.py --write-passing); test_opinfo.py\n"
            "# holds each to it. Regenerate after adding ops.\n" + "\n".join(passing) + "\n"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
