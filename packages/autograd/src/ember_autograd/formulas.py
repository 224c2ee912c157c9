"""Helpers the formulas of derivatives.yaml may call, written with ember_tensor ops only
(so that derivatives of derivatives come from the same table).

Conventions: ``grad`` is the gradient of the op's output (its shape), ``self_shape`` etc.
are tuples, ``dim`` arguments arrive as the op got them (None, an int, or a tuple; an
empty tuple reduces over every dimension). A helper returns a gradient of the output's
shape or of the input's shape; the generated code sums broadcast dimensions away and casts
to the input's dtype. Forward-mode helpers (``*_jvp``) take tangents named ``<arg>_t``; a
missing tangent may be passed as None and counts as zero.

Complex tensors follow PyTorch's convention: ``grad`` is ``dL/d(re out) + i dL/d(im out)``
for a real loss L, and a formula returns the same for its input. For a holomorphic op with
derivative ``f'`` that is ``grad * f'(z).conj()``, which is why the formulas conjugate the
factor they multiply ``grad`` by (``conj`` of a real tensor is the tensor itself).
"""

from __future__ import annotations

import cmath
import math

import ember_tensor as et

from .formulas_conv import *  # noqa: F403
from .formulas_conv import __all__ as _conv_all
from .formulas_linalg import *  # noqa: F403
from .formulas_linalg import __all__ as _linalg_all
from .formulas_nn import *  # noqa: F403
from .formulas_nn import __all__ as _nn_all
from .formulas_shape import *  # noqa: F403
from .formulas_shape import __all__ as _shape_all
from .formulas_special import *  # noqa: F403
from .formulas_special import __all__ as _special_all
from .saved import sum_to

__all__ = [
    *_conv_all,
    *_linalg_all,
    *_nn_all,
    *_shape_all,
    *_special_all,
    "amax_backward",
    "any_complex",
    "complex_jvp",
    "clamp_backward_max",
    "clamp_backward_min",
    "clamp_backward_self",
    "clamp_jvp",
    "angle_backward",
    "maybe_scale",
    "sgn_jvp",
    "fft_c2r_backward",
    "fft_r2c_backward",
    "conjugate",
    "polar_backward_abs",
    "polar_backward_angle",
    "sgn_backward",
    "cumprod_backward",
    "cumprod_jvp",
    "logcumsumexp_backward",
    "logcumsumexp_jvp",
    "et",
    "evenly_distribute_backward",
    "getitem_backward",
    "index_reduction_backward",
    "index_reduction_jvp",
    "logsumexp_backward",
    "matmul_backward_other",
    "matmul_backward_self",
    "maximum_backward",
    "maximum_jvp",
    "maybe_multiply",
    "mean_backward",
    "minimum_backward",
    "minimum_jvp",
    "norm_backward",
    "ones_like",
    "pow_backward_exponent",
    "pow_backward_self",
    "pow_scalar_backward",
    "prod_backward",
    "reduce_jvp",
    "reduced_dims",
    "reduced_numel",
    "restore_reduced",
    "reversed_cumsum",
    "std_backward",
    "sum_backward",
    "sum_to",
    "unsqueeze_dims",
    "value_selecting_backward",
    "value_selecting_jvp",
    "var_backward",
    "zeros_like",
]


def zeros_like(t):
    return et.zeros_like(t)


def ones_like(t):
    return et.ones_like(t)


def unsqueeze_dims(grad, dim, ndim: int):
    """``grad`` of a reduction over ``dim`` without keepdim, with the reduced dims put back
    as size 1 (so it broadcasts against the input of ``ndim`` dims)."""
    dims = [dim] if isinstance(dim, int) else list(dim)
    if ndim == 0:
        return grad
    for d in sorted(d % ndim for d in dims):
        grad = grad.unsqueeze(d)
    return grad


def getitem_backward(grad, shape, dtype, key):
    """A zero tensor of the input's shape with ``grad`` added at ``key`` (repeats add up)."""
    g = et.zeros(shape, dtype=dtype)
    g._index_add_key_(key, grad)
    return g


