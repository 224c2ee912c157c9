"""Shape and small linear-algebra composites (``composite: python`` in ops.yaml): moves,
stacks and products written once with other ops, PyTorch's names, defaults and errors.
Autograd records the ops they call; they run on every device those ops run on."""

from __future__ import annotations

import ember_tensor as _et

from .reduction import _wrap

__all__ = [
    "_chunk_cat",
    "alias_copy",
    "argwhere",
    "as_strided_copy",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "broadcast_tensors",
    "cartesian_prod",
    "column_stack",
    "combinations",
    "constant_pad_nd",
    "diag",
    "diag_embed",
    "diagflat",
    "diagonal_copy",
    "diagonal_scatter",
    "dsplit",
    "dstack",
    "expand_copy",
    "fliplr",
    "flipud",
    "hsplit",
    "hstack",
    "kron",
    "meshgrid",
    "msort",
    "narrow_copy",
    "outer",
    "permute_copy",
    "ravel",
    "repeat_interleave",
    "roll",
    "rot90",
    "select_scatter",
    "slice_scatter",
    "split_with_sizes",
    "split_with_sizes_copy",
    "squeeze_copy",
    "sum_to_size",
    "t_copy",
    "take",
    "tensor_split",
    "tile",
    "trace",
    "transpose_copy",
    "tril_indices",
    "triu_indices",
    "unbind_copy",
    "unfold",
    "unfold_copy",
    "unravel_index",
    "unsafe_chunk",
    "unsafe_split",
    "unsqueeze_copy",
    "view_copy",
    "vsplit",
    "vstack",
]


def _need_dims(op: str, t, n: int, what: str) -> None:
    if t.dim() < n:
        raise RuntimeError(f"{op}: Input must be >= {n}-d{what}")


def ravel(self):
    """self flattened to 1-d (a view when the layout allows, else a copy)."""
    return self.reshape(-1)


def fliplr(self):
    """self reversed along dim 1 (columns); at least 2-d."""
    _need_dims("fliplr", self, 2, ".")
    return _et.flip(self, [1])


def flipud(self):
    """self reversed along dim 0 (rows); at least 1-d."""
    _need_dims("flipud", self, 1, ".")
    return _et.flip(self, [0])


def hstack(tensors):
    """1-d tensors joined along dim 0, the others along dim 1."""
    ts = [t if t.dim() > 0 else t.reshape(1) for t in tensors]
    if not ts:
        raise RuntimeError("hstack expects a non-empty TensorList")
    return _et.cat(ts, 0 if ts[0].dim() == 1 else 1)


def vstack(tensors):
    """The tensors, each viewed as at least 2-d, joined along dim 0."""
    if not len(tensors):
        raise RuntimeError("vstack expects a non-empty TensorList")
    return _et.cat([t.reshape(1, -1) if t.dim() < 2 else t for t in tensors], 0)


def trace(self):
    """The sum of a matrix's main diagonal (integers sum to int64, as sum does)."""
    if self.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.dim()}")
    return _et.diagonal(self, 0, 0, 1).sum()


def outer(self, vec2):
    """The outer product of two 1-d tensors: (n, m) with element (i, j) self[i] * vec2[j]."""
    if self.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"outer: expected 1-D tensors, but got {self.dim()}-D and "
                           f"{vec2.dim()}-D tensors")
    return self.unsqueeze(1) * vec2.unsqueeze(0)


# --------------------------------------------------------------------- moves and repeats


def _tensors_of(tensors) -> tuple:
    """A Tensor[] argument spread as *args (varargs in ops.yaml) as a tuple: one tensor comes
    alone, several packed by the composite layer."""
    return (tensors,) if isinstance(tensors, _et.Tensor) else tuple(tensors)


def _dims_of(v) -> tuple:
    """An int[] argument as a tuple (the composite layer leaves a single int an int)."""
    return (v,) if isinstance(v, int) else tuple(v)


