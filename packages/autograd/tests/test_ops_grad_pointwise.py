"""Gradients of the elementwise, reduction, sorting, linear-algebra, fill and cast ops
(derivatives.yaml).

One row per op path: the same function runs on ember and on torch (``m`` is the module,
``ember_tensor`` or ``torch``). Each row is checked with ``ember_autograd.gradcheck``
(first derivatives against central differences), ``gradgradcheck`` (second derivatives,
where they exist) and, unless marked, against torch (output values and vector-Jacobian
products). Inputs are float64, with broadcasting shapes, non-contiguous inputs (transposed
or stepped storage), dim/keepdim variants and 0-d tensors; their domains keep the functions
differentiable (positive for log/sqrt, away from kinks and ties).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_autograd as ea
import ember_tensor as et
from ember_autograd import gradcheck, gradgradcheck

# ----------------------------------------------------------------------------- inputs


class In:
    """A float64 input requiring grad, uniform in [lo, hi) (or the given ``values``), with
    magnitudes at least ``away`` (keeps kinks at 0 out of reach); ``nc``: non-contiguous."""

    def __init__(self, *shape, lo=-1.0, hi=1.0, nc=False, values=None, away=0.0, grad=True):
        self.shape = shape
        self.lo, self.hi, self.nc, self.away, self.grad = lo, hi, nc, away, grad
        self.values = None if values is None else np.asarray(values, dtype=np.float64)

    def array(self, i: int) -> np.ndarray:
        if self.values is not None:
            return self.values.copy()
        rng = np.random.default_rng(100 + i)
        a = rng.uniform(self.lo, self.hi, size=self.shape)
        if self.away:
            a = np.where(np.abs(a) < self.away, np.sign(a + 1e-300) * self.away, a)
        return a

    def build(self, lib, i: int):
        a = self.array(i)
        from_numpy = et.from_numpy if lib is et else torch.from_numpy
        big = [d for d in range(a.ndim) if a.shape[d] > 1]
        if self.nc and len(big) >= 2:  # transposed storage
            d0, d1 = big[0], big[-1]
            t = from_numpy(np.ascontiguousarray(np.swapaxes(a, d0, d1))).transpose(d0, d1)
        elif self.nc and big:  # every other element of a longer storage
            d = big[0]
            t = from_numpy(np.repeat(a, 2, axis=d))
            t = t[(slice(None),) * d + (slice(None, None, 2),)]
        else:
            t = from_numpy(a)
        if self.nc and big:
            assert not t.is_contiguous()
        return t.requires_grad_() if self.grad else t


class Row:
    def __init__(self, name, fn, *inputs, gg=True, torch_ref=True, fwd=True, **tol):
        self.name, self.fn, self.inputs = name, fn, inputs
        self.gg, self.torch_ref, self.fwd, self.tol = gg, torch_ref, fwd, tol

    def build(self, lib):
        return tuple(x.build(lib, i) if isinstance(x, In) else x for i, x in enumerate(self.inputs))

    def ember_fn(self):
        return lambda *xs: self.fn(et, *xs)


def _linear(m):
    return m.nn.functional.linear if m is torch else m.linear


def _gelu_backward(m):
    return torch.ops.aten.gelu_backward if m is torch else m.gelu_backward


def _threshold_backward(m):
    return torch.ops.aten.threshold_backward if m is torch else m.threshold_backward


def _nn(m, name):
    """The activation ``name``: the core's op on Ember, torch.nn.functional's on torch."""
    return getattr(torch.nn.functional, name) if m is torch else getattr(m, name)


def _nn_(m, name, x, *args):
    """The in-place activation ``name`` on ``x`` (Ember: the op's in-place variant,
    ``x.name_()``; torch: torch._C._nn.name_ or torch.name_)."""
    if m is torch:
        fn = getattr(torch._C._nn, name + "_", None) or getattr(torch, name + "_")
        return fn(x, *args)
    return getattr(x, name + "_")(*args)


def _bce(m, x, t, w=None, reduction=1):
    return (torch.ops.aten if m is torch else m).binary_cross_entropy(x, t, w, reduction)


def _gen(m, seed=0):
    g = m.Generator()
    g.manual_seed(seed)
    return g


def _write_into_view(a, write):
    """``a`` * 2 with its rows 1: rewritten in place through a view (CopySlices)."""
    c = a * 2
    write(c[1:])
    return c


# quarter steps are exact in float16/bfloat16 (casts are checked with eps = 0.25)
QUARTERS = np.array([[-1.5, -0.75, 0.25], [0.5, 1.25, 2.0]])
CAST_TOL = {"eps": 0.25}
# a tensor with zeros (prod/cumprod take the exclusive-product path)
WITH_ZEROS = np.array([[0.5, 0.0, -1.5, 2.0], [0.0, 0.0, 1.25, -0.75], [1.5, -0.5, 0.75, 1.1]])

ROWS = [
    # --- elementwise binary (broadcasting, scalars, non-contiguous) ---
    Row("add", lambda m, a, b: m.add(a, b, alpha=2.5), In(3, 4), In(4)),
    Row("add_nc", lambda m, a, b: a + b, In(3, 4, nc=True), In(3, 1)),
    Row("add_scalar", lambda m, a: 1.5 + a, In(2, 3)),
    Row("sub", lambda m, a, b: m.sub(a, b, alpha=-2), In(3, 1), In(1, 4)),
    Row("rsub_operator", lambda m, a: 2 - a, In(3)),
    Row("mul", lambda m, a, b: a * b, In(3, 4, nc=True), In(4)),
    Row("mul_0d", lambda m, a, b: a * b, In(), In(2, 3)),
    Row("div", lambda m, a, b: a / b, In(3, 4), In(4, lo=0.5, hi=2.0)),
    Row("div_scalar", lambda m, a: 3.0 / a, In(2, 3, lo=0.5, hi=2.0, nc=True)),
    Row("div_floor", lambda m, a, b: m.div(a, b, rounding_mode="floor"), In(3, 4), In(4, lo=0.3)),
    Row("div_trunc", lambda m, a, b: m.div(a, b, rounding_mode="trunc"), In(3, 4), In(4, lo=0.3)),
    Row("true_divide", lambda m, a, b: m.true_divide(a, b), In(3, 4), In(3, 1, lo=0.5)),
    Row("floor_divide", lambda m, a, b: m.floor_divide(a, b), In(3, 4, lo=0.1, hi=3.0),
        In(4, lo=0.7, hi=1.3), torch_ref=False),
    # the comparisons' in-place forms keep self's dtype and pass zero gradients
    *(Row(f"{op}_", lambda m, a, b, op=op: getattr(a * 2, f"{op}_")(b) * a, In(3, 4), In(4))
      for op in ("eq", "ne", "lt", "le", "gt", "ge")),
    Row("remainder", lambda m, a, b: m.remainder(a, b), In(3, 4, lo=-3, hi=3),
        In(4, lo=0.7, hi=1.3)),
    Row("remainder_scalar", lambda m, a: m.remainder(a, 0.7), In(3, 4, lo=-3, hi=3)),
    Row("fmod", lambda m, a, b: m.fmod(a, b), In(3, 4, lo=-3, hi=3), In(3, 1, lo=0.7, hi=1.3)),
    Row("pow", lambda m, a, b: m.pow(a, b), In(3, 4, lo=0.5, hi=2.0), In(4, lo=-2.0, hi=2.0)),
    Row("pow_nc", lambda m, a, b: a ** b, In(3, 4, lo=0.5, hi=2.0, nc=True), In(3, 1)),
    Row("pow_scalar_exp", lambda m, a: a ** 2.5, In(2, 3, lo=0.5, hi=2.0)),
    Row("pow_int_exp_neg_base", lambda m, a: a ** 3, In(2, 3)),
    Row("pow_zero_exp", lambda m, a: a ** 0, In(2, 3)),
    Row("rpow", lambda m, a: 2.0 ** a, In(2, 3)),
    Row("pow_scalar", lambda m, a: m.pow(1.7, a), In(2, 3, nc=True)),
    Row("maximum", lambda m, a, b: m.maximum(a, b), In(3, 4), In(4)),
    Row("minimum", lambda m, a, b: m.minimum(a, b), In(3, 4, nc=True), In(3, 1)),
    Row("max_other", lambda m, a, b: m.max(a, b), In(3, 4), In(4)),
    Row("min_other", lambda m, a, b: a.min(b), In(2, 3), In(2, 3, nc=True)),
    Row("where", lambda m, a, b: m.where(a > 0, a, b), In(3, 4), In(4)),
    Row("where_scalar", lambda m, a: m.where(a > 0, a, 0.5), In(3, 4, nc=True)),
    Row("where_method", lambda m, a, b: a.where(b < 0, b), In(3, 4), In(3, 4)),
    Row("clamp", lambda m, a: a.clamp(-0.5, 0.5), In(3, 4)),
    Row("clamp_only_min", lambda m, a: a.clamp(min=-0.2), In(3, 4, nc=True)),
    Row("clamp_only_max", lambda m, a: m.clamp(a, max=0.3), In(3, 4)),
    Row("clamp_tensors", lambda m, a, lo, hi: a.clamp(lo, hi), In(3, 4),
        In(4, lo=-1.0, hi=-0.3), In(3, 1, lo=0.3, hi=1.0)),
    Row("clamp_min_gt_max", lambda m, a, lo, hi: a.clamp(lo, hi), In(3, 4),
        In(4, lo=0.4, hi=1.0), In(4, lo=-1.0, hi=0.3)),
    Row("clip", lambda m, a, lo: m.clip(a, min=lo), In(3, 4), In(3, 4)),
    # --- elementwise unary ---
    Row("exp", lambda m, a: a.exp(), In(3, 4, nc=True)),
    Row("exp_0d", lambda m, a: m.exp(a), In()),
    Row("log", lambda m, a: a.log(), In(3, 4, lo=0.2, hi=2.0)),
    Row("log1p", lambda m, a: a.log1p(), In(3, 4, lo=-0.5, hi=2.0)),
    Row("expm1", lambda m, a: a.expm1(), In(3, 4)),
    Row("sqrt", lambda m, a: a.sqrt(), In(3, 4, lo=0.2, hi=2.0, nc=True)),
    Row("rsqrt", lambda m, a: a.rsqrt(), In(3, 4, lo=0.2, hi=2.0)),
    Row("sin", lambda m, a: a.sin(), In(3, 4)),
    Row("cos", lambda m, a: m.cos(a), In(3, 4, nc=True)),
    Row("tan", lambda m, a: a.tan(), In(3, 4)),
    Row("tanh", lambda m, a: a.tanh(), In(3, 4)),
    Row("sigmoid", lambda m, a: a.sigmoid(), In(3, 4, lo=-3, hi=3)),
    Row("erf", lambda m, a: a.erf(), In(3, 4)),
    Row("quantile", lambda m, a: m.quantile(a, 0.3, dim=1), In(3, 5)),
    Row("nanquantile", lambda m, a: m.nanquantile(a, 0.6), In(7)),
    Row("std_unbiased", lambda m, a: m.std(a, True), In(3, 4)),
    Row("var_unbiased", lambda m, a: a.var(False), In(3, 4)),
    Row("round_decimals", lambda m, a: m.round(a, decimals=2), In(3, 4), gg=False),
    Row("cov", lambda m, a: m.cov(a, correction=0), In(3, 5)),
    Row("corrcoef", lambda m, a: m.corrcoef(a), In(3, 5)),
    Row("ldexp", lambda m, a: m.ldexp(a, m.tensor([1, -2, 0, 3])), In(3, 4), torch_ref=False),
    # (torch 2.13's ldexp backward takes 2 ** other in integers: 0 for a negative exponent)
    Row("ldexp_positive", lambda m, a: m.ldexp(a, m.tensor([1, 2, 0, 3])), In(3, 4)),
    Row("cdist", lambda m, a, b: m.cdist(a, b), In(3, 4), In(2, 4)),
    Row("cdist_p1", lambda m, a, b: m.cdist(a, b, p=1.0), In(3, 4), In(2, 4, lo=1.5, hi=2.0)),
    Row("frexp", lambda m, a: m.frexp(a)[0], In(3, 4, away=0.1)),
    Row("gradient", lambda m, a: m.gradient(a, spacing=2.0, dim=1, edge_order=2)[0],
        In(3, 5)),
    # special functions
    Row("erfc", lambda m, a: a.erfc(), In(3, 4)),
    Row("erfinv", lambda m, a: a.erfinv(), In(3, 4, lo=-0.9, hi=0.9)),
    Row("lgamma", lambda m, a: a.lgamma(), In(3, 4, lo=-2.9, hi=3.0, away=0.1)),
    Row("digamma", lambda m, a: a.digamma(), In(3, 4, lo=0.2, hi=3.0)),
    Row("polygamma", lambda m, a: m.polygamma(2, a), In(3, 4, lo=0.5, hi=3.0)),
    Row("polygamma_method_1", lambda m, a: a.polygamma(1), In(3, 4, lo=-2.7, hi=3.0, away=0.2)),
    Row("mvlgamma", lambda m, a: m.mvlgamma(a, 3), In(3, 4, lo=1.5, hi=3.0)),
    Row("i0", lambda m, a: a.i0(), In(3, 4, lo=-3.0, hi=3.0)),
    Row("special_i0e", lambda m, a: m.special.i0e(a), In(3, 4, lo=-3.0, hi=3.0, away=0.1)),
    Row("special_i1", lambda m, a: m.special.i1(a), In(5, values=[-2.0, -0.5, 0.0, 0.7, 3.0])),
    Row("special_i1e", lambda m, a: m.special.i1e(a), In(3, 4, lo=-3.0, hi=3.0, away=0.1)),
    Row("special_ndtr", lambda m, a: m.special.ndtr(a), In(3, 4, lo=-3.0, hi=3.0)),
    Row("special_ndtri", lambda m, a: m.special.ndtri(a), In(3, 4, lo=0.05, hi=0.95)),
    Row("special_log_ndtr", lambda m, a: m.special.log_ndtr(a), In(3, 4, lo=-4.0, hi=3.0)),
    Row("special_erfcx", lambda m, a: m.special.erfcx(a), In(3, 4, lo=-2.0, hi=3.0)),
    Row("igamma", lambda m, a, x: m.igamma(a, x), In(3, 4, lo=0.5, hi=3.0, grad=False),
        In(3, 4, lo=0.2, hi=4.0), fwd=False),
    Row("igammac", lambda m, a, x: m.igammac(a, x), In(3, 4, lo=0.5, hi=3.0, grad=False),
        In(3, 4, lo=0.2, hi=4.0), fwd=False),
    Row("special_zeta", lambda m, s, q: m.special.zeta(s, q), In(3, 4, lo=2.0, hi=4.0, grad=False),
        In(3, 4, lo=0.5, hi=3.0), fwd=False),
    Row("log2", lambda m, a: a.log2(), In(3, 4, lo=0.2, hi=2.0)),
    Row("log10", lambda m, a: a.log10(), In(3, 4, lo=0.2, hi=2.0)),
    Row("atan", lambda m, a: a.atan(), In(3, 4, lo=-3, hi=3)),
    Row("asin", lambda m, a: a.asin(), In(3, 4, lo=-0.9, hi=0.9)),
    Row("acos", lambda m, a: m.acos(a), In(3, 4, lo=-0.9, hi=0.9, nc=True)),
    Row("sinh", lambda m, a: a.sinh(), In(3, 4, lo=-2.0, hi=2.0)),
    Row("cosh", lambda m, a: a.cosh(), In(3, 4, lo=-2.0, hi=2.0)),
    Row("asinh", lambda m, a: a.asinh(), In(3, 4, lo=-3.0, hi=3.0)),
    Row("acosh", lambda m, a: a.acosh(), In(3, 4, lo=1.2, hi=3.0)),
    Row("atanh", lambda m, a: a.atanh(), In(3, 4, lo=-0.9, hi=0.9)),
    # composites (ops.yaml composite: python): differentiated through the ops they call
    Row("atan2", lambda m, a, b: m.atan2(a, b), In(3, 4, away=0.2), In(4, away=0.2)),
    Row("atan2_method_nc", lambda m, a, b: a.atan2(b), In(3, 4, nc=True, away=0.2),
        In(3, 4, lo=-2.0, hi=-0.2)),
    Row("hypot", lambda m, a, b: m.hypot(a, b), In(3, 4, away=0.1), In(3, 4, away=0.1)),
    # other only lends its sign bit: no gradient reaches it (torch gives zeros)
    Row("copysign", lambda m, a, b: m.copysign(a, b), In(3, 4, away=0.1),
        In(4, away=0.1, grad=False)),
    Row("copysign_scalar", lambda m, a: a.copysign(-2.0), In(2, 3, nc=True, away=0.1)),
    Row("logaddexp", lambda m, a, b: m.logaddexp(a, b), In(3, 4, lo=-3.0, hi=3.0),
        In(4, lo=-3.0, hi=3.0)),
    # products (_composites/products.py)
    Row("mv", lambda m, a, v: m.mv(a, v), In(3, 4, nc=True), In(4)),
    Row("addmv", lambda m, s, a, v: m.addmv(s, a, v, beta=0.5, alpha=2), In(3), In(3, 4), In(4)),
    Row("addr", lambda m, s, a, b: s.addr(a, b, alpha=2), In(3, 4), In(3), In(4)),
    Row("baddbmm", lambda m, s, a, b: m.baddbmm(s, a, b, beta=2), In(3, 5), In(2, 3, 4),
        In(2, 4, 5)),
    Row("addbmm", lambda m, s, a, b: m.addbmm(s, a, b), In(3, 5), In(2, 3, 4), In(2, 4, 5)),
    Row("vdot", lambda m, a, b: m.vdot(a, b), In(4), In(4)),
    Row("tensordot", lambda m, a, b: m.tensordot(a, b, ([1, 2], [1, 0])), In(2, 3, 4),
        In(4, 3, 2)),
    Row("inner", lambda m, a, b: m.inner(a, b), In(2, 3, nc=True), In(4, 3)),
    # (torch.chain_matmul warns that it is deprecated: gradcheck only)
    Row("chain_matmul", lambda m, a, b, c: m.chain_matmul(a, b, c), In(2, 3), In(3, 4),
        In(4, 2), torch_ref=False),
    Row("cross", lambda m, a, b: m.cross(a, b, 1), In(2, 3), In(2, 3)),
    Row("einsum", lambda m, a, b: m.einsum("bij,bjk->bik", a, b), In(2, 2, 3), In(2, 3, 4)),
    Row("einsum_trace_outer", lambda m, a, b: m.einsum("ii,j->j", a, b), In(3, 3), In(2)),
    # elementwise and arithmetic composites (_composites/elementwise.py, arith.py)
    Row("deg2rad", lambda m, a: m.deg2rad(a), In(3, 4, nc=True)),
    Row("rad2deg", lambda m, a: a.rad2deg(), In(3, 4)),
    Row("exp2", lambda m, a: m.exp2(a), In(3, 4, nc=True)),
    Row("logaddexp2", lambda m, a, b: m.logaddexp2(a, b), In(3, 4, lo=-3.0, hi=3.0),
        In(4, lo=-3.0, hi=3.0)),
    Row("frac", lambda m, a: m.frac(a), In(3, 4, lo=-3.0, hi=3.0, away=0.1)),
    Row("xlogy", lambda m, a, b: m.xlogy(a, b), In(3, 4), In(4, lo=0.2, hi=2.0)),
    Row("xlogy_scalar", lambda m, a: m.xlogy(2.0, a), In(3, 4, lo=0.2, hi=2.0)),
    Row("sinc", lambda m, a: m.sinc(a), In(3, 4, lo=-2.0, hi=2.0, nc=True)),
    Row("logit", lambda m, a: m.logit(a), In(3, 4, lo=0.1, hi=0.9)),
    Row("logit_eps", lambda m, a: m.logit(a, 0.2), In(3, 4, lo=0.05, hi=0.95, away=0.0)),
    Row("addcmul", lambda m, a, b, c: m.addcmul(a, b, c, value=0.5), In(3, 4), In(3, 4, nc=True),
        In(4)),
    Row("addcdiv", lambda m, a, b, c: a.addcdiv(b, c, value=2), In(3, 4), In(3, 4),
        In(4, lo=0.5, hi=2.0)),
    Row("lerp", lambda m, a, b: m.lerp(a, b, 0.3), In(3, 4), In(3, 4, nc=True)),
    Row("lerp_tensor_weight", lambda m, a, b, w: m.lerp(a, b, w), In(3, 4), In(4),
        In(3, 4, lo=0.0, hi=1.0)),
    Row("rsub", lambda m, a, b: m.rsub(a, b, alpha=2), In(3, 4), In(4)),
    Row("clamp_min", lambda m, a, b: m.clamp_min(a, b), In(3, 4, away=0.05), In(4, lo=0.5,
                                                                               hi=0.6)),
    Row("clamp_max", lambda m, a: a.clamp_max(0.2), In(3, 4, nc=True, away=0.05)),
    Row("fmax", lambda m, a, b: m.fmax(a, b), In(3, 4), In(4)),
    Row("fmin", lambda m, a, b: m.fmin(a, b), In(3, 4, nc=True), In(3, 4)),
    Row("float_power", lambda m, a, b: m.float_power(a, b), In(3, 4, lo=0.5, hi=2.0), In(4)),
    Row("nan_to_num", lambda m, a: m.nan_to_num(a, 0.0, 1.0), In(3, 4)),
    # composites of _composites/shape.py recorded through their ops
    Row("outer", lambda m, a, b: m.outer(a, b), In(3), In(4, nc=True)),
    # activations and the binary cross-entropy (composite: python): recorded through their
    # ops, except hardtanh and binary_cross_entropy (derivatives.yaml entries: one node with
    # PyTorch's formula); inputs away from the kinks
    Row("hardtanh", lambda m, a: _nn(m, "hardtanh")(a, -0.5, 0.7),
        In(values=[[-1.2, -0.8, -0.3, 0.1], [0.5, 0.9, 1.3, -0.45]])),
    Row("hardtanh_", lambda m, a: _nn_(m, "hardtanh", a * 1),
        In(values=[[-1.2, -0.8, -0.3, 0.1], [0.5, 0.9, 1.3, -0.45]])),
    Row("relu6", lambda m, a: _nn(m, "relu6")(a), In(values=[[-1.5, 0.5, 2.0], [5.5, 6.5, 3.0]])),
    Row("elu", lambda m, a: _nn(m, "elu")(a, 1.5), In(3, 4, away=0.05)),
    Row("elu_scaled", lambda m, a: (torch.ops.aten if m is torch else m).elu(a, 0.5, 2.0, 1.5),
        In(3, 4, away=0.05, nc=True)),
    Row("elu_", lambda m, a: _nn_(m, "elu", a * 1, 1.5), In(3, 4, away=0.05)),
    Row("selu", lambda m, a: _nn(m, "selu")(a), In(3, 4, away=0.05)),
    Row("selu_", lambda m, a: _nn_(m, "selu", a * 1), In(3, 4, away=0.05)),
    Row("celu", lambda m, a: _nn(m, "celu")(a, 0.5), In(3, 4, away=0.05)),
    Row("leaky_relu", lambda m, a: _nn(m, "leaky_relu")(a, 0.2), In(3, 4, away=0.05)),
    Row("leaky_relu_", lambda m, a: _nn_(m, "leaky_relu", a * 1, 0.2), In(3, 4, away=0.05)),
    Row("hardsigmoid", lambda m, a: _nn(m, "hardsigmoid")(a),
        In(values=[[-4.0, -2.5, 0.5], [2.9, 3.5, -1.0]])),
    Row("hardswish", lambda m, a: _nn(m, "hardswish")(a),
        In(values=[[-4.0, -2.5, 0.5], [2.9, 3.5, -1.0]])),
    Row("mish", lambda m, a: _nn(m, "mish")(a), In(3, 4, lo=-5, hi=5)),
    Row("softsign", lambda m, a: _nn(m, "softsign")(a), In(3, 4, away=0.05)),
    Row("tanhshrink", lambda m, a: _nn(m, "tanhshrink")(a), In(3, 4)),
    Row("silu", lambda m, a: _nn(m, "silu")(a), In(3, 4, lo=-5, hi=5, nc=True)),
    Row("softplus", lambda m, a: _nn(m, "softplus")(a, 2.0, 1.0),
        In(values=[[-3.0, -0.2, 0.3], [0.45, 0.6, 2.0]])),
    Row("log_sigmoid", lambda m, a: (torch._C._nn if m is torch else m).log_sigmoid(a),
        In(3, 4, lo=-30, hi=30)),
    Row("gelu", lambda m, a: _nn(m, "gelu")(a), In(3, 4, lo=-4, hi=4)),
    Row("gelu_tanh", lambda m, a: _nn(m, "gelu")(a, approximate="tanh"), In(3, 4, lo=-4, hi=4)),
    Row("threshold", lambda m, a: _nn(m, "threshold")(a, 0.3, -2.0),
        In(values=[[-1.0, 0.2, 0.4], [0.9, -0.1, 1.5]])),
    Row("threshold_", lambda m, a: _nn_(m, "threshold", a * 1, 0.3, -2.0),
        In(values=[[-1.0, 0.2, 0.4], [0.9, -0.1, 1.5]])),
    Row("glu", lambda m, a: _nn(m, "glu")(a, 0), In(4, 3, nc=True)),
    Row("binary_cross_entropy", lambda m, x, t: _bce(m, x, t),
        In(3, 4, lo=0.05, hi=0.95), In(3, 4, lo=0.0, hi=1.0)),
    Row("binary_cross_entropy_weight_sum", lambda m, x, t, w: _bce(m, x, t, w, 2),
        In(3, 4, lo=0.05, hi=0.95), In(3, 4, lo=0.0, hi=1.0, grad=False), In(4, lo=0.5, hi=2.0),
        torch_ref=False),  # torch: no derivative for the weight
    Row("binary_cross_entropy_none", lambda m, x, t: _bce(m, x, t, None, 0),
        In(3, 4, lo=0.05, hi=0.95, nc=True), In(3, 4, lo=0.0, hi=1.0, grad=False)),
    Row("reciprocal", lambda m, a: a.reciprocal(), In(3, 4, lo=0.3, hi=2.0)),
    Row("abs", lambda m, a: a.abs(), In(3, 4, away=0.05, nc=True)),
    Row("neg", lambda m, a: -a, In(3, 4)),
    Row("positive", lambda m, a: m.positive(a) * (+a), In(3, 4)),
    Row("sign", lambda m, a: a.sign(), In(3, 4, away=0.05)),
    # the complex ops on real inputs (autograd refuses complex tensors for now): sgn is sign,
    # angle is constant, conj and conj_physical the identity
    Row("sgn", lambda m, a: a.sgn(), In(3, 4, away=0.05)),
    Row("angle", lambda m, a: a.angle(), In(3, 4, away=0.05)),
    Row("conj_physical", lambda m, a: m.conj_physical(a), In(3, 4, nc=True)),
    Row("square", lambda m, a: a.square(), In(3, 4)),
    Row("relu", lambda m, a: a.relu(), In(3, 4, away=0.05)),
    Row("floor", lambda m, a: a.floor(), In(3, 4, lo=-2, hi=2)),
    Row("ceil", lambda m, a: a.ceil(), In(3, 4, lo=-2, hi=2)),
    Row("round", lambda m, a: a.round(), In(3, 4, lo=-2, hi=2)),
    Row("trunc", lambda m, a: a.trunc(), In(3, 4, lo=-2, hi=2)),
    # --- in-place variants (the in-place recorder, old self kept where needed) ---
    Row("mul_", lambda m, a, b: a.clone().mul_(b), In(3, 4), In(4)),
    Row("div_", lambda m, a, b: (a * 1).div_(b), In(3, 4), In(3, 4, lo=0.5, hi=2.0)),
    Row("pow_", lambda m, a: a.clone().pow_(3), In(3, 4)),
    Row("exp_", lambda m, a: a.clone().exp_(), In(3, 4)),
    Row("sigmoid_", lambda m, a: a.clone().sigmoid_(), In(3, 4)),
    Row("sqrt_", lambda m, a: (a + 0).sqrt_(), In(3, 4, lo=0.2, hi=2.0)),
    Row("clamp_", lambda m, a: a.clone().clamp_(-0.5, 0.5), In(3, 4)),
    Row("cumsum_", lambda m, a: a.clone().cumsum_(1), In(3, 4)),
    Row("self_mul_", lambda m, a: (a * 1).mul_(a * 1), In(3, 4)),
    Row("exp_into_view", lambda m, a: _write_into_view(a, lambda v: v.exp_()), In(3, 4)),
    Row("mul_into_view", lambda m, a, b: _write_into_view(a, lambda v: v.mul_(b)), In(3, 4),
        In(4)),
    # --- reductions and scans ---
    Row("sum", lambda m, a: a.sum(), In(3, 4, nc=True)),
    Row("sum_dim", lambda m, a: a.sum(1), In(3, 4)),
    Row("sum_dims_keepdim", lambda m, a: a.sum((0, -1), keepdim=True), In(2, 3, 4)),
    Row("sum_0d", lambda m, a: a.sum(), In()),
    Row("mean", lambda m, a: a.mean(), In(3, 4)),
    Row("mean_dim", lambda m, a: m.mean(a, (-1,), keepdim=True), In(3, 4, nc=True)),
    Row("prod", lambda m, a: a.prod(), In(3, 4, lo=0.5, hi=1.5)),
    Row("prod_dim", lambda m, a: a.prod(1), In(3, 4, nc=True)),
    Row("prod_keepdim", lambda m, a: a.prod(0, keepdim=True), In(3, 4)),
    Row("prod_zeros", lambda m, a: a.prod(1), In(values=WITH_ZEROS)),
    Row("prod_all_zeros", lambda m, a: a.prod(), In(values=WITH_ZEROS[:1])),
    Row("prod_0d", lambda m, a: a.prod(), In()),
    Row("max_all", lambda m, a: a.max(), In(3, 4)),
    Row("min_all", lambda m, a: m.min(a), In(3, 4, nc=True)),
    Row("max_dim", lambda m, a: a.max(1), In(3, 4)),
    Row("max_dim_keepdim", lambda m, a: m.max(a, 0, keepdim=True), In(3, 4, nc=True)),
    Row("min_dim", lambda m, a: a.min(-1).values, In(2, 3, 4)),
    Row("amax", lambda m, a: a.amax(), In(3, 4)),
    Row("amax_dims", lambda m, a: a.amax((0, 2), keepdim=True), In(2, 3, 4)),
    Row("amin", lambda m, a: m.amin(a, (1,)), In(3, 4, nc=True)),
    Row("var", lambda m, a: a.var(), In(3, 4)),
    Row("var_dim_correction", lambda m, a: a.var(1, correction=0), In(3, 4, nc=True)),
    Row("var_unbiased_false", lambda m, a: a.var(1, False), In(3, 4)),
    Row("std_unbiased_false", lambda m, a: m.std(a, (0,), False, True), In(3, 4)),
    Row("var_keepdim", lambda m, a: a.var((0,), keepdim=True, correction=2), In(4, 3)),
    Row("std", lambda m, a: a.std(), In(3, 4)),
    Row("std_dim", lambda m, a: a.std(0, keepdim=True), In(3, 4, nc=True)),
    Row("std_correction", lambda m, a: a.std((1,), correction=0), In(3, 4)),
    Row("norm", lambda m, a: a.norm(), In(3, 4)),
    Row("norm_1", lambda m, a: a.norm(1, dim=(1,)), In(3, 4, away=0.05)),
    Row("norm_3", lambda m, a: a.norm(3, dim=(0,), keepdim=True), In(3, 4, nc=True)),
    Row("norm_half", lambda m, a: a.norm(0.5), In(2, 3, away=0.05)),
    Row("norm_inf", lambda m, a: a.norm(float("inf"), dim=(1,)), In(3, 4)),
    Row("logsumexp", lambda m, a: a.logsumexp((1,)), In(3, 4)),
    # reduction, scan and order-statistic composites (_composites/reduction.py)
    Row("nansum", lambda m, a: m.nansum(a, 1), In(3, 4, nc=True)),
    Row("nanmean", lambda m, a: m.nanmean(a, (0, 1), keepdim=True), In(3, 4)),
    Row("var_mean", lambda m, a: m.var_mean(a, 1), In(3, 4, nc=True)),
    Row("std_mean", lambda m, a: m.std_mean(a, correction=0), In(3, 4)),
    Row("aminmax", lambda m, a: m.aminmax(a, dim=0), In(3, 4)),
    Row("dist", lambda m, a, b: m.dist(a, b, 3), In(3, 4), In(4)),
    Row("logcumsumexp", lambda m, a: m.logcumsumexp(a, 1), In(3, 5, nc=True)),
    Row("cummax", lambda m, a: m.cummax(a, 1)[0], In(3, 5)),
    Row("cummin", lambda m, a: a.cummin(0)[0], In(4, 3, nc=True)),
    Row("_cumextreme", lambda m, a: (torch.cummin(a, 1) if m is torch
                                     else m._C._cumextreme(a, 1, False))[0], In(3, 70)),
    Row("median", lambda m, a: m.median(a, 1)[0], In(3, 5)),
    Row("median_all", lambda m, a: a.median(), In(3, 5, nc=True)),
    Row("nanmedian", lambda m, a: m.nanmedian(a, 0)[0], In(4, 3)),
    Row("kthvalue", lambda m, a: m.kthvalue(a, 2, 1)[0], In(3, 5)),
    Row("mode", lambda m, a: m.mode(a.round(), 1)[0], In(3, 6, lo=-2.0, hi=2.0), gg=False),
    Row("diff", lambda m, a, b: m.diff(a, 2, 1, prepend=b), In(3, 4, nc=True), In(3, 1)),
    Row("trapezoid", lambda m, a, x: m.trapezoid(a, x), In(3, 4), In(4)),
    Row("trapz", lambda m, a: m.trapz(a, dx=0.5, dim=0), In(3, 4)),
    Row("cumulative_trapezoid", lambda m, a: m.cumulative_trapezoid(a), In(3, 4, nc=True)),
    Row("renorm", lambda m, a: m.renorm(a, 2, 0, 0.5), In(3, 4)),
    Row("logsumexp_keepdim", lambda m, a: m.logsumexp(a, (0, 1), keepdim=True), In(3, 4, nc=True)),
    Row("softmax", lambda m, a: a.softmax(1), In(3, 4)),
    Row("softmax_nc", lambda m, a: m.softmax(a, 0), In(3, 4, nc=True)),
    Row("log_softmax", lambda m, a: a.log_softmax(-1), In(3, 4)),
    Row("_softmax_backward_data", lambda m, g, y: m._softmax_backward_data(
        g, y.softmax(1), 1, y.dtype) if m is torch else m._softmax_backward_data(
        g, y.softmax(1), 1), In(2, 3, 4), In(2, 3, 4)),
    Row("_log_softmax_backward_data", lambda m, g, y: m._log_softmax_backward_data(
        g, y.log_softmax(0), 0, y.dtype) if m is torch else m._log_softmax_backward_data(
        g, y.log_softmax(0), 0), In(3, 4, nc=True), In(3, 4)),
    Row("cumsum", lambda m, a: a.cumsum(1), In(3, 4, nc=True)),
    Row("cumsum_0d", lambda m, a: a.cumsum(0), In()),
    Row("cumprod", lambda m, a: a.cumprod(0), In(3, 4)),
    Row("cumprod_zeros", lambda m, a: a.cumprod(1), In(values=WITH_ZEROS)),
    Row("sort", lambda m, a: a.sort(), In(3, 4)),
    Row("sort_desc", lambda m, a: m.sort(a, 0, descending=True).values, In(3, 4, nc=True)),
    Row("topk", lambda m, a: a.topk(2), In(3, 4)),
    Row("topk_smallest", lambda m, a: a.topk(2, 0, largest=False).values, In(3, 4, nc=True)),
    # --- linear algebra ---
    Row("matmul_2d", lambda m, a, b: a @ b, In(2, 3), In(3, 4, nc=True)),
    Row("matmul_1d_1d", lambda m, a, b: m.matmul(a, b), In(3), In(3)),
    Row("matmul_2d_1d", lambda m, a, b: a.matmul(b), In(2, 3), In(3)),
    Row("matmul_1d_3d", lambda m, a, b: a @ b, In(3), In(2, 3, 4)),
    Row("matmul_3d_1d", lambda m, a, b: a @ b, In(2, 3, 4, nc=True), In(4)),
    Row("matmul_bcast", lambda m, a, b: a @ b, In(2, 2, 3), In(3, 2)),
    Row("mm", lambda m, a, b: m.mm(a, b), In(2, 3, nc=True), In(3, 4)),
    Row("bmm", lambda m, a, b: a.bmm(b), In(2, 2, 3), In(2, 3, 2, nc=True)),
    Row("addmm", lambda m, c, a, b: m.addmm(c, a, b), In(2, 4), In(2, 3), In(3, 4)),
    Row("addmm_scaled_bcast", lambda m, c, a, b: c.addmm(a, b, beta=0.5, alpha=-2), In(4),
        In(2, 3, nc=True), In(3, 4)),
    Row("dot", lambda m, a, b: m.dot(a, b), In(4), In(4)),
    Row("linear", lambda m, x, w, b: _linear(m)(x, w, b), In(3, 4), In(2, 4), In(2)),
    Row("linear_3d_no_bias", lambda m, x, w: _linear(m)(x, w), In(2, 3, 4, nc=True), In(5, 4)),
    Row("linear_1d_input", lambda m, x, w, b: _linear(m)(x, w, b), In(4), In(3, 4, nc=True),
        In(3)),
    Row("linear_1d_weight", lambda m, x, w, b: _linear(m)(x, w, b), In(2, 3, 4), In(4), In()),
    Row("threshold_backward", lambda m, g, x: _threshold_backward(m)(g, x, 0.25), In(3, 4),
        In(3, 4, away=0.3)),
    Row("gelu_backward", lambda m, g, x: _gelu_backward(m)(g, x), In(3, 4), In(3, 4, lo=-4, hi=4)),
    Row("gelu_backward_tanh", lambda m, g, x: _gelu_backward(m)(g, x, approximate="tanh"),
        In(3, 4), In(3, 4, lo=-4, hi=4, nc=True)),
    # --- fills and copies: zero gradient to the overwritten tensor ---
    Row("fill_", lambda m, a: a * a.clone().fill_(2.0), In(3, 4)),
    Row("zero_", lambda m, a: a + (a * 3).zero_(), In(3, 4)),
    Row("copy_", lambda m, a, b: (a * 2).copy_(b), In(3, 4), In(4)),
    Row("normal_", lambda m, a: a * (a * 1).normal_(generator=_gen(m)), In(3, 4), torch_ref=False),
    Row("uniform_", lambda m, a: a.clone().uniform_(-1, 1, generator=_gen(m)) + a,
        In(3, 4), torch_ref=False),
    Row("bernoulli", lambda m, a: m.bernoulli(a, generator=_gen(m)) * a,
        In(3, 4, lo=0.1, hi=0.9), torch_ref=False),
    Row("bernoulli_p", lambda m, a: a.clone().bernoulli_(0.3, generator=_gen(m)) + a,
        In(3, 4), torch_ref=False),
    Row("bernoulli_tensor", lambda m, a, p: a.clone().bernoulli_(p, generator=_gen(m)) * p,
        In(3, 4), In(4, lo=0.1, hi=0.9), torch_ref=False),
    # --- dtype conversions ---
    Row("to_float32", lambda m, a: (a.to(m.float32) * 2).double(), In(values=QUARTERS), **CAST_TOL),
    Row("float", lambda m, a: a.float().to(m.float64) * 3, In(values=QUARTERS), **CAST_TOL),
    Row("half", lambda m, a: a.half().double() * 3, In(values=QUARTERS), gg=False, **CAST_TOL),
    Row("bfloat16", lambda m, a: a.bfloat16().double() - 1, In(values=QUARTERS), gg=False,
        **CAST_TOL),
    Row("double", lambda m, a: a.double() * a, In(3, 4)),
]

IDS = [r.name for r in ROWS]
assert len(set(IDS)) == len(IDS)


# ----------------------------------------------------------------------------- checks


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_gradcheck(row):
    assert gradcheck(row.ember_fn(), row.build(et), **row.tol)


@pytest.mark.parametrize("row", [r for r in ROWS if r.gg], ids=[r.name for r in ROWS if r.gg])
def test_gradgradcheck(row):
    assert gradgradcheck(row.ember_fn(), row.build(et), **row.tol)


def _diff_outputs(outs):
    outs = outs if isinstance(outs, tuple) else (outs,)
    return [o for o in outs if o.requires_grad]


TORCH_ROWS = [r for r in ROWS if r.torch_ref]


@pytest.mark.parametrize("row", TORCH_ROWS, ids=[r.name for r in TORCH_ROWS])
def test_against_torch(row):
    e_in, t_in = row.build(et), row.build(torch)
    e_out, t_out = _diff_outputs(row.fn(et, *e_in)), _diff_outputs(row.fn(torch, *t_in))
    assert len(e_out) == len(t_out)
    rng = np.random.default_rng(7)
    gos = [rng.uniform(-1, 1, size=tuple(o.shape)) for o in t_out]
    for e, t in zip(e_out, t_out):
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(e.detach().double().numpy(), t.detach().double().numpy(),
                                   rtol=1e-6, atol=1e-7)
    e_wrt = [x for x in e_in if isinstance(x, et.Tensor) and x.requires_grad]
    t_wrt = [x for x in t_in if isinstance(x, torch.Tensor) and x.requires_grad]
    e_g = ea.grad(e_out, e_wrt, [et.from_numpy(g).to(o.dtype) for g, o in zip(gos, e_out)],
                  allow_unused=True)
    t_g = torch.autograd.grad(t_out, t_wrt, [torch.from_numpy(g).to(o.dtype)
                                             for g, o in zip(gos, t_out)], allow_unused=True)
    for i, (eg, tg) in enumerate(zip(e_g, t_g)):
        if tg is None:
            assert eg is None or not eg.numpy().any(), f"input {i}: torch has no gradient"
            continue
        assert eg is not None, f"input {i}: no gradient"
        assert eg.dtype == e_wrt[i].dtype and tuple(eg.shape) == tuple(tg.shape)
        np.testing.assert_allclose(eg.numpy(), tg.numpy(force=True), rtol=1e-6, atol=1e-9,
                                   err_msg=f"gradient of input {i}")


def _forward_ad_available() -> bool:
    return all(hasattr(ea.forward_ad, n) for n in ("dual_level", "make_dual", "unpack_dual"))


FWD_ROWS = [r for r in ROWS if r.fwd]


@pytest.mark.parametrize("row", FWD_ROWS, ids=[r.name for r in FWD_ROWS])
def test_forward_ad_gradcheck(row):
    if not _forward_ad_available():
        pytest.skip("ember_autograd.forward_ad is not implemented yet")
    assert gradcheck(row.ember_fn(), row.build(et), check_forward_ad=True,
                     check_backward_ad=False, **row.tol)


# ----------------------------------------------------------------------------- specific cases


def test_grad_dtypes_follow_inputs():
    """Gradients come back in each input's dtype (float32 input, float64 reduction)."""
    x32 = et.from_numpy(np.linspace(-1, 1, 6).reshape(2, 3)).float().requires_grad_()
    (g,) = ea.grad(x32.sum(1, dtype=et.float64).sum(), x32)
    assert g.dtype == et.float32
    np.testing.assert_array_equal(g.numpy(), np.ones((2, 3), dtype=np.float32))
    y = et.from_numpy(np.linspace(0.1, 1, 6)).requires_grad_()
    (g,) = ea.grad(y.softmax(0, dtype=et.float32)[0], y)
    ty = torch.from_numpy(np.linspace(0.1, 1, 6)).requires_grad_()
    (tg,) = torch.autograd.grad(ty.softmax(0, dtype=torch.float32)[0], ty)
    assert g.dtype == et.float64
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-6)


