"""Linear algebra with PyTorch's ``torch.linalg`` names, arguments and semantics.

Decompositions and solvers (``cholesky``, ``qr``, ``eigh``, ``eigvalsh``, ``svd``,
``svdvals``, ``solve``, ``inv``, ``det``, ``slogdet``, ``solve_triangular``,
``ldl_factor_ex``, ``ldl_solve``) are ops of the core (LAPACK,
float32/float64/complex64/complex128, batched over leading dimensions); the rest is
composed of them and of other ops, so autograd differentiates it all. Every
function takes a batch of matrices ``(*, m, n)`` where it takes a matrix. A decomposition
that fails (a matrix that is not positive-definite, singular, or with non-finite values for
``svd``) raises ``LinAlgError``, a ``RuntimeError``. ``eig`` and ``eigvals`` (LAPACK's
geev) take real or complex matrices and give complex results; every op takes complex64 and
complex128 matrices too (LAPACK's c/z routines): eigenvalues of Hermitian matrices,
singular values, norms and log|det| are real, as in PyTorch. The Array API namespace's
``linalg`` (``ember_tensor.array_api.linalg``) computes with these functions, adding only
the standard's checks, dtype rules and special cases.

Example::

    >>> import ember_tensor as et
    >>> A = et.tensor([[4.0, 2.0], [2.0, 3.0]], dtype=et.float64)
    >>> L = et.linalg.cholesky(A)
    >>> bool(et.allclose(L @ L.mT, A))
    True
    >>> et.linalg.solve(A, et.tensor([2.0, 1.0], dtype=et.float64)).tolist()
    [0.5, 0.0]
"""

from __future__ import annotations

import builtins
import math

from . import _C
from ._linalg_more import (  # the rest of torch.linalg, composed of the core's ops
    cholesky_ex,
    householder_product,
    inv_ex,
    ldl_factor,
    lstsq,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    matrix_exp,
    solve_ex,
    tensorinv,
    tensorsolve,
    vander,
)

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "householder_product",
    "inv",
    "inv_ex",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]


LinAlgError = _C.LinAlgError
LinAlgError.__module__ = __name__
LinAlgError.__doc__ = "A matrix decomposition or solve failed (a RuntimeError, as in PyTorch)."

cholesky = _C.linalg_cholesky
qr = _C.linalg_qr
eigh = _C.linalg_eigh
eigvalsh = _C.linalg_eigvalsh
eig = _C.linalg_eig
ldl_factor_ex = _C.linalg_ldl_factor_ex
ldl_solve = _C.linalg_ldl_solve
eigvals = _C.linalg_eigvals
svd = _C.linalg_svd
svdvals = _C.linalg_svdvals
solve = _C.linalg_solve
inv = _C.linalg_inv
det = _C.linalg_det
slogdet = _C.linalg_slogdet
solve_triangular = _C.linalg_solve_triangular
matmul = _C.matmul


_HALF = (_C.float16, _C.bfloat16)


def _dtype_name(dtype) -> str:
    """PyTorch's name of a dtype in messages (Double, Long, ComplexFloat, ...)."""
    return dtype._scalar_type_name


def _check_tensor(fn: str, name: str, x) -> None:
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"linalg.{fn}: argument '{name}' must be a Tensor, not {type(x).__name__}")


def _floating(fn: str, x) -> None:
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(
            f"linalg.{fn}: Expected a floating point or complex tensor as input. "
            f"Got {_dtype_name(x.dtype)}"
        )


def _matrix(fn: str, A, square: bool = False, floating: bool = True) -> None:
    _check_tensor(fn, "A", A)
    if A.dim() < 2:
        raise RuntimeError(f"linalg.{fn}: The input tensor A must have at least 2 dimensions.")
    if floating:
        _floating(fn, A)
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"linalg.{fn}: A must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )


def _norm_dtype(fn: str, x, dtype):
    """The dtype a norm of floating or complex x computes in: dtype, which x must widen to
    (complex for complex x, real for real x), or x's. The norm itself is real (the
    ``to_real()`` of this dtype)."""
    _floating(fn, x)
    if dtype is None:
        return x.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(
            f"linalg.{fn}: dtype should be floating point or complex, but got "
            f"{_dtype_name(dtype)}"
        )
    if dtype.is_complex != x.dtype.is_complex:
        kind = "complex" if x.dtype.is_complex else "real"
        raise RuntimeError(
            f"linalg.{fn}: dtype should be {kind} for {kind} inputs, but got "
            f"{_dtype_name(dtype)}"
        )
    if _C.promote_types(x.dtype, dtype) != dtype:
        raise RuntimeError(
            f"linalg.{fn}: the dtype of the input ({_dtype_name(x.dtype)}) should be "
            f"convertible without narrowing to the specified dtype ({_dtype_name(dtype)})"
        )
    return dtype


