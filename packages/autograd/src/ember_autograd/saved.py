"""Runtime helpers of the generated nodes: edges of inputs, saved-tensor unpacking with the
version check, and fitting a gradient to its input's shape and dtype."""

from __future__ import annotations

from . import forward_ad, grad_mode
from .graph import gradient_edge, meta_of, raise_modified, raise_released

_NO_EDGE = (None, 0)


def edge(t):
    """The edge of an input tensor: where its gradient goes, ``(None, 0)`` if nowhere."""
    if t is None or not t.requires_grad:
        return _NO_EDGE
    return gradient_edge(t)


def unpack(node, what: str, t, version: int, is_output: bool, output_nr: int = 0):
    """A saved tensor, checked against in-place writes since it was saved.

    A saved output comes back attached to ``node`` (as its output ``output_nr``: S of
    ``(U, S, Vh)`` is output 1) when backward records a graph (create_graph), so that
    formulas using ``result`` are differentiable again."""
    if t is None:
        if node._released:
            raise_released(node)
        return None
    if t._version != version:
        producer = (
            node.name() if is_output else (t.grad_fn.name() if t.grad_fn is not None else None)
        )
        raise_modified(node, what, t, version, producer)
    if is_output and grad_mode._state.enabled:
        saved, t = t, t.detach()
        t._set_grad_fn(node)
        if output_nr:
            meta_of(t).output_nr = output_nr
        if saved._autograd_meta is not None:  # forward-over-reverse: keep its tangent
            forward_ad.carry_tangents(saved, t)
    return t


def unpack_list(node, what: str, ts, versions):
    if ts is None:
        raise_released(node)
    return [
        unpack(node, what, t, v, False) if t is not None else None for t, v in zip(ts, versions)
    ]


def fix(g, size):
    """``g`` summed down to the input's shape (undoing broadcasting) and cast to its dtype."""
    if g is None or size is None or g._has_shape_dtype(size):  # the common case, one C call
        return g
    shape, dtype = size
    if g.shape != shape:
        g = sum_to(g, shape)
    if g.dtype != dtype:
        g = g.to(dtype)
    return g


def sum_to(g, shape):
    """Sums ``g`` over the dimensions that broadcasting added or expanded from 1 to reach it."""
    shape = tuple(shape)
    lead = g.dim() - len(shape)
    if lead < 0:
        raise RuntimeError(f"gradient of shape {tuple(g.shape)} cannot be reduced to shape {shape}")
    dims = list(range(lead))
    for i, s in enumerate(shape):
        gs = g.shape[lead + i]
        if s == 1 and gs != 1:
            dims.append(lead + i)
        elif s != gs:
            raise RuntimeError(
                f"gradient of shape {tuple(g.shape)} cannot be reduced to shape {shape}"
            )
    if dims:
        g = g.sum(dims, keepdim=True)
    if lead:
        g = g.reshape(shape)
    return g
