"""Arithmetic composites (``composite: python`` in ops.yaml): fused multiply-adds,
interpolation, clamps, NaN-aware maxima and replacements, written once with other ops, with
PyTorch's promotion, defaults and errors. Autograd records the ops they call; they run on
every device those ops run on."""

from __future__ import annotations

import ember_tensor as _et

from . import _check_scalar, _opmath, _result_type
from . import _dtype_name as _name

__all__ = [
    "addcdiv",
    "addcmul",
    "clamp_max",
    "clamp_min",
    "float_power",
    "fmax",
    "fmin",
    "frexp",
    "gcd",
    "heaviside",
    "lcm",
    "ldexp",
    "lerp",
    "nan_to_num",
    "nextafter",
    "rsub",
]

# the largest finite value of each floating dtype (nan_to_num's defaults for +-inf)
_FLOAT_MAX = {
    _et.float16: 65504.0,
    _et.bfloat16: 3.3895313892515355e38,
    _et.float32: 3.4028234663852886e38,
    _et.float64: 1.7976931348623157e308,
}


def _tensor(x, like):
    """x as a tensor on like's device: a Python number becomes a 0-d tensor of the dtype it
    promotes like to (a weak scalar, as in PyTorch: int16 - 2 stays int16)."""
    if isinstance(x, _et.Tensor):
        return x
    return _et.full((), x, dtype=_et.result_type(like, x), device=like.device)


def addcmul(self, tensor1, tensor2, *, value=1):
    """self + value * tensor1 * tensor2 (broadcast, promoted); for integer results value is
    truncated to an int, as PyTorch does."""
    dt = _result_type([self, tensor1, tensor2])
    _check_scalar(dt, value)
    if not (dt.is_floating_point or dt.is_complex):
        value = int(value)
    work = _opmath(dt)
    # each operand rounded to the result dtype first (an int64 beyond float16 is inf there)
    self, tensor1, tensor2 = (t.to(dt).to(work) for t in (self, tensor1, tensor2))
    # PyTorch's order of operations: (value * tensor1) * tensor2
    scaled = tensor1 if value == 1 else _et.mul(tensor1, value)
    return _et.add(self, _et.mul(scaled, tensor2)).to(dt)


def addcdiv(self, tensor1, tensor2, *, value=1):
    """self + value * tensor1 / tensor2 (true division; broadcast, promoted). Two integer
    operands are PyTorch's error."""
    if not (tensor1.is_floating_point() or tensor1.is_complex()
            or tensor2.is_floating_point() or tensor2.is_complex()):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    dt = _result_type([self, tensor1, tensor2])
    _check_scalar(dt, value)
    work = _opmath(dt)
    # each operand rounded to the result dtype first (an int64 beyond float16 is inf there)
    self, tensor1, tensor2 = (t.to(dt).to(work) for t in (self, tensor1, tensor2))
    # PyTorch's order of operations: (value * tensor1) / tensor2
    scaled = tensor1 if value == 1 else _et.mul(tensor1, value)
    return _et.add(self, _et.div(scaled, tensor2)).to(dt)


