"""Lazy CUDA initialisation and device-index resolution, shared by the ``ember_tensor.cuda``
modules.

Nothing touches the CUDA runtime when ``ember_tensor.cuda`` is imported. The first call that
needs a device runs ``_lazy_init()``, which checks that the core was built with CUDA and that a
device is visible, then runs the calls queued before initialisation (``manual_seed`` and
friends). A build without CUDA raises ``AssertionError``; a CUDA build without a usable device
raises ``RuntimeError`` naming the reason the core reports. A process forked from one that had
initialised CUDA cannot use it (``RuntimeError``), as with PyTorch.

The compiled functions are looked up on ``_C`` at call time (never bound at import), so a core
built before they existed still imports this package, and reports "not compiled with CUDA".
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from .. import _C

NOT_BUILT_MESSAGE = "Ember not compiled with CUDA enabled"

_initialized = False
_in_bad_fork = False
_init_lock = threading.Lock()
_tls = threading.local()
# calls made before initialisation, run by _lazy_init in order: (call, where it was made)
_queued_calls: list[tuple[Callable[[], None], list[str]]] = []
# the latest seeding call of each kind ("seed": current device, "seed_all": every device)
# with its position among the queued calls, so that only the last manual_seed counts
_seed_calls: dict[str, tuple[int, Callable[[], None], list[str]]] = {}
_call_counter = 0


class DeferredCudaCallError(Exception):
    """A call queued before CUDA was initialised (``manual_seed``, ...) failed when
    initialisation ran it. The message says where the call was originally made."""


def is_built() -> bool:
    """Whether the core was compiled with CUDA support (a device may still be missing)."""
    fn = getattr(_C, "_cuda_is_built", None)
    return bool(fn()) if fn is not None else False


def raw_device_count() -> int:
    """Devices visible to the process; 0 without a CUDA build, a driver or a GPU."""
    if not is_built():
        return 0
    return int(_C._cuda_device_count())


def unavailable_reason() -> str:
    fn = getattr(_C, "_cuda_unavailable_reason", None)
    return str(fn()) if fn is not None else "unknown reason"


def is_initialized() -> bool:
    """Whether CUDA has been initialised in this process (see ``init``)."""
    return _initialized and not _in_bad_fork


def _after_fork_in_child() -> None:
    global _initialized, _in_bad_fork
    if _initialized:
        _initialized = False
        _in_bad_fork = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def lazy_init() -> None:
    """Initialises CUDA, once; raises when it cannot be used (see the module docstring)."""
    global _initialized
    if is_initialized() or getattr(_tls, "initializing", False):
        return
    with _init_lock:
        if is_initialized():
            return
        if _in_bad_fork:
            raise RuntimeError(
                "Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
                "multiprocessing, you must use the 'spawn' start method")
        if not is_built():
            raise AssertionError(NOT_BUILT_MESSAGE)
        if raw_device_count() == 0:
            raise RuntimeError(f"No CUDA device available: {unavailable_reason()}")
        # queued calls may call functions that initialise: let them through on this thread
        _tls.initializing = True
        try:
            calls = [(cb, where) for _, cb, where in sorted(_seed_calls.values(),
                                                           key=lambda c: c[0])]
            for cb, where in [*_queued_calls, *calls]:
                try:
                    cb()
                except Exception as exc:
                    raise DeferredCudaCallError(
                        f"CUDA call failed lazily at initialization with error: {exc}\n\n"
                        f"CUDA call was originally invoked at:\n\n{''.join(where)}") from exc
            _queued_calls.clear()
            _seed_calls.clear()
            _initialized = True
        finally:
            _tls.initializing = False


def lazy_call(callable_: Callable[[], None], *, seed: str | None = None) -> None:
    """Runs ``callable_`` now if CUDA is initialised, else at initialisation. A ``seed``
    kind ("seed" or "seed_all") replaces the earlier queued call of the same kind."""
    global _call_counter
    if is_initialized():
        callable_()
        return
    import traceback  # only when a call is queued: it costs milliseconds to import

    where = traceback.format_stack()
    if seed is not None:
        _call_counter += 1
        _seed_calls[seed] = (_call_counter, callable_, where)
    else:
        _queued_calls.append((callable_, where))


def _parse(device: object) -> object:
    """A str becomes an ember_tensor.device; other values are returned unchanged."""
    if isinstance(device, str):
        return _C.device(device)
    return device


def index_without_init(device: object) -> int | None:
    """The index ``device`` names explicitly (int, "cuda:1", device("cuda", 1),
    ``ember_tensor.cuda.device``), or None for None / "cuda" (the current device), without
    initialising CUDA. Raises ValueError for a non-CUDA device or another type."""
    from . import device as device_ctx  # the context manager class

    if isinstance(device, bool):
        raise ValueError(f"Expected a cuda device or an integer index, but got: {device!r}")
    if device is None or isinstance(device, int):
        return device
    if isinstance(device, device_ctx):
        return device.idx
    device = _parse(device)
    if isinstance(device, _C.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return device.index
    raise ValueError(
        f"Expected an ember_tensor.device, a device string or an integer index, but got: "
        f"{device!r}")


def device_index(device: object, optional: bool = True) -> int:
    """The device index ``device`` names; None and "cuda" give the current device (which
    initialises CUDA) when ``optional``, else raise ValueError."""
    idx = index_without_init(device)
    if idx is None:
        if not optional:
            raise ValueError(
                f"Expected an ember_tensor.device with a specified index or an integer, but "
                f"got: {device}")
        lazy_init()
        return int(_C._cuda_current_device())
    return idx


def checked_index(device: object) -> int:
    """``device_index`` after initialising CUDA, checked to name an existing device."""
    lazy_init()
    idx = device_index(device)
    count = raw_device_count()
    if not 0 <= idx < count:
        raise RuntimeError(
            f"Invalid CUDA device index {idx}: this process sees {count} CUDA "
            f"device{'s' if count != 1 else ''} (indices 0 to {count - 1})")
    return idx
