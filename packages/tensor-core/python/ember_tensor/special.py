"""Special functions with PyTorch's ``torch.special`` names: the gamma family (``gammaln``,
``digamma``, ``polygamma``, ``multigammaln``, ``gammainc``, ``gammaincc``, ``zeta``), the
error functions (``erfc``, ``erfcx``, ``erfinv``, ``ndtr``, ``ndtri``, ``log_ndtr``), the Bessel
functions (``i0``, ``i0e``, ``i1``, ``i1e``, ``bessel_j0`` ... ``scaled_modified_bessel_k1``),
``airy_ai`` (the core's kernels, ``special_*`` in ops.yaml), the orthogonal polynomials
(Chebyshev of the four kinds and their shifted forms, Hermite, Laguerre, Legendre) by their
three-term recurrences, entropy, ``xlog1py`` and the spherical Bessel function j0, composed
of core ops (autograd differentiates them; they run on every device), and the aliases
``torch.special`` gives to core functions (``expit``, ``erf``, ``logit``, ...).

Example::

    >>> import ember_tensor as et
    >>> et.special.chebyshev_polynomial_t(et.tensor([0.5]), 3).tolist()
    [-1.0]
"""

from __future__ import annotations

import math

import ember_tensor as _et

from ._composites.elementwise import _xlog

__all__ = [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "digamma",
    "erfc",
    "erfcx",
    "erfinv",
    "gammainc",
    "gammaincc",
    "gammaln",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "log_ndtr",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "zeta",
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "entr",
    "erf",
    "exp2",
    "expit",
    "expm1",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
    "log1p",
    "log_softmax",
    "logit",
    "logsumexp",
    "round",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "sinc",
    "softmax",
    "spherical_bessel_j0",
    "xlog1py",
    "xlogy",
]

