"""The rest of ``torch.linalg``, composed of the core's decompositions and ops (so autograd
differentiates it and it runs on every device): the ``*_ex`` variants that report failures
in ``info`` instead of raising, the LU family (partial-pivoting elimination written with
tensor ops, batched: one step per column), ``lstsq``, ``matrix_exp`` (scaling and squaring
with a degree-13 Padé approximant), ``householder_product``, ``vander``, ``tensorinv`` and
``tensorsolve``. Re-exported by ``ember_tensor.linalg``."""

from __future__ import annotations

import collections
import math

from . import _C
from ._composites import _tensor_arg

_named = {}


def _result(name: str, fields: str, *values):
    """PyTorch's namedtuple ``torch.return_types.<name>`` for these values."""
    kind = _named.get(name)
    if kind is None:
        kind = _named[name] = collections.namedtuple(name, fields)
        kind.__module__ = "ember_tensor.return_types"
    return kind(*values)


def _square(fn: str, A) -> None:
    if not isinstance(A, _C.Tensor):
        raise TypeError(f"linalg.{fn}: argument 'A' must be a Tensor, not {type(A).__name__}")
    if A.dim() < 2:
        raise RuntimeError(f"linalg.{fn}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{fn}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"linalg.{fn}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype._scalar_type_name}")


def _info_zeros(A):
    return _C.zeros(tuple(A.shape[:-2]), dtype=_C.int32, device=A.device)


def _ex(compute, A, check_errors: bool, info_of):
    """(result, info) of ``compute(A)``; a failure raises with check_errors, else the result
    is NaN where a matrix failed and ``info_of(A)`` gives LAPACK's info for each matrix."""
    try:
        return compute(A), _info_zeros(A)
    except _C.LinAlgError:
        if check_errors:
            raise
    info = info_of(A)
    ok = (info == 0).reshape(*info.shape, 1, 1)
    safe = _C.where(ok, A, _C.eye(A.shape[-1], dtype=A.dtype, device=A.device))
    out = compute(safe)
    ok = ok.reshape(*info.shape, *[1] * (out.dim() - info.dim()))  # (a solve's vector: one)
    return _C.where(ok, out, _C.full((), math.nan, dtype=out.dtype, device=A.device)), info


def _getrf_info(A):
    """LAPACK getrf's info: the (1-based) first zero pivot of each matrix, 0 if none."""
    return _lu(A)[2]


def _potrf_info(A):
    """LAPACK potrf's info: the order of the first leading minor of each matrix that is not
    positive-definite, 0 if none (found one leading block at a time)."""
    n = A.shape[-1]
    info = _C.zeros(tuple(A.shape[:-2]), dtype=_C.int32, device=A.device)
    for k in range(1, n + 1):
        block = A[..., :k, :k]
        flat = block.reshape(-1, k, k)
        bad = []
        for m in flat.unbind(0):
            try:
                _C.linalg_cholesky(m)
                bad.append(False)
            except _C.LinAlgError:
                bad.append(True)
        bad = _C.tensor(bad, device=A.device).reshape(info.shape)
        info = _C.where((info == 0) & bad, _C.full((), k, dtype=_C.int32, device=A.device),
                        info)
    return info


def inv_ex(A, *, check_errors=False):
    """(inverse, info): the inverse of each square matrix, info 0 where it exists, and where
    it does not getrf's positive info (and NaN, not PyTorch's LAPACK leftovers) instead of an
    error (unless check_errors)."""
    _square("inv_ex", A)
    inverse, info = _ex(_C.linalg_inv, A, check_errors, _getrf_info)
    return _result("linalg_inv_ex", "inverse info", inverse, info)


def cholesky_ex(A, *, upper=False, check_errors=False):
    """(L, info): the Cholesky factor of each Hermitian positive-definite matrix (upper: Lᴴ),
    info positive (and NaN) for a matrix that is not."""
    _square("cholesky_ex", A)
    # upper reads A's upper triangle: the lower one of A's conjugate transpose
    L, info = _ex(lambda M: _C.linalg_cholesky(M, upper=upper), A, check_errors,
                  lambda M: _potrf_info(M.mH if upper else M))
    return _result("linalg_cholesky_ex", "L info", L, info)


