"""(array API) Constants (e, inf, nan, newaxis, pi), data types and the data type
functions: astype, can_cast, finfo, iinfo, isdtype, result_type.

The standard's dtypes supported by the core are bool, int8, int16, int32, int64, uint8,
float32 and float64. uint16, uint32, uint64, complex64 and complex128 do not exist in the
core, so they are absent from this namespace. float16 and bfloat16 are exported as
extensions: they are real floating-point dtypes for ``isdtype``, ``finfo`` and ``astype``
but are not array API dtypes, so ``__array_namespace_info__().dtypes()`` leaves them out.

Type promotion follows the standard's table, not PyTorch's: there is no promotion between
kinds (bool, integer, floating), so ``result_type(int8, float32)`` raises TypeError; uint8
with intN gives the smallest signed type holding both (uint8 + int8 -> int16). The
extensions promote as in PyTorch (float16 + bfloat16 -> float32). Python scalars are weak
(2024.12): they take the dtype of the arrays they meet, if their kind fits.

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
    "float32",
    "float64",
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
float32 = _et.float32
float64 = _et.float64
# extensions (not array API dtypes)
float16 = _et.float16
bfloat16 = _et.bfloat16

_Tensor = _et.Tensor
_DType = _et.dtype

_SIGNED = (int8, int16, int32, int64)
_UNSIGNED = (uint8,)
_INTEGRAL = _SIGNED + _UNSIGNED
_STANDARD_FLOATS = (float32, float64)
_FLOATS = (float16, bfloat16, float32, float64)
_BOOLS = (bool,)
_NUMERIC = _INTEGRAL + _FLOATS
_ALL = _BOOLS + _NUMERIC
# the array API dtypes this namespace supports (what info().dtypes() lists)
STANDARD_DTYPES = _BOOLS + _SIGNED + _UNSIGNED + _STANDARD_FLOATS

_NAMES = {
    bool: "bool", int8: "int8", int16: "int16", int32: "int32", int64: "int64",
    uint8: "uint8", float16: "float16", bfloat16: "bfloat16", float32: "float32",
    float64: "float64",
}
_BITS = {
    bool: 8, int8: 8, int16: 16, int32: 32, int64: 64, uint8: 8,
    float16: 16, bfloat16: 16, float32: 32, float64: 64,
}


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


# ---- type promotion ----


def _kind(dtype) -> str:
    if dtype == bool:
        return "b"
    if dtype in _SIGNED:
        return "i"
    if dtype in _UNSIGNED:
        return "u"
    return "f"


def promote_types(a, b):
    """The dtype that a and b promote to under the standard's rules; TypeError if none.

    Within a kind the wider dtype wins; uint8 with int8 gives int16, with a wider signed
    integer that integer; float16 and bfloat16 (extensions) give float32. Bool, integer and
    floating dtypes never promote with one another.
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
    if {ka, kb} == {"i", "u"}:
        signed, unsigned = (a, b) if ka == "i" else (b, a)
        if _BITS[signed] > _BITS[unsigned]:
            return signed
        # the smallest signed integer wider than the unsigned one
        for cand in _SIGNED:
            if _BITS[cand] > _BITS[unsigned]:
                return cand
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
    an int integer or floating arrays, a float floating arrays; the result keeps dtype.
    Complex scalars need complex dtypes, which this namespace lacks: TypeError.
    """
    _check_dtype(dtype)
    kind = _scalar_kind(value)
    if kind is None:
        raise TypeError(f"expected a Python scalar, got {type(value).__name__}")
    dk = _kind(dtype)
    if kind == "b":
        ok = dk == "b"
    elif kind == "i":
        ok = dk in "iuf"
    elif kind == "f":
        ok = dk == "f"
    else:
        raise TypeError(
            "complex scalars are not supported: this namespace has no complex dtypes"
        )
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
    dtype; otherwise the result is a new array. Any cast is allowed (floating to integer
    truncates toward zero; out-of-range values are unspecified, as in the standard)."""
    from ._creation import _check_device

    _check_array(x)
    _check_dtype(dtype)
    _check_device(device)
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
    smallest_normal (Python floats) and dtype. ValueError for a non-floating dtype."""
    dtype = _info_dtype(type, "finfo")
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
    "complex floating": (),
    "numeric": _NUMERIC,
}


def isdtype(dtype, kind) -> _builtins.bool:
    """True if dtype is of kind: a dtype, one of 'bool', 'signed integer', 'unsigned
    integer', 'integral', 'real floating', 'complex floating', 'numeric', or a tuple of
    these (true if any matches). float16 and bfloat16 are 'real floating'."""
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

