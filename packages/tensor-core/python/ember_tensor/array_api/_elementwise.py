"""(array API) Element-wise functions of the 2024.12 standard.

Arguments and results
    Arrays are positional-only. For binary functions one operand may be a Python scalar
    (2024.12): it takes the dtype of the array (a bool meets bool arrays, an int integer or
    floating arrays, a float floating arrays, a complex complex arrays; TypeError otherwise;
    OverflowError for an int outside the bounds of an integer array's dtype); a complex
    scalar with a real floating array gives the complex dtype of the array's precision.
    Arrays of different dtypes promote by the standard's table (``_dtypes.promote_types``):
    no promotion between bool, integer and floating dtypes (TypeError), uint8 with int8
    gives int16, complex64 with float64 complex128, float16 with bfloat16 float32.

Dtypes
    Each function takes the dtype category the standard names for it ("should have a ...
    data type"), and raises TypeError for others, as array-api-strict does. In particular
    the floating-point functions (``divide``, ``sqrt``, ``exp``, ``sin``...) reject integer
    and bool arrays (NumPy would promote them to float64; the standard leaves it
    implementation-defined): cast with ``astype`` first. "Floating-point" includes complex64
    and complex128; "real-valued" excludes them, so ordering functions (``less``,
    ``maximum``, ``clip``, ``floor``...) reject complex arrays. ``ceil``/``floor``/``trunc``/
    ``round`` of integers return the integers unchanged (same dtype). ``conj`` and ``real``
    are the identity on real arrays; ``imag`` of a real array returns zeros (an extension:
    the standard defines it for complex arrays only). ``abs`` of a complex array is real
    (float32 for complex64), ``sign`` of a complex z is z / |z| (0 for 0), ``round`` of a
    complex number rounds its real and imaginary parts. float16 and bfloat16 (extensions)
    are accepted wherever real floating dtypes are.

    uint16, uint32 and uint64: where the core has no kernel for them yet, uint16 and uint32
    are computed exactly in int64; uint64 through int64 where that is exact (modular
    arithmetic, bitwise operations, comparisons and max/min through an order-preserving
    map), otherwise TypeError (``_dtypes.call_core``).

Special cases (signed zeros, infinities, NaN) follow the standard; where it leaves a
choice, NumPy's behaviour is used:

* integer ``floor_divide`` and ``remainder`` by zero give 0 (the core raises);
* ``floor_divide`` with infinite operands follows the standard's special cases (+-inf, -0;
  the core, NumPy and Python give NaN and -1), ``remainder`` Python/NumPy;
* ``pow`` of integers with a negative exponent truncates (``2 ** -1 == 0``,
  ``1 ** -2 == 1``, ``(-1) ** -3 == -1``) where NumPy raises ValueError;
* shifts by a negative amount or by the bit width or more give 0 (left) or the sign fill
  (right), as NumPy does on x86;
* ``clip`` with min > max gives max; bounds of a wider dtype than ``x`` are applied in the
  promoted dtype and the result cast back (integers saturate to ``x``'s range);
* ``maximum``/``minimum`` of +0 and -0 return either (unspecified by the standard).

Precision: ``acos``, ``asin``, ``acosh``, ``asinh``, ``atanh``, ``cosh`` and ``sinh`` are
the core's kernels (the C library's functions; float16 and bfloat16 computed in float32 and
rounded once). ``atan2``, ``copysign``, ``hypot`` and ``logaddexp`` are the core's composites
(``ember_tensor/_composites/elementwise.py``): formulas over core ops that avoid
cancellation and intermediate overflow, within 2 ulp of the exact values in float32 and
float64 (the tests allow 4), special values (signed zeros, infinities, NaN) exact;
``logaddexp`` is NumPy's algorithm (max + log1p(exp(-|d|))), so like NumPy's it loses
relative precision where the result is close to 0, and ``hypot`` for
float16/bfloat16/float32 is computed in float64. ``nextafter`` is exact (the step is a power
of two from a table; no bit access needed). ``signbit`` and ``copysign`` are the core's
(a kernel and a composite on it): they see the sign of NaN as the standard requires.
Functions the core computes directly inherit its precision (float64 ``pow`` differs from
libm by up to 1 ulp and flushes results below 2**-1022 to 0; ``tanh`` and ``log10`` are
within 2.5 ulp).
"""

