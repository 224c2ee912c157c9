"""Formula helpers for the matrix decompositions and solvers (``ember_tensor.linalg``): the
backward (``*_backward``) and forward-mode (``*_jvp``) rules of cholesky, qr, eigh, eigvalsh,
svd, svdvals, solve, inv, det, slogdet and solve_triangular (see formulas.py).

Real and complex matrices, batched over the leading dimensions ``(*, m, n)``; complex
gradients follow PyTorch's convention (the conjugate Wirtinger derivative: for a real loss
``dL = Re sum(conj(g) * dX)``). Written with ember_tensor ops (``et.linalg`` included), so
that the derivative of a derivative comes from the same table. Multi-output ops receive
``grads``, one gradient per output, None for an output that got none (a zero). The
formulas are the standard ones (those PyTorch uses; ``X^H`` is ``X.mH``, the transpose of a
real X):

- inv: ``gA = -X^H g X^H``; det: ``g conj(det) A^{-H}`` (the conjugate cofactor matrix
  through the SVD for a singular A); slogdet: ``w A^{-H}`` with
  ``w = g_logabsdet + i Im(g_sign conj(sign))`` (``g_logabsdet`` for real A);
- solve (``A X = B``): ``gB = A^{-H} g``, ``gA = -gB X^H``; solve_triangular: the same, with
  ``gA`` restricted to the triangle that is read;
- cholesky (``A = L L^H``): ``gA = L^{-H} Φ(L^H gL) L^{-1}`` made Hermitian, Φ the lower
  triangle with the diagonal halved;
- qr (reduced, ``m >= n``): ``gA = (gQ + Q copyltu(M)) R^{-H}``, ``M = R gR^H - gQ^H Q``,
  copyltu(M) the Hermitian matrix of M's strict lower triangle and real diagonal; wide
  matrices by splitting ``A = Q [U V]``;
- eigh: ``gA = V (diag(gL) + skew(V^H gV) / E) V^H``, ``E_ij = λ_j - λ_i``;
- svd: the reduced formula (plus the terms of the orthogonal complements, and for complex
  A the term ``i Im(diag(U^H gU)) / S`` of the phases), full matrices narrowed to the
  reduced ones as PyTorch does;
- eigvalsh/svdvals recompute the vectors (eigh/svd) in the backward.

Hermitian-input ops (cholesky, eigh, eigvalsh) read one triangle of A; their gradient is
the Hermitian one (as in PyTorch), right for Hermitian perturbations. Eigenvectors and
singular vectors of complex matrices are defined up to a phase each: a loss that depends
on those phases has no gradient, and eigh and svd raise PyTorch's error for it.
"""

from __future__ import annotations

import ember_tensor as et

__all__: list[str] = [
    "cholesky_backward",
    "cholesky_jvp",
    "det_backward",
    "eig_backward",
    "eigvals_backward",
    "det_jvp",
    "eigh_backward",
    "eigh_jvp",
    "eigvalsh_backward",
    "eigvalsh_jvp",
    "inv_backward",
    "inv_jvp",
    "pinv_backward",
    "pinv_jvp",
    "qr_backward",
    "qr_jvp",
    "slogdet_backward",
    "slogdet_jvp",
    "solve_backward_A",
    "solve_backward_B",
    "solve_jvp",
    "solve_triangular_backward_A",
    "solve_triangular_backward_B",
    "solve_triangular_jvp",
    "svd_backward",
    "svd_jvp",
    "svdvals_backward",
    "svdvals_jvp",
]

QR_MODE_R_MESSAGE = (
    "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
    "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
)
QR_COMPLETE_MESSAGE = (
    "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
)


# ----------------------------------------------------------------------------- small helpers


def _mH(x):
    """The conjugate transpose (the transpose of a real x)."""
    return x.transpose(-2, -1).conj()


def _eye(n: int, like):
    return et.eye(n, dtype=like.dtype)


