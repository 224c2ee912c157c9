"""Anomaly detection: the forward traceback of the node whose backward failed, and NaN checks.

``set_detect_anomaly(True)`` (or ``detect_anomaly()`` as a context manager) makes every node
recorded from then on remember where in the forward pass it was made; an error in its
backward is re-raised with that traceback, and a NaN in a gradient it returns is an error
naming the node.
"""

from __future__ import annotations

import traceback

_enabled = False
_check_nan = True


def current_trace() -> str:
    return "".join(traceback.format_stack()[:-3])


def is_anomaly_enabled() -> bool:
    return _enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _check_nan


class set_detect_anomaly:
    """Turns anomaly detection on or off; also a context manager restoring the old state."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        global _enabled, _check_nan
        self.prev = (_enabled, _check_nan)
        _enabled, _check_nan = bool(mode), bool(check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        global _enabled, _check_nan
        _enabled, _check_nan = self.prev


class detect_anomaly(set_detect_anomaly):
    """Context manager (and decorator-free form) enabling anomaly detection inside."""

    def __init__(self, check_nan: bool = True) -> None:
        super().__init__(True, check_nan)