def lerp(self, end, weight):
    """self + weight * (end - self), computed as end - (end - self) * (1 - weight) where
    |weight| >= 0.5 (exact at weight 1). end, and a weight tensor with dimensions, must have
    self's dtype; a 0-d weight takes part in type promotion (PyTorch's rules: an int32 self
    with a float64 0-d weight gives float64). RuntimeError for a result that is not floating
    point or complex."""
    promoted = isinstance(weight, _et.Tensor) and weight.dim() == 0
    for arg, t in (("end", end), ("weight", weight)):
        if isinstance(t, _et.Tensor) and t.dtype != self.dtype and not (
                arg == "weight" and promoted):
            raise RuntimeError(f"expected dtype {_name(self.dtype)} for `{arg}` but got dtype "
                               f"{_name(t.dtype)}")
    dt = _et.result_type(self, weight) if promoted else self.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"lerp: dtype {_name(dt)} is not supported (supported: float16, "
                           "bfloat16, float32, float64, complex64, complex128)")
    if dt != self.dtype:
        self, end = self.to(dt), end.to(dt)
    if dt in (_et.float16, _et.bfloat16):  # in float64 (exact, as PyTorch's fused multiply-
        self, end = self.to(_et.float64), end.to(_et.float64)  # add in float32), rounded once
        weight = weight.to(_et.float64) if isinstance(weight, _et.Tensor) else weight
    diff = _et.sub(end, self)
    if not isinstance(weight, _et.Tensor):
        if abs(weight) < 0.5:
            return _et.add(self, _et.mul(diff, weight)).to(dt)
        return _et.sub(end, _et.mul(diff, 1 - weight)).to(dt)
    low = _et.add(self, _et.mul(weight, diff))
    high = _et.sub(end, _et.mul(diff, 1 - weight))
    return _et.where(_et.lt(_et.abs(weight), 0.5), low, high).to(dt)


def rsub(self, other, *, alpha=1):
    """other - alpha * self (sub with the operands swapped)."""
    if isinstance(other, bool):  # a bool, even a Python one, is sub's error (not a 0 or 1)
        other = _et.tensor(other, device=self.device)
    return _et.sub(_tensor(other, self), self, alpha=alpha)


def _clamp_bound(self, bound, low: bool):
    dt = _et.result_type(self, bound)
    if dt == _et.bool:  # bool bounds on bool: or (a lower bound) and and (an upper one)
        b = _tensor(bound, self)
        return _et.logical_or(self, b) if low else _et.logical_and(self, b)
    x = self.to(dt) if self.dtype == _et.bool else self
    return _et.clamp(x, min=bound) if low else _et.clamp(x, max=bound)


def clamp_min(self, min):
    """self with every element below min raised to it (min a number or a tensor); the result
    dtype is their promoted one."""
    return _clamp_bound(self, min, True)


def clamp_max(self, max):
    """self with every element above max lowered to it (max a number or a tensor); the result
    dtype is their promoted one."""
    return _clamp_bound(self, max, False)


def _nan_aware(op: str, self, other, pick):
    if self.is_complex() or other.is_complex():
        raise RuntimeError(f"{op} not implemented for complex tensors.")
    dt = _et.result_type(self, other)
    x, y = self.to(dt), other.to(dt)
    r = pick(x, y)
    if dt.is_floating_point:  # a NaN loses to a number; two NaNs give NaN
        r = _et.where(_et.isnan(x), y, _et.where(_et.isnan(y), x, r))
    return r


def fmax(self, other):
    """The elementwise maximum, ignoring NaN (NaN only where both are NaN)."""
    return _nan_aware("fmax", self, other, _et.maximum)


def fmin(self, other):
    """The elementwise minimum, ignoring NaN (NaN only where both are NaN)."""
    return _nan_aware("fmin", self, other, _et.minimum)


def float_power(self, exponent):
    """self ** exponent computed in float64 (complex128 if either is complex)."""
    like = self if isinstance(self, _et.Tensor) else exponent
    cplx = any(isinstance(v, complex) or (isinstance(v, _et.Tensor) and v.is_complex())
               for v in (self, exponent))
    dt = _et.complex128 if cplx else _et.float64
    # a Python number is made a tensor of dt itself: through like's dtype an unsigned
    # tensor would wrap a negative exponent
    def wide(v):
        if isinstance(v, _et.Tensor):
            return v.to(dt)
        return _et.full((), v, dtype=dt, device=like.device)

    return _et.pow(wide(self), wide(exponent))


def _float_power_check_out(out, result, inplace):
    if out.dtype != result.dtype:  # PyTorch's rule: exactly the computing dtype
        what, op = ("base", "float_power_") if inplace else ("output", "float_power")
        raise RuntimeError(f"the {what} given to {op} has dtype {out.dtype._scalar_type_name} "
                           f"but the operation's result requires dtype "
                           f"{result.dtype._scalar_type_name}")


