"""Indexing composites: the reducing scatters (``scatter_reduce``, ``index_reduce``), the
index writes (``index_fill``, ``index_copy``, ``masked_scatter``, ``put``) and
``as_strided_scatter``, composed of the core's gather / index_put / index_add / sort, so
that they are differentiable and run on every device.

The reducing scatters check their arguments, flatten the written positions to offsets into
the flat tensor and reduce with the kernel ``_scatter_reduce_flat``, in the elements' order
(PyTorch's CPU order); ``scatter_reduce`` is one autograd node with PyTorch's derivative
(derivatives.yaml: ties of 'amax'/'amin' share the gradient evenly, 'prod' is exact with
zeros).
"""

from __future__ import annotations

import ember_tensor as _et

from .._torch_overloads import check_fill_value
from .reduction import _wrap

__all__ = [
    "_unsafe_masked_index",
    "_unsafe_masked_index_put_accumulate",
    "as_strided_scatter",
    "index_copy",
    "index_fill",
    "index_reduce",
    "masked_scatter",
    "put",
    "scatter_reduce",
]

_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _flat_offsets(index, dim: int, shape):
    """The offset into a contiguous tensor of ``shape`` of each element of ``index`` (the
    index value along dim, the element's own position along the other dims)."""
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    offsets = index if strides[dim] == 1 else _et.mul(index, strides[dim])
    for d in range(index.dim()):
        if d != dim:
            view = [1] * index.dim()
            view[d] = index.shape[d]
            pos = _et.arange(index.shape[d], device=index.device).reshape(view)
            offsets = _et.add(offsets, _et.mul(pos, strides[d]))
    return offsets