from __future__ import annotations

import builtins as _builtins
import math as _math

import ember_tensor as _et

from . import _dtypes as _dt

__all__ = [
    "abs",
    "acos",
    "acosh",
    "add",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_left_shift",
    "bitwise_invert",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "ceil",
    "clip",
    "conj",
    "copysign",
    "cos",
    "cosh",
    "divide",
    "equal",
    "exp",
    "expm1",
    "floor",
    "floor_divide",
    "greater",
    "greater_equal",
    "hypot",
    "imag",
    "isfinite",
    "isinf",
    "isnan",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log2",
    "log10",
    "logaddexp",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "multiply",
    "negative",
    "nextafter",
    "not_equal",
    "positive",
    "pow",
    "real",
    "reciprocal",
    "remainder",
    "round",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "square",
    "sqrt",
    "subtract",
    "tan",
    "tanh",
    "trunc",
]

_Tensor = _et.Tensor
_bool = _et.bool
_i8, _i16, _i32, _i64, _u8 = _et.int8, _et.int16, _et.int32, _et.int64, _et.uint8
_u64 = _et.uint64
_f16, _bf16, _f32, _f64 = _et.float16, _et.bfloat16, _et.float32, _et.float64

_INTS = frozenset(_dt._INTEGRAL)
_FLOATS = frozenset({_f16, _bf16, _f32, _f64})
_COMPLEX = frozenset(_dt._COMPLEX)
_BOOLS = frozenset({_bool})
_REAL = _INTS | _FLOATS
_NUMERIC = _REAL | _COMPLEX

# the standard's dtype categories, by the name used in its text (and in error messages)
_CATEGORIES = {
    "numeric": _NUMERIC,
    "real-valued": _REAL,
    "integer": _INTS,
    "integer or boolean": _INTS | _BOOLS,
    "boolean": _BOOLS,
    "floating-point": _FLOATS | _COMPLEX,
    "real-valued floating-point": _FLOATS,
    "complex floating-point": _COMPLEX,
    "any": _NUMERIC | _BOOLS,
}
_HALVES = frozenset({_f16, _bf16})

# binary formats: (digits of the significand p, smallest normal exponent emin, emax)
_FORMATS = {_f16: (11, -14, 15), _bf16: (8, -126, 127), _f32: (24, -126, 127),
            _f64: (53, -1022, 1023)}

_PI = _math.pi
_LN2 = _math.log(2.0)


# ---------------------------------------------------------------------------------------
# argument checking and promotion


def _name(dtype) -> str:
    return _dt.dtype_name(dtype)


def _not_array(fn: str, arg: str, x) -> TypeError:
    return TypeError(f"{fn}: {arg} must be an array (ember_tensor.Tensor), got "
                     f"{type(x).__name__}")


def _bad_dtype(fn: str, category: str, dtype) -> TypeError:
    return TypeError(f"{fn}: only {category} dtypes are allowed, got {_name(dtype)}")


def _unary(x, fn: str, category: str) -> None:
    """TypeError unless x is an array of a dtype of the category."""
    if not isinstance(x, _Tensor):
        raise _not_array(fn, "x", x)
    if x.dtype not in _CATEGORIES[category]:
        raise _bad_dtype(fn, category, x.dtype)


def _scalar_array(value, dtype, fn: str):
    """The Python scalar value as a 0-d array of the dtype it takes with an array of dtype
    (dtype itself, or for a complex scalar with a real floating array the complex dtype)."""
    try:
        dtype = _dt.promote_scalar(dtype, value)
    except TypeError as e:
        raise TypeError(f"{fn}: {e}") from None
    if not isinstance(value, (_builtins.bool, int, float, complex)):  # NumPy scalars
        value = value.item()
    if dtype in _INTS:
        info = _dt.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise OverflowError(
                f"{fn}: Python int {value} is out of bounds for {_name(dtype)}"
            )
        if value > 2**63 - 1:  # uint64: the core reads ints as int64; the cast wraps back
            value -= 2**64
    elif dtype in _FLOATS:
        value = float(value)
    elif dtype in _COMPLEX:
        value = complex(value)
    return _et.full((), value, dtype=dtype)


