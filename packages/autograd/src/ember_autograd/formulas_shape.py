"""Formula helpers for shape, view, indexing and linear-algebra ops (see formulas.py).

Every helper is written with ember_tensor ops (recorded by autograd when the gradient
itself requires grad), so that the derivative of a derivative comes from the same table.
The one exception, ``index_key_backward``, records its own small node whose backward is
an ``__getitem__`` again.
"""

from __future__ import annotations

import ember_tensor as et

from . import grad_mode
from .graph import Node, gradient_edge

__all__: list[str] = [
    "as_strided_backward",
    "cat_backward",
    "chunk_backward",
    "diagonal_backward",
    "gather_backward",
    "index_add_source_backward",
    "index_key_backward",
    "index_put_self_backward",
    "index_put_values_backward",
    "index_select_backward",
    "masked_fill_value_backward",
    "masked_select_backward",
    "narrow_backward",
    "pad_to",
    "permute_backward",
    "reduce_to_shape",
    "repeat_backward",
    "scatter_reduce_jvp",
    "scatter_reduce_self_backward",
    "scatter_reduce_src_backward",
    "scatter_src_backward",
    "scatter_tangent",
    "select_backward",
    "setitem_self_backward",
    "setitem_value_backward",
    "split_sections_backward",
    "split_size_backward",
    "take_along_dim_backward",
    "unbind_backward",
]


def _dim(d: int, ndim: int) -> int:
    """``d`` wrapped into ``range(ndim)`` (0-d tensors accept dims 0 and -1)."""
    n = max(ndim, 1)
    return d % n


def reduce_to_shape(g, shape):
    """``g`` summed down to ``shape``: broadcast dims summed, and extra leading size-1 dims of
    ``shape`` (``x[i] = v`` ignores them in ``v``) put back."""
    shape = tuple(shape)
    while g.dim() < len(shape):
        g = g.unsqueeze(0)
    if tuple(g.shape) == shape:
        return g
    lead = g.dim() - len(shape)
    dims = list(range(lead))
    for i, s in enumerate(shape):
        if s == 1 and g.shape[lead + i] != 1:
            dims.append(lead + i)
    if dims:
        g = g.sum(dims, keepdim=True)
    return g.reshape(shape)


def pad_to(g, shape):
    """``g`` padded with zeros at the end of each dim to ``shape`` (each dim at least g's)."""
    for d, s in enumerate(shape):
        n = g.shape[d]
        if n < s:
            size = list(g.shape)
            size[d] = s - n
            g = et.cat([g, g.new_zeros(size)], d)
    return g


def _pad_dim(grad, dim: int, before: int, after: int):
    """``grad`` with ``before`` / ``after`` zero slices added along ``dim``."""
    parts = []
    if before:
        size = list(grad.shape)
        size[dim] = before
        parts.append(grad.new_zeros(size))
    parts.append(grad)
    if after:
        size = list(grad.shape)
        size[dim] = after
        parts.append(grad.new_zeros(size))
    return grad if len(parts) == 1 else et.cat(parts, dim)


def permute_backward(grad, dims):
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[_dim(d, n)] = i
    return grad.permute(inv)


def narrow_backward(grad, self_shape, dim: int, start: int, length: int):
    d = _dim(dim, len(self_shape))
    size = self_shape[d]
    if start < 0:
        start += size
    return _pad_dim(grad, d, start, size - start - length)


def select_backward(grad, self_shape, dim: int, index: int):
    d = _dim(dim, len(self_shape))
    size = self_shape[d]
    if index < 0:
        index += size
    return _pad_dim(grad.unsqueeze(d), d, index, size - index - 1)


