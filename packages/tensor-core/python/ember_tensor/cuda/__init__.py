"""CUDA support: devices, streams, events, random seeds and the caching allocator's memory
statistics, with ``torch.cuda``'s names, defaults and errors (``ember.cuda`` is this package).

Importing it never touches the GPU: CUDA is initialised by the first call that needs a device
(``init()`` does it explicitly). Without CUDA, ``is_available()`` is False and
``device_count()`` is 0; a function that needs a device raises ``AssertionError("Ember not
compiled with CUDA enabled")`` on a build without CUDA, and ``RuntimeError`` on a CUDA build
that finds no usable device. The memory queries (``memory_allocated()``, ``memory_stats()``,
...) report nothing (0, an empty dict) until CUDA is initialised, as PyTorch's do.

See the user guide, docs/cuda.md.
"""

from __future__ import annotations

from .. import _C
from . import _lazy
from ._lazy import DeferredCudaCallError, is_built, is_initialized

__all__ = [
    "is_available", "is_built", "device_count", "current_device", "set_device", "device",
    "device_of", "synchronize", "get_device_name", "get_device_capability",
    "get_device_properties", "is_initialized", "init", "is_bf16_supported", "get_arch_list",
    "OutOfMemoryError", "DeferredCudaCallError",
    # random
    "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
    # streams and events
    "Stream", "Event", "current_stream", "default_stream", "set_stream", "stream",
    "StreamContext",
    # memory
    "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "reset_peak_memory_stats", "reset_accumulated_memory_stats",
    "reset_max_memory_allocated", "memory_stats", "memory_stats_as_nested_dict",
    "memory_summary", "memory_snapshot", "mem_get_info", "set_per_process_memory_fraction",
    "CUDAPluggableAllocator", "change_current_allocator",
]  # the submodules (memory, random, streams) are not here: a star import would shadow random


class _OutOfMemoryFallback(RuntimeError):
    """Raised when a CUDA allocation fails after the allocator released its cache and
    retried (a RuntimeError, as PyTorch's ``torch.cuda.OutOfMemoryError``)."""


#: The error a CUDA allocation raises when the device has no memory left, even after the
#: caching allocator released its cached blocks and retried. A subclass of RuntimeError.
OutOfMemoryError: type[RuntimeError] = getattr(_C, "OutOfMemoryError", _OutOfMemoryFallback)
if OutOfMemoryError is _OutOfMemoryFallback:
    _OutOfMemoryFallback.__name__ = _OutOfMemoryFallback.__qualname__ = "OutOfMemoryError"


# ------------------------------------------------------------------------------ devices


def is_available() -> bool:
    """Whether CUDA can be used: the core was built with it and a device is visible. Never
    raises, and does not initialise CUDA."""
    try:
        return _lazy.raw_device_count() > 0
    except Exception:  # a broken driver is "not available", never an error here
        return False


def device_count() -> int:
    """The number of CUDA devices visible to this process (0 without CUDA; never raises)."""
    try:
        return _lazy.raw_device_count()
    except Exception:
        return 0


def init() -> None:
    """Initialises CUDA now instead of at the first call that needs it. Raises
    ``AssertionError`` on a build without CUDA and ``RuntimeError`` without a device."""
    _lazy.lazy_init()


def current_device() -> int:
    """The index of the current CUDA device (initialises CUDA)."""
    _lazy.lazy_init()
    return int(_C._cuda_current_device())


def set_device(device: object) -> None:
    """Makes ``device`` (an index, ``"cuda:1"`` or an ``ember_tensor.device``) the current CUDA
    device. A negative index is a no-op, as in PyTorch; a device without an index is an
    error (``ValueError``)."""
    idx = _lazy.device_index(device, optional=False)
    if idx < 0:
        return
    idx = _lazy.checked_index(idx)
    _C._cuda_set_device(idx)


