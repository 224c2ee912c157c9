"""``Future``: the result of an asynchronous operation that will be there later
(``torch.futures.Future``): what ``Work.get_future()`` returns and what DDP communication
hooks give back.

``wait()`` blocks until the future is completed and returns its value (or raises its error);
``value()`` returns it without waiting (a ``RuntimeError`` before completion);
``then(callback)`` returns a new future completed with ``callback(this_future)`` once this
one is, in the thread that completes it (at once when it already is);
``add_done_callback(callback)`` runs ``callback(this_future)`` the same way.

>>> f = Future()
>>> g = f.then(lambda fut: fut.value() * 2)
>>> f.set_result(21)
>>> g.wait()
42
"""

from __future__ import annotations

import threading

__all__ = ["Future"]


class Future:
    """A value that will be set once (``set_result`` / ``set_exception``)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._done = False
        self._value = None
        self._error: BaseException | None = None
        self._callbacks: list = []

    def done(self) -> bool:
        return self._done

    def set_result(self, result) -> None:
        self._complete(result, None)

    def set_exception(self, error: BaseException) -> None:
        if not isinstance(error, BaseException):
            raise TypeError(f"set_exception takes an exception, not {type(error).__name__}")
        self._complete(None, error)

    def _complete(self, value, error) -> None:
        with self._cond:
            if self._done:
                raise RuntimeError("Future can only be marked completed once")
            self._value, self._error, self._done = value, error, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            cb(self)

    def wait(self):
        with self._cond:
            while not self._done:
                self._cond.wait()
        return self.value()

    def value(self):
        if not self._done:
            raise RuntimeError("Future.value() on a future that is not completed yet")
        if self._error is not None:
            raise self._error
        return self._value

    def add_done_callback(self, callback) -> None:
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback) -> Future:
        nxt = Future()

        def chain(fut: Future) -> None:
            try:
                result = callback(fut)
            except BaseException as e:  # noqa: BLE001 - the next future carries it
                nxt.set_exception(e)
            else:
                nxt.set_result(result)

        self.add_done_callback(chain)
        return nxt