def maybe_multiply(t, s):
    """``t * conj(s)`` for the scalar factor ``s`` of an op (alpha, beta), skipping the
    product for ``s == 1`` (the default)."""
    if isinstance(s, (int, float)) and not isinstance(s, bool) and s == 1:
        return t
    return t * conjugate(s)


def maybe_scale(t, s):
    """``t * s`` for the scalar factor ``s`` of an op (alpha, beta) in a forward rule (no
    conjugate), skipping the product for ``s == 1``."""
    if isinstance(s, (int, float)) and not isinstance(s, bool) and s == 1:
        return t
    return t * s


def any_complex(*tensors) -> bool:
    """Whether one of the tensors (None: absent) is complex."""
    return any(t is not None and t.is_complex() for t in tensors)


def complex_jvp(conj_tangent, result):
    """The forward derivative from a backward formula applied to conjugated tangents: its
    conjugate, real when the op's result is (abs and angle of complex input)."""
    t = conj_tangent.conj()
    if t.is_complex() and not result.is_complex():
        return t.real
    return t


def conjugate(x):
    """The complex conjugate of a tensor or a Python number (itself when real)."""
    if isinstance(x, et.Tensor):
        return x.conj()
    if isinstance(x, complex):
        return x.conjugate()
    return x


def fft_r2c_backward(grad, dim, normalization, onesided, self_shape):
    """Gradient of ``_fft_r2c``: the one-sided spectrum zero-padded to full length along the
    last transformed dim, transformed back (c2c inverse), its real part."""
    if onesided:
        d = dim[-1] % len(self_shape)
        missing = self_shape[d] - grad.shape[d]
        if missing > 0:
            pad = list(grad.shape)
            pad[d] = missing
            grad = et.cat([grad, et.zeros(pad, dtype=grad.dtype, device=grad.device)], d)
    return et._fft_c2c(grad, dim, normalization, False).real


def fft_c2r_backward(grad, dim, normalization):
    """Gradient of ``_fft_c2r``: the one-sided forward transform of grad, with the entries
    whose mirror image lies outside the one-sided range (1 .. n - n // 2 - 1 along the last
    dim) counted twice."""
    g = et._fft_r2c(grad, dim, normalization, True)
    d = dim[-1] % grad.dim()
    doubled = grad.shape[d] - g.shape[d]
    if doubled <= 0:
        return g
    rest = g.shape[d] - 1 - doubled
    parts = [g.narrow(d, 0, 1), g.narrow(d, 1, doubled) * 2]
    if rest > 0:
        parts.append(g.narrow(d, 1 + doubled, rest))
    return et.cat(parts, d)


def sgn_backward(grad, self, result):
    """Gradient of ``sgn(z) = z / |z|``: zero for real input; for complex,
    ``(grad - conj(grad) sgn(z)^2) / (2 |z|)``, zero at ``z = 0``."""
    if not self.dtype.is_complex:
        return zeros_like(grad)
    g = (grad - grad.conj() * result * result) / (2 * self.abs())
    return et.where(self == 0, 0, g)


def sgn_jvp(self_t, self, result):
    """Tangent of ``sgn(z) = z / |z|``: zero for real input; for complex,
    ``(t - sgn(z) re(conj(sgn(z)) t)) / |z|`` (the change of the angle only), zero at 0."""
    if not self.dtype.is_complex:
        return zeros_like(self_t)
    g = (self_t - result * (result.conj() * self_t).real) / self.abs()
    return et.where(self == 0, 0, g)


def angle_backward(grad, self):
    """Gradient of ``angle``: zero for real input; for complex, ``grad i z / |z|^2`` (the
    gradient of ``atan2(im z, re z)``), zero at ``z = 0``."""
    if not self.dtype.is_complex:
        return zeros_like(grad)
    g = grad * (self * 1j) / (self * self.conj()).real
    return et.where(self == 0, 0, g)


def polar_backward_abs(grad, result, abs, angle):
    """Gradient of ``polar(abs, angle)`` for ``abs``: ``re(conj(grad) e^{i angle})``."""
    return (grad.conj() * et.polar(et.ones_like(abs), angle)).real


