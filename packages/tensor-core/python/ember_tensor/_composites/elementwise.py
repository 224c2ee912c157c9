"""Elementwise composites: ops written once in terms of other ops (``composite: python`` in
ops.yaml). Autograd records the ops they call; they run on every device those ops run on.

Precision: float16 and bfloat16 are computed in float32 and rounded once; float32 and
float64 results are within 2 ulp of the exact values (checked against NumPy in float64 by
the tests), with the IEEE special cases (signed zeros, infinities, NaN) exact.
"""

from __future__ import annotations

import math

import ember_tensor as _et

__all__ = [
    "atan2",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "copysign",
    "deg2rad",
    "frac",
    "hypot",
    "isneginf",
    "isposinf",
    "isreal",
    "logaddexp",
    "logaddexp2",
    "logit",
    "mvlgamma",
    "positive",
    "rad2deg",
    "sinc",
    "xlogy",
]

_LN2 = math.log(2.0)
_HALVES = frozenset({_et.float16, _et.bfloat16})


def _compute_dtype(op, self, other):
    """(the floating dtype the op's result has, the dtype its formula runs in): PyTorch's
    promotion of the operands, integers and bool giving the default float dtype; float16 and
    bfloat16 run in float32. TypeError for an operand that is not a tensor, RuntimeError
    naming ``op`` for shapes that do not broadcast (PyTorch's messages)."""
    for position, (name, value) in enumerate((("input", self), ("other", other)), start=1):
        if not isinstance(value, _et.Tensor):
            raise TypeError(
                f"{op}(): argument '{name}' (position {position}) must be Tensor, "
                f"not {type(value).__name__}"
            )
    try:
        _et.broadcast_shapes(self.shape, other.shape)
    except RuntimeError:
        raise RuntimeError(
            f"{op}: shapes {list(self.shape)} and {list(other.shape)} cannot be broadcast "
            "together"
        ) from None
    dt = _et.result_type(self, other)
    if not dt.is_floating_point:
        dt = _et.get_default_dtype()
    return dt, (_et.float32 if dt in _HALVES else dt)


def _const(value, dtype):
    return _et.full((), value, dtype=dtype)


def atan2(self, other):
    """Angle of the point (other, self) in radians, in [-pi, pi]; integer inputs give the
    default float dtype. IEEE special cases for signed zeros and infinities.

    Computed as atan(self / other), plus +-pi (the sign of self) where other is negative or
    -0, after replacing 0/0 and inf/inf by the signs they stand for."""
    dt, cdt = _compute_dtype("atan2", self, other)
    y, x = self.to(cdt), other.to(cdt)
    one, neg_one = _const(1.0, cdt), _const(-1.0, cdt)
    # the sign of y and x, zeros included (1/-0 == -inf); NaN makes the result NaN anyway
    y_neg = _et.logical_or(_et.lt(y, 0), _et.lt(_et.reciprocal(y), 0))
    x_neg = _et.logical_or(_et.lt(x, 0), _et.lt(_et.reciprocal(x), 0))
    both_zero = _et.logical_and(_et.eq(y, 0), _et.eq(x, 0))
    both_inf = _et.logical_and(_et.isinf(y), _et.isinf(x))
    x_sign = _et.where(x_neg, neg_one, one)
    # 0/0 -> (+-0)/(+-1); inf/inf -> (+-1)/(+-1)
    x = _et.where(_et.logical_or(both_zero, both_inf), x_sign, x)
    y = _et.where(both_inf, _et.where(y_neg, neg_one, one), y)
    r = _et.atan(_et.div(y, x))
    pi = _et.where(y_neg, _const(-math.pi, cdt), _const(math.pi, cdt))
    return _et.where(x_neg, _et.add(r, pi), r).to(dt)


