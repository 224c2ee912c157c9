"""Memory: saved tensors are released by backward, and a graph dies with the last tensor
that holds it, by reference counting alone (the core's grad_fn slot is invisible to the
cycle collector, so a cycle through it would never be freed).

``ember_tensor.memory_allocated()`` counts the bytes of blocks held by live tensors (cached
blocks excluded), so it is exact here; the tensors are big enough (256 KiB) that the size
classes round nothing away, and small scalars are allowed for with a slack."""

from __future__ import annotations

import gc
import weakref

import pytest

import ember_autograd as ea
import ember_tensor as et
from ember_autograd import Function

N = 256
BLOCK = N * N * 4  # one float32 N x N tensor
SLACK = 4096  # scalars (losses, their gradients) round up to small size classes


@pytest.fixture
def no_gc():
    """Cycle collection off: whatever is freed here is freed by reference counting."""
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def allocated() -> int:
    return et.memory_allocated()


def near(value, expected) -> bool:
    return abs(value - expected) <= SLACK


def _loss(x, w):
    """mm saves x, w (leaves); exp saves its result; mul saves both of its inputs. Only
    the graph keeps the three N x N intermediates alive."""
    h = x.mm(w)
    e = h.exp()
    return (e * h).sum()


def test_saved_tensors_released_by_backward(no_gc):
    x = et.randn(N, N) * 0.01
    w = et.randn(N, N) * 0.01
    x.requires_grad_()
    w.requires_grad_()
    base = allocated()
    loss = _loss(x, w)
    assert near(allocated() - base, 2 * BLOCK)  # h and e, held by the graph only
    loss.backward()
    # loss (and its graph, without saved tensors) still alive: only the gradients remain
    assert near(allocated() - base, 2 * BLOCK)  # x.grad, w.grad
    assert x.grad is not None and w.grad is not None
    grads = allocated()
    del loss
    assert near(allocated(), grads)


def test_retain_graph_keeps_saved_tensors_until_graph_dies(no_gc):
    x = (et.randn(N, N) * 0.01).requires_grad_()
    w = (et.randn(N, N) * 0.01).requires_grad_()
    base = allocated()
    loss = _loss(x, w)
    loss.backward(retain_graph=True)
    assert near(allocated() - base, 4 * BLOCK)  # h, e still saved; plus two gradients
    loss.backward()  # the second pass releases them
    assert near(allocated() - base, 2 * BLOCK)
    x.grad = w.grad = None
    assert near(allocated() - base, 0)


def test_autograd_grad_releases_saved_tensors(no_gc):
    x = (et.randn(N, N) * 0.01).requires_grad_()
    w = (et.randn(N, N) * 0.01).requires_grad_()
    base = allocated()
    loss = _loss(x, w)
    gx, gw = ea.grad(loss, [x, w])
    assert near(allocated() - base, 2 * BLOCK)
    del gx, gw
    assert near(allocated() - base, 0)
    del loss


def test_graph_freed_when_its_tensor_is_deleted(no_gc):
    x = (et.randn(N, N) * 0.01).requires_grad_()
    w = (et.randn(N, N) * 0.01).requires_grad_()
    base = allocated()
    loss = _loss(x, w)
    nodes = []
    stack = [loss.grad_fn]
    while stack:
        n = stack.pop()
        nodes.append(weakref.ref(n))
        stack.extend(m for m, _ in n.next_functions if m is not None)
    names = {r().name() for r in nodes}
    expected = {"SumBackward0", "MulBackward0", "ExpBackward0", "MmBackward0", "AccumulateGrad"}
    assert expected <= names
    del n, stack
    del loss
    assert all(r() is None for r in nodes)
    assert near(allocated() - base, 0)


def test_graph_with_views_and_inplace_freed(no_gc):
    x = (et.randn(N, N) * 0.01).requires_grad_()
    base = allocated()
    y = x * 2
    v = y[1:]
    v.mul_(3)  # rebases y's history through the view (CopySlices)
    z = (y * y).sum()
    refs = [weakref.ref(z.grad_fn), weakref.ref(y.grad_fn), weakref.ref(v.grad_fn)]
    assert y.grad_fn.name() == "CopySlices"
    del y, v
    assert refs[0]() is not None  # z keeps the graph
    del z
    assert all(r() is None for r in refs)
    assert near(allocated() - base, 0)


def test_retain_grad_and_hooks_make_no_cycle(no_gc):
    x = (et.randn(N, N) * 0.01).requires_grad_()
    base = allocated()
    h = x * 3
    h.retain_grad()
    h.register_hook(lambda g: g * 1)
    ref = weakref.ref(h.grad_fn)
    (h * h).sum().backward()
    assert h.grad is not None
    del h
    assert ref() is None
    x.grad = None
    assert near(allocated() - base, 0)


class _Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)  # a saved output: kept without its history (no cycle)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