# aliases of core functions, as torch.special has them
erf = _et.erf
exp2 = _et.exp2
expit = _et.sigmoid
expm1 = _et.expm1
log1p = _et.log1p
logit = _et.logit
logsumexp = _et.logsumexp
round = _et.round  # noqa: A001 - PyTorch's name
sinc = _et.sinc
xlogy = _et.xlogy
gammaln = _et.lgamma
digamma = psi = _et.digamma
polygamma = _et.polygamma
multigammaln = _et.mvlgamma
erfc = _et.erfc
erfinv = _et.erfinv
gammainc = _et.igamma
gammaincc = _et.igammac
i0 = modified_bessel_i0 = _et.i0
i0e = _et.special_i0e
i1 = modified_bessel_i1 = _et.special_i1
i1e = _et.special_i1e
ndtr = _et.special_ndtr
ndtri = _et.special_ndtri
log_ndtr = _et.special_log_ndtr
erfcx = _et.special_erfcx
bessel_j0 = _et.special_bessel_j0
bessel_j1 = _et.special_bessel_j1
bessel_y0 = _et.special_bessel_y0
bessel_y1 = _et.special_bessel_y1
modified_bessel_k0 = _et.special_modified_bessel_k0
modified_bessel_k1 = _et.special_modified_bessel_k1
scaled_modified_bessel_k0 = _et.special_scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _et.special_scaled_modified_bessel_k1
airy_ai = _et.special_airy_ai


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function: the sum over k >= 0 of (k + other) ** -input; either may be
    a number (weak in the type promotion, as PyTorch's). Not differentiable in input."""
    if not isinstance(input, _et.Tensor):
        if not isinstance(other, _et.Tensor):
            raise TypeError("zeta(): expected at least one of input and other to be a Tensor")
        input = _et.full((), input, dtype=_et.result_type(input, other), device=other.device)
    return _et.special_zeta(input, other, out=out)


def softmax(input, dim, *, dtype=None):
    """softmax along dim (optionally computed in dtype)."""
    return _et.softmax(input if dtype is None else input.to(dtype), dim)


def log_softmax(input, dim, *, dtype=None):
    """log_softmax along dim (optionally computed in dtype)."""
    return _et.log_softmax(input if dtype is None else input.to(dtype), dim)


def xlog1py(input, other):
    """input * log1p(other), 0 where input is 0 (unless other is NaN); either may be a
    number."""
    return _xlog("xlog1py", input, other, _et.log1p)


def entr(input):
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0 (NaN stays NaN)."""
    x = input if (input.is_floating_point()) else input.to(_et.get_default_dtype())
    safe = _et.where(_et.gt(x, 0), x, _et.ones_like(x))
    r = _et.where(_et.gt(x, 0), -x * _et.log(safe), _et.zeros_like(x))
    r = _et.where(_et.lt(x, 0), _et.full_like(x, -math.inf), r)
    return _et.where(_et.isnan(x), x, r)


def spherical_bessel_j0(input):
    """sin(x) / x (1 at 0, 0 at +-inf)."""
    x = input if input.is_floating_point() else input.to(_et.get_default_dtype())
    zero = _et.eq(x, 0)
    safe = _et.where(zero, _et.ones_like(x), x)
    r = _et.where(zero, _et.ones_like(x), _et.sin(safe) / safe)
    return _et.where(_et.isinf(x), _et.zeros_like(x), r)


# --------------------------------------------------------------------- polynomials

_MAX_DEGREE = 100_000  # the recurrences run one step per degree


def _operands(op: str, x, n):
    """(x and n as tensors of the result dtype, the integer degrees, the largest degree)."""
    like = x if isinstance(x, _et.Tensor) else n
    dt = _et.result_type(x, n)
    if not dt.is_floating_point:
        dt = _et.get_default_dtype()
    xt = x.to(dt) if isinstance(x, _et.Tensor) else _et.full((), x, dtype=dt,
                                                            device=like.device)
    nt = n if isinstance(n, _et.Tensor) else _et.tensor(n, device=like.device)
    degrees = _et.trunc(nt.to(_et.float64)) if nt.is_floating_point() else nt.to(_et.float64)
    top = int(degrees.max().item()) if degrees.numel() else 0
    if top > _MAX_DEGREE:
        raise RuntimeError(f"{op}: degree {top} is beyond the {_MAX_DEGREE} the recurrence "
                           "computes")
    return xt, degrees.to(dt), top


def _recurrence(op: str, x, n, p0, p1, step):
    """P_n(x) for the degrees n (0 for n < 0) of the recurrence P_{k+1} = step(k, x, P_k,
    P_{k-1}) from P_0 = p0(x) and P_1 = p1(x)."""
    x, n, top = _operands(op, x, n)
    shape = _et.broadcast_shapes(x.shape, n.shape)
    x = x.expand(shape)
    prev, cur = p0(x), p1(x)
    out = _et.where(_et.eq(n, 0), prev, _et.zeros_like(prev))
    out = _et.where(_et.eq(n, 1), cur, out)
    for k in range(1, top):
        prev, cur = cur, step(k, x, cur, prev)
        out = _et.where(_et.eq(n, k + 1), cur, out)
    return out


def _chebyshev(first):
    def compute(op, x, n):
        return _recurrence(op, x, n, _et.ones_like, first,
                           lambda k, x, cur, prev: 2 * x * cur - prev)
    return compute


_T = _chebyshev(lambda x: x)
_U = _chebyshev(lambda x: 2 * x)
_V = _chebyshev(lambda x: 2 * x - 1)
_W = _chebyshev(lambda x: 2 * x + 1)


def _shifted(x):
    return 2 * x - 1


def chebyshev_polynomial_t(input, n):
    """The Chebyshev polynomial of the first kind T_n(input) (0 for n < 0)."""
    return _T("chebyshev_polynomial_t", input, n)


def chebyshev_polynomial_u(input, n):
    """The Chebyshev polynomial of the second kind U_n(input)."""
    return _U("chebyshev_polynomial_u", input, n)


def chebyshev_polynomial_v(input, n):
    """The Chebyshev polynomial of the third kind V_n(input)."""
    return _V("chebyshev_polynomial_v", input, n)


def chebyshev_polynomial_w(input, n):
    """The Chebyshev polynomial of the fourth kind W_n(input)."""
    return _W("chebyshev_polynomial_w", input, n)


def shifted_chebyshev_polynomial_t(input, n):
    """T_n(2 input - 1)."""
    return _T("shifted_chebyshev_polynomial_t", _shifted(input), n)


def shifted_chebyshev_polynomial_u(input, n):
    """U_n(2 input - 1)."""
    return _U("shifted_chebyshev_polynomial_u", _shifted(input), n)


def shifted_chebyshev_polynomial_v(input, n):
    """V_n(2 input - 1)."""
    return _V("shifted_chebyshev_polynomial_v", _shifted(input), n)


def shifted_chebyshev_polynomial_w(input, n):
    """W_n(2 input - 1)."""
    return _W("shifted_chebyshev_polynomial_w", _shifted(input), n)


def hermite_polynomial_h(input, n):
    """The physicists' Hermite polynomial H_n(input)."""
    return _recurrence("hermite_polynomial_h", input, n, _et.ones_like, lambda x: 2 * x,
                       lambda k, x, cur, prev: 2 * x * cur - 2 * k * prev)


def hermite_polynomial_he(input, n):
    """The probabilists' Hermite polynomial He_n(input)."""
    return _recurrence("hermite_polynomial_he", input, n, _et.ones_like, lambda x: x,
                       lambda k, x, cur, prev: x * cur - k * prev)


def laguerre_polynomial_l(input, n):
    """The Laguerre polynomial L_n(input)."""
    return _recurrence("laguerre_polynomial_l", input, n, _et.ones_like, lambda x: 1 - x,
                       lambda k, x, cur, prev: ((2 * k + 1 - x) * cur - k * prev) / (k + 1))


def legendre_polynomial_p(input, n):
    """The Legendre polynomial P_n(input)."""
    return _recurrence("legendre_polynomial_p", input, n, _et.ones_like, lambda x: x,
                       lambda k, x, cur, prev: ((2 * k + 1) * x * cur - k * prev) / (k + 1))