def solve_ex(A, B, *, left=True, check_errors=False):
    """(result, info): linalg.solve, with a singular matrix reported in info."""
    _square("solve_ex", A)
    result, info = _ex(lambda M: _C.linalg_solve(M, B, left=left), A, check_errors,
                       _getrf_info)
    return _result("linalg_solve_ex", "result info", result, info)


# --------------------------------------------------------------------- LU


_GETRF_DTYPES = (_C.float32, _C.float64, _C.complex64, _C.complex128)


def _lu(A, pivot: bool = True):
    """(LU packed, pivots (int32, 1-based), info): Doolittle elimination with partial
    pivoting (the first largest |element| of each column, as LAPACK's getrf), batched.

    On the CPU, with pivoting and no gradient to carry, LAPACK's getrf itself
    (``_linalg_getrf``: 256 x 256 in well under a millisecond, where the elimination below
    takes tens of milliseconds); the elimination is differentiable and runs on every
    device."""
    if (pivot and A.device.type == "cpu" and A.dtype in _GETRF_DTYPES
            and not (A.requires_grad or A._autograd_watched)):  # nor a forward-mode tangent
        return _C._linalg_getrf(A)
    return _lu_elimination(A, pivot)


def _lu_elimination(A, pivot: bool):
    """_lu's differentiable elimination, op by op on A's device."""
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    batch = tuple(A.shape[:-2])
    rows = _C.arange(m, device=A.device).expand(*batch, m)
    pivots = []
    info = _C.zeros(batch, dtype=_C.int32, device=A.device)
    a = A
    for j in range(k):
        col = a[..., j:, j]
        if pivot:
            mag = _C.abs(col)  # NaN never wins a pivot (LAPACK's idamax compares with >)
            mag = _C.where(_C.isnan(mag), _C.full((), -1.0, dtype=mag.dtype,
                                                  device=mag.device), mag)
            p = _C.argmax(mag, -1, True) + j  # (*batch, 1)
        else:
            p = _C.full((*batch, 1), j, dtype=_C.int64, device=A.device)
        pivots.append(p)
        # swap rows j and p (a permutation of the row indices, gathered)
        rj = rows[..., j:j + 1]
        swap = _C.where(rows == j, p, _C.where(rows == p, rj.expand(*batch, m), rows))
        a = _C.gather(a, -2, swap.unsqueeze(-1).expand(*batch, m, n))
        d = a[..., j:j + 1, j:j + 1]
        zero = d == 0
        info = _C.where((info == 0) & zero.reshape(batch), _C.full((), j + 1, dtype=_C.int32,
                                                                    device=A.device), info)
        if j + 1 < m:
            below = a[..., j + 1:, j:j + 1]
            factors = _C.where(zero, below, below / _C.where(zero, _C.ones_like(d), d))
            update = factors * a[..., j:j + 1, j + 1:]
            lower = _C.cat([factors, a[..., j + 1:, j + 1:] - update], -1)
            a = _C.cat([a[..., :j + 1, :], _C.cat([a[..., j + 1:, :j], lower], -1)
                        if j else lower], -2)
    piv = (_C.cat(pivots, -1) + 1).to(_C.int32) if pivots else _C.zeros(
        (*batch, 0), dtype=_C.int32, device=A.device)
    return a, piv, info


def _check_lu_input(fn: str, A):
    if not isinstance(A, _C.Tensor):
        raise TypeError(f"linalg.{fn}: argument 'A' must be a Tensor, not {type(A).__name__}")
    if A.dim() < 2:
        raise RuntimeError(f"torch.{fn}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"linalg.{fn}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype._scalar_type_name}")
    if A.dtype in (_C.float16, _C.bfloat16):  # as LAPACK's (PyTorch's) getrf
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{A.dtype._scalar_type_name}'")


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """(LU, pivots, info): the LU factorization with partial pivoting packed as LAPACK's
    getrf does (L's unit diagonal implied), 1-based int32 pivots; info > 0 marks a zero
    pivot (a singular matrix)."""
    _check_lu_input("lu_factor_ex", A)
    LU, pivots, info = _lu(A, pivot)
    if check_errors and bool((info > 0).any()):
        raise _C.LinAlgError("torch.linalg.lu_factor_ex: U[{0},{0}] is zero and using it on "
                             "lu_solve would result in a division by zero.".format(
                                 int(info.max().item())))
    return _result("linalg_lu_factor_ex", "LU pivots info", LU, pivots, info)