def _check_identity(ord, x, dims) -> None:
    """PyTorch's rule for the norms that are a minimum (ord < 0) or a maximum (inf): over
    zero elements they are an error, unless every reduced dimension is non-empty."""
    if x.numel() or not (ord < 0 or ord == math.inf):
        return
    if dims is None:
        raise RuntimeError(
            f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because "
            "the operation does not have an identity"
        )
    for d in dims:
        if -x.dim() <= d < x.dim() and x.shape[d] == 0:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {ord} norm on the dimension {d} "
                "because this dimension is empty and the operation does not have an identity"
            )


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ``ord``-norm of x over ``dim`` (an int, a tuple, or None or () for all elements),
    treating the selected elements as one vector: ``ord`` is any real number, ``inf``,
    ``-inf`` or 0 (the count of nonzeros). Floating or complex x; ``dtype`` (one x widens
    to) is the dtype computed in, and returned (its real dtype for complex x: the norm is
    real). float16 and bfloat16 are computed in float32 and rounded once, as PyTorch does.
    Norms that are a minimum (``ord < 0``) or a maximum
    (``inf``) over zero elements raise RuntimeError."""
    _check_tensor("vector_norm", "x", x)
    out_dtype = _norm_dtype("vector_norm", x, dtype).to_real()
    dims = (dim,) if isinstance(dim, int) else (tuple(dim) if dim is not None else None)
    if dims == ():
        dims = None
    _check_identity(ord, x, dims)
    kw = {} if dims is None else {"dim": dims}
    compute = _C.float32 if out_dtype in _HALF else out_dtype
    if not x.dtype.is_complex:
        # the core's norm: its gradient is 0 where the norm is (PyTorch's subgradient), where
        # the composition below would give sqrt'(0) * 0 = NaN
        r = _C.norm(x.to(compute), ord, None if dims is None else list(dims), keepdim)
        if dims is None and keepdim:
            r = r.reshape((1,) * x.dim())
        return r if r.dtype == out_dtype else r.to(out_dtype)
    a = x.to(compute.to_complex()).abs()
    if ord == math.inf:
        r = a.amax(**kw, keepdim=keepdim)
    elif ord == -math.inf:
        r = a.amin(**kw, keepdim=keepdim)
    elif ord == 0:  # a count, with a zero gradient (a * 0: it hangs from x, as PyTorch's)
        r = (a != 0).to(a.dtype).sum(**kw, keepdim=keepdim) + (a * 0).sum(**kw,
                                                                          keepdim=keepdim)
    elif ord == 1:
        r = a.sum(**kw, keepdim=keepdim)
    elif ord == 2:
        r = (a * a).sum(**kw, keepdim=keepdim).sqrt()
    else:
        r = a.pow(ord).sum(**kw, keepdim=keepdim).pow(1.0 / ord)
    if dims is None and keepdim:
        r = r.reshape((1,) * x.dim())
    return r if r.dtype == out_dtype else r.to(out_dtype)


def _two_dims(fn: str, A, dim) -> tuple[int, int]:
    d = tuple(dim)
    if len(d) != 2:
        raise RuntimeError(f"linalg.{fn}: dim must be a 2-tuple. Got {d}")
    nd = A.dim()
    r = tuple(i + nd if i < 0 else i for i in d)
    for i, v in zip(d, r):
        if not 0 <= v < nd:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                f"but got {i})"
            )
    if r[0] == r[1]:
        raise RuntimeError(f"linalg.{fn}: dims must be different. Got ({d[0]}, {d[1]})")
    return r


def _extremum(t, ord, dim: int, keepdim: bool):
    """amax (ord > 0) or amin of t over dim; as in PyTorch's matrix norms, the maximum over
    zero elements is 0 (the minimum stays an error)."""
    if ord > 0 and t.shape[dim] == 0:
        shape = list(t.shape)
        if keepdim:
            shape[dim] = 1
        else:
            del shape[dim]
        return _C.zeros(shape, dtype=t.dtype, device=t.device)
    return t.amax(dim, keepdim=keepdim) if ord > 0 else t.amin(dim, keepdim=keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Matrix norm of the matrices in ``dim`` of A: ``'fro'``, ``'nuc'`` (sum of singular
    values), ``2``/``-2`` (largest/smallest singular value), ``1``/``-1`` (max/min column
    sum of absolute values), ``inf``/``-inf`` (max/min row sum). A maximum over zero
    elements is 0, a minimum an error, as in PyTorch."""
    _matrix("matrix_norm", A)
    if dtype is not None:
        A = A.to(_norm_dtype("matrix_norm", A, dtype))
    d0, d1 = _two_dims("matrix_norm", A, dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(A.movedim((d0, d1), (-2, -1)))
        r = s.sum(-1) if ord == "nuc" else _extremum(s, ord, -1, False)
        if keepdim:
            r = r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
        return r
    if ord in (1, -1, math.inf, -math.inf):
        # column sums (ord 1) reduce over rows first; row sums (ord inf) over columns
        inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)
        r = _extremum(vector_norm(A, 1, inner, True), ord, outer, True)
        return r if keepdim else r.squeeze((d0, d1))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm when ``dim`` is an int (or A is 1-d with ``dim`` None), a matrix norm
    when ``dim`` is a 2-tuple (or A is 2-d); with ``ord`` None and ``dim`` None, the 2-norm
    of A flattened."""
    _check_tensor("norm", "A", A)
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.dim() == 1:
            return vector_norm(A, ord, None, keepdim, dtype=dtype)
        if A.dim() == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        raise RuntimeError(
            f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
            f"Got {A.dim()}D."
        )
    if len(dim) == 1:
        return vector_norm(A, ord, dim, keepdim, dtype=dtype)
    return matrix_norm(A, ord, dim, keepdim, dtype=dtype)


def _tolerance(A, s, atol, rtol):
    """max(atol, rtol * largest singular value), shaped (..., 1) against s (..., k), with
    PyTorch's defaults: rtol = eps * max(m, n) when neither is given, else 0 unless given.
    atol and rtol are floats or tensors broadcasting against A's batch shape."""
    if rtol is None:
        rtol = 0.0 if atol is not None else _eps(s.dtype) * builtins.max(A.shape[-2], A.shape[-1])
    if atol is None:
        atol = 0.0
    # float arguments: an int of any size is its float, as PyTorch's parser reads it
    atol, rtol = (float(v) if isinstance(v, int) else v for v in (atol, rtol))
    smax = s.amax(-1, keepdim=True)
    rtol_t = rtol if not isinstance(rtol, _C.Tensor) else rtol.unsqueeze(-1)
    atol_t = atol if not isinstance(atol, _C.Tensor) else atol.unsqueeze(-1)
    return _C.maximum(smax * rtol_t, _C.zeros_like(smax) + atol_t)