def _check_scatter(op: str, self, dim: int, index, src, values: bool = True):
    """PyTorch's checks of scatter's arguments; with values=False, all but the range of the
    index values (the caller's kernel checks those)."""
    if index.dtype != _et.int64:
        raise RuntimeError(f"{op}(): Expected dtype int64 for index")
    if src.dtype != self.dtype:
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype")
    if max(index.dim(), 1) != max(self.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    for d in range(index.dim()):
        if index.shape[d] > (src.shape[d] if src.dim() else 1) or (
                d != dim and index.shape[d] > (self.shape[d] if self.dim() else 1)):
            raise RuntimeError(
                f"Expected index {list(index.shape)} to be smaller than self "
                f"{list(self.shape)} apart from dimension {dim} and to be smaller size than "
                f"src {list(src.shape)}"
            )
    if values:
        _check_index_range(self, dim, index)


def _check_index_range(self, dim: int, index):
    size = self.shape[dim] if self.dim() else 1
    if index.numel():
        lowest, highest = index.aminmax()
        if int(lowest) < 0 or int(highest) >= size:
            bad = _et.logical_or(_et.lt(index, 0), _et.ge(index, size))
            value = int(index[bad].reshape(-1)[0])
            raise RuntimeError(f"index {value} is out of bounds for dimension {dim} with "
                               f"size {size}")


def scatter_reduce(self, dim, index, src, reduce, include_self=True):
    """self with src's elements (those index covers) reduced into the positions index names
    along dim: reduce is 'sum', 'prod', 'mean' (integers: floor division), 'amax' or
    'amin'; include_self=False leaves self's own values out of the written positions'
    reductions. RuntimeError for another reduce, a dtype mismatch or an index out of range
    (PyTorch's messages)."""
    if reduce not in _SCATTER_REDUCTIONS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    dim = _wrap(dim, self.dim())
    # along the first dim an index out of range gives a flat offset out of range, which the
    # kernel finds on its pass (no extra pass over the index here); along another it could
    # land on a neighbouring row, so it is checked first
    outermost = dim == 0
    _check_scatter("scatter", self, dim, index, src, values=not outermost)
    if reduce == "mean" and self.dtype == _et.bool:
        raise NotImplementedError('"scatter_gather_tensor_cpu_reduce_mean" not implemented for '
                                  "'Bool'")
    if index.numel() == 0:
        return self.clone()
    shape = tuple(self.shape) if self.dim() else (1,)
    idx = index.reshape(index.shape if index.dim() else (1,))
    used = src.reshape(src.shape if src.dim() else (1,))
    used = used[tuple(slice(0, n) for n in idx.shape)]
    t = _flat_offsets(idx, dim, shape).reshape(-1)
    try:
        out = _et._C._scatter_reduce_flat(self.reshape(-1), t, used.reshape(-1), reduce,
                                          include_self)
    except RuntimeError:
        if outermost:
            _check_index_range(self, dim, index)  # PyTorch's message for the index found
        raise
    return out.reshape(self.shape)


def index_reduce(self, dim, index, source, reduce, include_self=True):
    """self with the slices of source along dim reduced into the slices index (1-d) names:
    reduce is 'prod', 'mean', 'amax' or 'amin' (PyTorch's index_reduce)."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index.dim()} with type: {index.dtype._scalar_type_name} and size: "
                         f"{list(index.shape)}")
    if source.dtype != self.dtype:
        raise RuntimeError(f"index_reduce_(): self ({self.dtype._scalar_type_name}) and source "
                           f"({source.dtype._scalar_type_name}) must have the same scalar type")
    dim = _wrap(dim, self.dim())
    if self.dim() == 0:
        return _et.scatter_reduce(self, 0, index.reshape(-1), source.reshape(-1), reduce,
                              include_self=include_self)
    view = [1] * source.dim()
    view[dim] = -1
    full = index.reshape(view).expand(source.shape)
    return _et.scatter_reduce(self, dim, full.contiguous(), source, reduce,
                              include_self=include_self)


def _slices(dim: int, index):
    return (slice(None),) * dim + (index,)


def index_fill(self, dim, index, value):
    """A copy of self with the slices index (0-d or 1-d) names along dim set to value (a
    number or a 0-d tensor)."""
    dim = _wrap(dim, self.dim())
    if index.dtype != _et.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    idx = index.reshape(-1)
    size = self.shape[dim] if self.dim() else 1
    if idx.numel():
        bad = _et.logical_or(_et.lt(idx, -size), _et.ge(idx, size))
        if bool(bad.any()):
            raise IndexError(f"index {int(idx[bad][0])} is out of bounds for dimension {dim} "
                             f"with size {size}")
    if isinstance(value, _et.Tensor) and value.dim() == 0 and value.device.type == "cpu":
        _et._C._check_scalar(self.dtype, value.item())  # read as a number, as PyTorch's
    check_fill_value(value, "index_fill_ only supports a 0-dimensional value tensor, "
                            "but got tensor with {dim} dimension(s).")
    # the filled positions as a mask along dim: a masked_fill differentiable in self and value
    # (whose autograd refuses a value requiring grad for an integer self, as PyTorch's)
    mask = _et.zeros(size, dtype=_et.bool, device=self.device)
    if idx.numel():
        mask = _et.index_put(mask, (_et.remainder(idx, size),),
                             _et.ones((), dtype=_et.bool, device=self.device))
    if self.dim():
        view = [1] * self.dim()
        view[dim] = size
        mask = mask.reshape(view)
    else:
        mask = mask.reshape(())
    return _et.masked_fill(self, mask, value)


def index_copy(self, dim, index, source):
    """A copy of self with source's slices along dim written at the positions index (1-d)
    names (PyTorch's index_copy)."""
    dim = _wrap(dim, self.dim())
    if index.dtype != _et.int64:
        raise RuntimeError("index_copy_(): Expected a long tensor for index, but got "
                           f"{index.dtype._scalar_type_name}")
    if index.dim() > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.dim()})")
    if source.dtype != self.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {self.dtype._scalar_type_name} and (source) "
                           f"{source.dtype._scalar_type_name}")
    if source.dim() and self.dim() and source.dim() != self.dim():
        raise IndexError("index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.dim()}), "
                         f"destination dimensionality ({self.dim()})")
    if source.dim() == 0 and self.dim() > 1 or source.dim() == self.dim() and any(
            source.shape[d] != self.shape[d] for d in range(self.dim()) if d != dim):
        def slice_shape(t):
            return " ".join(str(n) for d, n in enumerate(t.shape) if d != dim)

        raise RuntimeError("index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {slice_shape(self)} at dimension "
                           f"{dim} and source slice shape: {slice_shape(source)} at dimension "
                           f"{dim}.")
    idx = index.reshape(-1)
    n_source = source.shape[dim] if source.dim() else 1
    if idx.numel() != n_source:
        raise IndexError(f"index_copy_(): Number of indices ({idx.numel()}) should be equal to "
                         f"source.size(dim) ({n_source})")
    size = self.shape[dim] if self.dim() else 1
    if idx.numel():
        bad = _et.logical_or(_et.lt(idx, 0), _et.ge(idx, size))
        if bool(bad.any()):
            raise IndexError(f"index_copy_(): index {int(idx[bad][0])} is out of bounds for "
                             f"dimension {dim} with size {size}")
    out = self.clone()
    if self.dim() == 0:  # every index is 0: the last source element written stays
        if source.numel() != idx.numel():
            raise RuntimeError("index_copy_(): Source/destination tensor must have same slice "
                               f"shapes. Destination slice shape:  at dimension 0 and source "
                               f"slice shape: {source.numel()} at dimension 0.")
        out.copy_(source.reshape(-1)[-1] if source.numel() else out)
        return out
    out[_slices(dim, idx)] = source
    return out