def lu_factor(A, *, pivot=True):
    """(LU, pivots): lu_factor_ex, raising for a singular matrix."""
    _check_lu_input("lu_factor", A)
    LU, pivots, info = _lu(A, pivot)
    if bool((info > 0).any()):
        i = int(info.reshape(-1)[(info.reshape(-1) > 0).nonzero()[0]].item())
        raise _C.LinAlgError(f"torch.linalg.lu_factor: U[{i},{i}] is zero and using it on "
                             "lu_solve would result in a division by zero. If you still want "
                             "to perform the factorization, consider calling "
                             "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return _result("linalg_lu_factor", "LU pivots", LU, pivots)


def ldl_factor(A, *, hermitian=False):
    """(LD, pivots): the LDL^T (LDL^H) factorization of ldl_factor_ex, raising LinAlgError
    where D has an exact zero (a singular matrix)."""
    LD, pivots, info = _C.linalg_ldl_factor_ex(A, hermitian=hermitian)
    flat = info.reshape(-1)
    if flat.numel() and bool((flat > 0).any()):
        b = int((flat > 0).nonzero()[0].item())
        i = int(flat[b].item()) - 1
        where = f"(Batch element {b}): " if A.dim() > 2 else ""
        raise _C.LinAlgError(f"torch.linalg.ldl_factor: {where}The factorization completed, but "
                             f"D[{i}, {i}] is exactly zero, so the matrix is singular. To get the "
                             "factors anyway, call linalg.ldl_factor_ex(A).")
    return _result("linalg_ldl_factor", "LD pivots", LD, pivots)


def _permutation(pivots, m: int):
    """The row permutation (as indices: row i of P A is row perm[i] of A) of 1-based pivots."""
    batch = tuple(pivots.shape[:-1])
    perm = _C.arange(m, device=pivots.device).expand(*batch, m).contiguous()
    piv = pivots.to(_C.int64) - 1
    for j in range(pivots.shape[-1]):
        p = piv[..., j:j + 1]
        pj = perm[..., j:j + 1]
        at_p = _C.gather(perm, -1, p)
        rows = _C.arange(m, device=pivots.device)
        perm = _C.where(rows == j, at_p, _C.where(rows == p, pj, perm))
    return perm


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from lu_factor's packed result: A = P @ L @ U."""
    _tensor_arg("lu_unpack", LU_data, "LU_data", 1)
    _tensor_arg("lu_unpack", LU_pivots, "LU_pivots", 2)
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    if unpack_data:
        L = _C.tril(LU_data[..., :, :k], -1) + _C.eye(m, k, dtype=LU_data.dtype,
                                                      device=LU_data.device)
        U = _C.triu(LU_data[..., :k, :])
    else:
        L = U = _C.empty(0, dtype=LU_data.dtype, device=LU_data.device)
    if unpack_pivots:
        if LU_pivots.dtype != _C.int32:  # lu_factor's pivots, as PyTorch insists
            raise RuntimeError(
                "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                "dtype.\nNote: this function is intended to be used with the output produced by "
                "torch.linalg.lu_factor")
        perm = _permutation(LU_pivots, m)
        # P @ L @ U = A: P's column perm[i] ... P[perm[i], i] = 1
        eye = _C.eye(m, dtype=LU_data.dtype, device=LU_data.device)
        P = eye.index_select(0, perm.reshape(-1)).reshape(*perm.shape, m).mT
    else:
        P = _C.empty(0, dtype=LU_data.dtype, device=LU_data.device)
    return _result("lu_unpack", "P L U", P, L, U)


def lu(A, *, pivot=True):
    """(P, L, U) with A = P @ L @ U: L unit lower triangular (m, k), U upper (k, n)."""
    _check_lu_input("lu", A)
    LU, pivots, _ = _lu(A, pivot)
    P, L, U = lu_unpack(LU, pivots, unpack_pivots=pivot)  # no pivoting: P is empty, as PyTorch
    return _result("linalg_lu", "P L U", P, L, U)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """The solution X of A X = B (X A = B when not left; Aᴴ when adjoint) from A's LU
    factorization."""
    P, L, U = lu_unpack(LU, pivots)
    if left and not adjoint:  # A = P L U: X = U⁻¹ L⁻¹ Pᵀ B
        Y = _C.linalg_solve_triangular(L, P.mT @ B, upper=False, unitriangular=True)
        return _C.linalg_solve_triangular(U, Y, upper=True)
    if left and adjoint:  # Aᴴ X = B: Uᴴ Lᴴ Pᵀ X = B
        Y = _C.linalg_solve_triangular(U.mH, B, upper=False)
        Z = _C.linalg_solve_triangular(L.mH, Y, upper=True, unitriangular=True)
        return P @ Z
    # X A = B  <=>  Aᴴ Xᴴ = Bᴴ;  X Aᴴ = B  <=>  A Xᴴ = Bᴴ
    return lu_solve(LU, pivots, B.mH, left=True, adjoint=not adjoint).mH


# --------------------------------------------------------------------- more


def vander(x, *, N=None):
    """The Vandermonde matrix of the last dim of x: columns x**0, x**1, ..., x**(N-1)."""
    if x.dim() == 0:  # a single point: one row
        x = x.reshape(1)
    n = x.shape[-1] if N is None else N
    if n <= 1:  # PyTorch's bound, N = 1 (one column of ones) included
        raise RuntimeError("N must be greater than 1.")
    if x.dtype in (_C.bool, _C.float16, _C.bfloat16):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, "
                           f"but got {x.dtype._scalar_type_name}")
    dt = x.dtype
    ones = _C.ones((*x.shape, 1), dtype=dt, device=x.device)
    if n == 1:
        return ones
    powers = _C.cumprod(x.unsqueeze(-1).expand(*x.shape, n - 1), -1)
    return _C.cat([ones, powers], -1)