def _eps(dtype) -> float:
    return {_C.float64: 2.220446049250313e-16, _C.float32: 1.1920928955078125e-07}.get(
        dtype, 1.1920928955078125e-07
    )


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """Number of singular values (absolute eigenvalues when ``hermitian``) above
    ``max(atol, rtol * largest)``, as int64; 0 for matrices without elements."""
    _matrix("matrix_rank", A)
    if A.numel() == 0:  # (before eigvalsh, which would refuse a non-square empty matrix)
        return _C.zeros(list(A.shape)[:-2], dtype=_C.int64, device=A.device)
    s = eigvalsh(A).abs() if hermitian else svdvals(A)
    return (s > _tolerance(A, s, atol, rtol)).sum(-1)


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """Moore-Penrose pseudo-inverse through the SVD (eigh when ``hermitian``): singular
    values at or below ``max(atol, rtol * largest)`` count as zero. (The op linalg_pinv of
    ops.yaml, whose gradient is the pseudo-inverse's own: right at every rank.)"""
    import ember_tensor

    return ember_tensor.linalg_pinv(A, atol=atol, rtol=rtol, hermitian=hermitian)


def _pinv(A, atol, rtol, hermitian):
    """linalg_pinv's body (decompositions.py)."""
    _matrix("pinv", A)
    if hermitian:
        w, V = eigh(A)
        s, left, right = w, V, V.mH
    else:
        U, s, Vh = svd(A, full_matrices=False)
        left, right = Vh.mH, U.mH
    if A.numel() == 0:  # (..., n, m), whatever the tolerances' shapes
        return left @ right
    mag = s.abs()
    keep = mag > _tolerance(A, mag, atol, rtol)
    return (left * _reciprocal_where(keep, s).unsqueeze(-2)) @ right