def masked_scatter(self, mask, source):
    """self (broadcast with mask) with source's leading elements written, in order, where
    mask is true. RuntimeError when source has fewer elements than mask has trues."""
    if mask.dtype != _et.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {mask.dtype}")
    if source.dtype != self.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but "
                           f"got{self.dtype._scalar_type_name} and "
                           f"{source.dtype._scalar_type_name}")
    shape = _et.broadcast_shapes(self.shape, mask.shape)
    out = self.expand(shape).clone()
    m = mask.expand(shape)
    n = int(m.sum())
    if n > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[m] = source.reshape(-1)[:n]
    return out


def put(self, index, source, accumulate=False):
    """A copy of self, read as 1-d, with source's values written (or, accumulate=True,
    added) at index (negative counts from the end). IndexError for an index out of range."""
    if index.dtype != _et.int64:
        raise RuntimeError("put_(): Expected a long tensor for index, but got "
                           f"{index.dtype._scalar_type_name}")
    n = self.numel()
    idx = index.reshape(-1)
    if source.numel() != idx.numel():
        raise IndexError("put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() = "
                         f"{idx.numel()}")
    if idx.numel():
        bad = _et.logical_or(_et.lt(idx, -n), _et.ge(idx, n))
        if bool(bad.any()):
            raise IndexError(f"out of range: tried to access index {int(idx[bad][0])} on a "
                             f"tensor of {n} elements.")
    flat = self.contiguous().reshape(-1)
    out = _et.index_put(flat, (_et.remainder(idx, max(n, 1)),), source.reshape(-1),
                        accumulate)
    return out.reshape(self.shape)


def _last_offset(offset: int, shape, strides) -> int:
    return offset + sum((n - 1) * st for n, st in zip(shape, strides))


def as_strided_scatter(self, src, size, stride, storage_offset=None):
    """A copy of self with src written at the positions of self.as_strided(size, stride,
    storage_offset): positions in self's storage (offset: self's own by default), as
    PyTorch's; the view's positions that are not elements of self are not written."""
    base = self.storage_offset()
    offset = base if storage_offset is None else storage_offset
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    count = 1
    for n in size:
        count *= n
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src.shape)}, slice size = {list(size)}")
    if self.numel() == 0 or count == 0:
        return self.clone()
    extent = max(_last_offset(base, self.shape, self.stride()),
                 _last_offset(offset, size, stride)) + 1
    ids = _et.arange(extent, device=self.device)
    owner = _et.full((extent,), -1, dtype=_et.int64, device=self.device)
    owner = _et.index_put(owner, (ids.as_strided(self.shape, self.stride(), base).reshape(-1),),
                          _et.arange(self.numel(), device=self.device))
    targets = owner[ids.as_strided(size, stride, offset).reshape(-1)]
    keep = _et.ge(targets, 0)
    flat = self.contiguous().reshape(-1)
    out = _et.index_put(flat, (targets[keep],), src.reshape(-1).to(self.dtype)[keep])
    return out.reshape(self.shape)


def _check_masked_index(mask, indices):
    """mask as bool (PyTorch's kernel reads any dtype as nonzero = true); TypeError for a
    None index (PyTorch's binding takes tensors only), RuntimeError for a non-integer one."""
    if len(indices) == 0:
        raise IndexError("at least one index must be provided")
    for k, index in enumerate(indices):
        if index is None:
            raise TypeError(f"expected Tensor as element {k} in argument 2, but got NoneType")
        if index.dtype not in (_et.int64, _et.int32):
            raise RuntimeError("tensors used as indices must be long or int tensors")
    return mask if mask.dtype == _et.bool else _et.ne(mask, 0)


def _unsafe_masked_index(self, mask, indices, fill):
    """self[indices] (index tensors of the leading dims), each index clamped into
    [-size, size - 1] of its dim (negative ones then count from the end), and fill where mask
    (broadcast to the result) is false: PyTorch's gather for padded or bounded lookups, whose
    out-of-range indices the mask hides."""
    mask = _check_masked_index(mask, indices)
    key = tuple(i.clamp(-self.shape[d], self.shape[d] - 1) for d, i in enumerate(indices))
    if self.numel() == 0:
        shape = _et.empty(self.shape, device=self.device)[key].shape
        return _et.full(shape, fill, dtype=self.dtype, device=self.device)
    return _et.masked_fill(self[key], _et.logical_not(mask), fill)


def _unsafe_masked_index_put_accumulate(self, mask, indices, values):
    """self with values added at indices (each clamped into [-size, size - 1] of its dim)
    where mask is true; where it is false nothing is added."""
    mask = _check_masked_index(mask, indices)
    if self.numel() == 0:
        return self.clone()
    key = tuple(i.clamp(-self.shape[d], self.shape[d] - 1) for d, i in enumerate(indices))
    masked = _et.masked_fill(values, _et.logical_not(mask), 0)
    return _et.index_put(self, key, masked, accumulate=True)
