"""How operations run, and their ``Work`` handles (``torch.distributed``'s ``Work``: what
``async_op=True``, ``isend`` and ``irecv`` return).

Every operation is started as a non-blocking engine call (``MPI_Iallreduce``, ``MPI_Isend``,
...) on the thread that issues it, in program order, so all processes start their
collectives in one order. The engine is entered under one lock (MPI's
``MPI_THREAD_SERIALIZED``). A synchronous operation then polls its request on the calling
thread (alone for ~100 µs, then yielding the core between polls, so that processes sharing
a core do not starve each other; never sleeping: MPI moves the data of a non-blocking
collective only inside its calls); an asynchronous one is progressed by a background
thread that polls the pending requests every ~100 µs until they complete, so that
DistributedDataParallel's buckets travel while backward computes.

The NCCL engine's operations are queued on a CUDA stream instead: waiting for one only
checks NCCL's errors (the work queued after it on the stream waits for it on the device);
``is_completed`` says whether the device has done it.

Waiting raises the operation's own error, or, past the group's timeout, a
``DistBackendError`` naming the operation and the ranks that have not reached it, and within
about a second if the store reports that a rank of the group died. A rank that has waited a
second records in the store how far it got, which is how the others name the missing ones.
"""

from __future__ import annotations

import os
import threading
import time

__all__ = ["Work", "DistError", "DistBackendError"]


