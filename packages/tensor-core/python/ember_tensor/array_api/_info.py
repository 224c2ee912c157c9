"""(array API) __array_namespace_info__: what this namespace supports.

Only the cpu device exists. The supported array API dtypes are all of the standard's: bool,
int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, complex64 and
complex128 (float16 and bfloat16 are extensions of the namespace, not array API dtypes, so
they are not listed). The default real floating-point dtype is
``ember_tensor.get_default_dtype()`` (float32 unless changed), the default complex
floating-point dtype the complex dtype of the same precision (complex64, or complex128 when
the default is float64); the default integral and indexing dtype is int64. Arrays have no
limit on their number of dimensions (``"max dimensions": None``).

The standard's capabilities do not cover extensions: they are found as attributes of the
namespace. ``xp.linalg`` (the linear algebra extension) and ``xp.fft`` (the Fourier
transform extension) are present.
"""

from __future__ import annotations

import ember_tensor as _et

from . import _dtypes as _dt

_KIND_DTYPES = {
    "bool": _dt._BOOLS,
    "signed integer": _dt._SIGNED,
    "unsigned integer": _dt._UNSIGNED,
    "integral": _dt._INTEGRAL,
    "real floating": _dt._STANDARD_FLOATS,
    "complex floating": _dt._COMPLEX,
    "numeric": _dt._INTEGRAL + _dt._STANDARD_FLOATS + _dt._COMPLEX,
}


class Info:
    """The inspection namespace of ``ember_tensor.array_api`` (array API 2024.12)."""

    __slots__ = ()

    def capabilities(self) -> dict:
        """{"boolean indexing": True, "data-dependent shapes": True,
        "max dimensions": None} (no limit on the number of dimensions). Extensions are not
        capabilities: ``hasattr(xp, "linalg")`` and ``hasattr(xp, "fft")`` are True."""
        return {
            "boolean indexing": True,
            "data-dependent shapes": True,
            "max dimensions": None,
        }

    def default_device(self):
        """The cpu device, the only one."""
        return _et.device("cpu")

    def default_dtypes(self, *, device=None) -> dict:
        """The default dtypes: real floating ember_tensor.get_default_dtype() (float32
        unless changed), complex floating the complex dtype of its precision (complex64 or
        complex128), integral and indexing int64."""
        from ._creation import _check_device

        _check_device(device)
        return {
            "real floating": _dt.default_float_dtype(),
            "complex floating": _dt.default_complex_dtype(),
            "integral": _dt.default_int_dtype(),
            "indexing": _dt.default_int_dtype(),
        }

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The supported array API dtypes (of kind, a kind name or a tuple of them) as a
        dict from name to dtype."""
        from ._creation import _check_device

        _check_device(device)
        if kind is None:
            selected = _dt.STANDARD_DTYPES
        elif isinstance(kind, str):
            if kind not in _KIND_DTYPES:
                raise ValueError(
                    f"dtypes: unknown kind {kind!r}; expected one of "
                    f"{', '.join(map(repr, _KIND_DTYPES))}"
                )
            selected = _KIND_DTYPES[kind]
        elif isinstance(kind, tuple):
            selected = ()
            for k in kind:
                if not isinstance(k, str):
                    raise TypeError(
                        f"dtypes: kind tuples hold kind names, got {type(k).__name__}"
                    )
                selected += tuple(self.dtypes(kind=k).values())
        else:
            raise TypeError(
                f"dtypes: kind must be None, a kind name or a tuple of them, "
                f"got {type(kind).__name__}"
            )
        # in the canonical order, without repeats
        return {_dt.dtype_name(d): d for d in _dt.STANDARD_DTYPES if d in selected}

    def devices(self) -> list:
        """[cpu]: the devices arrays can live on."""
        return [_et.device("cpu")]

    def __repr__(self) -> str:
        return "ember_tensor.array_api.__array_namespace_info__()"


_INFO = Info()


def __array_namespace_info__() -> Info:
    """The namespace's inspection utilities: capabilities(), default_device(),
    default_dtypes(), dtypes() and devices()."""
    return _INFO