def test_max_ties_share_gradient_like_torch():
    """max()/amax split the gradient evenly between ties; max(dim) gives it to one index."""
    vals = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.5]])
    for f in (lambda t: t.max(), lambda t: t.amax(1), lambda t: t.amin(0), lambda t: t.min(),
              lambda t: t.max(1).values, lambda t: t.norm(float("inf"), dim=(1,))):
        e = et.from_numpy(vals.copy()).requires_grad_()
        t = torch.from_numpy(vals.copy()).requires_grad_()
        (eg,) = ea.grad(f(e).sum(), e)
        (tg,) = torch.autograd.grad(f(t).sum(), t)
        np.testing.assert_allclose(eg.numpy(), tg.numpy())


def test_maximum_ties_split_in_half():
    a = et.tensor([1.0, 2.0, 3.0], dtype=et.float64, requires_grad=True)
    b = et.tensor([1.0, 5.0, 3.0], dtype=et.float64, requires_grad=True)
    ga, gb = ea.grad(et.maximum(a, b).sum(), (a, b))
    np.testing.assert_array_equal(ga.numpy(), [0.5, 0.0, 0.5])
    np.testing.assert_array_equal(gb.numpy(), [0.5, 1.0, 0.5])


def test_pow_edge_cases_match_torch():
    """0 ** exponent and exponent 0: zero gradients where PyTorch gives them."""
    base = np.array([0.0, 0.0, 2.0, -1.5])
    expo = np.array([2.0, 0.0, 0.0, 3.0])
    e_b, e_e = (et.from_numpy(v.copy()).requires_grad_() for v in (base, expo))
    t_b, t_e = (torch.from_numpy(v.copy()).requires_grad_() for v in (base, expo))
    eg = ea.grad((e_b ** e_e).sum(), (e_b, e_e))
    tg = torch.autograd.grad((t_b ** t_e).sum(), (t_b, t_e))
    for a, b in zip(eg, tg):
        np.testing.assert_allclose(a.numpy(), b.numpy(), equal_nan=True)
    x = et.from_numpy(np.array([-1.0, 0.0, 2.0])).requires_grad_()
    tx = torch.from_numpy(np.array([-1.0, 0.0, 2.0])).requires_grad_()
    (g,) = ea.grad(et.pow(0.0, x).sum(), x)
    (tg0,) = torch.autograd.grad(torch.pow(0.0, tx).sum(), tx)
    np.testing.assert_allclose(g.numpy(), tg0.numpy(), equal_nan=True)