def pinv_backward(grad, A, P):
    """The gradient of P = pinv(A) (Golub and Pereyra's derivative, right at every rank):
    -P^H G P^H + (I - A P) G^H P P^H + P^H P G^H (I - P A)."""
    Ph, Gh = _mH(P), _mH(grad)
    m, n = A.shape[-2], A.shape[-1]
    left = _eye(m, A) - A @ P
    right = _eye(n, A) - P @ A
    return -(Ph @ grad @ Ph) + left @ Gh @ (P @ Ph) + (Ph @ P) @ Gh @ right


def pinv_jvp(A_t, A, P):
    """The tangent of P = pinv(A): -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P."""
    Ph, dAh = _mH(P), _mH(A_t)
    m, n = A.shape[-2], A.shape[-1]
    left = _eye(m, A) - A @ P
    right = _eye(n, A) - P @ A
    return -(P @ A_t @ P) + (P @ Ph) @ dAh @ left + right @ dAh @ (Ph @ P)


def _diag_embed(v):
    """A batch of diagonal matrices with ``v`` (*, n) on their diagonals."""
    return v.unsqueeze(-1) * _eye(v.shape[-1], v)


def _diagonal(x):
    return x.diagonal(0, -2, -1)


def _real(x):
    """The real part of a complex tensor (eigen- and singular values' tangents); x itself
    when real."""
    return x.real if x.is_complex() else x


def _trace_of_product(a, b):
    """``trace(a^H b)`` per matrix of the batch: ``sum(conj(a) * b)`` over the last two
    dims (the pairing of a gradient ``a`` with a tangent ``b``)."""
    return (a.conj() * b).sum((-2, -1))


def _matrix_scalar(s):
    """A batch of scalars (*) as (*, 1, 1), to scale matrices."""
    return s.unsqueeze(-1).unsqueeze(-1)


def _tri(x, upper: bool, strict: bool):
    """The triangle of ``x`` a triangular op reads (``strict``: without the diagonal)."""
    if upper:
        return x.triu(1 if strict else 0)
    return x.tril(-1 if strict else 0)


def _or_zeros(g, like):
    return et.zeros_like(like) if g is None else g


def _exclusive_prods_last(x):
    """For each element of the last dim of ``x``: the product of the others (exact with
    zeros: products of prefixes and suffixes)."""
    n = x.shape[-1]
    ones = et.ones_like(x.narrow(-1, 0, 1))
    if n == 1:
        return ones
    left = et.cat([ones, x.narrow(-1, 0, n - 1).cumprod(-1)], -1)
    right = et.cat([x.narrow(-1, 1, n - 1).flip([-1]).cumprod(-1).flip([-1]), ones], -1)
    return left * right


# ----------------------------------------------------------------------------- inverse, det


def inv_backward(grad, result):
    """X = A^{-1}: gA = -X^H g X^H."""
    Xh = _mH(result)
    return -Xh.matmul(grad).matmul(Xh)


def inv_jvp(A_t, result):
    return -result.matmul(A_t).matmul(result)


def _conj_cofactor_svd(A):
    """The conjugate of the cofactor matrix of A (the gradient of det A) through the SVD,
    valid for singular A: conj(det(U) det(Vh)) U diag(prod_{j != i} S_j) Vh."""
    U, S, Vh = et.linalg.svd(A)
    alpha = (et.linalg.det(U) * et.linalg.det(Vh)).conj()
    c = _exclusive_prods_last(S) * alpha.unsqueeze(-1)
    return (U * c.unsqueeze(-2)).matmul(Vh)


def det_backward(grad, A, result):
    """g conj(det(A)) A^{-H}; for the singular matrices of the batch (det exactly 0) g times
    the conjugate cofactor matrix from the SVD (zero for rank < n - 1, finite otherwise)."""
    n = A.shape[-1]
    if n == 0:
        return et.zeros_like(A)
    singular = result == 0
    if not bool(singular.any().item()):
        return _matrix_scalar(grad * result.conj()) * _mH(et.linalg.inv(A))
    mask = _matrix_scalar(singular)
    safe = et.where(mask, _eye(n, A), A)  # the nonsingular formula never sees a singular A
    regular = _matrix_scalar(grad * result.conj()) * _mH(et.linalg.inv(safe))
    return et.where(mask, _matrix_scalar(grad) * _conj_cofactor_svd(A), regular)