def hypot(self, other):
    """sqrt(self**2 + other**2) without undue overflow or underflow; +inf where either is
    infinite (even with NaN).

    float16, bfloat16 and float32 are computed in float64 (no overflow is possible there);
    float64 as m * sqrt(1 + (n/m)**2) with m = max(|self|, |other|), n the min."""
    dt, _ = _compute_dtype("hypot", self, other)
    if dt == _et.float64:
        a, b = _et.abs(self.to(dt)), _et.abs(other.to(dt))
        m, n = _et.maximum(a, b), _et.minimum(a, b)
        q = _et.div(n, m)
        r = _et.mul(m, _et.sqrt(_et.add(_et.mul(q, q), 1)))
        r = _et.where(_et.eq(m, 0), _const(0.0, dt), r)
    else:
        a, b = self.to(_et.float64), other.to(_et.float64)
        r = _et.sqrt(_et.add(_et.mul(a, a), _et.mul(b, b))).to(dt)
    inf = _et.logical_or(_et.isinf(self), _et.isinf(other))
    return _et.where(inf, _const(math.inf, dt), r)


def logaddexp(self, other):
    """log(exp(self) + exp(other)) without overflow: max + log1p(exp(-|self - other|)), or
    self + log(2) where self == other (NumPy's algorithm); +inf if either is +inf."""
    dt, cdt = _compute_dtype("logaddexp", self, other)
    y, x = self.to(cdt), other.to(cdt)
    m = _et.maximum(y, x)
    d = _et.abs(_et.sub(y, x))
    r = _et.add(m, _et.log1p(_et.exp(_et.neg(d))))
    return _et.where(_et.eq(y, x), _et.add(y, _const(_LN2, cdt)), r).to(dt)


def copysign(self, other):
    """|self| with the sign bit of other: signed zeros and NaNs included (the result's sign
    bit is other's even where self is NaN); integer and bool inputs give the default float
    dtype; other may be a Python number.

    Computed as self where the sign bits agree and -self where they differ. The gradient is
    PyTorch's: +-grad for self (0 where self is 0), none for other."""
    if isinstance(other, (bool, int, float)) and isinstance(self, _et.Tensor):
        dt = _et.result_type(self, other)
        if not dt.is_floating_point:
            dt = _et.get_default_dtype()
        other = _const(float(other), dt)
    dt, _ = _compute_dtype("copysign", self, other)
    x, s = self.to(dt), other.to(dt)
    sign = _et.signbit(s)
    r = _et.where(_et.ne(_et.signbit(x), sign), _et.neg(x), x)
    # at 0 the result is a constant +-0 with no gradient, as in PyTorch
    zero = _et.where(sign, _const(-0.0, dt), _const(0.0, dt))
    return _et.where(_et.eq(x, 0), zero, r)


# ----------------------------------------------------------------------------- integers

_BITS = {_et.int8: 8, _et.uint8: 8, _et.int16: 16, _et.uint16: 16, _et.int32: 32,
         _et.uint32: 32, _et.int64: 64, _et.uint64: 64}


def _shift_operands(op, self, other):
    """(result dtype, self and other in int64): PyTorch's promotion, both operands first
    cast to the result dtype as PyTorch's kernels read them; integer dtypes only (uint64
    travels as its bits)."""
    if not isinstance(self, _et.Tensor):
        if not (isinstance(other, _et.Tensor) and isinstance(self, (int, float))):
            raise TypeError(f"bitwise_{op}_shift(): argument 'input' (position 1) must be "
                            f"Tensor, not {type(self).__name__}")
        # a number first (PyTorch's Scalar-self overload): a weak operand, read in the dtype
        # the two promote to
        dt = _et.result_type(self, other)
        if dt not in _BITS:
            raise NotImplementedError(
                f'"{op[0]}shift_cpu" not implemented for \'{dt._scalar_type_name}\'')
        if isinstance(self, int):  # its low 64 bits in dt, wrapping as PyTorch's scalar does
            v = self & (2**64 - 1)
            self = _et.tensor(v - 2**64 if v >= 2**63 else v, dtype=_et.int64,
                              device=other.device).to(dt)
        else:
            self = _et.full((), self, dtype=dt, device=other.device)
    if isinstance(other, int) and not isinstance(other, bool):
        if not -(2**63) <= other < 2**64:
            raise OverflowError("int too big to convert")
        # a Python int is read in self's dtype, as PyTorch's kernels read it: its low 64 bits
        v = other & (2**64 - 1)
        scalar_dtype = _et.int64 if self.dtype == _et.bool else self.dtype  # bool << 1: int64
        other = _et.tensor(v - 2**64 if v >= 2**63 else v, dtype=_et.int64).to(scalar_dtype)
    elif not isinstance(other, _et.Tensor):
        other = _et.tensor(other)
    dt = _et.result_type(self, other)
    if dt not in _BITS:
        raise NotImplementedError(
            f'"{op[0]}shift_cpu" not implemented for \'{dt._scalar_type_name}\'')
    return dt, self.to(dt).to(_et.int64), other.to(dt).to(_et.int64)


