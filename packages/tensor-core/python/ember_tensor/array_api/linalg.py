"""(array API) The linear algebra extension of the 2024.12 standard: ``xp.linalg``.

Computed by ``ember_tensor.linalg`` (PyTorch's ``torch.linalg``: the core's LAPACK ops,
float32/float64/complex64/complex128, batched over leading axes, and the functions composed
of them), so the results stay differentiable where the core's autograd provider
differentiates them. This module adds only what the standard asks for on top: its
signatures (positional-only arrays, keyword-only options, ``axis``/``keepdims``/``rtol``),
argument checks and error types, type rules and the special cases it fixes where PyTorch
differs (norms over zero elements, ``solve``'s vectors, the ``rtol`` default of float16).
``matmul``, ``matrix_transpose``, ``tensordot`` and ``vecdot`` are the main namespace's
functions.

Dtypes
    Functions the standard defines for floating-point input (``cholesky``, ``det``,
    ``eigh``, ``eigvalsh``, ``inv``, ``matrix_norm``, ``matrix_power``, ``matrix_rank``,
    ``pinv``, ``qr``, ``slogdet``, ``solve``, ``svd``, ``svdvals``, ``vector_norm``) raise
    TypeError for integer and bool arrays (NumPy would compute in float64): cast with
    ``astype`` first. Complex arrays are computed by LAPACK's complex routines (``eigh``
    and ``cholesky`` read Hermitian matrices). Results keep the input's dtype, except the
    real-valued ones of complex input (real with the same precision: float32 for
    complex64): eigenvalues of ``eigh``/``eigvalsh``, singular values, ``slogdet``'s
    logabsdet and the norms (``solve``: the result_type of its two arguments;
    ``matrix_rank``: int64). float16 and bfloat16 (extensions) are computed in
    float32 and rounded once. ``cross``, ``outer`` and ``trace`` take numeric arrays;
    ``diagonal`` any dtype. ``trace`` follows ``sum``'s dtype rules (signed integers give
    int64, unsigned ones uint64).
    Arguments of two arrays promote with the standard's table (``result_type``).

Shapes and errors
    A stack of matrices has shape (..., M, N); fewer than two dimensions, a non-square
    matrix where a square one is needed, sizes that do not match and batch shapes that
    do not broadcast are ValueError. Unknown ``ord``/``mode`` values are ValueError; options
    of the wrong type TypeError; axes out of range ``AxisError`` (an IndexError and a
    ValueError). A singular matrix in ``inv``/``solve``/``matrix_power`` with a negative
    exponent, a matrix that is not positive-definite in ``cholesky`` and non-finite values
    in ``svd``/``svdvals``/``matrix_norm`` (ord 2, -2, 'nuc')/``matrix_rank``/``pinv``
    raise ``LinAlgError`` from the core (``ember_tensor.linalg.LinAlgError``, a
    RuntimeError, also reachable here as ``linalg.LinAlgError``); ``det`` and ``slogdet``
    of a singular matrix return 0 and (0, -inf).

Where the standard leaves a choice
    ``eigh`` reads the lower triangle (as NumPy) and sorts eigenvalues ascending; ``svd``
    and ``svdvals`` sort singular values descending. ``cross``'s axis, like ``vecdot``'s,
    is a negative int in the standard; a non-negative one is read as NumPy does (that
    axis of each array, and of the result). ``matrix_norm`` accepts ``ord=None`` as
    ``'fro'``. Norms of zero elements are 0 (``vector_norm`` with a negative ``ord``: inf),
    except minimums over zero elements (``vector_norm`` with ``ord=-inf``, ``matrix_norm``
    with ``ord=-2``, -1 without columns, -inf without rows): ValueError, as NumPy.
"""

from __future__ import annotations

import builtins as _builtins
import math as _math
from typing import NamedTuple

import ember_tensor as _et
import ember_tensor.linalg as _core

from ._dtypes import _COMPLEX, finfo, result_type
from ._functions import (
    _accumulate,
    _array,
    _broadcast_shapes,
    _check_keepdims,
    _int,
    _reduction,
    _sum_dtype,
)
from ._linear_algebra import (
    _operands,
    _shape,
    _vector_axis,
    matmul,
    matrix_transpose,
    tensordot,
    vecdot,
)

__all__ = [
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]

# an extension (not in the standard): what a failed decomposition or solve raises
LinAlgError = _core.LinAlgError

