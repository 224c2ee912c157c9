"""CUDA streams and events.

A ``Stream`` is a queue of device work; work on one stream runs in order, work on different
streams may overlap. Each device has a default stream (handle 0) and a current stream, where
ops are queued (``current_stream()``, changed by ``set_stream`` or ``with stream(s):``).
An ``Event`` marks a point of a stream's work: other streams (``wait``) or the host
(``synchronize``, ``query``) can wait for it, and two timing events measure the time between
them (``elapsed_time``).

``Stream()`` hands out the streams of a pool, as PyTorch does: 32 per device and priority,
created when first handed out, in turn, and never destroyed. A stream may so outlive every
``Stream`` object that named it, which the caching allocator needs: a block used on a stream
(``record_stream``) is released only after an event recorded on that stream when the block
is freed, possibly after the last ``Stream`` object is gone. An event's device resource is
created by its first ``record`` (on the recording stream's device), as in PyTorch, and
destroyed with the ``Event`` object, by the runtime that created it.
"""

from __future__ import annotations

import threading

from .. import _C
from . import _lazy

__all__ = ["Stream", "Event", "current_stream", "default_stream", "set_stream", "stream",
           "StreamContext"]


def _require_built(what: str) -> None:
    if not _lazy.is_built():
        raise RuntimeError(
            f"ember_tensor.cuda.{what} requires CUDA support ({_lazy.NOT_BUILT_MESSAGE})")


# Streams per device and priority that Stream() hands out in turn (PyTorch's pool size).
POOL_SIZE = 32
_pool_lock = threading.Lock()
# (device, priority) -> the handles created so far, and the index of the next one to hand out
_pools: dict[tuple[int, int], list[int]] = {}
_pool_next: dict[tuple[int, int], int] = {}


def _pooled_stream(device_index: int, priority: int) -> int:
    """The next stream of the pool of (device, priority), created on first use."""
    key = (device_index, priority)
    with _pool_lock:
        handles = _pools.setdefault(key, [])
        i = _pool_next.get(key, 0)
        _pool_next[key] = (i + 1) % POOL_SIZE
        if i == len(handles):
            handles.append(int(_C._cuda_create_stream(device_index, priority)))
        return handles[i]