def roll(self, shifts, dims=()):
    """self's elements shifted by ``shifts[i]`` along ``dims[i]``, wrapping around; with no
    dims, along the flattened tensor (then one shift), the shape kept."""
    shifts, dims = _dims_of(shifts), _dims_of(dims)
    if not dims:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return roll(self.reshape(-1), shifts, (0,)).reshape(self.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    out = self
    for shift, dim in zip(shifts, dims):
        n = self.size(dim)  # IndexError for a dim out of range
        s = shift % n if n else 0
        if s:
            out = _et.cat([out.narrow(dim, n - s, s), out.narrow(dim, 0, n - s)], dim)
    return out if out is not self else self.clone()


def rot90(self, k=1, dims=(0, 1)):
    """self rotated by 90 degrees k times in the plane of dims, from dims[0] towards dims[1]."""
    dims = _dims_of(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if self.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.dim()}")
    d0, d1 = dims
    n = self.dim()
    if not (-n <= d0 < n and -n <= d1 < n):
        bad = d0 if not -n <= d0 < n else d1
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {bad})")
    if d0 % n == d1 % n:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return _et.flip(self, [d1]).transpose(d0, d1)
    if k == 2:
        return _et.flip(self, [d0, d1])
    if k == 3:
        return _et.flip(self, [d0]).transpose(d0, d1)
    return self.clone()


def tile(self, dims):
    """self repeated ``dims[i]`` times along each dim; dims shorter than self.dim() are padded
    with leading ones, a longer one gives self leading dims of size 1."""
    dims = _dims_of(dims)
    if len(dims) < self.dim():
        dims = (1,) * (self.dim() - len(dims)) + dims
    return self.repeat(dims)


# --------------------------------------------------------------------- at least n-d, stacks


def _atleast(tensors, n: int, view):
    if isinstance(tensors, _et.Tensor):
        return view(tensors) if tensors.dim() < n else tensors
    return tuple(view(t) if t.dim() < n else t for t in tensors)


def atleast_1d(tensors):
    """Each tensor viewed with at least one dim (0-d becomes (1,)); one tensor in, one out."""
    return _atleast(tensors, 1, lambda t: t.reshape(1))


def atleast_2d(tensors):
    """Each tensor viewed with at least two dims: 0-d (1, 1), 1-d (n,) becomes (1, n)."""
    return _atleast(tensors, 2, lambda t: t.reshape(1, -1))


def atleast_3d(tensors):
    """Each tensor viewed with at least three dims: 0-d (1, 1, 1), 1-d (1, n, 1), 2-d (m, n)
    becomes (m, n, 1)."""
    def view(t):
        return t.reshape(1, -1, 1) if t.dim() < 2 else t.unsqueeze(-1)

    return _atleast(tensors, 3, view)


def column_stack(tensors):
    """The tensors as columns side by side: 0-d and 1-d ones become (n, 1) columns, then all
    are joined along dim 1."""
    if not len(tensors):
        raise RuntimeError("column_stack expects a non-empty TensorList")
    return _et.cat([t.reshape(-1, 1) if t.dim() < 2 else t for t in tensors], 1)


def dstack(tensors):
    """The tensors, each viewed as at least 3-d, joined along dim 2 (depth)."""
    if not len(tensors):
        raise RuntimeError("dstack expects a non-empty TensorList")
    return _et.cat(atleast_3d(tuple(tensors)), 2)


def block_diag(tensors):
    """A block-diagonal matrix of the tensors (0-d: 1x1, 1-d: one row); the dtype is their
    promoted dtype, zeros elsewhere."""
    mats = []
    for i, t in enumerate(_tensors_of(tensors)):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.dim()} dimensions")
        mats.append(t.reshape(1, -1) if t.dim() < 2 else t)
    if not mats:
        return _et.empty(1, 0)
    dt = mats[0].dtype
    for m in mats[1:]:
        dt = _et.promote_types(dt, m.dtype)
    width = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        r, c = m.shape
        kw = {"dtype": dt, "device": m.device}
        rows.append(_et.cat([_et.zeros(r, left, **kw), m.to(dt),
                             _et.zeros(r, width - left - c, **kw)], 1))
        left += c
    return _et.cat(rows, 0)


def broadcast_tensors(tensors):
    """The tensors expanded (views) to their broadcast shape."""
    tensors = _tensors_of(tensors)
    shape = _et.broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


