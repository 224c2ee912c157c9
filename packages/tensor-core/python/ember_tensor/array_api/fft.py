"""(array API) The Fourier transform extension of the 2024.12 standard: ``xp.fft``.

Computed by ``ember_tensor.fft`` (PyTorch's ``torch.fft`` semantics, MKL or the built-in
FFT on the CPU), so the results stay differentiable. This module adds the standard's
signatures (positional-only arrays, keyword-only ``n``/``s``/``axis``/``axes``/``norm``),
dtype rules and errors:

- ``fft``, ``ifft``, ``fftn``, ``ifftn``, ``irfft``, ``irfftn`` and ``hfft`` take complex
  floating-point arrays; ``rfft``, ``rfftn`` and ``ihfft`` real floating-point ones (other
  dtypes: TypeError). Results keep the precision: complex64 <-> float32, complex128 <->
  float64.
- ``norm`` is "backward", "ortho" or "forward" (ValueError otherwise); ``n`` and the entries
  of ``s`` are positive ints (ValueError), ``-1`` in ``s`` keeping an axis's length; axes
  out of range raise ``AxisError``; repeated ``axes`` ValueError.
- ``fftfreq`` / ``rfftfreq`` take ``dtype`` (a real floating-point dtype, default the
  default float dtype) and ``device``; ``fftshift`` / ``ifftshift`` any array.
"""

from __future__ import annotations

import ember_tensor as _et

from ._creation import _check_device
from ._dtypes import isdtype
from ._functions import _array, _axis, _int

__all__ = [
    "fft",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfftn",
    "rfft",
    "rfftfreq",
    "rfftn",
]

_NORMS = ("backward", "ortho", "forward")


def _norm(norm, fn):
    if norm not in _NORMS:
        raise ValueError(f"{fn}(): norm must be one of {', '.join(map(repr, _NORMS))}, "
                         f"got {norm!r}")
    return norm


def _n(n, fn):
    if n is None:
        return None
    n = _int(n, fn, "n")
    if n < 1:
        raise ValueError(f"{fn}(): n must be a positive integer, got {n}")
    return n


def _input(x, fn, complex_):
    return _array(x, fn, category="complex floating-point" if complex_ else
                  "real floating-point")


def _axes_and_shape(x, s, axes, fn):
    """The transformed axes (normalized, in order) and their lengths (-1: unchanged)."""
    if s is not None:
        if not isinstance(s, (tuple, list)):
            raise TypeError(f"{fn}(): s must be a sequence of ints, got {type(s).__name__}")
        s = [_int(v, fn, "s") for v in s]
    if axes is None:
        axes = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    else:
        if not isinstance(axes, (tuple, list)):
            raise TypeError(f"{fn}(): axes must be a sequence of ints, got {type(axes).__name__}")
        axes = [_axis(a, x.ndim, fn) for a in axes]
        if len(set(axes)) != len(axes):
            raise ValueError(f"{fn}(): duplicate value in axes={tuple(axes)!r}")
    if s is not None:
        if len(s) != len(axes):
            raise ValueError(f"{fn}(): s and axes must have the same length, got {len(s)} "
                             f"and {len(axes)}")
        for v in s:
            if v != -1 and v < 1:
                raise ValueError(f"{fn}(): the entries of s must be positive or -1, got {v}")
    return axes, s


def _one(fn_name, core, complex_):
    def f(x, /, *, n=None, axis=-1, norm="backward"):
        _input(x, fn_name, complex_)
        a = _axis(axis, x.ndim, fn_name) if x.ndim else _axis(axis, 1, fn_name)
        return core(x, n=_n(n, fn_name), dim=a, norm=_norm(norm, fn_name))
    f.__name__ = f.__qualname__ = fn_name
    f.__doc__ = (f"The array API's ``fft.{fn_name}`` (``ember_tensor.fft.{fn_name}`` with the "
                 "standard's signature and checks).")
    return f


def _many(fn_name, core, complex_):
    def f(x, /, *, s=None, axes=None, norm="backward"):
        _input(x, fn_name, complex_)
        axes_, s_ = _axes_and_shape(x, s, axes, fn_name)
        if not axes_:
            raise ValueError(f"{fn_name}(): at least one axis must be transformed")
        return core(x, s=s_, dim=axes_, norm=_norm(norm, fn_name))
    f.__name__ = f.__qualname__ = fn_name
    f.__doc__ = (f"The array API's ``fft.{fn_name}`` (``ember_tensor.fft.{fn_name}`` with the "
                 "standard's signature and checks).")
    return f


fft = _one("fft", _et.fft.fft, True)
ifft = _one("ifft", _et.fft.ifft, True)
rfft = _one("rfft", _et.fft.rfft, False)
irfft = _one("irfft", _et.fft.irfft, True)
hfft = _one("hfft", _et.fft.hfft, True)
ihfft = _one("ihfft", _et.fft.ihfft, False)
fftn = _many("fftn", _et.fft.fftn, True)
ifftn = _many("ifftn", _et.fft.ifftn, True)
rfftn = _many("rfftn", _et.fft.rfftn, False)
irfftn = _many("irfftn", _et.fft.irfftn, True)


def _freq_dtype(dtype, fn):
    if dtype is None:
        return _et.get_default_dtype()
    if not isdtype(dtype, "real floating"):
        raise ValueError(f"{fn}(): dtype must be a real floating-point dtype, got {dtype}")
    return dtype


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of a length-n transform with spacing d."""
    n = _n(n, "fftfreq")
    _check_device(device)
    return _et.fft.fftfreq(n, d, dtype=_freq_dtype(dtype, "fftfreq"))


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The non-negative sample frequencies of ``rfft``."""
    n = _n(n, "rfftfreq")
    _check_device(device)
    return _et.fft.rfftfreq(n, d, dtype=_freq_dtype(dtype, "rfftfreq"))


def _shift(fn_name, core):
    def f(x, /, *, axes=None):
        _array(x, fn_name)
        if axes is None:
            dims = None
        else:
            items = axes if isinstance(axes, (tuple, list)) else (axes,)
            dims = [_axis(a, x.ndim, fn_name) for a in items]
        return core(x, dims)
    f.__name__ = f.__qualname__ = fn_name
    f.__doc__ = f"The array API's ``fft.{fn_name}``."
    return f


fftshift = _shift("fftshift", _et.fft.fftshift)
ifftshift = _shift("ifftshift", _et.fft.ifftshift)
