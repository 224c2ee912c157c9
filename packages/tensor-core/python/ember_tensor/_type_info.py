"""``finfo`` and ``iinfo``: the numerical properties of Ember's floating-point and integer
dtypes, with PyTorch's attributes, reprs and errors.

>>> import ember_tensor as et
>>> et.finfo(et.float16).max
65504.0
>>> et.iinfo(et.int8)
iinfo(min=-128, max=127, dtype=int8)
"""

from __future__ import annotations

import numpy as np

from . import _C

__all__ = ["finfo", "iinfo"]

# bfloat16 (NumPy has no such type): 8 exponent bits as float32, 8 significand bits
_BFLOAT16 = {"bits": 16, "eps": 2.0 ** -7, "max": 3.3895313892515355e38,
             "tiny": 1.1754943508222875e-38, "resolution": 0.01}


def _name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


class finfo:  # noqa: N801 - PyTorch's name
    """Machine limits of a floating-point dtype (the default dtype when none is given; a
    complex dtype gives those of its real parts): ``bits``, ``eps`` (the gap between 1 and
    the next value), ``max``, ``min`` (= -max), ``tiny`` = ``smallest_normal`` (the smallest
    positive normal number), ``resolution`` (10 ** -decimal digits) and ``dtype`` (its name)."""

    def __init__(self, type=None):  # noqa: A002 - PyTorch's argument name
        dtype = _C.get_default_dtype() if type is None else type
        if dtype in (_C.complex64, _C.complex128):
            dtype = _C.float32 if dtype == _C.complex64 else _C.float64
        if not isinstance(dtype, _C.dtype) or not dtype.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        if dtype == _C.bfloat16:
            info = _BFLOAT16
        else:
            f = np.finfo(_name(dtype))
            info = {"bits": int(f.bits), "eps": float(f.eps), "max": float(f.max),
                    "tiny": float(f.smallest_normal), "resolution": 10.0 ** -int(f.precision)}
        self.bits = info["bits"]
        self.eps = info["eps"]
        self.max = info["max"]
        self.min = -info["max"]
        self.tiny = self.smallest_normal = info["tiny"]
        self.resolution = info["resolution"]
        self.dtype = _name(dtype)

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801 - PyTorch's name
    """Limits of an integer dtype: ``bits``, ``min``, ``max`` (Python ints) and ``dtype``."""

    def __init__(self, type):  # noqa: A002 - PyTorch's argument name
        if not isinstance(type, _C.dtype) or type.is_floating_point or type.is_complex or \
                type == _C.bool:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        i = np.iinfo(_name(type))
        self.bits = int(i.bits)
        self.min = int(i.min)
        self.max = int(i.max)
        self.dtype = _name(type)

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"  # PyTorch's %g
