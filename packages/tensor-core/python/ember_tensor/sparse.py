"""``ember.sparse`` and sparse COO tensors: what graph networks use of ``torch.sparse``.

A ``SparseCOOTensor`` holds ``indices`` (int64, ``(ndim, nnz)``) and ``values`` (``(nnz,)``)
of a ``size``-shaped tensor whose other elements are zero. Products with a dense operand
(``ember.sparse.mm``, ``ember.spmm``, ``ember.sparse.addmm``, ``S @ D``) and
``to_dense``/``sum`` are composed of the core's ops (``index_add``, ``index_select``), so
they run on any device and autograd differentiates them with respect to the dense operand
and to the values. Duplicate coordinates are summed, as in PyTorch (``coalesce`` does it
explicitly and sorts the coordinates).

It is its own class, not a ``Tensor``: the dense ops do not take it (a ``TypeError`` names
the op), and what it supports is listed here: ``shape``/``size()``, ``dtype``, ``device``,
``layout``, ``is_sparse``, ``indices()``, ``values()``, ``_indices()``, ``_values()``,
``_nnz()``, ``coalesce()``, ``is_coalesced()``, ``to_dense()``, ``to(...)``, ``cpu()``,
``cuda()``, ``float()``/``double()``, ``t()``, ``transpose(0, 1)``, ``requires_grad_()``,
multiplication and division by a number, ``@`` and ``neg``.

>>> import ember_tensor as et
>>> a = et.sparse_coo_tensor(et.tensor([[0, 1, 1], [2, 0, 2]]), et.tensor([3., 4., 5.]), (2, 3))
>>> a.to_dense().tolist()
[[0.0, 0.0, 3.0], [4.0, 0.0, 5.0]]
>>> (a @ et.ones(3, 1)).flatten().tolist()
[3.0, 9.0]
"""

from __future__ import annotations

import sys

from . import _C


def _et():
    """The package namespace (its composite ops, such as unique), imported by now."""
    return sys.modules["ember_tensor"]

__all__ = ["DoubleTensor", "FloatTensor", "LongTensor", "SparseCOOTensor", "addmm", "mm",
           "sum"]