def polar_backward_angle(grad, result):
    """Gradient of ``polar(abs, angle)`` for ``angle``: ``re(conj(grad) i z)``."""
    return (grad.conj() * result * 1j).real


def _zero_if_none(t):
    return 0 if t is None else t


# ----------------------------------------------------------------------------- reductions


def reduced_dims(dim, ndim: int) -> list[int]:
    """The dims (non-negative, sorted) a reduction over ``dim`` removes: all of them for
    None or an empty list."""
    if ndim == 0:
        return []
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return list(range(ndim))
    return sorted({d % ndim for d in dims})


def reduced_numel(shape, dim) -> int:
    shape = tuple(shape)
    n = 1
    for d in reduced_dims(dim, len(shape)):
        n *= shape[d]
    return n


def restore_reduced(t, dim, ndim: int, keepdim: bool):
    """A reduction's output (or its gradient) with the reduced dims back as size 1."""
    if keepdim or ndim == 0:
        return t
    return unsqueeze_dims(t, reduced_dims(dim, ndim), ndim)


def sum_backward(grad, shape, dim, keepdim: bool):
    return restore_reduced(grad, dim, len(tuple(shape)), keepdim).expand(tuple(shape))


def mean_backward(grad, shape, dim, keepdim: bool):
    # divided before the expand, so the gradient stays a broadcast view of the reduced one
    return sum_backward(grad / reduced_numel(shape, dim), shape, dim, keepdim)


def reduce_jvp(coeff, self_t, dim, keepdim: bool, result=None):
    """Tangent of a reduction whose gradient is ``grad * coeff`` (grad broadcast over the
    reduced dims): the reduced sum of ``conj(coeff) * self_t`` (a complex input's gradient
    is conjugated, PyTorch's convention; a holomorphic reduction's tangent is not), its real
    part when ``result`` is given and real (var / std of complex input)."""
    prod = conjugate(coeff) * self_t
    if result is not None and prod.dtype.is_complex and not result.dtype.is_complex:
        prod = prod.real
    ndim = prod.dim()
    if ndim == 0:
        return prod
    return prod.sum(reduced_dims(dim, ndim), keepdim=keepdim)


def _positions(n: int, d: int, ndim: int, device=None):
    """``arange(n)`` laid along dim ``d`` of an ``ndim``-dim tensor (other dims size 1), on
    ``device`` (the CPU when None)."""
    shape = [1] * ndim
    shape[d] = n
    return et.arange(n, device=device).reshape(shape)


def _exclusive_prods(x, d: int):
    """For each position i along ``d``: the product of the other elements of its slice
    (zeros handled: products of prefixes and suffixes)."""
    n = x.shape[d]
    ones = et.ones_like(x.narrow(d, 0, 1))
    left = et.cat([ones, x.narrow(d, 0, n - 1).cumprod(d)], d)
    right = et.cat([x.narrow(d, 1, n - 1).flip([d]).cumprod(d).flip([d]), ones], d)
    return left * right


def prod_backward(grad, self, result, dim, keepdim: bool):
    """Gradient of ``prod`` over ``dim`` (one int, or None: all elements). Exact with
    zeros in the input (products of the other elements, not ``result / self``)."""
    if self.dim() == 0:
        return grad
    if dim is None:
        flat = self.reshape([-1])
        g = grad.reshape([1])
        r = result.reshape([1])
        return _prod_backward_dim(g, flat, r, 0).reshape(tuple(self.shape))
    d = dim % self.dim()
    g = grad if keepdim else grad.unsqueeze(d)
    r = result if keepdim else result.unsqueeze(d)
    return _prod_backward_dim(g, self, r, d)


def _prod_backward_dim(g, x, r, d: int):
    if not (x == 0).any().item():
        return g * (r / x).conj()
    return g * _exclusive_prods(x, d).conj()


def reversed_cumsum(t, dim: int):
    """Sums from each position to the end of ``dim`` (the gradient of ``cumsum``)."""
    if t.dim() == 0:
        return t
    return t.flip([dim]).cumsum(dim).flip([dim])


