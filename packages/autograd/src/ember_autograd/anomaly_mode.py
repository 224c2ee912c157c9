"""Anomaly detection: the forward traceback of the node whose backward failed, and NaN checks.

``set_detect_anomaly(True)`` (a plain call, a context manager or a decorator) or
``detect_anomaly()`` (a context manager or a decorator) makes every node recorded from then
on remember where in the user's forward code it was made; an error in its backward is
re-raised with that traceback appended, and (``check_nan``, the default) a NaN in a
gradient it returns is an error naming the node, with the same traceback. The mode is
global, not per thread, as in PyTorch.

>>> x = ember_tensor.zeros(1, requires_grad=True)
>>> with detect_anomaly():  # warns: anomaly detection slows every op down
...     (x.sqrt() * 0).sum().backward()  # 0 / (2 * sqrt(0)) is nan
RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output. ...
"""

from __future__ import annotations

import os
import traceback
import warnings

from .grad_mode import _DecoratorContextManager

__all__ = [
    "detect_anomaly",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "set_detect_anomaly",
]

_enabled = False
_check_nan = True

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_GENERATED_PREFIX = "<ember_autograd"  # code exec'd from derivatives.yaml


def _internal(filename: str) -> bool:
    return filename.startswith(_PACKAGE_DIR) or filename.startswith(_GENERATED_PREFIX)


def current_trace() -> str:
    """The Python stack here, formatted, without ember_autograd's own frames (so that it
    ends at the user's line that ran the op)."""
    frames = [f for f in traceback.extract_stack() if not _internal(f.filename)]
    return "".join(traceback.format_list(frames))


def is_anomaly_enabled() -> bool:
    return _enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _check_nan


def _set(mode: bool, check_nan: bool) -> None:
    global _enabled, _check_nan
    _enabled, _check_nan = bool(mode), bool(check_nan)


class set_detect_anomaly(_DecoratorContextManager):
    """Turns anomaly detection on or off at once; as a context manager (or decorator) the
    previous state comes back on leaving the block (the decorated call)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (_enabled, _check_nan)
        self.mode = bool(mode)
        self.check_nan = bool(check_nan)
        _set(self.mode, self.check_nan)

    def __call__(self, func):
        _set(*self.prev)  # as a decorator: only the decorated calls change the mode
        return super().__call__(func)

    def __enter__(self) -> None:
        _set(self.mode, self.check_nan)

    def __exit__(self, *exc) -> None:
        _set(*self.prev)

    def clone(self):
        return set_detect_anomaly(self.mode, self.check_nan)


class detect_anomaly(_DecoratorContextManager):
    """Anomaly detection on inside a ``with`` block (or a decorated function); warns once,
    when created, that this mode slows everything down."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = bool(check_nan)
        self.prev = (_enabled, _check_nan)
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self.prev = (_enabled, _check_nan)
        _set(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        _set(*self.prev)

    def clone(self):
        new = object.__new__(detect_anomaly)  # no second warning per decorated call
        new.check_nan = self.check_nan
        new.prev = (_enabled, _check_nan)
        return new


# ----------------------------------------------------------------------------- engine side


def _trace_text(node) -> str:
    return (
        f"\n\nError detected in {node.name()}. Traceback of forward call that caused the "
        f"error (anomaly detection):\n{node._trace}"
    )


def reraise(e: BaseException, node) -> None:
    """Raises ``e`` again with the forward trace of ``node`` appended to its message (from
    ``e``). Where ``e``'s type cannot be built from one message, adds the trace as a note
    and returns (the caller re-raises ``e``)."""
    text = _trace_text(node)
    try:
        new = type(e)(f"{e}{text}")
    except Exception:
        if hasattr(e, "add_note"):
            e.add_note(text.lstrip("\n"))
        return
    raise new.with_traceback(e.__traceback__) from e


def check_nan(node, grads) -> None:
    """The NaN check of a node's returned gradients (anomaly mode with check_nan)."""
    for i, g in enumerate(grads):
        if g is None or not (g.dtype.is_floating_point or g.dtype.is_complex):
            continue
        if bool(g.isnan().any()):
            msg = f"Function '{node.name()}' returned nan values in its {i}th output."
            if node._trace is not None:
                msg += _trace_text(node)
            raise RuntimeError(msg)
