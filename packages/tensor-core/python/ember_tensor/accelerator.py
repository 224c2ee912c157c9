"""``ember.accelerator``: PyTorch's device-agnostic API over the accelerator present (CUDA,
the only one Ember has). ``current_accelerator()`` is ``ember.device("cuda")`` when a GPU
is visible, else None; the other functions act on the current CUDA device and raise
PyTorch's ``RuntimeError`` when there is none.

>>> import ember_tensor as et
>>> et.accelerator.is_available() == et.cuda.is_available()
True
"""

from __future__ import annotations

import contextlib

from . import _C, cuda

__all__ = ["current_accelerator", "current_device_idx", "current_device_index",
           "current_stream", "device_count", "device_index", "empty_cache", "is_available",
           "max_memory_allocated", "max_memory_reserved", "memory_allocated",
           "memory_reserved", "memory_stats", "reset_peak_memory_stats", "set_device_idx",
           "set_device_index", "set_stream", "synchronize"]


def is_available() -> bool:
    """Whether an accelerator (a CUDA device) is visible."""
    return cuda.is_available()


def current_accelerator(check_available: bool = False):
    """``device("cuda")`` when Ember was built with CUDA (and, with ``check_available``, a
    device is visible), else None."""
    if check_available and not is_available():
        return None
    return _C.device("cuda") if cuda.is_built() and is_available() else None


def device_count() -> int:
    """The number of accelerator devices (0 without one)."""
    return cuda.device_count() if is_available() else 0


def _require() -> None:
    if not is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def current_device_index() -> int:
    """The index of the current accelerator device."""
    _require()
    return cuda.current_device()


current_device_idx = current_device_index


def set_device_index(device, /) -> None:
    """Makes ``device`` (an index, ``"cuda:1"`` or a device) the current one."""
    _require()
    cuda.set_device(device)


set_device_idx = set_device_index


@contextlib.contextmanager
def device_index(device, /):
    """A context in which ``device`` is the current accelerator device (None: unchanged)."""
    if device is None:
        yield
        return
    _require()
    previous = cuda.current_device()
    cuda.set_device(device)
    try:
        yield
    finally:
        cuda.set_device(previous)


def current_stream(device=None, /):
    """The current stream of ``device`` (default: the current device)."""
    _require()
    return cuda.current_stream(device)


def set_stream(stream) -> None:
    """Makes ``stream`` current on its device."""
    _require()
    cuda.set_stream(stream)


def synchronize(device=None, /) -> None:
    """Waits for the work queued on ``device``."""
    _require()
    cuda.synchronize(device)


def empty_cache() -> None:
    """Releases the caching allocator's unused blocks (nothing without an accelerator)."""
    if is_available():
        cuda.empty_cache()


def memory_allocated(device_index=None, /) -> int:
    """Bytes held by tensors on the device."""
    _require()
    return cuda.memory_allocated(device_index)


def max_memory_allocated(device_index=None, /) -> int:
    """The peak of ``memory_allocated`` since the last reset."""
    _require()
    return cuda.max_memory_allocated(device_index)


def memory_reserved(device_index=None, /) -> int:
    """Bytes the caching allocator holds on the device."""
    _require()
    return cuda.memory_reserved(device_index)


def max_memory_reserved(device_index=None, /) -> int:
    """The peak of ``memory_reserved`` since the last reset."""
    _require()
    return cuda.max_memory_reserved(device_index)


def memory_stats(device_index=None, /) -> dict:
    """The caching allocator's statistics for the device."""
    _require()
    return cuda.memory_stats(device_index)


def reset_peak_memory_stats(device_index=None, /) -> None:
    """Resets the peaks of the memory statistics."""
    _require()
    cuda.reset_peak_memory_stats(device_index)
