"""(array API) Creation functions, and the array API members of ``Tensor``.

Defaults (implementation-defined in the standard): the default real floating-point dtype
is ``ember_tensor.get_default_dtype()`` (float32 unless changed, as in PyTorch, where NumPy
uses float64), the default complex dtype the complex dtype of its precision (complex64 or
complex128); the default integral dtype is int64. Python ints up to 2**64 - 1 fill uint64
arrays (the core reads ints as int64: larger ones are passed wrapped, which the cast to
uint64 undoes). The only device is the cpu:
``device=`` takes None, the cpu device object (``x.device``, ``ember_tensor.device("cpu")``)
or the string ``"cpu"``; anything else is a ValueError.

``_tensor_array_namespace``, ``_tensor_to_device`` and ``_tensor_mT`` are the bodies of
``Tensor.__array_namespace__``, ``Tensor.to_device`` and ``Tensor.mT`` (attached by
ember_tensor/__init__.py, which imports this namespace on their first use).
"""

from __future__ import annotations

import builtins as _builtins
import functools as _functools
import operator as _operator
import sys as _sys
from collections.abc import Sequence as _Sequence

import ember_tensor as _et

from . import _dtypes as _dt
from ._dtypes import _check_array

_C = _et._C

__all__ = [
    "arange",
    "asarray",
    "empty",
    "empty_like",
    "eye",
    "from_dlpack",
    "full",
    "full_like",
    "linspace",
    "meshgrid",
    "ones",
    "ones_like",
    "tril",
    "triu",
    "zeros",
    "zeros_like",
]

_SUPPORTED_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


# ---- argument checks shared by the namespace ----


def _check_device(device) -> None:
    """ValueError unless device is None or the cpu device (a device object or "cpu")."""
    if device is None:
        return
    if isinstance(device, _et.device):
        if device.type == "cpu":
            return
    elif isinstance(device, str):
        try:
            if _et.device(device).type == "cpu":
                return
        except (ValueError, RuntimeError, TypeError):
            pass
    raise ValueError(
        f"unsupported device {device!r}: only the cpu device exists "
        "(see __array_namespace_info__().devices())"
    )


def _check_dtype_arg(dtype) -> None:
    if dtype is not None:
        _dt._check_dtype(dtype)


def _as_int(value, name: str) -> int:
    if isinstance(value, _builtins.bool):
        return int(value)
    try:
        return _operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None


def _normalize_shape(shape, fn: str) -> tuple:
    if isinstance(shape, (tuple, list)):
        dims = tuple(_as_int(s, f"{fn}: shape entries") for s in shape)
    else:
        dims = (_as_int(shape, f"{fn}: shape"),)
    if any(d < 0 for d in dims):
        raise ValueError(f"{fn}: negative dimensions are not allowed, got shape {dims}")
    return dims


def _python_scalar(value, name: str):
    """(kind, value as a Python bool/int/float/complex) for a scalar ('b', 'i', 'f' or
    'c'); TypeError for anything else."""
    kind = _dt._scalar_kind(value)
    if kind is None:
        raise TypeError(f"{name} must be a Python scalar, got {type(value).__name__}")
    conv = {"b": _builtins.bool, "i": int, "f": float, "c": complex}[kind]
    return kind, conv(value)


def _default_dtype_for(kind: str):
    if kind == "b":
        return _dt.bool
    if kind == "i":
        return _dt.default_int_dtype()
    if kind == "c":
        return _dt.default_complex_dtype()
    return _dt.default_float_dtype()


def _wrap_uint64(values):
    """Python ints above the int64 range (nested lists of them) wrapped into it (v - 2**64),
    for the core, which reads ints as int64; its cast to uint64 wraps them back."""
    if isinstance(values, list):
        return [_wrap_uint64(v) for v in values]
    if type(values) is int and values > _INT64_MAX:
        return values - 2**64
    return values


def _check_int_range(lo, hi, dtype, fn: str) -> None:
    """OverflowError if Python ints in [lo, hi] do not fit the integer dtype."""
    if lo is None or not _dt.isdtype(dtype, "integral"):
        return
    info = _dt.iinfo(dtype)
    if lo < info.min or hi > info.max:
        bad = lo if lo < info.min else hi
        raise OverflowError(
            f"{fn}: Python int {bad} is out of bounds for {_dt.dtype_name(dtype)}"
        )