_Tensor = _et.Tensor
_f32 = _et.float32
_HALF = (_et.float16, _et.bfloat16)


class EighResult(NamedTuple):
    eigenvalues: _Tensor
    eigenvectors: _Tensor


class QRResult(NamedTuple):
    Q: _Tensor
    R: _Tensor


class SlogdetResult(NamedTuple):
    sign: _Tensor
    logabsdet: _Tensor


class SVDResult(NamedTuple):
    U: _Tensor
    S: _Tensor
    Vh: _Tensor


# ---------------------------------------------------------------------------------------
# helpers


def _name(fn: str) -> str:
    return f"linalg.{fn}"


def _matrices(x, fn: str, *, square: bool = False, category="floating-point"):
    """x after checking it is an array of the category with at least two dimensions (and
    square matrices if square)."""
    _array(x, fn, category=category)
    if x.ndim < 2:
        raise ValueError(
            f"{fn}(): x must have at least two dimensions (a stack of matrices), got shape "
            f"{_shape(x)}"
        )
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"{fn}(): x must be a stack of square matrices, got shape {_shape(x)}"
        )
    return x


def _computed(dtype):
    """The dtype x is computed in: float16 and bfloat16 go to float32, which LAPACK takes."""
    return _f32 if dtype in _HALF else dtype


def _up(x):
    """x in the dtype it is computed in."""
    return _down(x, _computed(x.dtype))


def _down(out, dtype):
    return out if out.dtype == dtype else out.to(dtype)


def _down_real(out, dtype):
    """A real-valued result in the real dtype of x's dtype (float32 for complex64)."""
    return _down(out, dtype.to_real())


# ---------------------------------------------------------------------------------------
# decompositions and solvers


def cholesky(x, /, *, upper=False):
    """Cholesky factor of the Hermitian (real: symmetric) positive-definite matrices x
    (..., M, M): the lower-triangular L with x = L @ L.mH, or with upper=True the
    upper-triangular U = L.mH (x = U.mH @ U). Only the lower triangle of x is read.
    LinAlgError if a matrix is not positive-definite."""
    fn = _name("cholesky")
    _matrices(x, fn, square=True)
    if not isinstance(upper, (_builtins.bool, int)):
        raise TypeError(f"{fn}(): upper must be a bool, got {type(upper).__name__}")
    return _down(_core.cholesky(_up(x), upper=_builtins.bool(upper)), x.dtype)


def det(x, /):
    """Determinants of the square matrices x (..., M, M), shape (...). 0 for a singular
    matrix."""
    fn = _name("det")
    _matrices(x, fn, square=True)
    return _down(_core.det(_up(x)), x.dtype)


def slogdet(x, /):
    """(sign, logabsdet) of the determinants of the square matrices x (..., M, M): sign is
    -1, 0 or 1 (complex x: det / |det|, x's dtype) and logabsdet the natural log of the
    absolute determinant (real), each of shape (...); a singular matrix gives (0, -inf)."""
    fn = _name("slogdet")
    _matrices(x, fn, square=True)
    sign, logabsdet = _core.slogdet(_up(x))
    return SlogdetResult(_down(sign, x.dtype), _down_real(logabsdet, x.dtype))


def eigh(x, /):
    """(eigenvalues, eigenvectors) of the Hermitian (real: symmetric) matrices x
    (..., M, M), read from the lower triangle: eigenvalues (..., M, real) in ascending
    order, eigenvectors (..., M, M) with the orthonormal eigenvector of eigenvalues[..., i]
    in column i."""
    fn = _name("eigh")
    _matrices(x, fn, square=True)
    w, v = _core.eigh(_up(x))
    return EighResult(_down_real(w, x.dtype), _down(v, x.dtype))


def eigvalsh(x, /):
    """Eigenvalues (..., M, real), ascending, of the Hermitian (real: symmetric) matrices x
    (..., M, M), read from the lower triangle."""
    fn = _name("eigvalsh")
    _matrices(x, fn, square=True)
    return _down_real(_core.eigvalsh(_up(x)), x.dtype)


def inv(x, /):
    """Inverses of the square matrices x (..., M, M). LinAlgError if one is singular."""
    fn = _name("inv")
    _matrices(x, fn, square=True)
    return _down(_core.inv(_up(x)), x.dtype)