float_power.check_out = _float_power_check_out


def heaviside(self, values):
    """The Heaviside step: 0 where self < 0, values where self == 0, 1 where self > 0; self
    and values must have the same dtype."""
    if self.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    step = _et.gt(self, 0).to(self.dtype)
    return _et.where(_et.eq(self, 0), values, step)


def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
    """self with NaN replaced by nan, +inf by posinf and -inf by neginf (default: the dtype's
    largest and lowest finite values); complex: each part; integers and bool unchanged."""
    for name, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is not None and not isinstance(v, (int, float, _et.Tensor)):  # ("inf" is no float)
            raise TypeError(f"nan_to_num(): argument '{name}' must be float, not "
                            f"{type(v).__name__}")
    if self.is_complex():
        real = nan_to_num(self.real, nan, posinf, neginf)
        return _et.complex(real, nan_to_num(self.imag, nan, posinf, neginf))
    if not self.is_floating_point():
        return self.clone()
    big = _FLOAT_MAX[self.dtype]

    def value(v):  # rounded to self's dtype as PyTorch casts it: beyond its range, inf
        return _et.full((), float(v), dtype=_et.float64, device=self.device).to(self.dtype)

    pos = value(big if posinf is None else posinf)
    neg = value(-big if neginf is None else neginf)
    nan_t = value(0.0 if nan is None else nan)
    r = _et.where(_et.isinf(self), _et.where(_et.gt(self, 0), pos, neg), self)
    return _et.where(_et.isnan(self), nan_t, r)


def _integer_pair(op: str, self, other):
    dt = _et.result_type(self, other)
    if dt.is_floating_point or dt.is_complex or dt == _et.bool:
        raise NotImplementedError(f'"{op}_cpu" not implemented for \'{dt._scalar_type_name}\'')
    a, b = self.to(dt), other.to(dt)  # (ops.yaml: two tensors)
    shape = _et.broadcast_shapes(a.shape, b.shape)
    return a.expand(shape), b.expand(shape)


def _euclid(a, b):
    """The greatest common divisors of a and b (integer tensors of one shape): PyTorch's
    loop, |a| and |b| then Euclid's with C's truncating remainder (so that the one
    unrepresentable |x|, of the type's minimum, gives what PyTorch's gives)."""
    a, b = _et.abs(a), _et.abs(b)
    while bool(_et.ne(a, 0).any()):
        nonzero = _et.ne(a, 0)
        safe = _et.where(nonzero, a, _et.ones_like(a))
        a, b = _et.where(nonzero, _et.fmod(b, safe), a), _et.where(nonzero, a, b)
    return b


def gcd(self, other):
    """The greatest common divisor of each pair of integers (>= 0; gcd(0, 0) = 0)."""
    a, b = _integer_pair("gcd", self, other)
    return _euclid(a, b)


def lcm(self, other):
    """The least common multiple of each pair of integers (>= 0; 0 if either is 0)."""
    a, b = _integer_pair("lcm", self, other)
    g = _euclid(a, b)
    safe = _et.where(_et.eq(g, 0), _et.ones_like(g), g)
    # |a / g * b| as PyTorch's C++ computes it: in int (int32) for the narrower types, with
    # its wrap-around, then converted back
    wide = _et.int64 if a.dtype == _et.int64 else _et.int32
    product = _et.mul(_et.div(a, safe, rounding_mode="trunc").to(wide), b.to(wide))
    return _et.abs(product).to(a.dtype)