# ---- empty / zeros / ones / full ----


def empty(shape, *, dtype=None, device=None):
    """An uninitialised array of shape (default dtype: the default float dtype)."""
    _check_device(device)
    _check_dtype_arg(dtype)
    shape = _normalize_shape(shape, "empty")
    return _C.empty(shape, dtype=dtype or _dt.default_float_dtype())


def zeros(shape, *, dtype=None, device=None):
    """An array of zeros of shape (default dtype: the default float dtype)."""
    _check_device(device)
    _check_dtype_arg(dtype)
    shape = _normalize_shape(shape, "zeros")
    return _C.zeros(shape, dtype=dtype or _dt.default_float_dtype())


def ones(shape, *, dtype=None, device=None):
    """An array of ones of shape (default dtype: the default float dtype)."""
    _check_device(device)
    _check_dtype_arg(dtype)
    shape = _normalize_shape(shape, "ones")
    return _C.ones(shape, dtype=dtype or _dt.default_float_dtype())


def _fill_value(fill_value, dtype, fn: str):
    """(value, dtype) for full/full_like: the dtype inferred from fill_value when None."""
    kind, value = _python_scalar(fill_value, f"{fn}: fill_value")
    if dtype is None:
        dtype = _default_dtype_for(kind)
    if kind == "c" and not _dt.isdtype(dtype, "complex floating"):
        raise TypeError(
            f"{fn}: a complex fill_value needs a complex dtype, got {_dt.dtype_name(dtype)}"
        )
    if kind == "i":
        _check_int_range(value, value, dtype, fn)
        value = _wrap_uint64(value)
    return value, dtype


def full(shape, fill_value, *, dtype=None, device=None):
    """An array of shape filled with fill_value; dtype inferred from it when None (bool ->
    bool, int -> int64, float -> the default float dtype, complex -> the default complex
    dtype)."""
    _check_device(device)
    _check_dtype_arg(dtype)
    shape = _normalize_shape(shape, "full")
    value, dtype = _fill_value(fill_value, dtype, "full")
    return _C.full(shape, value, dtype=dtype)


def empty_like(x, /, *, dtype=None, device=None):
    """An uninitialised array with x's shape and (unless given) dtype."""
    _check_array(x)
    _check_device(device)
    _check_dtype_arg(dtype)
    return _C.empty_like(x, dtype=dtype or x.dtype)


def zeros_like(x, /, *, dtype=None, device=None):
    """Zeros with x's shape and (unless given) dtype."""
    _check_array(x)
    _check_device(device)
    _check_dtype_arg(dtype)
    return _C.zeros_like(x, dtype=dtype or x.dtype)


def ones_like(x, /, *, dtype=None, device=None):
    """Ones with x's shape and (unless given) dtype."""
    _check_array(x)
    _check_device(device)
    _check_dtype_arg(dtype)
    return _C.ones_like(x, dtype=dtype or x.dtype)


def full_like(x, /, fill_value, *, dtype=None, device=None):
    """fill_value with x's shape and (unless given) dtype."""
    _check_array(x)
    _check_device(device)
    _check_dtype_arg(dtype)
    value, dtype = _fill_value(fill_value, dtype or x.dtype, "full_like")
    return _C.full_like(x, value, dtype=dtype)