def logcumsumexp_backward(grad, self, result, dim: int):
    """Gradient of logcumsumexp: sum over k >= j of grad_k exp(x_j - r_k), the positive and
    negative parts of grad each through a reversed logcumsumexp in log space (PyTorch's
    formula, which never overflows)."""
    if grad.numel() == 0 or self.dim() == 0:
        return grad
    d = dim % self.dim()

    def reverse_lcse(t):
        return t.flip([d]).logcumsumexp(d).flip([d])

    lowest = et.full((), et.finfo(grad.dtype).min, dtype=grad.dtype, device=grad.device)
    log_abs = grad.abs().log()
    positive = reverse_lcse(et.where(grad > 0, log_abs, lowest) - result)
    negative = reverse_lcse(et.where(grad < 0, log_abs, lowest) - result)
    return (positive + self).exp() - (negative + self).exp()


def logcumsumexp_jvp(self_t, self, dim: int):
    """Forward derivative of logcumsumexp: cumsum(exp(x - m) x_t) / cumsum(exp(x - m)), m the
    maximum along dim (PyTorch's formula)."""
    if self.dim() == 0:
        return self_t
    d = dim % self.dim()
    e = (self - self.amax(d, keepdim=True)).exp() if self.numel() else self.exp()
    return (e * self_t).cumsum(d) / e.cumsum(d)


def _sum_over_dropped(x, d: int, term):
    """``sum_k term(at_k, from_k, c_k)`` over the positions ``k`` of dim ``d`` of ``x``:
    ``at_k`` marks position ``k`` along ``d``, ``from_k`` the positions ``>= k``, and ``c_k``
    is the cumprod of ``x`` along ``d`` with ``x_k`` replaced by 1 (the exact derivatives of
    ``cumprod`` with zeros in the input; quadratic in the size of ``d``)."""
    n = x.shape[d]
    pos = _positions(n, d, x.dim(), x.device)
    total = None
    for k in range(n):
        at_k = pos == k
        # prod_{j <= i, j != k} x_j for every i >= k (x_k replaced by 1)
        c = et.where(at_k, 1, x).cumprod(d)
        term_k = term(at_k, pos >= k, c)
        total = term_k if total is None else total + term_k
    return total


def cumprod_backward(grad, self, result, dim: int):
    """Gradient of ``cumprod`` along ``dim`` (the partial products conjugated for complex
    input); exact with zeros in the input (then quadratic in the size of ``dim``)."""
    if self.dim() == 0:
        return grad
    d = dim % self.dim()
    if not (self == 0).any().item():
        return reversed_cumsum(grad * conjugate(result), d) / conjugate(self)

    def term(at_k, from_k, c):
        contrib = et.where(from_k, grad * conjugate(c), 0).sum(d, keepdim=True)
        return et.where(at_k, contrib, 0)

    return _sum_over_dropped(self, d, term)


def cumprod_jvp(self_t, self, result, dim: int):
    if self.dim() == 0:
        return self_t
    d = dim % self.dim()
    if not (self == 0).any().item():
        return result * (self_t / self).cumsum(d)

    def term(at_k, from_k, c):
        t_k = et.where(at_k, self_t, 0).sum(d, keepdim=True)
        return et.where(from_k, c * t_k, 0)

    return _sum_over_dropped(self, d, term)


def evenly_distribute_backward(grad, self, result):
    """Gradient of a full max/min: shared evenly among the elements equal to the result
    (the NaNs when the result is NaN)."""
    mask = self.isnan() if bool(result.isnan().item()) else self == result
    return et.where(mask, grad / mask.sum(), 0)


def amax_backward(grad, self, result, dim, keepdim: bool):
    """Gradient of amax/amin: split evenly among the ties of each reduced slice."""
    ndim = self.dim()
    g = restore_reduced(grad, dim, ndim, keepdim)
    r = restore_reduced(result, dim, ndim, keepdim)
    mask = self == r
    if ndim == 0:
        return et.where(mask, g, 0)
    return et.where(mask, g / mask.sum(reduced_dims(dim, ndim), keepdim=True), 0)