def meshgrid(tensors, *, indexing=None):
    """Coordinate grids of 0-d or 1-d tensors (views): with ``indexing='ij'`` (the default)
    output i varies along dim i; with ``'xy'`` the first two dims are swapped (Cartesian)."""
    ts = list(_tensors_of(tensors))
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", "
                           f"but received: {indexing}")
    for t in ts:
        if t.dim() > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
        if t.dtype != ts[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != ts[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t.numel() for t in ts]
    grids = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        grids.append(t.reshape(view).expand(shape))
    if swap:  # the grids of (ts[1], ts[0], ...) in 'ij', the first two handed back swapped
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(tensors):
    """The Cartesian product of 1-d tensors: (N, len(tensors)) rows, in itertools.product's
    order; one tensor is returned as it is."""
    tensors = _tensors_of(tensors)
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    return _et.stack([g.reshape(-1) for g in meshgrid(tensors, indexing="ij")], 1)


# --------------------------------------------------------------------- splits


def _split_dim(op: str, self, need: int, dim: int) -> None:
    if self.dim() < need:
        raise RuntimeError(f"torch.{op} requires a tensor with at least {need} dimension, but "
                           f"got a tensor with {self.dim()} dimensions!")


_MAX_PARTS = 2**24


def tensor_split(self, indices_or_sections, dim=0):
    """Views of self split along dim: into ``n`` nearly equal parts (the first ``size % n``
    one element longer) for an int, or at the given indices for a list."""
    size = self.size(dim)
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        if n > max(size, 1) and n > _MAX_PARTS:  # (PyTorch would try to build them all)
            raise RuntimeError(f"tensor_split: {n} sections of a dimension of size {size} "
                               f"would be {n} tensors (at most {_MAX_PARTS} empty ones)")
        q, r = divmod(size, n)
        bounds, start = [], 0
        for i in range(n):
            bounds.append((start, start + q + (1 if i < r else 0)))
            start = bounds[-1][1]
    else:
        cuts = [0, *indices_or_sections, size]
        bounds = list(zip(cuts[:-1], cuts[1:]))
    out = []
    for lo, hi in bounds:
        lo = min(max(lo + size if lo < 0 else lo, 0), size)
        hi = min(max(hi + size if hi < 0 else hi, lo), size)
        out.append(self.narrow(dim, lo, hi - lo))
    return tuple(out)


def _xsplit(op: str, self, indices_or_sections, need: int, dim: int):
    _split_dim(op, self, need, dim)
    if isinstance(indices_or_sections, int):
        size = self.size(dim)
        if indices_or_sections == 0 or size % indices_or_sections:
            raise RuntimeError(f"torch.{op} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {size} is not divisible by the split_size "
                               f"{indices_or_sections}!")
    return tensor_split(self, indices_or_sections, dim)


def hsplit(self, indices_or_sections):
    """tensor_split along dim 1 (dim 0 for 1-d tensors); a section count must divide the
    size."""
    _split_dim("hsplit", self, 1, 0)
    return _xsplit("hsplit", self, indices_or_sections, 1, 1 if self.dim() > 1 else 0)


def vsplit(self, indices_or_sections):
    """tensor_split along dim 0 of an at least 2-d tensor; a section count must divide the
    size."""
    return _xsplit("vsplit", self, indices_or_sections, 2, 0)


def dsplit(self, indices_or_sections):
    """tensor_split along dim 2 of an at least 3-d tensor; a section count must divide the
    size."""
    return _xsplit("dsplit", self, indices_or_sections, 3, 2)


def split_with_sizes(self, split_sizes, dim=0):
    """Views of self split along dim into parts of the given sizes, which must sum to the
    dim's size."""
    sizes = _dims_of(split_sizes)
    n = self.size(dim)
    if sum(sizes) != n or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {dim}), but got split_sizes="
                           f"{list(sizes)}")
    return tuple(_et.split(self, list(sizes), dim))


def unsafe_split(self, split_size, dim=0):
    """split (PyTorch's variant that skips autograd's view checks; here the same views)."""
    return tuple(_et.split(self, split_size, dim))


def unsafe_chunk(self, chunks, dim=0):
    """chunk (PyTorch's variant that skips autograd's view checks; here the same views)."""
    return tuple(_et.chunk(self, chunks, dim))


