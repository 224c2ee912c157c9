"""The Python array API standard (2024.12) for Ember tensors: ``x.__array_namespace__()``.

This namespace follows the standard where PyTorch's semantics differ (type promotion
without value-based casting, ``sum`` of small integers, ...); the PyTorch-shaped
``ember_tensor`` / ``ember`` namespaces keep PyTorch's behaviour. Every difference is listed
in docs/array-api.md. Arrays are ``ember_tensor.Tensor`` objects.

Dtypes: all of the standard's (bool, int8/16/32/64, uint8/16/32/64, float32, float64,
complex64, complex128), plus float16 and bfloat16 as extensions. Where the core still lacks
a kernel for uint16/uint32/uint64, the namespace computes through int64 when that is exact
and raises TypeError otherwise (see ``_dtypes.call_core``).

Extensions: ``linalg`` (the linear algebra extension, ``xp.linalg``) is present; its
decompositions and solvers take real floating-point arrays only (the core's LAPACK ops are
real). ``fft`` (the Fourier transform extension, ``xp.fft``) is present.
"""

from __future__ import annotations

from . import fft as fft  # the fft extension: xp.fft
from . import linalg as linalg  # the linalg extension: xp.linalg
from ._creation import *  # noqa: F403
from ._creation import __all__ as _creation_all
from ._dtypes import *  # noqa: F403
from ._dtypes import __all__ as _dtypes_all
from ._elementwise import *  # noqa: F403
from ._elementwise import __all__ as _elementwise_all
from ._functions import *  # noqa: F403
from ._functions import __all__ as _functions_all
from ._info import __array_namespace_info__
from ._linear_algebra import *  # noqa: F403
from ._linear_algebra import __all__ as _linear_algebra_all

__array_api_version__ = "2024.12"


__all__ = [
    "__array_api_version__",
    "__array_namespace_info__",
    *_dtypes_all,
    *_creation_all,
    *_elementwise_all,
    *_functions_all,
    *_linear_algebra_all,
]
