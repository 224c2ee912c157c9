"""Ember's score on PyTorch's ModuleInfo database, by category (activation, loss, conv,
pooling, padding, normalization, rnn, transformer/attention, embedding, other): the share of
the ModuleInfos that PyTorch passes under the same harness (torch against torch) that
ember_nn passes: float64 outputs, buffers after the forward and gradients of the inputs and
parameters, in training and eval mode. See packages/ember/tests/moduleinfo/harness.py.

    python tools/moduleinfo_score.py                  # the table
    python tools/moduleinfo_score.py --failures       # and why each ModuleInfo fails
    python tools/moduleinfo_score.py --write-passing  # record the passing ones for the tests
    python tools/moduleinfo_score.py --only Conv      # ModuleInfos whose key starts so

Needs torch==2.13.0 (the CPU wheel) and expecttest (module_db imports it).
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
PASSING = ROOT / "packages" / "ember" / "tests" / "moduleinfo" / "passing.txt"


def _options() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None,
                    help="samples per ModuleInfo and mode, spread evenly (default: all)")
    ap.add_argument("--only", default="",
                    help="ModuleInfos whose key starts with this (comma-separated: any of these)")
    ap.add_argument("--failures", action="store_true",
                    help="list why each ModuleInfo fails or is not scored")
    ap.add_argument("--write-passing", action="store_true",
                    help=f"write the passing ModuleInfos to {PASSING.relative_to(ROOT)}")
    return ap.parse_args()


def _table(scores: list, seconds: float, limit: int | None) -> None:
    scored = collections.Counter(s.category for s in scores if s.scored)
    passed = collections.Counter(s.category for s in scores if s.passed)
    samples = "all samples" if limit is None else f"up to {limit} samples per ModuleInfo and mode"
    print(f"ModuleInfo score ({seconds:.0f} s, {samples})\n")
    print("| category | scored | Ember passes | share |\n| --- | ---: | ---: | ---: |")
    for c in sorted(scored):
        print(f"| {c} | {scored[c]} | {passed[c]} | {100 * passed[c] / scored[c]:.0f}% |")
    total, ok = sum(scored.values()), sum(passed.values())
    print(f"| all | {total} | {ok} | {100 * ok / max(total, 1):.0f}% |")


def _failures(scores: list, excluded: dict[str, str]) -> None:
    print()
    for s in scores:
        if s.scored and not s.passed:
            print(f"{s.key}: {s.failure}")
    unscored = [s for s in scores if not s.scored]
    if unscored:
        print("\nNot scored (torch against torch: no comparable sample):")
        for s in unscored:
            print(f"{s.key}: {s.reason or 'no samples'}")
    if excluded:
        print("\nExcluded:")
        for key, why in excluded.items():
            print(f"{key}: {why}")


def _write_passing(keys: list[str], prefixes: tuple[str, ...]) -> None:
    """PASSING rewritten: keys, and the entries of the ModuleInfos this run did not cover
    (outside --only's prefixes)."""
    kept = []
    if PASSING.exists() and prefixes != ("",):
        lines = (line.strip() for line in PASSING.read_text().splitlines())
        kept = [k for k in lines if k and not k.startswith(("#", *prefixes))]
    PASSING.write_text(
        "# ModuleInfos ember_nn passes (tools/moduleinfo_score.py --write-passing);\n"
        "# test_moduleinfo.py holds each to it. Regenerate after adding modules.\n"
        + "".join(f"{k}\n" for k in sorted(set(kept) | set(keys)))
    )


def main() -> int:
    opts = _options()
    warnings.simplefilter("ignore")
    from moduleinfo import harness

    prefixes = tuple(opts.only.split(","))
    infos = {k: m for k, m in harness.scored_modules().items() if k.startswith(prefixes)}
    excluded = {k: why for k, why in harness.excluded_modules().items()
                if k.startswith(prefixes)}
    scores = []
    start = time.perf_counter()
    for i, (key, info) in enumerate(sorted(infos.items())):
        print(f"\r[{i + 1}/{len(infos)}] {key[:50]:<50}", end="", file=sys.stderr, flush=True)
        scores.append(harness.score(info, limit=opts.limit))
    print(file=sys.stderr)
    _table(scores, time.perf_counter() - start, opts.limit)
    if opts.failures:
        _failures(scores, excluded)
    if opts.write_passing:
        _write_passing([s.key for s in scores if s.passed], prefixes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