# --------------------------------------------------------------------- diagonals


def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    """Matrices with self's last dim on their ``offset`` diagonal, placed at (dim1, dim2) of
    the result (self.dim() + 1 dims; the matrices are n + |offset| square)."""
    nd = self.dim() + 1
    for d in (dim1, dim2):
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                             f"{nd - 1}], but got {d})")
    if dim1 % nd == dim2 % nd:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    v = self if self.dim() else self.reshape(1)
    batch, n = tuple(v.shape[:-1]), v.shape[-1]
    k = abs(offset)
    kw = {"dtype": v.dtype, "device": v.device}
    # an n x n diagonal matrix: each element followed by n zeros, cut to n*n
    d = _et.cat([v.unsqueeze(-1), _et.zeros(*batch, n, n, **kw)], -1)
    d = d.reshape(*batch, n * (n + 1))[..., : n * n].reshape(*batch, n, n)
    if k:
        if offset > 0:  # element (i, i + k)
            d = _et.cat([_et.zeros(*batch, n, k, **kw), d], -1)
            d = _et.cat([d, _et.zeros(*batch, k, n + k, **kw)], -2)
        else:  # element (i + k, i)
            d = _et.cat([d, _et.zeros(*batch, n, k, **kw)], -1)
            d = _et.cat([_et.zeros(*batch, k, n + k, **kw), d], -2)
    return _et.movedim(d, (-2, -1), (dim1 % nd, dim2 % nd))


def diag(self, diagonal=0):
    """For a 1-d tensor, the square matrix with it on the given diagonal; for a 2-d one, a copy
    of that diagonal."""
    if self.dim() == 1:
        return diag_embed(self, diagonal, 0, 1)
    if self.dim() == 2:
        return _et.diagonal(self, diagonal, 0, 1).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.dim()}D")


def diagflat(self, offset=0):
    """The square matrix with self's elements (flattened) on its ``offset`` diagonal."""
    return diag_embed(self.reshape(-1), offset, 0, 1)


# --------------------------------------------------------------------- copies into views


def _scattered(src, view, what: str):
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the {what} of self. src size "
                           f"= {list(src.shape)}, {what} size = {list(view.shape)}")
    return view


def select_scatter(self, src, dim, index):
    """A copy of self with ``self.select(dim, index)`` replaced by src (of that shape)."""
    out = self.clone()
    _scattered(src, out.select(dim, index), "slice").copy_(src)
    return out


def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    """A copy of self with ``self[..., start:end:step, ...]`` (along dim) replaced by src."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    out = self.clone()
    index = [slice(None)] * self.dim()
    index[dim] = slice(start, end, step)  # IndexError for a dim out of range
    _scattered(src, out[tuple(index)], "slice").copy_(src)
    return out


def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    """A copy of self with ``self.diagonal(offset, dim1, dim2)`` replaced by src."""
    out = self.clone()
    _scattered(src, _et.diagonal(out, offset, dim1, dim2), "diagonal").copy_(src)
    return out


# --------------------------------------------------------------------- products and picks


def kron(self, other):
    """The Kronecker product: block (i, j, ...) is self[i, j, ...] * other; the shorter
    operand gets leading dims of size 1."""
    n = max(self.dim(), other.dim())
    a = self.reshape((1,) * (n - self.dim()) + tuple(self.shape))
    b = other.reshape((1,) * (n - other.dim()) + tuple(other.shape))
    a = a.reshape([s for d in a.shape for s in (d, 1)])
    b = b.reshape([s for d in b.shape for s in (1, d)])
    return (a * b).reshape([x * y for x, y in zip(a.shape[::2], b.shape[1::2])])


def take(self, index):
    """self's elements at the given indices of its flattened form (negative ones from the
    end), in index's shape."""
    if index.dtype != _et.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{str(index.dtype).rpartition('.')[2].capitalize()}")
    try:
        return self.reshape(-1)[index]  # advanced indexing checks the range as it reads
    except IndexError:
        n = self.numel()
        lo, hi = index.min().item(), index.max().item()
        bad = hi if hi >= n else lo
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         "elements.") from None