def qr(x, /, *, mode="reduced"):
    """(Q, R) with x = Q @ R for the matrices x (..., M, N), Q with orthonormal columns and
    R upper-triangular. mode 'reduced' (default): Q (..., M, K), R (..., K, N) with
    K = min(M, N); 'complete': Q (..., M, M), R (..., M, N). ValueError for another
    mode."""
    fn = _name("qr")
    _matrices(x, fn)
    if mode not in ("reduced", "complete"):
        raise ValueError(f"{fn}(): mode must be 'reduced' or 'complete', got {mode!r}")
    q, r = _core.qr(_up(x), mode=mode)
    return QRResult(_down(q, x.dtype), _down(r, x.dtype))


def svd(x, /, *, full_matrices=True):
    """(U, S, Vh) with x = U @ diag(S) @ Vh for the matrices x (..., M, N): S (..., K)
    the singular values (real) in descending order (K = min(M, N)); with full_matrices=True
    (default) U is (..., M, M) and Vh (..., N, N), else U (..., M, K) and Vh (..., K, N).
    LinAlgError for non-finite values."""
    fn = _name("svd")
    _matrices(x, fn)
    if not isinstance(full_matrices, (_builtins.bool, int)):
        raise TypeError(
            f"{fn}(): full_matrices must be a bool, got {type(full_matrices).__name__}"
        )
    u, s, vh = _core.svd(_up(x), full_matrices=_builtins.bool(full_matrices))
    return SVDResult(_down(u, x.dtype), _down_real(s, x.dtype), _down(vh, x.dtype))


def svdvals(x, /):
    """Singular values (..., K, real), descending, of the matrices x (..., M, N),
    K = min(M, N). LinAlgError for non-finite values."""
    fn = _name("svdvals")
    _matrices(x, fn)
    return _down_real(_core.svdvals(_up(x)), x.dtype)


def solve(x1, x2, /):
    """X with x1 @ X = x2, for the square full-rank matrices x1 (..., M, M).

    x2 is a vector only when it is 1-d, of shape (M,): the result then has shape
    shape(x1)[:-2] + (M,). Otherwise x2 is a stack of matrices (..., M, K), its batch
    axes broadcast against x1's, and the result is (..., M, K). (PyTorch also reads x2 of
    shape shape(x1)[:-1] as vectors; the standard does not.) Both floating-point; the
    result has their result_type. LinAlgError if a matrix of x1 is singular."""
    fn = _name("solve")
    _array(x1, fn, "x1", "floating-point")
    _array(x2, fn, "x2", "floating-point")
    dtype = result_type(x1, x2)
    if x1.ndim < 2 or x1.shape[-1] != x1.shape[-2]:
        raise ValueError(
            f"{fn}(): x1 must be a stack of square matrices, got shape {_shape(x1)}"
        )
    m = x1.shape[-1]
    if x2.ndim == 0:
        raise ValueError(f"{fn}(): x2 must have at least one dimension (got a 0-d array)")
    rows = x2.shape[0] if x2.ndim == 1 else x2.shape[-2]
    if rows != m:
        raise ValueError(
            f"{fn}(): x2 of shape {_shape(x2)} does not fit x1 of shape {_shape(x1)}: "
            f"{'its' if x2.ndim == 1 else 'its second-to-last'} axis must have size {m}"
        )
    a = _up(x1.to(dtype))
    b = _up(x2.to(dtype))
    if x2.ndim >= 2:
        batch = _broadcast_shapes([_shape(x1)[:-2], _shape(x2)[:-2]], fn)
        # with x2's batch axes spelled out, the core cannot read x2 as a stack of vectors
        b = b.broadcast_to(list(batch) + list(x2.shape)[-2:])
    return _down(_core.solve(a, b), dtype)


# ---------------------------------------------------------------------------------------
# tolerances: matrix_rank and pinv


def _rtol(x, rtol, fn: str):
    """(rtol as ember_tensor.linalg takes it, the batch shape of the result).

    rtol: None (the standard's default: max(M, N) * eps of x's dtype, float16's too
    although float16 is computed in float32), a Python float or int, or a real
    floating-point array broadcasting against x's batch shape (cast to the dtype computed
    in)."""
    if isinstance(rtol, _Tensor):
        _array(rtol, fn, "rtol", "real floating-point")
        batch = _broadcast_shapes([_shape(x)[:-2], _shape(rtol)], fn)
        return rtol.to(_computed(x.dtype).to_real()), batch
    if rtol is None:
        return _builtins.max(x.shape[-2], x.shape[-1]) * finfo(x.dtype).eps, _shape(x)[:-2]
    if isinstance(rtol, _builtins.bool) or not isinstance(rtol, (int, float)):
        raise TypeError(
            f"{fn}(): rtol must be None, a Python float or a real floating-point array, got "
            f"{type(rtol).__name__}"
        )
    return float(rtol), _shape(x)[:-2]