def det_jvp(A_t, A, result):
    """d det = <cofactor(A), dA>."""
    return _trace_of_product(det_backward(et.ones_like(result), A, result), A_t)


def _inv_adjoint_or_nan(A, sign):
    """A^{-H}, NaN for the singular matrices of the batch (sign 0: logabsdet is -inf)."""
    singular = sign == 0
    if not bool(singular.any().item()):
        return _mH(et.linalg.inv(A))
    mask = _matrix_scalar(singular)
    safe = et.where(mask, _eye(A.shape[-1], A), A)
    return et.where(mask, float("nan"), _mH(et.linalg.inv(safe)))


def slogdet_backward(grads, A, sign):
    """w A^{-H}: log det = logabsdet + i θ with sign = e^{iθ} has the derivative
    trace(A^{-1} dA); logabsdet takes its real part, θ its imaginary part, so
    w = g_logabsdet + i Im(g_sign conj(sign)). A real sign is piecewise constant (no
    gradient)."""
    g_sign, g = grads[0], grads[1]
    if A.is_complex() and g_sign is not None:
        phase = (g_sign * sign.conj()).imag * 1j
        g = phase if g is None else g + phase
    if g is None:
        return et.zeros_like(A)
    return _matrix_scalar(g) * _inv_adjoint_or_nan(A, sign)


def slogdet_jvp(A_t, A, sign):
    """d log det = trace(A^{-1} dA) = d logabsdet + i dθ (sign = e^{iθ}): the logabsdet's
    tangent is its real part, the sign's ``i sign im(...)`` (zero for real A)."""
    d = _trace_of_product(_inv_adjoint_or_nan(A, sign), A_t)
    if not d.is_complex():
        return et.zeros_like(sign), d
    return sign * (1j * d.imag), d.real


# ----------------------------------------------------------------------------- solve


def _is_vector_rhs(A, B_shape) -> bool:
    """PyTorch's rule: B is a (batch of) vector(s) when 1-d or of A's batch shape + (n,)."""
    B_shape = tuple(B_shape)
    return len(B_shape) == 1 or B_shape == tuple(A.shape[:-1])


def _solve_grad_B(grad, A, vector: bool, left: bool):
    G = grad.unsqueeze(-1) if vector else grad
    return et.linalg.solve(_mH(A), G, left=left)


def solve_backward_B(grad, A, B_shape, left: bool):
    """A X = B: gB = A^{-H} g (X A = B: gB = g A^{-H})."""
    vector = _is_vector_rhs(A, B_shape)
    gB = _solve_grad_B(grad, A, vector, left)
    return gB.squeeze(-1) if vector else gB


def solve_backward_A(grad, A, B_shape, result, left: bool):
    """A X = B: gA = -gB X^H (X A = B: gA = -X^H gB)."""
    vector = _is_vector_rhs(A, B_shape)
    gB = _solve_grad_B(grad, A, vector, left)
    X = result.unsqueeze(-1) if vector else result
    return -gB.matmul(_mH(X)) if left else -_mH(X).matmul(gB)


def solve_jvp(A_t, B_t, A, B_shape, result, left: bool):
    """A X = B: dX = A^{-1} (dB - dA X) (X A = B: dX = (dB - X dA) A^{-1})."""
    vector = _is_vector_rhs(A, B_shape)
    X = result.unsqueeze(-1) if vector else result
    rhs = None
    if B_t is not None:
        rhs = B_t.unsqueeze(-1) if vector else B_t
    if A_t is not None:
        term = A_t.matmul(X) if left else X.matmul(A_t)
        rhs = -term if rhs is None else rhs - term
    if rhs is None:
        return None
    X_t = et.linalg.solve(A, rhs, left=left)
    return X_t.squeeze(-1) if vector else X_t


