"""Grouping of findings, the allowlist check, the summary table and the JSON report.

Findings are grouped by ``(callable, kind)``; each group keeps its count and the first call
as an example, with its reproducer (regenerated from the seed and index). A group is a
*failure* when its kind is one of ``FATAL`` (crash, hang, leaked exception, a worker that
died of its own error, arguments or results that could not be handled) or when it is a
divergence not listed in ``known_differences.KNOWN`` nor awaiting triage in
``untriaged.UNTRIAGED`` (the groups an earlier run found and nobody has yet explained or
fixed: ``python -m fuzz --write-untriaged`` rewrites that file from a run). Explained
divergences (documented differences recognised by ``explain``) and exception-type mismatches
are reported apart.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from .known_differences import KNOWN
from .runner import Finding, RunResult
from .untriaged import UNTRIAGED

FATAL = ("crash", "hang", "leaked-exception", "worker-error", "build-error", "compare-error")
TORCH_SIDE = ("torch-crash", "torch-hang")


@dataclass
class Group:
    callable: str
    kind: str
    count: int = 0
    example: Finding | None = None
    error_pairs: Counter = field(default_factory=Counter)

    @property
    def key(self) -> tuple[str, str]:
        return (self.callable, self.kind)


@dataclass
class Summary:
    result: RunResult
    groups: dict[tuple[str, str], Group]
    reproducers: dict[tuple[str, str], dict[str, str]]

    def count(self, *kinds: str) -> int:
        return sum(g.count for g in self.groups.values() if g.kind in kinds)

    @property
    def divergences(self) -> list[Group]:
        return [g for g in self.groups.values() if _is_divergence(g.kind)]

    @property
    def new_divergences(self) -> list[Group]:
        return [g for g in self.divergences if g.key not in KNOWN and g.key not in UNTRIAGED]

    @property
    def untriaged(self) -> list[Group]:
        """Divergences found before and not yet explained or fixed (``untriaged.py``)."""
        return [g for g in self.divergences if g.key not in KNOWN and g.key in UNTRIAGED]

    @property
    def failures(self) -> list[Group]:
        fatal = [g for g in self.groups.values() if g.kind in FATAL]
        return fatal + self.new_divergences


def _is_divergence(kind: str) -> bool:
    return kind.startswith("raises-only-in-") or kind.endswith("-mismatch")


def _group_kind(f: Finding) -> str:
    if f.kind == "ok" and f.error_types:
        return "error-type"
    if f.kind == "explained":
        return f"explained: {f.detail}"
    return f.kind


def summarize(result: RunResult, calls_module: str = "fuzz.generate") -> Summary:
    """Group the findings of ``result`` and render one reproducer per group."""
    groups: dict[tuple[str, str], Group] = {}
    for f in result.findings:
        kind = _group_kind(f)
        g = groups.setdefault((f.callable, kind), Group(f.callable, kind))
        g.count += 1
        if g.example is None:
            g.example = f
        if f.error_types:
            g.error_pairs["/".join(f.error_types)] += 1
    make_call = __import__(calls_module, fromlist=["make_call"]).make_call
    reproducers = {}
    for key, g in groups.items():
        if g.kind == "error-type" or g.kind.startswith("explained"):
            continue
        call = make_call(result.seed, g.example.index)
        reproducers[key] = {"ember": call.src("ember"), "torch": call.src("torch")}
    return Summary(result, groups, reproducers)


def to_json(summary: Summary) -> dict:
    r = summary.result
    out = {
        "seed": r.seed,
        "calls": r.calls,
        "elapsed_s": round(r.elapsed, 1),
        "calls_per_s": round(r.calls_per_second, 1),
        "restarts": r.restarts,
        "counts": {
            "crashes": summary.count("crash"),
            "hangs": summary.count("hang"),
            "leaked_exceptions": summary.count("leaked-exception"),
            "worker_errors": summary.count("worker-error"),
            "build_errors": summary.count("build-error"),
            "compare_errors": summary.count("compare-error"),
            "torch_crashes": summary.count("torch-crash"),
            "torch_hangs": summary.count("torch-hang"),
            "divergent_calls": sum(g.count for g in summary.divergences),
            "divergence_groups": len(summary.divergences),
            "new_divergence_groups": len(summary.new_divergences),
        },
        "groups": [],
    }
    for key, g in sorted(summary.groups.items(), key=lambda kv: (-kv[1].count, kv[0])):
        ex = g.example
        out["groups"].append(
            {
                "callable": g.callable,
                "kind": g.kind,
                "count": g.count,
                "known": KNOWN.get(key),
                "index": ex.index,
                "detail": ex.detail,
                "ember_error": ex.ember_error,
                "torch_error": ex.torch_error,
                "error_pairs": dict(g.error_pairs),
                "reproducer": summary.reproducers.get(key),
            }
        )
    return out


def write_json(summary: Summary, path: str) -> None:
    with open(path, "w") as fh:
        json.dump(to_json(summary), fh, indent=1)


def format_group(g: Group, reproducer: dict | None) -> str:
    ex = g.example
    lines = [f"== {g.callable} [{g.kind}] x{g.count} (call {ex.index})"]
    for label, text in (
        ("detail", ex.detail),
        ("ember", ex.ember_error),
        ("torch", ex.torch_error),
    ):
        if text:
            lines.append(f"   {label}: {text.strip()[-600:]}")
    if reproducer:
        lines.append("   --- ember ---")
        lines += ["   " + s for s in reproducer["ember"].splitlines()]
        lines.append("   --- torch ---")
        lines += ["   " + s for s in reproducer["torch"].splitlines()]
    return "\n".join(lines)


def format_summary(summary: Summary, top: int = 10) -> str:
    """The summary table, then the failing groups (all of them) and the top other groups."""
    data = to_json(summary)
    c = data["counts"]
    rows = [
        ("calls", data["calls"]),
        ("calls/s", data["calls_per_s"]),
        ("elapsed s", data["elapsed_s"]),
        ("crashes", c["crashes"]),
        ("hangs", c["hangs"]),
        ("leaked exceptions", c["leaked_exceptions"]),
        ("worker/build/compare errors",
         f"{c['worker_errors']}/{c['build_errors']}/{c['compare_errors']}"),
        ("torch crashes/hangs", f"{c['torch_crashes']}/{c['torch_hangs']}"),
        ("divergent calls", c["divergent_calls"]),
        ("divergence groups (new)", f"{c['divergence_groups']} ({c['new_divergence_groups']})"),
        ("  awaiting triage", len(summary.untriaged)),
        ("explained (documented)", sum(g.count for g in summary.groups.values()
                                       if g.kind.startswith("explained"))),
        ("error-type mismatches", summary.count("error-type")),
    ]  # fmt: skip
    width = max(len(k) for k, _ in rows)
    lines = [f"{k:<{width}}  {v}" for k, v in rows]
    failures = summary.failures
    if failures:
        lines.append(f"\nFAILURES ({len(failures)} groups):")
        for g in sorted(failures, key=lambda g: -g.count):
            lines.append(format_group(g, summary.reproducers.get(g.key)))
    known = sorted((g for g in summary.divergences if g.key in KNOWN), key=lambda g: -g.count)
    if known:
        lines.append(f"\nKnown divergence groups ({len(known)}), top {top}:")
        for g in known[:top]:
            lines.append(f"   {g.count:>6}  {g.callable} [{g.kind}]: {KNOWN[g.key]}")
    return "\n".join(lines)


def write_untriaged(summary: Summary, path: str) -> int:
    """Writes ``untriaged.py`` listing every divergence group of ``summary`` that
    ``KNOWN`` does not explain (those a later run may not report again); returns how many."""
    keys = sorted({g.key for g in summary.divergences if g.key not in KNOWN})
    lines = [
        '"""Divergence groups the fuzzer found that are not yet explained or fixed: each is',
        "either a bug to fix (then a regression test) or a difference to document in",
        "docs/differences-from-pytorch.md and ``known_differences.py``. Listed here they are",
        "reported, not failures, so that the CI slice fails only on new groups. Generated by",
        '``python -m fuzz --write-untriaged``; shrink it by hand as groups are triaged."""',
        "",
        "UNTRIAGED: frozenset[tuple[str, str]] = frozenset({",
        *(f"    ({c!r}, {k!r})," for c, k in keys),
        "})",
        "",
    ]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return len(keys)
