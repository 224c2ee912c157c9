"""``pin_memory=True``: batches copied into page-locked host memory by a background thread.

The ``PinThread`` sits between the fetch side and the iterator, as PyTorch's pin-memory
thread does: it takes ``(task id, data)`` pairs from a source (the worker processes' result
queue, or a queue the main process fills one batch ahead), pins every tensor of each batch
(``pin_memory``) and puts the pairs, in the order it took them, on ``out``. While the
training step runs on one batch, the next one is pinned, so that its copy to the GPU can be
``non_blocking``.

``pin_tensor`` and ``accelerator_available`` are module-level so that tests can replace
them (a fake pin on a machine without CUDA runs the whole thread path).
"""

from __future__ import annotations

import collections.abc
import copy
import queue
import threading
import traceback

import ember_tensor as et

# how often the thread looks at its stop event while it waits for a batch
POLL_SECONDS = 0.1


def accelerator_available() -> bool:
    """Whether there is a device to pin for (CUDA)."""
    return et.cuda.is_available()


def current_device_index() -> int | None:
    """The current CUDA device of the calling thread, for the pin thread to use too (the
    current device is per thread); None without CUDA."""
    return et.cuda.current_device() if et.cuda.is_available() else None


def pin_tensor(t: et.Tensor) -> et.Tensor:
    """``t`` in pinned host memory (a copy, or ``t`` when it is pinned already)."""
    return t.pin_memory()


def pin_memory(data, device: str | None = None):
    """``data`` with every tensor pinned, through mappings, namedtuples, tuples and other
    sequences (rebuilt as their own type where it can be), and objects with a
    ``pin_memory()`` method (called); strings, bytes and other objects unchanged.
    ``device`` is the accelerator pinned for (kept for PyTorch's signature)."""
    if isinstance(data, et.Tensor):
        return pin_tensor(data)
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        pinned = {k: pin_memory(v, device) for k, v in data.items()}
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)  # keeps a subclass's own attributes
                clone.update(pinned)
                return clone
            return type(data)(pinned)
        except TypeError:
            return pinned
    if isinstance(data, tuple):
        items = [pin_memory(v, device) for v in data]
        return type(data)(*items) if hasattr(data, "_fields") else type(data)(items)
    if isinstance(data, collections.abc.Sequence):
        items = [pin_memory(v, device) for v in data]
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, v in enumerate(items):
                    clone[i] = v
                return clone
            return type(data)(items)
        except TypeError:
            return items
    return data


class Raised:
    """An exception on its way through the pin thread, raised where its batch would have
    been yielded: ``exception`` keeps its traceback."""

    def __init__(self, exception: BaseException):
        self.exception = exception


class PinError:
    """An exception raised while pinning a batch."""

    def __init__(self, exception: BaseException, device_index: int | None):
        self.kind = type(exception)
        self.original = exception
        self.where = f"in pin memory thread for device {device_index or 0}"
        self.traceback = "".join(traceback.format_exception(exception))

    def exception(self) -> BaseException:
        """The exception to raise in the main thread: the original type where it takes a
        message (else RuntimeError), with the thread's traceback in the message, and the
        original as its cause."""
        text = f"Caught {self.kind.__qualname__} {self.where}.\nOriginal {self.traceback}"
        try:
            exc = self.kind(text)
        except Exception:  # noqa: BLE001  (a type whose constructor takes other args)
            exc = RuntimeError(text)
        exc.__cause__ = self.original
        return exc


def _passes_through(data) -> bool:
    """Items the thread hands on as they are (markers of the fetch side, errors)."""
    from ._worker import IterableEnd, WorkerError

    return isinstance(data, (Raised, PinError, WorkerError, IterableEnd))


def _loop(
    take, out: queue.Queue, done: threading.Event, device: str | None, device_index: int | None
) -> None:
    """The thread's body. ``take(timeout)`` gives the next (task id, data) or raises
    ``queue.Empty``; any other exception it raises is handed on as a ``Raised``. It holds
    no reference to the iterator, so that dropping the iterator shuts the thread down."""
    if device_index is not None:
        et.cuda.set_device(device_index)
    while not done.is_set():
        try:
            task_id, data = take(POLL_SECONDS)
        except queue.Empty:
            continue
        except Exception as exc:  # noqa: BLE001  (the main thread decides what it means)
            out.put((None, Raised(exc)))
            continue
        if not _passes_through(data) and not done.is_set():
            try:
                data = pin_memory(data, device)
            except Exception as exc:  # noqa: BLE001  (raised in the main thread)
                data = PinError(exc, device_index)
        out.put((task_id, data))
        del data  # hold no batch while waiting for the next


class PinThread:
    """A daemon thread pinning what ``take`` gives; ``get`` takes its results in order."""

    def __init__(self, take, device: str | None):
        self.out: queue.Queue = queue.Queue()
        self.done = threading.Event()
        self.thread = threading.Thread(
            target=_loop,
            args=(take, self.out, self.done, device, current_device_index()),
            name="ember_data_pin",
            daemon=True,
        )
        self.thread.start()

    def get(self, timeout: float):
        """The next (task id, data); ``queue.Empty`` after ``timeout`` seconds, and a
        RuntimeError when the thread has died."""
        try:
            return self.out.get(timeout=timeout)
        except queue.Empty:
            if not self.thread.is_alive() and not self.done.is_set():
                raise RuntimeError("Pin memory thread exited unexpectedly") from None
            raise

    def stop(self) -> None:
        """Stops the thread and waits for it (at most a poll interval, plus a batch being
        pinned)."""
        self.done.set()
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join(timeout=10 * POLL_SECONDS + 5)