def matrix_rank(x, /, *, rtol=None):
    """Ranks (int64, shape (...)) of the matrices x (..., M, N): the number of singular
    values greater than rtol * the largest one. rtol: a float, or a real floating-point
    array broadcast against shape(x)[:-2]; None (default): max(M, N) * eps of x's dtype.
    A matrix with zero rows or columns has rank 0."""
    fn = _name("matrix_rank")
    _matrices(x, fn)
    rtol, batch = _rtol(x, rtol, fn)
    if x.numel() == 0:  # NumPy's shape: with rtol's broadcast in (PyTorch's: x's batch)
        return _et.zeros(list(batch), dtype=_et.int64, device=x.device)
    return _core.matrix_rank(_up(x), rtol=rtol)


def pinv(x, /, *, rtol=None):
    """Moore-Penrose pseudo-inverses (..., N, M) of the matrices x (..., M, N), through the
    SVD: singular values at or below rtol * the largest one count as zero. rtol as for
    ``matrix_rank`` (default max(M, N) * eps of x's dtype)."""
    fn = _name("pinv")
    _matrices(x, fn)
    return _down(_core.pinv(_up(x), rtol=_rtol(x, rtol, fn)[0]), x.dtype)


# ---------------------------------------------------------------------------------------
# norms


def _ord(ord, fn: str) -> float:
    if isinstance(ord, (_builtins.bool, _Tensor)) or not isinstance(ord, (int, float)):
        raise TypeError(f"{fn}(): ord must be an int or a float, got {type(ord).__name__}")
    p = float(ord)
    if _math.isnan(p):
        raise ValueError(f"{fn}(): ord must not be NaN")
    return p


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector norms of x over axis (None: all elements as one vector; an int; a tuple of
    axes, taken together as one vector). ord: 1, 2 (default), inf (max |x|), -inf
    (min |x|), 0 (the number of nonzero elements), another p: sum(|x|**p)**(1/p) (for
    p < 1 not a norm; a zero element makes a negative p's result 0). x's dtype. Over zero
    elements the norm is 0 (inf for a negative ord; ValueError for -inf). Complex x: the
    norm of |x|, real (float32 for complex64)."""
    fn = _name("vector_norm")
    _array(x, fn, category="floating-point")
    if x.dtype in _COMPLEX:
        x = _et.abs(x)
    _check_keepdims(keepdims, fn)
    p = _ord(ord, fn)
    # an empty tuple of axes: a reduction over a new axis of size 1 (ember_tensor.linalg,
    # as PyTorch, reads it as all axes)
    xr, axes, keep, out_shape, n = _reduction(x, axis, keepdims, fn)
    if n == 0:  # as NumPy (PyTorch raises for a negative ord and for inf)
        if p == -_math.inf:
            raise ValueError(f"{fn}(): the -inf norm of zero elements is undefined")
        fill = _math.inf if p < 0 else 0.0
        return _et.full(list(out_shape), fill, dtype=x.dtype, device=x.device)
    return _core.vector_norm(xr, p, axes, keep)


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, _math.inf, -_math.inf)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Norms of the matrices x (..., M, N), shape (...) (with keepdims (..., 1, 1)).
    ord: 'fro' (default; None means it too), 'nuc' (sum of singular values), 2 / -2
    (largest / smallest singular value), 1 / -1 (max / min column sum of |x|), inf /
    -inf (max / min row sum of |x|). ValueError for another ord. A matrix with zero rows
    or columns has norm 0, except where the norm is a minimum over zero elements (ord -2;
    -1 without columns; -inf without rows): ValueError, as NumPy."""
    fn = _name("matrix_norm")
    _matrices(x, fn)
    _check_keepdims(keepdims, fn)
    if ord is None:
        ord = "fro"
    p = ord if isinstance(ord, str) else _ord(ord, fn)
    if p not in _MATRIX_ORDS:
        raise ValueError(
            f"{fn}(): ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}"
        )
    m, n = x.shape[-2], x.shape[-1]
    # the minimum over no columns (-1), rows (-inf) or singular values (-2): NumPy's
    # ValueError (PyTorch's IndexError)
    if (p == -1 and n == 0) or (p == -_math.inf and m == 0) or (p == -2 and m * n == 0):
        raise ValueError(
            f"{fn}(): the {p} norm of {m}x{n} matrices is undefined (a minimum over "
            "zero elements)"
        )
    norms = _core.matrix_norm(_up(x), p, (-2, -1), _builtins.bool(keepdims))
    return _down_real(norms, x.dtype)


# ---------------------------------------------------------------------------------------
# other matrix functions


def matrix_power(x, n, /):
    """The square matrices x (..., M, M) raised to the integer power n: identities for
    n == 0, the inverses' powers for n < 0 (LinAlgError if a matrix is singular)."""
    fn = _name("matrix_power")
    _matrices(x, fn, square=True)
    n = _int(n, fn, "n")
    return _down(_core.matrix_power(_up(x), n), x.dtype)


def diagonal(x, /, *, offset=0):
    """The diagonals (..., K) of the matrices x (..., M, N) (a view; any dtype): the main
    one for offset 0, above it for offset > 0, below for offset < 0. Empty where the
    offset is outside the matrix."""
    fn = _name("diagonal")
    _matrices(x, fn, category=None)
    return _core.diagonal(x, offset=_int(offset, fn, "offset"))


def trace(x, /, *, offset=0, dtype=None):
    """Sums (...) of the diagonals of the matrices x (..., M, N) (numeric), at offset as
    in ``diagonal``. dtype: the result dtype; by default x's, except that signed integers
    give int64 and unsigned ones uint64, as
    ``sum``. An empty diagonal sums to 0."""
    fn = _name("trace")
    _matrices(x, fn, category="numeric")
    offset = _int(offset, fn, "offset")
    dtype = _sum_dtype(x.dtype, dtype, fn)
    return _accumulate(fn, _et.sum, _core.diagonal(x, offset=offset), dim=[-1],
                       keepdim=False, dtype=dtype)


def outer(x1, x2, /):
    """Outer product (N, M) of the 1-d arrays x1 (N,) and x2 (M,): out[i, j] = x1[i] *
    x2[j]. Numeric; the dtype is their result_type. ValueError unless both are 1-d."""
    fn = _name("outer")
    a, b = _operands(x1, x2, fn)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(
            f"{fn}(): x1 and x2 must be one-dimensional, got shapes {_shape(a)} and "
            f"{_shape(b)}"
        )
    return a.unsqueeze(1) * b.unsqueeze(0)


def cross(x1, x2, /, *, axis=-1):
    """Cross products of the 3-element vectors of x1 and x2 along axis, the other axes
    broadcast (the vector axis does not: both must have size 3 there, else ValueError).
    Numeric; the dtype is their result_type.

    axis: a negative int in [-N, -1], N the smaller rank (the standard); a non-negative one
    is read as NumPy does (that axis of each array and of the result)."""
    fn = _name("cross")
    a, b = _operands(x1, x2, fn)
    axis = _int(axis, fn, "axis")
    ia = _vector_axis(a, axis, fn, "x1")
    ib = _vector_axis(b, axis, fn, "x2")
    if a.shape[ia] != 3 or b.shape[ib] != 3:
        raise ValueError(
            f"{fn}(): x1 and x2 must have size 3 along axis {axis}, got {a.shape[ia]} and "
            f"{b.shape[ib]} (shapes {_shape(a)} and {_shape(b)})"
        )
    # the vectors last, in arrays of one rank (ember_tensor.linalg.cross, as PyTorch's,
    # broadcasts only arrays of the same rank)
    a, b = a.movedim(ia, -1), b.movedim(ib, -1)
    _broadcast_shapes([_shape(a)[:-1], _shape(b)[:-1]], fn)
    nd = _builtins.max(a.ndim, b.ndim)
    a, b = (t.reshape([1] * (nd - t.ndim) + list(t.shape)) for t in (a, b))
    out = _core.cross(a, b, dim=-1)
    # the result's axis: counted from its end (negative axis) or its front, as NumPy's
    return out.movedim(-1, axis % out.ndim)