def _reciprocal_where(keep, s):
    """1 / s where keep, 0 elsewhere, never dividing by the dropped (maybe zero) values, so
    that gradients stay finite."""
    return _C.where(keep, _C.reciprocal(_C.where(keep, s, _C.ones_like(s))), _C.zeros_like(s))


def matrix_power(A, n):
    """A multiplied by itself ``n`` times (by squaring), a new tensor; ``n == 0`` gives
    identities and a negative ``n`` powers the inverse."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power: n must be an int, not {type(n).__name__}")
    _matrix("matrix_power", A, square=True, floating=False)
    if n == 0:  # (+ an empty sum of A: zero, hanging from A in the graph as PyTorch's)
        eye = _C.eye(A.shape[-1], dtype=A.dtype, device=A.device)
        return eye.expand(A.shape) + _C.sum(A[..., :0, :], (-2,), True).to(A.dtype)
    if n == 1:
        return A.clone()
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


def cross(input, other, *, dim=-1):
    """Cross product of 3-vectors along ``dim`` (batch dimensions broadcast; both tensors
    have the same number of dimensions)."""
    _check_tensor("cross", "input", input)
    _check_tensor("cross", "other", other)
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.dtype != other.dtype:  # PyTorch's kernel takes one dtype, without promotion
        raise RuntimeError(f"expected scalar type {input.dtype._scalar_type_name} but found "
                           f"{other.dtype._scalar_type_name}")
    nd = input.dim()
    d = dim + nd if dim < 0 else dim
    if not 0 <= d < nd:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})"
        )
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} "
            f"and {other.shape[d]}"
        )
    a0, a1, a2 = (input.select(d, i) for i in range(3))
    b0, b1, b2 = (other.select(d, i) for i in range(3))
    return _C.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


def vecdot(x, y, *, dim=-1):
    """Dot product of the vectors along ``dim`` of two floating tensors of one dtype (all
    dimensions broadcast, ``dim`` too, as in PyTorch)."""
    _check_tensor("vecdot", "x", x)
    _check_tensor("vecdot", "y", y)
    _floating("vecdot", x)
    if x.dtype != y.dtype:
        raise RuntimeError(
            f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{_dtype_name(x.dtype)} and y of type {_dtype_name(y.dtype)} instead"
        )
    return (x * y).sum(dim)


def multi_dot(tensors):
    """The product of a sequence of matrices (the first may be 1-d: a row vector; the last
    1-d: a column vector), multiplied in the order that needs the fewest operations."""
    if isinstance(tensors, _C.Tensor):  # not a sequence of its rows, as PyTorch's parser says
        raise TypeError("linalg_multi_dot(): argument 'tensors' (position 1) must be tuple of "
                        "Tensors, not Tensor")
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    first_vec, last_vec = ts[0].dim() == 1, ts[-1].dim() == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(-1)
    for i, t in enumerate(ts):
        if t.dim() != 2:
            raise RuntimeError(
                f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D"
                if 0 < i < len(ts) - 1
                else f"multi_dot(): the first and last tensors must be 1D or 2D but got {t.dim()}D"
            )
    for i in range(len(ts) - 1):
        if ts[i].shape[1] != ts[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(ts[i].shape)} and "
                f"{list(ts[i + 1].shape)} cannot be multiplied"
            )
    dims = [t.shape[0] for t in ts] + [ts[-1].shape[1]]
    n = len(ts)
    # classic matrix-chain order by dynamic programming
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i, j):
        if i == j:
            return ts[i]
        k = split[i][j]
        return product(i, k) @ product(k + 1, j)

    r = product(0, n - 1)
    if first_vec:
        r = r.squeeze(0)
    if last_vec:
        r = r.squeeze(-1)
    return r


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal (a view) of the matrices of A, ``offset`` above (>0) or below (<0) the
    main one."""
    return _C.diagonal(A, offset, dim1, dim2)


def cond(A, p=None):
    """Condition number of A in the norm ``p`` (None: 2-norm, through the singular values;
    ``'fro'``, ``'nuc'``, ``1``, ``-1``, ``inf``, ``-inf``: norm(A) * norm(inv(A)))."""
    _matrix("cond", A)
    if p is None or p in (2, -2):
        s = svdvals(A)
        if p == -2:
            return s[..., -1] / s[..., 0]
        return s[..., 0] / s[..., -1]
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"linalg.cond(ord={p}): A must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )
    return matrix_norm(A, p) * matrix_norm(inv(A), p)