def test_piecewise_constant_ops_have_zero_grad():
    x = et.from_numpy(np.array([-1.3, 0.2, 2.7])).requires_grad_()
    for f in (et.floor, et.ceil, et.round, et.trunc, et.sign,
              lambda t: et.floor_divide(t, 0.7), lambda t: t.div(2.0, rounding_mode="floor")):
        y = f(x)
        assert y.requires_grad
        (g,) = ea.grad(y.sum(), x)
        np.testing.assert_array_equal(g.numpy(), np.zeros(3))


def test_integer_casts_are_not_differentiable():
    x = et.from_numpy(np.array([1.5, -2.5])).requires_grad_()
    for f in (lambda t: t.int(), lambda t: t.long(), lambda t: t.bool(), lambda t: t.to(et.int64)):
        assert not f(x).requires_grad


def test_clamp_gradient_matches_torch_at_bounds():
    vals = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    e = et.from_numpy(vals.copy()).requires_grad_()
    t = torch.from_numpy(vals.copy()).requires_grad_()
    (eg,) = ea.grad(e.clamp(-0.5, 0.5).sum(), e)
    (tg,) = torch.autograd.grad(t.clamp(-0.5, 0.5).sum(), t)
    np.testing.assert_array_equal(eg.numpy(), tg.numpy())