def solve_triangular_backward_B(grad, A, upper: bool, left: bool, unitriangular: bool):
    return et.linalg.solve_triangular(
        _mH(A), grad, upper=not upper, left=left, unitriangular=unitriangular
    )


def solve_triangular_backward_A(grad, A, result, upper: bool, left: bool, unitriangular: bool):
    """-gB X^T (left) or -X^T gB, in the triangle of A that is read (without the diagonal
    for a unit triangular A)."""
    gB = solve_triangular_backward_B(grad, A, upper, left, unitriangular)
    gA = -gB.matmul(_mH(result)) if left else -_mH(result).matmul(gB)
    return _tri(gA, upper, unitriangular)


def solve_triangular_jvp(A_t, B_t, A, result, upper: bool, left: bool, unitriangular: bool):
    rhs = B_t
    if A_t is not None:
        dA = _tri(A_t, upper, unitriangular)
        term = dA.matmul(result) if left else result.matmul(dA)
        rhs = -term if rhs is None else rhs - term
    if rhs is None:
        return None
    return et.linalg.solve_triangular(
        A, rhs, upper=upper, left=left, unitriangular=unitriangular
    )


# ----------------------------------------------------------------------------- cholesky


def cholesky_backward(grad, result, upper: bool):
    """A = L L^T: gA = L^{-T} Φ(L^T gL) L^{-1}, symmetrised (Φ: lower triangle, diagonal
    halved). Upper: U = L^T, gL = gU^T."""
    L = _mH(result) if upper else result
    gL = _mH(grad) if upper else grad
    P = _mH(L).matmul(gL).tril()
    P = 0.5 * (P + _mH(P.tril(-1)))  # symmetric, with Φ's halved diagonal
    P = et.linalg.solve_triangular(_mH(L), P, upper=True, left=True)
    return et.linalg.solve_triangular(L, P, upper=False, left=False)


def cholesky_jvp(A_t, result, upper: bool):
    """dL = L Φ(L^{-1} dA L^{-T})."""
    L = _mH(result) if upper else result
    P = et.linalg.solve_triangular(L, A_t, upper=False, left=True)
    P = et.linalg.solve_triangular(_mH(L), P, upper=True, left=False)
    P = P.tril() - 0.5 * _diag_embed(_diagonal(P))
    dL = L.matmul(P)
    return _mH(dL) if upper else dL


# ----------------------------------------------------------------------------- qr


def _qr_check(mode: str, Q, R) -> None:
    """PyTorch's refusals (NotImplementedError, a RuntimeError, with PyTorch's messages)."""
    if mode == "r":
        raise NotImplementedError(QR_MODE_R_MESSAGE)
    if mode == "complete" and Q.shape[-2] > R.shape[-1]:
        raise NotImplementedError(QR_COMPLETE_MESSAGE)


def _copyltu(M):
    """The Hermitian (real: symmetric) matrix with M's strict lower triangle and the real
    part of its diagonal."""
    low = M.tril(-1)
    diag = _diagonal(M)
    return low + _mH(low) + _diag_embed(diag.real if diag.is_complex() else diag)


def _qr_backward_tall(gQ, gR, Q, R):
    """m >= n, Q (m, n), R (n, n): gA = (gQ + Q copyltu(M)) R^{-H}, M = R gR^H - gQ^H Q."""
    M = R.matmul(_mH(gR)) - _mH(gQ).matmul(Q)
    C = gQ + Q.matmul(_copyltu(M))
    return et.linalg.solve_triangular(_mH(R), C, upper=False, left=False)