def msort(self):
    """self sorted along dim 0 (the values of sort(self, 0))."""
    return _et.sort(self, 0)[0]


# --------------------------------------------------------------------- the unfold view


def unfold(self, dimension, size, step):
    """A view of every ``size``-long window along ``dimension``, ``step`` apart: that dim
    becomes the window count ((n - size) // step + 1) and a last dim of ``size`` is added."""
    shape, strides = list(self.shape), list(self.stride())
    if self.dim() == 0:
        shape, strides = [1], [1]
    nd = len(shape)
    if not -nd <= dimension < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                         f"{nd - 1}], but got {dimension})")
    d = dimension % nd
    if size > shape[d]:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {shape[d]} but size "
                           f"is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    shape[d], last = (shape[d] - size) // step + 1, strides[d]
    if shape[d] > 1:  # one window: its stride is never used (a huge step would overflow it)
        strides[d] *= step
    if self.dim() == 0:
        return self.as_strided([size], [1], self.storage_offset())
    return self.as_strided(shape + [size], strides + [last], self.storage_offset())


# --------------------------------------------------------------------- copies of views
# PyTorch's *_copy ops: the view op's result as a new contiguous tensor of its own


def alias_copy(self):
    """A copy of self."""
    return self.clone()


def as_strided_copy(self, size, stride, storage_offset=None):
    """A copy of ``self.as_strided(size, stride, storage_offset)``."""
    return self.as_strided(size, stride, storage_offset).clone()


def diagonal_copy(self, offset=0, dim1=0, dim2=1):
    """A copy of ``self.diagonal(offset, dim1, dim2)``."""
    return _et.diagonal(self, offset, dim1, dim2).clone()


def expand_copy(self, size, *, implicit=False):
    """A copy of ``self.expand(size)``."""
    return self.expand(size).clone()


def narrow_copy(self, dim, start, length):
    """A copy of ``self.narrow(dim, start, length)``."""
    return self.narrow(dim, start, length).clone()


def permute_copy(self, dims):
    """A copy of ``self.permute(dims)``."""
    return self.permute(dims).clone()


def squeeze_copy(self, dim=None):
    """A copy of ``self.squeeze(dim)``."""
    return (self.squeeze() if dim is None else self.squeeze(dim)).clone()


def t_copy(self):
    """A copy of ``self.t()``."""
    return self.t().clone()


def transpose_copy(self, dim0, dim1):
    """A copy of ``self.transpose(dim0, dim1)``."""
    return self.transpose(dim0, dim1).clone()


def unsqueeze_copy(self, dim):
    """A copy of ``self.unsqueeze(dim)``."""
    return self.unsqueeze(dim).clone()


def view_copy(self, size):
    """A copy of self with shape ``size``: what ``self.view(size)`` would hold, also where
    self's strides admit no such view (PyTorch's view_copy copies, as reshape does)."""
    return self.reshape(size).clone()


def unfold_copy(self, dimension, size, step):
    """A copy of ``self.unfold(dimension, size, step)``."""
    return unfold(self, dimension, size, step).clone()


def unbind_copy(self, dim=0):
    """Copies of ``self.unbind(dim)``."""
    return tuple(t.clone() for t in self.unbind(dim))


def split_with_sizes_copy(self, split_sizes, dim=0):
    """Copies of ``self.split_with_sizes(split_sizes, dim)``."""
    return tuple(t.clone() for t in split_with_sizes(self, split_sizes, dim))


# --------------------------------------------------------------------- index factories


def _triangle_indices(row, col, offset, dtype, device, lower: bool):
    if row < 0 or col < 0:
        raise RuntimeError(f"row must be non-negative, got{row}" if row < 0
                           else f"col must be non-negative, got{col}")
    # the lower triangle never reaches past column row + offset - 1, the upper one past row
    # col - offset - 1: only those are built (triu_indices(2**50, 2) has three elements)
    width = min(col, max(0, row + offset)) if lower else col
    height = row if lower else min(row, max(0, col - offset))
    r = _et.arange(height, device=device).unsqueeze(1)
    c = _et.arange(width, device=device).unsqueeze(0)
    keep = _et.le(c - r, offset) if lower else _et.ge(c - r, offset)
    idx = _et.nonzero(keep.expand(height, width)).t()
    return idx.to(_et.int64 if dtype is None else dtype)