def bitwise_left_shift(self, other):
    """self << other: self * 2**other in int64 (which wraps), then the result dtype's low
    bits; a shift by the bit width or more, or by a negative amount, gives 0."""
    dt, a, b = _shift_operands("left", self, other)
    r = _et.mul(a, _et.pow(2, _et.clamp(b, 0, 63)))
    r = _et.where(_et.logical_or(_et.lt(b, 0), _et.ge(b, _BITS[dt])), _const(0, _et.int64), r)
    return r.to(dt)


def bitwise_right_shift(self, other):
    """self >> other, arithmetic: floor division by 2**other in int64 (uint64: a logical
    shift of its bits); a shift by the bit width or more, or by a negative amount, gives the
    sign fill (0 or -1)."""
    dt, a, b = _shift_operands("right", self, other)
    if dt == _et.uint64:
        return _uint64_right_shift(a, b).to(dt)
    r = _et.floor_divide(a, _et.pow(2, _et.clamp(b, 0, 62)))
    fill = _et.where(_et.lt(a, 0), _const(-1, _et.int64), _const(0, _et.int64))
    return _et.where(_et.logical_or(_et.lt(b, 0), _et.gt(b, 62)), fill, r).to(dt)


def _uint64_right_shift(a64, b64):
    """The logical right shift of uint64 bits held in int64 (a64) by b64: the low 63 bits
    shifted, plus the top bit moved to bit 63 - b; 0 for shifts outside [0, 63]."""
    i64 = _et.int64
    top = _et.lt(a64, 0)
    low = _et.bitwise_and(a64, _const(2**63 - 1, i64))
    r = _et.floor_divide(low, _et.pow(2, _et.clamp(b64, 0, 62)))
    r = _et.where(_et.ge(b64, 63), _const(0, i64), r)
    hibit = _et.pow(2, _et.clamp(_et.sub(_const(63, i64), b64), 0, 62))
    r = _et.add(r, _et.where(top, hibit, _const(0, i64)))
    r = _et.where(_et.eq(b64, 0), a64, r)
    return _et.where(_et.logical_or(_et.lt(b64, 0), _et.gt(b64, 63)), _const(0, i64), r)


def positive(self):
    """+self: self itself, as PyTorch (which refuses bool tensors; so does the dtype check)."""
    if not isinstance(self, _et.Tensor):
        raise TypeError("positive(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(self).__name__}")
    return self


# ----------------------------------------------------------------------------- more functions


def _float_of(op: str, self):
    """(self in the dtype the formula runs in, the result dtype): integers and bool give the
    default float dtype; float16 and bfloat16 run in float32 (rounded once at the end)."""
    if not isinstance(self, _et.Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(self).__name__}")
    dt = self.dtype if self.is_floating_point() or self.is_complex() else \
        _et.get_default_dtype()
    return self.to(_et.float32 if dt in _HALVES else dt), dt


def deg2rad(self):
    """self (degrees) in radians; integers and bool give the default float dtype."""
    x, dt = _float_of("deg2rad", self)
    return _et.mul(x, math.pi / 180.0).to(dt)


def rad2deg(self):
    """self (radians) in degrees; integers and bool give the default float dtype."""
    x, dt = _float_of("rad2deg", self)
    return _et.mul(x, 180.0 / math.pi).to(dt)


def logaddexp2(self, other):
    """log2(2**self + 2**other) without overflow: max + log2(1 + 2**-|self - other|), or
    self + 1 where self == other (infinities included)."""
    dt, cdt = _compute_dtype("logaddexp2", self, other)
    y, x = self.to(cdt), other.to(cdt)
    m = _et.maximum(y, x)
    d = _et.abs(_et.sub(y, x))
    r = _et.add(m, _et.div(_et.log1p(_et.exp2(_et.neg(d))), _LN2))
    return _et.where(_et.eq(y, x), _et.add(y, 1.0), r).to(dt)


def frac(self):
    """The fractional part, self - trunc(self), with self's sign."""
    return _et.sub(self, _et.trunc(self))


