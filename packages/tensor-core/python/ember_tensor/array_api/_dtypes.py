"""(array API) Constants (e, inf, nan, newaxis, pi), data types and the data type
functions: astype, can_cast, finfo, iinfo, isdtype, result_type.

All the standard's dtypes are here: bool, int8, int16, int32, int64, uint8, uint16, uint32,
uint64, float32, float64, complex64 and complex128. float16 and bfloat16 are exported as
extensions: they are real floating-point dtypes for ``isdtype``, ``finfo`` and ``astype``
but are not array API dtypes, so ``__array_namespace_info__().dtypes()`` leaves them out.

Type promotion follows the standard's table, not PyTorch's: there is no promotion between
bool, integer and floating-point (real or complex) dtypes, so ``result_type(int8, float32)``
raises TypeError. An unsigned with a signed integer gives the smallest signed type holding
both (uint8 + int8 -> int16, uint32 + int8 -> int64); uint64 with a signed integer has no
such type: TypeError. A complex with a real floating dtype gives the complex dtype of the
wider precision (complex64 + float64 -> complex128). The extensions promote as in PyTorch
(float16 + bfloat16 -> float32; with a complex dtype, that complex dtype).

Python scalars are weak (2024.12): they take the dtype of the arrays they meet, if their
kind fits: a bool meets bool arrays, an int integer and floating arrays (real or complex), a
float floating arrays; a complex meets complex arrays, and real floating arrays, where it
gives the complex dtype of the array's precision (float32 -> complex64, float64 ->
complex128; float16/bfloat16 -> complex64). A complex scalar with an integer array is a
TypeError (the standard leaves it to the implementation).

``astype`` refuses to cast complex arrays to real dtypes (TypeError, as the standard asks:
take ``real`` or ``imag`` first); complex to bool is allowed (nonzero -> True).

Helpers for the other modules of the namespace (not exported): ``promote_types(a, b)``,
``promote_scalar(dtype, value)``, ``default_float_dtype()``, ``default_int_dtype()``,
``is_dtype(obj)`` and ``_check_array(x, name)``.
"""

from __future__ import annotations

import builtins as _builtins
import math as _math

import ember_tensor as _et

__all__ = [
    "e",
    "inf",
    "nan",
    "newaxis",
    "pi",
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "float16",
    "bfloat16",
    "astype",
    "can_cast",
    "finfo",
    "iinfo",
    "isdtype",
    "result_type",
]

# constants (Python floats, as the standard asks; newaxis is None, as in NumPy)
e = _math.e
inf = _math.inf
nan = _math.nan
newaxis = None
pi = _math.pi

# NB: `bool` below is the dtype; the builtin is spelled `_builtins.bool` in this module.
bool = _et.bool
int8 = _et.int8
int16 = _et.int16
int32 = _et.int32
int64 = _et.int64
uint8 = _et.uint8
uint16 = _et.uint16
uint32 = _et.uint32
uint64 = _et.uint64
float32 = _et.float32
float64 = _et.float64
complex64 = _et.complex64
complex128 = _et.complex128
# extensions (not array API dtypes)
float16 = _et.float16
bfloat16 = _et.bfloat16

_Tensor = _et.Tensor
_DType = _et.dtype

_SIGNED = (int8, int16, int32, int64)
_UNSIGNED = (uint8, uint16, uint32, uint64)
_INTEGRAL = _SIGNED + _UNSIGNED
_STANDARD_FLOATS = (float32, float64)
_FLOATS = (float16, bfloat16, float32, float64)
_COMPLEX = (complex64, complex128)
_BOOLS = (bool,)
_NUMERIC = _INTEGRAL + _FLOATS + _COMPLEX
_ALL = _BOOLS + _NUMERIC
# the array API dtypes this namespace supports (what info().dtypes() lists), in the
# standard's order
STANDARD_DTYPES = _BOOLS + _SIGNED + _UNSIGNED + _STANDARD_FLOATS + _COMPLEX