def tril_indices(row, col, offset=0, *, dtype=None, device=None):
    """The (2, N) row and column indices of the lower triangle (on and below diagonal
    ``offset``) of a row x col matrix, in row-major order."""
    return _triangle_indices(row, col, offset, dtype, device, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None):
    """The (2, N) row and column indices of the upper triangle (on and above diagonal
    ``offset``) of a row x col matrix, in row-major order."""
    return _triangle_indices(row, col, offset, dtype, device, False)


def unravel_index(indices, shape):
    """The coordinates in ``shape`` of flat indices: a tuple of tensors, one per dim."""
    if indices.is_floating_point() or indices.is_complex() or indices.dtype == _et.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    dims = _dims_of(shape)
    if any(d < 0 for d in dims):
        raise ValueError("'shape' cannot have negative values, but got "
                         f"{tuple(dims)}")
    total = 1
    for d in dims:
        total *= d
    if indices.numel() and (bool(_et.any(_et.ge(indices, total)).item())
                            or bool(_et.any(_et.lt(indices, -total)).item())):
        raise ValueError(f"'indices' must be in range [-{total}, {total})")
    flat = _et.where(_et.lt(indices, 0), indices + total, indices).to(_et.int64)
    out = []
    for d in reversed(dims):
        out.append(_et.remainder(flat, d) if d else flat * 0)
        flat = _et.floor_divide(flat, d) if d else flat
    return tuple(reversed(out))


def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along dim) repeated ``repeats`` times (an int, or a tensor of
    one count per element); with only a tensor of counts, the indices repeated by them."""
    if repeats is None:  # repeat_interleave(counts): arange(len) repeated by counts
        counts = self
        if counts.dim() != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if counts.dtype not in (_et.int32, _et.int64):
            raise NotImplementedError(
                f'"repeat_interleave_cpu" not implemented for \'{counts.dtype._scalar_type_name}\'')
        positions = _et.arange(counts.numel(), dtype=counts.dtype, device=counts.device)
        return repeat_interleave(positions, counts, 0, output_size=output_size)
    if dim is not None and self.dim() == 0:  # no dim of a 0-d tensor to repeat along
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    x = self.reshape(-1) if dim is None else self
    d = 0 if dim is None else _wrap(dim, x.dim())
    n = x.size(d) if x.dim() else 1
    if isinstance(repeats, _et.Tensor) and repeats.dim() > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if isinstance(repeats, _et.Tensor) and repeats.numel() != 1:
        if repeats.numel() != n:
            raise RuntimeError("repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats.numel()} and input.size({d}) = {n}")
        counts = repeats.to(_et.int64)
        if counts.numel() and bool(_et.any(_et.lt(counts, 0)).item()):
            raise RuntimeError("repeats can not be negative")
        ends = _et.cumsum(counts, 0)
        total = int(ends[-1].item()) if n else 0
        # output position j takes the element whose run [ends[i-1], ends[i]) holds j
        index = _et.searchsorted(ends, _et.arange(total, device=self.device), right=True)
    else:
        r = int(repeats.item()) if isinstance(repeats, _et.Tensor) else int(repeats)
        if r < 0:
            raise RuntimeError("repeats can not be negative")
        index = _et.arange(n, device=self.device).unsqueeze(1).expand(n, r).reshape(-1)
    if output_size is not None and output_size != index.numel():  # PyTorch's check of the hint
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {index.numel()} "
                           f"but got {output_size}")
    return x.index_select(d, index)


def sum_to_size(self, size):
    """self summed (over broadcast dims) down to ``size``, which must broadcast to self."""
    target = _dims_of(size)
    if not target:  # a 0-d target: the sum of all (bool and integers to int64, as sum)
        return self.sum()
    lead = self.dim() - len(target)
    if lead < 0 or any(t not in (1, s) for t, s in zip(target, self.shape[lead:])):
        raise RuntimeError(f"size {{{', '.join(map(str, target))}}} is not expandable to size "
                           f"{{{', '.join(map(str, self.shape))}}}.")
    dims = list(range(lead)) + [lead + i for i, t in enumerate(target)
                                if t == 1 and self.shape[lead + i] != 1]
    out = _et.sum(self, dims, True) if dims else self
    return out.reshape(target) if out is not self else self


def argwhere(self):
    """The indices of self's non-zero elements, one row each: nonzero(self)."""
    return _et.nonzero(self)


