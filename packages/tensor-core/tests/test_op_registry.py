"""The op registry (op_registry.py) against the schema and against PyTorch.

- every op name of ops.yaml has a row, and every row names an op of ops.yaml;
- the rows agree with the schema (dtypes, differentiability) and say which autograd test
  checks each differentiable op's gradient (and that file, in this repository, mentions it);
- the skips, the shape-only comparisons and the expected failures are listed with their
  reasons and counted: the counts below may only shrink;
- every op with per-device kernels is exercised by a CUDA test file (test_cuda_*.py:
  test_cuda_ops_registry.py runs every such row on the device against the CPU);
- each row runs on Ember and on torch, for each of its dtypes, on the same sample inputs:
  the same outcome (a result, or an error on both), and results of the same dtype, shape
  and values (within the central tolerance table, conftest.TOLERANCES).
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path

import pytest
import torch

import ember_tensor as et
from op_registry import (
    GRAD_FILES,
    ROWS,
    SCHEMA,
    Row,
    compare_results,
    sample_args,
    unary_math_ops,
)

TESTS = Path(__file__).resolve().parent
AUTOGRAD_TESTS = TESTS.parents[1] / "autograd" / "tests"  # in a checkout of the monorepo

# The counts may only shrink: a row that stops being skipped lowers them; a new skip must
# raise them here, in review, with its reason in its row.
SKIPPED_ROWS = 4  # the fused LSTM and GRU recurrences: Ember-only layouts (test_rnn_ops.py)
SHAPE_ONLY_ROWS = 11
EXPECTED_FAILURES = 5


# ---------------------------------------------------------------------------------------------
# the table against the schema


def _checkout_op_names() -> set[str]:
    """The op names of this checkout's ops.yaml (empty outside the monorepo)."""
    ops_yaml = TESTS.parent / "ops.yaml"
    if not ops_yaml.is_file():
        return set()
    return set(re.findall(r"^- name: *(\w+)", ops_yaml.read_text(), re.MULTILINE))


def test_every_op_of_the_schema_has_a_row(capsys):
    names = [row.name for row in ROWS]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    missing = sorted(set(SCHEMA) - set(names))
    unknown = set(names) - set(SCHEMA)
    # ops.yaml of the checkout may be ahead of the installed core: their rows wait for it
    ahead = sorted(unknown & _checkout_op_names())
    unknown = sorted(unknown - set(ahead))
    assert not missing, f"ops of ops.yaml without a row in op_registry.ROWS: {missing}"
    assert not unknown, f"rows for ops that ops.yaml does not declare: {unknown}"
    assert not duplicates, f"ops with more than one row: {duplicates}"
    if ahead:
        with capsys.disabled():
            print(f"\nrows of ops in ops.yaml but not in the installed core (rebuild it): {ahead}")


def _in_core(row: Row) -> bool:
    if not row.entries:
        pytest.skip(f"{row.name} is not in the installed core yet (ops.yaml is ahead: rebuild)")
    return True


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_row_agrees_with_the_schema(row: Row):
    _in_core(row)
    assert bool(row.skip) != bool(row.samples), "a row has samples or a reason to skip"
    assert set(row.test_dtypes) <= set(row.schema_dtypes), "dtypes the schema does not list"
    assert (row.dtypes is None) == (row.dtypes_why is None), "fewer dtypes, and why"
    for sample in row.samples:
        assert set(sample.xfail_dtypes or ()) <= set(row.test_dtypes)
    assert set(row.xfail) <= {*row.test_dtypes, "*"}
    assert all(row.xfail.values()), "every expected failure carries its reason"
    if row.differentiable:
        assert bool(row.grad) != bool(row.no_grad), (
            "a differentiable op names the autograd test of its gradient (grad=) or says "
            "why it has none (no_grad=)"
        )
        assert row.grad is None or row.grad in GRAD_FILES
    else:
        assert row.grad is None and row.no_grad is None, "the schema says: not differentiable"


def _mentions(text: str, name: str) -> bool:
    """text names the op (linalg_<x> is ember.linalg.<x>; in-place forms end in _)."""
    short = name.removeprefix("linalg_")
    return bool(re.search(rf"\b({re.escape(name)}|{re.escape(short)})_?\b", text))


@pytest.mark.skipif(not AUTOGRAD_TESTS.is_dir(), reason="needs the monorepo's autograd tests")
def test_the_named_gradient_tests_cover_their_ops():
    texts = {name: (AUTOGRAD_TESTS / name).read_text() for name in GRAD_FILES}
    stale = [
        f"{row.name} ({row.grad})"
        for row in ROWS
        if row.grad and row.entries and not _mentions(texts[row.grad], row.name)
    ]
    assert not stale, f"rows whose gradient test does not mention the op: {stale}"


def test_skips_and_expected_failures_are_counted(capsys):
    skipped = {row.name: row.skip for row in ROWS if row.skip}
    shape_only = {row.name: row.shape_only for row in ROWS if row.shape_only}
    xfails = {f"{row.name}[{d}]": r for row in ROWS for d, r in row.xfail.items()}
    xfails.update(
        (f"{row.name}, sample {i} [{', '.join(s.xfail_dtypes or ('every dtype',))}]", s.xfail)
        for row in ROWS
        for i, s in enumerate(row.samples)
        if s.xfail
    )
    xfails.update((f"{row.name} on CUDA", row.cuda_xfail) for row in ROWS if row.cuda_xfail)
    with capsys.disabled():
        print(f"\nop registry: {len(ROWS)} rows, {len(skipped)} skipped, "
              f"{len(shape_only)} compared by dtype and shape only, {len(xfails)} expected "
              "failures")
        for title, table in (("skipped", skipped), ("shape only", shape_only),
                             ("expected failures", xfails)):
            for name, reason in table.items():
                print(f"  {title}: {name}: {reason}")
    assert len(skipped) <= SKIPPED_ROWS, skipped
    assert len(shape_only) <= SHAPE_ONLY_ROWS, shape_only
    assert len(xfails) <= EXPECTED_FAILURES, xfails
    assert (len(skipped), len(shape_only), len(xfails)) == (
        SKIPPED_ROWS, SHAPE_ONLY_ROWS, EXPECTED_FAILURES
    ), "fewer than counted: lower the counts at the top of test_op_registry.py"