_NAMES = {
    bool: "bool", int8: "int8", int16: "int16", int32: "int32", int64: "int64",
    uint8: "uint8", uint16: "uint16", uint32: "uint32", uint64: "uint64",
    float16: "float16", bfloat16: "bfloat16", float32: "float32", float64: "float64",
    complex64: "complex64", complex128: "complex128",
}
_BITS = {
    bool: 8, int8: 8, int16: 16, int32: 32, int64: 64,
    uint8: 8, uint16: 16, uint32: 32, uint64: 64,
    float16: 16, bfloat16: 16, float32: 32, float64: 64, complex64: 64, complex128: 128,
}
# complex dtype <-> its real component dtype
_REAL_OF = {complex64: float32, complex128: float64}
_COMPLEX_OF = {float16: complex64, bfloat16: complex64, float32: complex64,
               float64: complex128}


def dtype_name(dtype) -> str:
    """'float32' for xp.float32."""
    return _NAMES.get(dtype, str(dtype))


def is_dtype(obj) -> _builtins.bool:
    """True if obj is one of this namespace's dtype objects."""
    return isinstance(obj, _DType) and obj in _NAMES


def _check_dtype(dtype, name: str = "dtype") -> None:
    if not is_dtype(dtype):
        raise TypeError(
            f"{name} must be a dtype of this namespace (such as xp.float32), "
            f"got {dtype!r} of type {type(dtype).__name__}"
        )


def _check_array(x, name: str = "x") -> None:
    """TypeError unless x is an ember_tensor.Tensor (the namespace's array type)."""
    if not isinstance(x, _Tensor):
        raise TypeError(
            f"{name} must be an array (ember_tensor.Tensor), got {type(x).__name__}"
        )


def default_float_dtype():
    """The default real floating-point dtype: ember_tensor.get_default_dtype() (float32
    unless changed with ember_tensor.set_default_dtype)."""
    return _et.get_default_dtype()


def default_int_dtype():
    """The default integral (and indexing) dtype: int64."""
    return int64


def default_complex_dtype():
    """The default complex floating-point dtype: the complex dtype of the default real
    floating-point dtype's precision (complex64 for float32, complex128 for float64)."""
    return _COMPLEX_OF.get(default_float_dtype(), complex64)


def real_dtype(dtype):
    """The real floating-point dtype of a complex dtype's components (float32 for
    complex64); dtype itself for other dtypes."""
    return _REAL_OF.get(dtype, dtype)


def complex_dtype(dtype):
    """The complex dtype of a real floating-point dtype's precision (complex64 for float32,
    float16 and bfloat16; complex128 for float64); dtype itself for complex dtypes."""
    return dtype if dtype in _COMPLEX else _COMPLEX_OF[dtype]


# ---- type promotion ----


def _kind(dtype) -> str:
    if dtype == bool:
        return "b"
    if dtype in _SIGNED:
        return "i"
    if dtype in _UNSIGNED:
        return "u"
    if dtype in _COMPLEX:
        return "c"
    return "f"


def promote_types(a, b):
    """The dtype that a and b promote to under the standard's rules; TypeError if none.

    Within a kind the wider dtype wins; an unsigned with a signed integer gives the smallest
    signed integer holding both (uint8 + int8 -> int16, uint32 + int64 -> int64), and none
    exists for uint64 (TypeError); a complex with a real floating dtype gives the complex
    dtype of the wider precision (complex64 + float64 -> complex128); float16 and bfloat16
    (extensions) give float32. Bool, integer and floating-point dtypes never promote with
    one another.
    """
    _check_dtype(a, "first dtype")
    _check_dtype(b, "second dtype")
    if a == b:
        return a
    ka, kb = _kind(a), _kind(b)
    if ka == kb:
        if ka == "f" and {a, b} == {float16, bfloat16}:
            return float32
        return a if _BITS[a] >= _BITS[b] else b
    if {ka, kb} == {"f", "c"}:
        real, cplx = (a, b) if ka == "f" else (b, a)
        if real == float64:
            return complex128
        return cplx
    if {ka, kb} == {"i", "u"}:
        signed, unsigned = (a, b) if ka == "i" else (b, a)
        if _BITS[signed] > _BITS[unsigned]:
            return signed
        # the smallest signed integer wider than the unsigned one
        for cand in _SIGNED:
            if _BITS[cand] > _BITS[unsigned]:
                return cand
        raise TypeError(
            f"{dtype_name(a)} and {dtype_name(b)} cannot be promoted together: no signed "
            "integer dtype holds every uint64 value (cast explicitly with astype)"
        )
    raise TypeError(
        f"{dtype_name(a)} and {dtype_name(b)} cannot be promoted together: the array API "
        "standard defines no promotion between bool, integer and floating-point dtypes "
        "(cast explicitly with astype)"
    )


