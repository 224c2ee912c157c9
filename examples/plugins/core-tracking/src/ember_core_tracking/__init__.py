"""ember-core-tracking: a host allocator that tracks every byte Ember's tensor core allocates,
and a native float32 ReLU kernel, both through the core's plug points.

Importing the package installs the allocator, so import it before any tensor is created::

    import ember_core_tracking          # first: the allocator must be in place before
    import ember                        # the core's first CPU allocation

    x = ember.randn(1000, 1000)
    ember_core_tracking.memory_stats()["live_bytes"]   # 4000000

Set ``EMBER_TRACKING_POISON=1`` to fill freed memory with 0xDB bytes (stale pointers then read
garbage instead of plausible numbers). ``register_kernels()`` makes ``relu`` run the native
kernel for contiguous float32 tensors (other cases fall back to Ember's kernel).
"""

from __future__ import annotations

import os

import ember_tensor

from . import _native

__version__ = "0.1.0"
__all__ = ["HOST_ALLOCATOR_NAME", "kernels", "memory_stats", "register_kernels", "relu",
           "reset_peak_memory_stats"]

INTERFACE_VERSION = 1  # of the core plug-point protocol (ember_tensor.conformance)
HOST_ALLOCATOR_NAME = "ember-core-tracking"

# Raises RuntimeError (from the core) when a tensor was created before this import.
_native.install(os.environ.get("EMBER_TRACKING_POISON", "") not in ("", "0"))


def memory_stats() -> dict[str, int]:
    """``live_bytes`` (bytes of tensors alive now, as requested), ``peak_bytes`` (their high-water
    mark), ``allocations`` and ``frees`` (counts since the start)."""
    return _native.stats()


def reset_peak_memory_stats() -> None:
    """Sets ``peak_bytes`` to ``live_bytes``."""
    _native.reset_peak()


def relu(x, *, out=None):
    """ReLU for contiguous float32 tensors on the native kernel; ``NotImplemented`` (Ember's own
    kernel runs) for anything else: other dtypes, strided tensors, an ``out`` of another shape,
    dtype or layout."""
    if x.dtype != ember_tensor.float32 or not x.is_contiguous():
        return NotImplemented
    if out is None:
        out = ember_tensor.empty_like(x)
    elif out.shape != x.shape or out.dtype != x.dtype or not out.is_contiguous():
        return NotImplemented
    _native.relu_f32(x.data_ptr(), out.data_ptr(), x.numel())
    return out


def kernels() -> dict:
    """The kernel overrides this package offers: op name -> kernel."""
    return {"relu": relu}


def register_kernels() -> list:
    """Registers every kernel of ``kernels()`` for the CPU; returns their handles
    (``handle.remove()`` puts Ember's kernels back)."""
    return [ember_tensor.library.register_kernel(op, "cpu", fn) for op, fn in kernels().items()]
