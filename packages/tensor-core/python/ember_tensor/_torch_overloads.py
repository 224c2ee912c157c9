"""The forms PyTorch gives a few ops in Python rather than in its schema: ``norm`` with a
string ``p`` ('fro', 'nuc'), ``scatter`` with ``reduce=``, the function form of ``fill_``
(``fill``: ops.yaml's fill is the in-place kernel) and the trivial functions ``resolve_neg``
and ``zero_``. ``ember_tensor`` installs them over the ops' bindings (which
they call); autograd records the ops they call."""

from __future__ import annotations

from . import _C

__all__ = ["fill", "norm", "resolve_neg", "scatter", "zero_"]

_SCATTER_REDUCE = {"add": "sum", "multiply": "prod"}


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """PyTorch's torch.norm: p a number (the vector p-norm over dim, every element if None;
    inf, -inf and 0 included), 'fro' (the Frobenius norm: the 2-norm over dim) or 'nuc' (the
    nuclear norm of the matrices over the two dims of dim, the last two by default)."""
    if p == "nuc":
        from . import linalg

        x = input if dtype is None else input.to(dtype)
        dims = (-2, -1) if dim is None else tuple(dim)
        result = linalg.matrix_norm(x, "nuc", dim=dims, keepdim=keepdim)
    elif isinstance(p, str) and p != "fro":
        raise RuntimeError(f"norm(): p must be a number, 'fro' or 'nuc', got '{p}'")
    else:
        result = _C.norm(input, 2 if p == "fro" else p, dim, keepdim, dtype=dtype)
    if out is not None:
        out.copy_(result)
        return out
    return result


def _norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
    return norm(self, p, dim, keepdim, dtype=dtype)


def _scatter_src(input, index, src, value, reduce):
    if src is None:
        src = value
    if reduce is None:
        return src, None
    if reduce not in _SCATTER_REDUCE:
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
    if not isinstance(src, _C.Tensor):
        src = _C.full(tuple(index.shape), src, dtype=input.dtype, device=input.device)
    return src, _SCATTER_REDUCE[reduce]


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """src (a tensor, or a number: also as value=) written into a copy of input at index
    along dim; reduce='add' or 'multiply' combines it with input's values instead."""
    src, how = _scatter_src(input, index, src, value, reduce)
    if how is None:
        return _C.scatter(input, dim, index, src)
    return input.scatter_reduce(dim, index, src, how)


def _scatter_method(self, dim, index, src=None, *, value=None, reduce=None):
    return scatter(self, dim, index, src, value=value, reduce=reduce)


def _scatter_inplace(self, dim, index, src=None, *, value=None, reduce=None):
    src, how = _scatter_src(self, index, src, value, reduce)
    if how is None:
        return _BOUND_SCATTER_(self, dim, index, src)
    return self.scatter_reduce_(dim, index, src, how)


def value_of(like, value, refusal: str):
    """value (a number, or a 0-d tensor) as a 0-d tensor of like's dtype and device (fill's
    and index_fill's value); RuntimeError refusal (formatted with the {dim}) for a tensor of
    more dimensions."""
    if isinstance(value, _C.Tensor):
        if value.dim() != 0:
            raise RuntimeError(refusal.format(dim=value.dim()))
        return value.to(like.dtype)
    return _C.full((), value, dtype=like.dtype, device=like.device)


def fill(input, value):
    """A new tensor of input's shape and dtype holding value (a number, or a 0-d tensor whose
    gradient is the sum of the result's)."""
    value = value_of(input, value, "fill only supports 0-dimension value tensor but got tensor "
                                   "with {dim} dimensions.")
    # a where() keeps input in the graph (with a zero gradient), as PyTorch's fill does
    return _C.where(_C.ones_like(input, dtype=_C.bool), value, input)


def resolve_neg(input):
    """input itself: no Ember tensor carries a lazy negative bit to resolve."""
    return input


def zero_(input):
    """input filled with zeros, in place."""
    return input.zero_()


_BOUND_SCATTER_ = _C.Tensor.scatter_


def install(tensor_class) -> None:
    """The methods: Tensor.norm, scatter and scatter_ with PyTorch's extra forms, the complex
    conversions cfloat / cdouble, __rdiv__ (PyTorch's name for the reflected division) and
    slice (aten.slice's view)."""
    tensor_class.norm = _norm_method
    tensor_class.scatter = _scatter_method
    tensor_class.scatter_ = _scatter_inplace
    tensor_class.cfloat = lambda self, *, memory_format=None: self.to(_C.complex64)
    tensor_class.cdouble = lambda self, *, memory_format=None: self.to(_C.complex128)
    tensor_class.__rdiv__ = tensor_class.__rtruediv__
    tensor_class.slice = _slice


def _slice(self, dim=0, start=None, end=None, step=1):
    """PyTorch's aten.slice: the view self[..., start:end:step, ...] along dim."""
    d = dim % max(self.dim(), 1)
    return self[(slice(None),) * d + (slice(start, end, step),)]