def diagonal_backward(grad, self_shape, offset: int, dim1: int, dim2: int):
    """Zeros of the input's shape with ``grad`` written along the diagonal (a scatter into
    the flattened (dim1, dim2) plane, so no product spreads NaNs off the diagonal)."""
    nd = len(self_shape)
    d1, d2 = _dim(dim1, nd), _dim(dim2, nd)
    a, b = self_shape[d1], self_shape[d2]
    rest = [s for i, s in enumerate(self_shape) if i not in (d1, d2)]
    n = grad.shape[-1]
    first = max(-offset, 0) * b + max(offset, 0)
    pos = et.arange(n) * (b + 1) + first
    plane = grad.new_zeros([*rest, a * b]).scatter(-1, pos.expand([*rest, n]), grad)
    return plane.reshape([*rest, a, b]).movedim([-2, -1], [d1, d2])


def _split_pieces(grads, self_shape, dim: int, sizes):
    """The gradients of the pieces of a split, zeros for the pieces that got none."""
    d = _dim(dim, len(self_shape))
    ref = next(g for g in grads if g is not None)
    out = []
    for g, n in zip(grads, sizes):
        if g is None:
            size = list(self_shape)
            size[d] = n
            g = ref.new_zeros(size)
        out.append(g)
    return out, d


def _split_backward(grads, self_shape, dim: int, sizes):
    pieces, d = _split_pieces(grads, self_shape, dim, sizes)
    return pieces[0] if len(pieces) == 1 else et.cat(pieces, d)


def split_size_backward(grads, self_shape, split_size: int, dim: int):
    n = self_shape[_dim(dim, len(self_shape))]
    sizes = [max(0, min(split_size, n - i * split_size)) for i in range(len(grads))]
    return _split_backward(grads, self_shape, dim, sizes)


def split_sections_backward(grads, self_shape, split_size, dim: int):
    return _split_backward(grads, self_shape, dim, list(split_size))