# ---------------------------------------------------------------------------------------------
# CUDA: every op with per-device kernels is exercised by a CUDA test file

REGISTRY_CUDA_FILE = "test_cuda_ops_registry.py"  # runs every kernel row on the device
# the registry's queries that a hand-written CUDA file parametrizes over instead of naming
# the ops: each op of a query it calls counts as exercised by name
QUERIES = {"unary_math_ops()": unary_math_ops}


def _hand_written_cuda_tests() -> str:
    """The hand-written CUDA test files that run ops on the device under test
    (cuda_testing.DEV)."""
    paths = sorted(p for p in TESTS.glob("test_cuda_*.py") if p.name != REGISTRY_CUDA_FILE)
    texts = [p.read_text() for p in paths]
    return "\n".join(t for t in texts if "from cuda_testing import" in t)


def _exercised(row: Row, text: str) -> bool:
    if row.cuda_via:
        return row.cuda_via in text
    names = [row.name]
    if row.name.startswith("linalg_"):  # ember.linalg.<name>, as in torch
        names.append(row.name.removeprefix("linalg_"))
    return any(
        re.search(rf"(\.{re.escape(n)}_?\(|[\"']{re.escape(n)}[\"'])", text) for n in names
    )


def test_every_cuda_kernel_is_exercised_by_a_cuda_test_file(capsys):
    """Each op with per-device kernels runs on the device in test_cuda_ops_registry.py (its
    row, unless skipped) or in a hand-written test_cuda_*.py file (found by its name)."""
    assert (TESTS / REGISTRY_CUDA_FILE).is_file()
    text = _hand_written_cuda_tests()
    kernels = [row for row in ROWS if row.cuda == "kernel"]
    assert len(kernels) > 100
    by_hand = {row.name for row in kernels if _exercised(row, text)}
    by_hand |= {name for call, query in QUERIES.items() if call in text for name in query()}
    by_registry = {row.name for row in kernels if not row.skip}
    missing = sorted(row.name for row in kernels if row.name not in by_hand | by_registry)
    assert not missing, f"ops with CUDA kernels that no test_cuda_*.py file runs: {missing}"
    with capsys.disabled():
        print(f"\nCUDA kernels: {len(kernels)} ops; run only by {REGISTRY_CUDA_FILE}, by no "
              f"hand-written CUDA test: {sorted(by_registry - by_hand)}")
    stale = [row.name for row in ROWS if (row.cuda_via or row.cuda_xfail) and row.cuda != "kernel"]
    assert not stale, f"cuda_via or cuda_xfail on ops without per-device kernels: {stale}"
    assert all(_exercised(row, text) for row in ROWS if row.cuda_via), "stale cuda_via"


# ---------------------------------------------------------------------------------------------
# every row against torch


def _cases():
    for row in ROWS:
        if row.skip:
            continue
        for dt in row.test_dtypes:
            reason = row.xfail.get(dt) or row.xfail.get("*")
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(row, dt, id=f"{row.name}-{dt}", marks=marks)


@pytest.mark.parametrize("row", [r for r in ROWS if not r.skip], ids=lambda r: r.name)
def test_every_sample_runs_on_torch_for_some_dtype(row: Row):
    """A sample that torch rejects for every dtype checks nothing but an error."""
    _in_core(row)
    broken = []
    for i, sample in enumerate(row.samples):
        for dt in row.test_dtypes:
            built = sample_args(sample, dt, 0)["torch"]
            try:
                row.call(torch, *built)
                break
            except Exception:  # noqa: BLE001, S112 - try the next dtype
                continue
        else:
            broken.append(f"sample {i} {sample!r}")
    assert not broken, f"{row.name}: torch rejects these for every dtype: {broken}"


def _check_sample(row: Row, built: dict, where: str):
    try:
        want = row.call(torch, *built["torch"])
    except Exception as e:  # noqa: BLE001 - the type is the expectation
        # NotImplementedError ("kernel not implemented for dtype") is a RuntimeError
        # subclass: Ember may raise either; any other type must match
        expected = RuntimeError if isinstance(e, NotImplementedError) else type(e)
        with pytest.raises(expected):
            row.call(et, *built["ember_tensor"])
        return
    got = row.call(et, *built["ember_tensor"])
    compare_results(row, got, want, where)


@pytest.mark.parametrize(("row", "dt"), list(_cases()))
def test_op_matches_torch(row: Row, dt: str):
    known = []
    for i, sample in enumerate(row.samples):
        where = f"{row.name}, sample {i} {sample!r}, {dt}"
        built = sample_args(sample, dt, zlib.crc32(f"{row.name}/{dt}/{i}".encode()))
        if not sample.fails_for(dt):
            _check_sample(row, built, where)
            continue
        try:
            _check_sample(row, built, where)
        except Exception:  # noqa: BLE001 - the known disagreement
            known.append(sample.xfail)
        else:
            pytest.fail(f"{where} passes: remove its XS (expected failure: {sample.xfail})")
    if known:
        pytest.xfail("; ".join(known))
