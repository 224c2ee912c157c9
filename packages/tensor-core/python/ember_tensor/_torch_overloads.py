"""The forms PyTorch gives a few ops in Python rather than in its schema: ``norm`` with a
string ``p`` ('fro', 'nuc'), ``scatter`` with ``reduce=``, the function form of ``fill_``
(``fill``: ops.yaml's fill is the in-place kernel) and the trivial functions ``resolve_neg``
and ``zero_``. ``ember_tensor`` installs them over the ops' bindings (which
they call); autograd records the ops they call."""

from __future__ import annotations

from . import _C
from ._composites import _tensor_arg

__all__ = ["fill", "norm", "resolve_neg", "scatter", "zero_"]

_SCATTER_REDUCE = {"add": "sum", "multiply": "prod"}


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """PyTorch's torch.norm: p a number (the vector p-norm over dim, every element if None;
    inf, -inf and 0 included), 'fro' or None (the Frobenius norm: the 2-norm over dim) or 'nuc' (the
    nuclear norm of the matrix over the two dims of dim, every dim by default). 'fro' over
    more than two dims is, as in PyTorch, linalg.matrix_norm's error."""
    many_dims = dim is not None and not isinstance(dim, int) and len(dim) > 2
    if p == "nuc" or (p == "fro" and many_dims):
        from . import linalg

        x = input if dtype is None else input.to(dtype)
        dims = tuple(range(input.dim())) if dim is None else tuple(dim)
        result = linalg.matrix_norm(x, p, dim=dims, keepdim=keepdim)
    elif isinstance(p, str) and p != "fro":
        raise RuntimeError(f"norm(): p must be a number, 'fro' or 'nuc', got '{p}'")
    else:
        if input.is_complex():  # the norm of the moduli: a real result, as PyTorch's
            input = input.abs() if dtype is None else input.to(dtype).abs()
            dtype = None
        result = _C.norm(input, 2 if p is None or p == "fro" else p, dim, keepdim, dtype=dtype)
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


def check_fill_value(value, refusal: str) -> None:
    """RuntimeError refusal (formatted with the {dim}) for a value tensor of more than 0 dims
    (fill's and index_fill's value: a number or a 0-d tensor)."""
    if isinstance(value, _C.Tensor) and value.dim() != 0:
        raise RuntimeError(refusal.format(dim=value.dim()))


def fill(input, value):
    """A new tensor of input's shape and dtype holding value (a number, or a 0-d tensor whose
    gradient is the sum of the result's)."""
    check_fill_value(value, "fill only supports 0-dimension value tensor but got tensor with {dim} "
                           "dimensions.")
    if isinstance(value, _C.Tensor) and not value.requires_grad:
        value = value.to(input.dtype)  # converted as copy_ converts (wrapping), as PyTorch's
    # a masked_fill keeps input in the graph (with a zero gradient), as PyTorch's fill does
    return _C.masked_fill(input, _C.ones_like(input, dtype=_C.bool), value)


def resolve_neg(input):
    """input itself: no Ember tensor carries a lazy negative bit to resolve."""
    _tensor_arg("resolve_neg", input)
    return input


def zero_(input):
    """input filled with zeros, in place."""
    return input.zero_()


_BOUND_SCATTER_ = _C.Tensor.scatter_


def _rtruediv(self, other):
    """other / self as PyTorch computes it: self.reciprocal() * other (rounded twice, so not
    always other's division's last bit; a float16 self takes its reciprocal in float16)."""
    try:
        return self.reciprocal() * other
    except TypeError:
        return NotImplemented


def install(tensor_class) -> None:
    """The methods: Tensor.norm, scatter and scatter_ with PyTorch's extra forms, the complex
    conversions cfloat / cdouble, __rtruediv__ / __rdiv__ (PyTorch's reflected division),
    slice (aten.slice's view), and the legacy type / nbytes / apply_ / map_."""
    tensor_class.norm = _norm_method
    tensor_class.scatter = _scatter_method
    tensor_class.scatter_ = _scatter_inplace
    tensor_class.cfloat = lambda self, *, memory_format=None: self.to(_C.complex64)
    tensor_class.cdouble = lambda self, *, memory_format=None: self.to(_C.complex128)
    tensor_class.__rtruediv__ = tensor_class.__rdiv__ = _rtruediv
    tensor_class.slice = _slice
    tensor_class.type = _type
    tensor_class.nbytes = property(lambda self: self.numel() * self.element_size(),
                                   doc="The bytes of the elements (numel * element_size).")
    tensor_class.apply_ = _apply_
    tensor_class.map_ = _map_


# the legacy tensor type names: dtype <-> "FloatTensor" ...
_TYPE_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
    "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
}
_DTYPE_OF_TYPE = {v: k for k, v in _TYPE_NAMES.items()}


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """Without dtype: the legacy type name, "ember.FloatTensor" ("ember.cuda.FloatTensor" on
    a GPU). With a dtype or such a name (the "torch." spelling too): self converted to it
    (self if it already is)."""
    if not isinstance(non_blocking, bool):
        raise TypeError(f"type(): argument 'non_blocking' must be bool, not "
                        f"{type(non_blocking).__name__}")
    name = str(self.dtype).rsplit(".", 1)[-1]
    if dtype is None:
        where = "cuda." if self.device.type == "cuda" else ""
        return f"ember.{where}{_TYPE_NAMES[name]}Tensor"
    device = None
    if isinstance(dtype, str):
        parts = dtype.split(".")
        if len(parts) < 2 or parts[0] not in ("ember", "torch") or not parts[-1].endswith(
                "Tensor") or parts[-1][:-len("Tensor")] not in _DTYPE_OF_TYPE:
            raise ValueError(f"invalid type: '{dtype}'")
        device = "cuda" if parts[1:-1] == ["cuda"] else "cpu"
        dtype = getattr(_C, _DTYPE_OF_TYPE[parts[-1][:-len("Tensor")]])
    if dtype == self.dtype and (device is None or device == self.device.type):
        return self
    return self.to(device=device, dtype=dtype) if device else self.to(dtype)


def _apply_(self, callable, /):  # noqa: A002 - PyTorch's argument name
    """Replaces each element (CPU tensors only) with callable(element), in place."""
    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    values = [callable(v) for v in self.reshape(-1).tolist()]
    self.copy_(_C.tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


def _map_(self, tensor, /, callable):  # noqa: A002 - PyTorch's argument name
    """Replaces each element (CPU tensors only) with callable(element, other's element),
    tensor broadcast to self's shape, in place."""
    if self.device.type != "cpu" or tensor.device.type != "cpu":
        raise TypeError("map_ is only implemented on CPU tensors")
    other = tensor.expand(self.shape).reshape(-1).tolist()
    values = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), other)]
    self.copy_(_C.tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


def _slice(self, dim=0, start=None, end=None, step=1):
    """PyTorch's aten.slice: the view self[..., start:end:step, ...] along dim."""
    d = dim % max(self.dim(), 1)
    return self[(slice(None),) * d + (slice(start, end, step),)]