def mvlgamma(self, p):
    """The multivariate log-gamma function of dimension p (>= 1): log(pi) p (p - 1) / 4 plus
    the sum over j < p of lgamma(self - j / 2) (inf at the poles: like PyTorch 2.13, no
    domain check). RuntimeError for p < 1; integers and bool give the default float dtype."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if self.dtype == _et.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    # the arguments self - j/2 in the result dtype, as PyTorch's (float16 / bfloat16 too)
    _, dt = _float_of("mvlgamma", self)
    x = self.to(dt)
    halves = _et.mul(_et.arange(p, dtype=dt, device=x.device), 0.5)
    terms = _et.lgamma(_et.sub(x.unsqueeze(-1), halves)).sum(-1)
    return _et.add(terms, p * (p - 1) / 4 * math.log(math.pi))


def _xlog(op: str, self, other, log):
    like = self if isinstance(self, _et.Tensor) else other
    dt = _et.result_type(self, other)  # a Python number is weak, as in PyTorch
    if not dt.is_floating_point:
        dt = _et.get_default_dtype()
    cdt = _et.float32 if dt in _HALVES else dt
    # the operands rounded to the result dtype first, then computed in cdt
    # (a number is rounded as PyTorch's wrapped operand is: beyond the dtype's range, inf)
    x = self.to(dt) if isinstance(self, _et.Tensor) else _et.full(
        (), self, dtype=_et.float64, device=like.device).to(dt)
    y = other.to(dt) if isinstance(other, _et.Tensor) else _et.full(
        (), other, dtype=_et.float64, device=like.device).to(dt)
    x, y = x.to(cdt), y.to(cdt)
    r = _et.mul(x, log(y))
    zero = _et.logical_and(_et.eq(x, 0), _et.logical_not(_et.isnan(y)))
    return _et.where(zero, _const(0.0, cdt), r).to(dt)


def xlogy(self, other):
    """self * log(other), 0 where self is 0 (unless other is NaN); either may be a number;
    integers and bool give the default float dtype."""
    return _xlog("xlogy", self, other, _et.log)


def sinc(self):
    """sin(pi x) / (pi x), 1 at 0 (with gradient 0 there); integers and bool give the default
    float dtype."""
    x, dt = _float_of("sinc", self)
    zero = _et.eq(x, 0)
    px = _et.mul(_et.where(zero, _const(1.0, x.dtype), x), math.pi)
    return _et.where(zero, _const(1.0, x.dtype), _et.div(_et.sin(px), px)).to(dt)


def logit(self, eps=None):
    """log(self / (1 - self)), self first clamped to [eps, 1 - eps] when eps is given;
    integers and bool give the default float dtype."""
    x, dt = _float_of("logit", self)
    if eps is not None:  # PyTorch's order: below eps first (it matters when eps > 0.5)
        lo = _const(eps, dt).to(x.dtype)  # the bounds in the input's dtype, as PyTorch's
        hi = _const(1.0 - eps, dt).to(x.dtype)
        x = _et.where(_et.lt(x, lo), lo, _et.where(_et.gt(x, hi), hi, x))
    return _et.log(_et.div(x, 1.0 - x)).to(dt)


def _inf_test(op: str, self, positive: bool):
    if self.is_complex():
        raise RuntimeError(f"{op} does not support complex inputs.")
    if not self.is_floating_point():
        return _et.zeros(self.shape, dtype=_et.bool, device=self.device)
    return _et.eq(self, math.inf if positive else -math.inf)


def isposinf(self):
    """Where self is +inf (bool); complex inputs are refused."""
    return _inf_test("isposinf", self, True)


def isneginf(self):
    """Where self is -inf (bool); complex inputs are refused."""
    return _inf_test("isneginf", self, False)


def _bool_out_only(op):
    def check_out(out, result, inplace):
        if out.dtype != _et.bool:
            raise RuntimeError(f"{op} does not support non-boolean outputs.")
    return check_out


isposinf.check_out = _bool_out_only("isposinf")
isneginf.check_out = _bool_out_only("isneginf")


def isreal(self):
    """Where self's imaginary part is 0 (bool; true everywhere for real dtypes)."""
    if self.is_complex():
        return _et.eq(self.imag, 0)
    return _et.ones(self.shape, dtype=_et.bool, device=self.device)