class Stream:
    """A CUDA stream.

    Args:
        device: the device to create the stream on (index, ``"cuda:1"`` or an
            ``ember_tensor.device``); default: the current device.
        priority: the stream's priority: 0 (the default), or negative for higher priority.
            Values out of the device's range are clamped to it.

    ``Stream(stream_id=h, device_index=i)`` wraps an existing stream handle instead of
    creating one (the stream is not owned: it is never destroyed by Ember).
    """

    def __init__(self, device: object = None, priority: int = 0, **kwargs: object) -> None:
        _require_built("Stream")
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise TypeError(f"Stream: priority must be an int, got {type(priority).__name__}")
        unknown = set(kwargs) - {"stream_id", "device_index", "device_type"}
        if unknown:
            raise TypeError(f"Stream: unexpected keyword argument {sorted(unknown)[0]!r}")
        if "stream_id" in kwargs:  # wrap an existing stream
            index = kwargs.get("device_index", device)
            self._init_wrapped(_lazy.checked_index(index), int(kwargs["stream_id"]), priority)
            return
        idx = _lazy.checked_index(device)
        self.device_index: int = idx
        self.priority: int = priority
        self._handle: int = _pooled_stream(idx, priority)

    def _init_wrapped(self, device_index: int, handle: int, priority: int = 0) -> None:
        self.device_index = device_index
        self.priority = priority
        self._handle = handle

    @classmethod
    def _wrap(cls, device_index: int, handle: int) -> Stream:
        s = cls.__new__(cls)
        s._init_wrapped(device_index, handle)
        return s

    @property
    def cuda_stream(self) -> int:
        """The stream's handle (a ``cudaStream_t`` as an int; 0 for the default stream)."""
        return self._handle

    @property
    def stream_id(self) -> int:
        return self._handle

    @property
    def device(self) -> _C.device:
        return _C.device(f"cuda:{self.device_index}")

    @property
    def device_type(self) -> str:
        return "cuda"

    def query(self) -> bool:
        """True when all the work queued on the stream has completed."""
        return bool(_C._cuda_query_stream(self.device_index, self._handle))

    def synchronize(self) -> None:
        """Waits until all the work queued on the stream has completed."""
        _C._cuda_synchronize_stream(self.device_index, self._handle)

    def wait_event(self, event: Event) -> None:
        """Makes the work queued on this stream from now on wait for ``event``."""
        event.wait(self)

    def wait_stream(self, stream: Stream) -> None:
        """Makes the work queued on this stream from now on wait for the work already queued
        on ``stream``."""
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        """Records ``event`` (a new ``Event`` when None) on this stream, and returns it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __enter__(self) -> Stream:
        ctx = StreamContext(self)
        self.__dict__.setdefault("_contexts", []).append(ctx)
        ctx.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> bool:
        self.__dict__["_contexts"].pop().__exit__(*exc_info)
        return False

    def __cuda_stream__(self) -> tuple[int, int]:
        """The CUDA stream protocol: ``(0, handle)``."""
        return 0, self._handle

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Stream):
            return NotImplemented
        return (self.device_index, self._handle) == (other.device_index, other._handle)

    def __hash__(self) -> int:
        return hash((self._handle, self.device_index))

    def __repr__(self) -> str:
        return (f"<ember_tensor.cuda.Stream device=cuda:{self.device_index} "
                f"cuda_stream={self._handle:#x}>")


class Event:
    """A CUDA event: a marker in a stream's work.

    Args:
        enable_timing: whether ``elapsed_time`` can measure time from or to it.
        blocking: whether ``synchronize`` blocks the thread (instead of spinning).
        interprocess: whether it can be shared between processes.

    The event's device resource is created by its first ``record``, on the device of the
    recording stream; an event that was never recorded is complete (``query()`` is True).
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        _require_built("Event")
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self.interprocess = bool(interprocess)
        self._handle: int | None = None
        self._device_index: int | None = None

    @property
    def device(self) -> _C.device | None:
        """The device of the event, once recorded (None before)."""
        if self._device_index is None:
            return None
        return _C.device(f"cuda:{self._device_index}")

    @property
    def cuda_event(self) -> int:
        """The event's handle (a ``cudaEvent_t`` as an int; 0 before the first record)."""
        return self._handle or 0

    def record(self, stream: Stream | None = None) -> None:
        """Records the event on ``stream`` (default: the current stream): it completes when
        the work queued on the stream so far has completed."""
        if stream is None:
            stream = current_stream()
        if self._handle is None:
            self._handle = int(_C._cuda_create_event(
                stream.device_index, self.enable_timing, self.blocking, self.interprocess))
            self._device_index = stream.device_index
            self._destroy = _C._cuda_destroy_event  # the runtime that made it frees it
        elif self._device_index != stream.device_index:
            raise RuntimeError(
                f"Event device cuda:{self._device_index} does not match the recording "
                f"stream's device cuda:{stream.device_index}")
        _C._cuda_record_event(stream.device_index, self._handle, stream._handle)

    def wait(self, stream: Stream | None = None) -> None:
        """Makes the work queued on ``stream`` (default: the current stream) from now on wait
        for the event. A no-op for an event never recorded."""
        if stream is None:
            stream = current_stream()
        if self._handle is not None:
            _C._cuda_stream_wait_event(stream.device_index, stream._handle, self._handle)

    def query(self) -> bool:
        """True when the work the event waits for has completed (or it was never recorded)."""
        if self._handle is None:
            return True
        return bool(_C._cuda_query_event(self._handle))

    def synchronize(self) -> None:
        """Waits until the work the event waits for has completed."""
        if self._handle is not None:
            _C._cuda_synchronize_event(self._handle)

    def elapsed_time(self, end_event: Event) -> float:
        """The time in milliseconds between this event and ``end_event``, after both
        completed. Both must have been created with ``enable_timing=True`` and recorded."""
        if self._handle is None or end_event._handle is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError(
                "Both events must be created with argument 'enable_timing=True'.")
        return float(_C._cuda_elapsed_time(self._handle, end_event._handle))

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None:
            try:
                self._destroy(self._device_index, handle)
            except Exception:  # interpreter shutdown
                pass

    def __repr__(self) -> str:
        if self._handle is None:
            return "<ember_tensor.cuda.Event uninitialized>"
        return f"<ember_tensor.cuda.Event {self._handle:#x}>"


def current_stream(device: object = None) -> Stream:
    """The current stream of ``device`` (default: the current device)."""
    idx = _lazy.checked_index(device)
    return Stream._wrap(idx, int(_C._cuda_current_stream(idx)))


def default_stream(device: object = None) -> Stream:
    """The default stream of ``device`` (default: the current device)."""
    idx = _lazy.checked_index(device)
    return Stream._wrap(idx, 0)


def set_stream(stream: Stream | None) -> None:
    """Makes ``stream`` the current stream of its device, and its device the current device
    (as PyTorch does). None is a no-op. Prefer ``with stream(s):``, which restores both."""
    if stream is None:
        return
    _lazy.lazy_init()
    idx = stream.device_index
    if int(_C._cuda_current_device()) != idx:
        _C._cuda_set_device(idx)
    _C._cuda_set_stream(idx, stream._handle)


class StreamContext:
    """Context manager that makes ``stream`` current (and its device the current device)
    inside its block, and restores the previous streams and device after it. A None stream
    makes it a no-op."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self.src_prev_stream: Stream | None = None
        self.dst_prev_stream: Stream | None = None

    def __enter__(self) -> StreamContext:
        s = self.stream
        if s is None:
            return self
        self.src_prev_stream = current_stream(None)
        self.dst_prev_stream = None
        if self.src_prev_stream.device_index != s.device_index:
            self.dst_prev_stream = current_stream(s.device_index)
        set_stream(s)
        return self

    def __exit__(self, *exc_info: object) -> bool:
        if self.stream is None:
            return False
        if self.dst_prev_stream is not None:
            set_stream(self.dst_prev_stream)
        set_stream(self.src_prev_stream)
        return False


def stream(stream: Stream | None) -> StreamContext:
    """``with stream(s):`` queues the block's work on ``s`` (see ``StreamContext``)."""
    return StreamContext(stream)
