"""Samplers the tensor core does not have, written on its ops and random generator
(``rand``, ``randn``): the standard gamma (Marsaglia and Tsang, vectorised rejection, with
its implicit reparameterization gradient), Poisson (inversion for small rates, Hörmann's
PTRS above) and binomial (inversion for small means, Hörmann's BTRS above).

Every rejection loop draws for the whole tensor per round and keeps the first accepted
proposal of each element, so the results depend only on the generator's state."""

from __future__ import annotations

import ember_tensor as et
from ember_autograd import Function

__all__ = ["_standard_gamma", "_sample_poisson", "_sample_binomial", "_standard_gamma_grad"]


def _rand(n: int):
    return et.rand(n, dtype=et.float64)


def _sample_standard_gamma(alpha):
    """Gamma(alpha, 1) samples, float64, of alpha's shape (alpha: a float64 tensor > 0)."""
    shape = alpha.shape
    a = alpha.reshape(-1)
    n = a.numel()
    if n == 0:
        return a.clone().reshape(shape)
    boost = a < 1
    a1 = et.where(boost, a + 1, a)
    d = a1 - 1.0 / 3.0
    c = 1.0 / et.sqrt(9.0 * d)
    out = et.zeros(n, dtype=et.float64)
    pending = et.ones(n, dtype=et.bool)
    while bool(pending.any()):
        x = et.randn(n, dtype=et.float64)
        u = _rand(n)
        t = 1.0 + c * x
        v = t * t * t
        positive = v > 0
        logv = et.log(et.where(positive, v, et.ones_like(v)))
        ok = positive & (et.log(u) < 0.5 * x * x + d - d * v + d * logv)
        take = pending & ok
        out = et.where(take, d * v, out)
        pending = pending & ~ok
    if bool(boost.any()):
        # Gamma(a) = Gamma(a + 1) * U^(1/a), in log space
        u = _rand(n).clamp(min=et.finfo(et.float64).tiny)
        out = et.where(boost, et.exp(et.log(out) + et.log(u) / a), out)
    return out.clamp(min=et.finfo(et.float64).tiny).reshape(shape)


def _gamma_cdf_da(a, x):
    """d/da of the regularized lower incomplete gamma P(a, x), by a fourth-order central
    difference (the lower function below the mean, the upper one above it, for accuracy)."""
    h = 1e-3 * a
    upper = x > a

    def f(b):
        return et.where(upper, -et.igammac(b, x), et.igamma(b, x))

    return (-f(a + 2 * h) + 8 * f(a + h) - 8 * f(a - h) + f(a - 2 * h)) / (12 * h)


def _standard_gamma_grad(x, alpha):
    """The implicit reparameterization gradient dx/dalpha of Gamma(alpha, 1) samples x:
    -(dF/dalpha) / f(x), F and f the distribution and density functions."""
    a = alpha.to(et.float64)
    xs = x.to(et.float64)
    log_density = (a - 1) * et.log(xs) - xs - et.lgamma(a)
    grad = -_gamma_cdf_da(a, xs) / et.exp(log_density)
    return grad.to(x.dtype)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, alpha):
        x = _sample_standard_gamma(alpha.detach().to(et.float64)).to(alpha.dtype)
        x = x.clamp(min=et.finfo(alpha.dtype).tiny)
        ctx.save_for_backward(x, alpha)
        return x

    @staticmethod
    def backward(ctx, grad):
        x, alpha = ctx.saved_tensors
        return grad * _standard_gamma_grad(x.detach(), alpha.detach())


def _standard_gamma(alpha):
    """Gamma(alpha, 1) samples of alpha's shape and dtype, differentiable with respect to
    alpha (implicit reparameterization)."""
    return _StandardGamma.apply(alpha)


def _poisson_small(lam):
    """Inversion by sequential search (rates below 10)."""
    n = lam.numel()
    u = _rand(n)
    k = et.zeros(n, dtype=et.float64)
    p = et.exp(-lam)
    cdf = p.clone()
    pending = u > cdf
    i = 0
    while bool(pending.any()):
        i += 1
        p = p * lam / i
        k = et.where(pending, k + 1, k)
        cdf = cdf + p
        pending = pending & (u > cdf) & (p > 0)
    return k