def qr_backward(grads, Q, R, mode: str):
    """Reduced QR (or complete with m <= n, the same); wide A = Q [U V] by parts: Y = Q V
    gives gY = Q gV and adds Y gV^H to Q's gradient."""
    _qr_check(mode, Q, R)
    m, n = Q.shape[-2], R.shape[-1]
    gQ, gR = _or_zeros(grads[0], Q), _or_zeros(grads[1], R)
    if m >= n:
        return _qr_backward_tall(gQ, gR, Q, R)
    U, V = R.narrow(-1, 0, m), R.narrow(-1, m, n - m)
    gU, gV = gR.narrow(-1, 0, m), gR.narrow(-1, m, n - m)
    gY = Q.matmul(gV)
    gX = _qr_backward_tall(gQ + Q.matmul(V).matmul(_mH(gV)), gU, Q, U)
    return et.cat([gX, gY], -1)


def _qr_jvp_tall(dA, Q, R):
    """C = Q^T dA R^{-1} = Ω + dR R^{-1} (Ω skew, dR R^{-1} upper): Ω from C's strictly
    lower triangle; dR = (C - Ω) R, dQ = dA R^{-1} - Q (C - Ω)."""
    dA_Rinv = et.linalg.solve_triangular(R, dA, upper=True, left=False)
    C = _mH(Q).matmul(dA_Rinv)
    low = C.tril(-1)
    omega = low - _mH(low)
    if C.is_complex():  # Ω's diagonal is imaginary (R's stays real): C's imaginary diagonal
        omega = omega + _diag_embed(_diagonal(C).imag * 1j)
    upper_part = C - omega
    return dA_Rinv - Q.matmul(upper_part), upper_part.matmul(R)


def qr_jvp(A_t, Q, R, mode: str):
    _qr_check(mode, Q, R)
    m, n = Q.shape[-2], R.shape[-1]
    if m >= n:
        return _qr_jvp_tall(A_t, Q, R)
    U, V = R.narrow(-1, 0, m), R.narrow(-1, m, n - m)
    dQ, dU = _qr_jvp_tall(A_t.narrow(-1, 0, m), Q, U)
    dV = _mH(Q).matmul(A_t.narrow(-1, m, n - m) - dQ.matmul(V))
    return dQ, et.cat([dU, dV], -1)


# ----------------------------------------------------------------------------- eigh


def _eig_gaps(L):
    """E_ij = λ_j - λ_i, with ones on the diagonal (the quotients there are masked)."""
    n = L.shape[-1]
    return L.unsqueeze(-2) - L.unsqueeze(-1) + _eye(n, L)


def _check_phase_invariant(op: str, vectors: str, im_diag) -> None:
    """PyTorch's error when a loss depends on the phases of complex eigen- or singular
    vectors: ``im_diag`` (the derivative of the loss in those phases) must be ~0."""
    if not bool(et.allclose(im_diag, et.zeros_like(im_diag), rtol=1e-2, atol=1e-2)):
        what = "quantity, so it is ill-defined" if op == "linalg_eigh" else (
            "phase term, making it ill-defined")
        raise RuntimeError(
            f"{op}_backward: The {vectors} in the complex case are specified up to "
            f"multiplication by e^{{i phi}}. The specified loss function depends on this {what}."
        )


def eigh_backward(grads, eigenvalues, eigenvectors):
    """gA = V (diag(gL) + skew(V^H gV) / E) V^H, skew(X) = (X - X^H) / 2 (Hermitian)."""
    gL, gV = grads[0], grads[1]
    V = eigenvectors
    if gV is None:
        return (V * gL.unsqueeze(-2)).matmul(_mH(V))
    else:
        VtgV = _mH(V).matmul(gV)
        if VtgV.is_complex():
            _check_phase_invariant("linalg_eigh", "eigenvectors", _diagonal(VtgV).imag)
        inner = (0.5 * (VtgV - _mH(VtgV))) / _eig_gaps(eigenvalues)
        if gL is not None:
            inner = inner + _diag_embed(gL)
    return V.matmul(inner).matmul(_mH(V))


def eigh_jvp(A_t, eigenvalues, eigenvectors):
    """P = V^T dA V: dλ = diag(P), dV = V (P / E, zero diagonal)."""
    V = eigenvectors
    n = V.shape[-1]
    P = _mH(V).matmul(A_t).matmul(V)
    off = P * (1 - _eye(n, P)) / _eig_gaps(eigenvalues)
    return _real(_diagonal(P)), V.matmul(off)