class device:
    """Context manager that makes ``device`` the current CUDA device inside its block and
    restores the previous one after it.

    Args:
        device: an index, a device string (``"cuda:1"``) or an ``ember_tensor.device``. None,
            a negative index, or ``"cuda"`` on a machine without a device make it a no-op.
    """

    def __init__(self, device: object) -> None:
        idx = _lazy.index_without_init(device)
        if idx is None:
            # None: no-op; "cuda" without an index: the current device, if there is one
            idx = -1 if device is None or _lazy.raw_device_count() == 0 else current_device()
        self.idx: int = idx
        self.prev_idx: int = -1

    def __enter__(self) -> device:
        if self.idx < 0:
            return self
        self.prev_idx = current_device()
        if self.prev_idx != self.idx:
            set_device(self.idx)
        return self

    def __exit__(self, *exc_info: object) -> bool:
        if self.idx >= 0 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """Context manager that makes the device of ``obj`` (a tensor) current inside its block;
    a no-op for a tensor that is not on a CUDA device."""

    def __init__(self, obj: object) -> None:
        dev = obj.device
        super().__init__(dev.index if dev.type == "cuda" and dev.index is not None else -1)


def synchronize(device: object = None) -> None:
    """Waits for all the work queued on every stream of ``device`` (default: the current
    device) to complete."""
    idx = _lazy.checked_index(device)
    _C._cuda_synchronize(idx)


class _CudaDeviceProperties:
    """The properties of a CUDA device, as ``get_device_properties`` returns them."""

    __slots__ = ("name", "major", "minor", "total_memory", "multi_processor_count")

    def __init__(self, name: str, major: int, minor: int, total_memory: int,
                 multi_processor_count: int) -> None:
        self.name = name
        self.major = major
        self.minor = minor
        self.total_memory = total_memory
        self.multi_processor_count = multi_processor_count

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name={self.name!r}, major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _CudaDeviceProperties):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, k) for k in self.__slots__))


_properties_cache: dict[int, _CudaDeviceProperties] = {}


def get_device_properties(device: object = None) -> _CudaDeviceProperties:
    """The properties of ``device`` (default: the current device): ``name``, ``major``,
    ``minor`` (the compute capability), ``total_memory`` (bytes) and
    ``multi_processor_count``."""
    _lazy.lazy_init()
    idx = _lazy.device_index(device)
    if not 0 <= idx < _lazy.raw_device_count():
        raise AssertionError("Invalid device id")
    props = _properties_cache.get(idx)
    if props is None:
        name, major, minor, total, sms = _C._cuda_device_properties(idx)
        props = _properties_cache[idx] = _CudaDeviceProperties(
            str(name), int(major), int(minor), int(total), int(sms))
    return props


def get_device_name(device: object = None) -> str:
    """The name of ``device`` (default: the current device), e.g. ``"NVIDIA H100"``."""
    return get_device_properties(device).name


def get_device_capability(device: object = None) -> tuple[int, int]:
    """The compute capability ``(major, minor)`` of ``device`` (default: the current one)."""
    props = get_device_properties(device)
    return props.major, props.minor


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current device supports bfloat16: natively from compute capability 8.0;
    with ``including_emulation``, also where a bfloat16 tensor can be created on it. False
    without CUDA."""
    if not is_available():
        return False
    if get_device_capability()[0] >= 8:
        return True
    if not including_emulation:
        return False
    try:
        _C.zeros(1, dtype=_C.bfloat16, device="cuda")
    except Exception:
        return False
    return True


def get_arch_list() -> list[str]:
    """The CUDA architectures the core was compiled for (``["sm_80", "sm_90"]``); empty
    without CUDA."""
    if not is_available():
        return []
    info = _C._build_info() if hasattr(_C, "_build_info") else {}
    archs = info.get("cuda_archs") or []
    if isinstance(archs, str):
        archs = archs.replace(",", ";").replace(" ", ";").split(";")
    out = []
    for arch in archs:
        arch = str(arch).strip()
        if arch:
            out.append(f"sm_{arch}" if arch.isdigit() else arch)
    return out


# ----------------------------------------------------------------------- the submodules

from .._legacy import CUDA_CLASSES as _CUDA_CLASSES  # noqa: E402
from . import amp, memory, random, streams  # noqa: E402, F401  (ember.cuda.memory, ...)

globals().update(_CUDA_CLASSES)  # ember.cuda.FloatTensor & co (isinstance, constructors)
__all__ += list(_CUDA_CLASSES)
from .memory import (  # noqa: E402
    CUDAPluggableAllocator,
    change_current_allocator,
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_stats_as_nested_dict,
    memory_summary,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
)
from .random import initial_seed, manual_seed, manual_seed_all, seed, seed_all  # noqa: E402
from .streams import (  # noqa: E402
    Event,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    set_stream,
    stream,
)