def tensorinv(A, ind=2):
    """The tensor inverse of A over its first ``ind`` dims: the result (A.shape[ind:] +
    A.shape[:ind]) contracts with A to the identity."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows = A.shape[:ind]
    cols = A.shape[ind:]
    pr = math.prod(rows)
    pc = math.prod(cols)
    if pr != pc:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {pc} != {pr}")
    return _C.linalg_inv(A.reshape(pr, pc)).reshape(*cols, *rows)


def tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.dim()) == B: A's dims ``dims`` moved last first; X has
    A.shape[B.dim():]."""
    if dims is not None:
        nd = A.dim()
        dims = [d % nd for d in dims]
        A = A.permute([d for d in range(nd) if d not in dims] + list(dims))
    rest = A.shape[B.dim():]
    n = math.prod(rest)
    m = B.numel()
    return _C.linalg_solve(A.reshape(m, n), B.reshape(m)).reshape(*rest)


def householder_product(A, tau):
    """The product of the Householder reflectors H_i = I - tau_i v_i v_iᴴ (v_i: column i of A
    below the diagonal, 1 on it), the first n columns: LAPACK's orgqr/ungqr."""
    op = "torch.linalg.householder_product"
    _tensor_arg("linalg_householder_product", A, "input", 1)
    _tensor_arg("linalg_householder_product", tau, "tau", 2)
    if A.dim() < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1] if tau.dim() else 1
    if n > m:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater "
                           "than or equal to input.shape[-1]")
    if k > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater "
                           "than or equal to tau.shape[-1]")
    if A.dim() - tau.dim() != 1:
        raise RuntimeError(f"{op}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.dim()} and input.ndim is equal to {A.dim()}")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{op}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{op}: tau dtype {tau.dtype._scalar_type_name} does not match input "
                           f"dtype {A.dtype._scalar_type_name}")
    eye = _C.eye(m, n, dtype=A.dtype, device=A.device)
    # (+ an empty sum of A: exactly zero, so that Q hangs from A in the graph even for k = 0)
    Q = eye.expand(*A.shape[:-2], m, n) + _C.sum(A[..., :0, :], (-2,), True)
    unit = _C.eye(m, dtype=A.dtype, device=A.device)
    for i in reversed(range(k)):
        v = _C.tril(A, -1)[..., :, i:i + 1] + unit[:, i:i + 1]
        t = tau[..., i:i + 1].unsqueeze(-1)
        Q = Q - (t * v) @ (v.mH @ Q)
    return Q


