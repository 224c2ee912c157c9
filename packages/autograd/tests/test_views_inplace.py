"""In-place writes under autograd: writes into views, views of written tensors, ``x[i] = y``,
the refusals (leaves, views of leaves) and the saved-tensor version check, against torch.

Each scenario is one function ``f(m)`` run with ``m = torch`` and ``m = ember_tensor``
(with the matching autograd module from ``_ag(m)``); the arrays it returns (gradients,
values) must agree. Where ember deliberately allows what torch refuses, the test says so
and checks ember's result against torch running an equivalent program.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import ember_autograd as ea
import ember_tensor as et

A = np.arange(1.0, 13.0).reshape(4, 3) / 7 - 0.6  # mixed signs (for relu)
LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_LEAF_MSG = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)


def _ag(m):
    return torch.autograd if m is torch else ea


def _no_grad(m):
    return torch.no_grad() if m is torch else ea.no_grad()


def leaf(m, a=A):
    """A float64 leaf requiring grad; 2-d arrays are given a transposed (non-contiguous)
    layout (so are the results of elementwise ops on them)."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 2 and min(a.shape) > 1:
        t = m.from_numpy(np.ascontiguousarray(a.T)).t()
        assert not t.is_contiguous()
        return t.detach().requires_grad_()
    return m.from_numpy(a.copy()).requires_grad_()


def _idx(m, *v):
    return m.tensor(list(v))


def same(f):
    """Runs ``f`` with torch and with ember; the arrays returned must be equal."""
    t = f(torch)
    e = f(et)
    assert len(t) == len(e)
    for x, y in zip(t, e):
        np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=1e-12, atol=1e-12)


def _grads(m, loss, *xs):
    loss.backward()
    return [x.grad.numpy() for x in xs]


# ----------------------------------------------------------------------------- writes into views


def _view_write(kind):
    def f(m):
        a = leaf(m)
        # contiguous in both libraries (ember's elementwise results are always contiguous,
        # torch's follow the input's layout)
        b = a.t() * 1 if kind in ("view", "setitem_number") else a * 1
        if kind == "slice":
            b[1:3].mul_(2)
        elif kind == "narrow":
            b.narrow(1, 1, 2).add_(b.narrow(1, 0, 2).detach().clone())
        elif kind == "select":
            b.select(-1, 0).mul_(3)
        elif kind == "transpose":
            b.t()[1].mul_(-2)
        elif kind == "diagonal":
            b.diagonal(1).mul_(3)
        elif kind == "view":
            b.view(12)[2:7].mul_(4)
        elif kind == "setitem_number":
            b.view(12)[3:5] = 0
        elif kind == "permute":
            b.unsqueeze(-1).permute(2, 1, 0)[0, 1].mul_(5)
        elif kind == "movedim":
            b.movedim(0, -1)[2].add_(b.detach()[:, 0].clone())
        elif kind == "unflatten":
            b.unflatten(0, (2, 2))[1, 0].mul_(-3)
        elif kind == "squeeze_unsqueeze":
            b.unsqueeze(1).squeeze(1)[3].mul_(2)
        return _grads(m, (b * b).sum(), a)

    return f


@pytest.mark.parametrize(
    "kind",
    [
        "slice",
        "narrow",
        "select",
        "transpose",
        "diagonal",
        "view",
        "setitem_number",
        "permute",
        "movedim",
        "unflatten",
        "squeeze_unsqueeze",
    ],
)
def test_inplace_on_view_of_nonleaf(kind):
    same(_view_write(kind))


def test_inplace_on_view_of_nonleaf_sum():
    """The brief's case: b = a*1; b[1:3].mul_(2); gradient of b.sum() with respect to a."""

    def f(m):
        a = leaf(m)
        b = a * 1
        b[1:3].mul_(2)
        return _grads(m, b.sum(), a)

    same(f)