class _Layout:
    """A tensor layout (``ember.strided``, ``ember.sparse_coo``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"ember.{self.name}"

    def __reduce__(self):
        return self.name


strided = _Layout("strided")
sparse_coo = _Layout("sparse_coo")


def _as_tensor(x, dtype=None, device=None):
    if isinstance(x, _C.Tensor):
        return x if dtype is None and device is None else x.to(device=device, dtype=dtype)
    return _C.tensor(x, dtype=dtype, device=device)


class SparseCOOTensor:
    """A sparse tensor in coordinate format (see the module docstring)."""

    layout = sparse_coo
    is_sparse = True

    def __init__(self, indices, values, size, coalesced: bool = False) -> None:
        self._indices_t = indices
        self._values_t = values
        from . import Size

        self._size = Size(int(s) for s in size)
        self._coalesced = coalesced

    # ---------------------------------------------------------------- attributes
    @property
    def shape(self):
        return self._size

    def size(self, dim=None):
        return self._size if dim is None else self._size[dim]

    def dim(self) -> int:
        return len(self._size)

    ndim = property(dim)

    @property
    def dtype(self):
        return self._values_t.dtype

    @property
    def device(self):
        return self._values_t.device

    @property
    def is_cuda(self) -> bool:
        return self._values_t.is_cuda

    @property
    def requires_grad(self) -> bool:
        return self._values_t.requires_grad

    def requires_grad_(self, requires_grad: bool = True):
        self._values_t.requires_grad_(requires_grad)
        return self

    @property
    def grad(self):
        return self._values_t.grad

    def indices(self):
        """The ``(ndim, nnz)`` int64 coordinates; a coalesced tensor only, as in PyTorch."""
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._indices_t

    def values(self):
        """The ``(nnz,)`` values; a coalesced tensor only, as in PyTorch."""
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._values_t

    def _indices(self):
        return self._indices_t

    def _values(self):
        return self._values_t

    def _nnz(self) -> int:
        return int(self._values_t.shape[0])

    def is_coalesced(self) -> bool:
        return self._coalesced

    def numel(self) -> int:
        n = 1
        for s in self._size:
            n *= s
        return n

    # ---------------------------------------------------------------- conversions
    def _linear(self):
        """Each value's row-major position in the dense tensor (int64, ``(nnz,)``)."""
        lin = _C.zeros(self._nnz(), dtype=_C.int64, device=self.device)
        for d, s in enumerate(self._size):
            lin = lin * s + self._indices_t[d]
        return lin

    def coalesce(self):
        """The same tensor with sorted, unique coordinates (duplicates summed)."""
        if self._coalesced:
            return self
        lin = self._linear()
        unique, inverse = _et().unique(lin, sorted=True, return_inverse=True)
        values = _C.zeros((unique.shape[0],) + tuple(self._values_t.shape[1:]),
                          dtype=self.dtype, device=self.device)
        values = values.index_add(0, inverse, self._values_t)
        rows = []
        rest = unique
        for s in reversed(self._size):
            rows.append(_et().remainder(rest, s))
            rest = _et().div(rest, s, rounding_mode="floor")
        indices = _et().stack(rows[::-1]) if rows else unique.reshape(0, -1)
        return SparseCOOTensor(indices, values, self._size, coalesced=True)

    def to_dense(self, dtype=None):
        """The dense tensor (differentiable with respect to the values)."""
        flat = _C.zeros(self.numel(), dtype=dtype or self.dtype, device=self.device)
        values = self._values_t if dtype is None else self._values_t.to(dtype)
        return flat.index_add(0, self._linear(), values).reshape(self._size)

    def to(self, *args, **kwargs):
        values = self._values_t.to(*args, **kwargs)
        indices = self._indices_t.to(device=values.device)
        return SparseCOOTensor(indices, values, self._size, self._coalesced)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to(device if device is not None else "cuda")

    def float(self):
        return self.to(_C.float32)

    def double(self):
        return self.to(_C.float64)

    def detach(self):
        return SparseCOOTensor(self._indices_t, self._values_t.detach(), self._size,
                               self._coalesced)

    def t(self):
        """The transpose of a 2-D sparse tensor."""
        if self.dim() != 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                               f"but got {self.dim()} sparse and 0 dense dimensions")
        return self.transpose(0, 1)

    def transpose(self, dim0: int, dim1: int):
        order = list(range(self.dim()))
        order[dim0], order[dim1] = order[dim1], order[dim0]
        size = [self._size[d] for d in order]
        return SparseCOOTensor(self._indices_t.index_select(
            0, _C.tensor(order, device=self.device)), self._values_t, size)

    # ---------------------------------------------------------------- arithmetic
    def __mul__(self, other):
        if isinstance(other, (int, float)):
            return SparseCOOTensor(self._indices_t, self._values_t * other, self._size,
                                   self._coalesced)
        return NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, (int, float)):
            return SparseCOOTensor(self._indices_t, self._values_t / other, self._size,
                                   self._coalesced)
        return NotImplemented

    def __neg__(self):
        return self * -1

    def __matmul__(self, other):
        return mm(self, other)

    def mm(self, other):
        return mm(self, other)

    def matmul(self, other):
        return mm(self, other)

    def __repr__(self) -> str:
        return (f"tensor(indices={self._indices_t!r},\n       values={self._values_t!r},\n"
                f"       size={tuple(self._size)}, nnz={self._nnz()}, layout=ember.sparse_coo)")


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      requires_grad: bool = False, check_invariants=None,
                      is_coalesced=None):
    """A sparse COO tensor of ``values`` at ``indices`` (``(ndim, nnz)`` ints); ``size``
    defaults to the smallest shape holding every index. Indices out of ``size`` or negative
    are a ``RuntimeError``, as in PyTorch."""
    values = _as_tensor(values, dtype=dtype, device=device)
    indices = _as_tensor(indices, device=values.device)
    if indices.dtype != _C.int64:
        if indices.is_floating_point() or indices.dtype == _C.bool:
            raise RuntimeError(f"indices must be an int64 tensor, got {indices.dtype}")
        indices = indices.to(_C.int64)
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    nnz = indices.shape[1]
    if values.dim() != 1:
        raise RuntimeError(f"sparse_coo_tensor: values must be 1-D (Ember's sparse tensors "
                           f"have no dense dimensions), got shape {list(values.shape)}")
    if values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {values.shape[0]}")
    if nnz and bool(_et().lt(indices, 0).any()):
        raise RuntimeError("found negative index in indices")
    if size is None:
        size = [int(v) + 1 for v in indices.amax(1).tolist()] if nnz else [0] * indices.shape[0]
    size = [int(s) for s in size]
    if len(size) != indices.shape[0]:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({indices.shape[0]}) + "
                           f"dense_dim (0), but got {len(size)}")
    if nnz:
        top = indices.amax(1).tolist()
        for d, (hi, s) in enumerate(zip(top, size)):
            if hi >= s:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                                   f"{s} but found index {hi}")
    out = SparseCOOTensor(indices, values, size, coalesced=bool(is_coalesced))
    if requires_grad:
        out.requires_grad_(True)
    return out