def combinations(self, r=2, with_replacement=False):
    """The length-r combinations of the 1-d self's elements, one per row (itertools'
    order; with_replacement: elements may repeat)."""
    import itertools

    if self.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(self.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = list(pick(range(self.shape[0]), r)) if r else []
    # (an empty result is indexed out of self too, so that it keeps self's autograd graph)
    index = _et.tensor([i for row in rows for i in row], dtype=_et.int64, device=self.device)
    picked = self[index]
    return picked.reshape(len(rows), r) if r else picked


def constant_pad_nd(self, pad, value=0):
    """self padded with value: pad holds (before, after) pairs for the last dims, the last
    dim first; negative amounts crop."""
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals " + str(len(pad)))
    if len(pad) // 2 > self.dim():
        raise RuntimeError(f"Length of pad should be no more than twice the number of "
                           f"dimensions of the input. Pad length is {len(pad)} while the input "
                           f"has {self.dim()} dimensions.")
    shape = list(self.shape)
    source = [slice(None)] * self.dim()
    target = [slice(None)] * self.dim()
    for i in range(len(pad) // 2):
        d = self.dim() - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        size = shape[d] + before + after
        if shape[d] + min(before, 0) + min(after, 0) < 0:  # PyTorch crops first: more than
            raise RuntimeError("narrow(): length must be non-negative.")  # the dim is an error
        if size < 0:
            raise RuntimeError(f"The input size {shape[d]}, plus negative padding {before} and "
                               f"{after} resulted in a negative output size, which is invalid. "
                               f"Check dimension {d} of your input.")
        source[d] = slice(max(-before, 0), shape[d] - max(-after, 0))
        target[d] = slice(max(before, 0), size - max(after, 0))
        shape[d] = size
    out = _et.full(shape, value, dtype=self.dtype, device=self.device)
    piece = self[tuple(source)]
    if piece.numel():
        out[tuple(target)] = piece
    return out


def _chunk_cat(tensors, dim, num_chunks):
    """Each tensor split into num_chunks equal chunks along dim (zero-padded at the end of dim
    to a multiple of num_chunks), the chunks of all tensors concatenated along dim + 1: the
    result has shape tensors[0].shape[:dim] + (num_chunks, total chunk size). RuntimeError as
    PyTorch's for no tensors, an empty one, mixed dtypes or devices, or other leading sizes."""
    if num_chunks < 1:
        raise RuntimeError("_chunk_cat expects positive num_chunks")
    if len(tensors) == 0:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor list")
    first = tensors[0]
    for t in tensors:
        if t.numel() == 0:
            raise RuntimeError("_chunk_cat expects non-empty tensor")
        if t.dtype != first.dtype:
            raise RuntimeError("_chunk_cat expects all input tensors with the same dtype")
        if t.device != first.device:
            raise RuntimeError("_chunk_cat expects all inputs tensors on the same device")
    if all(t.dim() == first.dim() for t in tensors):
        dim = _wrap(dim, first.dim())
    elif dim < 0:
        raise RuntimeError("_chunk_cat expects non-negative dim when input tensors have "
                           "different ndims")
    elif any(dim >= t.dim() for t in tensors):
        raise RuntimeError("_chunk_cat expects dim < ndim for all input tensors")
    lead = tuple(first.shape[:dim])
    pieces = []
    for t in tensors:
        if tuple(t.shape[:dim]) != lead:
            raise RuntimeError("_chunk_cat expects same sizes of 0,...,dim-1 dimensions for "
                               "all tensors")
        size = t.shape[dim]
        padded = -(-size // num_chunks) * num_chunks
        if padded != size:
            t = _et.constant_pad_nd(t, [0, 0] * (t.dim() - dim - 1) + [0, padded - size], 0)
        pieces.append(t.reshape(lead + (num_chunks, -1)))
    return _et.cat(pieces, dim + 1)
