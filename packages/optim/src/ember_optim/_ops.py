"""Elementwise update helpers composed of the tensor core's in-place ops.

The core has ``add_`` (with ``alpha``), ``mul_``, ``div_``, ``sqrt_``, ``maximum(out=)``,
but no ``lerp_``, ``addcmul_`` or ``addcdiv_``; these compose them so that the result
rounds as PyTorch's CPU kernels do wherever one core op can reproduce it:

- ``lerp_(a, b, w)``: PyTorch computes ``a + w * (b - a)`` for ``|w| < 0.5`` and
  ``b - (b - a) * (1 - w)`` otherwise, each as one fused multiply-add; the core's
  ``add(x, y, alpha=)`` is that same fused multiply-add, so the result is bit for bit
  PyTorch's (the weight rounded to the tensor's dtype first, as PyTorch does).
- ``addcdiv_(a, t1, t2, value)``: ``a + (value * t1) / t2``, three roundings in PyTorch's
  order: bit for bit.
- ``addcmul_(a, t1, t2, value)``: PyTorch rounds ``value * t1`` and then fuses the
  multiply by ``t2`` with the add; here ``t1 * t2`` is rounded and then fused with the
  add of ``value`` times it, so the result can differ in the last bit.

Square roots differ from PyTorch's in the last bit too: the core's ``sqrt`` is correctly
rounded, PyTorch's vectorised CPU ``sqrt`` is not always.
"""

from __future__ import annotations

import struct

import ember_tensor as et

Tensor = et.Tensor


def _round_to(dtype, x: float) -> float:
    """``x`` rounded to ``dtype`` (float32 and below round through float32)."""
    if dtype == et.float64:
        return x
    return struct.unpack("f", struct.pack("f", x))[0]


def lerp_(a: Tensor, b: Tensor, weight: float, scratch: Tensor | None = None) -> Tensor:
    """``a += weight * (b - a)`` in place, rounded as PyTorch's ``lerp_``. ``scratch``
    (a tensor like ``a``) receives ``b - a`` when given."""
    w = _round_to(a.dtype, weight)
    diff = et.sub(b, a, out=scratch) if scratch is not None else b.sub(a)
    if abs(w) < 0.5:
        return a.add_(diff, alpha=w)
    return et.add(b, diff, alpha=w - 1.0, out=a)


def addcmul_(a: Tensor, t1: Tensor, t2: Tensor, value: float = 1.0,
             scratch: Tensor | None = None) -> Tensor:
    """``a += value * t1 * t2`` in place."""
    prod = et.mul(t1, t2, out=scratch) if scratch is not None else t1.mul(t2)
    return a.add_(prod, alpha=value)


def addcdiv_(a: Tensor, t1: Tensor, t2: Tensor, value: float = 1.0,
             scratch: Tensor | None = None) -> Tensor:
    """``a += value * t1 / t2`` in place. ``scratch`` (a tensor like ``a``, distinct from
    ``t1`` and ``t2``) receives the quotient when given."""
    if value == 1:
        quot = et.div(t1, t2, out=scratch) if scratch is not None else t1.div(t2)
    else:
        quot = et.mul(t1, value, out=scratch) if scratch is not None else t1.mul(value)
        quot.div_(t2)
    return a.add_(quot)
