"""The differential fuzzer (``fuzz/``): a bounded CI slice and tests of the fuzzer itself.

The slice runs ``EMBER_FUZZ_CALLS`` calls (default 60 000, about half a minute on two cores)
of seed 0 and fails on any crash, hang or leaked exception, and on any divergence group
from PyTorch that ``fuzz/known_differences.py`` does not explain nor ``fuzz/untriaged.py``
list, printing its reproducer (a new group of differing values only warns: see below).
The long run is ``python -m fuzz --calls 1000000 --jobs 2`` from this directory.
"""

from __future__ import annotations

import os
import warnings

import pytest

from fuzz import report, runner
from fuzz.compare import Rule, compare
from fuzz.generate import make_call, round_to
from fuzz.targets import all_targets

SLICE_CALLS = int(os.environ.get("EMBER_FUZZ_CALLS", "60000"))
# the workers' address-space limit; 0 (none) under AddressSanitizer, whose shadow memory
# reserves terabytes of address space (nox -s sanitize)
MEMORY_GB = float(os.environ.get("EMBER_FUZZ_MEMORY_GB", "8"))
SLICE_SEED = 0
VALUE_KINDS = ("value-mismatch", "mutation-mismatch")


@pytest.fixture(scope="module")
def selftest_summary():
    # 15 s: on a loaded machine a restarted worker's first call (torch's lazy imports) has
    # taken over 5 s, and the sleeping call must still be the only hang
    result = runner.run(
        0, 8, jobs=2, timeout=15.0, calls_module="fuzz.selftest", memory_limit_gb=MEMORY_GB
    )
    return report.summarize(result, "fuzz.selftest")


def _kinds(summary, name):
    return {g.kind for g in summary.groups.values() if g.callable == f"selftest.{name}"}


def test_a_segfault_is_a_crash(selftest_summary):
    assert _kinds(selftest_summary, "segfault") == {"crash"}
    (group,) = [g for g in selftest_summary.groups.values() if g.kind == "crash"]
    # under AddressSanitizer (nox -s sanitize) its handler reports the fault and aborts
    signal = "SIGABRT" if "libasan" in os.environ.get("LD_PRELOAD", "") else "SIGSEGV"
    assert signal in group.example.detail


def test_a_sleeping_call_is_a_hang(selftest_summary):
    assert _kinds(selftest_summary, "sleep") == {"hang"}


def test_a_system_error_is_a_leaked_exception(selftest_summary):
    assert _kinds(selftest_summary, "leak") == {"leaked-exception"}


def test_divergences_are_found_and_calls_resume(selftest_summary):
    assert _kinds(selftest_summary, "differ") == {"value-mismatch"}
    assert _kinds(selftest_summary, "raise") == {"raises-only-in-ember"}
    assert _kinds(selftest_summary, "agree") == set()
    assert selftest_summary.result.calls == 8  # every call ran, the restarts included
    failing = {g.callable for g in selftest_summary.failures}
    assert failing == {f"selftest.{n}" for n in ("segfault", "sleep", "leak", "differ", "raise")}


def test_reproducers_rebuild_the_call(selftest_summary):
    key = ("selftest.differ", "value-mismatch")
    text = selftest_summary.reproducers[key]["ember"]
    assert "a0 = ember.tensor([1.0, 2.0], dtype=ember.float32)" in text
    assert text.rstrip().endswith("r = fuzz.selftest.differ(a0)")


def test_calls_are_deterministic_and_cover_every_target():
    assert make_call(7, 123).src("ember") == make_call(7, 123).src("ember")
    assert make_call(7, 123).src("ember") != make_call(8, 123).src("ember")
    names = {make_call(0, i).target.name for i in range(20000)}
    assert len(names) > 0.95 * len(all_targets())


def test_values_are_rounded_to_their_dtype():
    assert round_to("bfloat16", [1.00390625 + 2**-9]) == [1.0078125]
    assert round_to("float16", [70000.0]) == [float("inf")]


def test_compare_tolerates_what_it_should_and_nothing_else():
    import torch

    import ember

    e = ember.tensor([1.0, float("nan")], dtype=ember.float32)
    assert compare(e, torch.tensor([1.0 + 1e-6, float("nan")]), Rule()) is None
    assert compare(e, torch.tensor([1.1, float("nan")]), Rule())[0] == "value"
    assert compare(e, torch.tensor([1.0, float("nan")], dtype=torch.float64), Rule())[0] == "dtype"
    assert compare(e, torch.tensor([5.0, 6.0]), Rule(random=True)) is None
    assert compare((e,), [torch.tensor([1.0, 2.0])] * 2, Rule())[0] == "structure"


# the package's filterwarnings = error would turn the warnings below into a failure
@pytest.mark.filterwarnings("default:== :UserWarning")
def test_fuzz_slice():
    result = runner.run(
        SLICE_SEED, SLICE_CALLS, jobs=2, timeout=10.0, time_budget=600.0, memory_limit_gb=MEMORY_GB
    )
    summary = report.summarize(result)
    assert result.calls > 0.9 * SLICE_CALLS, "the slice ran out of its time budget"
    # A new group of differing values may come from one machine's vector paths (the last
    # bits of float32 math differ between AVX2 and AVX-512): warned here, failed by the long
    # run (nox -s fuzz). Everything else is deterministic and fails the slice.
    numeric = [g for g in summary.new_divergences if g.kind in VALUE_KINDS]
    for g in numeric:
        warnings.warn(report.format_group(g, summary.reproducers.get(g.key)), stacklevel=1)
    failures = [g for g in summary.failures if g not in numeric]
    if failures:
        text = "\n".join(report.format_group(g, summary.reproducers.get(g.key)) for g in failures)
        pytest.fail(f"{len(failures)} failing groups in {result.calls} calls:\n{text}")