def eigvalsh_backward(grad, A, UPLO: str):
    """V diag(g) V^T, V from eigh (recomputed)."""
    V = et.linalg.eigh(A, UPLO).eigenvectors
    return (V * grad.unsqueeze(-2)).matmul(_mH(V))


def eigvalsh_jvp(A_t, A, UPLO: str):
    V = et.linalg.eigh(A, UPLO).eigenvectors
    return _real(_diagonal(_mH(V).matmul(A_t).matmul(V)))


# ----------------------------------------------------------------------------- svd


def svd_backward(grads, U, S, Vh, full_matrices: bool):
    """PyTorch's formula: with J = U^H gU, H = V^H gV, E_jk = S_k^2 - S_j^2,
    gA = U [((J - J^H) S + S (H - H^H)) / E (zero diagonal) + diag(gS)
    + i Im(diag(J)) / S] Vh, plus (I - U U^H) gU S^{-1} Vh when m > k and
    U S^{-1} gVh (I - V V^H) when n > k. The imaginary term is zero for real A; for complex A
    the loss must not depend on the vectors' phases (Im diag(J) = -Im diag(H)), as PyTorch
    checks. full_matrices: U, Vh and their gradients narrowed to the first k = min(m, n)
    columns / rows (the rest of a full U or Vh is not determined by A)."""
    gU, gS, gVh = grads[0], grads[1], grads[2]
    k = S.shape[-1]
    m, n = U.shape[-2], Vh.shape[-1]
    if full_matrices:
        if U.shape[-1] != k:
            U = U.narrow(-1, 0, k)
            gU = None if gU is None else gU.narrow(-1, 0, k)
        if Vh.shape[-2] != k:
            Vh = Vh.narrow(-2, 0, k)
            gVh = None if gVh is None else gVh.narrow(-2, 0, k)
    if gU is None and gVh is None:
        return (U * _or_zeros(gS, S).unsqueeze(-2)).matmul(Vh)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + _eye(k, S)
    G = None
    im_J = im_H = None
    if gU is not None:
        J = _mH(U).matmul(gU)
        G = (J - _mH(J)) * S.unsqueeze(-2)
        im_J = _diagonal(J).imag if J.is_complex() else None
    if gVh is not None:
        H = Vh.matmul(_mH(gVh))  # V^H gV
        term = S.unsqueeze(-1) * (H - _mH(H))
        G = term if G is None else G + term
        im_H = _diagonal(H).imag if H.is_complex() else None
    G = G / E
    if U.is_complex():
        im = im_J if im_H is None else (-im_H if im_J is None else im_J + im_H)
        _check_phase_invariant("svd", "singular vectors", im)
        G = G * (1 - _eye(k, S))  # the diagonal of (J - J^H) is 2i Im diag(J), not a gap term
        if im_J is not None:
            G = G + _diag_embed(im_J / S * 1j)
    if gS is not None:
        G = G + _diag_embed(gS)
    if m > k and gU is not None:
        gUSinv = gU / S.unsqueeze(-2)
        gA = U.matmul(G) + gUSinv - U.matmul(_mH(U).matmul(gUSinv))
        return gA.matmul(Vh)
    if n > k and gVh is not None:
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = G.matmul(Vh) + SinvgVh - SinvgVh.matmul(_mH(Vh)).matmul(Vh)
        return U.matmul(gA)
    return U.matmul(G).matmul(Vh)


