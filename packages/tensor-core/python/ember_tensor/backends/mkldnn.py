"""oneDNN for CPU convolutions and bfloat16 products (as ``torch.backends.mkldnn``; oneDNN
was called MKL-DNN).

float32 ``conv2d``, its two gradients and ``conv_transpose2d`` (and bfloat16 ones on CPUs with
AVX512-BF16 or AMX) run through oneDNN when its library (``libdnnl.so.3`` from the
``onednn-cpu-gomp`` wheel, a dependency of the core on x86-64 Linux) can be loaded;
otherwise, and for float64, depthwise and 1x1 convolutions, small outputs and batches smaller
than the thread count, Ember's own kernels run (docs/conv-algorithms.md). bfloat16 matrix
products run through oneDNN's matmul on CPUs with AVX512-BF16 and no AMX (with AMX, MKL's
bfloat16 GEMM is the faster; docs/performance.md).

- ``is_available()``: whether oneDNN is loaded (it is loaded at the first call that asks);
  ``_unavailable_reason()`` says why not, ``_library()`` where it came from.
- ``enabled`` (default True; ``EMBER_ONEDNN=0`` in the environment starts with False):
  False runs every convolution on Ember's own kernels (and bfloat16 products without AMX on
  widened float32 copies).
- ``flags(enabled=False)``: sets ``enabled`` for a ``with`` block.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager

from .. import _C

__all__ = ["is_available", "flags"]


def is_available() -> bool:
    """Whether oneDNN can run CPU convolutions here (its library loads)."""
    return bool(_C._onednn_info()["version"])


def _version() -> str:
    """The loaded oneDNN's version ("3.2.0"), "" when it is not available."""
    return _C._onednn_info()["version"]


def _library() -> str:
    """The path of the loaded ``libdnnl.so.3`` ("" when it is not available)."""
    return _C._onednn_info()["path"]


def _unavailable_reason() -> str:
    """Why ``is_available()`` is False ("" when it is True)."""
    return _C._onednn_info()["reason"]


def _set_enabled(value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(
            f"ember_tensor.backends.mkldnn.enabled expects a bool, but got {type(value).__name__}"
        )
    old = _enabled()
    _C._onednn_set_enabled(value)
    return old


def _enabled() -> bool:
    return bool(_C._onednn_enabled())  # read without loading the library


@contextmanager
def flags(enabled: bool = False) -> Iterator[None]:
    """Sets ``enabled`` for the ``with`` block (PyTorch's default: False) and restores it."""
    old = _set_enabled(enabled)
    try:
        yield
    finally:
        _C._onednn_set_enabled(old)


class _MkldnnModule(types.ModuleType):
    """The module's class: ``enabled`` is a property over the core's switch."""

    @property
    def enabled(self) -> bool:
        return _enabled()

    @enabled.setter
    def enabled(self, value: bool) -> None:
        _set_enabled(value)

    def __repr__(self) -> str:
        return f"<module 'ember_tensor.backends.mkldnn' enabled={self.enabled}>"


sys.modules[__name__].__class__ = _MkldnnModule