def test_inplace_on_view_with_grad_value():
    def f(m):
        a = leaf(m)
        c = leaf(m, A[1:, 0])
        b = a * 1
        b.t()[0, 1:].mul_(c)
        return _grads(m, (b * b).sum(), a, c)

    same(f)


def test_backward_through_the_written_view():
    def f(m):
        a = leaf(m)
        b = a * 1
        v = b[1:]
        v.mul_(2)
        return _grads(m, (v * v).sum(), a)

    same(f)


def test_write_into_base_then_use_earlier_view():
    def f(m):
        a = leaf(m)
        b = a * 1
        v = b[1:3]
        w = b.t()
        b.mul_(2)
        return _grads(m, (v * v).sum() + (w * a.t()).sum(), a)

    same(f)


def test_chain_of_views_then_inplace():
    def f(m):
        a = leaf(m)
        c = leaf(m, A[1:, 0])
        b = a * 1
        v1 = b.t()
        v2 = v1[0, 1:]  # a view of a view
        v2.mul_(c)
        w = v1.sum(0)  # the middle view, used after the write
        return _grads(m, (b * b).sum() + (w * w).sum(), a, c)

    same(f)


def test_long_chain_of_views_inplace_relu():
    def f(m):
        a = leaf(m)
        b = a * 1
        b.unsqueeze(0).squeeze(0).t()[0].relu_()
        return _grads(m, (b * b).sum(), a)

    same(f)


def test_view_of_view_then_write_into_middle_view():
    def f(m):
        a = leaf(m)
        b = a * 1
        v = b.t()
        w = v.unsqueeze(0)
        w[0, 1].mul_(3)
        return _grads(m, (v * 2).sum() + (b * b).sum(), a)

    same(f)


def test_no_grad_write_into_view_of_nonleaf():
    def f(m):
        a = leaf(m)
        b = a * 1
        v = b[1:]
        with _no_grad(m):
            v.mul_(2)
        return [*_grads(m, (b * 3).sum(), a), b.detach().numpy()]

    same(f)


def test_version_counter_shared_with_views():
    def f(m):
        b = leaf(m) * 1
        versions = [b._version]
        b[1:3].mul_(2)
        v = b[1:]
        versions += [b._version, v._version]
        b.add_(1)
        versions.append(v._version)
        b[_idx(m, 0)] = 1.0
        versions.append(b._version)
        return [np.array(versions)]

    same(f)


def test_double_backward_through_write_into_view():
    """create_graph through CopySlices (the write's node runs again under grad mode)."""

    def f(m):
        a = leaf(m)
        b = a * 1
        b.narrow(0, 1, 3).mul_(a.narrow(0, 1, 3))
        (g,) = _ag(m).grad((b * b).sum(), a, create_graph=True)
        (gg,) = _ag(m).grad((g * g).sum(), a)
        return [g.detach().numpy(), gg.numpy()]

    same(f)


def test_double_backward_through_write_into_getitem_view():
    def f(m):
        a = leaf(m)
        b = a * 1
        b[1:].mul_(a[1:])
        (g,) = _ag(m).grad((b * b).sum(), a, create_graph=True)
        (gg,) = _ag(m).grad((g * g).sum(), a)
        return [g.detach().numpy(), gg.numpy()]

    same(f)


# ----------------------------------------------------------------------------- x[key] = y


