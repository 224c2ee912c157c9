"""Whole programs run on ember and on torch from the same data; losses and every gradient
compared (float64). Each program is written once against a ``lib`` (``torch`` or
``ember_tensor``) so that the two runs are the same code."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_autograd as ea
import ember_tensor as et
from ember_autograd import recording

RTOL = 1e-9
ATOL = 1e-10


def missing_derivatives(*keys) -> list[str]:
    """Op keys whose derivative is not in derivatives.yaml yet (their backward raises)."""
    out = []
    for k in keys:
        rule = recording.RULES.get(k)
        if rule is None or "not_implemented" in getattr(rule.record, "__qualname__", ""):
            out.append(k)
    return out


def requires_derivatives(*keys):
    gone = missing_derivatives(*keys)
    return pytest.mark.skipif(
        bool(gone), reason=f"no derivative in derivatives.yaml yet for: {', '.join(gone)}"
    )


def make(lib, a, requires_grad=False):
    a = np.asarray(a)
    if lib is torch:
        return torch.tensor(a, requires_grad=requires_grad)
    dtype = {np.dtype("float64"): et.float64, np.dtype("int64"): et.int64}[a.dtype]
    return et.tensor(a.tolist(), dtype=dtype, requires_grad=requires_grad)


def run_both(program, data: dict, params: tuple):
    """Runs ``program(lib, **tensors)`` -> loss on both; compares loss and the gradients of
    ``params`` (names in ``data``), from backward() and from autograd.grad."""
    results = {}
    for lib, ag in ((torch, torch.autograd), (et, ea)):
        tensors = {k: make(lib, v, requires_grad=k in params) for k, v in data.items()}
        loss = program(lib, **tensors)
        grads = ag.grad(loss, [tensors[p] for p in params], retain_graph=True)
        loss.backward()
        results[lib.__name__] = (
            float(loss.detach()),
            [np.asarray(tensors[p].grad.tolist()) for p in params],
            [np.asarray(g.tolist()) for g in grads],
        )
    lt, gt, at = results["torch"]
    le, ge, ae = results["ember_tensor"]
    np.testing.assert_allclose(le, lt, rtol=RTOL, atol=ATOL)
    for name, a, b in zip(params, ge, gt):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=f"grad of {name}")
    for name, a, b in zip(params, ae, at):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=f"autograd.grad of {name}")
    return results


RNG = np.random.default_rng(1234)


def randn(*shape):
    return RNG.standard_normal(shape)


# ----------------------------------------------------------------------------- programs


def mlp_cross_entropy_gather(lib, x, y, w1, b1, w2, b2):
    h = (x.matmul(w1) + b1).relu()
    logits = h.matmul(w2) + b2
    logp = logits.log_softmax(1)
    return -logp.gather(1, y.unsqueeze(1)).mean()


def mlp_cross_entropy_indexing(lib, x, y, w1, b1, w2, b2):
    h = (x.matmul(w1) + b1).relu()
    logits = h.matmul(w2) + b2
    logp = logits.log_softmax(1)
    n = x.shape[0]
    return -logp[lib.arange(n), y].sum() / n


@requires_derivatives("log_softmax", "gather", "mean", "relu", "matmul", "unsqueeze")
def test_mlp_softmax_cross_entropy_gather():
    data = dict(x=randn(8, 5), y=RNG.integers(0, 4, 8), w1=randn(5, 6) * 0.5, b1=randn(6),
                w2=randn(6, 4) * 0.5, b2=randn(4))
    run_both(mlp_cross_entropy_gather, data, ("w1", "b1", "w2", "b2", "x"))


@requires_derivatives("log_softmax", "__getitem__", "relu", "matmul", "sum", "div")
def test_mlp_softmax_cross_entropy_indexing():
    data = dict(x=randn(8, 5), y=RNG.integers(0, 4, 8), w1=randn(5, 6) * 0.5, b1=randn(6),
                w2=randn(6, 4) * 0.5, b2=randn(4))
    run_both(mlp_cross_entropy_indexing, data, ("w1", "b1", "w2", "b2"))


def test_cross_entropy_matches_torch_functional():
    # the hand-written loss is torch's cross_entropy
    x, y = torch.tensor(randn(6, 3)), torch.tensor(RNG.integers(0, 3, 6))
    ours = -x.log_softmax(1).gather(1, y.unsqueeze(1)).mean()
    assert torch.allclose(ours, torch.nn.functional.cross_entropy(x, y))


def inplace_relu_net(lib, x, w1, b1, w2):
    h = x.matmul(w1)
    h.add_(b1)
    h.relu_()  # in place on a non-leaf: relu's backward uses its (saved) result
    h2 = h.matmul(w2)
    h2.clamp_(min=-0.5)
    return (h2 * h2).sum()


@requires_derivatives("relu", "clamp", "add", "matmul")
def test_inplace_relu_in_a_network():
    data = dict(x=randn(7, 4), w1=randn(4, 5), b1=randn(5), w2=randn(5, 3))
    run_both(inplace_relu_net, data, ("x", "w1", "b1", "w2"))


def views_inplace(lib, x, y, w):
    base = x * 1
    col = base[:, 1]  # a view
    col.mul_(y)  # written through the view: base's history changes
    row = base[0]
    row.add_(2.0)
    flat = base.view(-1)
    flat[2:4].sub_(y[:2])
    t = base.t()
    t[0].mul_(3.0)
    return (base * w).sum() + (col * col).sum()


@requires_derivatives("mul", "add", "sub", "view", "t", "__getitem__")
def test_views_with_inplace_updates():
    data = dict(x=randn(4, 3), y=randn(4), w=randn(4, 3))
    run_both(views_inplace, data, ("x", "y", "w"))


def indexing_assignment(lib, x, y, idx):
    z = lib.zeros(5, 3, dtype=x.dtype)
    z[1] = x[0]
    z[2:4, :] = y * 2
    z[idx, 0] = x[1:3, 2]
    z[0, 1:] += x[2, :2]
    m = z * z.sum(0, keepdim=True)
    return (m * x.sum()).sum() + z[4].sum()


@requires_derivatives("__setitem__", "__getitem__", "mul", "sum")
def test_indexing_with_assignment():
    data = dict(x=randn(3, 3), y=randn(2, 3), idx=np.array([4, 0]))
    run_both(indexing_assignment, data, ("x", "y"))


def rnn_loop(lib, xs, h0, wx, wh, b, wo):
    h = h0
    outs = []
    for t in range(xs.shape[0]):
        h = (xs[t].matmul(wx) + h.matmul(wh) + b).tanh()
        outs.append(h.matmul(wo))
    y = lib.stack(outs)
    return (y * y).mean() + (h * h).sum()


@requires_derivatives("tanh", "matmul", "stack", "mean", "__getitem__")
def test_small_rnn_loop():
    data = dict(xs=randn(5, 3, 4), h0=randn(3, 6) * 0.1, wx=randn(4, 6) * 0.5,
                wh=randn(6, 6) * 0.5, b=randn(6), wo=randn(6, 2))
    run_both(rnn_loop, data, ("xs", "h0", "wx", "wh", "b", "wo"))


def broadcasting_biases(lib, x, b_row, b_col, scale, c):
    y = (x + b_row) * scale  # (4, 3) + (3,), * (1, 1)
    y = y - b_col  # (4, 1)
    z = y.unsqueeze(0) * c  # (1, 4, 3) * (2, 1, 3)
    return (z.exp() / (1 + z * z)).sum()


@requires_derivatives("add", "mul", "sub", "unsqueeze", "exp", "div")
def test_broadcasting_biases():
    data = dict(x=randn(4, 3), b_row=randn(3), b_col=randn(4, 1), scale=randn(1, 1),
                c=randn(2, 1, 3) * 0.3)
    run_both(broadcasting_biases, data, ("x", "b_row", "b_col", "scale", "c"))


def shared_parameter_reuse(lib, x, w):
    a = x.matmul(w)
    b = a.matmul(w.t())  # w used twice, once through a view
    return (a.sum() * b).sum() + (w * w).sum()


@requires_derivatives("matmul", "t", "sum", "mul")
def test_parameter_used_several_times():
    data = dict(x=randn(3, 4), w=randn(4, 4))
    run_both(shared_parameter_reuse, data, ("x", "w"))


@requires_derivatives("log_softmax", "gather", "mean", "relu", "matmul", "unsqueeze")
def test_sgd_steps_match_torch():
    """A few SGD steps of the MLP: parameters stay equal to torch's along the way."""
    data = dict(x=randn(8, 5), y=RNG.integers(0, 4, 8), w1=randn(5, 6) * 0.5, b1=randn(6),
                w2=randn(6, 4) * 0.5, b2=randn(4))
    names = ("w1", "b1", "w2", "b2")
    finals = {}
    for lib, ag in ((torch, torch.autograd), (et, ea)):
        tensors = {k: make(lib, v, requires_grad=k in names) for k, v in data.items()}
        for _ in range(5):
            loss = mlp_cross_entropy_gather(lib, **tensors)
            for p in names:
                tensors[p].grad = None
            loss.backward()
            with ag.no_grad():
                for p in names:
                    tensors[p].sub_(tensors[p].grad * 0.5)
        finals[lib.__name__] = [np.asarray(tensors[p].detach().tolist()) for p in names]
    for a, b in zip(finals["ember_tensor"], finals["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
