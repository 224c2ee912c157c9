"""The backward pass: runs the graph from given roots, iteratively, in dependency order.

``run_backward`` is what ``Tensor.backward`` and ``autograd.grad`` call. Nodes run once all
gradients flowing into them have arrived (dependency counting over the part of the graph
that leads to what was asked for), so nothing is recursive and the order is fixed by the
graph alone. Without ``retain_graph`` each node drops its saved tensors right after it ran.
"""

from __future__ import annotations

import ember_tensor as et

from . import anomaly_mode, grad_mode, streams
from .graph import AccumulateGrad, accumulate_into_grad, gradient_edge, run_tensor_hooks


def _make_grads(outputs, grad_outputs, create_graph: bool) -> list:
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out.requires_grad:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out.dtype.is_floating_point:
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{out.dtype}"
                    )
                g = et.ones_like(out)
            grads.append(g)
            continue
        if not isinstance(g, et.Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        if tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and "
                f"output[{i}] has a shape of {tuple(out.shape)}."
            )
        if g.dtype.is_complex != out.dtype.is_complex:
            raise RuntimeError(
                "For complex Tensors, both grad_output and output are required to have the same "
                f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and "
                f"output[{i}] has a dtype of {out.dtype}"
            )
        if g.dtype != out.dtype:  # PyTorch's engine casts a real gradient to the output's dtype
            g = g.to(out.dtype)
        grads.append(g if create_graph else g.detach())
    return grads


def _discover(roots: list, capture_nodes: set | None) -> tuple[dict, set | None]:
    """Dependencies (edges into each node) of the graph below ``roots``; with
    ``capture_nodes``, also the nodes from which one of them can be reached."""
    if capture_nodes is None:
        deps: dict = {}
        root_set = set(roots)
        stack = list(roots)
        while stack:
            for nxt, _ in stack.pop().next_functions:
                if nxt is None:
                    continue
                d = deps.get(nxt)
                if d is None:
                    deps[nxt] = 1
                    if nxt not in root_set:
                        stack.append(nxt)
                else:
                    deps[nxt] = d + 1
        return deps, None
    deps = {}
    children: dict = {}
    seen = set()
    order = []
    stack = [n for n in roots]
    for n in roots:
        seen.add(n)
    while stack:
        node = stack.pop()
        order.append(node)
        kids = []
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            kids.append(nxt)
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
        children[node] = kids
    needed = None
    if capture_nodes is not None:
        needed = set()
        # reverse of a DFS discovery order is not topological in general; iterate to a fixed
        # point over the (small) set instead, cheap next to running the nodes
        changed = True
        while changed:
            changed = False
            for node in order:
                if node in needed:
                    continue
                if node in capture_nodes or any(k in needed for k in children[node]):
                    needed.add(node)
                    changed = True
    for node in order:
        if needed is not None and node not in needed:
            continue
        for k in children[node]:
            if needed is None or k in needed:
                deps[k] = deps.get(k, 0) + 1
    return deps, needed


