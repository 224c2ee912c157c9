"""PyTorch's OpInfo database against Ember (tests/opinfo/harness.py): every OpInfo that
Ember passed when opinfo/passing.txt was written must still pass (values, dtypes and shapes
of the forward on float32, float64, int64 and bool samples, and float64 gradients, against
torch in this run), and the harness itself must catch a wrong op. The score by group comes
from tools/opinfo_score.py."""

from __future__ import annotations

import pathlib
import warnings

import pytest

pytest.importorskip("expecttest", reason="PyTorch's op_db imports expecttest (pip install "
                                         "expecttest)")

import ember  # noqa: E402
from opinfo import harness, skips  # noqa: E402

PASSING = [line.strip() for line in
           (pathlib.Path(__file__).parent / "opinfo" / "passing.txt").read_text().splitlines()
           if line.strip() and not line.startswith("#")]

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.fixture(scope="module")
def ops():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return harness.scored_ops()


@pytest.mark.parametrize("key", PASSING)
def test_opinfo_still_passes(ops, key):
    assert key in ops, f"{key} is no longer an OpInfo of torch's op_db (or is now skipped)"
    got = harness.score(ops[key])
    assert got.scored, f"{key}: torch no longer passes the harness against itself"
    assert got.passed, f"{key}: {got.failure}"


def test_every_skip_rule_matches_an_opinfo_and_gives_a_reason():
    names = {op.name for op in harness.op_db()}
    for prefix, why in skips.PREFIXES:
        assert why and any(n.startswith(prefix) for n in names), prefix
    for name, why in skips.NAMES.items():
        assert why and name in names, name


def test_the_harness_catches_a_wrong_op(ops, monkeypatch):
    """exp computed as expm1, and a gradient doubled: both scored as failures."""
    assert harness.score(ops["exp"]).passed
    monkeypatch.setattr(ember, "exp", ember.expm1)
    got = harness.score(ops["exp"])
    assert not got.passed and "values differ" in got.failure
    monkeypatch.undo()
    real_grad = ember.autograd.grad
    monkeypatch.setattr(ember.autograd, "grad", lambda *a, **k: [
        None if g is None else g * 2 for g in real_grad(*a, **k)])
    got = harness.score(ops["sin"])
    assert not got.passed and got.failure.startswith("grad: fail")


def test_compare_checks_dtype_shape_and_values():
    import torch

    t = torch.tensor([1.0, 2.0])
    assert harness.compare(ember.tensor([1.0, 2.0]), t) is None
    assert "dtype" in harness.compare(ember.tensor([1.0, 2.0], dtype=ember.float64), t)
    assert "shape" in harness.compare(ember.tensor([[1.0, 2.0]]), t)
    assert "values differ" in harness.compare(ember.tensor([1.0, 2.5]), t)
    assert "outputs" in harness.compare((ember.tensor([1.0]),), (t, t))