def _with_scalar(x, value, fn: str, allowed, category: str):
    """(x, value as a 0-d array), x cast to the complex dtype when value is a complex
    scalar and x a real floating array."""
    s = _scalar_array(value, x.dtype, fn)
    if s.dtype != x.dtype:
        if s.dtype not in allowed:
            raise _bad_dtype(fn, category, s.dtype)
        x = x.to(s.dtype)
    return x, s


def _binary(x1, x2, fn: str, category: str):
    """(a1, a2): the operands as arrays of their common dtype (scalars converted)."""
    allowed = _CATEGORIES[category]
    if isinstance(x1, _Tensor):
        d1 = x1.dtype
        if d1 not in allowed:
            raise _bad_dtype(fn, category, d1)
        if isinstance(x2, _Tensor):
            d2 = x2.dtype
            if d2 not in allowed:
                raise _bad_dtype(fn, category, d2)
            if d1 == d2:
                return x1, x2
            try:
                dt = _dt.promote_types(d1, d2)
            except TypeError as e:
                raise TypeError(f"{fn}: {e}") from None
            return (x1 if d1 == dt else x1.to(dt)), (x2 if d2 == dt else x2.to(dt))
        if isinstance(x2, _Tensor) or _dt._scalar_kind(x2) is None:
            raise _not_array(fn, "x2", x2)
        return _with_scalar(x1, x2, fn, allowed, category)
    if isinstance(x2, _Tensor):
        if _dt._scalar_kind(x1) is None:
            raise _not_array(fn, "x1", x1)
        if x2.dtype not in allowed:
            raise _bad_dtype(fn, category, x2.dtype)
        b, a = _with_scalar(x2, x1, fn, allowed, category)
        return a, b
    raise TypeError(
        f"{fn}: at least one of x1 and x2 must be an array, got {type(x1).__name__} and "
        f"{type(x2).__name__}"
    )


def _const(value, dtype):
    """A 0-d array of dtype holding value (rounded to dtype)."""
    return _et.full((), value, dtype=dtype)


def _upcast(x):
    """(x in the dtype composed formulas run in, the dtype to round the result to or None):
    float16 and bfloat16 are computed in float32."""
    if x.dtype in _HALVES:
        return x.to(_f32), x.dtype
    return x, None


def _downcast(r, dtype):
    return r if dtype is None else r.to(dtype)


def _odd(r, x):
    """r (a function of |x| with r(0) = +0) given the sign of x: -r for x < 0, and x itself
    where x is a zero (so -0 maps to -0)."""
    return _et.where(_et.lt(x, 0), _et.neg(r), _et.where(_et.eq(x, 0), x, r))


# ---------------------------------------------------------------------------------------
# unary functions the core computes directly


def _core_unary(name: str, category: str, core, doc: str, uint64=None):
    def fn(x, /):
        _unary(x, name, category)
        return _dt.call_core(name, core, x, uint64=uint64)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def abs(x, /):
    """Absolute value of each element: same dtype for real x (abs of the most negative
    signed integer is itself, as in NumPy; unsigned integers unchanged); for complex x the
    magnitude hypot(re, im), real (float32 for complex64)."""
    _unary(x, "abs", "numeric")
    if x.dtype in _dt._UNSIGNED:
        return x.clone()
    return _et.abs(x)
atan = _core_unary("atan", "floating-point", _et.atan, "Inverse tangent, in radians.")
bitwise_invert = _core_unary("bitwise_invert", "integer or boolean", _et.bitwise_not,
                             "Bitwise NOT (logical NOT for bool).", uint64="wrap")