def index_reduction_backward(grad, shape, dim: int, indices, keepdim: bool):
    """Gradient of max/min over ``dim`` (values, indices): ``grad`` at ``indices``."""
    shape = tuple(shape)
    ndim = len(shape)
    if ndim == 0:
        return grad
    d = dim % ndim
    g = grad if keepdim else grad.unsqueeze(d)
    idx = indices if keepdim else indices.unsqueeze(d)
    return et.where(_positions(shape[d], d, ndim, idx.device) == idx, g, 0)


def index_reduction_jvp(self_t, dim: int, indices, keepdim: bool):
    ndim = self_t.dim()
    if ndim == 0:
        return self_t
    d = dim % ndim
    idx = indices if keepdim else indices.unsqueeze(d)
    picked = et.where(_positions(self_t.shape[d], d, ndim, idx.device) == idx, self_t, 0)
    return picked.sum(d, keepdim=keepdim)


def value_selecting_backward(grad, shape, dim: int, indices):
    """Gradient of sort/topk: ``grad`` scattered back to where the values came from."""
    shape = tuple(shape)
    if len(shape) == 0:
        return grad
    return et.zeros(shape, dtype=grad.dtype).scatter(dim, indices, grad)


def value_selecting_jvp(self_t, dim: int, indices):
    if self_t.dim() == 0:
        return self_t
    return self_t.gather(dim, indices)


def _correction(unbiased, correction):
    if correction is not None:
        return float(correction)
    return 1.0 if unbiased is None or unbiased else 0.0


def var_backward(grad, self, dim, unbiased, correction, keepdim: bool):
    ndim = self.dim()
    dims = reduced_dims(dim, ndim)
    dof = reduced_numel(self.shape, dims) - _correction(unbiased, correction)
    scale = 2.0 / dof if dof != 0 else math.inf
    g = restore_reduced(grad, dims, ndim, keepdim)
    centered = self - self.mean(dims, keepdim=True) if ndim else self - self
    return (scale * g) * centered


def std_backward(grad, self, result, dim, unbiased, correction, keepdim: bool):
    grad_var = et.where(result == 0, 0, grad / (result * 2))
    return var_backward(grad_var, self, dim, unbiased, correction, keepdim)


def norm_backward(grad, self, p, result, dim, keepdim: bool):
    """Gradient of the vector p-norm over ``dim`` (zero where the norm or, for p < 1, the
    element is zero, as PyTorch)."""
    ndim = self.dim()
    p = float(p)
    g = restore_reduced(grad, dim, ndim, keepdim)
    r = restore_reduced(result, dim, ndim, keepdim)
    if p == 0.0:
        return et.zeros_like(self) * g
    if p == 1.0:
        return self.sign() * g
    if p == 2.0:
        return et.where(r == 0, 0, self * (g / r))
    if math.isinf(p):
        mask = self.abs() == r
        count = mask.sum(reduced_dims(dim, ndim), keepdim=True) if ndim else 1
        return self.sign() * et.where(mask, g / count, 0)
    if p < 1.0:
        return et.where(self == 0, 0, self.sign() * self.abs().pow(p - 1) * (g / r.pow(p - 1)))
    return et.where(r == 0, 0, self * self.abs().pow(p - 2) * (g / r.pow(p - 1)))


def logsumexp_backward(grad, self, result, dim, keepdim: bool):
    ndim = self.dim()
    g = restore_reduced(grad, dim, ndim, keepdim)
    r = restore_reduced(result, dim, ndim, keepdim)
    return g * (self - r).exp()


# ----------------------------------------------------------------------------- pointwise


def pow_backward_self(grad, self, exponent):
    """d(self ** exponent)/d self, zero where the exponent is 0. (exponent - 1 is taken in the
    exponent's dtype: a Python number arrives as a wrapped 0-d float64 tensor, and a wrapped
    number minus a Python int would be the default dtype, float32, losing the exponent's
    digits: a 1e-8 relative error in float64 gradients.)"""
    em1 = exponent - et.ones_like(exponent)
    return et.where(exponent == 0, 0, grad * conjugate(exponent * self.pow(em1)))