def svd_jvp(A_t, U, S, Vh, full_matrices: bool):
    """P = U^T dA V: dS = diag(P); dU = U Ω_U + (I - U U^T) dA V S^{-1},
    dV = V Ω_V + (I - V V^T) dA^T U S^{-1} with (Ω_U)_jk = (P_jk S_k + P_kj S_j) / E_jk,
    (Ω_V)_jk = (S_j P_jk + S_k P_kj) / E_jk, E_jk = S_k^2 - S_j^2 (zero diagonals; for
    complex A, ±i im(P_jj) / (2 S_j) on them, PyTorch's choice of phases).
    full_matrices with m != n: the extra columns of U (rows of Vh), which A does not
    determine, get a zero tangent (as in PyTorch)."""
    k = S.shape[-1]
    m, n = U.shape[-2], Vh.shape[-1]
    Uk = U.narrow(-1, 0, k) if U.shape[-1] != k else U
    Vk = _mH(Vh.narrow(-2, 0, k) if Vh.shape[-2] != k else Vh)
    P = _mH(Uk).matmul(A_t).matmul(Vk)
    S2 = S * S
    off = 1 - _eye(k, S)
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + _eye(k, S)
    Pt = _mH(P)
    omega_U = (P * S.unsqueeze(-2) + Pt * S.unsqueeze(-1)) * off / E
    omega_V = (S.unsqueeze(-1) * P + S.unsqueeze(-2) * Pt) * off / E
    dU = Uk.matmul(omega_U)
    dV = Vk.matmul(omega_V)
    if P.is_complex():  # the phases: i im(P_jj) / S_j split evenly, as PyTorch's gauge
        half = (_diagonal(P).imag / (2 * S) * 1j).unsqueeze(-2)
        dU = dU + Uk * half
        dV = dV - Vk * half
    if m > k:
        dU = dU + (A_t.matmul(Vk) - Uk.matmul(P)) / S.unsqueeze(-2)
    if n > k:
        dV = dV + (_mH(A_t).matmul(Uk) - Vk.matmul(Pt)) / S.unsqueeze(-2)
    if full_matrices and U.shape[-1] != k:
        dU = et.cat([dU, et.zeros_like(U.narrow(-1, k, m - k))], -1)
    if full_matrices and Vh.shape[-2] != k:
        dV = et.cat([dV, et.zeros_like(_mH(Vh.narrow(-2, k, n - k)))], -1)
    return dU, _real(_diagonal(P)), _mH(dV)


def svdvals_backward(grad, A):
    """U diag(g) Vh, U and Vh from the reduced SVD (recomputed)."""
    U, _, Vh = et.linalg.svd(A, full_matrices=False)
    return (U * grad.unsqueeze(-2)).matmul(Vh)


def svdvals_jvp(A_t, A):
    U, _, Vh = et.linalg.svd(A, full_matrices=False)
    return _real(_diagonal(_mH(U).matmul(A_t).matmul(_mH(Vh))))


def eig_backward(grads, eigenvalues, eigenvectors):
    """Gradient of ``linalg.eig`` (PyTorch's): with A = V diag(L) V^-1 and unit columns,
    gA = V^-H (diag(gL) + (V^H gV - V^H V diag(re(V^H gV))) / conj(E)) V^H, E_ij = L_j - L_i
    off the diagonal (its diagonal is gL). Defined for losses that do not depend on the
    eigenvectors' phases; a real A takes the real part."""
    gL, gV = grads[0], grads[1]
    L, V = eigenvalues, eigenvectors
    n = L.shape[-1]
    Vh = _mH(V)
    if gV is None:
        inner = _diag_embed(gL)
    else:
        VhgV = Vh.matmul(gV)
        re = VhgV.diagonal(0, -2, -1).real
        inner = VhgV - Vh.matmul(V * re.unsqueeze(-2))
        on_diag = et.eye(n, dtype=et.bool, device=V.device)
        E = et.where(on_diag, 1, L.unsqueeze(-2) - L.unsqueeze(-1)).conj()
        inner = et.where(on_diag, 0, inner / E)
        if gL is not None:
            inner = inner + _diag_embed(gL)
    return et.linalg.solve(Vh, inner.matmul(Vh))


def eigvals_backward(grad, A, eigenvalues):
    """Gradient of ``linalg.eigvals``: eig_backward with no eigenvector gradient (the
    eigenvectors computed again)."""
    return eig_backward([grad, None], eigenvalues, et.linalg.eig(A)[1])
