"""Grad modes: whether ops record a graph. Thread-local; each is a context manager and a
decorator, like PyTorch's.

``no_grad``            ops record nothing (results do not require grad).
``enable_grad``        turns recording back on inside a ``no_grad`` block.
``set_grad_enabled``   sets the mode to a given bool (also callable as a plain function).
``inference_mode``     like ``no_grad`` (Ember keeps no separate inference tensors).
"""

from __future__ import annotations

import functools
import inspect
import threading

import ember_tensor

_set_hook_enabled = ember_tensor._set_autograd_hook_enabled


class _State(threading.local):
    """This thread's modes. Setting ``enabled`` also tells the core whether to call the
    autograd hook on this thread at all (ops under no_grad then cost nothing extra)."""

    def __init__(self) -> None:
        self._enabled = True  # the core's per-thread setting starts on as well
        self.inference = False

    @property
    def enabled(self) -> bool:
        return self._enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        self._enabled = value
        _set_hook_enabled(value)


_state = _State()


def is_grad_enabled() -> bool:
    """True when ops on tensors that require grad record a graph on this thread."""
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    return _state.inference


class _DecoratorContextManager:
    """Base of the grad-mode managers: ``with mode():`` or ``@mode()`` (or ``@mode``)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise TypeError(f"{type(self).__name__} decorates functions, not classes")
        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def generator(*args, **kwargs):
                # the mode holds while the generator's own code runs, never while it is
                # suspended at a yield (the caller's mode applies then)
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        request = gen.send(None)
                    while True:
                        try:
                            response = yield request
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as exc:
                            with self.clone():
                                request = gen.throw(exc)
                        else:
                            with self.clone():
                                request = gen.send(response)
                except StopIteration as stop:
                    return stop.value

            return generator

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self):
        return type(self)()

    def __enter__(self) -> None:
        raise NotImplementedError

    def __exit__(self, *exc) -> None:
        raise NotImplementedError


class _FixedGradMode(_DecoratorContextManager):
    """Base of ``no_grad`` and ``enable_grad``: sets grad mode to the class's ``_mode``
    inside, restores the previous mode on leaving. Usable as ``@mode`` without parentheses
    too."""

    _mode: bool

    def __new__(cls, func=None):
        # @no_grad / @enable_grad without parentheses decorates func directly
        self = super().__new__(cls)
        if func is not None and callable(func):
            self.__init__()
            return self(func)
        return self

    def __init__(self, func=None) -> None:
        self.prev = True

    def __enter__(self) -> None:
        self.prev = _state.enabled
        _state.enabled = self._mode

    def __exit__(self, *exc) -> None:
        _state.enabled = self.prev


class no_grad(_FixedGradMode):
    """Ops inside record no graph; their results do not require grad.

    >>> x = ember_tensor.ones(2, requires_grad=True)
    >>> with no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    _mode = False


class enable_grad(_FixedGradMode):
    """Turns recording on inside a ``no_grad`` block (or function)."""

    _mode = True


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode to ``mode``: at once when called, restored on leaving a ``with`` block."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): mode must be a bool, got {type(mode).__name__}")
        self.prev = _state.enabled
        self.mode = mode
        _state.enabled = mode

    def __call__(self, func):
        _state.enabled = self.prev
        return super().__call__(func)

    def __enter__(self) -> None:
        _state.enabled = self.mode

    def __exit__(self, *exc) -> None:
        _state.enabled = self.prev

    def clone(self):
        return set_grad_enabled(self.mode)


class inference_mode(_DecoratorContextManager):
    """``no_grad`` for inference (``mode=False`` leaves grad mode as it is)."""

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode) and not isinstance(mode, bool):
            self.__init__()
            return self(mode)
        return self

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self.prev = (True, False)

    def __enter__(self) -> None:
        self.prev = (_state.enabled, _state.inference)
        if self.mode:
            _state.enabled = False
            _state.inference = True

    def __exit__(self, *exc) -> None:
        _state.enabled, _state.inference = self.prev

    def clone(self):
        return inference_mode(self.mode)