class DistError(RuntimeError):
    """An error of a distributed operation (``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """The communication engine failed, a rank died, or a collective timed out."""


lock = threading.RLock()  # held around every call into the engine
stuck = False  # an operation never finished: the engine must not be finalized at exit

_pending: list[Work] = []  # started asynchronous works, progressed in the background
_pending_cond = threading.Condition(lock)
_progress_thread: threading.Thread | None = None
_POLL_S = 1e-4


def _progress_loop() -> None:
    while True:
        with _pending_cond:
            while not _pending:
                _pending_cond.wait()
            for w in list(_pending):
                w._poll_locked()
        time.sleep(_POLL_S)


def _track(work: Work) -> None:
    global _progress_thread
    with _pending_cond:
        _pending.append(work)
        if _progress_thread is None:
            _progress_thread = threading.Thread(target=_progress_loop, daemon=True,
                                                name="ember-distributed-progress")
            _progress_thread.start()
        _pending_cond.notify()


_watched: list[tuple[float, Work]] = []  # (start, work) of device work not done yet
_watch_lock = threading.Lock()
_watchdog: threading.Thread | None = None
_WATCH_S = 1.0


def _watch(work: Work) -> None:
    """Device work (stream-ordered: nobody on the host waits for it) is watched by a thread,
    as PyTorch's NCCL watchdog: past the group's timeout, on NCCL's asynchronous error, or
    when a rank of the group died, it says which operation and ranks, aborts the engine and
    ends the process (the device may have run later work on incomplete data)."""
    global _watchdog
    with _watch_lock:
        _watched.append((time.monotonic(), work))
        if _watchdog is None:
            _watchdog = threading.Thread(target=_watch_loop, daemon=True,
                                         name="ember-distributed-watchdog")
            _watchdog.start()


def _watch_loop() -> None:
    while True:
        time.sleep(_WATCH_S)
        with _watch_lock:
            watched = list(_watched)
        if not watched:
            continue
        done = []
        for start, w in watched:
            try:
                with lock:
                    finished = w._request.Test()
                if finished:
                    done.append(w)
                    continue
                w._group.mark_arrival()
                if time.monotonic() - start > w._group.timeout_s:
                    w._fail(f"timed out after {w._group.timeout_s:g} seconds",
                            w._group.missing(w._seq))
                dead = w._group.dead_ranks()
                if dead:
                    w._fail("stopped", dead, died=True)
            except BaseException as e:  # noqa: BLE001 - every failure ends the process
                _tear_down(w, e)
        finished_ids = {id(w) for w in done}
        with _watch_lock:
            _watched[:] = [(t, w) for t, w in _watched if id(w) not in finished_ids]


def _tear_down(work: Work, error: BaseException) -> None:
    import sys

    sys.stderr.write(f"{error}\nember.distributed: the operations queued on the device may "
                     "have run on incomplete data: ending this process (as PyTorch's NCCL "
                     "watchdog)\n")
    sys.stderr.flush()
    store = getattr(work._group, "_store", None)
    if getattr(store, "_server", None) is not None:
        # this process serves the rendezvous store, where the others read which rank died:
        # serve it a little longer (they check every second), else they would name this one
        time.sleep(2 * _WATCH_S + 0.5)
    try:
        work._request.abort()
    finally:
        os._exit(1)


def call(fn):
    """Runs ``fn()`` (a blocking engine call: setup, splitting a group) under the lock."""
    with lock:
        return fn()


class Work:
    """The handle of one operation: ``wait()``, ``is_completed()``, ``is_success()``,
    ``exception()``, ``result()``, ``get_future()``.

    ``start()`` returns the engine's request (an object with ``Test()`` returning whether it
    completed) or None when it completed at once; ``finish()``, run once after completion,
    gives the result (a copy back into a bfloat16 tensor, the division of an average)."""

    def __init__(self, op: str, group, seq: int, finish=None, outputs=None) -> None:
        self._op, self._group, self._seq = op, group, seq
        self._finish = finish
        self._outputs = outputs  # the tensors the operation writes (its future's value)
        self._future = None
        self._request = None
        self._keep = None
        self._done = False  # completed (set once, under the lock)
        self._result = None
        self._exception: BaseException | None = None

    def __repr__(self) -> str:
        state = "completed" if self._done else "pending"
        return f"Work({self._op}, {state})"

    def _start(self, start, asynchronous: bool) -> Work:
        # the closure holds the operation's buffers (and through them its tensors): kept
        # until the engine is done with them, as PyTorch's Work keeps its tensors
        self._keep = start
        with lock:
            try:
                self._request = start()
            except BaseException as e:
                self._complete(e)
                return self
            if self._request is None:
                self._complete(None)
            elif _stream_ordered(self._request):
                _watch(self)
            elif asynchronous:
                _track(self)
        return self

    def _complete(self, error) -> None:
        if error is None and self._finish is not None:
            try:
                self._result = self._finish()
            except BaseException as e:
                error = e
        self._exception = error
        self._done = True
        self._keep = None
        if _pending and self in _pending:
            _pending.remove(self)
        if self._future is not None:
            self._settle(self._future)

    def _settle(self, future) -> None:
        if self._exception is not None:
            future.set_exception(self._exception)
        else:
            future.set_result(self._outputs if self._outputs is not None else self._result)

    def _poll_locked(self) -> bool:
        """With the lock held: tests the request once; completes the work when it is done."""
        if self._done:
            return True
        try:
            finished = self._request.Test()
        except BaseException as e:
            self._complete(e)
            return True
        if finished:
            self._complete(None)
        return finished

    def is_completed(self) -> bool:
        if not self._done:
            with lock:
                self._poll_locked()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed() and self._exception is None

    def exception(self):
        return self._exception

    def wait(self, timeout=None) -> bool:
        """Waits for the operation (at most ``timeout`` — a ``timedelta`` or seconds — else
        the group's timeout); raises its error, or ``DistBackendError`` when the time passes
        or a rank of the group died."""
        if not self._done and _stream_ordered(self._request):
            # queued on the device's stream: work queued after it waits for it there, as
            # with PyTorch's NCCL backend; only the engine's errors are the host's concern
            with lock:
                self._request.check()
            return True
        if not self._done:
            limit = self._group.timeout_s if timeout is None else _seconds(timeout)
            self._wait_polling(limit)
        if self._exception is not None:
            raise self._exception
        return True

    def _wait_polling(self, limit: float) -> None:
        start = time.monotonic()
        deadline, next_check = start + limit, start + 1.0
        while True:
            with lock:
                if self._poll_locked():
                    return
            now = time.monotonic()
            if now - start > 1e-4:  # past the first ~100 us: poll, but let others run first
                os.sched_yield()  # (no sleep: the engine moves data only inside its calls)
            if now >= deadline:
                self._group.mark_arrival()
                self._fail(f"timed out after {limit:g} seconds", self._group.missing(self._seq))
            if now >= next_check:
                next_check = now + 1.0
                self._group.mark_arrival()
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
        """A ``Future`` (``ember_distributed.futures``, PyTorch's ``torch.futures.Future``)
        completed when the operation is: its value is the list of the tensors the operation
        wrote (``[tensor]`` for ``all_reduce``), or ``result()`` for one without; its callbacks
        (``then``) run in the thread that completes it. Device work is ordered by its stream:
        its future is complete at once."""
        from .futures import Future

        with lock:
            if self._future is None:
                self._future = Future()
                if self._done:
                    self._settle(self._future)
                elif _stream_ordered(self._request):
                    self._request.check()
                    self._future.set_result(self._outputs)
        return self._future

    def synchronize(self) -> None:
        self.wait()


_SPINS = 64  # polls of a synchronous operation before it gets a Work (and its timeouts)


def run(op: str, group, seq: int, start, finish=None) -> None:
    """Runs a synchronous operation: ``start()`` on this thread, then polls of its request;
    most small collectives complete within the first few, without the cost of a ``Work``.
    One that does not is waited for as ``Work.wait`` does (yielding the core, timeout, dead
    ranks named)."""
    with lock:  # held while spinning: one acquisition, not one per poll
        request = start()
        if request is not None:
            for _ in range(_SPINS):
                if request.Test():
                    request = None
                    break
    if request is not None:
        w = Work(op, group, seq, finish)
        w._request, w._keep = request, start
        w.wait()
        return
    if finish is not None:
        finish()


def launch(op: str, group, seq: int, start, finish=None, asynchronous: bool = False,
           outputs=None) -> Work:
    """Starts an operation (see ``Work``); the caller waits unless ``asynchronous``."""
    return Work(op, group, seq, finish, outputs)._start(start, asynchronous)


def _stream_ordered(request) -> bool:
    """Whether a request is device work ordered by its stream (the NCCL engine's), which
    the host does not wait for."""
    return getattr(request, "stream_ordered", False)


def _seconds(timeout) -> float:
    if hasattr(timeout, "total_seconds"):
        return timeout.total_seconds()
    return float(timeout)
