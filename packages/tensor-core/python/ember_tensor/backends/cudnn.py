"""cuDNN switches for CUDA convolutions (as ``torch.backends.cudnn``).

- ``enabled`` (default True): conv2d and its gradients on CUDA use cuDNN when it can be
  loaded; False runs them as im2col + cuBLAS matrix products.
- ``benchmark`` (False): time cuDNN's algorithms for each new shape and keep the fastest
  (the first call of a shape is slower); False takes cuDNN's heuristic choice.
- ``deterministic`` (False): only algorithms that give the same bits on every run (where
  cuDNN has none for a shape, im2col + cuBLAS runs instead).
- ``allow_tf32`` (True, as in PyTorch): float32 convolutions may use TF32 tensor cores.

``is_available()`` says whether cuDNN runs here (a CUDA build, a GPU, and the library
loadable); ``version()`` is its version as an int (9.3.0 is 90300), or None when it is not
available. The switches can be set whether or not it is. ``flags(...)`` sets all four for
a ``with`` block.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager

from .. import _C

__all__ = ["is_available", "version", "is_acceptable", "flags"]

_FLAG_NAMES = ("enabled", "benchmark", "deterministic", "allow_tf32")


def version() -> int | None:
    """cuDNN's version (``90300`` for 9.3.0), or None when it is not available."""
    return _C._cudnn_version() or None


def is_available() -> bool:
    """Whether CUDA convolutions can run through cuDNN here."""
    return _C._cudnn_version() != 0


def _unavailable_reason() -> str:
    """Why ``is_available()`` is False ("" when it is True)."""
    return _C._cudnn_unavailable_reason()


def is_acceptable(tensor) -> bool:
    """Whether a convolution of ``tensor`` would run through cuDNN: enabled, available, and a
    CUDA tensor of a dtype conv2d takes."""
    import ember_tensor as et

    if not _C._cudnn_flags()[0] or tensor.device.type != "cuda":
        return False
    return tensor.dtype in (et.float32, et.float64) and is_available()


def _checked(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(
            f"ember_tensor.backends.cudnn.{name} expects a bool, but got {type(value).__name__}"
        )
    return value


def _set(**changes: bool) -> tuple[bool, bool, bool, bool]:
    """Sets some flags; returns the four as they were."""
    old = tuple(_C._cudnn_flags())
    new = dict(zip(_FLAG_NAMES, old))
    new.update({name: _checked(name, value) for name, value in changes.items()})
    _C._cudnn_set_flags(**new)
    return old


@contextmanager
def flags(
    enabled: bool = False,
    benchmark: bool = False,
    deterministic: bool = False,
    allow_tf32: bool = True,
) -> Iterator[None]:
    """Sets all four switches for the ``with`` block (PyTorch's defaults: enabled=False),
    and restores them after it."""
    old = _set(
        enabled=enabled, benchmark=benchmark, deterministic=deterministic, allow_tf32=allow_tf32
    )
    try:
        yield
    finally:
        _C._cudnn_set_flags(*old)


def _flag(index: int, name: str) -> property:
    def get(self) -> bool:
        return bool(_C._cudnn_flags()[index])

    def put(self, value: bool) -> None:
        _set(**{name: value})

    return property(get, put, doc=f"ember_tensor.backends.cudnn.{name}")


class _CudnnModule(types.ModuleType):
    """The module's class: its switches are properties over the core's flags."""

    enabled = _flag(0, "enabled")
    benchmark = _flag(1, "benchmark")
    deterministic = _flag(2, "deterministic")
    allow_tf32 = _flag(3, "allow_tf32")

    def __repr__(self) -> str:
        state = " ".join(f"{name}={getattr(self, name)}" for name in _FLAG_NAMES)
        return f"<module 'ember_tensor.backends.cudnn' {state}>"


sys.modules[__name__].__class__ = _CudnnModule