def matrix_exp(A):
    """exp(A) of square matrices: scaling and squaring with the degree-13 Padé approximant
    (Higham 2005), computed in double precision and rounded to A's dtype."""
    _square("matrix_exp", A)
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    if A.dtype in (_C.float32, _C.complex64, _C.float16, _C.bfloat16):  # computed in double
        wide = _C.complex128 if A.dtype.is_complex else _C.float64
        return matrix_exp(A.to(wide)).to(A.dtype)
    eye = _C.eye(n, dtype=A.dtype, device=A.device)
    norm = _C.amax(_C.sum(_C.abs(A), (-2,)), (-1,)).max().item()  # the 1-norm
    theta13 = 5.371920351148152
    # (a non-finite norm: no scaling; the NaNs and infinities flow through as in PyTorch)
    scaled = math.isfinite(norm) and norm > theta13
    s = max(0, math.ceil(math.log2(norm / theta13))) if scaled else 0
    X = A * math.ldexp(1.0, -s)  # a float: 2 ** s reaches 2 ** 1022 (an int no Scalar holds)
    b = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0)
    X2 = X @ X
    X4 = X2 @ X2
    X6 = X4 @ X2
    U = X @ (X6 @ (b[13] * X6 + b[11] * X4 + b[9] * X2)
             + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye)
    V = X6 @ (b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 \
        + b[0] * eye
    R = _C.linalg_solve(V - U, V + U)
    for _ in range(s):
        R = R @ R
    return R


def lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values): the least-squares solution of A X = B
    through the pseudo-inverse, with PyTorch's CPU results for its default driver ('gelsy'):
    empty residuals and singular values, the numerical rank."""
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.dim() < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.dtype != B.dtype:
        raise RuntimeError("torch.linalg.lstsq: Expected input and other to have the same dtype, "
                           f"but got input's dtype {A.dtype._scalar_type_name} and other's dtype "
                           f"{B.dtype._scalar_type_name}")
    if not 0 <= A.dim() - B.dim() <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to "
                           "other.dim() and (input.dim() - other.dim()) <= 1")
    vector = B.dim() == A.dim() - 1
    if B.shape[-1 if vector else -2] != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match "
                           f"other.size({-1 if vector else -2})")
    Bm = B.unsqueeze(-1) if vector else B
    from . import linalg as _la
    pinv = _la.pinv(A, rtol=rcond) if rcond is not None and rcond >= 0 else _la.pinv(A)
    X = pinv @ Bm
    if vector:
        X = X.squeeze(-1)
    # empty results that still hang from A in the graph (as PyTorch's do)
    empty = (_C.abs(A) if A.dtype.is_complex else A).reshape(-1)[:0]
    batch = tuple(A.shape[:-2])
    m, n = A.shape[-2], A.shape[-1]
    residuals = empty
    if driver not in (None, "gelsy") and m > n and bool(
            (_la.matrix_rank(A) == n).all()):  # full rank, more rows: the squared residuals
        r = A @ (X.unsqueeze(-1) if vector else X) - Bm
        residuals = _C.sum(_C.abs(r) ** 2, (-2,))
        if vector:
            residuals = residuals.squeeze(-1)
    if driver == "gels":
        rank = _C.empty(0, dtype=_C.int64, device=A.device)
    else:
        rank = _la.matrix_rank(A).to(_C.int64).reshape(batch)
    sv = _la.svdvals(A) if driver in ("gelsd", "gelss") else empty
    return _result("linalg_lstsq", "solution residuals rank singular_values", X, residuals,
                   rank, sv)