def _setitem_case(kind):
    def f(m):
        a = leaf(m)
        b = a * 2
        if kind == "basic":
            y = leaf(m, A[0])
            b[1] = y
        elif kind == "basic_broadcast":
            y = leaf(m, A[:1, :2])
            b[1:, :2] = y
        elif kind == "advanced":
            y = leaf(m, A[:2])
            b[_idx(m, 3, 0)] = y
        elif kind == "advanced_duplicates":
            y = leaf(m, A[:3])
            b[_idx(m, 1, 1, 2)] = y
        elif kind == "advanced_and_slice":
            y = leaf(m, A[:2, 0])
            b[_idx(m, 2, 0), 1:] = y.reshape(2, 1)
        elif kind == "mask":
            y = leaf(m, A[0, :1].reshape(()))
            b[b.detach() > 0] = y
        elif kind == "into_view":
            y = leaf(m, A[:2, :1])
            v = b[:, 1:]
            v[_idx(m, 3, 0)] = y
        elif kind == "into_chain_of_views":
            y = leaf(m, A[0])
            b.t().unsqueeze(0)[0, :, 1] = y
        elif kind == "into_transposed_advanced":
            y = leaf(m, A[0])
            b.t()[:, _idx(m, 2, 0)] = y.reshape(3, 1).expand(3, 2) * 1
        return _grads(m, (b * b).sum(), a, y)

    return f


@pytest.mark.parametrize(
    "kind",
    [
        "basic",
        "basic_broadcast",
        "advanced",
        "advanced_duplicates",
        "advanced_and_slice",
        "mask",
        "into_view",
        "into_chain_of_views",
        "into_transposed_advanced",
    ],
)
def test_setitem_value_requires_grad(kind):
    same(_setitem_case(kind))


def test_setitem_into_tensor_without_grad():
    def f(m):
        y = leaf(m, A[0])
        x = m.zeros(4, 3, dtype=m.float64)
        x[1:3] = y
        return [*_grads(m, (x * x).sum(), y), np.array(x.is_leaf), np.array(x.requires_grad)]

    same(f)


def test_inplace_with_grad_value_into_tensor_without_grad():
    def f(m):
        a = leaf(m)
        x = m.zeros(4, 3, dtype=m.float64)
        x.add_(a)
        x.mul_(2)
        return _grads(m, (x * x).sum(), a)

    same(f)


@pytest.mark.parametrize("how", ["setitem", "add_"])
def test_write_into_view_of_base_without_grad(how):
    def f(m):
        y = leaf(m, A[0])
        base = m.zeros(4, 3, dtype=m.float64)
        v = base[1:]
        if how == "setitem":
            v[0] = y
        else:
            v.add_(y)
        return [*_grads(m, (base * base).sum(), y), np.array(base.requires_grad)]

    same(f)


# ----------------------------------------------------------------------------- in-place ReLU


@pytest.mark.parametrize("how", ["relu_", "relu_view", "clamp_"])
def test_inplace_relu(how):
    def f(m):
        a = leaf(m)
        b = a * 1
        if how == "relu_":
            out = b.relu_()
            assert out is b
        elif how == "relu_view":
            b[1:].relu_()
        else:
            b.clamp_(min=0)
        return [*_grads(m, (b * b).sum(), a), b.detach().numpy()]

    same(f)


# ----------------------------------------------------------------------------- multi-output views


def _multi_output_write(m, how, *, equivalent=False):
    """Writes into one output of unbind / split / chunk. ``equivalent``: the same write
    through a single-output view (torch accepts that one)."""
    a = leaf(m)
    b = a * 1
    if how == "unbind":
        (b.select(0, 1) if equivalent else b.unbind(0)[1]).mul_(2)
    elif how == "split":
        (b.narrow(0, 0, 2) if equivalent else b.split(2)[0]).mul_(2)
    elif how == "split_sections":
        (b.narrow(0, 1, 3) if equivalent else b.split([1, 3])[1]).add_(1)
    elif how == "chunk":
        (b.narrow(1, 2, 1) if equivalent else b.chunk(2, 1)[1]).mul_(-1)
    return _grads(m, (b * b).sum(), a)


@pytest.mark.parametrize("how", ["unbind", "split", "split_sections", "chunk"])
def test_inplace_on_output_of_multi_output_view_op(how):
    """torch refuses in-place writes into the outputs of unbind/split/chunk ("Output 1 of
    Unbind is a view and is being modified inplace. This view is the output of a function
    that returns multiple views..."). ember records each output's replay (op, then [i]), so
    the write is differentiated like a write into a single-output view: checked against
    torch running that equivalent program. Documented difference (deliberate or not: the
    lead decides; see the report)."""
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        _multi_output_write(torch, how)
    ours = _multi_output_write(et, how)
    ref = _multi_output_write(torch, how, equivalent=True)
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-12, atol=1e-12)