def pow_backward_exponent(grad, self, exponent, result):
    """d(self ** exponent)/d exponent = result * log(self), zero where self == 0 and
    exponent >= 0."""
    if exponent.dtype.is_complex:  # PyTorch: a zero base gives zero for exponents on [0, inf)
        nonneg = et.logical_and(exponent.imag == 0, exponent.real >= 0)
    else:
        nonneg = exponent >= 0
    cond = et.logical_and(self == 0, nonneg)
    return grad * et.where(cond, 0, (result * self.log()).conj())


def pow_scalar_backward(grad, base, exponent, result):
    """d(base ** exponent)/d exponent for a Python number ``base``."""
    if isinstance(base, complex) or exponent.dtype.is_complex:
        if base == 0:
            return grad * et.where(exponent.real >= 0, 0, (result * -math.inf).conj())
        return grad * (result * cmath.log(base)).conj()
    base = float(base)
    if base == 0.0:
        return grad * et.where(exponent >= 0, 0, result * -math.inf)
    log_base = math.log(base) if base > 0 else math.nan
    return grad * (result * log_base)


def clamp_backward_self(grad, self, min, max):
    if min is not None and max is not None:
        cond = et.logical_and(self >= min, self <= max)
    elif min is not None:
        cond = self >= min
    elif max is not None:
        cond = self <= max
    else:
        return grad
    return et.where(cond, grad, 0)


def clamp_backward_min(grad, self, min, max):
    cond = self < min
    if max is not None:
        cond = et.logical_and(cond, min < max)
    return et.where(cond, grad, 0)


def clamp_backward_max(grad, self, min, max):
    cond = self > max
    if min is not None:
        cond = et.logical_or(cond, max < min)
    return et.where(cond, grad, 0)


def clamp_jvp(self, self_t, min, min_t, max, max_t):
    out = self_t
    if min is not None:
        out = et.where(self < min, _zero_if_none(min_t), out)
    if max is not None:
        cond = self > max
        if min is not None:
            cond = et.logical_or(cond, max < min)
        out = et.where(cond, _zero_if_none(max_t), out)
    return out


def maximum_backward(grad, self, other):
    """Gradient of maximum(self, other) for ``self`` (ties split in half)."""
    return et.where(self == other, grad / 2, et.where(self > other, grad, 0))


def minimum_backward(grad, self, other):
    return et.where(self == other, grad / 2, et.where(self < other, grad, 0))


def maximum_jvp(self, self_t, other, other_t):
    self_t, other_t = _zero_if_none(self_t), _zero_if_none(other_t)
    return et.where(self == other, (self_t + other_t) / 2, et.where(self > other, self_t, other_t))


def minimum_jvp(self, self_t, other, other_t):
    self_t, other_t = _zero_if_none(self_t), _zero_if_none(other_t)
    return et.where(self == other, (self_t + other_t) / 2, et.where(self < other, self_t, other_t))


# ----------------------------------------------------------------------------- linear algebra


def matmul_backward_self(grad, self, other):
    """Gradient of matmul for ``self``, for every combination of 1-D, 2-D and batched
    operands (broadcast batch dims are summed away by the caller)."""
    if self.dim() == 1 and other.dim() == 1:
        return grad * other
    if other.dim() == 1:
        return grad.unsqueeze(-1) * other
    if self.dim() == 1:
        return grad.unsqueeze(-2).matmul(other.transpose(-1, -2)).squeeze(-2)
    return grad.matmul(other.transpose(-1, -2))


def matmul_backward_other(grad, self, other):
    if self.dim() == 1 and other.dim() == 1:
        return grad * self
    if self.dim() == 1:
        return self.unsqueeze(-1) * grad.unsqueeze(-2)
    if other.dim() == 1:
        return self.transpose(-1, -2).matmul(grad.unsqueeze(-1)).squeeze(-1)
    return self.transpose(-1, -2).matmul(grad)