def _rounding(name: str, core, doc: str):
    def fn(x, /):
        _unary(x, name, "real-valued")
        if x.dtype in _INTS:  # integers are integer-valued already
            return x.clone()
        return core(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


ceil = _rounding("ceil", _et.ceil,
                 "Smallest integer-valued number >= x (same dtype; integers unchanged).")
cos = _core_unary("cos", "floating-point", _et.cos, "Cosine of x in radians.")
exp = _core_unary("exp", "floating-point", _et.exp, "e ** x.")
expm1 = _core_unary("expm1", "floating-point", _et.expm1, "e ** x - 1, accurate near 0.")
floor = _rounding("floor", _et.floor,
                  "Largest integer-valued number <= x (same dtype; integers unchanged).")


def _int_class(name: str, core, int_value: bool, doc: str):
    def fn(x, /):
        _unary(x, name, "numeric")
        if x.dtype in _INTS:  # integers are finite, never infinite or NaN
            return _et.full(tuple(x.shape), int_value, dtype=_bool)
        return core(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


isfinite = _int_class("isfinite", _et.isfinite, True,
                      "True where x is neither infinite nor NaN (bool); for complex x, "
                      "where both parts are finite.")
isinf = _int_class("isinf", _et.isinf, False,
                   "True where x is +-infinity (bool); for complex x, where either part "
                   "is infinite.")
isnan = _int_class("isnan", _et.isnan, False,
                   "True where x is NaN (bool); for complex x, where either part is NaN.")
log = _core_unary("log", "floating-point", _et.log, "Natural logarithm.")
log1p = _core_unary("log1p", "floating-point", _et.log1p, "log(1 + x), accurate near 0.")
log2 = _core_unary("log2", "floating-point", _et.log2, "Base-2 logarithm.")
log10 = _core_unary("log10", "floating-point", _et.log10, "Base-10 logarithm.")
logical_not = _core_unary("logical_not", "boolean", _et.logical_not, "Logical NOT (bool).")
negative = _core_unary("negative", "numeric", _et.neg,
                       "-x (integers wrap: negative of the most negative value is itself, "
                       "unsigned integers give 2**bits - x).", uint64="wrap")
reciprocal = _core_unary("reciprocal", "floating-point", _et.reciprocal, "1 / x.")


def round(x, /):
    """Nearest integer-valued number, halves to even (same dtype; integers unchanged; for
    complex x the real and imaginary parts are rounded separately)."""
    _unary(x, "round", "numeric")
    if x.dtype in _INTS:
        return x.clone()
    if x.dtype in _COMPLEX:
        return _complex(_et.round(_et.real(x)), _et.round(_et.imag(x)))
    return _et.round(x)


def _complex(re, im):
    """The complex array re + im * 1j from real arrays of the same dtype and shape."""
    return _et.view_as_complex(_et.stack([re, im], -1).contiguous())


def sign(x, /):
    """-1, 0 or 1 by the sign of real x (same dtype); 0 for +-0, NaN for NaN. For complex x,
    x / |x| (0 for 0; NaN where x has a NaN part)."""
    _unary(x, "sign", "numeric")
    if x.dtype in _COMPLEX:
        return _et.sgn(x)
    if x.dtype in _dt._UNSIGNED:
        return _dt.call_core("sign", _et.ne, x, _const(0, x.dtype)).to(x.dtype)
    return _et.sign(x)
sin = _core_unary("sin", "floating-point", _et.sin, "Sine of x in radians.")
square = _core_unary("square", "numeric", _et.square, "x * x (integers wrap).",
                     uint64="wrap")
sqrt = _core_unary("sqrt", "floating-point", _et.sqrt,
                   "Square root (correctly rounded for real x; the principal root for "
                   "complex x).")
tan = _core_unary("tan", "floating-point", _et.tan, "Tangent of x in radians.")
tanh = _core_unary("tanh", "floating-point", _et.tanh, "Hyperbolic tangent.")
trunc = _rounding("trunc", _et.trunc, "x rounded toward zero (same dtype; integers unchanged).")


def positive(x, /):
    """+x: a copy of x."""
    _unary(x, "positive", "numeric")
    return x.clone()


def conj(x, /):
    """Complex conjugate (a new array, the imaginary part negated); x itself for the real
    dtypes."""
    _unary(x, "conj", "numeric")
    if x.dtype in _COMPLEX:
        return _et.conj_physical(x)
    return x


def real(x, /):
    """Real component: for complex x a view of its real parts (float32 for complex64);
    x itself for the real dtypes."""
    _unary(x, "real", "numeric")
    if x.dtype in _COMPLEX:
        return _et.real(x)
    return x


def imag(x, /):
    """Imaginary component: for complex x a view of its imaginary parts (float32 for
    complex64); zeros of x's dtype and shape for real arrays (as NumPy; an extension, the
    standard defines imag for complex arrays only)."""
    _unary(x, "imag", "numeric")
    if x.dtype in _COMPLEX:
        return _et.imag(x)
    return _et.zeros_like(x)


# ---------------------------------------------------------------------------------------
# inverse trigonometric and hyperbolic functions (the core's kernels)


def acos(x, /):
    """Inverse cosine in radians, [0, pi]; NaN outside [-1, 1]."""
    _unary(x, "acos", "floating-point")
    return _et.acos(x)


def asin(x, /):
    """Inverse sine in radians, [-pi/2, pi/2]; NaN outside [-1, 1]; keeps the sign of 0."""
    _unary(x, "asin", "floating-point")
    return _et.asin(x)


def asinh(x, /):
    """Inverse hyperbolic sine; keeps the sign of 0."""
    _unary(x, "asinh", "floating-point")
    return _et.asinh(x)


def acosh(x, /):
    """Inverse hyperbolic cosine; NaN for x < 1."""
    _unary(x, "acosh", "floating-point")
    return _et.acosh(x)


def atanh(x, /):
    """Inverse hyperbolic tangent; +-inf at +-1, NaN outside [-1, 1]; keeps the sign of 0."""
    _unary(x, "atanh", "floating-point")
    return _et.atanh(x)


def cosh(x, /):
    """Hyperbolic cosine."""
    _unary(x, "cosh", "floating-point")
    return _et.cosh(x)


def sinh(x, /):
    """Hyperbolic sine; keeps the sign of 0."""
    _unary(x, "sinh", "floating-point")
    return _et.sinh(x)


def signbit(x, /):
    """True where the sign bit of x is set: negative numbers, -0, -inf and NaNs with
    the sign bit set."""
    _unary(x, "signbit", "real-valued floating-point")
    return _et.signbit(x)


# ---------------------------------------------------------------------------------------
# binary functions


def add(x1, x2, /):
    """x1 + x2."""
    a, b = _binary(x1, x2, "add", "numeric")
    return _dt.call_core("add", _et.add, a, b, uint64="wrap")


def subtract(x1, x2, /):
    """x1 - x2."""
    a, b = _binary(x1, x2, "subtract", "numeric")
    return _dt.call_core("subtract", _et.sub, a, b, uint64="wrap")


def multiply(x1, x2, /):
    """x1 * x2."""
    a, b = _binary(x1, x2, "multiply", "numeric")
    return _dt.call_core("multiply", _et.mul, a, b, uint64="wrap")


def divide(x1, x2, /):
    """x1 / x2 (floating dtypes, real or complex, only: integer arrays are a TypeError,
    cast them first)."""
    a, b = _binary(x1, x2, "divide", "floating-point")
    return _et.div(a, b)


def _int_division(fn, core, a, b):
    """core(a, b) for integer arrays, with 0 where b == 0 (as NumPy; the core raises)."""
    zero = _et.eq(b, 0)
    if not _builtins.bool(_et.any(zero)):
        return _dt.call_core(fn, core, a, b)
    r = _dt.call_core(fn, core, a, _et.where(zero, _const(1, b.dtype), b))
    return _et.where(zero, _const(0, r.dtype), r)


def floor_divide(x1, x2, /):
    """x1 // x2 rounded toward -infinity; integer division by zero gives 0 (as NumPy).
    Infinite operands follow the standard's special cases: an infinite x1 over a finite
    nonzero x2 is the infinity of the quotient's sign, a finite nonzero x1 over an infinite
    x2 of the other sign is -0 (the core, as NumPy and Python, gives NaN and -1)."""
    a, b = _binary(x1, x2, "floor_divide", "real-valued")
    if a.dtype in _INTS:
        return _int_division("floor_divide", _et.floor_divide, a, b)
    r = _et.floor_divide(a, b)
    inf_a = _et.logical_and(_et.isinf(a), _et.logical_and(_et.isfinite(b), _et.ne(b, 0)))
    r = _et.where(inf_a, _et.div(a, b), r)  # +-inf / finite: the signed infinity
    opposite = _et.logical_and(_et.isinf(b), _et.logical_and(
        _et.logical_and(_et.isfinite(a), _et.ne(a, 0)), _et.ne(_et.signbit(a), _et.signbit(b))))
    return _et.where(opposite, _const(-0.0, r.dtype), r)


def remainder(x1, x2, /):
    """x1 % x2 with the sign of x2 (Python's %), zeros included; integer division by zero
    gives 0 (as NumPy)."""
    a, b = _binary(x1, x2, "remainder", "real-valued")
    if a.dtype in _INTS:
        return _int_division("remainder", _et.remainder, a, b)
    r = _et.remainder(a, b)
    # a zero result takes the sign of x2 (the core gives the sign of x1)
    zero = _et.where(_et.lt(b, 0), _const(-0.0, r.dtype), _const(0.0, r.dtype))
    return _et.where(_et.eq(r, 0), zero, r)


def pow(x1, x2, /):
    """x1 ** x2 (C99/IEEE special cases: pow(x, +-0) == 1, pow(1, y) == 1 even for NaN...).

    Integers: a negative exponent truncates the exact result toward 0 (unspecified by the
    standard; NumPy raises)."""
    a, b = _binary(x1, x2, "pow", "numeric")
    return _dt.call_core("pow", _et.pow, a, b, uint64="wrap")


def maximum(x1, x2, /):
    """Element-wise maximum; NaN if either is NaN."""
    a, b = _binary(x1, x2, "maximum", "real-valued")
    return _dt.call_core("maximum", _et.maximum, a, b, uint64="order")


def minimum(x1, x2, /):
    """Element-wise minimum; NaN if either is NaN."""
    a, b = _binary(x1, x2, "minimum", "real-valued")
    return _dt.call_core("minimum", _et.minimum, a, b, uint64="order")


def equal(x1, x2, /):
    """x1 == x2 (bool)."""
    a, b = _binary(x1, x2, "equal", "any")
    return _dt.call_core("equal", _et.eq, a, b, same=False, uint64="wrap")


def not_equal(x1, x2, /):
    """x1 != x2 (bool)."""
    a, b = _binary(x1, x2, "not_equal", "any")
    return _dt.call_core("not_equal", _et.ne, a, b, same=False, uint64="wrap")


def greater(x1, x2, /):
    """x1 > x2 (bool)."""
    a, b = _binary(x1, x2, "greater", "real-valued")
    return _dt.call_core("greater", _et.gt, a, b, same=False, uint64="order")


def greater_equal(x1, x2, /):
    """x1 >= x2 (bool)."""
    a, b = _binary(x1, x2, "greater_equal", "real-valued")
    return _dt.call_core("greater_equal", _et.ge, a, b, same=False, uint64="order")


def less(x1, x2, /):
    """x1 < x2 (bool)."""
    a, b = _binary(x1, x2, "less", "real-valued")
    return _dt.call_core("less", _et.lt, a, b, same=False, uint64="order")


def less_equal(x1, x2, /):
    """x1 <= x2 (bool)."""
    a, b = _binary(x1, x2, "less_equal", "real-valued")
    return _dt.call_core("less_equal", _et.le, a, b, same=False, uint64="order")


def logical_and(x1, x2, /):
    """x1 AND x2 (bool arrays)."""
    a, b = _binary(x1, x2, "logical_and", "boolean")
    return _et.logical_and(a, b)


def logical_or(x1, x2, /):
    """x1 OR x2 (bool arrays)."""
    a, b = _binary(x1, x2, "logical_or", "boolean")
    return _et.logical_or(a, b)


def logical_xor(x1, x2, /):
    """x1 XOR x2 (bool arrays)."""
    a, b = _binary(x1, x2, "logical_xor", "boolean")
    return _et.logical_xor(a, b)


def bitwise_and(x1, x2, /):
    """Bitwise AND of integer or bool arrays."""
    a, b = _binary(x1, x2, "bitwise_and", "integer or boolean")
    return _dt.call_core("bitwise_and", _et.bitwise_and, a, b, uint64="wrap")


def bitwise_or(x1, x2, /):
    """Bitwise OR of integer or bool arrays."""
    a, b = _binary(x1, x2, "bitwise_or", "integer or boolean")
    return _dt.call_core("bitwise_or", _et.bitwise_or, a, b, uint64="wrap")


def bitwise_xor(x1, x2, /):
    """Bitwise XOR of integer or bool arrays."""
    a, b = _binary(x1, x2, "bitwise_xor", "integer or boolean")
    return _dt.call_core("bitwise_xor", _et.bitwise_xor, a, b, uint64="wrap")


def bitwise_left_shift(x1, x2, /):
    """x1 << x2 (integers; bits shifted out are lost, as in C on the dtype's width).

    A shift by the bit width or more, or by a negative amount (undefined in the standard),
    gives 0, as NumPy does (``ember_tensor.bitwise_left_shift``)."""
    a, b = _binary(x1, x2, "bitwise_left_shift", "integer")
    return _et.bitwise_left_shift(a, b)


def bitwise_right_shift(x1, x2, /):
    """x1 >> x2, arithmetic (floor division by 2**x2). A shift by the bit width or more,
    or by a negative amount (undefined in the standard), gives 0 or -1 (the sign), as
    NumPy does (``ember_tensor.bitwise_right_shift``)."""
    a, b = _binary(x1, x2, "bitwise_right_shift", "integer")
    return _et.bitwise_right_shift(a, b)


def atan2(x1, x2, /):
    """Angle of the point (x2, x1) in radians, in [-pi, pi], with the standard's (IEEE)
    special cases for signed zeros and infinities.

    Computed as atan(x1 / x2), plus +-pi (the sign of x1) where x2 is negative or -0,
    after replacing 0/0 and inf/inf by the signs they stand for."""
    a, b = _binary(x1, x2, "atan2", "real-valued floating-point")
    return _et.atan2(a, b)


def hypot(x1, x2, /):
    """sqrt(x1**2 + x2**2) without undue overflow or underflow; +inf if either is
    infinite (even with NaN).

    float16, bfloat16 and float32 are computed in float64 (no overflow is possible there);
    float64 as m * sqrt(1 + (n/m)**2) with m = max(|x1|, |x2|), n = min(|x1|, |x2|)."""
    a, b = _binary(x1, x2, "hypot", "real-valued floating-point")
    return _et.hypot(a, b)


def logaddexp(x1, x2, /):
    """log(exp(x1) + exp(x2)) without overflow: max + log1p(exp(-|x1 - x2|)), or
    x1 + log(2) where x1 == x2 (NumPy's algorithm); +inf if either is +inf."""
    a, b = _binary(x1, x2, "logaddexp", "real-valued floating-point")
    return _et.logaddexp(a, b)


def copysign(x1, x2, /):
    """|x1| with the sign bit of x2 (signed zeros and NaNs included: the result's sign bit
    is x2's even when x1 is NaN)."""
    a, b = _binary(x1, x2, "copysign", "real-valued floating-point")
    return _et.copysign(a, b)


# powers of two as float64, 2**k for k in [_P2_LO, _P2_HI] (subnormals included): exact
# steps for nextafter of every floating dtype (all of them convert exactly to float64)
_P2_LO, _P2_HI = -1074, 1024
_P2_TABLE = None


def _pow2(k):
    """2.0 ** k (float64) for an int64 array k (k clamped to [_P2_LO, _P2_HI])."""
    global _P2_TABLE
    if _P2_TABLE is None:
        import numpy as np

        with np.errstate(over="ignore"):  # 2**1024 is inf, as wanted
            table = np.ldexp(1.0, np.arange(_P2_LO, _P2_HI + 1, dtype=np.int64))
        _P2_TABLE = _et.from_numpy(table)
    idx = _et.sub(_et.clamp(k, _P2_LO, _P2_HI), _P2_LO).reshape(-1)
    return _et.index_select(_P2_TABLE, 0, idx).reshape(tuple(k.shape))


def nextafter(x1, x2, /):
    """The next representable value after x1 in the direction of x2 (x2 itself where they
    are equal, so nextafter(-0, +0) == +0; NaN if either is NaN).

    Exact for every floating dtype: the exponent of |x1| comes from log2 (corrected with
    exact powers of two), the step is one unit in the last place (half of it going down
    from a power of two), and the arithmetic runs in float64, where it is exact."""
    a, b = _binary(x1, x2, "nextafter", "real-valued floating-point")
    dt = a.dtype
    p, emin, emax = _FORMATS[dt]
    x = a.to(_f64) if dt != _f64 else a
    y = b.to(_f64) if dt != _f64 else b
    mag = _et.abs(x)
    finite = _et.logical_and(_et.isfinite(mag), _et.gt(mag, 0))
    safe = _et.where(finite, mag, _const(1.0, _f64))
    # e = floor(log2(|x|)), corrected to 2**e <= |x| < 2**(e+1), at least emin
    e = _et.floor(_et.log2(safe)).to(_i64)
    e = _et.clamp(e, emin - 1, emax)
    e = _et.where(_et.gt(_pow2(e), safe), _et.sub(e, 1), e)
    e = _et.where(_et.le(_pow2(_et.add(e, 1)), safe), _et.add(e, 1), e)
    e = _et.clamp(e, emin, emax)
    ulp_exp = _et.sub(e, p - 1)
    up = _pow2(ulp_exp)  # one ulp away from zero
    # going toward zero from an exact power of two (above the subnormals) the step halves
    at_pow2 = _et.logical_and(_et.eq(safe, _pow2(e)), _et.gt(e, emin))
    down = _et.where(at_pow2, _pow2(_et.sub(ulp_exp, 1)), up)
    away = _et.eq(_et.gt(y, x), _et.gt(x, 0))  # does |x| grow?
    new_mag = _et.where(away, _et.add(mag, up), _et.sub(mag, down))
    r = _et.where(_et.lt(x, 0), _et.neg(new_mag), new_mag)
    # x == 0: the smallest subnormal toward y; x infinite: the largest finite value
    tiny = _pow2(_et.full((), emin - p + 1, dtype=_i64))
    r = _et.where(_et.eq(x, 0), _et.where(_et.gt(y, x), tiny, _et.neg(tiny)), r)
    big = _const(float(_dt.finfo(dt).max), _f64)
    r = _et.where(_et.isinf(x), _et.where(_et.gt(x, 0), big, _et.neg(big)), r)
    r = _et.where(_et.eq(x, y), y, r)
    r = _et.where(_et.logical_or(_et.isnan(x), _et.isnan(y)), _const(_math.nan, _f64), r)
    return r.to(dt) if dt != _f64 else r


def clip(x, /, min=None, max=None):
    """x clamped to [min, max] (each bound optional: None, a Python int/float or an array
    broadcasting with x). The result has x's dtype and the broadcast shape; NaN in x, min
    or max gives NaN; min > max gives max.

    Bounds must be of x's kind (a float bound for an integer x is a TypeError; a Python int
    bound for a floating x is fine). Python int bounds beyond the range of an integer x
    saturate; array bounds of another dtype are applied in the promoted dtype and the result
    cast back to x's dtype (integers saturating)."""
    _unary(x, "clip", "real-valued")
    dt = x.dtype
    bounds = []
    work = dt
    for argname, bound in (("min", min), ("max", max)):
        if bound is None:
            bounds.append(None)
            continue
        if isinstance(bound, _Tensor):
            bdt = bound.dtype
            if bdt not in _REAL:
                raise _bad_dtype("clip", "real-valued", bdt)
            try:
                work = _dt.promote_types(work, bdt)
            except TypeError:
                raise TypeError(
                    f"clip: {argname} ({_name(bdt)}) must be of the same kind as x "
                    f"({_name(dt)})"
                ) from None
            bounds.append(bound)
            continue
        if type(bound) not in (int, float):
            raise TypeError(
                f"clip: {argname} must be None, a Python int or float, or an array, got "
                f"{type(bound).__name__}"
            )
        if dt in _INTS:
            if isinstance(bound, float):
                raise TypeError(f"clip: {argname} must be an int when x is an integer array")
            info = _dt.iinfo(dt)
            if (argname == "min" and bound <= info.min) or (
                    argname == "max" and bound >= info.max):
                bounds.append(None)  # no effect
                continue
            bound = _builtins.min(_builtins.max(bound, info.min), info.max)
        else:
            bound = float(bound)
        bounds.append(_const(bound, dt))
    lo, hi = bounds
    if lo is None and hi is None:
        return x.clone()
    if work != dt:
        xs = x.to(work)
        lo = None if lo is None else lo.to(work)
        hi = None if hi is None else hi.to(work)
        r = _dt.call_core("clip", _et.clamp, xs, lo, hi, uint64="order")
        if dt in _INTS:
            info = _dt.iinfo(dt)
            r = _dt.call_core("clip", _et.clamp, r, info.min, info.max, uint64="order")
        return r.to(dt)
    return _dt.call_core("clip", _et.clamp, x, lo, hi, uint64="order")
