"""Backward helpers of the special functions (derivatives.yaml): the Bessel functions' and
the incomplete gamma function's derivatives, and PyTorch's refusal where it has none."""

from __future__ import annotations

import ember_tensor as et

__all__ = ["i1_backward", "i1e_backward", "igamma_backward_other", "not_implemented"]


def not_implemented(what: str):
    """PyTorch's NotImplementedError for an argument it does not differentiate."""
    raise NotImplementedError(f"the derivative for '{what}' is not implemented.")


def i1_backward(grad, self, result):
    """d I1 / dx = I0(x) - I1(x) / x, 1/2 at 0."""
    safe = et.where(et.eq(self, 0), et.ones_like(self), self)
    d = et.sub(et.i0(self), et.div(result, safe))
    return et.mul(grad, et.where(et.eq(self, 0), et.full_like(self, 0.5), d))


def i1e_backward(grad, self, result):
    """d (exp(-|x|) I1(x)) / dx = i0e(x) - i1e(x) (sgn(x) + 1 / x), 1/2 at 0."""
    safe = et.where(et.eq(self, 0), et.ones_like(self), self)
    d = et.sub(et.special_i0e(self), et.mul(result, et.add(et.sgn(self), et.reciprocal(safe))))
    return et.mul(grad, et.where(et.eq(self, 0), et.full_like(self, 0.5), d))


def igamma_backward_other(grad, self, other):
    """d P(a, x) / dx = exp(-x) x^(a-1) / Gamma(a)."""
    log_density = et.sub(et.sub(et.mul(et.sub(self, 1), et.log(other)), other), et.lgamma(self))
    return et.mul(grad, et.exp(log_density))