def ldexp(self, other):
    """self * 2 ** other (integers give the default float dtype)."""
    dt = _et.result_type(self, other)
    if not (dt.is_floating_point or dt.is_complex):
        dt = _et.get_default_dtype()
    if other.is_floating_point():  # as PyTorch: 2 ** other rounded to other's dtype first
        return _et.mul(self.to(dt), _et.pow(2.0, other).to(dt))
    if other.is_complex():
        return _et.mul(self.to(dt), _et.pow(2.0, other.to(dt)))
    # an integer exponent scales exactly, as C's ldexp: in double, by three powers of two of at
    # most 2**1000 each (2 ** n alone overflows for n > 1023: ldexp(1e-300, 2000) is finite,
    # ldexp(0, 2**31) is 0, not 0 * inf); beyond +-3000 every result is 0 or inf anyway
    n = _et.clamp(other.to(_et.int64), -3000, 3000)
    third = _et.floor_divide(n, 3)
    wide = _et.complex128 if dt.is_complex else _et.float64
    step = _et.pow(2.0, third.to(_et.float64))
    rest = _et.pow(2.0, _et.sub(n, _et.mul(third, 2)).to(_et.float64))
    return _et.mul(_et.mul(_et.mul(self.to(wide), step), step), rest).to(dt)


def frexp(self):
    """(mantissa, exponent) with self = mantissa * 2 ** exponent, |mantissa| in [0.5, 1)
    (0, inf and NaN keep themselves with exponent 0); exponent is int32. Floating inputs
    only (PyTorch's RuntimeError otherwise)."""
    if not self.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = self.to(_et.float64)
    a = _et.abs(x)
    regular = _et.logical_and(_et.isfinite(a), _et.ne(a, 0))
    safe = _et.where(regular, a, _et.ones_like(a))
    e = _et.add(_et.floor(_et.log2(safe)), 1)
    m = _et.mul(safe, _et.pow(2.0, _et.neg(e)))
    # log2 may round across a power of two: bring m into [0.5, 1)
    high = _et.ge(m, 1)
    e = _et.where(high, _et.add(e, 1), e)
    low = _et.lt(m, 0.5)
    e = _et.where(low, _et.sub(e, 1), e)
    e = _et.where(regular, e, _et.zeros_like(e))
    mantissa = _et.where(regular, _et.mul(x, _et.pow(2.0, _et.neg(e))), x)
    return mantissa.to(self.dtype), e.to(_et.int32)


# (mantissa bits, the least frexp exponent of a normal number, the largest finite value)
_FLOAT_LAYOUT = {
    "float16": (11, -13, 65504.0),
    "bfloat16": (8, -125, 3.3895313892515355e38),
    "float32": (24, -125, 3.4028234663852886e38),
    "float64": (53, -1021, 1.7976931348623157e308),
}


def nextafter(self, other):
    """The next value of self's dtype after self toward other (other itself when equal,
    NaN when either is NaN), computed exactly from self's binary exponent."""
    dt = _et.result_type(self, other)
    if not dt.is_floating_point:
        raise RuntimeError(f'"nextafter_cpu" not implemented for \'{dt._scalar_type_name}\'')
    bits, emin, largest = _FLOAT_LAYOUT[_name(dt)]
    x, y = self.to(dt).to(_et.float64), other.to(dt).to(_et.float64)
    up = _et.gt(y, x)
    sign = _et.where(up, _et.ones_like(x), _et.neg(_et.ones_like(x)))
    mantissa, exponent = frexp(x)
    e = _et.clamp(exponent.to(_et.float64), min=emin)
    ulp = _et.pow(2.0, _et.sub(e, bits))
    away = _et.eq(_et.sign(x), sign)  # moving away from zero
    # toward zero from a power of two, the binade below has half the spacing
    halve = _et.logical_and(_et.logical_not(away), _et.logical_and(
        _et.eq(_et.abs(mantissa), 0.5), _et.gt(exponent.to(_et.float64), emin)))
    ulp = _et.where(halve, _et.mul(ulp, 0.5), ulp)
    step = _et.add(x, _et.mul(sign, ulp))
    tiny = 2.0 ** (emin - bits)
    step = _et.where(_et.eq(x, 0), _et.mul(sign, tiny), step)
    step = _et.where(_et.isinf(x), _et.mul(_et.sign(x), largest), step)
    out = _et.where(_et.eq(x, y), y, step)
    out = _et.where(_et.logical_or(_et.isnan(x), _et.isnan(y)), _et.full_like(x, float("nan")),
                    out)
    return out.to(dt)