def run_backward(
    outputs,
    grad_outputs,
    retain_graph: bool,
    create_graph: bool,
    inputs=None,
    allow_unused: bool = True,
    accumulate: bool = True,
):
    """Backpropagates ``grad_outputs`` from ``outputs``.

    accumulate=True (``backward``): gradients are added into ``.grad`` of the leaves (only of
    ``inputs`` when given). accumulate=False (``autograd.grad``): returns the gradients of
    ``inputs``, touching no ``.grad``."""
    outputs = list(outputs)
    grads = _make_grads(outputs, grad_outputs, create_graph)
    roots = []
    root_grads = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if not out.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        roots.append(gradient_edge(out))
        root_grads.append(g)

    captures: dict = {}  # (node, nr) -> [input indices]
    capture_nodes = None
    results = None
    if inputs is not None:
        results = [None] * len(inputs)
        capture_nodes = set()
        for i, t in enumerate(inputs):
            if not t.requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            e = gradient_edge(t)
            captures.setdefault(e, []).append(i)
            capture_nodes.add(e[0])

    root_nodes = []
    buffers: dict = {}
    for (node, nr), g in zip(roots, root_grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._num_outputs
            root_nodes.append(node)
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    deps, needed = _discover(root_nodes, capture_nodes)
    ready = [n for n in root_nodes if deps.get(n, 0) == 0]
    check_nan = anomaly_mode._enabled and anomaly_mode._check_nan

    prev_mode = grad_mode._state.enabled
    grad_mode._state.enabled = create_graph
    order = None  # the streams of device nodes, once the first one runs (streams.py)
    on_stream = None  # the stream context of the node being run
    try:
        while ready:
            node = ready.pop()
            buf = buffers.pop(node, None)
            if buf is None:
                buf = [None] * node._num_outputs
            if needed is not None and node not in needed:
                continue
            # tensor hooks of non-leaf outputs, then retain_grad, then captures
            special = node._special
            if special and node._tensor_pre_hooks:
                for nr, hooks in node._tensor_pre_hooks.items():
                    if buf[nr] is not None:
                        buf[nr] = run_tensor_hooks(hooks, buf[nr])
            if special and node._retain_grad_hooks:
                for nr, ref in node._retain_grad_hooks.items():
                    t = ref()
                    if t is not None and buf[nr] is not None:
                        _retain(t, buf[nr])
            if captures:
                is_acc = type(node) is AccumulateGrad
                for nr in range(len(buf)):
                    idx = captures.get((node, nr))
                    if idx is None:
                        continue
                    g = buf[nr]
                    if accumulate:
                        if not is_acc and g is not None:  # backward(inputs=[non-leaf])
                            accumulate_into_grad(inputs[idx[0]], g)
                        continue
                    if is_acc and g is not None:
                        meta = node.variable._autograd_meta
                        if meta is not None and meta.hooks:
                            g = run_tensor_hooks(meta.hooks, g)
                    for i in idx:
                        results[i] = g
                if is_acc and not accumulate:
                    continue
            nf = node.next_functions
            if order is not None or (special and node._stream is not None):
                if order is None:
                    order = streams.StreamOrder(node._stream)
                on_stream = order.enter(node._stream)
                on_stream.__enter__()  # left after the gradients are added into the buffers
            if buf[0] is None and buf.count(None) == len(buf):
                out = ()
            elif special:
                out = _call(node, buf)
            else:
                out = node.apply(buf)
            if check_nan:
                anomaly_mode.check_nan(node, out)
            if not retain_graph:
                node._release()
            n_out = len(out)
            for i in range(len(nf)):
                nxt, nr = nf[i]
                if nxt is None:
                    continue
                if i < n_out:
                    g = out[i]
                    if g is not None:
                        b = buffers.get(nxt)
                        if b is None:
                            b = buffers[nxt] = [None] * nxt._num_outputs
                        b[nr] = g if b[nr] is None else b[nr] + g
                d = deps.get(nxt)
                if d is not None:
                    if d == 1:
                        ready.append(nxt)
                    deps[nxt] = d - 1
            if on_stream is not None:
                on_stream.__exit__(None, None, None)
                on_stream = None
            # the buffers now hold the gradients alone (AccumulateGrad then takes them
            # without a copy)
            out = g = buf = None
        if order is not None:
            order.finish()
    finally:
        if on_stream is not None:  # a node raised
            on_stream.__exit__(None, None, None)
        grad_mode._state.enabled = prev_mode

    if results is not None and not allow_unused:
        for i, r in enumerate(results):
            if r is None:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
    return results


def _call(node, buf: list) -> list:
    if node._pre_hooks:
        for hook in list(node._pre_hooks):
            new = hook(tuple(buf))
            if new is not None:
                buf = list(new)
    try:
        out = node.apply(buf)
    except Exception as e:
        if node._trace is not None:
            anomaly_mode.reraise(e, node)  # the forward trace appended to the message
        raise
    if node._hooks:
        for hook in list(node._hooks):
            new = hook(tuple(out), tuple(buf))
            if new is not None:
                out = list(new)
    return out


def _retain(t, g) -> None:
    """retain_grad: a non-leaf's .grad accumulates the gradient flowing into it."""
    old = t.grad
    if old is None:
        t.grad = g if grad_mode._state.enabled else g.detach().clone()
    else:
        t.grad = old + g
