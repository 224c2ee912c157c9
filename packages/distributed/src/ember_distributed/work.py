"""Where collectives run: one communication thread per process, and the ``Work`` handle of
each operation (``torch.distributed``'s ``Work``: what ``async_op=True``, ``isend`` and
``irecv`` return).

Every operation of every group runs on the same thread, in the order this process issued
them, so that all processes reach the engine's calls in one order (MPI requires it of
collectives on a communicator) and the engine is entered by one thread at a time (MPI's
``MPI_THREAD_SERIALIZED``). The engine's calls release the GIL, so a collective launched
with ``async_op=True`` (DistributedDataParallel's gradient buckets) overlaps the Python
thread's computation.

``Work.wait()`` waits for the operation; it raises the operation's own error, or, past the
group's timeout, a ``DistBackendError`` naming the operation and the ranks that have not
reached it, and at once if the store reports that a rank of the group died.
"""

from __future__ import annotations

import queue
import threading
import time

__all__ = ["Work", "DistError", "DistBackendError"]


class DistError(RuntimeError):
    """An error of a distributed operation (``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """The communication engine failed, a rank died, or a collective timed out."""


_queue: queue.SimpleQueue | None = None
_thread: threading.Thread | None = None
_start_lock = threading.Lock()
stuck = False  # an operation never finished: the engine must not be finalized at exit


def _loop(q: queue.SimpleQueue) -> None:
    while True:
        item = q.get()
        if item is None:
            return
        work, fn = item
        try:
            work._result = fn()
        except BaseException as e:  # handed to the waiting thread
            work._exception = e
        work._done.set()


def submit(work: Work, fn) -> Work:
    """Runs ``fn()`` on the communication thread after everything submitted before it; its
    result becomes ``work.result()``."""
    global _queue, _thread
    if _thread is None:
        with _start_lock:
            if _thread is None:
                _queue = queue.SimpleQueue()
                _thread = threading.Thread(target=_loop, args=(_queue,), name="ember-distributed",
                                           daemon=True)
                _thread.start()
    _queue.put((work, fn))
    return work


def run(fn):
    """Runs ``fn()`` on the communication thread and returns its result (setup calls: the
    engine is entered by that thread only)."""
    w = Work("setup", None, 0)
    submit(w, fn)
    w._done.wait()
    if w._exception is not None:
        raise w._exception
    return w._result


class Work:
    """The handle of one operation: ``wait()``, ``is_completed()``, ``is_success()``,
    ``exception()``, ``result()``, ``get_future()``."""

    def __init__(self, op: str, group, seq: int, on_done=None) -> None:
        self._op, self._group, self._seq = op, group, seq
        self._done = threading.Event()
        self._result = None
        self._exception: BaseException | None = None
        self._on_done = on_done  # runs once in the waiting thread (copies back into tensors)
        self._finished = False

    def __repr__(self) -> str:
        state = "completed" if self._done.is_set() else "pending"
        return f"Work({self._op}, {state})"

    def is_completed(self) -> bool:
        return self._done.is_set()

    def is_success(self) -> bool:
        return self._done.is_set() and self._exception is None

    def exception(self):
        return self._exception

    def wait(self, timeout=None) -> bool:
        """Waits for the operation (at most ``timeout`` — a ``timedelta`` or seconds —
        else the group's timeout); raises its error, or ``DistBackendError`` when the time
        passes or a rank of the group died."""
        if not self._done.is_set():
            limit = self._group.timeout_s if timeout is None else _seconds(timeout)
            self._wait_watching(limit)
        if self._exception is not None:
            raise self._exception
        if not self._finished:
            self._finished = True
            if self._on_done is not None:
                self._on_done()
        return True

    def _wait_watching(self, limit: float) -> None:
        deadline = time.monotonic() + limit
        next_check = time.monotonic() + 1.0
        while not self._done.wait(min(0.05, max(0.0, deadline - time.monotonic()))):
            now = time.monotonic()
            if now >= deadline:
                self._fail(f"timed out after {limit:g} seconds", self._group.missing(self._seq))
            if now >= next_check and self._group is not None:
                next_check = now + 1.0
                dead = self._group.dead_ranks()
                if dead:
                    self._fail("stopped", dead, died=True)

    def _fail(self, what: str, ranks, died: bool = False) -> None:
        global stuck
        stuck = True
        who = ""
        if ranks:
            verb = "died (its process exited or lost its connection)" if died else \
                "did not reach it"
            sep = ": " if died else "; "
            who = f"{sep}rank{'s' if len(ranks) > 1 else ''} {', '.join(map(str, ranks))} {verb}"
        raise DistBackendError(f"ember.distributed: {self._op} (operation {self._seq} of "
                               f"{self._group.describe()}) {what}{who}")

    def result(self):
        self.wait()
        return self._result

    def get_future(self):
        """A ``concurrent.futures.Future`` completed with ``result()`` once the operation
        finished (its ``add_done_callback`` runs on the communication thread)."""
        import concurrent.futures

        fut: concurrent.futures.Future = concurrent.futures.Future()

        def finish():
            self._done.wait()
            if self._exception is not None:
                fut.set_exception(self._exception)
            else:
                fut.set_result(self._result)

        threading.Thread(target=finish, daemon=True).start()
        return fut

    def synchronize(self) -> None:
        self.wait()


def _seconds(timeout) -> float:
    if hasattr(timeout, "total_seconds"):
        return timeout.total_seconds()
    return float(timeout)