def to_sparse(self, sparse_dim=None, *, layout=None):
    """``Tensor.to_sparse()``: the COO form of a dense tensor (its nonzero elements)."""
    if layout not in (None, sparse_coo):
        raise RuntimeError(f"to_sparse: layout {layout} is not supported (sparse_coo only)")
    if sparse_dim is not None and sparse_dim != self.dim():
        raise RuntimeError("to_sparse: Ember's sparse tensors have no dense dimensions: "
                           f"sparse_dim must be {self.dim()}")
    indices = _et().stack(list(_et().nonzero(self, as_tuple=True))) if self.dim() else \
        _C.zeros((0, int(bool(self.item()))), dtype=_C.int64)
    mask = _et().ne(self, 0)
    return SparseCOOTensor(indices, self[mask] if self.dim() else self.reshape(-1)[mask.reshape(
        -1)], self.shape, coalesced=True)


def _check_dense(op: str, sparse_arg, dense) -> None:
    if not isinstance(sparse_arg, SparseCOOTensor):
        raise TypeError(f"{op}: expected a sparse COO tensor as the first operand, got "
                        f"{type(sparse_arg).__name__}")
    if not isinstance(dense, _C.Tensor):
        raise TypeError(f"{op}: expected a dense tensor as the second operand, got "
                        f"{type(dense).__name__}")
    if sparse_arg.dim() != 2 or dense.dim() != 2:
        raise RuntimeError(f"{op}: expected 2-D matrices, got {sparse_arg.dim()}-D and "
                           f"{dense.dim()}-D")
    if sparse_arg.shape[1] != dense.shape[0]:
        raise RuntimeError(f"{op}: mat1 and mat2 shapes cannot be multiplied "
                           f"({sparse_arg.shape[0]}x{sparse_arg.shape[1]} and "
                           f"{dense.shape[0]}x{dense.shape[1]})")
    if sparse_arg.dtype != dense.dtype:
        raise RuntimeError(f"{op}: expected mat1 and mat2 to have the same dtype, but got: "
                           f"{sparse_arg.dtype} != {dense.dtype}")


def mm(mat1, mat2):
    """``mat1 @ mat2`` for a sparse ``(n, m)`` ``mat1`` and a dense ``(m, k)`` ``mat2``: a
    dense ``(n, k)``; differentiable with respect to ``mat2`` and ``mat1``'s values. Two
    dense matrices are ``ember.mm``'s, as in PyTorch."""
    if isinstance(mat1, _C.Tensor):
        return _et().mm(mat1, mat2)
    _check_dense("sparse.mm", mat1, mat2)
    rows, cols = mat1._indices_t[0], mat1._indices_t[1]
    contrib = mat2.index_select(0, cols) * mat1._values_t.unsqueeze(1)
    out = _C.zeros(mat1.shape[0], mat2.shape[1], dtype=mat2.dtype, device=mat2.device)
    return out.index_add(0, rows, contrib)


def addmm(mat, mat1, mat2, *, beta: float = 1, alpha: float = 1):
    """``beta * mat + alpha * (mat1 @ mat2)`` with a sparse ``mat1``."""
    return mat * beta + mm(mat1, mat2) * alpha


def sum(input, dim=None, dtype=None):  # noqa: A001 - PyTorch's name
    """The sum of a sparse tensor's elements: all of them (a 0-d dense tensor), or over
    ``dim`` (a dense tensor: Ember's sparse sums are dense)."""
    if not isinstance(input, SparseCOOTensor):
        raise TypeError(f"sparse.sum: expected a sparse COO tensor, got {type(input).__name__}")
    if dim is None:
        return input._values_t.sum(dtype=dtype) if dtype else input._values_t.sum()
    return input.to_dense(dtype).sum(dim)


def spmm(mat1, mat2):
    """``ember.spmm``: ``sparse.mm``."""
    return mm(mat1, mat2)


def _legacy(dtype):
    def make(indices, values, size=None):
        return sparse_coo_tensor(indices, values, size, dtype=dtype)

    return make


# the legacy constructors (``torch.sparse.FloatTensor(indices, values, size)``)
FloatTensor = _legacy(_C.float32)
DoubleTensor = _legacy(_C.float64)
LongTensor = _legacy(_C.int64)