# ---- ranges ----


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    """Values from start (inclusive) to stop (exclusive) spaced by step; arange(n) is
    [0, n). The length is ceil((stop - start) / step) (0 if negative). dtype: the default
    integer dtype when start, stop and step are ints, else the default float dtype."""
    _check_device(device)
    _check_dtype_arg(dtype)
    if stop is None:
        start, stop = 0, start
    kinds = []
    vals = []
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        kind, v = _python_scalar(v, f"arange: {name}")
        if kind == "c":
            raise TypeError(f"arange: {name} must be real, got a complex value")
        kinds.append(kind)
        vals.append(v)
    start, stop, step = vals
    if step == 0:
        raise ValueError("arange: step must not be zero")
    floating = "f" in kinds
    if dtype is None:
        dtype = _dt.default_float_dtype() if floating else _dt.default_int_dtype()
    if floating:
        n = (stop - start) / step
        if n != n or n in (float("inf"), float("-inf")):
            raise ValueError(f"arange: cannot compute a length from {start}, {stop}, {step}")
        n = max(0, -int(-n // 1))  # ceil
        values = _C.arange(n, dtype=_dt.float64) * step + start
    else:
        start, stop, step = int(start), int(stop), int(step)
        n = max(0, -((start - stop) // step))  # ceil((stop - start) / step)
        if n:
            _check_int_range(min(start, start + (n - 1) * step),
                             max(start, start + (n - 1) * step),
                             dtype if _dt.isdtype(dtype, "integral") else _dt.int64,
                             "arange")
        values = _C.arange(n, dtype=_dt.int64)
        if step != 1:
            values = values * step
        if start != 0:
            values = values + start
    return values if values.dtype == dtype else values.to(dtype)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """num evenly spaced values from start to stop (stop included when endpoint). Computed
    in float64 then cast (the NumPy algorithm), so float32 results equal NumPy's; integer
    dtypes get the floor of the values. dtype: the default float dtype when None, the
    default complex dtype when start or stop is complex (complex dtypes: the real and
    imaginary parts are spaced separately, each as a real linspace)."""
    _check_device(device)
    _check_dtype_arg(dtype)
    k1, start = _python_scalar(start, "linspace: start")
    k2, stop = _python_scalar(stop, "linspace: stop")
    num = _as_int(num, "linspace: num")
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    is_complex = "c" in (k1, k2)
    if dtype is None:
        dtype = _dt.default_complex_dtype() if is_complex else _dt.default_float_dtype()
    if _dt.isdtype(dtype, "complex floating"):
        start, stop = complex(start), complex(stop)
        real_dtype = _dt.real_dtype(dtype)
        re = linspace(start.real, stop.real, num, dtype=real_dtype, endpoint=endpoint)
        im = linspace(start.imag, stop.imag, num, dtype=real_dtype, endpoint=endpoint)
        return _et.view_as_complex(_et.stack([re, im], -1).contiguous())
    if is_complex:
        raise TypeError(
            f"linspace: complex start or stop needs a complex dtype, got "
            f"{_dt.dtype_name(dtype)}"
        )
    start, stop = float(start), float(stop)
    div = num - 1 if endpoint else num
    delta = stop - start
    y = _C.arange(num, dtype=_dt.float64)
    if div > 0:
        step = delta / div
        y = y / div * delta if step == 0 else y * step
    else:
        y = y * delta
    y = y + start
    if endpoint and num > 1:
        y[-1] = stop
    if _dt.isdtype(dtype, "integral"):
        y = y.floor()
    return y if y.dtype == dtype else y.to(dtype)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """An (n_rows, n_cols) array with ones on the k-th diagonal (k > 0: above the main
    diagonal) and zeros elsewhere; n_cols defaults to n_rows."""
    _check_device(device)
    _check_dtype_arg(dtype)
    n_rows = _as_int(n_rows, "eye: n_rows")
    n_cols = n_rows if n_cols is None else _as_int(n_cols, "eye: n_cols")
    k = _as_int(k, "eye: k")
    if n_rows < 0 or n_cols < 0:
        raise ValueError(f"eye: sizes must be non-negative, got ({n_rows}, {n_cols})")
    out = _C.zeros((n_rows, n_cols), dtype=dtype or _dt.default_float_dtype())
    if -n_rows < k < n_cols:
        out.diagonal(k).fill_(1)
    return out


def meshgrid(*arrays, indexing="xy"):
    """Coordinate matrices from one-dimensional arrays (a list of new arrays). indexing
    'xy' (Cartesian: the first two dimensions swapped) or 'ij' (matrix). The arrays must
    share one dtype."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    for i, a in enumerate(arrays):
        _check_array(a, f"meshgrid: arrays[{i}]")
        if a.dim() != 1:
            raise ValueError(
                f"meshgrid: arrays must be one-dimensional, arrays[{i}] has shape "
                f"{tuple(a.shape)}"
            )
    if len({a.dtype for a in arrays}) > 1:
        raise ValueError(
            "meshgrid: arrays must share one dtype, got "
            + ", ".join(_dt.dtype_name(a.dtype) for a in arrays)
        )
    shape = [a.shape[0] for a in arrays]
    axes = list(range(len(arrays)))
    if indexing == "xy" and len(arrays) > 1:
        shape[0], shape[1] = shape[1], shape[0]
        axes[0], axes[1] = 1, 0
    out = []
    for a, axis in zip(arrays, axes):
        view = [1] * len(arrays)
        view[axis] = -1
        out.append(a.reshape(view).broadcast_to(shape).clone())
    return out


def tril(x, /, *, k=0):
    """x with the elements above the k-th diagonal of its last two dimensions zeroed."""
    _check_array(x)
    if x.dim() < 2:
        raise ValueError(f"tril: x must have at least two dimensions, got shape {tuple(x.shape)}")
    return _C.tril(x, _as_int(k, "tril: k"))


def triu(x, /, *, k=0):
    """x with the elements below the k-th diagonal of its last two dimensions zeroed."""
    _check_array(x)
    if x.dim() < 2:
        raise ValueError(f"triu: x must have at least two dimensions, got shape {tuple(x.shape)}")
    return _C.triu(x, _as_int(k, "triu: k"))


# ---- asarray / from_dlpack ----


def from_dlpack(x, /, *, device=None, copy=None):
    """An array sharing memory with x (an object with __dlpack__, or a DLPack capsule).
    copy=True always copies; copy=False never does (BufferError if it would be needed).
    Read-only NumPy arrays are copied (Ember arrays are always writable)."""
    _check_device(device)
    np = _sys.modules.get("numpy")
    if np is not None and isinstance(x, np.ndarray) and not x.flags.writeable:
        if copy is False:
            raise BufferError(
                "from_dlpack: copy=False, but the array is read-only and Ember arrays are "
                "always writable: a copy is needed"
            )
        copy = True
    return _C.from_dlpack(x, copy=copy)


_PLAIN_SCALARS = {_builtins.bool, int, float, complex}
_PLAIN_KINDS = {_builtins.bool: "b", int: "i", float: "f", complex: "c"}


_KIND_RANK = {"b": 0, "i": 1, "f": 2, "c": 3}


def _array_kind(dtype) -> str:
    return ("b" if dtype == _dt.bool else "c" if _dt.isdtype(dtype, "complex floating")
            else "f" if _dt.isdtype(dtype, "real floating") else "i")


def _walk(obj, depth: int, state: dict):
    """obj (a nested sequence of scalars and 0-d arrays) as nested lists of Python scalars;
    records the kinds of the Python scalars, the dtypes of the 0-d arrays and the int range
    in state. Returns (normalized, shape)."""
    if isinstance(obj, _et.Tensor) and obj.dim() == 0:  # as PyTorch's tensor() reads it
        state["arrays"].add(obj.dtype)
        value = obj.item()
        if type(value) is int:
            state["lo"] = value if state["lo"] is None else min(state["lo"], value)
            state["hi"] = value if state["hi"] is None else max(state["hi"], value)
        return value, ()
    kind = _dt._scalar_kind(obj)
    if kind is not None:
        state["kinds"].add(kind)
        if kind == "b":
            return _builtins.bool(obj), ()
        if kind == "c":
            return complex(obj), ()
        if kind == "i":
            obj = int(obj)
            state["lo"] = obj if state["lo"] is None else min(state["lo"], obj)
            state["hi"] = obj if state["hi"] is None else max(state["hi"], obj)
            return obj, ()
        return float(obj), ()
    if isinstance(obj, _et.Tensor):
        raise TypeError(
            "asarray: nested sequences may only hold Python scalars and 0-d arrays, not "
            f"arrays with dimensions (got shape {tuple(obj.shape)}; use stack to join arrays)"
        )
    if not isinstance(obj, _Sequence) or isinstance(obj, (str, bytes, bytearray)):
        raise TypeError(
            f"asarray: nested sequences may only hold Python scalars, got "
            f"{type(obj).__name__}"
        )
    types = set(map(type, obj))
    if types and types <= _PLAIN_SCALARS:  # fast path: a flat run of Python scalars
        if int in types:
            ints = [v for v in obj if type(v) is int] if len(types) > 1 else obj
            lo, hi = min(ints), max(ints)
            state["lo"] = lo if state["lo"] is None else min(state["lo"], lo)
            state["hi"] = hi if state["hi"] is None else max(state["hi"], hi)
        state["kinds"].update(_PLAIN_KINDS[t] for t in types)
        return list(obj), (len(obj),)
    items = []
    inner = None
    for item in obj:
        value, shape = _walk(item, depth + 1, state)
        if inner is None:
            inner = shape
        elif shape != inner:
            raise ValueError(
                f"asarray: ragged nested sequence: at depth {depth + 1}, an element has "
                f"shape {shape} where an earlier one has shape {inner}"
            )
        items.append(value)
    return items, (len(items), *(inner or ()))


def _ints_to_floats(values):
    if isinstance(values, list):
        return [_ints_to_floats(v) for v in values]
    return float(values) if type(values) is int else values


def _numpy_dtype_ok(arr) -> None:
    if arr.dtype.kind not in "biufc" or arr.dtype.itemsize > (
        16 if arr.dtype.kind == "c" else 8
    ):
        raise TypeError(
            f"asarray: unsupported dtype {arr.dtype}; supported: bool, int8, int16, int32, "
            "int64, uint8, uint16, uint32, uint64, float16, float32, float64, complex64, "
            "complex128"
        )


def _from_numpy_array(arr, copy):
    """(tensor, copied) for a NumPy array. Read-only or byte-swapped arrays are copied
    (Ember tensors are always writable), so copy=False raises for them."""
    np = _sys.modules["numpy"]
    _numpy_dtype_ok(arr)
    copied = False
    if not arr.flags.writeable or not arr.dtype.isnative:
        if copy is False:
            raise ValueError(
                "asarray: copy=False, but the input is read-only or not in native byte "
                "order, and Ember arrays are always writable native arrays: a copy is needed"
            )
        arr = np.array(arr, dtype=arr.dtype.newbyteorder("="), copy=True)
        copied = True
    try:
        return _C.from_dlpack(arr), copied
    except BufferError:  # layouts DLPack cannot describe
        if copy is False:
            raise ValueError(
                "asarray: copy=False, but the input's memory layout needs a copy"
            ) from None
        return _C.from_dlpack(np.ascontiguousarray(arr)), True


def _asarray_external(obj, copy):
    """(tensor, copied) for DLPack producers, buffers and objects NumPy can convert."""
    np = _sys.modules.get("numpy")
    if np is not None and isinstance(obj, np.ndarray):
        return _from_numpy_array(obj, copy)
    if hasattr(obj, "__dlpack__"):
        try:
            return _C.from_dlpack(obj), False
        except (BufferError, RuntimeError, TypeError, ValueError):
            if not (hasattr(obj, "__array__") or hasattr(obj, "__array_interface__")):
                raise
    import numpy as np

    if isinstance(obj, np.generic):  # NumPy scalars are immutable: always a copy
        if copy is False:
            raise ValueError("asarray: copy=False, but a NumPy scalar must be copied")
        t, _ = _from_numpy_array(np.array(obj), None)
        return t, True
    try:
        mv = memoryview(obj)
    except TypeError:
        mv = None
    if mv is not None:
        return _from_numpy_array(np.asarray(mv), copy)
    if hasattr(obj, "__array__") or hasattr(obj, "__array_interface__"):
        arr = np.asarray(obj, copy=False if copy is False else None)
        return _from_numpy_array(arr, copy)
    raise TypeError(
        f"asarray: cannot convert {type(obj).__name__} to an array (expected an array, a "
        "Python scalar, a nested sequence, or an object supporting the buffer protocol "
        "or DLPack)"
    )


def _is_python_data(obj) -> _builtins.bool:
    """True for Python scalars and nested sequences (not for NumPy scalars, strings, or
    sequences that are buffers, like array.array, or DLPack producers)."""
    if isinstance(obj, (list, tuple)):
        return True
    np = _sys.modules.get("numpy")
    if np is not None and isinstance(obj, (np.generic, np.ndarray)):
        return False
    if _dt._scalar_kind(obj) is not None:
        return True
    if not isinstance(obj, _Sequence) or isinstance(obj, (str, bytes, bytearray)):
        return False
    if hasattr(obj, "__dlpack__") or hasattr(obj, "__array__"):
        return False
    try:
        memoryview(obj)
    except TypeError:
        return True
    return False


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """obj as an array.

    obj: an array, a Python scalar, a nested sequence of Python scalars (and 0-d arrays,
    read as their values, as PyTorch's ``tensor()`` reads them), an object with
    __dlpack__ (NumPy arrays, other libraries' tensors), or one supporting the buffer
    protocol. dtype, when None, is obj's own for arrays and buffers, and for Python values
    bool if all are bools, int64 if all are ints (or bools and ints), the default complex
    dtype if any is complex, else the default float dtype; 0-d arrays in a sequence give
    their promoted dtype unless a Python scalar of a higher kind is among them. copy: True always
    copies; None shares memory when possible; False never copies (ValueError when a copy
    is needed: Python scalars and sequences, dtype conversions, read-only inputs).
    """
    _check_device(device)
    _check_dtype_arg(dtype)
    copied = False
    if isinstance(obj, _et.Tensor):
        t = obj
    else:
        if _is_python_data(obj):
            if copy is False:
                raise ValueError(
                    "asarray: copy=False, but converting a Python scalar or sequence "
                    "always makes a copy"
                )
            state = {"kinds": set(), "arrays": set(), "lo": None, "hi": None}
            values, _ = _walk(obj, 0, state)
            kinds = state["kinds"]
            if dtype is None:
                dtype = (
                    _dt.default_complex_dtype() if "c" in kinds
                    else _dt.default_float_dtype() if "f" in kinds or not kinds
                    else _dt.default_int_dtype() if "i" in kinds
                    else _dt.bool
                )
                if state["arrays"]:  # 0-d arrays: their promoted dtype (across kinds as
                    # NumPy and PyTorch), unless a Python scalar is of a higher kind
                    arrays = _functools.reduce(_et.promote_types, state["arrays"])
                    top = _builtins.max((_KIND_RANK[k] for k in kinds), default=-1)
                    if top <= _KIND_RANK[_array_kind(arrays)]:
                        dtype = arrays
            kinds = kinds | {_array_kind(d) for d in state["arrays"]}
            if "c" in kinds and not _dt.isdtype(dtype, "complex floating"):
                raise TypeError(
                    "asarray: complex values need a complex dtype, got "
                    f"{_dt.dtype_name(dtype)}"
                )
            _check_int_range(state["lo"], state["hi"], dtype, "asarray")
            if state["lo"] is not None and (
                state["lo"] < _INT64_MIN or state["hi"] > _INT64_MAX
            ):
                if dtype == _dt.uint64:  # wrapped into int64 for the core
                    values = _wrap_uint64(values)
                else:  # ints beyond int64 (for a floating dtype): read as floats
                    values = _ints_to_floats(values)
            return _C.tensor(values, dtype=dtype)
        if isinstance(obj, str):
            raise TypeError("asarray: cannot convert a str to an array")
        t, copied = _asarray_external(obj, copy)
    if dtype is not None and t.dtype != dtype:
        if copy is False:
            raise ValueError(
                f"asarray: copy=False, but converting {_dt.dtype_name(t.dtype)} to "
                f"{_dt.dtype_name(dtype)} needs a copy"
            )
        return t.to(dtype)
    if copy and not copied:
        return t.clone()
    return t


# ---- array API members of Tensor ----


def _tensor_array_namespace(self, /, *, api_version=None):
    """The array API namespace of the array: ember_tensor.array_api (which implements
    2024.12 and serves the earlier versions too)."""
    if api_version is not None:
        if not isinstance(api_version, str):
            raise TypeError(
                f"api_version must be a str or None, got {type(api_version).__name__}"
            )
        if api_version not in _SUPPORTED_API_VERSIONS:
            raise ValueError(
                f"unsupported array API version {api_version!r}; supported: "
                f"{', '.join(_SUPPORTED_API_VERSIONS)}"
            )
    import ember_tensor.array_api as namespace

    return namespace


def _tensor_to_device(self, device, /, *, stream=None):
    """The array on device: self, since the cpu is the only device (ValueError for any
    other device, or for a stream, which the cpu does not have)."""
    _check_device(device)
    if device is None:
        raise ValueError("to_device: device must be a device, got None")
    if stream is not None:
        raise ValueError("to_device: the cpu device has no streams; stream must be None")
    return self


def _tensor_mT(self):
    """The transpose of the last two dimensions (a view). Below two dimensions: a
    RuntimeError, as PyTorch raises (the standard asks for an error of unspecified type)."""
    if self.dim() < 2:
        raise RuntimeError(
            "mT is only supported on matrices or batches of matrices (at least two "
            f"dimensions), got shape {tuple(self.shape)}"
        )
    return self.transpose(-2, -1)