class _Mul(Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        ctx.note = "ctx attributes"
        return x * w

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad * w, grad * x


def test_custom_function_graph_freed(no_gc):
    x = (et.randn(N, N) * 0.01).requires_grad_()
    w = (et.randn(N, N) * 0.01).requires_grad_()
    base = allocated()
    y = _Exp.apply(_Mul.apply(x * 1, w))
    refs = [weakref.ref(y.grad_fn), weakref.ref(y.grad_fn.next_functions[0][0])]
    assert [r().name() for r in refs] == ["_ExpBackward", "_MulBackward"]
    _ = y.grad_fn.saved_tensors  # unpacking makes no lasting reference either
    del _
    del y
    assert all(r() is None for r in refs)
    assert near(allocated() - base, 0)


def test_custom_function_saved_tensors_released_by_backward(no_gc):
    x = (et.randn(N, N) * 0.01).requires_grad_()
    w = (et.randn(N, N) * 0.01).requires_grad_()
    base = allocated()
    loss = _Exp.apply(_Mul.apply(x * 1, w)).sum()
    # x * 1 (saved by _Mul) and the exp result (saved by _Exp) are held by the graph only
    assert near(allocated() - base, 2 * BLOCK)
    loss.backward()
    assert near(allocated() - base, 2 * BLOCK)  # the two gradients
    del loss
    x.grad = w.grad = None
    assert near(allocated() - base, 0)


class _Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    @ea.once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x


def test_create_graph_gradients_freed(no_gc):
    x = (et.randn(N, N) * 0.01).requires_grad_()
    base = allocated()
    (g,) = ea.grad((x * x).sum(), x, create_graph=True)
    ref = weakref.ref(g.grad_fn)
    del g
    assert ref() is None
    # through a once_differentiable backward: its Error node dies with the gradient too
    (g,) = ea.grad((_Cube.apply(x) * x).sum(), x, create_graph=True)
    names = {n.name() for n, _ in g.grad_fn.next_functions if n is not None}
    assert "Error" in names
    refs = [weakref.ref(g.grad_fn)] + [weakref.ref(n) for n, _ in g.grad_fn.next_functions]
    del g
    assert all(r() is None for r in refs)
    assert near(allocated() - base, 0)


class _DoubleInplace(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)  # x becomes an output of this node
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 + x * 0


class _MaxWithIndex(Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = x.max(1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.n = x.shape[1]
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        (indices,) = ctx.saved_tensors
        out = grad.new_zeros((grad.shape[0], ctx.n))
        out[et.arange(grad.shape[0]), indices] = grad
        return out


@pytest.mark.parametrize("where", ["tensor", "view"])
def test_mark_dirty_graph_freed(no_gc, where):
    x = (et.randn(N, N) * 0.01).requires_grad_()
    base = allocated()
    y = x * 1
    target = y if where == "tensor" else y[1:]
    out = _DoubleInplace.apply(target)
    assert out is target
    refs = [weakref.ref(y.grad_fn), weakref.ref(out.grad_fn)]
    (y * y).sum().backward(retain_graph=True)
    assert x.grad is not None
    del y, target, out
    assert all(r() is None for r in refs)
    x.grad = None
    assert near(allocated() - base, 0)


def test_mark_non_differentiable_graph_freed(no_gc):
    x = (et.randn(N, N) * 0.01).requires_grad_()
    base = allocated()
    values, indices = _MaxWithIndex.apply(x * 1)
    ref = weakref.ref(values.grad_fn)
    values.sum().backward(retain_graph=True)
    del values, indices
    assert ref() is None
    x.grad = None
    assert near(allocated() - base, 0)


class _Row(Function):
    @staticmethod
    def forward(ctx, x):
        return x[1:]  # a view of the input: marked as a custom-Function view

    @staticmethod
    def backward(ctx, grad):
        out = grad.new_zeros((grad.shape[0] + 1, grad.shape[1]))
        out[1:] = grad
        return out


def test_custom_function_view_output_freed(no_gc):
    x = (et.randn(N, N) * 0.01).requires_grad_()
    base = allocated()
    y = x * 1
    r = _Row.apply(y)
    refs = [weakref.ref(r.grad_fn), weakref.ref(r._autograd_meta)]
    (r * 2).sum().backward()
    del y, r
    assert all(ref() is None for ref in refs)
    x.grad = None
    assert near(allocated() - base, 0)


# ---- the cyclic collector: what a recorded graph leaves it, and its thresholds ----

def test_recorded_shapes_are_invisible_to_the_cycle_collector():
    # each recorded op keeps its inputs' (sizes, dtype): plain tuples of ints and a dtype,
    # untracked, so a big graph does not fill the collector's oldest generation
    x = et.randn(3, 4, requires_grad=True)
    y = (x * 2).sum(1)
    pair = x._shape_dtype
    assert pair == ((3, 4), et.float32) and type(pair[0]) is tuple
    assert not gc.is_tracked(pair) and not gc.is_tracked(pair[0])
    assert not gc.is_tracked(x.shape)  # ember.Size holds ints only
    for entry in y.grad_fn.next_functions[0][0].sizes:
        assert entry is None or not gc.is_tracked(entry)
    y.sum().backward()
    assert x.grad.shape == (3, 4)


def _thresholds_after_import(env: dict[str, str], preset: str = "") -> str:
    import os
    import subprocess
    import sys

    code = f"import gc\n{preset}\nimport ember_autograd\nprint(gc.get_threshold())"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, **env}, check=True)
    return run.stdout.strip()


def test_gc_thresholds_tuned_at_import_unless_set_or_refused():
    assert _thresholds_after_import({"EMBER_GC_TUNING": "1"}) == "(700, 100, 10)"
    assert _thresholds_after_import({"EMBER_GC_TUNING": "0"}) == "(700, 10, 10)"
    # a program's own thresholds stay
    assert _thresholds_after_import({}, "gc.set_threshold(500, 5, 5)") == "(500, 5, 5)"