def _poisson_ptrs(lam):
    """Hörmann's transformed rejection with squeeze (rates of 10 and more)."""
    n = lam.numel()
    slam = et.sqrt(lam)
    loglam = et.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)
    out = et.zeros(n, dtype=et.float64)
    pending = et.ones(n, dtype=et.bool)
    while bool(pending.any()):
        u = _rand(n) - 0.5
        v = _rand(n)
        us = 0.5 - u.abs()
        k = et.floor((2 * a / us + b) * u + lam + 0.43)
        quick = (us >= 0.07) & (v <= vr)
        valid = (k >= 0) & ~((us < 0.013) & (v > us))
        kk = k.clamp(min=0)
        lhs = et.log(v) + et.log(invalpha) - et.log(a / (us * us) + b)
        rhs = -lam + kk * loglam - et.lgamma(kk + 1)
        ok = quick | (valid & (lhs <= rhs))
        out = et.where(pending & ok, k, out)
        pending = pending & ~ok
    return out


def _sample_poisson(rate):
    """Poisson(rate) samples (float64 counts) of rate's shape; rate: float64, >= 0."""
    shape = rate.shape
    lam = rate.reshape(-1)
    if lam.numel() == 0:
        return lam.clone().reshape(shape)
    small = lam < 10
    out = et.zeros_like(lam)
    if bool(small.any()):
        out = et.where(small, _poisson_small(et.where(small, lam, et.zeros_like(lam))), out)
    if bool((~small).any()):
        big = et.where(small, et.full_like(lam, 10.0), lam)
        out = et.where(small, out, _poisson_ptrs(big))
    return out.reshape(shape)


def _binomial_inversion(n, p):
    """Sequential search for small means (n * p < 10, p <= 1/2)."""
    size = p.numel()
    q = 1 - p
    s = p / q
    a = (n + 1) * s
    r = et.exp(n * et.log1p(-p))
    u = _rand(size)
    k = et.zeros(size, dtype=et.float64)
    pending = (u > r) & (k < n)
    while bool(pending.any()):
        u = et.where(pending, u - r, u)
        k = et.where(pending, k + 1, k)
        r = et.where(pending, r * (a / k.clamp(min=1) - s), r)
        pending = pending & (u > r) & (k < n)
    return k


def _binomial_btrs(n, p):
    """Hörmann's BTRS transformed rejection (n * p >= 10, p <= 1/2)."""
    size = p.numel()
    q = 1 - p
    spq = et.sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    vr = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    lpq = et.log(p / q)
    m = et.floor((n + 1) * p)
    h = et.lgamma(m + 1) + et.lgamma(n - m + 1)
    out = et.zeros(size, dtype=et.float64)
    pending = et.ones(size, dtype=et.bool)
    while bool(pending.any()):
        u = _rand(size) - 0.5
        v = _rand(size)
        us = 0.5 - u.abs()
        k = et.floor((2 * a / us + b) * u + c)
        inside = (k >= 0) & (k <= n)
        quick = inside & (us >= 0.07) & (v <= vr)
        kk = k.clamp(min=0)
        kk = et.minimum(kk, n)
        lv = et.log(v * alpha / (a / (us * us) + b))
        bound = h - et.lgamma(kk + 1) - et.lgamma(n - kk + 1) + (kk - m) * lpq
        ok = quick | (inside & (lv <= bound))
        out = et.where(pending & ok, k, out)
        pending = pending & ~ok
    return out


def _sample_binomial(count, probs):
    """Binomial(count, probs) samples (float64) of the broadcast shape; both float64."""
    count, probs = et.broadcast_tensors(count, probs)
    shape = probs.shape
    n = count.reshape(-1)
    p = probs.reshape(-1)
    if p.numel() == 0:
        return p.clone().reshape(shape)
    flip = p > 0.5
    pp = et.where(flip, 1 - p, p)
    degenerate = (pp <= 0) | (n <= 0)
    safe_p = et.where(degenerate, et.full_like(pp, 0.25), pp)
    safe_n = et.where(degenerate, et.ones_like(n), n)
    small = safe_n * safe_p < 10
    out = et.zeros_like(p)
    if bool(small.any()):
        sp = et.where(small, safe_p, et.full_like(pp, 0.25))
        sn = et.where(small, safe_n, et.ones_like(n))
        out = et.where(small, _binomial_inversion(sn, sp), out)
    if bool((~small).any()):
        bp = et.where(small, et.full_like(pp, 0.5), safe_p)
        bn = et.where(small, et.full_like(n, 100.0), safe_n)
        out = et.where(small, out, _binomial_btrs(bn, bp))
    out = et.where(degenerate, et.zeros_like(out), out)
    out = et.where(flip, n - out, out)
    return out.reshape(shape)