def chunk_backward(grads, self_shape, chunks: int, dim: int):
    n = self_shape[_dim(dim, len(self_shape))]
    step = -(-n // chunks) if chunks else 0
    sizes = [max(0, min(step, n - i * step)) for i in range(len(grads))]
    return _split_backward(grads, self_shape, dim, sizes)


def unbind_backward(grads, self_shape, dim: int):
    d = _dim(dim, len(self_shape))
    ref = next(g for g in grads if g is not None)
    shape = [s for i, s in enumerate(self_shape) if i != d]
    return et.stack([g if g is not None else ref.new_zeros(shape) for g in grads], d)


def cat_backward(grad, tensors, dim: int):
    """The slices of ``grad`` that each input of ``cat`` became. ``tensors``: the inputs, or
    their shapes. Legacy 1-d empty inputs (skipped by cat) get empty gradients."""
    shapes = [tuple(t.shape) if isinstance(t, et.Tensor) else tuple(t) for t in tensors]
    d = _dim(dim, grad.dim())
    out = []
    start = 0
    for s in shapes:
        if s == (0,) and grad.dim() != 1:
            out.append(grad.new_zeros(s))
            continue
        out.append(grad.narrow(d, start, s[d]))
        start += s[d]
    return out


def repeat_backward(grad, self_shape, repeats):
    """Sums the copies: each output dim of size r*s is split into (r, s), r summed."""
    repeats = list(repeats)
    padded = [1] * (len(repeats) - len(self_shape)) + list(self_shape)
    inter = []
    for r, s in zip(repeats, padded):
        inter += [r, s]
    if not inter:
        return grad
    g = grad.reshape(inter).sum(list(range(0, len(inter), 2)))
    return g.reshape(list(self_shape))


def gather_backward(grad, self_shape, dim: int, index):
    if len(self_shape) == 0:
        return grad.sum()
    return grad.new_zeros(list(self_shape)).scatter_add(dim, index, grad)


def scatter_src_backward(grad, dim: int, index, src_shape):
    """``grad`` at the scattered positions; src entries that index leaves out get zeros."""
    g = grad.gather(dim, index)
    if len(src_shape) == 0:
        return g.sum()
    return pad_to(g, src_shape)


def _scatter_reduce_grads(grad, self, dim: int, index, src, reduce: str, include_self: bool,
                          result):
    """(self's gradient, src's gradient) of scatter_reduce: PyTorch's formulas. 'amax' /
    'amin' share each result's gradient evenly among the elements equal to it; 'prod' is
    exact where elements are zero (the product of the others); 'mean' divides by the
    count; include_self=False gives self no gradient where anything was written."""
    shape0 = self.dim() == 0
    src0_shape = tuple(src.shape)
    if shape0:
        grad, self, result = grad.reshape(1), self.reshape(1), result.reshape(1)
        index, src, dim = index.reshape(1), src.reshape(1), 0
    d = dim % self.dim()
    s = src[tuple(slice(0, n) for n in index.shape)]
    if reduce == "sum":
        g_self, g_src = grad, grad.gather(d, index)
    elif reduce == "mean":
        n = (et.ones_like(grad) if include_self else et.zeros_like(grad)).scatter_add(
            d, index, et.ones_like(s))
        n = n.masked_fill(n == 0, 1)
        g_self, g_src = grad / n, grad.gather(d, index) / n.gather(d, index)
    elif reduce == "prod":
        masked_self = self.masked_fill(self == 0, 1)
        others = masked_self.scatter_reduce(d, index, s, "prod", include_self=include_self)
        g_self = grad * others / masked_self
        src_zero = s == 0
        zeros_at = et.zeros_like(self).scatter_add(d, index, src_zero.to(self.dtype))
        single_zero = src_zero & (zeros_at.gather(d, index) == 1)
        with_one = self.scatter_reduce(d, index, s.masked_fill(single_zero, 1), "prod",
                                       include_self=include_self)
        g_src = et.where(single_zero, (grad * with_one).gather(d, index),
                         (grad * result).gather(d, index) / s.masked_fill(src_zero, 1))
    else:  # amax / amin
        value = result.gather(d, index)
        self_is = self == result
        src_is = s == value
        share = grad / self_is.to(grad.dtype).scatter_add(d, index, src_is.to(grad.dtype))
        g_self = self_is.to(grad.dtype) * share
        g_src = src_is.to(grad.dtype) * share.gather(d, index)
    if not include_self:
        g_self = g_self.scatter(d, index, 0)
    if shape0:  # one element: src may be 0-d or hold one element
        return g_self.reshape(()), g_src.reshape(src0_shape)
    return g_self, pad_to(g_src, src.shape)


def scatter_reduce_self_backward(grad, self, dim: int, index, src, reduce: str,
                                 include_self: bool, result):
    """self's gradient of scatter_reduce (_scatter_reduce_grads)."""
    return _scatter_reduce_grads(grad, self, dim, index, src, reduce, include_self, result)[0]


def scatter_reduce_src_backward(grad, self, dim: int, index, src, reduce: str,
                                include_self: bool, result):
    """src's gradient of scatter_reduce (_scatter_reduce_grads)."""
    return _scatter_reduce_grads(grad, self, dim, index, src, reduce, include_self, result)[1]


def scatter_reduce_jvp(self_t, src_t, self, dim: int, index, src, reduce: str,
                       include_self: bool, result):
    """Forward derivative of scatter_reduce: each result element moves with the self element
    at its place and the src elements reduced into it, by the derivatives the backward
    formulas give for a unit cotangent (_scatter_reduce_grads)."""
    g_self, g_src = _scatter_reduce_grads(et.ones_like(result), self, dim, index, src, reduce,
                                          include_self, result)
    if self.dim() == 0:
        return g_self * self_t + (g_src * src_t).sum()
    d = dim % self.dim()
    box = tuple(slice(0, n) for n in index.shape)
    moved = (g_src * src_t)[box]
    return g_self * self_t + et.zeros_like(result).scatter_add(d, index, moved)


def scatter_tangent(self_t, dim: int, index, src_t):
    """Forward mode of scatter (linear): scatter of the tangents. A 0-d src is a Python
    number given to scatter (the core passes it as a 0-d tensor): its tangent is zero."""
    return self_t.scatter(dim, index, src_t if src_t.dim() else 0)


def index_select_backward(grad, self_shape, dim: int, index):
    if len(self_shape) == 0:
        return grad.sum()
    return grad.new_zeros(list(self_shape)).index_add(dim, index, grad)


def index_add_source_backward(grad, dim: int, index, alpha):
    g = grad.index_select(dim, index)
    if isinstance(alpha, et.Tensor) or alpha != 1:
        g = g * (alpha.conjugate() if isinstance(alpha, complex) else alpha)
    return g


def take_along_dim_backward(grad, self_shape, indices, dim):
    if dim is None:
        n = 1
        for s in self_shape:
            n *= s
        flat = grad.new_zeros([n]).scatter_add(0, indices.reshape(-1), grad.reshape(-1))
        return flat.reshape(list(self_shape))
    nd = len(self_shape)
    d = _dim(dim, nd)
    a = list(self_shape)
    b = list(indices.shape)
    a[d] = b[d] = 1
    common = list(et.broadcast_shapes(tuple(a), tuple(b)))
    src = list(common)
    src[d] = self_shape[d]
    idx = list(common)
    idx[d] = indices.shape[d]
    # the gradient of the input broadcast to ``src``; fix() sums it down to the input's shape
    return grad.new_zeros(src).scatter_add(d, indices.expand(idx), grad)


def _key_of(indices):
    return tuple(slice(None) if i is None else i for i in indices)


def index_put_self_backward(grad, indices, accumulate: bool):
    if accumulate:
        return grad
    return grad.index_put(list(indices), grad.new_zeros(()), False)


def index_put_values_backward(grad, indices, values_shape):
    return reduce_to_shape(grad[_key_of(indices)], values_shape)


def masked_fill_value_backward(grad, mask):
    return grad.masked_fill(mask.logical_not(), 0).sum()


def masked_select_backward(grad, self_shape, mask):
    shape = list(et.broadcast_shapes(tuple(self_shape), tuple(mask.shape)))
    return grad.new_zeros(shape).index_put([mask.expand(shape)], grad, False)


class IndexKeyAddBackward(Node):
    """The node of ``index_key_backward`` (the backward of ``__getitem__``) when its gradient
    is itself differentiated: the gradient of ``zeros[key] += g`` for ``g`` is ``grad[key]``."""

    __slots__ = ("key",)

    def name(self) -> str:
        return "IndexKeyAddBackward"

    def apply(self, grads):
        g = grads[0]
        return [None if g is None else g[self.key]]


def index_key_backward(grad, self_shape, key):
    """Zeros of the input's shape with ``grad`` added at ``key`` (repeated indices add up),
    differentiable in ``grad``."""
    g = grad.new_zeros(list(self_shape))
    g._index_add_key_(key, grad)  # not recorded by the core
    if grad.requires_grad and grad_mode._state.enabled:
        node = IndexKeyAddBackward()
        node.key = key
        node.next_functions = (gradient_edge(grad),)
        g._set_grad_fn(node)
    return g


def setitem_self_backward(grad, key):
    """The gradient of ``self[key] = value`` for self: ``grad`` with the written region zeroed."""
    g = grad.clone()
    g[key] = 0
    return g


def setitem_value_backward(grad, key, value_shape):
    """``grad[key]`` reduced to the value's shape (broadcast, extra leading size-1 dims)."""
    return reduce_to_shape(grad[key], value_shape)


def _span(sizes, strides, offset: int) -> int:
    """One past the highest storage element a strided view touches (offset if empty)."""
    if any(s == 0 for s in sizes):
        return offset
    return offset + sum((s - 1) * t for s, t in zip(sizes, strides)) + 1


def as_strided_backward(grad, self, size, stride, storage_offset):
    """The gradient of ``self.as_strided(size, stride, storage_offset)`` for ``self``: the
    gradient scattered (added where the view overlaps itself) into a buffer laid out like
    the storage, read back with self's geometry."""
    base_off = self.storage_offset()
    off = base_off if storage_offset is None else storage_offset
    n = max(_span(self.shape, self.stride(), base_off), _span(size, stride, off))
    idx = et.arange(n).as_strided(size, stride, off).reshape(-1)
    flat = grad.new_zeros([n]).index_add(0, idx, grad.reshape(-1))
    return flat.as_strided(tuple(self.shape), tuple(self.stride()), base_off)