def test_outputs_of_unbind_used_after_write_into_one():
    def f(m, equivalent):
        a = leaf(m)
        b = a * 1
        u = [b.select(1, i) for i in range(3)] if equivalent else b.unbind(1)
        u[0].mul_(2)
        w = u[2] * 1
        return _grads(m, (w * w).sum() + (u[0] * u[1]).sum(), a)

    np.testing.assert_allclose(f(et, False)[0], f(torch, True)[0], rtol=1e-12, atol=1e-12)


def test_multi_output_view_written_under_no_grad():
    def f(m):
        a = leaf(m)
        u = a.unbind(0)
        with _no_grad(m):
            u[1].mul_(2)
        return [a.detach().numpy()]

    same(f)


def test_self_aliasing_inplace():
    """x.mul_(x) on a non-leaf: torch saves x for both operands and then refuses the
    backward (x was written); ember keeps x's old value, giving the gradient of x*x
    (documented difference)."""

    def f(m, alias):
        a = leaf(m)
        x = a * 1
        x.mul_(x if alias else x.clone())
        return _grads(m, x.sum(), a)

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        f(torch, True)
    np.testing.assert_allclose(f(et, True)[0], f(torch, False)[0], rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- refusals


def _leaf_writes(m):
    return {
        "mul_": lambda a: a.mul_(2),
        "add_tensor": lambda a: a.add_(m.ones(4, 3, dtype=m.float64)),
        "relu_": lambda a: a.relu_(),
        "clamp_": lambda a: a.clamp_(min=0),
        "setitem_advanced": lambda a: a.__setitem__(_idx(m, 0, 2), 1.0),
        "zero_": lambda a: a.zero_(),
    }


@pytest.mark.parametrize(
    "op", ["mul_", "add_tensor", "relu_", "clamp_", "setitem_advanced", "zero_"]
)
def test_inplace_on_leaf_requiring_grad_raises(op):
    for m in (torch, et):
        a = leaf(m)
        with pytest.raises(RuntimeError, match=re.escape(LEAF_MSG)):
            _leaf_writes(m)[op](a)
        np.testing.assert_array_equal(a.detach().numpy(), A)  # refused before the write


@pytest.mark.parametrize(
    "op", ["mul_", "add_tensor", "relu_", "clamp_", "setitem_advanced", "zero_"]
)
def test_inplace_on_leaf_under_no_grad(op):
    def f(m):
        a = leaf(m)
        with _no_grad(m):
            _leaf_writes(m)[op](a)
        flags = np.array([a.requires_grad, a.is_leaf, a.grad_fn is None])
        return [a.detach().numpy(), flags, *_grads(m, (a * a).sum(), a)]

    same(f)


def _view_of_leaf_writes(m):
    return {
        "slice_mul_": lambda a: a[1:].mul_(2),
        "select_add_": lambda a: a.select(1, 0).add_(1),
        "view_of_view": lambda a: a.t()[1:].add_(1),
        "unsqueeze_relu_": lambda a: a.unsqueeze(0).relu_(),
        "unbind_mul_": lambda a: a.unbind(0)[0].mul_(2),
    }


@pytest.mark.parametrize(
    "op", ["slice_mul_", "select_add_", "view_of_view", "unsqueeze_relu_", "unbind_mul_"]
)
def test_inplace_on_view_of_leaf_raises(op):
    for m in (torch, et):
        a = leaf(m)
        # torch's message for unbind's output is the multi-output one (it checks that first)
        msg = (
            "is a view and is being modified inplace"
            if (m is torch and op == "unbind_mul_")
            else VIEW_LEAF_MSG
        )
        with pytest.raises(RuntimeError, match=re.escape(msg)):
            _view_of_leaf_writes(m)[op](a)
        np.testing.assert_array_equal(a.detach().numpy(), A)


def test_setitem_basic_on_leaf_raises():
    """torch writes a[1] = 3 through a view of a ("a view of a leaf Variable..."); ember's
    __setitem__ writes the leaf itself ("a leaf Variable..."). Both name the refusal."""
    for m in (torch, et):
        a = leaf(m)
        with pytest.raises(
            RuntimeError,
            match="leaf Variable that requires grad is being used in an in-place operation",
        ):
            a[1] = 3.0
        np.testing.assert_array_equal(a.detach().numpy(), A)


def test_inplace_on_view_of_leaf_under_no_grad():
    def f(m):
        a = leaf(m)
        with _no_grad(m):
            a[1:].mul_(2)
            a.t()[0] = 0.5
        return [a.detach().numpy(), *_grads(m, (a * a).sum(), a)]

    same(f)


@pytest.mark.parametrize("base", ["leaf", "nonleaf"])
def test_view_made_in_no_grad_then_written_with_grad_raises(base):
    a = leaf(et)
    b = a if base == "leaf" else a * 1
    with ea.no_grad():
        v = b[1:]
    with pytest.raises(
        RuntimeError, match="A view was created in no_grad mode and is being modified inplace"
    ):
        v.mul_(2)


# ----------------------------------------------------------------------------- saved tensors


def _saved_modified(how):
    def f(m):
        a = leaf(m, A[0])
        if how == "saved_output":  # exp saves its result
            b = a.exp()
            b.mul_(2)
            out = b
        elif how == "saved_input":  # sin saves its input
            b = a * 1
            out = b.sin()
            b.add_(1)
        elif how == "saved_view_written_through_base":
            b = a * 1
            out = b[1:].sin()
            b.add_(1)
        elif how == "saved_base_written_through_view":
            b = a * 1
            out = b * b
            b[0].mul_(2)
        elif how == "written_through_detach":
            b = a.exp()
            b.detach().mul_(2)
            out = b
        out.sum().backward()

    return f


_MSG_RE = re.compile(
    r"one of the variables needed for gradient computation has been modified by an inplace "
    r"operation: \[(torch|ember)\.(\w+) \[([\d, ]*)\]\], which is output (\d+) of .+?, is at "
    r"version (\d+); expected version (\d+) instead.*Hint: enable anomaly detection to find the "
    r"operation that failed to compute its gradient, with (torch|ember)\.autograd\."
    r"set_detect_anomaly\(True"
)


@pytest.mark.parametrize(
    "how",
    [
        "saved_output",
        "saved_input",
        "saved_view_written_through_base",
        "saved_base_written_through_view",
        "written_through_detach",
    ],
)
def test_saved_tensor_modified_raises(how):
    found = {}
    for m in (torch, et):
        with pytest.raises(RuntimeError) as info:
            _saved_modified(how)(m)
        match = _MSG_RE.search(str(info.value))
        assert match is not None, str(info.value)
        found[m] = match.groups()
    t, e = found[torch], found[et]
    assert (t[0], e[0], t[6], e[6]) == ("torch", "ember", "torch", "ember")
    # tensor type, shape, output number, version seen, version expected
    assert e[1:6] == t[1:6]


def test_saved_tensor_message_names_the_saving_node():
    a = leaf(et, A[0])
    b = a.exp()
    b.mul_(2)
    with pytest.raises(
        RuntimeError, match=r"output 0 of ExpBackward0, is at version 1; expected version 0"
    ):
        b.sum().backward()


def test_saved_tensor_unmodified_by_no_grad_read():
    """Reads (views, clones) under no_grad do not bump versions: backward still works."""

    def f(m):
        a = leaf(m, A[0])
        b = a.exp()
        with _no_grad(m):
            _ = b[1:].clone() * 2
        return _grads(m, b.sum(), a)

    same(f)


# ------------------------------------------------------------------ views the hook never saw


def test_view_taken_before_base_had_history_follows_it():
    """A view of a tensor that required no grad yet: after a write with grad into the base,
    the view requires grad and its gradient reaches the written value."""

    def f(m):
        w = leaf(m, A[0])
        out = m.zeros(3, 3, dtype=m.float64)
        v = out[:2]
        out[0] = w * 3
        assert v.requires_grad and not v.is_leaf
        loss = (v * v).sum() + w.sum()
        return [*_grads(m, loss, w)]

    same(f)


def test_nested_setitem_on_view_of_plain_tensor():
    """out[i][j] = value: the write goes through a view of a view of a plain tensor."""

    def f(m):
        w = leaf(m, A[0])
        out = m.zeros(3, 4, dtype=m.float64)
        for i in range(3):
            out[i][1:3] = w[:2] * (i + 1)
        loss = (out * out).sum()
        return [out.detach().numpy(), *_grads(m, loss, w)]

    same(f)


def test_write_into_result_of_copying_reshape_keeps_its_history():
    """reshape of a non-contiguous tensor copies: its result is not a view of anything the
    user has, so an in-place write must keep the reshape's history."""

    def f(m):
        a = leaf(m)
        r = a.reshape(-1)  # a is non-contiguous: a copy
        r.mul_(2)
        return _grads(m, (r * r).sum(), a)

    same(f)


def test_base_and_is_view_match_torch():
    for m in (torch, et):
        x = m.zeros(3, 4)
        v = x[1:].t()
        assert v._is_view() and v._base is x
        assert not x._is_view() and x._base is None
        assert not x.detach()._is_view()
        assert not (x + 1)._is_view()


def test_as_strided_gradients():
    x = et.randn(12, dtype=et.float64, requires_grad=True)
    assert ea.gradcheck(lambda t: t.as_strided((3, 2), (4, 1), 1), (x,))
    assert ea.gradgradcheck(lambda t: t.as_strided((3, 3), (1, 1), 0), (x,))  # overlapping
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    xt.as_strided((3, 3), (1, 1), 0).pow(2).sum().backward()
    x.as_strided((3, 3), (1, 1), 0).pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_view_of_noncontiguous_plain_tensor_written_with_grad_is_refused():
    base = et.from_numpy(np.zeros((4, 3)).T)  # a non-contiguous root
    v = base[0]
    w = et.ones(4, dtype=et.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a non-contiguous tensor .* is not supported"):
        v.copy_(w)


def test_view_taken_before_leaf_required_grad_is_refused_in_place():
    for m in (torch, et):
        x = m.zeros(3, dtype=m.float64)
        v = x[1:]
        x.requires_grad_()
        assert v.requires_grad
        with pytest.raises(RuntimeError, match=re.escape(VIEW_LEAF_MSG)):
            v.mul_(2)
        assert x.tolist() == [0.0, 0.0, 0.0]


def test_negative_slice_step_gradient():
    """x[::-2] is a flipped copy in the core; its gradient lands on the selected elements."""
    x = et.arange(5.0, dtype=et.float64).requires_grad_()
    w = et.tensor([1.0, 2.0, 3.0], dtype=et.float64)
    (x[::-2] * w).sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 2.0, 0.0, 1.0]
    y = et.arange(12.0, dtype=et.float64).reshape(3, 4).requires_grad_()
    (y[::-1, 1::-1] * et.arange(6.0, dtype=et.float64).reshape(3, 2)).sum().backward()
    assert y.grad.tolist() == [[5.0, 4.0, 0.0, 0.0], [3.0, 2.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]]


# ---- issue 30, W8 and W9: the comparisons' in-place forms and integer dtype= results


@pytest.mark.parametrize("op", ["eq_", "ne_", "lt_", "le_", "gt_", "ge_"])
@pytest.mark.parametrize("other", [2.0, "tensor"])
def test_in_place_comparisons_follow_the_leaf_rules(op, other):
    """x.le_(2) on a leaf that requires grad overwrote it (it went around autograd); as in
    PyTorch it is refused on a leaf and on a view of one, and the data stays."""
    for m, msg in ((torch, LEAF_MSG), (et, LEAF_MSG)):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        o = m.tensor([2.0, 2.0, 2.0]) if other == "tensor" else other
        with pytest.raises(RuntimeError, match=re.escape(msg)):
            getattr(x, op)(o)
        with pytest.raises(RuntimeError, match=re.escape(VIEW_LEAF_MSG)):
            getattr(x[:2], op)(o if other != "tensor" else o[:2])
        assert x.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("op", ["eq_", "lt_", "ge_"])
def test_in_place_comparisons_give_zero_gradients(op):
    """On a tensor with history, PyTorch records the comparison: the gradient through it is
    zero (it was the gradient of the overwritten history in Ember)."""

    def f(m):
        x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        w = m.tensor([0.5, 2.5, 3.0], dtype=m.float64, requires_grad=True)
        y = x * 2
        getattr(y, op)(w)
        (y * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum().backward()
        return y.detach().numpy(), x.grad.numpy(), w.grad.numpy()

    for ours, theirs in zip(f(et), f(torch)):
        np.testing.assert_array_equal(ours, theirs)


def test_comparisons_of_tensors_that_require_grad_are_not_recorded():
    x = et.tensor([1.0, 2.0], requires_grad=True)
    for r in (x < 2, x.eq(x), et.ge(x, 1.0)):
        assert r.dtype == et.bool and not r.requires_grad and r.grad_fn is None


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: x.cumprod(0, dtype=m.int64),
        lambda m, x: x.cumsum(0, dtype=m.int32),
        lambda m, x: x.sum(dtype=m.int64),
        lambda m, x: x.prod(dtype=m.int16),
    ],
    ids=["cumprod", "cumsum", "sum", "prod"],
)
def test_an_integer_dtype_result_of_a_tensor_that_requires_grad_is_pytorchs_error(call):
    """tensor([1.5, 2.5], requires_grad=True).cumprod(0, dtype=int64) was an int64 tensor
    that required grad."""
    for m in (torch, et):
        x = m.tensor([1.5, 2.5], requires_grad=True)
        with pytest.raises(RuntimeError, match="Autograd not support dtype: (Long|Int|Short)"):
            call(m, x)
        with _no_grad(m):
            assert not call(m, x).requires_grad
        assert call(m, x.detach()).tolist() == call(torch, torch.tensor([1.5, 2.5])).tolist()


@pytest.mark.parametrize(
    "call",
    [
        lambda m, v: m.ones(3, dtype=m.int8).masked_fill(m.tensor(True), v),
        lambda m, v: m.index_fill(m.ones(3, 3, dtype=m.bool), -1, m.tensor(0), v),
        lambda m, v: m.fill(m.ones(2, dtype=m.int64), v),
    ],
    ids=["masked_fill", "index_fill", "fill"],
)
def test_a_float_value_requiring_grad_into_an_integer_self_is_pytorchs_error(call):
    """masked_fill(int8, mask, float value that requires grad) gave an int8 tensor with a
    grad_fn; index_fill dropped the value's gradient silently."""
    for m in (torch, et):
        v = m.tensor(-0.6, dtype=m.float64, requires_grad=True)
        with pytest.raises(RuntimeError, match="Autograd not support dtype: (Char|Bool|Long)"):
            call(m, v)
    # a float self keeps the value's gradient, as PyTorch's
    grads = []
    for m in (torch, et):
        v = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        m.ones(2, 3, dtype=m.float64).index_fill(1, m.tensor([0, 2]), v).sum().backward()
        grads.append(v.grad.item())
    assert grads[0] == grads[1] == 4.0