def _scalar_kind(value) -> str | None:
    """'b', 'i', 'f' or 'c' for a Python (or NumPy) scalar, None for anything else."""
    if isinstance(value, _builtins.bool):
        return "b"
    if isinstance(value, int):
        return "i"
    if isinstance(value, float):
        return "f"
    if isinstance(value, complex):
        return "c"
    try:  # NumPy scalars that do not subclass the Python types (np.float32, np.int8, ...)
        import numpy as np
    except ImportError:  # pragma: no cover
        return None
    if isinstance(value, np.bool_):
        return "b"
    if isinstance(value, np.integer):
        return "i"
    if isinstance(value, np.floating):
        return "f"
    if isinstance(value, np.complexfloating):
        return "c"
    return None


def promote_scalar(dtype, value):
    """The dtype of an operation between an array of dtype and the Python scalar value.

    Python scalars are weak (the standard's 2024.12 rules): a bool meets only bool arrays,
    an int integer or floating arrays (real or complex), a float floating arrays; the result
    keeps dtype. A complex meets complex arrays (the result keeps dtype) and real floating
    arrays (the result is the complex dtype of their precision: float32 -> complex64,
    float64 -> complex128); with bool or integer arrays it is a TypeError.
    """
    _check_dtype(dtype)
    kind = _scalar_kind(value)
    if kind is None:
        raise TypeError(f"expected a Python scalar, got {type(value).__name__}")
    dk = _kind(dtype)
    if kind == "b":
        ok = dk == "b"
    elif kind == "i":
        ok = dk in "iufc"
    elif kind == "f":
        ok = dk in "fc"
    else:
        ok = dk in "fc"
        if ok:
            return complex_dtype(dtype)
    if not ok:
        raise TypeError(
            f"a Python {type(value).__name__} cannot be combined with an array of dtype "
            f"{dtype_name(dtype)} under the array API type promotion rules"
        )
    return dtype


def result_type(*arrays_and_dtypes):
    """The dtype of an operation on the arguments (arrays, dtypes and Python scalars).

    At least one argument must be an array or a dtype (ValueError otherwise); TypeError for
    arguments of other types or dtypes that do not promote together.
    """
    dtypes = []
    scalars = []
    for i, a in enumerate(arrays_and_dtypes):
        if isinstance(a, _Tensor):
            dtypes.append(a.dtype)
        elif is_dtype(a):
            dtypes.append(a)
        elif _scalar_kind(a) is not None:
            scalars.append(a)
        else:
            raise TypeError(
                f"result_type: argument {i} must be an array, a dtype or a Python scalar, "
                f"got {type(a).__name__}"
            )
    if not dtypes:
        raise ValueError("result_type: at least one array or dtype is required")
    result = dtypes[0]
    for d in dtypes[1:]:
        result = promote_types(result, d)
    for s in scalars:
        result = promote_scalar(result, s)
    return result


def can_cast(from_, to, /) -> _builtins.bool:
    """True if from_ (a dtype or array) can be cast to the dtype to by type promotion,
    i.e. if promoting the two gives to (so no cast between kinds)."""
    if isinstance(from_, _Tensor):
        from_ = from_.dtype
    elif not is_dtype(from_):
        raise TypeError(
            f"can_cast: from_ must be a dtype or an array, got {type(from_).__name__}"
        )
    _check_dtype(to, "to")
    try:
        return promote_types(from_, to) == to
    except TypeError:
        return False


# ---- astype ----


