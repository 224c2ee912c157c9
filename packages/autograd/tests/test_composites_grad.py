"""How autograd records the composites with a Python body (ops.yaml ``composite: python``):
through the ops their bodies call (atan2, elu, ...), or, for those that derivatives.yaml gives
an entry (hardtanh, binary_cross_entropy), as one node with that entry's formula, exactly
like an op with kernels: in-place writes, views, saved-value checks, no_grad, forward mode.

Their gradients are checked against finite differences and torch in
test_ops_grad_pointwise.py and packages/tensor-core/tests/test_composites.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_autograd as ea
import ember_autograd.forward_ad as fwAD
import ember_tensor as et
from ember_autograd import codegen, load_generated, recording
from ember_tensor import _composites

BOUNDS = np.array([-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5])


def _x(values=BOUNDS):
    return et.from_numpy(np.array(values, dtype=np.float64)).requires_grad_()


def test_the_composites_with_entries_are_recorded_as_one():
    table = load_generated.load("rules")
    assert set(table.COMPOSITES) == {"binary_cross_entropy", "hardtanh", "linalg_pinv",
                                     "scatter_reduce"}
    assert _composites._AS_ONE == frozenset(table.COMPOSITES)
    _, entries, _ = codegen.generate(strict=True)
    assert all(entries[k].op.body == "python" for k in table.COMPOSITES)


def test_formula_path_one_node_with_the_entrys_gradient():
    x = _x()
    y = et.hardtanh(x)
    assert y.grad_fn.name() == "HardtanhBackward0"
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"  # x itself
    (g,) = ea.grad(y.sum(), x)
    np.testing.assert_array_equal(g.numpy(), [0, 0, 1, 1, 1, 0, 0])  # none at the bounds
    p = et.from_numpy(np.array([0.0, 0.3, 1.0])).requires_grad_()
    loss = et.binary_cross_entropy(p, et.from_numpy(np.array([0.0, 1.0, 0.0])))
    assert loss.grad_fn.name() == "BinaryCrossEntropyBackward0"
    assert np.isfinite(ea.grad(loss, p)[0].numpy()).all()


def test_the_body_records_nothing_in_the_formula_path():
    seen = []
    inner = et._get_autograd_hook()

    def spy(op, kind, args, result):
        seen.append((op, kind))
        return inner(op, kind, args, result)

    et._set_autograd_hook(spy)
    try:
        et.hardtanh(_x(), -0.5, 0.5)
        et.relu6(_x())  # no entry: its body's ops, among them hardtanh (one node)
    finally:
        et._set_autograd_hook(inner)
    assert seen == [("hardtanh", "function"), ("hardtanh", "function")]


def test_ops_path_without_an_entry(monkeypatch):
    """Without an entry (or a provider that records none as one), the body's ops are
    recorded, as for every other Python composite: the gradient of the composition."""
    assert et.elu(_x()).grad_fn.name() == "WhereBackward0"
    monkeypatch.setattr(_composites, "_AS_ONE", frozenset())
    x = _x()
    y = et.hardtanh(x)
    assert y.grad_fn.name() == "ClampBackward0"
    (g,) = ea.grad(y.sum(), x)
    np.testing.assert_array_equal(g.numpy(), [0, 1, 1, 1, 1, 1, 0])  # clamp's, at the bounds


def test_no_node_without_grad_and_in_no_grad():
    assert et.hardtanh(et.ones(3)).grad_fn is None
    with ea.no_grad():
        y = et.hardtanh(_x())
    assert not y.requires_grad and y.grad_fn is None


def test_result_is_never_an_input():
    x = _x([0.2, 0.4])
    y = et.hardtanh(x)  # the clamp of a tensor inside the bounds: a new tensor all the same
    assert y is not x and y.data_ptr() != x.data_ptr()


def test_inplace_is_recorded_as_an_inplace_op():
    x = _x()
    y = x * 2
    v = y.data_ptr()
    assert y.hardtanh_(-1.0, 1.0) is y and y.data_ptr() == v
    assert y.grad_fn.name() == "HardtanhBackward0"
    (g,) = ea.grad(y.sum(), x)
    np.testing.assert_array_equal(g.numpy(), [0, 0, 0, 2, 0, 0, 0])  # 2x at -1, 1: bounds
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        _x().hardtanh_()
    # the saved result, written again afterwards: the version check names the op
    z = x * 1
    z.hardtanh_()
    z.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_inplace_into_a_view():
    x = _x()
    y = x * 1
    y[2:5].hardtanh_(-0.25, 0.25)  # CopySlices: the rest of y passes its gradient unchanged
    (g,) = ea.grad(y.sum(), x)
    np.testing.assert_array_equal(g.numpy(), [1, 1, 0, 1, 0, 1, 1])
    tx = torch.from_numpy(BOUNDS.copy()).requires_grad_()
    ty = tx * 1
    torch.nn.functional.hardtanh_(ty[2:5], -0.25, 0.25)
    ty.sum().backward()
    np.testing.assert_array_equal(g.numpy(), tx.grad.numpy())


def test_inplace_through_the_ops_keeps_what_they_saved():
    """An in-place variant recorded through its ops computes from a copy of self: the write
    does not change what those ops saved (elu's clamp keeps self)."""
    x = _x()
    y = x * 1
    y.elu_()
    assert y.grad_fn.name() == "CopyBackward0"
    (g,) = ea.grad(y.sum(), x)
    tx = torch.from_numpy(BOUNDS.copy()).requires_grad_()
    torch.nn.functional.elu(tx).sum().backward()
    np.testing.assert_allclose(g.numpy(), tx.grad.numpy())


def test_out_refuses_grad_for_both_paths():
    for op in (et.hardtanh, et.elu):
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            op(_x(), out=et.empty(0, dtype=et.float64))


def test_forward_mode_uses_the_entrys_rule():
    with fwAD.dual_level():
        d = fwAD.make_dual(et.from_numpy(BOUNDS.copy()), et.ones(7, dtype=et.float64))
        t = fwAD.unpack_dual(et.hardtanh(d)).tangent
        np.testing.assert_array_equal(t.numpy(), [0, 0, 1, 1, 1, 0, 0])
        with ea.no_grad():  # tangents propagate under no_grad too
            t = fwAD.unpack_dual(et.hardtanh(d, -0.5, 0.5)).tangent
        np.testing.assert_array_equal(t.numpy(), [0, 0, 0, 1, 0, 0, 0])


def test_create_graph_through_the_formula():
    x = _x([0.2, 0.5, 0.9])
    t = et.from_numpy(np.array([0.0, 1.0, 0.3]))
    assert ea.gradgradcheck(lambda a: et.binary_cross_entropy(a, t), (x,))
    assert ea.gradgradcheck(lambda a: et.hardtanh(a, -0.5, 0.7) * a, (_x([0.1, 0.6, -0.3]),))


def test_recording_rules_exist_for_the_entries():
    for key in ("hardtanh", "binary_cross_entropy"):
        assert recording.RULES[key].record.__name__ == f"record_{key}"