def astype(x, dtype, /, *, copy=True, device=None):
    """x converted to dtype. With copy=False, x itself is returned when it already has
    dtype; otherwise the result is a new array. Casts are allowed between any real dtypes
    (floating to integer truncates toward zero; out-of-range values are unspecified, as in
    the standard) and from any dtype to a complex one; complex to bool gives True for
    nonzero values. Complex to a real numeric dtype is a TypeError, as the standard asks
    (cast ``real(x)`` or ``imag(x)``)."""
    from ._creation import _check_device

    _check_array(x)
    _check_dtype(dtype)
    _check_device(device)
    if x.dtype in _COMPLEX and dtype not in _COMPLEX and dtype != bool:
        raise TypeError(
            f"astype: cannot cast the complex array to {dtype_name(dtype)}: the array API "
            "standard does not permit it (cast real(x) or imag(x) instead)"
        )
    if x.dtype == dtype:
        return x.clone() if copy else x
    return x.to(dtype)


# ---- finfo / iinfo ----


class finfo_object:
    """Machine limits of a floating-point dtype (returned by finfo)."""

    __slots__ = ("bits", "eps", "max", "min", "smallest_normal", "dtype")

    def __init__(self, bits, eps, max, min, smallest_normal, dtype):
        self.bits = bits
        self.eps = eps
        self.max = max
        self.min = min
        self.smallest_normal = smallest_normal
        self.dtype = dtype

    def __repr__(self) -> str:
        return (
            f"finfo(bits={self.bits}, eps={self.eps!r}, max={self.max!r}, min={self.min!r}, "
            f"smallest_normal={self.smallest_normal!r}, dtype={dtype_name(self.dtype)})"
        )


class iinfo_object:
    """Machine limits of an integer dtype (returned by iinfo)."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, bits, max, min, dtype):
        self.bits = bits
        self.max = max
        self.min = min
        self.dtype = dtype

    def __repr__(self) -> str:
        return (
            f"iinfo(bits={self.bits}, max={self.max}, min={self.min}, "
            f"dtype={dtype_name(self.dtype)})"
        )


def _float_limits(mant_bits: int, max_exp: int):
    """(eps, max, smallest_normal) of a binary format with mant_bits explicit mantissa bits
    and largest exponent max_exp (IEEE-style; bfloat16: 7 and 127)."""
    eps = 2.0 ** -mant_bits
    big = (2.0 - eps) * 2.0 ** max_exp
    tiny = 2.0 ** (1 - max_exp)
    return eps, big, tiny


_FINFO = {
    float16: (16, *_float_limits(10, 15)),
    bfloat16: (16, *_float_limits(7, 127)),
    float32: (32, *_float_limits(23, 127)),
    float64: (64, *_float_limits(52, 1023)),
}


def _info_dtype(type_, fn: str):
    if isinstance(type_, _Tensor):
        return type_.dtype
    if is_dtype(type_):
        return type_
    raise TypeError(f"{fn}: expected a dtype or an array, got {type(type_).__name__}")


def finfo(type, /) -> finfo_object:
    """Limits of a floating-point dtype (or of an array's dtype): bits, eps, max, min,
    smallest_normal (Python floats) and dtype. For a complex dtype, the limits of its real
    and imaginary components, with their real dtype (finfo(complex64) == finfo(float32)
    field by field, dtype float32), as the standard asks. ValueError for a non-floating
    dtype."""
    dtype = real_dtype(_info_dtype(type, "finfo"))
    if dtype not in _FINFO:
        raise ValueError(f"finfo: {dtype_name(dtype)} is not a floating-point dtype")
    bits, eps, big, tiny = _FINFO[dtype]
    return finfo_object(bits, eps, big, -big, tiny, dtype)


def iinfo(type, /) -> iinfo_object:
    """Limits of an integer dtype (or of an array's dtype): bits, max, min (Python ints)
    and dtype. ValueError for a non-integer dtype (bool included)."""
    dtype = _info_dtype(type, "iinfo")
    if dtype not in _INTEGRAL:
        raise ValueError(f"iinfo: {dtype_name(dtype)} is not an integer dtype")
    bits = _BITS[dtype]
    if dtype in _UNSIGNED:
        return iinfo_object(bits, 2**bits - 1, 0, dtype)
    return iinfo_object(bits, 2 ** (bits - 1) - 1, -(2 ** (bits - 1)), dtype)


# ---- isdtype ----

_KINDS = {
    "bool": _BOOLS,
    "signed integer": _SIGNED,
    "unsigned integer": _UNSIGNED,
    "integral": _INTEGRAL,
    "real floating": _FLOATS,
    "complex floating": _COMPLEX,
    "numeric": _NUMERIC,
}


def isdtype(dtype, kind) -> _builtins.bool:
    """True if dtype is of kind: a dtype, one of 'bool', 'signed integer', 'unsigned
    integer', 'integral', 'real floating', 'complex floating', 'numeric', or a tuple of
    these (true if any matches). float16 and bfloat16 are 'real floating'; 'numeric'
    covers the integer, real floating and complex floating dtypes."""
    if not is_dtype(dtype):
        raise TypeError(f"isdtype: dtype must be a dtype, got {type(dtype).__name__}")
    if isinstance(kind, tuple):
        for k in kind:
            if isinstance(k, tuple):
                raise TypeError("isdtype: kind tuples cannot be nested")
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        try:
            return dtype in _KINDS[kind]
        except KeyError:
            raise ValueError(
                f"isdtype: unknown kind {kind!r}; expected one of {', '.join(map(repr, _KINDS))}"
            ) from None
    if is_dtype(kind):
        return dtype == kind
    raise TypeError(
        f"isdtype: kind must be a dtype, a kind name or a tuple of them, "
        f"got {type(kind).__name__}"
    )



# ---- computing through int64 where the core lacks an unsigned kernel ----

_INT64_MIN_ARRAY = None
_U64 = uint64  # call_core's parameter uint64 shadows the dtype


def _flip_sign_bit(x):
    """The int64 array x with its sign bit flipped: maps uint64 bit patterns (read as
    int64) to int64 values in the same order, and back."""
    global _INT64_MIN_ARRAY
    if _INT64_MIN_ARRAY is None:
        _INT64_MIN_ARRAY = _et.full((), -(2**63), dtype=int64)
    return _et.bitwise_xor(x, _INT64_MIN_ARRAY)


def call_core(fn: str, core, *args, same: _builtins.bool = True, uint64: str | None = None,
              **kwargs):
    """core(*args, **kwargs); where the core has no kernel for an unsigned dtype of the
    arrays in args (a RuntimeError "... is not supported"), the same op computed in int64.

    uint16 and uint32 arrays are cast to int64, which holds all their values, so any op is
    exact there. uint64 arrays are handled as uint64 says: "wrap" reads their bits as int64,
    which is exact for modular arithmetic (add, subtract, multiply, sums, products, bitwise
    ops); "order" maps them to int64 in the same order (comparisons, max/min, sorting);
    None refuses (TypeError naming fn). same: the result holds values of the arrays' dtype
    (cast back to it; otherwise, e.g. bool or index results, it is returned as computed);
    for a tuple result (values, indices) only the first item is cast back.
    """
    try:
        return core(*args, **kwargs)
    except RuntimeError as e:
        if "is not supported" not in str(e):
            raise
        dtypes = {a.dtype for a in args if isinstance(a, _Tensor)}
        wide = [d for d in (_U64, uint32, uint16) if d in dtypes]
        if not wide:
            raise
        dt = wide[0]
        if dt == _U64 and uint64 is None:
            raise TypeError(
                f"{fn}: uint64 arrays are not supported yet (the core has no uint64 kernel "
                "for this operation); cast to another dtype with astype"
            ) from None
    order = dt == _U64 and uint64 == "order"

    def widen(a):
        if not isinstance(a, _Tensor) or a.dtype not in (uint16, uint32, _U64):
            return a
        a = a.to(int64)
        return _flip_sign_bit(a) if order else a

    r = core(*[widen(a) for a in args], **kwargs)

    def narrow(t):
        if not same or not isinstance(t, _Tensor) or t.dtype != int64:
            return t
        return (_flip_sign_bit(t) if order else t).to(dt)

    if isinstance(r, tuple):  # (values, indices): only the values are cast back
        items = [narrow(r[0]), *r[1:]]
        return type(r)(*items) if hasattr(r, "_fields") else tuple(items)
    return narrow(r)
